"""Line and column of a few nodes, without resolving positions for the whole tree.

libcst's PositionProvider records a range for every node, which costs about
twice the parse. We only need the start of the few nodes a rule reports, so we
run libcst's code generator, note how many tokens were written before each
wanted node starts, and count lines and columns up to those points only.

When flake8's `ast` tree of the same text is at hand, the code generator runs
over the module statements that hold a wanted node only: the tree gives the
line each statement starts on. Each generated statement is checked against the
source text, and any doubt falls back to generating the whole module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")


@dataclass
class _MarkingCodegenState(CodegenState):
    wanted: frozenset[cst.CSTNode] = frozenset()
    marks: dict[cst.CSTNode, int] = field(default_factory=dict)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node in self.wanted:
            self.marks[node] = len(self.tokens)


def start_positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, tuple[int, int]]:
    """Map each node to its (1-based line, 0-based column in characters)."""
    wanted = frozenset(nodes)
    if not wanted:
        return {}
    state = _MarkingCodegenState(
        default_indent=module.default_indent, default_newline=module.default_newline, wanted=wanted
    )
    module._codegen(state)
    return _count(state, 1)


def statement_start_positions(
    module: cst.Module,
    nodes: Iterable[cst.CSTNode],
    top_statements: Mapping[cst.CSTNode, int],
    source: str,
    tree: ast.AST | None,
) -> dict[cst.CSTNode, tuple[int, int]]:
    """`start_positions`, generating only the module statements (`top_statements`) that hold the nodes."""
    wanted = frozenset(nodes)
    if not wanted:
        return {}
    starts = _statement_start_lines(module, tree)
    if starts is None:
        return start_positions(module, wanted)
    by_statement: dict[int, set[cst.CSTNode]] = {}
    for node in wanted:
        index = top_statements.get(node, -1)
        if not 0 <= index < len(starts):
            return start_positions(module, wanted)
        by_statement.setdefault(index, set()).add(node)
    lines = _lines(source)
    positions: dict[cst.CSTNode, tuple[int, int]] = {}
    for index, statement_nodes in by_statement.items():
        state = _MarkingCodegenState(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            wanted=frozenset(statement_nodes),
        )
        module.body[index]._codegen(state)
        first = starts[index]
        text = "".join(state.tokens)
        if state.marks.keys() != statement_nodes or not _matches(lines, first, text):
            return start_positions(module, wanted)
        positions.update(_count(state, first))
    return positions


def _statement_start_lines(module: cst.Module, tree: ast.AST | None) -> list[int] | None:
    """The line on which the code generator starts each module statement (its leading lines included)."""
    if not isinstance(tree, ast.Module):
        return None
    body = tree.body
    starts: list[int] = []
    taken = 0
    for statement in module.body:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        if taken + count > len(body):
            return None
        first = body[taken]
        taken += count
        line = first.lineno
        leading = len(statement.leading_lines)
        decorators = getattr(statement, "decorators", ())
        if decorators:
            ast_decorators = getattr(first, "decorator_list", None)
            if not ast_decorators:
                return None
            line = ast_decorators[0].lineno
            leading += len(decorators[0].leading_lines)
        starts.append(line - leading)
    if taken != len(body):
        return None
    return starts


def _lines(source: str) -> list[str]:
    """The source's lines with their line breaks, split as the code generator writes them."""
    pieces = _NEWLINE.split(source)
    breaks = _NEWLINE.findall(source)
    return [piece + brk for piece, brk in zip(pieces, breaks)] + ([pieces[-1]] if pieces[-1] else [])


def _matches(lines: list[str], first: int, text: str) -> bool:
    """Whether the generated statement is the source text from line `first` on."""
    if first < 1:
        return False
    expected = len(_NEWLINE.findall(text)) + (0 if text.endswith(("\n", "\r")) else 1)
    return "".join(lines[first - 1 : first - 1 + expected]) == text


def _count(state: _MarkingCodegenState, first_line: int) -> dict[cst.CSTNode, tuple[int, int]]:
    """Lines and columns of the marked nodes, the generated text starting at `first_line`, column 0."""
    positions: dict[cst.CSTNode, tuple[int, int]] = {}
    line, column, done = first_line, 0, 0
    tokens = state.tokens
    for node, index in sorted(state.marks.items(), key=lambda item: item[1]):
        for token in tokens[done:index]:
            pieces = _NEWLINE.split(token)
            if len(pieces) == 1:
                column += len(token)
            else:
                line += len(pieces) - 1
                column = len(pieces[-1])
        done = index
        positions[node] = (line, column)
    return positions
