"""Drop the diagnostics a `# noqa` comment silences, exactly where flake8 would.

flake8 does not look for the comment on the reported line alone: a statement continued with
backslashes or a multi-line string counts as one line, so a `# noqa` at its end silences all of
it. This module rebuilds that line mapping (flake8's ``FileProcessor._noqa_line_mapping``) and
applies :func:`flake8_detach.noqa.is_suppressed` to it, so the CLI and the language server report
what flake8 reports. A file with a ``# flake8: noqa`` line is skipped, as flake8 skips it.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence

from flake8.defaults import NOQA_FILE

from .diagnostics import Diagnostic
from .noqa import is_suppressed

# flake8's own NOQA_FILE: the comment must stand on its own line to disable the whole file.
_NOQA_FILE = NOQA_FILE


def file_is_ignored(lines: Sequence[str]) -> bool:
    return any(_NOQA_FILE.match(line) for line in lines)


def noqa_line_mapping(lines: Sequence[str]) -> dict[int, str]:
    """Map each line number to the text flake8 searches for its `# noqa` comment."""
    mapping: dict[int, str] = {}
    iterator = iter(lines)
    first_line, last_line = len(lines) + 2, -1
    try:
        for token in tokenize.generate_tokens(lambda: next(iterator, "")):
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            first_line = min(first_line, token.start[0])
            last_line = max(last_line, token.end[0])
            if token.type in (tokenize.NL, tokenize.NEWLINE):
                joined = "".join(lines[first_line - 1 : last_line])
                mapping.update(dict.fromkeys(range(first_line, last_line + 1), joined))
                first_line, last_line = len(lines) + 2, -1
    except (tokenize.TokenError, SyntaxError):
        return {}  # flake8 falls back to the physical line too
    return mapping


def unsuppressed(source: str, diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics that flake8 would still report on ``source``."""
    if not diagnostics or "noqa" not in source.lower():
        return list(diagnostics)
    lines = io.StringIO(source, newline=None).readlines()
    if file_is_ignored(lines):
        return []
    mapping = noqa_line_mapping(lines)
    kept = []
    for diagnostic in diagnostics:
        index = diagnostic.line - 1
        physical = lines[index] if 0 <= index < len(lines) else ""
        text = mapping.get(diagnostic.line, physical)
        if not is_suppressed(text, diagnostic.code):
            kept.append(diagnostic)
    return kept
