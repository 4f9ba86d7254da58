"""Memory aliases: names that share storage with another name (DET105).

`a = t.numpy()` and `t = torch.from_numpy(a)` make two names of one storage on the CPU. A write
through one of them (augmented assignment, item assignment, an in-place method, `out=`) is
recorded as pending until the other name is read again; then it is a fact for the rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from .facts import AliasWrite
from .scopes import Alias, Env

if TYPE_CHECKING:
    from .interpreter import Interpreter

# Calls between a tensor and `.numpy()` that keep the storage on the CPU.
_SHARING_STEPS = ("detach", "cpu", "resolve_conj", "resolve_neg")


class AliasTracker:
    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter

    def alias_of(self, expr: cst.BaseExpression) -> Alias | None:
        """`t.numpy()` (through `.detach()`/`.cpu()`/`.data`) or `torch.from_numpy(a)` on a name."""
        if not isinstance(expr, cst.Call):
            return None
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

    def note_assignment(self, target: cst.BaseExpression, value: cst.BaseExpression, env: Env) -> None:
        alias = self.alias_of(value)
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
        """`np.copyto(a, ...)` and `np.add(x, y, out=a)` write into `a`."""
        if not qualified.startswith("numpy."):
            return
        for index, arg in enumerate(node.args):
            is_destination = (arg.keyword is not None and arg.keyword.value == "out") or (
                index == 0 and arg.keyword is None and qualified == "numpy.copyto"
            )
            if is_destination and isinstance(arg.value, cst.Name):
                self.note_write(arg.value, env)
