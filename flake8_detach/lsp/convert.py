"""From the engine's positions (1-based lines, code-point columns) to LSP's (0-based, client units).

The lines are split the way the engine counts them (``\\r\\n``, ``\\r`` or ``\\n``), not with
``str.splitlines``, which also breaks at form feeds and other separators Python code may contain.
"""

from __future__ import annotations

import re

from lsprotocol import types

from ..reporting.spans import TextEdit

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(source: str) -> list[str]:
    """Physical lines without their endings, as the engine numbers them."""
    return [line.rstrip("\r\n") for line in _LINE.findall(source)]


def client_column(line_text: str, column: int, encoding: str) -> int:
    """A code-point column of ``line_text`` in the client's units (UTF-16 unless negotiated)."""
    prefix = line_text[:column]
    if encoding == types.PositionEncodingKind.Utf32:
        return len(prefix)
    if encoding == types.PositionEncodingKind.Utf8:
        return len(prefix.encode("utf-8", "surrogatepass"))
    return len(prefix) + sum(1 for char in prefix if ord(char) > 0xFFFF)


def position(lines: list[str], line: int, column: int, encoding: str) -> types.Position:
    """Position of (1-based ``line``, 0-based code-point ``column``)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return types.Position(line=line - 1, character=client_column(text, column, encoding))


def text_edit(lines: list[str], edit: TextEdit, encoding: str) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(
            start=position(lines, edit.start_line, edit.start_column, encoding),
            end=position(lines, edit.end_line, edit.end_column, encoding),
        ),
        new_text=edit.new_text,
    )
