from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ..analysis.facts import Facts
from ..analysis.values import Flag
from ..diagnostics import Finding, Fix
from ..fixing.rewrites import conversion_sharing, insert_detach
from .base import (
    Invalid,
    Rule,
    call_site_note,
    method_name,
    method_receiver,
    passes_force,
)


class NumpyOnGradTensor(Rule):
    code = "DET101"
    name = "numpy-on-grad-tensor"
    message = ".numpy() on a tensor that may require grad raises RuntimeError; call .detach() first"
    what_it_does = (
        "Flags `.numpy()` reached without `.detach()` on a value that may require grad: a model or "
        "loss output, a parameter, a `requires_grad=True` tensor, arithmetic on any of these, or a "
        "helper's parameter that a call in the file passes such a value (joined over the call sites, "
        "the message names the call). A helper nothing in the file calls, or that escapes (a "
        "callback, a decorated function, a `*args` call), is caller-dependent: that claim is "
        "DET111's, off by default (so is `model.weight` of such a parameter). A name is a module when the file uses it as "
        "one: `.eval()`, `.parameters()`, `.named_parameters()`, or `.train()` and a call; `t.numpy() "
        "if not t.requires_grad else ...` guards are followed, and so is a branch that returns "
        "(`if t.requires_grad: return t.detach().numpy()`). A module with no parameters "
        "(`nn.ReLU()`, `nn.Softmax()`, a loss such as `nn.MSELoss()`) passes grad on only from its "
        "inputs, as a frozen model does: `nn.MSELoss()(model(x), y)` may require grad, "
        "`nn.ReLU()(torch.ones(2))` does not. So does a module class of the file whose `__init__` "
        "gives it only such layers, buffers and plain values (a positional encoding), unless its "
        "`forward` calls a model that has parameters; and an `nn.Embedding` whose weight is "
        "frozen (`emb.weight.requires_grad = False`, `nn.Embedding.from_pretrained(v)` without "
        "`freeze=False`)."
    )
    why_bad = (
        "A tensor that requires grad is a node of the autograd graph: it remembers how it was "
        "computed so that `backward()` can send gradients through it. A NumPy array has no graph, "
        "so PyTorch refuses to hand the storage over silently and raises `RuntimeError: Can't call "
        "numpy() on Tensor that requires grad`. `.cpu()` does not help (on the CPU it returns the "
        "same tensor; on a GPU the copy it makes is recorded in the graph) and neither does "
        "`model.eval()` (it changes how layers behave, not grad mode)."
    )
    example = "out = model(x)\nout.cpu().numpy()"
    use_instead = "out = model(x)\nout.detach().cpu().numpy()"
    fix_safety = (
        "Safe where the array is only read: inserting `.detach()` only removes the graph, the values "
        "are the same. But the fixed call runs where the original raised, and on the CPU its array "
        "shares the tensor's memory: where the file writes the array in place afterwards (`a[i] = v`, "
        "`a += v`, `a.fill(0)`, `np.copyto(a, v)`, `out=a`; through a view or a second name; anywhere "
        "in the loop) the fix also appends `.copy()` and stays safe; where the array escapes what the "
        "file shows (returned, yielded, stored in an attribute or container, passed to a function not "
        "known to only read it, captured by a nested function) the fix is unsafe, since a write there "
        "would silently change the tensor (a parameter, say); add `.copy()` if it is written. "
        "`--style force` (`.numpy(force=True)`, which shares memory on the CPU too) carries the same "
        "copy and safety."
    )
    runtime_truth = "RuntimeError \"Can't call numpy() on Tensor that requires grad\" on every device."
    VALID = [
        "import torch\nout = torch.zeros(3) + 1\nout.numpy()\n",
        "import torch\nw = torch.ones(3, requires_grad=True)\nw.detach().numpy()\n",
        "import torch\nw = torch.ones(3, requires_grad=True)\nwith torch.no_grad():\n    w.numpy()\n",
        "import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy(force=True)\n",
        "import tensorflow as tf\nx = tf.Variable(1.0)\nx.numpy()\n",
        # A tensor the file stores in a module's attribute is that tensor, not a parameter (yolov5).
        "import torch\nmodel = torch.nn.Linear(3, 2)\nmodel.class_weights = torch.ones(2) * 2\nmodel.class_weights.cpu().numpy()\n",
        # Caller-dependent: DET111's claim, never this one's.
        "import torch\ndef to_numpy(t):\n    return t.numpy()\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n",
            "import torch\nw = torch.ones(3, requires_grad=True)\nw.detach().numpy()\n",
        ),
        Invalid(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nout = model(torch.ones(2))\nout.cpu().numpy()\n",
            "import torch\nmodel = torch.nn.Linear(2, 2)\nout = model(torch.ones(2))\nout.detach().cpu().numpy()\n",
        ),
        Invalid(
            "import torch\ndef to_numpy(t):\n    return t.numpy()\nto_numpy(torch.ones(2, requires_grad=True))\n",
            "import torch\ndef to_numpy(t):\n    return t.detach().numpy()\nto_numpy(torch.ones(2, requires_grad=True))\n",
        ),
        Invalid(  # the values of a generator: what it yields
            "import torch\nnet = torch.nn.Linear(2, 1)\n\n\ndef outputs(xs):\n    for x in xs:\n        yield net(x)\n\n\n"
            "for out in outputs([torch.ones(2)]):\n    out.numpy()\n",
            "import torch\nnet = torch.nn.Linear(2, 1)\n\n\ndef outputs(xs):\n    for x in xs:\n        yield net(x)\n\n\n"
            "for out in outputs([torch.ones(2)]):\n    out.detach().numpy()\n",
        ),
        Invalid(  # a whole model loaded back is a module (analysis/semantics.py MODEL_LOADERS)
            "import torch\nmodel = torch.load('m.pt', weights_only=False)\nmodel(torch.ones(3)).numpy()\n",
            "import torch\nmodel = torch.load('m.pt', weights_only=False)\nmodel(torch.ones(3)).detach().numpy()\n",
        ),
        Invalid(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nw = model.weight.cpu().numpy()\nw[0, 0] = 100.0\n",
            "import torch\nmodel = torch.nn.Linear(2, 2)\nw = model.weight.detach().cpu().numpy().copy()\nw[0, 0] = 100.0\n",
        ),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for site in grad_numpy_sites(facts):
            if not site.caller_dependent:  # that form is DET111's, off by default
                yield self.finding(method_name(site.call), self.message + site.note, site.fix(facts), site.related)


@dataclass(frozen=True)
class GradNumpySite:
    """A `.numpy()` on a value that may require grad, and whether only an unseen caller makes it so."""

    call: cst.Call
    note: str
    related: cst.CSTNode | None
    caller_dependent: bool

    def fix(self, facts: Facts) -> Fix | None:
        """`.detach()` inserted (and `.copy()` where the array is written): built for the reported sites only."""
        return insert_detach(self.call, conversion_sharing(self.call, facts))


def grad_numpy_sites(facts: Facts) -> Iterator[GradNumpySite]:
    """Every DET101/DET111 site: one analysis, two claims (proven here, or up to the caller)."""
    for call in facts.method_calls.get("numpy", ()):
        if passes_force(call) or not facts.grad_enabled_at(call):
            continue
        value = facts.value_of(method_receiver(call))
        if not value.may_require_grad:
            continue
        note, related = call_site_note(value)
        # No grad evidence: only a caller outside what the file shows can make it require grad.
        # A call site's note alone is none: a call that passes a tensor on the GPU, joined with
        # the method's analysis for unseen callers (a parameter of unknown origin), is not a call
        # that passes a tensor that requires grad (dlwpt's clusterSegmentationOutput).
        caller_dependent = not value.has(Flag.GRAD)
        yield GradNumpySite(call, note, related, caller_dependent)
