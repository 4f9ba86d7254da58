"""SARIF 2.1.0, the format GitHub code scanning (and other dashboards) ingest.

One run, whose driver lists every rule with its documentation; one result per diagnostic with a
physical location, and the fix as a text replacement where the rule has one. Columns are counted
in code points (``columnKind``), as the engine counts them.

Notebooks: SARIF has no cells, and a region is lines of the artifact's text (SARIF 2.1.0 §3.30),
which for an `.ipynb` is its JSON; GitHub code scanning shows that text around the region. So a
notebook result's region is the line of the JSON that holds the source line (nbformat stores a
source as one JSON string per line; a source stored as one string maps to that string's line),
without columns (the cell's columns are not the JSON line's), and the cell, the line and the
column in the cell are in the message and in ``properties``.

A syntax error (of a file, or of a notebook cell left out) is a result (rule ``syntax-error``, as
ruff reports ``invalid-syntax``), not a tool notification: SARIF keeps notifications for conditions of the
tool's run and results for conditions of the analysed artifact (§3.58.1), and code scanning shows
results as alerts on the file while notifications appear on no alert. A file that cannot be read
at all has no place to point at and stays a notification.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..rules import ALL_RULES, Rule
from . import INFORMATION_URI, rule_url
from .model import Report, unicode_path
from .spans import TextEdit, token_length

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
SYNTAX_ERROR_RULE = "syntax-error"


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    markdown = (
        f"**{rule.code} {rule.name}**\n\n{rule.what_it_does}\n\n### Why is this bad?\n\n{rule.why_bad}\n\n"
        f"### Example\n\n```python\n{rule.example}\n```\n\n### Use instead\n\n```python\n{rule.use_instead}\n```\n\n"
        f"Fix safety: {rule.fix_safety}\n\nAt run time: {rule.runtime_truth}\n"
    )
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": rule.what_it_does},
        "help": {"text": f"{rule.why_bad}\n\nUse instead:\n{rule.use_instead}", "markdown": markdown},
        "helpUri": rule_url(rule.code),
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["pytorch", "correctness"]},
    }


def artifact_uri(path: str) -> str:
    """A relative URI (to %SRCROOT%, the working directory) where possible, else a file URI."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            candidate = candidate.relative_to(Path.cwd())
        except ValueError:
            return candidate.as_uri()
    # The name's bytes, percent-encoded (RFC 3986): exact for names that are not UTF-8 too.
    return quote(os.fsencode(candidate.as_posix().removeprefix("./")))


def _region(edit: TextEdit) -> dict[str, int]:
    return {
        "startLine": edit.start_line,
        "startColumn": edit.start_column + 1,
        "endLine": edit.end_line,
        "endColumn": edit.end_column + 1,
    }


def render_data(report: Report) -> dict[str, Any]:
    rule_index = {rule.code: index for index, rule in enumerate(ALL_RULES)}
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for file in report.files:
        uri = artifact_uri(file.path)
        location = {"uri": uri} if uri.startswith("file:") else {"uri": uri, "uriBaseId": SRCROOT}
        if file.error is not None and file.error_position is not None:
            # A syntax error is a condition of the file, at a place in it: a result (see above).
            line, column = file.error_position
            results.append({
                "ruleId": SYNTAX_ERROR_RULE,
                "level": "error",
                "message": {"text": file.error},
                "locations": [{"physicalLocation": {
                    "artifactLocation": location, "region": {"startLine": line, "startColumn": column + 1}}}],
            })
        elif file.error is not None:
            notifications.append(
                {
                    "level": "error",
                    "message": {"text": f"{unicode_path(file.path)}: {file.error}"},
                    "locations": [{"physicalLocation": {"artifactLocation": location}}],
                }
            )
        for cell_error in file.cell_errors:
            results.append({
                "ruleId": SYNTAX_ERROR_RULE,
                "level": "error",
                "message": {"text": f"cell {cell_error.cell}: cell left out: {cell_error.describe()}"},
                "locations": [{"physicalLocation": {
                    "artifactLocation": location,
                    **({"region": {"startLine": cell_error.artifact_line}} if cell_error.artifact_line else {}),
                }}],
                "properties": {"cell": cell_error.cell, "line": cell_error.line, "column": cell_error.column},
            })
        lines = file.source.splitlines() if file.source is not None else []
        for diagnostic, fix in zip(file.diagnostics, file.rendered_fixes()):
            line_text = lines[diagnostic.line - 1] if diagnostic.line <= len(lines) else ""
            start = diagnostic.column + 1
            end = start + token_length(line_text, diagnostic.column)
            cell, line = file.location(diagnostic.line)
            region: dict[str, int] = {"startLine": line, "startColumn": start, "endLine": line, "endColumn": end}
            message = diagnostic.message
            if cell is not None:
                fix = None  # the edit is in the notebook's module text, not in its JSON
                at = (file.artifact_lines or {}).get(diagnostic.line)
                region = {"startLine": at} if at is not None else {}
                message = f"cell {cell}, line {line}, column {start}: {diagnostic.message}"
            result: dict[str, Any] = {
                "ruleId": diagnostic.code,
                "level": "error",
                "message": {"text": message},
                "locations": [{"physicalLocation": {"artifactLocation": location, **({"region": region} if region else {})}}],
            }
            if diagnostic.code in rule_index:
                result["ruleIndex"] = rule_index[diagnostic.code]
            if cell is not None:
                result["properties"] = {"cell": cell, "line": line, "column": start}
            if fix is not None:
                edit = fix.edit
                result["fixes"] = [
                    {
                        "description": {"text": fix.description},
                        "artifactChanges": [
                            {
                                "artifactLocation": location,
                                "replacements": [
                                    {"deletedRegion": _region(edit), "insertedContent": {"text": edit.new_text}}
                                ],
                            }
                        ],
                    }
                ]
            results.append(result)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "flake8-detach",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule_descriptor(rule) for rule in ALL_RULES],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [
            {
                # A syntax error is a result (above), but the run did not analyse everything.
                "executionSuccessful": not report.errors and not any(file.cell_errors for file in report.files),
                "toolExecutionNotifications": notifications,
            }
        ],
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(report: Report) -> str:
    return json.dumps(render_data(report), indent=2) + "\n"
