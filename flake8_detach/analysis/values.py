"""Abstract values: what the file tells us about an expression at run time.

The analysis is a *may* analysis: a flag means "on some path, this can be
true", and merging two paths is the union of their flags. Rules flag only on
positive evidence (a flag that is set), never on the absence of one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


class Flag:
    """The bits of evidence a value carries.

    Plain ints, not an `enum.IntFlag`: the walk combines flags millions of times on a large
    project, and each enum operator costs a microsecond (most of the interpreter's own time).
    """

    NONE = 0
    TENSOR = 1 << 0  # evidence that this is a torch.Tensor
    GRAD = 1 << 1  # may require grad (model output, parameter, requires_grad=True, ...)
    UNKNOWN_ARG = 1 << 2  # a function parameter of unknown origin: may require grad
    DEVICE = 1 << 3  # may live on a non-CPU device
    MODULE = 1 << 4  # an nn.Module instance: calling it yields a grad tensor
    PARAMS = 1 << 5  # an iterable of parameters (model.parameters())
    DEVICE_SPEC = 1 << 6  # a device that may be a GPU ("cuda", torch.device(...))
    CPU_SPEC = 1 << 7  # the CPU device ("cpu", torch.device("cpu"))
    NDARRAY = 1 << 8  # a NumPy array (from .numpy(), np.* calls)
    MODULE_CLASS = 1 << 9  # a class that subclasses nn.Module (instantiating gives MODULE)
    CONTAINER = 1 << 10  # a list/tuple/dict whose elements are described by `elem`
    AXES = 1 << 11  # a matplotlib Axes (or an array of them): its plotting methods convert
    FUNCTION = 1 << 12  # a function defined in this module (`callee` says which)
    NOT_TENSOR = 1 << 13  # evidence against: annotated with a non-tensor type
    DEVICE_FLAG = 1 << 14  # a bool that says whether a GPU is used (`torch.cuda.is_available()`)
    PLAIN_CLASS = 1 << 15  # a class of this module with no base: its instances are NOT_TENSOR
    INSTANCE = 1 << 16  # an instance of a class of this module (`callee` is the class)
    MODULE_HINT = 1 << 17  # a parameter given `.train()`/`.zero_grad()`: a module if it is called
    UNKNOWN_OBJECT = 1 << 18  # an attribute of a parameter of unknown origin (`block.conv`)
    PACKED_SEQUENCE = 1 << 20  # an nn.utils.rnn.PackedSequence (with NOT_TENSOR): its `.data` is a field
    MAYBE_PARAMETER = 1 << 19  # `.weight`/`.bias` of one: a Parameter if the caller passes a module
    # The dtype a tensor, array or module (its parameters) may have: a may-set, joined by union;
    # no dtype bit means "unknown". On a value with no other flag: a dtype object (`torch.float64`).
    FLOAT16 = 1 << 21
    BFLOAT16 = 1 << 22
    FLOAT32 = 1 << 23
    FLOAT64 = 1 << 24
    INTEGER = 1 << 25
    BOOL = 1 << 26
    COMPLEX = 1 << 27
    SPARSE = 1 << 28  # a sparse layout (COO, CSR, ...): `.numpy()` refuses it
    CONJ = 1 << 29  # a conjugate view (`.conj()` of a complex tensor): `.numpy()` refuses it
    # The array side (issue 23, DET108): see analysis/array_facts.py for what sets and clears them.
    NEGATIVE_STRIDE = 1 << 30  # an ndarray view with a negative stride (`a[::-1]`, `np.flip(a)`)
    NON_NATIVE_ORDER = 1 << 31  # an ndarray whose dtype is not in the machine's byte order (`>f4`)
    NON_NATIVE_DTYPE = 1 << 32  # a dtype (or dtype string) naming a non-native byte order
    SKLEARN_ESTIMATOR = 1 << 33  # a scikit-learn estimator: its `fit`/`predict` convert their arguments
    FROZEN = 1 << 34  # a module whose parameters were all set requires_grad=False (freezing.py)
    FRAME = 1 << 35  # a pandas DataFrame or Series (with NOT_TENSOR): its dtype bits are its columns' (frames.py)
    # A torchvision detection model, and what it returns (a list of dicts of tensors): the
    # `labels` of each result are int64 class indices, which never require grad.
    DETECTION = 1 << 36
    # A tensor with no dimensions on every path (a reduced loss, `t.sum()`): indexing it raises.
    # On a module: its call returns one (a loss). A must-fact, as FROZEN (analysis/ranks.py).
    ZERO_DIM = 1 << 37
    # A tensor on the CPU on every path (a factory with no device, `.cpu()`, operations of such
    # tensors only): `.cpu()` of it returns it unchanged, so no copy is recorded (DET102). A
    # must-fact, as ZERO_DIM; a move to a device or to a place the file cannot read clears it.
    ON_CPU = 1 << 38
    # Computed by an operation that raises where its operands are on two devices (a CPU tensor met
    # a GPU one in `mm`, `@`, a `Linear`), or from such a value: reached only by runs where the
    # operands said to live on a GPU are on the CPU, so no claim about a GPU holds for it. Every
    # operation passes it on (any operand); a must-fact at joins (analysis/placement.py).
    CPU_RUNS_ONLY = 1 << 39
    # Computed by a parameterised layer held by the method's own instance (`self.fc(x)`) from a
    # tensor on the CPU: where the instance lives on a GPU, that call raised. A call of the
    # instance moved to a device turns it into CPU_RUNS_ONLY (calls._module_gpu_stop).
    CPU_INTO_OWN_LAYER = 1 << 40
    # Computed from a parameter of unknown origin with its grad dropped (`x.detach()`,
    # `x.argmax(1)`): no caller's grad reaches it, but it lives where the caller's argument lives
    # (a call of another file's function gives it the arguments' device: values.seen_from).
    PASSED_DEVICE = 1 << 41


# Flags that a tensor operation carries from its operands to its result.
TENSOR_FLOW = Flag.TENSOR | Flag.GRAD | Flag.UNKNOWN_ARG | Flag.DEVICE
# What says that a run with a GPU stops before a value is computed (analysis/placement.py).
STOPPED_ON_A_GPU = Flag.CPU_RUNS_ONLY | Flag.CPU_INTO_OWN_LAYER
# The dtype bits, and what a view of a tensor may keep besides them.
DTYPES = (Flag.FLOAT16 | Flag.BFLOAT16 | Flag.FLOAT32 | Flag.FLOAT64 | Flag.INTEGER | Flag.BOOL
          | Flag.COMPLEX)
LAYOUTS = Flag.SPARSE | Flag.CONJ
# The facts of an ndarray's memory layout that torch refuses to take over (DET108).
ARRAY_LAYOUT = Flag.NEGATIVE_STRIDE | Flag.NON_NATIVE_ORDER
# Flags that say a value may require grad (known, or through a parameter of unknown origin).
GRAD_FLAGS = Flag.GRAD | Flag.UNKNOWN_ARG


@dataclass(frozen=True)
class Value:
    flags: int = Flag.NONE
    # Known positional structure (tuple results such as ``out.max(1)``).
    items: tuple[Value, ...] | None = None
    # What the elements of a container or iterable are.
    elem: Value | None = field(default=None, compare=False)
    # Human-readable origin of the hazard, for messages ("output of model").
    origin: str | None = field(default=None, compare=False)
    # The call that passed this value into a parameter (named in messages at the sink).
    via: object | None = field(default=None, compare=False)
    # For FUNCTION values: the interpreter's record of the function.
    callee: object | None = field(default=None, compare=False)
    # DEVICE holds only where this device flag (`use_gpu`, `args.cuda`) is true: the value was
    # moved under `if use_gpu:`. Where the walk knows the flag is false, DEVICE is dropped.
    device_if: str | None = None
    # The abstract containers (see analysis/heap.py) this value may be: ids of their allocation sites.
    objs: frozenset[int] = frozenset()

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)

    @property
    def may_require_grad(self) -> bool:
        return self.has(GRAD_FLAGS)

    @property
    def may_be_on_device(self) -> bool:
        """DEVICE, on a value that a run with a GPU reaches (placement.py: CPU_RUNS_ONLY)."""
        return self.flags & (Flag.DEVICE | Flag.CPU_RUNS_ONLY) == Flag.DEVICE

    @property
    def is_tensor_like(self) -> bool:
        """Evidence that the value is a torch tensor (not an ndarray or other object)."""
        return self.has(Flag.TENSOR | Flag.GRAD | Flag.DEVICE)

    def with_flags(self, add: int = Flag.NONE, remove: int = Flag.NONE) -> Value:
        flags = (self.flags | add) & ~remove
        if flags == self.flags:
            return self
        keep = bool(flags & TENSOR_FLOW)
        return Value(flags, self.items, self.elem, self.origin if keep else None, self.via if keep else None,
                     self.callee, self.device_if if flags & Flag.DEVICE else None, self.objs)

    def tensor_part(self, origin: str | None = None) -> Value:
        """The flags a tensor operation on this value passes to its result (its dtype and whether
        it is on the CPU too)."""
        flags = self.flags
        kept = flags & (TENSOR_FLOW | DTYPES | Flag.DETECTION | Flag.ON_CPU | STOPPED_ON_A_GPU | Flag.PASSED_DEVICE) if (
            flags & TENSOR_FLOW) else Flag.NONE
        return Value(kept, origin=origin or self.origin, via=self.via, device_if=self.device_if)

    @property
    def dtype(self) -> int:
        """The dtype bits (0: unknown)."""
        return self.flags & DTYPES

    def with_dtype(self, dtype: int) -> Value:
        """This value with its dtype replaced (0: unknown); layouts are kept."""
        return self.with_flags(add=dtype, remove=DTYPES & ~dtype)

    def moved_to_device(self) -> Value:
        """After an unconditional move to a GPU: DEVICE, needing no flag."""
        if self.flags & Flag.DEVICE and self.device_if is None:
            return self
        return Value((self.flags | Flag.DEVICE) & ~Flag.ON_CPU, self.items, self.elem, self.origin, self.via,
                     self.callee, objs=self.objs)

    def device_part(self) -> Value:
        """Only where this value may live (DEVICE and its flag), to pass on to a result."""
        if not self.flags & Flag.DEVICE:
            return EMPTY
        return Value(Flag.DEVICE, device_if=self.device_if)

    def with_device_of(self, *sources: Value) -> Value:
        """This value, living wherever any of `sources` may live."""
        out = self
        for source in sources:
            if source.flags & Flag.DEVICE:
                out = out.merge(source.device_part())
        return out

    def guarded_by(self, flag: str) -> Value:
        """As seen after a branch that runs only where `flag` is true: its DEVICE needs the flag."""
        if not self.flags & Flag.DEVICE or self.device_if is not None:
            return self
        return Value(self.flags, self.items, self.elem, self.origin, self.via, self.callee, flag, self.objs)

    def unless(self, flag: str) -> Value:
        """As seen where `flag` is false: a DEVICE that needs the flag is gone."""
        if self.device_if != flag or not self.flags & Flag.DEVICE:
            return self
        return self.with_flags(remove=Flag.DEVICE)

    def merge(self, other: Value) -> Value:
        # `other == EMPTY`, without the dataclass's generated `__eq__` (a million calls on a large
        # project): nothing on either side adds anything. `callee` counts although `__eq__` skips
        # it: a lambda's value has nothing else, and a merge that dropped it lost the lambda
        # (`{"f": lambda t: t}`, a lambda kept in a dict).
        if other is self or _blank(other):
            return self
        if _blank(self):
            return other
        items = None
        if self.items is not None and other.items is not None and len(self.items) == len(other.items):
            items = tuple(a.merge(b) for a, b in zip(self.items, other.items))
        elem = _merge_optional(self.elem, other.elem)
        objs = self.objs | other.objs if other.objs and self.objs else self.objs or other.objs
        flags = join_flags(self.flags, other.flags)
        device_if = _merge_device_if(self, other) if flags & Flag.DEVICE else None
        return Value(flags, items, elem, self.origin or other.origin,
                     self.via or other.via, self.callee or other.callee, device_if, objs)

    def element(self) -> Value:
        """The value of one element when this value is iterated or indexed (with what the heap's
        objects it may be hold, while a walk has a heap installed)."""
        reader = getattr(WALK, "heap_reader", None) if self.objs else None
        if reader is not None:
            stored = reader(self.objs)
            return stored if self.elem is None and not self.items else self._own_element().merge(stored)
        return self._own_element()

    def _own_element(self) -> Value:
        if self.elem is not None:
            return self.elem
        if self.has(Flag.AXES):
            return Value(Flag.AXES)
        if self.has(Flag.PARAMS):
            return Value(Flag.TENSOR | Flag.GRAD, origin="parameter").with_device_of(self)
        if self.items:
            return merge_all(self.items)
        if self.flags & Flag.NDARRAY and not self.is_tensor_like:
            return Value(Flag.NDARRAY | self.flags & DTYPES)  # a row of an array: the same dtype
        if self.flags & Flag.MODULE:
            # `for layer in self.layers`: a ModuleList's or Sequential's modules; a dict's keys.
            return EMPTY if self.callee in KEYED_CONTAINERS else module_item(self)
        if self.flags & Flag.MODULE_HINT and not self.is_tensor_like:
            # `generator, discriminator = torch.load(path)`: each may be a model (if called).
            return Value(Flag.MODULE_HINT)
        # Iterating or indexing a tensor yields tensors with the same flags.
        return self.tensor_part()


def _own_parts(value: Value, transform: Callable[[Value, int], Value],
               depth: int) -> tuple[tuple[Value, ...] | None, Value | None, bool]:
    """The items and element a value carries itself (not its heap objects', which other code may
    fill), each through ``transform`` one level deeper, and whether all came back unchanged."""
    items = tuple(transform(item, depth - 1) for item in value.items) if value.items and depth else value.items
    elem = transform(value.elem, depth - 1) if value.elem is not None and depth else value.elem
    same = (items is value.items or all(a is b for a, b in zip(items or (), value.items or ()))) and elem is value.elem
    return items, elem, same


def without_grad(value: Value, depth: int = 3) -> Value:
    """The value, and the items and elements it carries itself, with no grad: what a call
    computed while grad was off gives."""
    items, elem, same = _own_parts(value, without_grad, depth)
    if not value.flags & GRAD_FLAGS and same:
        return value
    flags = value.flags & ~GRAD_FLAGS
    keep = bool(flags & TENSOR_FLOW)
    return Value(flags, items, elem, value.origin if keep else None, value.via if keep else None, value.callee,
                 value.device_if if flags & Flag.DEVICE else None, value.objs)


def passed_device(value: Value) -> int:
    """PASSED_DEVICE for what drops the grad of a value that came from a parameter of unknown origin."""
    return Flag.PASSED_DEVICE if value.flags & (Flag.UNKNOWN_ARG | Flag.PASSED_DEVICE) else Flag.NONE


def seen_from(value: Value, passed: Callable[[], Value], depth: int = 3, devices: bool = False) -> Value:
    """A callee's result at one call: what came from parameters of unknown origin (`UNKNOWN_ARG`),
    in the value and in the items and elements it carries itself (`img, anno = t(img, anno)`:
    a tuple), is what the call passed (``passed()``, the join of its arguments' tensor parts,
    asked only where needed: this runs at every call). With ``devices`` (a function of another
    file, analysed for unknown callers), what came from them without their grad (PASSED_DEVICE)
    lives where the arguments live; a function of this file was analysed with its arguments."""
    items, elem, same = _own_parts(value, lambda part, below: seen_from(part, passed, below, devices), depth)
    device_only = devices and value.flags & Flag.PASSED_DEVICE and not value.flags & Flag.UNKNOWN_ARG
    if not value.flags & Flag.UNKNOWN_ARG and not device_only and same:
        return value
    seen = Value(value.flags & ~Flag.UNKNOWN_ARG, items, elem, value.origin, value.via, value.callee,
                 value.device_if, value.objs)
    if device_only:
        return seen.merge(passed().device_part())
    if not value.flags & Flag.UNKNOWN_ARG:
        return seen
    # The arguments give their grad and device; a 0-dim result stays one whatever their shapes
    # (`losses.sum() / n` of a helper: the shape was the callee's, with parameters of any shape),
    # and what only runs without a GPU compute, or is computed from arguments that only such runs
    # compute, stays so (placement.py).
    given = passed()
    return seen.merge(given).with_flags(add=value.flags & (Flag.ZERO_DIM | STOPPED_ON_A_GPU)
                                        | given.flags & STOPPED_ON_A_GPU)


def passed_tensors(arguments: Iterable[Value]) -> Value:
    """What the arguments of a call give a callee's result that came from its parameters: the
    join of their tensor parts."""
    return merge_all([value.tensor_part() for value in arguments])


def passed_by(value: Value, call: object) -> Value:
    """The value as seen inside a callee: remembers the call that passed it, if it is a hazard."""
    if value.via is not None:
        return value
    elem = passed_by(value.elem, call) if value.elem is not None else None
    if not value.flags & (Flag.GRAD | Flag.DEVICE) and (elem is None or elem.via is None):
        return value
    return Value(value.flags, value.items, elem, value.origin, call, value.callee, value.device_if, value.objs)


def _merge_device_if(a: Value, b: Value) -> str | None:
    """The flag a merged DEVICE needs: only one that both sides' DEVICE need (or the one side's)."""
    if a.device_if is None and b.device_if is None:
        return None
    a_device = a.flags & Flag.DEVICE
    b_device = b.flags & Flag.DEVICE
    if a_device and b_device:
        return a.device_if if a.device_if == b.device_if else None
    if a_device:
        return a.device_if
    if b_device:
        return b.device_if
    return None


def _merge_optional(a: Value | None, b: Value | None) -> Value | None:
    if a is None:
        return b
    if b is None:
        return a
    return a.merge(b)


EMPTY = Value()

# torch.nn's containers by what indexing one gives (`layers[0]`, `params["w"]`): a parameter for a
# ParameterList or ParameterDict, a module for the others; a ModuleDict or ParameterDict iterates
# its keys (torch 2.13).
PARAMETER_CONTAINERS = frozenset({"ParameterList", "ParameterDict"})
KEYED_CONTAINERS = frozenset({"ModuleDict", "ParameterDict"})


def module_item(module: Value) -> Value:
    """What indexing or iterating a module gives (`self.blocks[0]`, `self.embeddings["user"]`), on
    its device. `model.body`, a submodule or a parameter (both flags), gives rows of a parameter
    that require grad or modules of a container, so both again."""
    if module.callee in PARAMETER_CONTAINERS:
        return Value(Flag.TENSOR | Flag.GRAD, origin="parameter").with_device_of(module)
    if module.has(Flag.TENSOR):
        return module.tensor_part().with_flags(add=Flag.MODULE)
    return Value(Flag.MODULE).with_device_of(module)


# Per thread (the language server analyses buffers in worker threads): `heap_reader`, set by
# analysis/heap.py while a walk runs, says what the objects of a value may hold.
WALK = threading.local()


def join_flags(a: int, b: int) -> int:
    """Two values' flags joined: "may" facts by union; FROZEN is a must-fact, kept only where every
    module (or module hint) joined is frozen (a frozen model here, a trained one there); ZERO_DIM
    too, kept only where every tensor or module joined has it (a place only known to be on a GPU,
    `Value(DEVICE)`, says nothing of a shape); ON_CPU, kept only where every tensor or module
    joined has it and none may be on a device; the bits of STOPPED_ON_A_GPU, each kept only where
    every tensor or module joined has it (an operation passes them on from any operand:
    placement.stopped_on_a_gpu)."""
    joined = a | b
    if joined & Flag.FROZEN and any(flags & (Flag.MODULE | Flag.MODULE_HINT) and not flags & Flag.FROZEN
                                    for flags in (a, b)):
        joined &= ~Flag.FROZEN
    if joined & Flag.ZERO_DIM and any(flags & _SHAPED and not flags & Flag.ZERO_DIM for flags in (a, b)):
        joined &= ~Flag.ZERO_DIM
    if joined & Flag.ON_CPU and (joined & Flag.DEVICE or any(
            flags & _SHAPED and not flags & Flag.ON_CPU for flags in (a, b))):
        joined &= ~Flag.ON_CPU
    if joined & STOPPED_ON_A_GPU:
        for bit in (Flag.CPU_RUNS_ONLY, Flag.CPU_INTO_OWN_LAYER):
            if joined & bit and any(flags & _SHAPED and not flags & bit for flags in (a, b)):
                joined &= ~bit
        if a & Flag.CPU_RUNS_ONLY != b & Flag.CPU_RUNS_ONLY and not any(
                flags & Flag.DEVICE and not flags & Flag.CPU_RUNS_ONLY for flags in (a, b)):
            # The side only runs without a GPU compute is on the CPU wherever it exists: the join
            # may be on a GPU only where the other side may be.
            joined &= ~Flag.DEVICE
    return joined


_SHAPED = Flag.TENSOR | Flag.GRAD | Flag.UNKNOWN_ARG | Flag.MODULE | Flag.MODULE_HINT


def _blank(value: Value) -> bool:
    """Whether `value` adds nothing to a merge: EMPTY's compared fields, no element, no callee."""
    return (not value.flags and value.elem is None and value.items is None and not value.objs
            and value.device_if is None and value.callee is None)


def merge_all(values: Iterable[Value]) -> Value:
    out = EMPTY
    for value in values:
        out = out.merge(value)
    return out
