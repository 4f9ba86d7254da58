"""Machine-readable output: one JSON document with every diagnostic and every unreadable file.

Lines and columns are 1-based (as in the text format), `end_column` is exclusive.
"""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from ..rules import RULES_BY_CODE
from . import rule_url
from .model import Report, unicode_path
from .spans import TextEdit, token_length


def _edit_json(edit: TextEdit) -> dict[str, Any]:
    return {
        "start": {"line": edit.start_line, "column": edit.start_column + 1},
        "end": {"line": edit.end_line, "column": edit.end_column + 1},
        "content": edit.new_text,
    }


def as_data(report: Report) -> dict[str, Any]:
    diagnostics: list[dict[str, Any]] = []
    for file in report.files:
        lines = file.source.splitlines() if file.source is not None else []
        for diagnostic, fix in zip(file.diagnostics, file.rendered_fixes()):
            line_text = lines[diagnostic.line - 1] if diagnostic.line <= len(lines) else ""
            rule = RULES_BY_CODE.get(diagnostic.code)
            cell, line = file.location(diagnostic.line)
            entry: dict[str, Any] = {
                "path": unicode_path(file.path),
                "cell": cell,
                "line": line,
                "column": diagnostic.column + 1,
                "end_column": diagnostic.column + 1 + token_length(line_text, diagnostic.column),
                "code": diagnostic.code,
                "name": rule.name if rule else None,
                "message": diagnostic.message,
                "url": rule_url(diagnostic.code),
                "fix": None,
            }
            if fix is not None and cell is None:  # a notebook's edits are in its module text, not its JSON
                entry["fix"] = {"description": fix.description, "safe": fix.safe, "edit": _edit_json(fix.edit)}
            diagnostics.append(entry)
    return {
        "tool": {"name": "flake8-detach", "version": __version__},
        "diagnostics": diagnostics,
        "errors": errors_data(report),
        "summary": {
            "files": len(report.files),
            "diagnostics": report.diagnostic_count,
            "errors": report.error_count,
        },
    }


def errors_data(report: Report) -> list[dict[str, Any]]:
    """What could not be checked: whole files, and notebook cells left out (positioned in the cell)."""
    errors: list[dict[str, Any]] = []
    for file in report.files:
        if file.error is not None:
            line, column = (None, None) if file.error_position is None else file.error_position
            errors.append({"path": unicode_path(file.path), "cell": None, "line": line,
                           "column": None if column is None else column + 1, "message": file.error})
        errors.extend({"path": unicode_path(file.path), "cell": error.cell, "line": error.line, "column": error.column,
                       "message": error.describe()} for error in file.cell_errors)
    return errors


def render(report: Report) -> str:
    return json.dumps(as_data(report), indent=2) + "\n"
