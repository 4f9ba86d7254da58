from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ..analysis.facts import ConvertingCall, Facts
from ..analysis.semantics import (
    NUMPY_SCALAR_ITEM_SAME,
    NUMPY_SHARING_CONVERTERS,
    NUMPY_TENSOR_RESULTS,
)
from ..analysis.values import Flag, Value
from ..diagnostics import Finding, Fix
from ..fixing.rewrites import NO_SHARING, Sharing, chained, conversion_sharing
from .base import Invalid, Rule, call_site_note

# Keyword arguments that carry the data being converted (not `dtype=`, `label=`, `color=`, ...):
# matplotlib 3.11.2 maps a scatter's `c=`, a histogram's `weights=`, error bars and
# fill_between's bounds with np.asanyarray too (tests/test_det106_sinks.py).
DATA_KEYWORDS = frozenset({"a", "x", "y", "data", "arr", "ary", "X", "Y", "Z", "values", "C", "s",
                           "c", "weights", "xerr", "yerr", "y1", "y2"})
def numpy_function(facts: Facts, converting: ConvertingCall) -> str | None:
    """`exp` for `np.exp(...)` (through the module's imports); None for other libraries."""
    qualified = facts.imports.resolve(converting.call.func)
    return qualified[len("numpy."):] if qualified is not None and qualified.startswith("numpy.") else None


def argument_fix(facts: Facts, converting: ConvertingCall, expr: cst.BaseExpression, grad: bool, device: bool) -> Fix:
    """The fix for one tensor argument: keep a tensor where NumPy would return one, else convert.

    Where the result shares the argument's memory (`np.asarray`, `np.reshape`) and the call used
    to raise for grad, the array-use analysis decides: written -> copy, escapes -> unsafe.
    """
    function = numpy_function(facts, converting)
    if converting.kind == "scalar":  # `np.arange(lo.item(), ...)`: the number the conversion read
        same = function in NUMPY_SCALAR_ITEM_SAME
        return Fix(expr, chained(expr, ["item"]), same, "pass .item(): the same number" if same else
                   f"pass .item(); unsafe: {converting.function}() of a number was not seen to give the same result")
    sharing = NO_SHARING
    if grad and function in NUMPY_SHARING_CONVERTERS:
        sharing = conversion_sharing(converting.call, facts, "clone" if function in NUMPY_TENSOR_RESULTS else "copy")
    if function in NUMPY_TENSOR_RESULTS:
        return _tensor_keeping_fix(converting, expr, grad, device, sharing)
    methods = ["detach", "cpu", "numpy"] + (["copy"] if sharing.copy else [])
    description = "convert explicitly with .detach().cpu().numpy()" + sharing.note
    return Fix(expr, chained(expr, methods), sharing.safe, description)


def _tensor_keeping_fix(converting: ConvertingCall, expr: cst.BaseExpression, grad: bool, device: bool,
                        sharing: Sharing) -> Fix:
    """`np.exp(x)` -> `np.exp(x.detach())`: NumPy returns a tensor for a tensor without grad, so keep one."""
    methods = (["detach"] if grad else []) + (["cpu"] if device else []) + (["clone"] if sharing.copy else [])
    written = "." + "().".join(methods) + "()"
    description = f"pass {written}: {converting.function}() returns a tensor for a tensor that does not require grad"
    safe = sharing.safe and not device
    if device:
        description += (f"; unsafe: {converting.function}() of a CPU tensor gives a CPU tensor where the code may "
                        "expect one on the device")
    return Fix(expr, chained(expr, methods), safe, description + sharing.note)


class ImplicitNumpyConversion(Rule):
    code = "DET106"
    name = "implicit-numpy-conversion"
    # The rule's summary (explain --list, SARIF, the docs); each diagnostic names the call.
    message = (
        "NumPy, matplotlib or pandas calls .numpy() on a tensor passed to it: RuntimeError if it "
        "may require grad, TypeError if it may live on a GPU; pass .detach().cpu().numpy()"
    )
    what_it_does = (
        "Flags a value that may require grad or may live on a GPU passed to a function that "
        "converts it to a NumPy array for you: `np.asarray`, `np.array`, every NumPy function that "
        "converts a tensor argument (`np.exp`, `np.log10`, `np.power`, `np.unravel_index`, ...: each "
        "measured by `scripts/check_numpy_sinks.py`), NumPy reductions of a list of "
        "tensors (`np.mean(losses)`, `np.concatenate`), functions that convert a 0-dim tensor only "
        "(`np.arange(x.min() - 1, x.max() + 1, step)`: a bound read from a reduction), matplotlib plotting (`plt.plot`, `ax.scatter`, `plt.imshow`), "
        "and `pd.DataFrame` / `pd.Series`; also a list, tuple or dict holding such values. Values "
        "are followed through the classes of the file: `Client()` runs `__init__` with its "
        "arguments, and `client.score(x)` is the class's method with the instance's fields."
    )
    why_bad = (
        "These libraries call `Tensor.__array__`, that is `.numpy()`, on what you pass them, so "
        "they fail exactly as `.numpy()` would (RuntimeError for a tensor that requires grad, "
        "TypeError for a GPU tensor). The error is raised below several frames of the library's own "
        "code, about a `.numpy()` call your code never makes, so the cause is easy to miss."
    )
    example = "losses.append(loss)\nplt.plot(np.array(losses))"
    use_instead = "losses.append(loss.item())\nplt.plot(np.array(losses))"
    fix_safety = (
        "Safe for a single tensor argument: it becomes `t.detach().cpu().numpy()`, the same values. "
        "Where NumPy returns a torch.Tensor for a tensor without grad (`np.exp`, `np.clip`, "
        "`np.argmax`, `np.reshape`, ... through `__array_wrap__`) the fix keeps a tensor, "
        "`np.exp(t.detach())`, so that tensor methods on the result still work: safe; where the "
        "hazard is the device it becomes `np.exp(t.cpu())`, a CPU tensor where the code may expect "
        "one on the device: unsafe. `np.asarray`, `np.ascontiguousarray`, `np.atleast_2d`, `np.ravel`, "
        "`np.expand_dims`, `np.fliplr` and the other functions the probe saw sharing memory (and "
        "`np.reshape`/`np.transpose` of a tensor) may share the memory of what they are given: "
        "where the result is written afterwards the fix copies "
        "(`.numpy().copy()`, `.detach().clone()`), where it escapes (returned, stored, passed on) the "
        "fix is unsafe. Lists are left with advice (convert each element, or store `.item()` in the "
        "first place). A 0-dim bound becomes `low.item()`: safe where the probe saw the number give "
        "the same result (`np.arange`, the window functions), unsafe otherwise (`np.array2string`)."
    )
    runtime_truth = "The library call raises the same RuntimeError / TypeError as DET101 / DET104."
    VALID = [
        "import torch\nimport numpy as np\nm = torch.nn.Linear(2, 2)\nnp.asarray(m(torch.ones(2)).detach().cpu())\n",
        "import torch\nimport numpy as np\nlosses = []\nfor _ in range(2):\n    losses.append(torch.ones(1, requires_grad=True).sum().item())\nnp.mean(losses)\n",
        "import torch\nimport numpy as np\nw = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    np.asarray(w)\n",
        "import torch\nimport numpy as np\nnp.sum(torch.zeros(3) + 1)\nnp.asarray(torch.ones(2))\n",
        # A dict's keys are kept apart: the list under "loss" holds floats only.
        ("import torch\nimport numpy as np\nm = torch.nn.Linear(2, 1)\nh = {'loss': [], 'out': []}\n"
         "h['loss'].append(m(torch.ones(2)).item())\nh['out'].append(m(torch.ones(2)))\nnp.mean(h['loss'])\n"),
    ]
    INVALID = [
        Invalid(
            "import torch\nimport numpy as np\nm = torch.nn.Linear(2, 2)\nnp.asarray(m(torch.ones(2)))\n",
            "import torch\nimport numpy as np\nm = torch.nn.Linear(2, 2)\nnp.asarray(m(torch.ones(2)).detach().cpu().numpy())\n",
        ),
        Invalid(
            "import torch\nimport numpy as np\nm = torch.nn.Linear(2, 1)\nlosses = []\nfor _ in range(3):\n"
            "    losses.append(m(torch.ones(2)).sum())\nprint(np.mean(losses))\n"
        ),
        Invalid(
            "import torch\nimport matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
            "w = torch.ones(3, requires_grad=True)\nax.plot(w * 2)\n",
            "import torch\nimport matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
            "w = torch.ones(3, requires_grad=True)\nax.plot((w * 2).detach().cpu().numpy())\n",
        ),
        Invalid("import torch\nimport pandas as pd\nx = torch.ones(3).cuda()\npd.DataFrame({'x': x})\n"),
        # A list held by an attribute, filled in one method and read in another.
        Invalid(
            "import torch\nimport numpy as np\n\n\nclass Learner:\n    def __init__(self):\n"
            "        self.net = torch.nn.Linear(2, 1)\n        self.log = []\n\n    def learn(self, x):\n"
            "        self.log.append(self.net(x).sum())\n\n    def report(self):\n        return np.mean(self.log)\n"
        ),
        Invalid(
            "import torch\nimport numpy as np\nx = torch.ones(2, 3, requires_grad=True)\nr = np.exp(x)\nr.sum(dim=0)\n",
            "import torch\nimport numpy as np\nx = torch.ones(2, 3, requires_grad=True)\nr = np.exp(x.detach())\nr.sum(dim=0)\n",
        ),
        Invalid(
            "import torch\nimport numpy as np\nx = torch.ones(3, requires_grad=True)\na = np.asarray(x)\na[0] = 0\n",
            "import torch\nimport numpy as np\nx = torch.ones(3, requires_grad=True)\n"
            "a = np.asarray(x.detach().cpu().numpy().copy())\na[0] = 0\n",
        ),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for converting in facts.converting_calls:
            for arg in converting.call.args:
                if arg.star or (arg.keyword is not None and arg.keyword.value not in DATA_KEYWORDS):
                    continue
                finding = self._check_argument(facts, converting, arg.value)
                if finding is not None:
                    yield finding

    def _check_argument(self, facts: Facts, converting: ConvertingCall, expr: cst.BaseExpression) -> Finding | None:
        value = facts.value_of(expr)
        is_container = value.has(Flag.CONTAINER) and not value.is_tensor_like
        if converting.kind == "reduce" and not is_container:
            return None  # np.sum(t) calls Tensor.sum(axis=...): a different failure, any tensor
        if converting.kind == "scalar" and (is_container or not value.has(Flag.ZERO_DIM)):
            return None  # `np.arange(lo, hi)` converts a 0-dim bound; of another shape, none converted
        target: Value = value.element() if is_container else value
        grad = target.has(Flag.GRAD) and facts.grad_enabled_at(converting.call)
        device = target.may_be_on_device
        if not (grad or device):
            return None
        hazard = " and ".join(
            part for part, present in (("may require grad (RuntimeError)", grad), ("may live on a GPU (TypeError)", device)) if present
        )
        what = "a list, tuple or dict of tensors that" if is_container else "a tensor that"
        if is_container:
            advice = "convert each element with .detach().cpu(), or keep .item() values"
        elif converting.kind == "scalar":
            advice = "pass .item()"
        elif numpy_function(facts, converting) in NUMPY_TENSOR_RESULTS:
            advice = "pass " + ".".join(["", *(["detach()"] if grad else []), *(["cpu()"] if device else [])])
            advice += f" ({converting.function}() gives a tensor back for a tensor without grad)"
        else:
            advice = "pass .detach().cpu().numpy()"
        message = f"{converting.function}() calls .numpy() on {what} {hazard}; {advice}"
        note, related = call_site_note(target)
        fix = None if is_container else argument_fix(facts, converting, expr, grad, device)
        return self.finding(expr, message + note, fix, related)
