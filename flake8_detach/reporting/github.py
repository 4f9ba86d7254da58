"""GitHub Actions workflow commands: each diagnostic becomes an annotation on the pull request.

https://docs.github.com/actions/reference/workflow-commands-for-github-actions#setting-an-error-message
"""

from __future__ import annotations

from .model import Report


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render(report: Report) -> str:
    out: list[str] = []
    for file in report.files:
        path = _escape_property(file.path)
        if file.error is not None:
            out.append(f"::error file={path},title=flake8-detach::{_escape_data(file.error)}")
        for diagnostic in file.diagnostics:
            out.append(
                f"::error file={path},line={diagnostic.line},col={diagnostic.column + 1},"
                f"title={_escape_property(diagnostic.code)}::{_escape_data(diagnostic.message)}"
            )
    return "".join(f"{line}\n" for line in out)
