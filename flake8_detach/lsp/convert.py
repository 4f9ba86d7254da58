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


def whole_text_edit(old: str, new: str) -> TextEdit:
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
    start_line, start_column = _line_column(old, start)
    end_line, end_column = _line_column(old, end_old)
    return TextEdit(start_line, start_column, end_line, end_column, new[start:end_new])


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """(1-based line, 0-based column) of a character offset, lines as the engine counts them."""
    line, line_start = 1, 0
    for match in re.finditer(r"\r\n|\r|\n", text[:offset]):
        line += 1
        line_start = match.end()
    return line, offset - line_start
