"""flake8's default format: `path:line:col: CODE message`, columns 1-based as flake8 prints them."""

from __future__ import annotations

from .model import Report


def render(report: Report) -> str:
    lines = [
        f"{file.path}:{diagnostic.line}:{diagnostic.column + 1}: {diagnostic.message}"
        for file in report.files
        for diagnostic in file.diagnostics
    ]
    return "".join(f"{line}\n" for line in lines)
