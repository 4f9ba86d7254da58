from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ..analysis.facts import Facts
from ..analysis.values import Flag, Value
from ..diagnostics import Finding, Fix
from ..fixing.rewrites import chained, insert_method_before
from .base import Invalid, Rule, call_site_note, method_name, method_receiver
from .det106_implicit_numpy_conversion import DATA_KEYWORDS

# What `.numpy()` refuses, the exception it raises (torch 2.13, checked by
# scripts/check_dtype_facts.py), and the call that makes a tensor it accepts, in chain order.
REFUSED = (
    (Flag.SPARSE, "a sparse layout", "TypeError: can't convert Sparse layout tensor to numpy", "to_dense"),
    (Flag.CONJ, "the conjugate bit", "RuntimeError: Can't call numpy() on Tensor that has conjugate bit set",
     "resolve_conj"),
    (Flag.BFLOAT16, "dtype bfloat16", "TypeError: Got unsupported ScalarType BFloat16", "float"),
)
REFUSED_FLAGS = Flag.SPARSE | Flag.CONJ | Flag.BFLOAT16


def refused(value: Value) -> list[tuple[int, str, str, str]]:
    """What of the value `.numpy()` refuses (empty for a value it accepts, or one not known)."""
    if not value.flags & REFUSED_FLAGS or not value.is_tensor_like:
        return []
    return [entry for entry in REFUSED if value.flags & entry[0]]


class NumpyOnUnsupportedDtype(Rule):
    code = "DET107"
    name = "numpy-on-unsupported-dtype"
    message = (
        ".numpy() (or a library that calls it) on a bfloat16, sparse or conjugate-view tensor raises; "
        "call .float(), .to_dense() or .resolve_conj() first"
    )
    what_it_does = (
        "Flags `.numpy()`, and every implicit conversion DET106 knows (`np.asarray`, `np.array`, "
        "NumPy functions, `plt.plot`, `pd.DataFrame`, ...), of a tensor the file shows is bfloat16 "
        "(`.bfloat16()`, `.to(torch.bfloat16)` even of a value it cannot tell, `dtype=torch.bfloat16`, the output of a module moved "
        "with `.bfloat16()` or of a module with no parameters (`nn.ReLU()`, `nn.CrossEntropyLoss()`) "
        "fed bfloat16, or of a linear/matmul/conv computed under `torch.autocast(..., "
        "dtype=torch.bfloat16)`), sparse (`.to_sparse*()`, `torch.sparse_*_tensor`), or a "
        "conjugate view (`.conj()` of a complex tensor, kept by views such as `.detach()`, "
        "`.reshape()`, `.T`). `.view(torch.int16)` reads the same bytes as another dtype, which NumPy "
        "takes; `.view(shape)` keeps the dtype. The dtype is followed through a small lattice: arithmetic promotes "
        "(`bf16 * f32` is float32, `bf16 * 2.0` stays bfloat16), and an operand of unknown dtype "
        "makes the result unknown, so only known evidence flags. A dtype test in front of the "
        "conversion is followed: behind `if x.dtype == torch.bfloat16: x = x.float()` (or `!=`, "
        "`is`, `in (...)`, an early return, a name holding the dtype) x is no longer bfloat16. On "
        "real code (`docs/reviews/det107-review.md`, `docs/reviews/dtype-third-review.md`, "
        "`dtype-fifth-review.md`, `dtype-sixth-review.md`): 7 diagnostics over five reviews, 3 true; "
        "the false ones were a dtype looked up in a dict and a `.view(torch.int16)` (both since "
        "fixed), and two conversions behind a test correlated with the dtype through another "
        "variable (`if h5_type == \"uint16\":`, set where the dtype is bfloat16), which the analysis "
        "does not relate. Twelve held-out repositories with bfloat16 models gave none (their "
        "conversions go through `.float()` or `.item()`). Files found by searching for "
        "`.to(torch.bfloat16).cpu().numpy()` (`dtype-seventh-review.md`): 6 diagnostics, all true, "
        "and 6 of 7 crash sites found; the seventh, a cast of a library output the file cannot "
        "tell, is flagged since (only a tensor or a module takes a torch dtype, and a module has "
        "no `.numpy()`). The figure rests on few cases."
    )
    why_bad = (
        "NumPy has no bfloat16, no sparse arrays and no lazy conjugation, so torch refuses the "
        "conversion instead of guessing: `TypeError: Got unsupported ScalarType BFloat16`, "
        "`TypeError: can't convert Sparse layout tensor to numpy`, `RuntimeError: Can't call numpy() "
        "on Tensor that has conjugate bit set`. The code works in float32 and breaks the day the "
        "model is run in bfloat16 (mixed precision, a smaller GPU); float16 converts fine, which "
        "makes the bfloat16 case a surprise."
    )
    example = "out = model.bfloat16()(x.bfloat16())\nout.detach().numpy()"
    use_instead = "out = model.bfloat16()(x.bfloat16())\nout.detach().float().numpy()"
    fix_safety = (
        "Safe: `.float()` widens bfloat16 to float32 exactly (every bfloat16 value is a float32 "
        "value), `.to_dense()` gives the same values in a strided tensor, `.resolve_conj()` "
        "materialises the conjugation the view stood for."
    )
    runtime_truth = (
        "`TypeError: Got unsupported ScalarType BFloat16` (bfloat16), `TypeError: can't convert Sparse "
        "layout tensor to numpy. Use Tensor.to_dense() first.` (sparse COO; `SparseCsr` for CSR), "
        "`RuntimeError: Can't call numpy() on Tensor that has conjugate bit set. Use "
        "tensor.resolve_conj().numpy() instead.` (conjugate view), on every device (torch 2.13, CPU)."
    )
    VALID = [
        "import torch\nx = torch.ones(3, dtype=torch.float16)\nx.numpy()\n",
        "import torch\nx = torch.ones(3).bfloat16()\nx.float().numpy()\n",
        "import torch\nx = torch.ones(3).to(torch.bfloat16)\nx.to(torch.float32).numpy()\n",
        "import torch\nx = torch.ones(2, 2).to_sparse()\nx.to_dense().numpy()\n",
        "import torch\nz = torch.fft.fft(torch.ones(4)).conj()\nz.resolve_conj().numpy()\n",
        "import torch\nz = torch.fft.fft(torch.ones(4)).conj()\n(z * 2).numpy()\n",
        "import torch\nx = torch.ones(3).bfloat16()\ny = x * torch.ones(3)\ny.numpy()\n",
        "import torch\nx = torch.ones(3).bfloat16()\nx.tolist()\n",
        (
            "import torch\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "    out = torch.softmax(torch.ones(2, 3), 1)\nout.numpy()\n"
        ),
    ]
    INVALID = [
        Invalid(
            "import torch\nx = torch.ones(3).bfloat16()\nx.numpy()\n",
            "import torch\nx = torch.ones(3).bfloat16()\nx.float().numpy()\n",
        ),
        Invalid(
            "import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1).to(torch.bfloat16)\n"
            "out = model(torch.ones(2, 3, dtype=torch.bfloat16))\nout.detach().numpy()\n",
            "import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1).to(torch.bfloat16)\n"
            "out = model(torch.ones(2, 3, dtype=torch.bfloat16))\nout.detach().float().numpy()\n",
        ),
        Invalid(
            "import torch\nimport torch.nn as nn\nm = nn.Linear(3, 1)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "    out = m(torch.ones(2, 3))\nout.detach().numpy()\n",
            "import torch\nimport torch.nn as nn\nm = nn.Linear(3, 1)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "    out = m(torch.ones(2, 3))\nout.detach().float().numpy()\n",
        ),
        Invalid(
            "import torch\nimport numpy as np\nx = torch.ones(3, dtype=torch.bfloat16)\nnp.asarray(x)\n",
            "import torch\nimport numpy as np\nx = torch.ones(3, dtype=torch.bfloat16)\nnp.asarray(x.float())\n",
        ),
        Invalid(
            "import torch\nadj = torch.sparse_coo_tensor([[0], [1]], [1.0], (2, 2))\nadj.numpy()\n",
            "import torch\nadj = torch.sparse_coo_tensor([[0], [1]], [1.0], (2, 2))\nadj.to_dense().numpy()\n",
        ),
        Invalid(
            "import torch\nz = torch.fft.fft(torch.ones(4)).conj()\nz.numpy()\n",
            "import torch\nz = torch.fft.fft(torch.ones(4)).conj()\nz.resolve_conj().numpy()\n",
        ),
        Invalid(
            "import torch\nimport matplotlib.pyplot as plt\nx = torch.ones(3).bfloat16()\nplt.plot(x)\n",
            "import torch\nimport matplotlib.pyplot as plt\nx = torch.ones(3).bfloat16()\nplt.plot(x.float())\n",
        ),
        # A list of them: advice only (convert each element).
        Invalid("import torch\nimport numpy as np\nlosses = [torch.ones(()).bfloat16(), torch.zeros(()).bfloat16()]\nnp.mean(losses)\n"),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for call in facts.method_calls.get("numpy", ()):
            found = refused(facts.value_of(method_receiver(call)))
            if found:
                yield self._numpy_finding(facts, call, found)
        for converting in facts.converting_calls:
            for arg in converting.call.args:
                if arg.star or (arg.keyword is not None and arg.keyword.value not in DATA_KEYWORDS):
                    continue
                finding = self._conversion_finding(facts, converting.function, arg.value)
                if finding is not None:
                    yield finding

    def _numpy_finding(self, facts: Facts, call: cst.Call, found: list[tuple[int, str, str, str]]) -> Finding:
        value = facts.value_of(method_receiver(call))
        fixed = call
        for _, _, _, method in found:  # innermost first: `.to_dense().float().numpy()`
            fixed = insert_method_before(fixed, method)
        description = "insert " + ", ".join(f".{method}()" for *_, method in found) + " before .numpy()"
        note, related = call_site_note(value)
        message = f".numpy() on a tensor with {self._what(found)}{note}"
        return self.finding(method_name(call), message, Fix(call, fixed, True, description), related)

    def _conversion_finding(self, facts: Facts, function: str, expr: cst.BaseExpression) -> Finding | None:
        value = facts.value_of(expr)
        is_container = value.has(Flag.CONTAINER) and not value.is_tensor_like
        target = value.element() if is_container else value
        found = refused(target)
        if not found:
            return None
        note, related = call_site_note(target)
        what = "a list, tuple or dict of tensors" if is_container else "a tensor"
        message = f"{function}() calls .numpy() on {what} with {self._what(found, is_container)}{note}"
        fix = None
        if not is_container:
            calls = [method for *_, method in found]
            fix = Fix(expr, chained(expr, calls), True, "convert with " + ", ".join(f".{m}()" for m in calls) + " first")
        return self.finding(expr, message, fix, related)

    @staticmethod
    def _what(found: list[tuple[int, str, str, str]], each: bool = False) -> str:
        """`dtype bfloat16 (TypeError: Got unsupported ScalarType BFloat16); call .float() first`."""
        reasons = " and ".join(f"{what} ({error})" for _, what, error, _ in found)
        calls = ", ".join(f".{method}()" for *_, method in found)
        return f"{reasons}; call {calls} {'on each element ' if each else ''}first"
