"""The engine's output: what a rule found, where, how it could be fixed, or why it could not look.

libcst is named in annotations only: the results cache and the reports build Diagnostics for
files that never needed the engine, and must not pay libcst's import for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


class AnalysisError(Exception):
    """The file could not be analysed (libcst cannot parse it, or it is too deeply nested)."""

# Where a message names another place (the call that passes the value). Filled per front: a
# file says `line 48`, a notebook `cell 6, line 4`, so the message keeps it unfilled as well.
RELATED_PLACE = "{related}"


def line_place(line: int) -> str:
    """How a message names a line of a plain file."""
    return f"line {line}"


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
    message: str  # may hold RELATED_PLACE, filled with where `related` is
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
    # The message with RELATED_PLACE unfilled, so a notebook front can name the cell instead.
    template: str | None = field(default=None, compare=False, repr=False)

    def placed(self, place: Callable[[int], str]) -> Diagnostic:
        """The diagnostic with its related place named by ``place`` (module line -> words)."""
        if self.template is None or self.related is None:
            return self
        return replace(self, message=self.template.replace(RELATED_PLACE, place(self.related[0])))

    def sort_key(self) -> tuple[int, int, str]:
        return (self.line, self.column, self.code)
