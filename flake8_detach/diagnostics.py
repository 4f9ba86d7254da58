"""The engine's output: what a rule found, where, how it could be fixed, or why it could not look.

libcst is named in annotations only: the results cache and the reports build Diagnostics for
files that never needed the engine, and must not pay libcst's import for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


class AnalysisError(Exception):
    """The file could not be analysed (libcst cannot parse it, or it is too deeply nested)."""


@dataclass(frozen=True)
class Fix:
    """Replace ``node`` with ``replacement`` in the module; ``safe`` fixes keep behaviour."""

    node: cst.CSTNode
    replacement: cst.CSTNode
    safe: bool
    description: str


@dataclass(frozen=True)
class Finding:
    """A rule's report before positions are known (they are computed once per file)."""

    code: str
    node: cst.CSTNode  # the token to point at: `numpy` in `out.numpy()`
    message: str  # may hold `{related_line}`, filled with the line of `related`
    fix: Fix | None = None
    related: cst.CSTNode | None = None  # e.g. the call site that passed the hazardous value


@dataclass(frozen=True)
class Diagnostic:
    code: str
    line: int  # 1-based
    column: int  # 0-based, in characters
    message: str  # starts with the code, flake8 style
    fix: Fix | None = None
    # Where the related place is (the call that passes the value): (1-based line, 0-based column).
    related: tuple[int, int] | None = None

    def sort_key(self) -> tuple[int, int, str]:
        return (self.line, self.column, self.code)
