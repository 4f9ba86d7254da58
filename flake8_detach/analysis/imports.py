"""Import aliases: resolve ``T.no_grad`` or ``F.relu`` to ``torch.no_grad`` / ``torch.nn.functional.relu``.

libcst's QualifiedNameProvider answers the same question, but it needs the
ScopeProvider over the whole module first, which costs several times the parse
itself (see docs/speed.md). The rules only ever ask about
names bound by imports, so one pass over the import statements is enough.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node


def iter_simple_statements(body: Sequence[cst.CSTNode]) -> Iterator[cst.SimpleStatementLine | cst.SimpleStatementSuite]:
    """Every simple statement line, at any depth, without visiting expressions.

    Imports are statements, so walking statement bodies finds them all at a fraction of a
    full-tree visit (matchers' findall visits every expression node).
    """
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield node
            continue
        children: list[cst.CSTNode] = []
        for child in node.children:
            if isinstance(child, cst.BaseSuite):
                children.extend(child.body)
            elif isinstance(
                child,
                (cst.BaseStatement, cst.ExceptHandler, cst.ExceptStarHandler, cst.Else, cst.Finally, cst.MatchCase),
            ):
                children.append(child)
        stack.extend(reversed(children))


class ImportTable:
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    @classmethod
    def from_module(cls, module: cst.Module) -> ImportTable:
        table = cls()
        for statement in iter_simple_statements(module.body):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    table._add_import(small)
                elif isinstance(small, cst.ImportFrom):
                    table._add_import_from(small)
        return table

    def _add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = get_full_name_for_node(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = full
            else:
                head = full.split(".", 1)[0]
                self.aliases[head] = head

    def _add_import_from(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = get_full_name_for_node(node.module)
        if base is None:
            return
        for alias in node.names:
            name = get_full_name_for_node(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{base}.{name}"

    @property
    def imports_torch(self) -> bool:
        return any(q == "torch" or q.startswith("torch.") for q in self.aliases.values())

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """The dotted name an expression refers to through imports, or None."""
        if isinstance(node, cst.Name):
            return self.aliases.get(node.value)
        if isinstance(node, cst.Attribute):
            base = self.resolve(node.value)
            return None if base is None else f"{base}.{node.attr.value}"
        return None
