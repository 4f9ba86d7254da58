"""One `with torch.no_grad():` block around a run of adjacent `.data` writes, as a person writes it.

Each DET103 write fix rewrites one statement under its own `with` (a :class:`NoGradWrite`). When a
pass of the fixer applies several of them to neighbouring statements of one block, this module
turns them into a single block: the first statement's comments stay above the `with`, the others'
comments move inside it with their statement. A blank line ends a run (it separates what the author
grouped apart). A fix that needs `import torch` gets it once, through libcst's AddImportsVisitor
(after the module's other top-level imports).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Union

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from ..diagnostics import Fix
from .rewrites import NoGradWrite

Replacement = Union[cst.CSTNode, cst.RemovalSentinel]


class _StatementBlocks(cst.CSTVisitor):
    """The statement lists of a module: its body and every indented block, expressions skipped."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[Sequence[cst.BaseStatement]] = []

    def visit_Module(self, node: cst.Module) -> bool:
        self.blocks.append(node.body)
        return True

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        self.blocks.append(node.body)
        return True

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        return False


def _starts_a_new_group(statement: cst.CSTNode) -> bool:
    return any(line.comment is None for line in getattr(statement, "leading_lines", ()))


def _context_code(fix: NoGradWrite) -> str:
    assert fix.context is not None
    return cst.Module([]).code_for_node(fix.context)


def _guarded_writes(statement: cst.CSTNode, writes: dict[cst.CSTNode, NoGradWrite]) -> list[NoGradWrite] | None:
    """The writes of `if cond:` whose whole body is writes fixed in this pass (no `else`)."""
    if not (isinstance(statement, cst.If) and statement.orelse is None and isinstance(statement.body, cst.IndentedBlock)):
        return None
    found = [writes.get(inner) for inner in statement.body.body]
    return None if None in found else [fix for fix in found if fix is not None]


def _member(statement: cst.CSTNode, writes: dict[cst.CSTNode, NoGradWrite]) -> list[NoGradWrite] | None:
    """The writes a statement brings to a run: itself, or the body of an `if` that only writes."""
    fix = writes.get(statement)
    return [fix] if fix is not None else _guarded_writes(statement, writes)


def _unwrapped(fix: NoGradWrite, first: bool) -> cst.BaseStatement:
    assert fix.statement is not None and isinstance(fix.node, cst.SimpleStatementLine)
    return fix.statement.with_changes(leading_lines=() if first else fix.node.leading_lines)


def _merged(run: list[cst.CSTNode], writes: dict[cst.CSTNode, NoGradWrite]) -> cst.With:
    """One `with` around the run, each write unwrapped (inside an `if`, too)."""
    body: list[cst.BaseStatement] = []
    for index, statement in enumerate(run):
        fix = writes.get(statement)
        if fix is not None:
            body.append(_unwrapped(fix, first=index == 0))
            continue
        assert isinstance(statement, cst.If) and isinstance(statement.body, cst.IndentedBlock)
        inner = [_unwrapped(writes[line], first=False) for line in statement.body.body]
        body.append(statement.with_changes(
            leading_lines=() if index == 0 else statement.leading_lines,
            body=statement.body.with_changes(body=inner),
        ))
    members = _member(run[0], writes)
    assert members and members[0].context is not None
    leading = run[0].leading_lines if isinstance(run[0], (cst.SimpleStatementLine, cst.If)) else ()
    return cst.With(items=[cst.WithItem(members[0].context)], body=cst.IndentedBlock(body=body), leading_lines=leading)


def replacements(module: cst.Module, fixes: Iterable[Fix]) -> dict[cst.CSTNode, Replacement]:
    """The node swaps of one pass, adjacent no_grad writes of a block merged into one `with`.

    A run is made of written statements and of `if` statements whose body only writes
    (`if m.bias is not None: m.bias.data.zero_()`), all under the same context.
    """
    chosen = list(fixes)
    swaps: dict[cst.CSTNode, Replacement] = {fix.node: fix.replacement for fix in chosen}
    writes = {fix.node: fix for fix in chosen if isinstance(fix, NoGradWrite) and fix.context is not None}
    if len(writes) < 2:
        return swaps
    finder = _StatementBlocks()
    module.visit(finder)
    for block in finder.blocks:
        run: list[cst.CSTNode] = []
        context = ""
        for statement in [*block, None]:
            members = _member(statement, writes) if statement is not None else None
            contexts = {_context_code(fix) for fix in members or ()}
            if statement is not None and members and run and not _starts_a_new_group(statement) \
                    and contexts == {context}:
                run.append(statement)
                continue
            if len(run) > 1:
                swaps[run[0]] = _merged(run, writes)
                for merged in run[1:]:
                    swaps[merged] = cst.RemovalSentinel.REMOVE
            run, context = [], ""
            if statement is not None and members and len(contexts) == 1:
                run, context = [statement], contexts.pop()
    return swaps


def _imports_from_torch(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
            name = cst.Module([]).code_for_node(small.module)
            if name == "torch" or name.startswith("torch."):
                return True
    return False


def with_imports(module: cst.Module, fixes: Iterable[Fix]) -> cst.Module:
    """``module`` with `import torch` added when an applied fix spells `torch.no_grad()` without it.

    It goes right above the module's first `from torch... import` (where isort's default order
    puts it, the comments above that line staying above both); without one, after the module's
    other top-level imports (libcst's AddImportsVisitor).
    """
    if not any(isinstance(fix, NoGradWrite) and fix.import_torch for fix in fixes):
        return module
    for index, statement in enumerate(module.body):
        if _imports_from_torch(statement):
            assert isinstance(statement, cst.SimpleStatementLine)
            added = cst.SimpleStatementLine(
                body=[cst.Import(names=[cst.ImportAlias(name=cst.Name("torch"))])],
                leading_lines=statement.leading_lines,
            )
            body = [*module.body[:index], added, statement.with_changes(leading_lines=()), *module.body[index + 1:]]
            return module.with_changes(body=body)
    context = CodemodContext()
    AddImportsVisitor.add_needed_import(context, "torch")
    return AddImportsVisitor(context).transform_module(module)
