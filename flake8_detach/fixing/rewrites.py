"""Fix construction shared by the rules: small libcst node rewrites that keep the layout.

Each helper returns a :class:`~flake8_detach.diagnostics.Fix` that replaces one node with a
rebuilt copy. The copy reuses the original children (and so their whitespace and comments),
which is what keeps everything outside the fixed expression byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from ..analysis.array_uses import ESCAPES, WRITTEN, array_use, line_of
from ..analysis.facts import Facts
from ..analysis.imports import ImportTable
from ..analysis.semantics import DEVICE_MOVES
from ..diagnostics import Finding, Fix

# `op=` of an augmented assignment through `.data`, and the in-place method that does the same.
_AUGMENTED_METHODS: dict[type[cst.BaseAugOp], str] = {
    cst.AddAssign: "add_",
    cst.SubtractAssign: "sub_",
    cst.MultiplyAssign: "mul_",
    cst.DivideAssign: "div_",
}


@dataclass(frozen=True)
class Sharing:
    """What a fix that makes a conversion run (where it raised) owes the array it now returns.

    On the CPU the array shares the tensor's memory. ``copy``: the array is written later, so the
    fix appends `.copy()` (else the write would silently change the tensor); ``safe`` is False
    where the array escapes the analysis (returned, stored, passed on). ``note`` ends the fix's
    description with the reason.
    """

    copy: bool = False
    safe: bool = True
    note: str = ""


NO_SHARING = Sharing()


def conversion_sharing(conversion: cst.BaseExpression, facts: Facts, copy_method: str = "copy") -> Sharing:
    """How a fix that makes ``conversion`` run must treat its result (see :class:`Sharing`)."""
    use = array_use(conversion, facts)
    if use.kind == WRITTEN:
        line = line_of(facts, use.node)
        where = f" at line {line}" if line is not None else ""
        return Sharing(True, True, f" and .{copy_method}(): {use.what}{where}, and without a copy the write "
                                   "would change the tensor on the CPU")
    if use.kind == ESCAPES:
        return Sharing(False, False, f"; unsafe: the array {use.what}; on the CPU it shares the tensor's memory, "
                                     f"so a write {use.who} would change the tensor; add .{copy_method}() if it is written")
    return NO_SHARING


@dataclass(frozen=True)
class ConversionFix(Fix):
    """A fix that repairs a `.numpy()` call by spelling out the chain (`.detach()`, `.cpu()`).

    It remembers the call so that :func:`restyle` can swap it for `.numpy(force=True)`, with
    the copy and safety that ``sharing`` asks for (`.numpy(force=True)` shares memory on the CPU too).
    """

    numpy_call: cst.Call
    sharing: Sharing = NO_SHARING


@dataclass(frozen=True)
class NoGradWrite(Fix):
    """A `.data` write rewritten as ``statement`` under `with <context>:`.

    The fixer merges such fixes on adjacent lines of one block into a single `with` block, as a
    person would write it. ``import_torch``: the context is `torch.no_grad()` and the file has
    no `torch` name yet, so applying the fix adds `import torch`.
    """

    statement: cst.SimpleStatementLine | None = None
    context: cst.Call | None = None
    import_torch: bool = False


def method_call(receiver: cst.BaseExpression, name: str, args: tuple[cst.Arg, ...] = ()) -> cst.Call:
    """`receiver.name(args)`, with libcst's default (tight) whitespace."""
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(name)), args=args)


# Expressions a method call can follow without parentheses (`x.f()`, `[a, b].f()`; not `a + b`).
_POSTFIX_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple, cst.Dict,
           cst.ListComp, cst.GeneratorExp, cst.SimpleString)


def chained(expr: cst.BaseExpression, methods: list[str]) -> cst.BaseExpression:
    """`expr.m1().m2()...`, parenthesising `expr` where the grammar needs it."""
    if not isinstance(expr, _POSTFIX_ATOMS) and not expr.lpar:
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    for method in methods:
        expr = method_call(expr, method)
    return expr


def _receiver(call: cst.Call) -> cst.BaseExpression | None:
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def _method(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    return None


def _fresh_line_dot(dot: cst.Dot) -> cst.Dot:
    """The dot of a chain link moved to its own line: same indentation, no comment."""
    before = dot.whitespace_before
    if isinstance(before, cst.ParenthesizedWhitespace):
        return dot.with_changes(
            whitespace_before=cst.ParenthesizedWhitespace(indent=before.indent, last_line=before.last_line)
        )
    return dot


def insert_method_before(call: cst.Call, method: str) -> cst.Call:
    """`base.m(args)` -> `base.<method>().m(args)`.

    In a chain split over lines the inserted link takes the line (and any comment) of `.m`,
    and `.m` moves to a new line with the same indentation, so the layout stays a chain.
    """
    func = call.func
    assert isinstance(func, cst.Attribute)
    inserted = cst.Call(func=cst.Attribute(value=func.value, attr=cst.Name(method), dot=func.dot))
    return call.with_changes(func=func.with_changes(value=inserted, dot=_fresh_line_dot(func.dot)))


def insert_detach(numpy_call: cst.Call, sharing: Sharing = NO_SHARING) -> Fix | None:
    """DET101: `.detach()` before the first device move of the chain, else before `.numpy()`.

    `out.to(dev).cpu().numpy()` -> `out.detach().to(dev).cpu().numpy()`; with ``sharing.copy``
    the array is copied too (`... .numpy().copy()`), and ``sharing.safe`` says whether it is safe.
    """
    target = numpy_call
    while True:
        receiver = _receiver(target)
        if _method(receiver) not in DEVICE_MOVES:
            break
        assert isinstance(receiver, cst.Call)
        target = receiver
    if not isinstance(target.func, cst.Attribute):
        return None
    description = "insert .detach() before the conversion" + sharing.note
    detached = insert_method_before(target, "detach")
    if not sharing.copy:
        return ConversionFix(target, detached, sharing.safe, description, numpy_call, sharing)
    fixed = detached if target is numpy_call else numpy_call.deep_replace(target, detached)
    assert isinstance(fixed, cst.Call)
    return ConversionFix(numpy_call, method_call(fixed, "copy"), sharing.safe, description, numpy_call, sharing)


def insert_cpu(numpy_call: cst.Call, sharing: Sharing = NO_SHARING) -> Fix | None:
    """DET104: `.cpu()` right before `.numpy()` (so after any `.detach()`).

    Safe either way: on a GPU `.cpu()` copies, and on the CPU the original ran and shared memory
    the same way. ``sharing`` is what the `force` style owes when `.numpy(force=True)` also
    detaches (the call needs DET101's fix too).
    """
    if not isinstance(numpy_call.func, cst.Attribute):
        return None
    fixed = insert_method_before(numpy_call, "cpu")
    return ConversionFix(numpy_call, fixed, True, "insert .cpu() before .numpy()", numpy_call, sharing)


def force_numpy(numpy_call: cst.Call, sharing: Sharing = NO_SHARING) -> Fix:
    """`.numpy()` -> `.numpy(force=True)`, which detaches and copies to the CPU itself.

    It copies off a GPU only: on the CPU the array still shares the tensor's memory, so
    ``sharing`` adds `.copy()` where the array is written, and unsafety where it escapes.
    """
    true = cst.Name("True")
    args = list(numpy_call.args)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "force":
            args[index] = arg.with_changes(value=true)
            break
    else:
        force = cst.Arg(
            value=true,
            keyword=cst.Name("force"),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
            ),
        )
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(force)
    forced: cst.Call = numpy_call.with_changes(args=args)
    if sharing.copy:
        forced = method_call(forced, "copy")
    return Fix(numpy_call, forced, sharing.safe, "pass force=True to .numpy()" + sharing.note)


def restyle(finding: Finding, style: str) -> Finding:
    """The finding with its conversion fix written in ``style`` ("chain" leaves it as built)."""
    fix = finding.fix
    if style == "force" and isinstance(fix, ConversionFix):
        return Finding(finding.code, finding.node, finding.message, force_numpy(fix.numpy_call, fix.sharing),
                       finding.related)
    return finding


def detach_before_move(detach_call: cst.Call) -> Fix | None:
    """DET102: `x.cpu(...).detach()` -> `x.detach().cpu(...)`, arguments and layout kept.

    The two methods trade places; each dot keeps its position, so a chain split over lines
    keeps its line breaks.
    """
    move = _receiver(detach_call)
    if not (isinstance(move, cst.Call) and isinstance(move.func, cst.Attribute)):
        return None
    assert isinstance(detach_call.func, cst.Attribute)
    base = move.func.value
    detach_first = detach_call.with_changes(
        func=detach_call.func.with_changes(value=base, dot=move.func.dot), lpar=(), rpar=()
    )
    swapped = move.with_changes(
        func=move.func.with_changes(value=detach_first, dot=detach_call.func.dot),
        lpar=detach_call.lpar,
        rpar=detach_call.rpar,
    )
    return Fix(detach_call, swapped, True, f"call .detach() before .{move.func.attr.value}()")


# What `x.data.<name>` reads is the same on `x` itself: the tensor's metadata, never its grad state.
_METADATA = frozenset({"dtype", "shape", "device", "is_cuda", "ndim", "layout", "size", "dim", "numel",
                       "nelement", "element_size", "stride", "get_device", "is_contiguous"})


def data_to_detach(data: cst.Attribute, safe: bool, facts: Facts | None = None) -> Fix:
    """DET103 read: `x.data` -> `x.detach()` (same storage, but autograd sees the sharing).

    Where the chain detaches anyway or reads metadata, the `.data` is simply dropped:
    `x.data.detach()`, `x.detach().data` and `x.data.cpu().detach()` lose it (never
    `.detach().detach()`), and so does `x.data.dtype` (`x.dtype`, the same answer). ``safe``:
    the rule's judgement of the chain (a kept alias, `a = x.data.detach()`, is not); reading
    metadata is always safe.
    """
    moved = _detach_after_moves(data, facts)
    if moved is not None:  # `x.data.cpu().detach()` -> `x.detach().cpu()` at once, DET102's order
        detach_call, fixed = moved
        return Fix(detach_call, fixed, safe, "drop the redundant .data and detach before the move")
    if _method(data.value) == "detach" or _detached_later(data, facts) or _reads_metadata(data, facts):
        return Fix(data, _parenthesized_like(data.value, data), safe or _reads_metadata(data, facts),
                   "drop the redundant .data")
    call = cst.Call(
        func=cst.Attribute(value=data.value, attr=cst.Name("detach"), dot=data.dot),
        lpar=data.lpar,
        rpar=data.rpar,
    )
    return Fix(data, call, safe, "replace .data with .detach()")


def _detach_after_moves(data: cst.Attribute, facts: Facts | None) -> tuple[cst.Call, cst.Call] | None:
    """`x.data.cpu().detach()`: the `.detach()` call, and the chain rewritten as `x.detach().cpu()`.

    Dropping only the `.data` would leave `x.cpu().detach()`, which DET102 then reorders in a
    second pass: one fix writes the final form, each link keeping its arguments and its dot.
    """
    if facts is None or data.lpar:
        return None
    moves: list[cst.Call] = []
    node: cst.BaseExpression = data
    while True:
        attr = facts.parents.get(node)
        call = facts.parents.get(attr) if isinstance(attr, cst.Attribute) else None
        if not (isinstance(call, cst.Call) and isinstance(attr, cst.Attribute) and call.func is attr
                and attr.value is node and not attr.lpar):
            return None
        if attr.attr.value == "detach":
            if call.args or not moves:
                return None
            break
        if attr.attr.value not in DEVICE_MOVES or call.lpar:
            return None
        moves.append(call)
        node = call
    assert isinstance(call.func, cst.Attribute)
    dots = [data.dot] + [move.func.dot for move in moves if isinstance(move.func, cst.Attribute)] + [call.func.dot]
    # One dot fewer than before: the one dropped is `.detach()`'s, unless a comment sits there.
    kept = dots[1:] if "#" in cst.Module([]).code_for_node(call.func.dot) else dots[:-1]
    rebuilt: cst.BaseExpression = cst.Call(func=cst.Attribute(value=data.value, attr=cst.Name("detach"), dot=kept[0]))
    for move, dot in zip(moves, kept[1:]):
        assert isinstance(move.func, cst.Attribute)
        rebuilt = move.with_changes(func=move.func.with_changes(value=rebuilt, dot=dot))
    assert isinstance(rebuilt, cst.Call)
    return call, rebuilt.with_changes(lpar=call.lpar, rpar=call.rpar)


def _detached_later(node: cst.BaseExpression, facts: Facts | None) -> bool:
    """Whether the chain on ``node`` calls `.detach()`, after device moves only (`.cpu().detach()`)."""
    while facts is not None:
        attr = facts.parents.get(node)
        call = facts.parents.get(attr) if isinstance(attr, cst.Attribute) else None
        if not (isinstance(call, cst.Call) and call.func is attr and isinstance(attr, cst.Attribute)):
            return False
        if attr.attr.value == "detach":
            return not call.args
        if attr.attr.value not in DEVICE_MOVES:
            return False
        node = call
    return False


def _reads_metadata(data: cst.Attribute, facts: Facts | None) -> bool:
    parent = facts.parents.get(data) if facts is not None else None
    return isinstance(parent, cst.Attribute) and parent.value is data and parent.attr.value in _METADATA


def _parenthesized_like(node: cst.BaseExpression, like: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` with the parentheses of ``like`` (the node it replaces), when it has any."""
    return node.with_changes(lpar=like.lpar, rpar=like.rpar) if like.lpar else node


def data_clone_detach(data: cst.Attribute, facts: Facts) -> Fix | None:
    """DET103 read: `x.data.clone().detach()` -> `x.detach().clone()`, never `.detach().clone().detach()`."""
    clone_attr = facts.parents.get(data)
    clone = facts.parents.get(clone_attr) if isinstance(clone_attr, cst.Attribute) else None
    if not (isinstance(clone, cst.Call) and clone.func is clone_attr and _method(clone) == "clone"):
        return None
    detach_attr = facts.parents.get(clone)
    detach = facts.parents.get(detach_attr) if isinstance(detach_attr, cst.Attribute) else None
    if not (isinstance(detach, cst.Call) and detach.func is detach_attr and _method(detach) == "detach"):
        return None
    if detach.args:
        return None
    assert isinstance(clone.func, cst.Attribute)
    detached = data_to_detach(data, True).replacement
    assert isinstance(detached, cst.BaseExpression)
    fixed = clone.with_changes(func=clone.func.with_changes(value=detached), lpar=detach.lpar, rpar=detach.rpar)
    return Fix(detach, fixed, True, "replace .data.clone().detach() with .detach().clone()")


def no_grad_context(imports: ImportTable, statement: cst.CSTNode) -> tuple[cst.Call, bool] | None:
    """`torch.no_grad()` spelled with a name bound where ``statement`` runs (`T.no_grad()`, `no_grad()`).

    Only imports that run count: not one under `if TYPE_CHECKING:`, not one in another
    function, not a top-level one below top-level code (``imports.names_at``). Returns the call
    and whether `import torch` must be added at the top for it (no usable name binds torch);
    None when the name `torch` is bound to something else there, by an import later in the
    same function (a local name, unbound before it) or by a top-level import below this
    top-level write.
    """
    names = imports.names_at(statement)
    torch_names = sorted(local for local, qualified in names.items() if qualified == "torch")
    if torch_names:
        name = "torch" if "torch" in torch_names else torch_names[0]
        return cst.Call(func=cst.Attribute(value=cst.Name(name), attr=cst.Name("no_grad"))), False
    for local, qualified in sorted(names.items()):
        if qualified == "torch.no_grad":
            return cst.Call(func=cst.Name(local)), False
    if "torch" in names or "torch" in imports.later_locals_at(statement):
        return None
    if imports.bound_at_top_level("torch"):
        return None  # imported below this top-level write: an added `import torch` would be skipped as a duplicate
    return cst.Call(func=cst.Attribute(value=cst.Name("torch"), attr=cst.Name("no_grad"))), True


# Methods whose result has the shape and dtype of their receiver (`w.data = w.data.clamp(-1, 1)`).
_SHAPE_AND_DTYPE_KEEPING = frozenset({
    "abs", "clamp", "clamp_max", "clamp_min", "clip", "clone", "contiguous", "cos", "data", "detach",
    "exp", "neg", "reciprocal", "relu", "round", "sigmoid", "sign", "sin", "sqrt", "tanh",
})
# `torch.<name>(like)` without `dtype=`: same shape and dtype as `like`.
_LIKE_FACTORIES = frozenset({"zeros_like", "ones_like", "empty_like", "rand_like", "randn_like",
                             "full_like", "clone"})

COPY_DESCRIPTION = "write into the tensor with copy_() under torch.no_grad()"
SAME_SHAPE_NOTE = " (the right-hand side has the tensor's shape and dtype)"
OTHER_SHAPE_NOTE = (
    "; unsafe: `.data =` rebinds the tensor (shape, dtype and device may change) while copy_() "
    "keeps them (it broadcasts or raises, and casts the dtype); to replace a parameter, assign a "
    "new nn.Parameter instead"
)
SHARED_STORAGE_NOTE = (
    "; `.data =` made the tensor share the right-hand side's storage (later in-place updates of "
    "either, such as a BatchNorm's running statistics, showed in both) while copy_() copies the numbers"
)


# Methods that give another dtype or device: `p.data = p.data.half()` means a new tensor, and
# copy_() would cast it back, so no copy_() fix is offered for them.
_RETYPING = frozenset({"to", "type", "half", "float", "double", "bfloat16", "int", "long", "short",
                       "char", "byte", "bool", "cuda", "cpu"})


def rebinds(tensor: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """Whether `tensor.data = value` means a new tensor, which copy_() into the old one would not give.

    A value of another dtype or device (`p.data.half()`, `.to(...)`), or a copy of the tensor
    itself (`p.data = p.data.clone()`, which gives `p` storage of its own: copy_() would be a no-op).
    """
    if changes_dtype_or_device(value):
        return True
    empty = cst.Module([])
    copied = _without_data_links(value)
    return (isinstance(copied, cst.Call) and isinstance(copied.func, cst.Attribute) and copied.func.attr.value == "clone"
            and empty.code_for_node(_without_data_links(copied.func.value)) == empty.code_for_node(tensor))


def changes_dtype_or_device(value: cst.BaseExpression) -> bool:
    """Whether the outer chain of ``value`` visibly converts its dtype or device."""
    while isinstance(value, (cst.Call, cst.Attribute)):
        if isinstance(value, cst.Call):
            if not isinstance(value.func, cst.Attribute):
                return False
            if value.func.attr.value in _RETYPING:
                return True
            value = value.func.value
        else:
            value = value.value
    return False


def _without_data_links(expression: cst.BaseExpression) -> cst.BaseExpression:
    """Drop `.data` and `.detach()` at the end of a value written under no_grad: `v.data` -> `v`.

    Under `torch.no_grad()` an in-place write or `copy_()` reads the same numbers either way, so
    the links are noise; `.clone()` stays (it guards against overlap with the target).
    """
    if isinstance(expression, cst.Attribute) and expression.attr.value == "data" and not expression.lpar:
        return _without_data_links(expression.value)
    if isinstance(expression, cst.Call) and not expression.lpar and isinstance(expression.func, cst.Attribute):
        method = expression.func.attr.value
        if method == "detach" and not expression.args:
            return _without_data_links(expression.func.value)
        if method == "clone" and not expression.args:
            receiver = _without_data_links(expression.func.value)
            return expression.with_changes(func=expression.func.with_changes(value=receiver))
    return expression


class _DropTensorData(cst.CSTTransformer):
    """`x.data` -> `x` inside a value written under no_grad, for the `.data` of tensors only."""

    def __init__(self, is_tensor_data: Callable[[cst.Attribute], bool]) -> None:
        super().__init__()
        self.is_tensor_data = is_tensor_data

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        if original_node.attr.value == "data" and self.is_tensor_data(original_node):
            return _parenthesized_like(updated_node.value, updated_node)
        return updated_node


def _written_value(value: cst.BaseExpression, is_tensor_data: Callable[[cst.Attribute], bool]) -> cst.BaseExpression:
    """The value of a write under no_grad, without its `.data` links: they change no number there."""
    cleaned = value.visit(_DropTensorData(is_tensor_data))
    assert isinstance(cleaned, cst.BaseExpression)
    return _without_data_links(cleaned)


def _args_without_data_links(
    args: Sequence[cst.Arg], is_tensor_data: Callable[[cst.Attribute], bool]
) -> list[cst.Arg]:
    return [arg.with_changes(value=_written_value(arg.value, is_tensor_data)) for arg in args]


def _keeps_shape_and_dtype(value: cst.BaseExpression, tensor: cst.BaseExpression, imports: ImportTable) -> bool:
    """Whether the file shows that ``value`` has ``tensor``'s shape and dtype."""
    target = cst.Module([]).code_for_node(tensor)
    while True:
        if cst.Module([]).code_for_node(value.with_changes(lpar=(), rpar=())) == target:
            return True
        if isinstance(value, cst.Attribute) and value.attr.value == "data":
            value = value.value
            continue
        if not isinstance(value, cst.Call):
            return False
        if any(arg.keyword is not None and arg.keyword.value == "dtype" for arg in value.args):
            return False
        qualified = imports.resolve(value.func)
        if qualified is not None and qualified.startswith("torch.") and value.args:
            if qualified.rsplit(".", 1)[1] not in _LIKE_FACTORIES or value.args[0].keyword is not None:
                return False
            value = value.args[0].value
            continue
        if not (isinstance(value.func, cst.Attribute) and value.func.attr.value in _SHAPE_AND_DTYPE_KEEPING):
            return False
        value = value.func.value


def data_write_statement(
    data: cst.Attribute, facts: Facts, is_tensor_data: Callable[[cst.Attribute], bool]
) -> tuple[cst.SimpleStatementLine, cst.BaseSmallStatement, str] | None:
    """The statement writing through ``data`` rewritten to write on the tensor itself.

    `p.data.add_(g)` -> `p.add_(g)`; `p.data = v` -> `p.copy_(v)`; `p.data[i] = v` -> `p[i] = v`;
    `p.data += v` -> `p.add_(v)`. The written values lose their trailing `.data`/`.detach()` and
    the `.data` of tensors inside them (``is_tensor_data``, the rule's judgement), which change no
    number under no_grad: `p.data = q.data.clamp(0)` -> `p.copy_(q.clamp(0))`, the statement
    fixed whole. Returns (original
    line, new small statement, what the rewrite does), or None when the write is not the whole
    statement (`y = p.data.add_(1)`), so no rewrite is offered.
    """
    statement_lines = facts.statement_lines
    parent = facts.parents.get(data)
    tensor = data.value.with_changes(lpar=data.lpar, rpar=data.rpar) if data.lpar else data.value
    if isinstance(parent, cst.Attribute):  # `p.data.add_(...)`
        call = facts.parents.get(parent)
        line = statement_lines.get(call) if isinstance(call, cst.Call) and call.func is parent else None
        if line is None:
            return None
        small = line.body[0]
        assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
        call = small.value
        assert isinstance(call.func, cst.Attribute)
        new_call = call.with_changes(func=call.func.with_changes(value=tensor), args=_args_without_data_links(call.args, is_tensor_data))
        return line, small.with_changes(value=new_call), f"call .{call.func.attr.value}() on the tensor under torch.no_grad()"
    if isinstance(parent, cst.Subscript):  # `p.data[i] = v`
        line = statement_lines.get(parent)
        if line is None or not isinstance(line.body[0], (cst.Assign, cst.AugAssign)):
            return None
        small = line.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) != 1:
            return None
        new_target = parent.with_changes(value=tensor)
        value = _written_value(small.value, is_tensor_data)
        description = "write into the tensor's elements under torch.no_grad()"
        if isinstance(small, cst.Assign):
            return line, small.with_changes(targets=[small.targets[0].with_changes(target=new_target)], value=value), description
        return line, small.with_changes(target=new_target, value=value), description
    line = statement_lines.get(data)
    if line is None:
        return None
    small = line.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:  # `p.data = v`
        if rebinds(data.value, small.value):
            return None  # copy_() would undo the new dtype or device, or keep the shared storage
        value = _written_value(small.value, is_tensor_data)
        same = _keeps_shape_and_dtype(small.value, data.value, facts.imports)
        description = COPY_DESCRIPTION + (SAME_SHAPE_NOTE if same else OTHER_SHAPE_NOTE)
        if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):  # an existing tensor, not a new one
            description += SHARED_STORAGE_NOTE
        return line, cst.Expr(method_call(tensor, "copy_", (cst.Arg(value),))), description
    if isinstance(small, cst.AugAssign) and type(small.operator) in _AUGMENTED_METHODS:
        method = _AUGMENTED_METHODS[type(small.operator)]
        value = _written_value(small.value, is_tensor_data)
        return line, cst.Expr(method_call(tensor, method, (cst.Arg(value),))), f"call .{method}() on the tensor under torch.no_grad()"
    return None


def data_chain_write_statement(
    end: cst.CSTNode, facts: Facts, is_tensor_data: Callable[[cst.Attribute], bool]
) -> tuple[cst.SimpleStatementLine, cst.BaseSmallStatement, str] | None:
    """A write through views of `.data` rewritten on the tensor: the statement whose root is
    ``end``, with the `.data` of tensors dropped (``is_tensor_data``, the rule's judgement).

    `x.data.view(3).add_(1)` -> `x.view(3).add_(1)`; `x.data.t()[0] = v` -> `x.t()[0] = v`;
    `torch.add(a, b, out=x.data)` -> `torch.add(a, b, out=x)`. None when the write is not the
    whole statement (`y = x.data.view(3).add_(1)`).
    """
    line = facts.statement_lines.get(end)
    if line is None:
        return None
    small = line.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) != 1:
        return None
    rewritten = small.visit(_DropTensorData(is_tensor_data))
    assert isinstance(rewritten, cst.BaseSmallStatement)
    return line, rewritten, "write through a view of the tensor itself under torch.no_grad()"


def wrap_in_no_grad(
    line: cst.SimpleStatementLine,
    small: cst.BaseSmallStatement,
    context: tuple[cst.Call, bool] | None,
    description: str,
) -> Fix:
    """Replace ``line`` with ``small`` under `with <context>:` (or bare when ``context`` is None).

    The comments above the line stay above the `with`; its trailing comment stays on the
    rewritten statement. Unsafe: the meaning changes where the old write was wrong.
    """
    inner = cst.SimpleStatementLine(body=[small], trailing_whitespace=line.trailing_whitespace)
    if context is None:
        return Fix(line, inner.with_changes(leading_lines=line.leading_lines), False, description)
    call, import_torch = context
    statement = cst.With(
        items=[cst.WithItem(call)],
        body=cst.IndentedBlock(body=[inner]),
        leading_lines=line.leading_lines,
    )
    if import_torch:
        description += " (adds `import torch`)"
    return NoGradWrite(line, statement, False, description, inner, call, import_torch)
