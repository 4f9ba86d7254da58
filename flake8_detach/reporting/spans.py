"""Where a diagnostic's token and a fix's change sit in the text, for formats and editors.

The engine reports only a start (line, column); editors want a range and SARIF wants fixes as
text replacements, so both are computed here, from the same tree the engine analysed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from ..diagnostics import Fix
from ..fixer import replace_nodes

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


def fix_edits(module: cst.Module, fixes: Sequence[Fix]) -> list[TextEdit]:
    """One edit per fix, each on its own: the smallest text change libcst's rewrite makes.

    The fix is applied to the tree and the module regenerated, so libcst handles what a bare
    rendering of the replacement node would get wrong (the indentation of a statement wrapped in
    `with torch.no_grad():` inside a function); the edit is then the diff of the two texts.
    """
    original = module.code
    edits = []
    for fix in fixes:
        fixed = replace_nodes(module, {fix.node: fix.replacement}).code
        edits.append(minimal_edit(original, fixed))
    return edits


def minimal_edit(old: str, new: str) -> TextEdit:
    """The smallest single edit turning ``old`` into ``new`` (common prefix and suffix kept).

    Editors keep the cursor and folding outside a small edit, which a full replacement resets.
    """
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
    start_line, start_column = _line_column(old, start)
    end_line, end_column = _line_column(old, end_old)
    return TextEdit(start_line, start_column, end_line, end_column, new[start:end_new])


def _is_name_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """(1-based line, 0-based column) of a character offset, lines counted as the engine does."""
    line, line_start = 1, 0
    for match in _NEWLINE.finditer(text, 0, offset):
        line += 1
        line_start = match.end()
    return line, offset - line_start
