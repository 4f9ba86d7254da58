"""Output formats of `flake8-detach check`: one module per format, each with ``render(report)``.

The report is built once (:mod:`.model`); a format only decides how it is written, so a
diagnostic reads the same in a terminal, a JSON consumer, GitHub code scanning and a PR.
"""

from __future__ import annotations

import importlib

from .model import FileReport, Report
from .text import TextOptions

FORMATS: tuple[str, ...] = ("text", "json", "sarif", "github")
# Where each rule's page lives (docs/rules/DETxxx.md); diagnostics link to it (SARIF, LSP).
RULE_DOCS_BASE_URL = "https://github.com/flake8-detach/flake8-detach/blob/main/docs/rules/"
INFORMATION_URI = "https://github.com/flake8-detach/flake8-detach"


def rule_url(code: str) -> str:
    return f"{RULE_DOCS_BASE_URL}{code}.md"


def render(format_name: str, report: Report, text_options: TextOptions | None = None) -> str:
    """The whole output of one run in ``format_name`` (one of :data:`FORMATS`).

    ``text_options`` (source lines, colour) shape the text format only.
    """
    if format_name not in FORMATS:
        raise ValueError(f"unknown format {format_name!r}; choose from {', '.join(FORMATS)}")
    module = importlib.import_module(f"{__name__}.{format_name}")
    if format_name == "text" and text_options is not None:
        return str(module.render(report, text_options))
    return str(module.render(report))


__all__ = [
    "FORMATS", "INFORMATION_URI", "RULE_DOCS_BASE_URL", "FileReport", "Report", "TextOptions", "render", "rule_url",
]
