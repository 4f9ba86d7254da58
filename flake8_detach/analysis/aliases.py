"""Memory aliases: names that share storage with another name (DET105).

`a = t.numpy()` and `t = torch.from_numpy(a)` make two names of one storage on the CPU. A write
through either of them (augmented assignment, item assignment, an in-place method, `out=`) is
recorded as pending until the other name is read again; then it is a fact for the rule. The
original side counts while it still names the object it named when the alias was made
(`b = a.numpy(); a.add_(1); print(b)`, the NumPy-bridge example of PyTorch's tutorial).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from .facts import AliasWrite
from .scopes import Alias, Env, FunctionInfo
from .syntax import all_params, dotted, surely_a_view

if TYPE_CHECKING:
    from .interpreter import Interpreter

# Calls between a tensor and `.numpy()` that keep the storage on the CPU.
_SHARING_STEPS = frozenset({"detach", "cpu", "resolve_conj", "resolve_neg"})
# Methods and attributes whose result is a view of the same storage (checked on torch 2.13 and
# NumPy 2.4: `np.shares_memory` / `Tensor.untyped_storage().data_ptr()` agree).
_VIEW_METHODS = frozenset({"permute", "view", "transpose", "swapaxes", "swapdims", "unsqueeze",
                           "squeeze", "expand", "expand_as", "view_as", "narrow", "unflatten",
                           "movedim", "moveaxis", "select", "diagonal", "detach"})
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "data"})
# `reshape` (NumPy's and torch's) returns a view when the strides allow it, a copy otherwise: it
# counts as a view only right on the fresh result of `.numpy()` / `torch.from_numpy(...)` of a
# source taken without views (contiguous; checked on torch 2.13 / NumPy 2.4: `w.T.reshape(-1)` copies).
_RESHAPE = "reshape"
# The function forms of views: the result shares the storage of the first argument (checked on
# torch 2.13.0 / NumPy 2.4.6 with `untyped_storage().data_ptr()` / `np.shares_memory`, on a
# tensor made by `torch.from_numpy` of a float32 array of shape (2, 4, 4, 3)).
_VIEW_FUNCTIONS = frozenset({
    "torch.permute", "torch.transpose", "torch.swapaxes", "torch.swapdims", "torch.movedim",
    "torch.moveaxis", "torch.squeeze", "torch.unsqueeze", "torch.narrow", "torch.as_strided",
    "torch.select", "torch.diagonal", "torch.t", "torch.detach",
    "numpy.transpose", "numpy.squeeze", "numpy.expand_dims", "numpy.moveaxis", "numpy.swapaxes",
})
# A view only when the strides allow it (`torch.reshape(torch.permute(t, ...), (-1,))` copies):
# counted only right on the fresh result of `.numpy()` / `torch.from_numpy(...)`, like `.reshape`.
_CONTIGUOUS_VIEW_FUNCTIONS = frozenset({"torch.reshape", "torch.flatten", "numpy.reshape", "numpy.ravel"})


def _without_views(expr: cst.BaseExpression, steps: frozenset[str] = _VIEW_METHODS,
                   resolve: Callable[[cst.BaseExpression], str | None] | None = None) -> cst.BaseExpression:
    """The expression a chain of views starts from: `from_numpy(a)` in `from_numpy(a).permute(...)[0]`
    (and in `torch.permute(from_numpy(a), ...)`, where `resolve` names the library function)."""
    while True:
        viewed = _function_view_argument(expr, resolve) if resolve is not None else None
        if viewed is not None:
            expr = viewed
        elif (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
                and (expr.func.attr.value in steps or _is_reshape_of_fresh_array(expr))):
            expr = expr.func.value
        elif (isinstance(expr, cst.Attribute) and expr.attr.value in _VIEW_ATTRIBUTES) or (
                isinstance(expr, cst.Subscript) and all(surely_a_view(element) for element in expr.slice)):
            expr = expr.value
        else:
            return expr


def _function_view_argument(expr: cst.BaseExpression,
                            resolve: Callable[[cst.BaseExpression], str | None]) -> cst.BaseExpression | None:
    """`torch.permute(x, ...)`, `np.transpose(x)`: `x`, whose storage the result shares; else None."""
    if not isinstance(expr, cst.Call) or not expr.args or expr.args[0].keyword is not None or expr.args[0].star:
        return None
    qualified = resolve(expr.func)
    first = expr.args[0].value
    if qualified in _VIEW_FUNCTIONS:
        return first
    if qualified in _CONTIGUOUS_VIEW_FUNCTIONS and _is_fresh_alias(first, resolve):
        return first
    return None


def _is_fresh_alias(expr: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], str | None]) -> bool:
    """`t.numpy()` or `torch.from_numpy(a)` of a tensor or array taken without views (contiguous)."""
    if not isinstance(expr, cst.Call):
        return False
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "numpy":
        return _is_plain_tensor(expr.func.value)
    return resolve(expr.func) == "torch.from_numpy" and bool(expr.args) and _is_plain_tensor(expr.args[0].value)


def _is_reshape_of_fresh_array(call: cst.Call) -> bool:
    """`t.numpy().reshape(2, -1)`, `torch.from_numpy(a).reshape(...)`: a view of contiguous memory.

    The receiver must be the aliasing call itself (or another such reshape) whose own source is
    taken without views: `t.T.numpy().reshape(-1)` copies, and is not an alias.
    """
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == _RESHAPE):
        return False
    receiver = call.func.value
    while (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute)
           and receiver.func.attr.value == _RESHAPE):
        receiver = receiver.func.value
    if not isinstance(receiver, cst.Call):
        return False
    if isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value == "numpy":
        return _is_plain_tensor(receiver.func.value)
    return bool(receiver.args) and _is_plain_tensor(receiver.args[0].value)


def _is_plain_tensor(expr: cst.BaseExpression) -> bool:
    """A name or attribute chain reached through sharing steps and `.data` only (no view, no index)."""
    while True:
        if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
                and expr.func.attr.value in _SHARING_STEPS):
            expr = expr.func.value
        elif isinstance(expr, cst.Attribute) and expr.attr.value == "data":
            expr = expr.value
        else:
            chain = dotted(expr, through_calls=False)
            return chain is not None and not _VIEW_ATTRIBUTES.intersection(chain.split("."))


def _within(source: str, chain: str) -> bool:
    """`lin.weight` and `lin.weight.x` are within `lin.weight` (and within `lin`); `lin.weights` is not."""
    return source == chain or source.startswith(chain + ".")


class AliasTracker:
    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter

    def alias_of(self, expr: cst.BaseExpression, env: Env | None = None) -> Alias | None:
        """`t.numpy()` (through `.detach()`/`.cpu()`/`.data`) or `torch.from_numpy(a)` of a name or attribute.

        The source is a name (`t`) or an attribute chain rooted at one (`lin.weight`,
        `self.fc.weight`, `torch.from_numpy(self.buffer)`). Views keep the storage
        (`torch.from_numpy(a).permute(0, 3, 1, 2)`, `t.numpy().T`, basic slices, `.reshape` of the
        fresh result), and so does a call of a helper of this module that returns such an alias
        of its parameter (`to_torch(images)` with `def to_torch(a): return torch.from_numpy(a)`).
        """
        resolve = self.interpreter.imports.resolve
        expr = _without_views(expr, resolve=resolve)
        if not isinstance(expr, cst.Call):
            return None
        if env is not None and isinstance(expr.func, cst.Name):
            return self._helper_alias(expr, env)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "numpy":
            source, kind = _without_views(expr.func.value, _VIEW_METHODS | _SHARING_STEPS, resolve), "numpy"
        elif (self.interpreter.imports.resolve(expr.func) == "torch.from_numpy" and expr.args
                and expr.args[0].keyword is None and not expr.args[0].star):
            source, kind = _without_views(expr.args[0].value, resolve=resolve), "from_numpy"
        else:
            return None
        chain = dotted(source, through_calls=False)
        if chain is None:
            return None
        outlives = "." in chain and env is not None and self._outlives_scope(chain.split(".", 1)[0], env)
        return Alias(chain, expr, kind, outlives)

    def _outlives_scope(self, root: str, env: Env) -> bool:
        """Whether the object `root` names is seen outside the function being analysed.

        `self`, a parameter the function has not rebound, or a name the function does not bind (a
        global, a closure's): a change to its attributes is seen by the callers, so a write is a
        fact without a later read here. At module level nothing outlives: a later read is needed,
        as for plain names.
        """
        info = self.interpreter.current_function
        if info is None:
            return False
        is_parameter = root == env.self_name or root in {param.name.value for param in all_params(info.node.params)}
        scope: Env | None = env
        while scope is not None and scope is not info.env:
            if root in scope.rebound or (root in scope.vars and not is_parameter):
                return False  # a local of the function (`model = copy.deepcopy(model)` included)
            scope = scope.parent
        return True

    def _helper_alias(self, call: cst.Call, env: Env) -> Alias | None:
        found = env.lookup(call.func.value) if isinstance(call.func, cst.Name) else None
        info = found.callee if found is not None else None
        if not isinstance(info, FunctionInfo) or info.returned_alias is None:
            return None
        parameter, kind = info.returned_alias
        positional, _ = info.parameter_names()
        for index, arg in enumerate(call.args):
            bound = arg.keyword.value if arg.keyword is not None else (
                positional[index] if index < len(positional) and not arg.star else None)
            if bound == parameter and isinstance(arg.value, cst.Name):
                return Alias(arg.value.value, call, kind)
        return None

    def note_return(self, value: cst.BaseExpression, env: Env) -> None:
        """`return torch.from_numpy(a)` in a helper: its calls alias what they pass as `a`."""
        info = self.interpreter.current_function
        alias = self.alias_of(value, env)
        if info is not None and alias is not None and alias.source in info.parameter_names()[1]:
            info.primary.returned_alias = (alias.source, alias.kind)

    def note_assignment(self, target: cst.BaseExpression, value: cst.BaseExpression, env: Env) -> None:
        alias = self.alias_of(value, env)
        if alias is not None and isinstance(target, cst.Name) and target.value != alias.root:
            env.aliases[target.value] = alias

    @staticmethod
    def forget(name: str, env: Env) -> None:
        """`name` was rebound: it no longer aliases anything, and no longer is the source read later.

        Aliases of its attributes go too (`lin = other` after `w = lin.weight.numpy()`): `w` shares
        memory with the old object. An alias of the plain name stays, as it always did.
        """
        env.aliases.pop(name, None)
        env.pending_writes.pop(name, None)
        env.rebound.add(name)
        for alias_name, alias in list(env.aliases.items()):
            if alias.source.startswith(name + "."):
                del env.aliases[alias_name]
            elif alias.source == name and not alias.source_replaced:
                env.aliases[alias_name] = replace(alias, source_replaced=True)

    def forget_attribute(self, target: cst.Attribute, env: Env) -> None:
        """`lin.weight = nn.Parameter(...)` (or `lin.weight.data = ...`): arrays of the old weight no longer alias it."""
        chain = dotted(_without_views(target, frozenset()), through_calls=False)
        if chain is None or "." not in chain:
            return
        root = chain.split(".", 1)[0]
        scope: Env | None = env
        while scope is not None:
            for alias_name, alias in list(scope.aliases.items()):
                if _within(alias.source, chain):
                    del scope.aliases[alias_name]
            pending = scope.pending_writes.get(root)
            if pending:
                pending[:] = [record for record in pending if not _within(record.source, chain)]
            scope = scope.parent

    def note_write(self, written: cst.Name, env: Env) -> None:
        self.interpreter.locate(written)
        scope: Env | None = env
        while scope is not None:
            alias = scope.aliases.get(written.value)
            if alias is not None:
                record = AliasWrite(written, written.value, alias.source, alias.origin, alias.kind)
                if alias.outlives:  # `self.fc.weight`: the object is seen after this function
                    self.interpreter.facts.alias_writes.setdefault(written, record)
                else:
                    scope.pending_writes.setdefault(alias.root, []).append(record)
                return
            self._note_source_write(written, scope)
            if written.value in scope.vars:
                return
            scope = scope.parent

    @staticmethod
    def _note_source_write(written: cst.Name, scope: Env) -> None:
        """`b = a.numpy()` ... `a.add_(1)`: the write is pending until `b` is read again."""
        for alias_name, alias in scope.aliases.items():
            if alias.source == written.value and not alias.source_replaced:
                record = AliasWrite(written, written.value, alias_name, alias.origin, alias.kind, through_source=True)
                scope.pending_writes.setdefault(alias_name, []).append(record)

    def note_read(self, name: str, env: Env) -> None:
        facts = self.interpreter.facts
        scope: Env | None = env
        while scope is not None:
            writes = scope.pending_writes.pop(name, None)
            if writes:
                for record in writes:
                    facts.alias_writes.setdefault(record.write, record)
            scope = scope.parent

    def note_library_writes(self, qualified: str, node: cst.Call, env: Env) -> None:
        """`np.copyto(a, ...)`, `np.add(x, y, out=a)` and `torch.add(x, y, out=t)` write into `a`, `t`."""
        if not qualified.startswith(("numpy.", "torch.")):
            return
        for index, arg in enumerate(node.args):
            is_destination = (arg.keyword is not None and arg.keyword.value == "out") or (
                index == 0 and arg.keyword is None and qualified == "numpy.copyto"
            )
            if is_destination and isinstance(arg.value, cst.Name):
                self.note_write(arg.value, env)
