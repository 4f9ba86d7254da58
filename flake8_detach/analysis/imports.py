"""Import aliases: resolve ``T.no_grad`` or ``F.relu`` to ``torch.no_grad`` / ``torch.nn.functional.relu``.

libcst's QualifiedNameProvider answers the same question, but it needs the
ScopeProvider over the whole module first, which costs several times the parse
itself (see docs/speed.md). The rules only ever ask about
names bound by imports, so one pass over the import statements is enough.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Union

import libcst as cst
from libcst.helpers import get_full_name_for_node

SimpleStatement = Union[cst.SimpleStatementLine, cst.SimpleStatementSuite]
# The nodes whose body is a scope of its own: a name bound there is not a module name.
Scope = Union[cst.FunctionDef, cst.ClassDef]


_BLOCK_PARTS = (cst.BaseStatement, cst.ExceptHandler, cst.ExceptStarHandler, cst.Else, cst.Finally, cst.MatchCase)


# The fields of a compound statement (or of its `else`, handler or `case` part) that hold
# statements, in document order: For's body before its `else`, Try's handlers before `finally`.
_STATEMENT_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")


def _statement_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements (and handler, `else`, `case` parts) directly inside a compound statement.

    A one-line body (`if c: import torch`) is a SimpleStatementSuite: it is a statement of its own.
    Reads the fields that hold statements: libcst's `children` would rebuild every child,
    expressions and whitespace included, for each compound statement of the file.
    """
    children: list[cst.CSTNode] = []
    for name in _STATEMENT_FIELDS:
        value = getattr(node, name, None)
        if value is None:
            continue
        if isinstance(value, cst.IndentedBlock):
            children.extend(value.body)
        elif isinstance(value, (cst.SimpleStatementSuite, *_BLOCK_PARTS)):
            children.append(value)
        elif isinstance(value, (tuple, list)):
            children.extend(item for item in value if isinstance(item, (cst.SimpleStatementSuite, *_BLOCK_PARTS)))
    return children


def iter_simple_statements(body: Sequence[cst.CSTNode]) -> Iterator[SimpleStatement]:
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
        stack.extend(reversed(_statement_children(node)))


def _type_checking_test(test: cst.BaseExpression) -> bool | None:
    """True for `TYPE_CHECKING` / `typing.TYPE_CHECKING`, False for `not TYPE_CHECKING`, else None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _type_checking_test(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.Name) and test.value == "TYPE_CHECKING":
        return True
    if isinstance(test, cst.Attribute) and test.attr.value == "TYPE_CHECKING":
        return True
    return None


@dataclass(frozen=True)
class Place:
    """Where a simple statement runs: its scopes (outermost first, () for the module's top
    level), whether it runs at all (not under `if TYPE_CHECKING:`), and its document order."""

    scopes: tuple[Scope, ...]
    runtime: bool
    order: int

    def sees(self, binding: Place) -> bool:
        """Whether a name bound at ``binding`` is bound when this statement runs.

        A module name is bound for a function's body (it runs later), and for top-level code
        when the import came first; a function's own import only for its body (and the
        functions nested in it) after it; a class body's import only for that class body.
        """
        if not binding.runtime:
            return False
        if not binding.scopes:
            functions = [scope for scope in self.scopes if isinstance(scope, cst.FunctionDef)]
            return bool(functions) or binding.order < self.order
        owner = binding.scopes[-1]
        if owner not in self.scopes:
            return False
        if isinstance(owner, cst.ClassDef) and self.scopes[-1] is not owner:
            return False  # a class body's names are class attributes, not names of its methods
        return self.scopes[-1] is not owner or binding.order < self.order


def _scoped_statements(body: Sequence[cst.CSTNode]) -> Iterator[tuple[SimpleStatement, Place]]:
    """Every simple statement with its :class:`Place`, in document order."""
    stack: list[tuple[cst.CSTNode, tuple[Scope, ...], bool]] = [(node, (), True) for node in reversed(body)]
    order = 0
    while stack:
        node, scopes, runtime = stack.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield node, Place(scopes, runtime, order)
            order += 1
            continue
        inner = (*scopes, node) if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else scopes
        guard = _type_checking_test(node.test) if isinstance(node, cst.If) else None
        if isinstance(node, cst.If) and guard is not None:
            # `if TYPE_CHECKING:` never runs its body; its `else:` (or `elif`) is what runs.
            parts = [(child, inner, runtime and not guard) for child in _statement_children(node.body)]
            if node.orelse is not None:
                parts.append((node.orelse, inner, runtime and guard))
        else:
            parts = [(child, inner, runtime) for child in _statement_children(node)]
        stack.extend(reversed(parts))


@dataclass(frozen=True)
class ImportBinding:
    """One name an import binds, and where."""

    local: str
    qualified: str
    place: Place


class ImportTable:
    """The names imports bind (``aliases``, every import of the file, for resolving names) and,
    on demand, where each is bound (:meth:`names_at`, for fixes that spell a name)."""

    def __init__(self, module: cst.Module | None = None) -> None:
        self.aliases: dict[str, str] = {}
        # `from .models import Net`: local name -> ".models.Net", for the project index to resolve
        # (not in `aliases`: without the file's path, a relative import names nothing known).
        self.relative: dict[str, str] = {}
        self._module = module
        self._places: dict[cst.CSTNode, Place] | None = None
        self._bindings: list[ImportBinding] = []
        self.star = False  # a `from X import *`: its names come from the project (add_star_names)
        self.classes: set[str] = set()  # the file's top-level classes

    @classmethod
    def from_module(cls, module: cst.Module) -> ImportTable:
        table = cls(module)
        assigned: dict[str, int] = {}  # how often each name is assigned, anywhere in the file
        for statement in iter_simple_statements(module.body):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    table._add_import(small)
                elif isinstance(small, cst.ImportFrom):
                    table._add_import_from(small)
                else:
                    _count_assigned(small, assigned)
        table._add_module_aliases(module, assigned)
        return table

    def _add_module_aliases(self, module: cst.Module, assigned: dict[str, int]) -> None:
        """`BatchNorm2d = nn.BatchNorm2d` at the top of the file, the name's only binding in it
        (``assigned``): the name is the imported one (`isinstance(m, BatchNorm2d)`, `BatchNorm2d(64)`).
        And the file's top-level classes (`self.classes`), which guards tell from parameters and
        variables."""
        candidates: dict[str, cst.Name | cst.Attribute] = {}
        for statement in module.body:
            if isinstance(statement, cst.ClassDef):
                self.classes.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if (isinstance(small, cst.Assign) and len(small.targets) == 1
                            and isinstance(small.targets[0].target, cst.Name)
                            and isinstance(small.value, (cst.Name, cst.Attribute))):
                        candidates[small.targets[0].target.value] = small.value
        for name, value in candidates.items():
            if assigned.get(name) == 1 and name not in self.aliases and name not in self.relative \
                    and name not in self.classes:
                resolved = self.resolve(value)
                if resolved is not None:
                    self.aliases[name] = resolved

    def add_star_names(self, names: dict[str, str]) -> None:
        """Names `from X import *` binds (ProjectView.star_names), where no import of the file binds
        them: a relative reference goes where relative imports go."""
        for local, reference in names.items():
            if local in self.aliases or local in self.relative:
                continue
            if reference.startswith("."):
                self.relative[local] = reference
            else:
                self.aliases[local] = reference

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
        if node.relative and not isinstance(node.names, cst.ImportStar):
            self._add_relative(node)
            return
        if isinstance(node.names, cst.ImportStar):
            self.star = True
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = get_full_name_for_node(node.module)
        if base is None:
            return
        for local, name in _imported_names(node):
            self.aliases[local] = f"{base}.{name}"

    def _add_relative(self, node: cst.ImportFrom) -> None:
        base = "." * len(node.relative) + (get_full_name_for_node(node.module) or "" if node.module else "")
        assert not isinstance(node.names, cst.ImportStar)
        for local, name in _imported_names(node):
            self.relative[local] = f"{base}{'' if base.endswith('.') else '.'}{name}"

    def names_at(self, statement: cst.CSTNode) -> dict[str, str]:
        """The names imports have bound when ``statement`` (a simple statement line) runs.

        Imports under `if TYPE_CHECKING:` never run; a function's imports are its own; a
        top-level import counts for top-level code after it. A statement the table does not
        know gets the imports that run at the module's top level.
        """
        place = self._scoped_places().get(statement)
        names: dict[str, str] = {}
        for binding in self._bindings:
            if place.sees(binding.place) if place is not None else binding.place.runtime and not binding.place.scopes:
                names[binding.local] = binding.qualified
        return names

    def bound_at_top_level(self, name: str) -> bool:
        """Whether a top-level import that runs binds ``name`` (anywhere in the file)."""
        self._scoped_places()
        return any(binding.local == name and binding.place.runtime and not binding.place.scopes
                   for binding in self._bindings)

    def later_locals_at(self, statement: cst.CSTNode) -> set[str]:
        """Names an import binds in ``statement``'s own function after it: local to the whole
        function, so unbound at ``statement`` even where the module binds them."""
        place = self._scoped_places().get(statement)
        if place is None or not place.scopes or not isinstance(place.scopes[-1], cst.FunctionDef):
            return set()
        return {binding.local for binding in self._bindings
                if binding.place.scopes == place.scopes and binding.place.order > place.order}

    def _scoped_places(self) -> dict[cst.CSTNode, Place]:
        """One walk, the first time a fix asks: the place of every simple statement and import."""
        if self._places is not None:
            return self._places
        self._places = {}
        scratch = ImportTable()
        for statement, place in _scoped_statements(self._module.body if self._module is not None else ()):
            self._places[statement] = place
            for small in statement.body:
                if not isinstance(small, (cst.Import, cst.ImportFrom)):
                    continue
                scratch.aliases = {}
                if isinstance(small, cst.Import):
                    scratch._add_import(small)
                else:
                    scratch._add_import_from(small)
                self._bindings.extend(ImportBinding(local, qualified, place) for local, qualified in scratch.aliases.items())
        return self._places

    @property
    def imports_torch(self) -> bool:
        return any(q == "torch" or q.startswith("torch.") for q in self.aliases.values())

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """The dotted name an expression refers to through imports, or None."""
        # Exact types: `isinstance` against libcst's classes goes through `abc` when it fails.
        if type(node) is cst.Name:
            return self.aliases.get(node.value)
        if type(node) is cst.Attribute:
            base = self.resolve(node.value)
            return None if base is None else f"{base}.{node.attr.value}"
        return None


def _count_assigned(small: cst.BaseSmallStatement, assigned: dict[str, int]) -> None:
    """Count the plain names an assignment statement binds (`x = ...`, `x: T = ...`, `x += ...`)."""
    targets = ([target.target for target in small.targets] if isinstance(small, cst.Assign)
               else [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else [])
    for target in targets:
        if isinstance(target, cst.Name):
            assigned[target.value] = assigned.get(target.value, 0) + 1


def _imported_names(node: cst.ImportFrom) -> Iterator[tuple[str, str]]:
    """(the local name, the imported name) of each name a `from ... import` binds (no star)."""
    assert not isinstance(node.names, cst.ImportStar)
    for alias in node.names:
        name = get_full_name_for_node(alias.name)
        if name is None:
            continue
        local = name
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            local = alias.asname.name.value
        yield local, name
