"""Frozen modules: a model whose parameters were all set `requires_grad=False`.

A frozen module's output requires grad only if its input does (a feature extractor, a teacher, a
model loaded for inference), so `.numpy()` on it runs. A module with no parameters at all
(`nn.ReLU()`, `nn.MSELoss()`: dtypes.PARAMETER_FREE_MODULES) is frozen from the moment it is made
(calls.py). The idioms recognised, on a module held by a name:

    for p in model.parameters():            # or: for _, p in model.named_parameters()
        p.requires_grad = False             # or: p.requires_grad_(False), at the loop body's top
    model.requires_grad_(False)

Anything that may give the module parameters with grad again thaws it: `requires_grad = True` (or
a conditional assignment) in such a loop, `model.requires_grad_()`, an assignment to an attribute
or item on the module or below it (`model.fc = nn.Linear(...)`, the transfer-learning idiom;
`model[-1] = ...`; `model.fc.weight.requires_grad = True`), and `model.append(...)`-like calls.
A freeze is a must-fact: joined with a module that is not frozen, the result is not
(`Value.merge`).
"""

from __future__ import annotations

import libcst as cst

from .syntax import literal_bool

PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters"})
# Module methods that give it new submodules or parameters (nn.Sequential, nn.ModuleList, nn.Module).
ADDING_METHODS = frozenset({"append", "extend", "insert", "add_module", "register_module", "register_parameter"})


def root_name(node: cst.BaseExpression) -> str | None:
    """`model` in `model`, `model.fc`, `model.fc.weight`, `model[1]`; None for anything else."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def loop_freeze(node: cst.For) -> tuple[str, bool] | None:
    """(owner, frozen) for a loop that sets `requires_grad` on a module's parameters.

    `frozen` is True only when the owner is a plain name and every iteration sets False; a loop
    that may set True, or sets False only on some parameters, thaws the owner's root name.
    """
    parameter = _parameter_target(node)
    owner = _iterated_owner(node.iter)
    if parameter is None or owner is None:
        return None
    settings = _settings(node.body, parameter)
    if not settings:
        return None
    root = root_name(owner)
    if root is None:
        return None
    frozen = (isinstance(owner, cst.Name) and all(top and value is False for top, value in settings))
    return root, frozen


def call_freeze(call: cst.Call) -> tuple[str, bool] | None:
    """(owner, frozen) for `model.requires_grad_(False)` (frozen), `model.x.requires_grad_()` or
    `model.append(nn.Linear(...))` (thawed: new parameters)."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    root = root_name(func.value)
    if root is None:
        return None
    if func.attr.value in ADDING_METHODS:
        return root, False
    if func.attr.value != "requires_grad_":
        return None
    value = literal_bool(call.args[0].value) if call.args else True
    return root, isinstance(func.value, cst.Name) and value is False


def _iterated_owner(iterable: cst.BaseExpression) -> cst.BaseExpression | None:
    if (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)
            and iterable.func.attr.value in PARAMETER_ITERATORS):
        return iterable.func.value
    return None


def _parameter_target(node: cst.For) -> str | None:
    """`p` in `for p in m.parameters()` and in `for name, p in m.named_parameters()`."""
    target = node.target
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Tuple) and len(target.elements) == 2:
        last = target.elements[1].value
        return last.value if isinstance(last, cst.Name) else None
    return None


def _settings(body: cst.BaseSuite, parameter: str) -> list[tuple[bool, bool | None]]:
    """Each `parameter.requires_grad = v` / `parameter.requires_grad_(v)` in the loop body:
    (whether it is a statement of the body's own top level, v as a literal or None)."""
    found: list[tuple[bool, bool | None]] = []
    top = set(_top_small_statements(body))
    for small in _small_statements(body):
        value = _setting(small, parameter)
        if value is not None:
            found.append((small in top, value[0]))
    return found


def _setting(small: cst.BaseSmallStatement, parameter: str) -> tuple[bool | None] | None:
    if isinstance(small, cst.Assign):
        for target in small.targets:
            if _is_requires_grad_of(target.target, parameter):
                return (literal_bool(small.value),)
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_"
                and isinstance(func.value, cst.Name) and func.value.value == parameter):
            args = small.value.args
            return (literal_bool(args[0].value) if args else True,)
    return None


def _is_requires_grad_of(target: cst.BaseExpression, parameter: str) -> bool:
    return (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"
            and isinstance(target.value, cst.Name) and target.value.value == parameter)


def _top_small_statements(body: cst.BaseSuite) -> list[cst.BaseSmallStatement]:
    if isinstance(body, cst.SimpleStatementSuite):
        return list(body.body)
    return [small for line in body.body if isinstance(line, cst.SimpleStatementLine) for small in line.body]


def _small_statements(body: cst.BaseSuite) -> list[cst.BaseSmallStatement]:
    """Every small statement in the body, nested blocks included (not nested functions)."""
    found: list[cst.BaseSmallStatement] = []
    pending: list[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.BaseSmallStatement):
            found.append(node)
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        pending.extend(node.children)
    return found
