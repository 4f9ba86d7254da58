"""From the engine's positions (1-based lines, code-point columns) to LSP's (0-based, client units).

The unit conversion is pygls' own position codec (UTF-16 unless the client negotiated another).
The lines are split the way the engine counts them (``\\r\\n``, ``\\r`` or ``\\n``), not with
``str.splitlines``, which also breaks at form feeds and other separators Python code may contain.
"""

from __future__ import annotations

import re

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ..reporting.spans import TextEdit

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(source: str) -> list[str]:
    """Physical lines without their endings, as the engine numbers them."""
    return [line.rstrip("\r\n") for line in _LINE.findall(source)]


def position(lines: list[str], line: int, column: int, codec: PositionCodec) -> types.Position:
    """Position of (1-based ``line``, 0-based code-point ``column``) in the client's units."""
    if not 0 < line <= len(lines):
        return types.Position(line=max(line - 1, 0), character=column)
    return codec.position_to_client_units(lines, types.Position(line=line - 1, character=column))


def text_edit(lines: list[str], edit: TextEdit, codec: PositionCodec) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(
            start=position(lines, edit.start_line, edit.start_column, codec),
            end=position(lines, edit.end_line, edit.end_column, codec),
        ),
        new_text=edit.new_text,
    )
