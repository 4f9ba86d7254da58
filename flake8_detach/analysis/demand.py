"""Which of a file's top-level functions and classes an export must analyse to answer a question.

An importer asks one thing of a project file: what one function returns, what one class's
fields hold, or what the file passes to one helper (`outgoing`, for the helper's callers). On
timm most exports answered a single question, yet the whole file was analysed, every function
and method for callers it does not know: half of the plugin's cold run. The export now analyses,
besides the module's own statements (always walked), only the top-level definitions that can
change the answer:

- the *roots*: the function asked about, the class of a method or field, the functions and
  classes whose code calls the helper;
- every definition that names one of them (a caller of a root passes it values, a subclass or
  an instantiation writes its fields: the reverse closure over names);
- every definition that names a module-level variable a wanted one names (a list one function
  fills and another reads, a `global` counter): shared state joins its users;
- the in-file bases of a wanted class (their methods write the fields it inherits).

What a wanted definition calls needs no base analysis of its own: the call's context analyses
it. The answer then equals the whole file's for what it covers (the closure); an export keeps
that cover so that later questions about the same definitions reuse it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The statements whose bodies bind module-level names too (`if TORCH: DEVICE = ...`).
_BODIES = ("body", "orelse", "finalbody", "handlers")


def definition_of(name: str) -> str:
    """The top-level definition a unit is in: "f" for "f", "C" for the method or field "C.m"."""
    return name.split(".", 1)[0]


def wanted_definitions(tree: ast.Module, source: str, roots: Iterable[str]) -> frozenset[str]:
    """The names of the top-level definitions of ``tree`` an export for ``roots`` analyses.

    What a definition names is read from its text (identifiers, a regular expression: several
    times cheaper than a walk over its nodes); attribute names and words in strings only add
    definitions to analyse, never drop one."""
    lines = source.splitlines(keepends=True)
    mentions: dict[str, set[str]] = {}
    bases: dict[str, set[str]] = {}
    variables: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, DEFINITIONS):
            first = min([statement.lineno, *(decorator.lineno for decorator in statement.decorator_list)])
            text = "".join(lines[first - 1:statement.end_lineno or statement.lineno])
            mentions.setdefault(statement.name, set()).update(IDENTIFIER.findall(text))
            if "global" in text:  # `global counter` in a function: shared state
                variables.update(_declared_global(statement))
            if isinstance(statement, ast.ClassDef):
                bases.setdefault(statement.name, set()).update(
                    node.id for base in statement.bases for node in ast.walk(base) if isinstance(node, ast.Name))
        else:
            _bind(statement, variables)
    variables -= mentions.keys()
    wanted = {root for root in roots if root in mentions}
    shared: set[str] = set()
    work = list(wanted)
    while work:
        name = work.pop()
        shared |= mentions[name] & variables
        for base in bases.get(name, ()):
            if base in mentions and base not in wanted:
                wanted.add(base)
                work.append(base)
        for other, used in mentions.items():
            if other not in wanted and (name in used or not shared.isdisjoint(used)):
                wanted.add(other)
                work.append(other)
    return frozenset(wanted)


def _bind(statement: ast.stmt, names: set[str]) -> None:
    """Add the names a module-level statement binds (imports aside: a module is no shared
    state of this file), in the blocks of `if`, `try`, `for`, `with` too."""
    if isinstance(statement, DEFINITIONS):
        names.add(statement.name)
        return
    targets: list[ast.AST] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [statement.target]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in statement.items if item.optional_vars is not None]
    for target in targets:
        names.update(node.id for node in ast.walk(target) if isinstance(node, ast.Name))
    for field in _BODIES:
        for inner in getattr(statement, field, ()):
            if isinstance(inner, ast.ExceptHandler):
                if inner.name:
                    names.add(inner.name)
                for nested in inner.body:
                    _bind(nested, names)
            else:
                _bind(inner, names)


def _declared_global(statement: ast.stmt) -> set[str]:
    return {name for node in ast.walk(statement) if isinstance(node, ast.Global) for name in node.names}
