"""Frozen modules: a model whose parameters were all set `requires_grad=False`.

A frozen module's output requires grad only if its input does (a feature extractor, a teacher, a
model loaded for inference), so `.numpy()` on it runs. A module with no parameters at all
(`nn.ReLU()`, `nn.MSELoss()`: semantics.PARAMETER_FREE_MODULES) is frozen from the moment it is made
(calls.py). The idioms recognised, on a module held by a name:

    for p in model.parameters():            # or: for _, p in model.named_parameters()
        p.requires_grad = False             # or: p.requires_grad_(False), at the loop body's top
    model.requires_grad_(False)
    emb.weight.requires_grad = False        # a layer whose one parameter is its weight (WEIGHT_ONLY_MODULES)
    emb = nn.Embedding.from_pretrained(v)   # frozen unless `freeze=False` (FROZEN_LOADERS)

A module class of the file that can hold parameters only in fields its `__init__` sets
(`class_body_adds_no_parameters`), whose fields hold no parameters when it is called
(calls.py), is frozen as well: a positional encoding of a buffer and a dropout.

Anything that may give the module parameters with grad again thaws it: `requires_grad = True` (or
a conditional assignment) in such a loop, `model.requires_grad_()`, an assignment to an attribute
or item on the module or below it (`model.fc = nn.Linear(...)`, the transfer-learning idiom;
`model[-1] = ...`; `model.fc.weight.requires_grad = True`), and `model.append(...)`-like calls.
A freeze is a must-fact: joined with a module that is not frozen, the result is not
(`Value.merge`).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from .semantics import LIBRARY_MODULE_BASES
from .syntax import descendants, literal_bool

PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters"})
# torch.nn layers whose only parameter is `weight` (checked on torch 2.13 with named_parameters()).
WEIGHT_ONLY_MODULES = frozenset({"Embedding", "EmbeddingBag", "PReLU"})
# Loaders whose module is frozen unless `freeze=False` is passed (torch 2.13's default is True).
FROZEN_LOADERS = frozenset({"torch.nn.Embedding.from_pretrained", "torch.nn.EmbeddingBag.from_pretrained"})
# Calls in a class body that give its instances parameters other than through `self.x = ...` fields.
_PARAMETER_MAKERS = frozenset({"Parameter", "register_parameter", "add_module", "register_module",
                               "setattr", "__setattr__", "requires_grad_", "ParameterList", "ParameterDict"})
_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
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


def freezes_self(node: cst.FunctionDef) -> bool:
    """A method whose body, at its top, freezes its own module (`for p in self.parameters():
    p.requires_grad = False`, `self.requires_grad_(False)`) and nothing in it thaws it: calling
    it freezes the instance, as those statements freeze a name."""
    if any(_may_thaw(inner) for inner in descendants(node.body)):
        return False
    froze = False
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for statement in body:
        found: tuple[str, bool] | None = None
        if isinstance(statement, cst.For):
            found = loop_freeze(statement)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    found = call_freeze(small.value) or found
        if found is not None and found[0] == "self":
            if not found[1]:
                return False
            froze = True
    return froze


def _may_thaw(node: cst.CSTNode) -> bool:
    """`x.requires_grad = <not False>` or `x.requires_grad_(<not False>)` anywhere."""
    if isinstance(node, cst.Assign):
        return any(isinstance(target.target, cst.Attribute) and target.target.attr.value == "requires_grad"
                   for target in node.targets) and literal_bool(node.value) is not False
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "requires_grad_":
        return not node.args or literal_bool(node.args[0].value) is not False
    return False


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


def weight_freeze(node: cst.Assign) -> str | None:
    """`emb.weight.requires_grad = False`: the name `emb` (frozen if it holds a WEIGHT_ONLY_MODULES layer)."""
    if len(node.targets) != 1 or literal_bool(node.value) is not False:
        return None
    target = node.targets[0].target
    if not (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"):
        return None
    weight = target.value
    if (isinstance(weight, cst.Attribute) and weight.attr.value == "weight"
            and isinstance(weight.value, cst.Name)):
        return weight.value.value
    return None


def loader_freezes(call: cst.Call) -> bool:
    """`nn.Embedding.from_pretrained(v)` (or `freeze=True`): a frozen layer; not with any other `freeze=`."""
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "freeze":
            return literal_bool(arg.value) is True
    if any(arg.star for arg in call.args):
        return False
    return len(positional) < 2 or literal_bool(positional[1].value) is True  # `from_pretrained(v, False)`


def is_module_base(qualified: str | None) -> bool:
    """`nn.Module` itself (or a library's parameter-free subclass of it, `pl.LightningModule`): a
    base that gives a subclass no parameters."""
    return qualified in _MODULE_BASES or qualified in LIBRARY_MODULE_BASES


def class_body_adds_no_parameters(node: cst.ClassDef, resolve: Callable[[cst.BaseExpression], str | None],
                                  local: Callable[[str], bool]) -> bool:
    """Whether an nn.Module subclass (of bases that add none) can hold parameters only in the
    fields its `__init__` sets, each from a value the analysis describes.

    No call in its body makes or registers a parameter or a submodule another way
    (`nn.Parameter`, `register_parameter`, `add_module`, `setattr`), no class attribute is made
    by a call, only `__init__` assigns attributes of `self`, and each value it assigns them is
    not a call, or a call of torch (`nn.Dropout(p)`, `torch.zeros(n)`) or of a name of the file
    (`local`): a library's or another file's object, which may be a model, is not described.
    """
    for statement in node.body.body:
        if isinstance(statement, cst.SimpleStatementLine) and any(
                isinstance(small, (cst.Assign, cst.AnnAssign)) and isinstance(small.value, cst.Call)
                for small in statement.body):
            return False
    for inner in descendants(node):
        if isinstance(inner, cst.Call) and _call_name(inner.func) in _PARAMETER_MAKERS:
            return False
        if isinstance(inner, cst.FunctionDef) and not _function_adds_no_parameters(inner, resolve, local):
            return False
    return True


def _function_adds_no_parameters(function: cst.FunctionDef, resolve: Callable[[cst.BaseExpression], str | None],
                                 local: Callable[[str], bool]) -> bool:
    """`__init__` assigns `self.x` only values the analysis describes; another method assigns none."""
    in_init = function.name.value == "__init__"
    for inner in descendants(function):
        if isinstance(inner, cst.Assign):
            if not any(_is_self_attribute(target.target) for target in inner.targets):
                continue
            if not in_init or isinstance(inner.value, cst.Call) and not _described_call(inner.value.func, resolve, local):
                return False
        elif isinstance(inner, (cst.AnnAssign, cst.AugAssign)) and not in_init and _is_self_attribute(inner.target):
            return False
    return True


def _call_name(func: cst.BaseExpression) -> str | None:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None


def _is_self_attribute(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"


def _described_call(func: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], str | None],
                    local: Callable[[str], bool]) -> bool:
    qualified = resolve(func)
    if qualified is not None:
        return qualified == "torch" or qualified.startswith("torch.")
    return isinstance(func, cst.Name) and local(func.value)
