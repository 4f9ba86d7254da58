"""What the interpreter learned about one module: the rules' only view of the code."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from .imports import ImportTable
from .values import EMPTY, Value


@dataclass(frozen=True)
class AliasWrite:
    """A write to one of two names sharing memory that is followed by a read of the other (DET105)."""

    write: cst.CSTNode  # the written name
    alias: str  # the written name's text
    source: str  # the other side, whose later read sees the write
    origin: cst.Call  # the call that made the sharing name (`t.numpy()`, `torch.from_numpy(a)`)
    kind: str  # "numpy" or "from_numpy": which side the origin made
    # The write went through the original side (`b = a.numpy(); a.add_(1); print(b)`): the other side
    # is the name the origin made.
    through_source: bool = False


@dataclass(frozen=True)
class ConvertingCall:
    """A call that turns its tensor arguments into ndarrays (DET106)."""

    call: cst.Call
    function: str  # as written: "np.asarray", "ax.scatter"
    kind: str  # "convert"; "reduce" (a single tensor is not converted, a list is); "scalar" (a 0-dim tensor is)


@dataclass(frozen=True)
class ArrayHandover:
    """A call that hands an ndarray argument over to torch (DET108): `torch.from_numpy(a)`,
    `pack_padded_sequence(x, lengths)`; `position` and `keywords` say which argument."""

    call: cst.Call
    function: str  # as written
    kind: str  # "array" (takes nothing but an ndarray), "data" (lists too), "dlpack" (`__dlpack__` objects)
    position: int
    keywords: frozenset[str]


@dataclass(frozen=True)
class DtypeClash:
    """A float64 tensor meeting float32 parameters or a float32 operand (DET109)."""

    call: cst.CSTNode  # the module call, `@` operation or function call that raises
    operand: cst.BaseExpression  # the float64 operand
    other: str  # what it meets, for the message: "nn.Linear 'model'", "the float32 operand"
    kind: str  # "module", "matmul" or "loss"
    layer: str | None = None  # the torch.nn class of the module, where known


@dataclass
class Facts:
    """What the interpreter learned; the rules' only view of the code."""

    imports: ImportTable
    values: dict[cst.CSTNode, Value] = field(default_factory=dict)
    # Nodes evaluated with grad off, and with grad on: a function's contexts may differ
    # (analysis/summaries.py); grad is off at a node only where no evaluation had it on.
    grad_disabled: set[cst.CSTNode] = field(default_factory=set)
    grad_enabled_seen: set[cst.CSTNode] = field(default_factory=set)
    method_calls: dict[str, list[cst.Call]] = field(default_factory=lambda: defaultdict(list))
    attributes: dict[str, list[cst.Attribute]] = field(default_factory=lambda: defaultdict(list))
    # Attribute -> the expression it is the direct child of (call, subscript, attribute, ...).
    parents: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    stores: set[cst.CSTNode] = field(default_factory=set)  # assignment / augmented targets
    self_names: set[cst.CSTNode] = field(default_factory=set)  # `self`/`cls` references
    # Root of a line holding one statement (an Expr's value, an assignment target) -> that line;
    # fixes that rewrite a whole statement (DET103's `with torch.no_grad():`) start from here.
    statement_lines: dict[cst.CSTNode, cst.SimpleStatementLine] = field(default_factory=dict)
    converting_calls: list[ConvertingCall] = field(default_factory=list)
    # `torch.from_numpy(a)`, `torch.tensor(a)`, ...: torch taking an ndarray over (DET108); the
    # kind is "array" where only an ndarray is accepted, "data" where lists are too.
    array_handovers: list[ArrayHandover] = field(default_factory=list)
    alias_writes: dict[cst.CSTNode, AliasWrite] = field(default_factory=dict)
    dtype_clashes: dict[cst.CSTNode, DtypeClash] = field(default_factory=dict)  # operand -> clash
    # Node -> index of the module statement it is in, for the nodes rules report on (evaluated
    # expressions, attribute names, written names): positions then need that statement only.
    top_statements: dict[cst.CSTNode, int] = field(default_factory=dict)
    # The module itself: what fixes that look at later uses of a value walk (see array_uses),
    # and that walk's index of the module, built on first use.
    module: cst.Module | None = None
    array_tree: object | None = field(default=None, repr=False)
    # Whether the program may build its factories' tensors off the CPU (analysis/placement.py):
    # asked only where a rule would rely on ON_CPU, since it reads the project's text.
    default_device_may_move: Callable[[], bool] = field(default=lambda: False, repr=False)

    def value_of(self, node: cst.CSTNode) -> Value:
        return self.values.get(node, EMPTY)

    def grad_enabled_at(self, node: cst.CSTNode) -> bool:
        return node not in self.grad_disabled or node in self.grad_enabled_seen
