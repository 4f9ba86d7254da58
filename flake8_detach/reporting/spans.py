"""Where a diagnostic's token and a change sit in the text, for formats and editors.

The engine reports only a start (line, column); editors want a range and SARIF wants fixes as
text replacements. This module is plain text arithmetic, free of libcst, so that reports of
files that never needed the engine (and the results cache) do not load it; the spans of fixes,
which need the analysed tree, are in :mod:`.fix_spans`.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

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


class LineIndex:
    """Offsets to (1-based line, 0-based column), lines counted as the engine counts them."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]

    def line_column(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index]


def minimal_edit(old: str, new: str) -> TextEdit:
    """The smallest single edit turning ``old`` into ``new`` (common prefix and suffix kept).

    Editors keep the cursor and folding outside a small edit, which a full replacement resets.
    """
    start, end_old, end_new = minimal_span(old, new)
    lines = LineIndex(old)
    start_line, start_column = lines.line_column(start)
    end_line, end_column = lines.line_column(end_old)
    return TextEdit(start_line, start_column, end_line, end_column, new[start:end_new])


def minimal_span(old: str, new: str) -> tuple[int, int, int]:
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
