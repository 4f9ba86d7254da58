from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ..analysis.facts import Facts
from ..diagnostics import Finding, Fix
from ..fixing.rewrites import ConversionFix
from .base import Invalid, Rule, method_name
from .det101_numpy_on_grad_tensor import grad_numpy_sites

# Why DET111's fix is never safe, whatever the array's uses: the file does not show the hazard.
CALLER_DEPENDENT_FIX_NOTE = (
    "; unsafe: it depends on the caller: no call in the file or its project passes a tensor that requires grad, and "
    "for a caller outside it that does, a conversion that raised now runs"
)


class NumpyOnCallerDependentTensor(Rule):
    code = "DET111"
    name = "numpy-on-caller-dependent-tensor"
    message = (
        ".numpy() on a parameter of unknown origin raises RuntimeError if a caller passes a tensor that "
        "requires grad while grad is on (it depends on the caller); call .detach() first"
    )
    what_it_does = (
        "Flags `.numpy()` without `.detach()` on a helper's parameter (or `model.weight` of one, or "
        "arithmetic on it) when nothing in the file or its project shows where it comes from: no "
        "call in the file passes it a value and no other file of the project calls it (where one "
        "does, what it passes decides, as a call in the file would), or the helper escapes (a "
        "callback, a decorated function, a `*args` call). Only in a file that imports torch: in one "
        "that never does, a parameter is a tensor only where the project's calls pass one. This is "
        "DET101's claim made about callers the file cannot see, so it has its own "
        "code, **off by default**: flake8 reports it with `--extend-select DET111` (or a `--select` "
        "that names it or its prefix), and `check`, `fix` and the language server with `--preview`, "
        "`preview = true`, or a `select`/`extend-select` that names it. A site is reported under "
        "exactly one code: where a call in the file passes a value that may require grad, or the "
        "file shows grad evidence, it is DET101. One code per rule with a caller-dependent form "
        "(DET10n -> DET11n), as flake8-bugbear gives each opinionated check its own B9xx code, "
        "rather than one switch for all: today only DET101 has one (DET104's device claims and "
        "DET106's need evidence in the file; DET102's `.cpu().detach()` on such a parameter is "
        "harmless for a caller that passes no grad tensor)."
    )
    why_bad = (
        "A helper such as `def to_numpy(t): return t.cpu().numpy()` works for the tensors the author "
        "had in mind and raises `RuntimeError: Can't call numpy() on Tensor that requires grad` for a "
        "model output or a parameter passed while grad is on. Whether that happens depends on callers "
        "the file does not show (another module, a library user), which is why the claim is weaker "
        "than DET101's and why it is opt-in: in an application whose callers all run under "
        "`torch.no_grad()` it is noise, in a library of helpers it is a real hazard."
    )
    example = "def to_numpy(t):\n    return t.cpu().numpy()"
    use_instead = "def to_numpy(t):\n    return t.detach().cpu().numpy()"
    fix_safety = (
        "The same rewrite as DET101 (`.detach()` inserted before the conversion, `.copy()` appended "
        "where the file writes the array), but always **unsafe**: the file does not show a caller that "
        "passes a tensor requiring grad, and for one that does, a conversion that raised now runs and "
        "its array shares the tensor's memory on the CPU. Review it with `fix --unsafe-fixes`."
    )
    runtime_truth = (
        "RuntimeError \"Can't call numpy() on Tensor that requires grad\" on every device, when a "
        "caller passes such a tensor with grad on (the fixtures make that call)."
    )
    VALID = [
        "import torch\ndef to_numpy(t):\n    return t.detach().numpy()\n",
        "import torch\ndef to_numpy(t):\n    with torch.no_grad():\n        return t.numpy()\n",
        "import torch\ndef to_numpy(t):\n    return t.numpy(force=True)\n",
        # Proven by a call in the file: DET101's, never this one's.
        "import torch\ndef to_numpy(t):\n    return t.numpy()\nto_numpy(torch.ones(2, requires_grad=True))\n",
        # Every call in the file passes a tensor that does not require grad: nothing to report.
        "import torch\ndef to_numpy(t):\n    return t.numpy()\nto_numpy(torch.ones(2))\n",
    ]
    INVALID = [
        Invalid(
            "import torch\ndef to_numpy(t):\n    return t.cpu().numpy()\n",
            "import torch\ndef to_numpy(t):\n    return t.detach().cpu().numpy()\n",
        ),
        Invalid(
            "import torch\ndef first_weight(model):\n    w = model.weight.numpy()\n    w[0] = 0.0\n    return float(w[0])\n",
            "import torch\ndef first_weight(model):\n    w = model.weight.detach().numpy().copy()\n    w[0] = 0.0\n"
            "    return float(w[0])\n",
        ),
        Invalid(
            "import torch\ndef apply(fn, x):\n    return fn(x).numpy()\n",
            "import torch\ndef apply(fn, x):\n    return fn(x).detach().numpy()\n",
        ),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        if not facts.imports.imports_torch:
            return  # a file that never imports torch (analysed for what its project passes): a
            # parameter's `.numpy()` there is no torch claim until a caller passes a tensor
        for site in grad_numpy_sites(facts):
            if site.caller_dependent:
                yield self.finding(method_name(site.call), fix=unsafe_for_the_caller(site.fix(facts)))


def unsafe_for_the_caller(fix: Fix | None) -> Fix | None:
    """DET101's fix, made unsafe (in both styles) because only an unseen caller makes it needed."""
    if fix is None:
        return None
    description = fix.description + CALLER_DEPENDENT_FIX_NOTE
    if isinstance(fix, ConversionFix):
        sharing = replace(fix.sharing, safe=False, note=fix.sharing.note + CALLER_DEPENDENT_FIX_NOTE)
        return replace(fix, safe=False, description=description, sharing=sharing)
    return replace(fix, safe=False, description=description)
