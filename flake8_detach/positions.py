"""Line and column of a few nodes, without resolving positions for the whole tree.

libcst's PositionProvider records a range for every node, which costs about
twice the parse. We only need the start of the few nodes a rule reports, so we
run libcst's code generator once, note how many tokens were written before each
wanted node starts, and count lines and columns up to those points only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
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
    positions: dict[cst.CSTNode, tuple[int, int]] = {}
    line, column, done = 1, 0, 0
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
