"""`# noqa` handling for the fronts flake8 does not run (the CLI, the fixer, the language server).

Same semantics as flake8: a bare `# noqa` silences every code on its line; `# noqa: DET101,E501`
silences the codes named (a prefix such as `DET1` counts, as in flake8).
"""

from __future__ import annotations

import re

from flake8.defaults import NOQA_INLINE_REGEXP

# flake8's own pattern (not a copy of it), so every front agrees with flake8 on what a noqa
# comment is, in whatever flake8 version is installed.
NOQA_INLINE = NOQA_INLINE_REGEXP
_CODE_SEPARATOR = re.compile(r"[,\s]+")


def is_suppressed(line: str, code: str) -> bool:
    """Whether the physical line's noqa comment silences ``code``."""
    if "noqa" not in line.lower():
        return False
    # As flake8 (violation.py): only the first comment counts, and codes are case-sensitive.
    match = NOQA_INLINE.search(line)
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    return any(code.startswith(c) for c in _CODE_SEPARATOR.split(codes.strip()) if c)


def source_lines(source: str) -> list[str]:
    """Physical lines as flake8 numbers them (\\r\\n, \\r and \\n all end a line)."""
    return source.splitlines()
