"""Memory aliases: names that share storage with another name (DET105).

`a = t.numpy()` and `t = torch.from_numpy(a)` make two names of one storage on the CPU. A write
through one of them (augmented assignment, item assignment, an in-place method, `out=`) is
recorded as pending until the other name is read again; then it is a fact for the rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from .facts import AliasWrite
from .scopes import Alias, Env, FunctionInfo

if TYPE_CHECKING:
    from .interpreter import Interpreter

# Calls between a tensor and `.numpy()` that keep the storage on the CPU.
_SHARING_STEPS = ("detach", "cpu", "resolve_conj", "resolve_neg")
# Methods and attributes whose result is a view of the same storage (checked on torch 2.13 and
# NumPy 2.4: `np.shares_memory` / `Tensor.untyped_storage().data_ptr()` agree).
_VIEW_METHODS = frozenset({"permute", "view", "transpose", "swapaxes", "swapdims", "unsqueeze",
                           "squeeze", "expand", "expand_as", "view_as", "narrow", "unflatten",
                           "movedim", "moveaxis", "select", "diagonal", "detach"})
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "data"})


def _without_views(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The expression a chain of views starts from: `from_numpy(a)` in `from_numpy(a).permute(...)[0]`."""
    while True:
        if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
                and expr.func.attr.value in _VIEW_METHODS):
            expr = expr.func.value
        elif (isinstance(expr, cst.Attribute) and expr.attr.value in _VIEW_ATTRIBUTES) or (
                isinstance(expr, cst.Subscript) and all(_is_basic_index(element) for element in expr.slice)):
            expr = expr.value
        else:
            return expr


def _is_basic_index(element: cst.SubscriptElement) -> bool:
    """A slice, an integer, `...` or `None`: indexing that gives a view, not a copy."""
    index = element.slice
    if isinstance(index, cst.Slice):
        return True
    if not isinstance(index, cst.Index):
        return False
    value = index.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.Ellipsis)) or (isinstance(value, cst.Name) and value.value == "None")


class AliasTracker:
    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter

    def alias_of(self, expr: cst.BaseExpression, env: Env | None = None) -> Alias | None:
        """`t.numpy()` (through `.detach()`/`.cpu()`/`.data`) or `torch.from_numpy(a)` on a name.

        Views keep the storage (`torch.from_numpy(a).permute(0, 3, 1, 2)`, `t.numpy().T`, basic
        slices), and so does a call of a helper of this module that returns such an alias of
        its parameter (`to_torch(images)` with `def to_torch(a): return torch.from_numpy(a)`).
        """
        expr = _without_views(expr)
        if not isinstance(expr, cst.Call):
            return None
        if env is not None and isinstance(expr.func, cst.Name):
            return self._helper_alias(expr, env)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "numpy":
            base = expr.func.value
            while True:
                if (isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute)
                        and base.func.attr.value in _SHARING_STEPS):
                    base = base.func.value
                elif isinstance(base, cst.Attribute) and base.attr.value == "data":
                    base = base.value
                else:
                    break
            if isinstance(base, cst.Name):
                return Alias(base.value, expr, "numpy")
        elif self.interpreter.imports.resolve(expr.func) == "torch.from_numpy" and expr.args:
            source = expr.args[0].value
            if isinstance(source, cst.Name) and expr.args[0].keyword is None:
                return Alias(source.value, expr, "from_numpy")
        return None

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
            info.returned_alias = (alias.source, alias.kind)

    def note_assignment(self, target: cst.BaseExpression, value: cst.BaseExpression, env: Env) -> None:
        alias = self.alias_of(value, env)
        if alias is not None and isinstance(target, cst.Name) and target.value != alias.source:
            env.aliases[target.value] = alias

    @staticmethod
    def forget(name: str, env: Env) -> None:
        """`name` was rebound: it no longer aliases anything, and no longer is the source read later."""
        env.aliases.pop(name, None)
        env.pending_writes.pop(name, None)

    def note_write(self, written: cst.Name, env: Env) -> None:
        self.interpreter.locate(written)
        scope: Env | None = env
        while scope is not None:
            alias = scope.aliases.get(written.value)
            if alias is not None:
                record = AliasWrite(written, written.value, alias.source, alias.origin, alias.kind)
                scope.pending_writes.setdefault(alias.source, []).append(record)
                return
            if written.value in scope.vars:
                return
            scope = scope.parent

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
