"""A notebook's JSON as text: its layout, written back byte for byte, and where each source line is.

:mod:`.notebooks` reads a notebook as a document; this module deals with the file's text, which
two fronts need: `fix` writes the JSON back changing only the fixed cells' sources, and the
formats that can only point at lines of the file (SARIF, GitHub annotations) need the line of
the `.ipynb` text that holds a cell's source line. Only the standard library is used.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JsonLayout:
    """How a notebook's JSON text is laid out, so that writing it back gives the same bytes.

    Jupyter writes 1-space indentation without ASCII escapes and a final newline; other tools
    (VS Code, nbformat with other options, formatters) write 2 or 4 spaces, escape non-ASCII,
    drop the final newline or use CRLF. Those are read off the text; anything else is found
    by re-serialising and comparing.
    """

    indent: int | None = 1
    ensure_ascii: bool = False
    newline: str = "\n"
    final_newline: bool = True

    @classmethod
    def of(cls, raw: str) -> JsonLayout:
        newline = "\r\n" if "\r\n" in raw[:raw.find("\n") + 1] else "\n"
        body = raw.rstrip("\r\n")
        first = body.find("\n")
        indent: int | None = None
        if first >= 0:
            second = body[first + 1:]
            indent = len(second) - len(second.lstrip(" "))
        return cls(indent, raw.isascii(), newline, raw.endswith("\n"))

    def dump(self, document: dict[str, Any]) -> str:
        text = json.dumps(document, indent=self.indent, ensure_ascii=self.ensure_ascii)
        if self.newline != "\n":
            text = text.replace("\n", self.newline)  # JSON strings hold no raw newline: only layout changes
        return text + self.newline if self.final_newline else text


def first_difference(raw: str, again: str, layout: JsonLayout) -> str:
    """Why re-serialising does not reproduce ``raw``, in one line naming the first line that differs."""
    written = raw.splitlines()
    rewritten = again.splitlines()
    for number, (old, new) in enumerate(zip(written, rewritten), start=1):
        if old != new:
            return (f"re-serialising its JSON would change line {number} ({_clip(old)!r} would become "
                    f"{_clip(new)!r}); a notebook is rewritten only where the rest of its JSON comes "
                    f"back byte for byte (as json.dumps writes it, indentation {layout.indent})")
    return "re-serialising its JSON would change where the text ends (a layout flake8-detach cannot reproduce)"


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width] + "..."


_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]|[^\s{}\[\],:"]+')  # strings unrolled: fast on long ones


def json_source_lines(raw: str) -> dict[int, list[int]]:
    """For each cell (0-based index), the line of the `.ipynb` text holding each of its source lines.

    GitHub code scanning and PR annotations point at lines of the file's text, which for a
    notebook is JSON. nbformat stores a source as a list of line strings, one JSON line each
    when Jupyter wrote it, so each source line has its own line in the file. A source stored as
    one string sits on one JSON line: every line of that cell maps to it. The scan tokenises the
    text once (JSON strings hold no raw newline, so lines are counted between tokens).
    """
    found: dict[int, list[tuple[int, str]]] = {}
    stack: list[list[Any]] = []  # [is_object, key or index, expecting a key]
    line, last = 1, 0
    for match in _JSON_TOKEN.finditer(raw):
        start = match.start()
        line += raw.count("\n", last, start)
        last = start
        token = match.group()
        head = token[0]
        if head in "{[":
            stack.append([head == "{", None if head == "{" else 0, head == "{"])
        elif head in "}]":
            if stack:
                stack.pop()
        elif head == ",":
            if stack:
                if stack[-1][0]:
                    stack[-1][2] = True
                else:
                    stack[-1][1] += 1
        elif head == ":":
            if stack:
                stack[-1][2] = False
        elif stack and stack[-1][0] and stack[-1][2]:
            stack[-1][1] = json.loads(token) if head == '"' else token
        elif head == '"' and 3 <= len(stack) <= 4 and stack[0][1] == "cells" and stack[2][1] == "source":
            found.setdefault(stack[1][1], []).append((line, json.loads(token)))
    result: dict[int, list[int]] = {}
    for index, pieces in found.items():
        lines: list[int] = []
        for json_line, text in pieces:
            lines.extend([json_line] * max(text.count("\n") + (0 if text.endswith("\n") else 1), 1))
        result[index] = lines
    return result
