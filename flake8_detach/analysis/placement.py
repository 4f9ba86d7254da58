"""Tensors known to live on the CPU: where ``Flag.ON_CPU`` comes from, and what can undo it.

DET102 (`.cpu().detach()`) claims a copy recorded in the autograd graph; on the CPU, `.cpu()`
returns the tensor itself and nothing is recorded. A value's DEVICE flag is a *may* fact (it may
be on a GPU), and most tensors have no evidence either way (a model's output: the model may have
been moved by a caller), so DET102 flags them. ``Flag.ON_CPU`` is the evidence against: a *must*
fact, true on every path, that ``values.join_flags`` keeps only where every tensor joined has it.

- It is set by torch's factories called without `device=` (`torch.zeros(3)`, `torch.tensor(rows)`)
  whose tensor arguments are all on the CPU (`torch.tensor(t)`, `zeros_like(t)` and
  `sparse_coo_tensor(i, v)` take the device of their tensors), by the typed legacy constructors
  (`torch.FloatTensor(x)`: a CPU tensor, or an error), by `torch.from_numpy`, by `.cpu()` and by a
  move to "cpu".
- Tensor operations keep it (``Value.tensor_part``), joined over their tensor operands.
- A move to a device, or to a place the file cannot read (`.to(device)` of a parameter, `.to(t)`,
  `.type(...)`), clears it, as does any join with a tensor that lacks it.
- A program can make its factories build elsewhere: `torch.set_default_device("cuda")`,
  `torch.set_default_tensor_type(torch.cuda.FloatTensor)`, or a `with torch.device("cuda"):`
  block. Where the file, or for the first two any file of its project, spells one, DET102 does
  not trust the fact (``default_device_may_move``).

Where a tensor on the CPU on every path meets one that may be on a GPU in an operation that
checks its operands' devices whatever their shapes (`torch.mm`, `@`, `F.linear`, a `Linear` or
`Conv2d` layer: torch raises "Expected all tensors to be on the same device" or "Input type
(torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same"), a run with the
GPU stops there. What the operation gives, and everything computed from it, is reached only by
runs with those operands on the CPU: ``Flag.CPU_RUNS_ONLY``, which DET102, DET104 and DET106 read
as "not on a GPU" (``Value.may_be_on_device``). An elementwise `+` does not check (a 0-dim CPU
tensor may meet a GPU one), so it only passes the fact on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .values import STOPPED_ON_A_GPU, TENSOR_FLOW, Flag, Value

# torch's namespaces whose factories build on the default device (not `torch.cuda.FloatTensor`).
CPU_FACTORY_NAMESPACES = frozenset({"torch", "torch.autograd", "torch.sparse"})
# torch's legacy typed constructors: CPU tensors, whatever they are given (torch 2.13: a tensor of
# another device raises "expected TensorOptions(..., device=cpu, ...)"); `torch.Tensor(t)` keeps t's.
TYPED_CPU_CONSTRUCTORS = frozenset(
    {"FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
     "CharTensor", "ByteTensor", "BoolTensor"})
# The words of a program that moves the default device; the project's text index is asked for them.
DEFAULT_DEVICE_SETTERS = ("set_default_device", "set_default_tensor_type")
_MOVES_DEFAULT_DEVICE = re.compile(
    r"\b(?:set_default_device|set_default_tensor_type)\b|\bwith\b[^\n:#]*\bdevice\s*\(")


def on_the_cpu(value: Value) -> Value:
    """``value`` after `.cpu()` (or a move to "cpu"): no longer on a device; a tensor (not a
    module, whose outputs are its inputs') on the CPU on every path."""
    tensor = value.flags & TENSOR_FLOW and not value.flags & (Flag.MODULE | Flag.MODULE_HINT)
    return value.with_flags(add=Flag.ON_CPU if tensor else Flag.NONE, remove=Flag.DEVICE)


def factory_on_the_cpu(qualified: str, arguments: list[Value]) -> bool:
    """Whether a torch factory called without `device=` builds on the CPU: a factory of torch's
    own namespaces whose every tensor argument (or tensor in a list given) is on the CPU."""
    namespace, _, name = qualified.rpartition(".")
    if namespace not in CPU_FACTORY_NAMESPACES:
        return False
    if name in TYPED_CPU_CONSTRUCTORS:
        return True  # `torch.FloatTensor(t)` of a tensor elsewhere raises: what it gives is on the CPU
    for argument in arguments:
        for part in (argument, argument.elem) if argument.elem is not None else (argument,):
            if part.flags & TENSOR_FLOW and not part.flags & Flag.ON_CPU:
                return False
    return True


def default_device_may_move(text: str) -> bool:
    """Whether a file's text may build its factories' tensors off the CPU (see the module's docstring)."""
    return _MOVES_DEFAULT_DEVICE.search(text) is not None


# torch functions and tensor methods whose first two tensor operands must share a device, whatever
# their shapes (a 0-dim operand raises there too: "at least 1D"); on CUDA, torch 2.13:
# "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# (when checking argument for argument mat2 in method wrapper_CUDA_mm)", `addmm` for `F.linear`.
DEVICE_CHECKING_FUNCTIONS = frozenset(
    {"mm", "matmul", "bmm", "mv", "linear", "bilinear", "conv1d", "conv2d", "conv3d",
     "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"})
DEVICE_CHECKING_METHODS = frozenset({"mm", "matmul", "bmm", "mv"})
# torch.nn layers whose parameters meet the input on every call (no switch turns them off);
# tests/test_placement.py runs those the meta device checks (Linear, Bilinear, the RNNs and cells)
# with their parameters there and a CPU input, and a Conv2d, an RNN and a Linear on a GPU where
# one is present; the rest is CUDA's "Input type ... and weight type ... should be the same".
DEVICE_CHECKING_LAYERS = frozenset(
    {"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
     "ConvTranspose3d", "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"})


def on_the_cpu_everywhere(value: Value) -> bool:
    """A tensor on the CPU on every path (ON_CPU), with nothing saying it may be elsewhere."""
    return bool(value.flags & Flag.ON_CPU and value.flags & TENSOR_FLOW and not value.flags & Flag.DEVICE)


def raises_on_a_gpu(first: Value, second: Value) -> bool:
    """Whether two operands of a device-checking operation are a tensor on the CPU on every path
    and one that may be on a GPU: there, the operation raises."""
    return any(on_the_cpu_everywhere(a) and b.flags & Flag.DEVICE for a, b in ((first, second), (second, first)))


def stopped_on_a_gpu(operands: Iterable[Value]) -> int:
    """The bits of STOPPED_ON_A_GPU any operand has: computing the result needs that operand."""
    found = Flag.NONE
    for operand in operands:
        found |= operand.flags & STOPPED_ON_A_GPU
    return found
