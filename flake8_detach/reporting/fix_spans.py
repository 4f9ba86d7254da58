"""Where each fix's change sits in the text: one code generation of the analysed tree.

Separate from :mod:`.spans` because it needs libcst, which a report of a clean file never loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

from ..diagnostics import Fix
from .spans import LineIndex, TextEdit, minimal_span


@dataclass
class _SpanCodegenState(CodegenState):
    """Records where each wanted node's code starts and ends, and the indentation it sits at."""

    wanted: frozenset[cst.CSTNode] = frozenset()
    starts: dict[cst.CSTNode, tuple[int, list[str]]] = field(default_factory=dict)
    ends: dict[cst.CSTNode, int] = field(default_factory=dict)
    popped: int = 0

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node in self.wanted:
            self.starts[node] = (len(self.tokens), list(self.indent_tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        if node in self.wanted:
            self.ends[node] = len(self.tokens)

    def pop_trailing_newline(self) -> None:
        # Keep the token (the module's text simply ends before it) so recorded indices stay valid.
        self.popped = len(self.tokens[-1]) if self.tokens else 0


def fix_edits(module: cst.Module, fixes: Sequence[Fix]) -> list[TextEdit]:
    """One edit per fix, each on its own: exactly the change libcst makes when it applies the fix.

    One code generation of the module records each fixed node's text span and indentation; the
    replacement is generated at that same indentation (so a statement wrapped in
    `with torch.no_grad():` inside a function is indented right), and the edit is the smallest
    whole-name difference between the two spans.
    """
    if not fixes:
        return []
    state = _SpanCodegenState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        wanted=frozenset(fix.node for fix in fixes),
    )
    module._codegen(state)
    code = module.code
    offsets = [0]
    for token in state.tokens:
        offsets.append(offsets[-1] + len(token))
    lines = LineIndex(code)
    edits = []
    for fix in fixes:
        start_token, indent = state.starts[fix.node]
        start, end = offsets[start_token], offsets[state.ends[fix.node]]
        rendering = CodegenState(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            indent_tokens=indent,
        )
        fix.replacement._codegen(rendering)
        new = "".join(rendering.tokens)
        if end > len(code):  # a file without a final newline: the module drops the last one
            new = new[: len(new) - (end - len(code))]
            end = len(code)
        local_start, local_end, new_end = minimal_span(code[start:end], new)
        start_line, start_column = lines.line_column(start + local_start)
        end_line, end_column = lines.line_column(start + local_end)
        edits.append(TextEdit(start_line, start_column, end_line, end_column, new[local_start:new_end]))
    return edits
