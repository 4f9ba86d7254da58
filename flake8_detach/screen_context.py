"""What flake8's free `ast` tree says a file imports, for the screen's per-rule checks.

Its own module so that the rules' table (:mod:`.catalog`) and the screen (:mod:`.screening`) can
both use it without importing each other.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

# The fields that hold statements (or the handlers and cases that hold them), in `ast` order.
_STATEMENT_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")


def statements(tree: ast.AST) -> Iterator[ast.AST]:
    """The statements of the tree (and its `except` handlers and `case`s) in `ast.walk`'s
    order, never entering an expression: imports are statements, and a file's expression
    nodes outnumber its statements tenfold."""
    queue = deque([tree])
    while queue:
        node = queue.popleft()
        yield node
        for name in _STATEMENT_FIELDS:
            value = getattr(node, name, None)
            if isinstance(value, list):
                queue.extend(item for item in value if isinstance(item, ast.AST))


@dataclass
class ScreenContext:
    """What the `ast` tree says the file imports: local name -> dotted name."""

    tree: ast.AST
    _aliases: dict[str, str] | None = field(default=None, repr=False)
    _modules: set[str] | None = field(default=None, repr=False)

    @property
    def aliases(self) -> dict[str, str]:
        if self._aliases is None:
            aliases: dict[str, str] = {}
            modules: set[str] = set()
            for node in statements(self.tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.asname:
                            aliases[alias.asname] = alias.name
                            modules.add(alias.asname)
                        else:
                            head = alias.name.split(".", 1)[0]
                            aliases[head] = head
                            modules.add(head)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    for alias in node.names:
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            self._aliases, self._modules = aliases, modules
        return self._aliases

    @property
    def modules(self) -> set[str]:
        """Names bound by `import x` / `import x as y`: modules, whose attributes are no tensors."""
        if self._modules is None:
            self.aliases  # noqa: B018 - one walk fills both
        assert self._modules is not None
        return self._modules

    def resolve(self, node: ast.expr) -> str | None:
        """`np.linalg` -> `numpy.linalg` through the file's imports."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def imports(self, *modules: str) -> bool:
        return any(
            qualified == module or qualified.startswith(module + ".")
            for qualified in self.aliases.values() for module in modules
        )
