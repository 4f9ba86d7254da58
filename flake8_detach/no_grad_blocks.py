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

from .diagnostics import Fix
from .fixes import NoGradWrite

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


def _same_context(first: NoGradWrite, other: NoGradWrite) -> bool:
    empty = cst.Module([])
    assert first.context is not None and other.context is not None
    return empty.code_for_node(first.context) == empty.code_for_node(other.context)


def _merged(run: list[NoGradWrite]) -> cst.With:
    first = run[0]
    assert isinstance(first.replacement, cst.With) and first.statement is not None
    body: list[cst.BaseStatement] = [first.statement]
    for fix in run[1:]:
        assert fix.statement is not None and isinstance(fix.node, cst.SimpleStatementLine)
        body.append(fix.statement.with_changes(leading_lines=fix.node.leading_lines))
    return first.replacement.with_changes(body=cst.IndentedBlock(body=body))


def replacements(module: cst.Module, fixes: Iterable[Fix]) -> dict[cst.CSTNode, Replacement]:
    """The node swaps of one pass, adjacent no_grad writes of a block merged into one `with`."""
    chosen = list(fixes)
    swaps: dict[cst.CSTNode, Replacement] = {fix.node: fix.replacement for fix in chosen}
    writes = {fix.node: fix for fix in chosen if isinstance(fix, NoGradWrite) and fix.context is not None}
    if len(writes) < 2:
        return swaps
    finder = _StatementBlocks()
    module.visit(finder)
    for block in finder.blocks:
        run: list[NoGradWrite] = []
        for statement in [*block, None]:
            fix = writes.get(statement) if statement is not None else None
            if fix is not None and run and not _starts_a_new_group(fix.node) and _same_context(run[0], fix):
                run.append(fix)
                continue
            if len(run) > 1:
                swaps[run[0].node] = _merged(run)
                for merged in run[1:]:
                    swaps[merged.node] = cst.RemovalSentinel.REMOVE
            run = [fix] if fix is not None else []
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
