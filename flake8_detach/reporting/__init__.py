"""Output formats of `flake8-detach check`: one module per format, each with ``render(report)``.

The report is built once (:mod:`.model`); a format only decides how it is written, so a
diagnostic reads the same in a terminal, a JSON consumer, GitHub code scanning and a PR.
"""

from __future__ import annotations

import importlib

from .model import FileReport, Report

FORMATS: tuple[str, ...] = ("text", "json", "sarif", "github")
# Where each rule's page lives (docs/rules/DETxxx.md); diagnostics link to it (SARIF, LSP).
RULE_DOCS_BASE_URL = "https://github.com/flake8-detach/flake8-detach/blob/main/docs/rules/"
INFORMATION_URI = "https://github.com/flake8-detach/flake8-detach"


def rule_url(code: str) -> str:
    return f"{RULE_DOCS_BASE_URL}{code}.md"


def render(format_name: str, report: Report) -> str:
    """The whole output of one run in ``format_name`` (one of :data:`FORMATS`)."""
    if format_name not in FORMATS:
        raise ValueError(f"unknown format {format_name!r}; choose from {', '.join(FORMATS)}")
    module = importlib.import_module(f"{__name__}.{format_name}")
    return str(module.render(report))


__all__ = ["FORMATS", "INFORMATION_URI", "RULE_DOCS_BASE_URL", "FileReport", "Report", "render", "rule_url"]
