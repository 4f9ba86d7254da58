"""Where a diagnostic's token and a fix's change sit in the text, for formats and editors.

The engine reports only a start (line, column); editors want a range and SARIF wants fixes as
text replacements, so both are computed here, from the same tree the engine analysed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..diagnostics import Fix

_IDENTIFIER = re.compile(r"[^\W\d]\w*")


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
    """One edit per fix: the fixed node's range, replaced by the replacement's code."""
    if not fixes:
        return []
    # The fixes hold nodes of this very tree, so it must not be copied before resolving.
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    edits = []
    for fix in fixes:
        where = positions[fix.node]
        edits.append(
            TextEdit(
                where.start.line,
                where.start.column,
                where.end.line,
                where.end.column,
                module.code_for_node(fix.replacement),
            )
        )
    return edits
