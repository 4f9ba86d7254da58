"""flake8's default format: `path:line:col: CODE message`, columns 1-based as flake8 prints them.

As ruff marks them, a diagnostic that `--fix` fixes reads `CODE [*] message` (from its rendered
fix's safety, :meth:`FileReport.rendered_fixes`, so cached reports mark the same); `check` adds
the summary lines (:mod:`.summary`).

With ``show_source`` each line is followed by the source line and a caret under the reported
token (flake8's `--show-source`); with ``color`` the location, code and caret are coloured as
ruff and flake8 colour them on a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import FileReport, Report
from .spans import token_length
from .summary import fixable

BOLD, RED, CYAN, RESET = "\033[1m", "\033[31m", "\033[36m", "\033[m"


@dataclass(frozen=True)
class TextOptions:
    show_source: bool = False
    color: bool = False
    unsafe_fixes: bool = False  # unsafe fixes count as fixable: they get the `[*]` mark too


def _paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{RESET}" if color else text


def _cell_place(file: FileReport, line: int) -> str:
    """`path:cell 3:line` (notebooks.py is loaded only for a notebook's report)."""
    from ..sources.notebooks import display_location

    return display_location(file.path, file.cells, line)


def render(report: Report, options: TextOptions = TextOptions()) -> str:
    out: list[str] = []
    for file in report.files:
        lines = file.source.splitlines() if options.show_source and file.source is not None else []
        for diagnostic, fix in zip(file.diagnostics, file.rendered_fixes()):
            where = f"{file.path}:{diagnostic.line}" if file.cells is None else _cell_place(file, diagnostic.line)
            location = _paint(f"{where}:{diagnostic.column + 1}:", BOLD, options.color)
            message = diagnostic.message.removeprefix(diagnostic.code)
            mark = " [*]" if fixable(None if fix is None else fix.safe, options.unsafe_fixes) else ""
            out.append(f"{location} {_paint(diagnostic.code, RED, options.color)}{mark}{message}")
            if options.show_source:
                out.extend(_source_lines(lines, diagnostic.line, diagnostic.column, options.color))
    return "".join(f"{line}\n" for line in out)


def _source_lines(lines: list[str], line: int, column: int, color: bool) -> list[str]:
    if not 0 < line <= len(lines):
        return []
    text = lines[line - 1]
    # Tabs before the token stay tabs, so the caret lines up in the terminal (as flake8 does).
    indent = "".join(char if char == "\t" else " " for char in text[:column])
    caret = "^" * token_length(text, column)
    return [text, indent + _paint(caret, RED, color)]
