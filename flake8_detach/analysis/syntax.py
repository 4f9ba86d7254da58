"""Small questions about syntax that several parts of the walk ask (no semantics here)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

from .semantics import PROPERTY_DECORATORS


def all_params(params: cst.Parameters) -> list[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def string_value(node: cst.SimpleString) -> str | bytes:
    """The value of a string literal, as libcst's ``evaluated_value`` gives it (and raises).

    That property runs ``ast.literal_eval``, which compiles the text and leaves a reference cycle
    behind, for every string of the file; a string with no escapes to decode is its own text.
    """
    text = node.value
    quote = text[-1]
    start = text.index(quote)
    prefix = text[:start].lower()
    if prefix in ("", "r", "u") and (prefix == "r" or "\\" not in text) and "\r" not in text:
        width = 3 if text[start:start + 3] == quote * 3 and len(text) - start >= 6 else 1
        return text[start + width:len(text) - width]
    return node.evaluated_value


def dotted(node: cst.BaseExpression, through_calls: bool = True) -> str | None:
    """`a.b.c` as written, or None. A call stands for its function; with ``through_calls`` False
    only names and attributes count (`self.fc.weight`, not `make().weight`)."""
    # Exact types: `isinstance` against libcst's classes goes through `abc` when it fails.
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        base = dotted(node.value, through_calls)
        return None if base is None else f"{base}.{node.attr.value}"
    if type(node) is cst.Call and through_calls:
        return dotted(node.func)
    return None


def decorator_name(decorator: cst.Decorator) -> str | None:
    return dotted(decorator.decorator)


def is_static(node: cst.FunctionDef) -> bool:
    return any(decorator_name(d) == "staticmethod" for d in node.decorators)


def is_property(node: cst.FunctionDef) -> bool:
    return any(decorator_name(d) in PROPERTY_DECORATORS for d in node.decorators)


def is_classmethod(node: cst.FunctionDef) -> bool:
    return any(decorator_name(d) == "classmethod" for d in node.decorators)


def is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def literal_bool(node: cst.BaseExpression) -> bool | None:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def constant_truth(test: cst.BaseExpression) -> bool | None:
    """The truth of a test written as a constant (`if True:`, `if 0:`, `if not False:`): the
    branch that runs whatever the program does; None for any other test."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = constant_truth(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.Integer):
        return test.evaluated_value != 0
    return literal_bool(test)


def move_argument(call: cst.Call) -> cst.Arg | None:
    """The argument that says where `.to(...)` moves: the first positional one (`.to(device)`,
    `.to("cuda")`, `.to(torch.float64)`: a device or a dtype) or `device=`, whichever comes first."""
    return next((arg for arg in call.args if arg.keyword is None or arg.keyword.value == "device"), None)


def keyword_is_false(node: cst.Call, keyword: str | None) -> bool:
    """Whether the call passes a literal False (as `keyword=`, or first positional for None)."""
    for arg in node.args:
        name = arg.keyword.value if arg.keyword is not None else None
        if name == keyword:
            return literal_bool(arg.value) is False
    return False


def receiver_name(call: cst.Call) -> str | None:
    """`x` in `x.method(...)`, or None."""
    func = call.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        return func.value.value
    return None


# Basic indexing gives a view of an array or a tensor; advanced indexing copies. The two answers
# below differ on purpose: a diagnostic needs a sure view, a safe fix must fear a possible one.

def surely_a_view(element: cst.SubscriptElement) -> bool:
    """A slice, an integer, `...` or `None`: indexing that surely gives a view, not a copy (what a
    diagnostic may claim: DET105)."""
    index = element.slice
    if isinstance(index, cst.Slice):
        return True
    if not isinstance(index, cst.Index):
        return False
    value = index.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.Ellipsis)) or (isinstance(value, cst.Name) and value.value == "None")


def may_be_a_view(element: cst.SubscriptElement) -> bool:
    """Indexing that may give a view (a slice, an integer, `...`, `None`, or a name that may be an
    integer): what a fix must assume to stay safe (array_uses)."""
    index = element.slice
    if isinstance(index, cst.Slice):
        return True
    if not isinstance(index, cst.Index):
        return False
    value = index.value
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    if isinstance(value, cst.Tuple):
        return all(_is_scalar_like(e.value) for e in value.elements)
    return _is_scalar_like(value)


def _is_scalar_like(value: cst.BaseExpression) -> bool:
    return isinstance(value, (cst.Integer, cst.Ellipsis, cst.Name, cst.Attribute, cst.BinaryOperation,
                              cst.UnaryOperation, cst.Call))


_FIELDS: dict[type, tuple[str, ...]] = {}
_IS_NODE: dict[type, bool] = {}  # per type of a field's value: whether it is a libcst node


def descendants(root: cst.CSTNode, skip: tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
    """Every node under `root` (itself included), in no particular order, not entering nodes of
    the `skip` types below the root. Reads the dataclass fields: about 3x faster than libcst's
    `children` (which rebuilds each node's child list), for questions that need no order. Whether
    a value is a node is asked once per type: `isinstance` against libcst's abstract base costs a
    call into `abc` for every value that is not one (strings, None, sentinels)."""
    is_node = _IS_NODE
    skipped: dict[type, bool] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        kind = type(node)
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(field.name for field in dataclasses.fields(kind))
        for name in names:
            value = getattr(node, name)
            value_kind = type(value)
            if value_kind is tuple or value_kind is list:
                for item in value:
                    item_kind = type(item)
                    found = is_node.get(item_kind)
                    if found is None:
                        found = is_node[item_kind] = issubclass(item_kind, cst.CSTNode)
                    if found and not _skips(item_kind, skip, skipped):
                        stack.append(item)
                continue
            found = is_node.get(value_kind)
            if found is None:
                found = is_node[value_kind] = issubclass(value_kind, cst.CSTNode)
            if found and not _skips(value_kind, skip, skipped):
                stack.append(value)


def returns_no_value(function: cst.FunctionDef) -> bool:
    """Whether every path of ``function`` gives None (or a template's `...`): no ``return`` with
    a value and no ``yield`` in its own body (nested functions, lambdas and classes are theirs).
    A template's ``def forward(self, x): ...``, ``return ...`` or ``raise NotImplementedError``."""
    for node in descendants(function.body, skip=(cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        if type(node) is cst.Return and node.value is not None and not is_none(node.value) \
                and type(node.value) is not cst.Ellipsis:  # `return ...`: a template's placeholder
            return False
        if type(node) is cst.Yield:
            return False
    return True


def _skips(kind: type, skip: tuple[type, ...], known: dict[type, bool]) -> bool:
    if not skip:
        return False
    found = known.get(kind)
    if found is None:
        found = known[kind] = issubclass(kind, skip)
    return found


@dataclasses.dataclass(frozen=True)
class EntryRewrite:
    """A loop's `d[k] = ...` that replaces every entry of `d` (`rewrites_every_entry`)."""

    write: cst.Subscript
    container: str
    mapping: bool  # walked through `.items()` or `.keys()`: `d` is a dict, whatever else it seemed


def rewrites_every_entry(loop: cst.For) -> EntryRewrite | None:
    """The write `d[k] = ...` of a loop that replaces every entry of the container `d` it walks, or None.

    `for k, v in d.items(): d[k] = f(v)` (also `for k in d`, `d.keys()`, `enumerate(d)` and
    `range(len(d))` over a list): when the loop ends normally each entry holds what the body
    wrote, whatever it held before. Only with the write a statement of the body itself (not under
    an `if`), no `break` or `continue` in the body that could skip it, and `d` not rebound there.
    """
    keyed = _walked_container(loop.iter, loop.target)
    if keyed is None:
        return None
    container, key, mapping = keyed
    written: cst.Subscript | None = None
    for statement in loop.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Subscript) and _entry_written(target) == (container, key):
                    written = written or target
    if written is None:
        return None
    if any(isinstance(node, (cst.Break, cst.Continue)) for node in _body_nodes(loop.body)):
        return None
    return None if rebinds(loop.body, {container, key}) else EntryRewrite(written, container, mapping)


def _entry_written(node: cst.BaseExpression) -> tuple[str, str] | None:
    """(container, key) of `c[k]` with both plain names."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1):
        return None
    index = node.slice[0].slice
    if not (isinstance(index, cst.Index) and isinstance(index.value, cst.Name)):
        return None
    return node.value.value, index.value.value


def slot_name(node: cst.BaseExpression) -> str | None:
    """`c[k]` with both plain names: the name of its slot ("c[k]"), as loop_slots keeps it."""
    entry = _entry_written(node)
    return None if entry is None else _slot(entry)


def _slot(entry: tuple[str, str]) -> str:
    return f"{entry[0]}[{entry[1]}]"


def _body_nodes(body: cst.BaseSuite) -> Iterator[cst.CSTNode]:
    """The nodes of a loop's body that run in it: nested definitions apart."""
    return descendants(body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda))


def rebinds(body: cst.BaseSuite, names: set[str]) -> bool:
    """Whether a loop's body binds one of `names` again (an assignment, a nested `for`, `as`, `:=`)."""
    for node in _body_nodes(body):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName, cst.NamedExpr)):
            bound = getattr(node, "target", None) or getattr(node, "name", None)
            if isinstance(bound, (cst.Name, cst.Tuple, cst.List, cst.StarredElement)) and any(
                    isinstance(name, cst.Name) and name.value in names
                    for name in descendants(bound, skip=(cst.Attribute, cst.Subscript))):
                return True
    return False


def loop_slots(loop: cst.For) -> dict[str, str]:
    """The slots `c[k]` a loop's body writes, with `k` a name its target binds (slot name ->
    container name): within one iteration `c[k]` is one entry, so a write replaces what the
    iteration wrote before (`out[i] = t` ... `out[i] = out[i].cpu().numpy()`). Neither `c` nor
    `k` may be rebound in the body (nor `c[k]` written by a nested function)."""
    keys = {name.value for name in descendants(loop.target, skip=(cst.Attribute, cst.Subscript))
            if isinstance(name, cst.Name)}
    slots: dict[str, str] = {}
    used: set[str] = set()
    for node in _body_nodes(loop.body):
        entry = _entry_written(node.target) if isinstance(node, cst.AssignTarget) else None
        if entry is not None and entry[1] in keys:
            slots[_slot(entry)] = entry[0]
            used.add(entry[1])
    if not slots:
        return slots
    if rebinds(loop.body, set(slots.values()) | used) or any(
            isinstance(node, (cst.Global, cst.Nonlocal)) for node in _body_nodes(loop.body)):
        return {}
    return slots


def _walked_container(iterated: cst.BaseExpression,
                      target: cst.BaseAssignTargetExpression) -> tuple[str, str, bool] | None:
    """(container, key, through `.items()`/`.keys()`) of `for key[, value] in` a walk over every key
    or index of a container."""
    key = target.elements[0].value if isinstance(target, cst.Tuple) and len(target.elements) == 2 else target
    if not isinstance(key, cst.Name):
        return None
    if not isinstance(iterated, cst.Call):
        return (iterated.value, key.value, False) if isinstance(iterated, cst.Name) and key is target else None
    func, args = iterated.func, iterated.args
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and not args:
        method = func.attr.value
        if method == "items" and key is not target or method == "keys" and key is target:
            return func.value.value, key.value, True
        return None
    if not isinstance(func, cst.Name) or len(args) != 1 or args[0].keyword is not None or args[0].star:
        return None
    walked = args[0].value
    if func.value == "enumerate" and key is not target and isinstance(walked, cst.Name):
        return walked.value, key.value, False
    if func.value == "range" and key is target and isinstance(walked, cst.Call) and is_name(walked.func, "len") \
            and len(walked.args) == 1 and isinstance(walked.args[0].value, cst.Name):
        return walked.args[0].value.value, key.value, False
    return None


def is_name(node: object, name: str) -> bool:
    """Whether the node is the plain name `name`."""
    return isinstance(node, cst.Name) and node.value == name
