"""GitHub Actions workflow commands: each diagnostic becomes an annotation on the pull request.

https://docs.github.com/actions/reference/workflow-commands-for-github-actions#setting-an-error-message
"""

from __future__ import annotations

from .model import Report, unicode_path
from .spans import token_length


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render(report: Report) -> str:
    out: list[str] = []
    for file in report.files:
        path = _escape_property(unicode_path(file.path))
        if file.error is not None:
            where = ""
            if file.error_position is not None:
                where = f",line={file.error_position[0]},col={file.error_position[1] + 1}"
            out.append(f"::error file={path}{where},title=flake8-detach::{_escape_data(file.error)}")
        for cell_error in file.cell_errors:
            # The annotation goes on the line of the file's JSON that holds the cell's bad line.
            where = f",line={cell_error.artifact_line}" if cell_error.artifact_line is not None else ""
            text = f"cell {cell_error.cell}: cell left out: {cell_error.describe()}"
            out.append(f"::error file={path}{where},title=flake8-detach::{_escape_data(text)}")
        lines = file.source.splitlines() if file.source is not None else []
        for diagnostic in file.diagnostics:
            line_text = lines[diagnostic.line - 1] if 0 < diagnostic.line <= len(lines) else ""
            end_column = diagnostic.column + 1 + token_length(line_text, diagnostic.column)
            # The title carries the code; the message does not repeat it.
            message = diagnostic.message.removeprefix(f"{diagnostic.code} ")
            cell, line = file.location(diagnostic.line)
            if cell is not None:
                # GitHub shows a notebook's JSON, not its cells: the annotation goes on the JSON line
                # holding the source line (columns there are not the cell's), the text names the cell.
                at = (file.artifact_lines or {}).get(diagnostic.line)
                where = f",line={at}" if at is not None else ""
                out.append(f"::error file={path}{where},title={_escape_property(diagnostic.code)}::"
                           f"{_escape_data(f'cell {cell}, line {line}, column {diagnostic.column + 1}: {message}')}")
                continue
            out.append(
                f"::error file={path},line={diagnostic.line},endLine={diagnostic.line},"
                f"col={diagnostic.column + 1},endColumn={end_column},"
                f"title={_escape_property(diagnostic.code)}::{_escape_data(message)}"
            )
    return "".join(f"{line}\n" for line in out)
