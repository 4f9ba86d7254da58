"""Where a diagnostic's token and a fix's change sit in the text, for formats and editors.

The engine reports only a start (line, column); editors want a range and SARIF wants fixes as
text replacements, so both are computed here, from the same tree the engine analysed.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

from ..diagnostics import Fix

_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from (start_line, start_column) to (end_line, end_column) with new_text.

    Lines are 1-based, columns 0-based in characters (code points), end exclusive.
    """

    start_line: int
    start_column: int
    end_line: int
    end_column: int
    new_text: str


def token_length(line_text: str, column: int) -> int:
    """Length of the reported token (`numpy` in `out.numpy()`); 1 when it is not a name."""
    match = _IDENTIFIER.match(line_text, column)
    return len(match.group()) if match else 1


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


class _Lines:
    """Offsets to (1-based line, 0-based column), lines counted as the engine counts them."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]

    def line_column(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index]


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
    lines = _Lines(code)
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
        local_start, local_end, new_end = _minimal_span(code[start:end], new)
        start_line, start_column = lines.line_column(start + local_start)
        end_line, end_column = lines.line_column(start + local_end)
        edits.append(TextEdit(start_line, start_column, end_line, end_column, new[local_start:new_end]))
    return edits


def minimal_edit(old: str, new: str) -> TextEdit:
    """The smallest single edit turning ``old`` into ``new`` (common prefix and suffix kept).

    Editors keep the cursor and folding outside a small edit, which a full replacement resets.
    """
    start, end_old, end_new = _minimal_span(old, new)
    lines = _Lines(old)
    start_line, start_column = lines.line_column(start)
    end_line, end_column = lines.line_column(end_old)
    return TextEdit(start_line, start_column, end_line, end_column, new[start:end_new])


def _minimal_span(old: str, new: str) -> tuple[int, int, int]:
    """(start, end in old, end in new) of the part that differs, widened to whole names."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start -= 1  # never split a \r\n pair: positions cannot point between its halves
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    if 0 < end_old < len(old) and old[end_old - 1] == "\r" and old[end_old] == "\n":
        end_old += 1
        end_new += 1
    # Whole names read better than fragments (`data` -> `detach()`, not `ata` -> `etach()`).
    while start > 0 and _is_name_char(old[start - 1]):
        start -= 1
    while end_old < len(old) and _is_name_char(old[end_old]):
        end_old += 1
        end_new += 1
    return start, end_old, end_new


def _is_name_char(char: str) -> bool:
    return char.isalnum() or char == "_"
