from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ..analysis.facts import Facts
from ..analysis.semantics import DEVICE_MOVES
from ..analysis.syntax import move_argument
from ..analysis.values import Flag
from ..diagnostics import Finding
from ..fixing.rewrites import detach_before_move
from .base import Invalid, Rule, method_receiver


def is_device_move(facts: Facts, call: cst.Call) -> bool:
    """`.cpu()`, `.cuda()`, or `.to(...)` whose target is a device rather than a dtype."""
    assert isinstance(call.func, cst.Attribute)
    if call.func.attr.value != "to":
        return True
    target = move_argument(call)  # `device=` is a device whatever its value; a positional one if it is a device
    return target is not None and (target.keyword is not None
                                   or facts.value_of(target.value).has(Flag.DEVICE_SPEC | Flag.CPU_SPEC))


def to_a_gpu(facts: Facts, call: cst.Call) -> bool:
    """`.cuda()`, or `.to(device)` whose target may be a GPU and is not the CPU."""
    assert isinstance(call.func, cst.Attribute)
    if call.func.attr.value == "cuda":
        return True
    if call.func.attr.value != "to":
        return False
    target = move_argument(call)
    spec = facts.value_of(target.value) if target is not None else None
    return spec is not None and spec.has(Flag.DEVICE_SPEC) and not spec.has(Flag.CPU_SPEC)


def to_the_cpu(facts: Facts, call: cst.Call) -> bool:
    """`.cpu()`, or `.to(...)` whose target is the CPU and may be nothing else."""
    assert isinstance(call.func, cst.Attribute)
    if call.func.attr.value == "cpu":
        return True
    target = move_argument(call) if call.func.attr.value == "to" else None
    spec = facts.value_of(target.value) if target is not None else None
    return spec is not None and spec.has(Flag.CPU_SPEC) and not spec.has(Flag.DEVICE_SPEC)


class CpuBeforeDetach(Rule):
    code = "DET102"
    name = "cpu-before-detach"
    message = ".cpu() before .detach() records the device copy in the autograd graph; use .detach().cpu()"
    what_it_does = (
        "Flags a device move (`.cpu()`, `.to(\"cpu\")`, `.cuda()`, `.to(device)`) immediately "
        "followed by `.detach()` on a value that may require grad: a model or loss output, a "
        "parameter, a `requires_grad=True` tensor, or what a call in the file passes a helper. A "
        "helper's parameter that only callers the file does not show could fill is not enough "
        "(as for DET101: the claim would depend on the caller). A move to the GPU of a value "
        "already there (`.to(device)` of a model's output on `device`) copies nothing and is "
        "not flagged, nor is a move to the CPU of a tensor known to be there on every path "
        "(made by a factory without `device=`, by `torch.from_numpy` or by `.cpu()`, and not "
        "moved since), unless the program moves the default device (`torch.set_default_device`)."
    )
    why_bad = (
        "While grad is on, every operation on a tensor that requires grad is recorded in the "
        "autograd graph, a copy between devices included: on a GPU, `.cpu()` first allocates a "
        "host copy that carries a `grad_fn` (ToCopyBackward), and only then is the graph cut. "
        "`.detach().cpu()` cuts first, so the copy is plain data. On the CPU `.cpu()` returns the "
        "tensor itself and the order makes no difference."
    )
    example = "loss.cpu().detach()"
    use_instead = "loss.detach().cpu()"
    fix_safety = "Safe: the two orders give equal values; only the recorded graph differs."
    runtime_truth = "On CUDA the `.cpu()` result has a grad_fn; after `.detach().cpu()` it has none. No effect on CPU."
    VALID = [
        "import torch\nw = torch.nn.Linear(3, 1).weight\nw.detach().cpu()\n",
        "import torch\nx = torch.ones(3)\nx.cpu().detach()\n",
        "import torch\nw = torch.ones(3, requires_grad=True)\nwith torch.no_grad():\n    w.cpu().detach()\n",
        "import torch\nw = torch.ones(3, requires_grad=True)\nw.to(torch.float64).detach()\n",
        # Already on the device it is moved to: `.to(device)` returns the tensor itself.
        ("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
         "w = torch.ones(3, requires_grad=True).to(device) * 2\nw.to(device).detach()\n"),
        # Built on the CPU and never moved: `.cpu()` returns the tensor itself.
        "import torch\nw = torch.ones(3, requires_grad=True)\n(w * 2).cpu().detach()\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nw = torch.nn.Linear(3, 1).weight\nw.cpu().detach()\n",
            "import torch\nw = torch.nn.Linear(3, 1).weight\nw.detach().cpu()\n",
        ),
        Invalid(
            "import torch\nw = torch.ones(3, requires_grad=True, device='cuda')\nw.to('cpu', non_blocking=True).detach().numpy()\n",
            "import torch\nw = torch.ones(3, requires_grad=True, device='cuda')\nw.detach().to('cpu', non_blocking=True).numpy()\n",
        ),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for call in facts.method_calls.get("detach", ()):
            move = method_receiver(call)
            if not (isinstance(move, cst.Call) and isinstance(move.func, cst.Attribute)):
                continue
            if move.func.attr.value not in DEVICE_MOVES or not is_device_move(facts, move):
                continue
            moved = facts.value_of(method_receiver(move))
            if moved.has(Flag.CPU_RUNS_ONLY) and to_the_cpu(facts, move):
                continue  # only runs without a GPU get here (placement.py): `.cpu()` gives the tensor
            if moved.has(Flag.DEVICE) and to_a_gpu(facts, move):
                continue  # already there: `.to(device)` gives the tensor itself, no copy is recorded
            if moved.has(Flag.ON_CPU) and not moved.has(Flag.DEVICE) and to_the_cpu(facts, move) and (
                    not facts.default_device_may_move()):
                continue  # on the CPU on every path: `.cpu()` gives the tensor itself
            if facts.grad_enabled_at(move) and moved.has(Flag.GRAD):
                yield self.finding(move.func.attr, fix=detach_before_move(call))
