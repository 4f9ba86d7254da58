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
"""

from __future__ import annotations

import re

from .values import TENSOR_FLOW, Flag, Value

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
