"""What one run of `check` found, per file, before any format writes it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic
from .spans import TextEdit

if TYPE_CHECKING:  # a clean file's report never holds a tree: libcst loads with the engine
    import libcst as cst

    from ..sources.notebooks import CellError  # notebooks.py loads only where a notebook is read


def unicode_path(path: str) -> str:
    """``path`` as valid Unicode, for the formats that must be UTF-8 (JSON, SARIF, GitHub).

    A file name's bytes that are not UTF-8 reach us as lone surrogates (``os.fsdecode``); they are
    written as ``\\xff``, the way Python shows such bytes, instead of failing the whole report.
    """
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        pass
    try:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name decodes to
        return path.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class RenderedFix:
    """A fix as text: what formats print, and what crosses process boundaries (no libcst nodes)."""

    description: str
    safe: bool
    edit: TextEdit


@dataclass
class FileReport:
    path: str  # as the user named it (or found under a folder they named), for display
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # The analysed tree, kept so formats can render fixes; None when screened out or unreadable.
    module: cst.Module | None = None
    source: str | None = None
    error: str | None = None  # one line: why the file could not be checked
    # The error is a bug of ours (a rule raised), not a property of the file: exit status 2.
    internal: bool = False
    # Where a syntax error is, when Python says: (1-based line, 0-based column). Editors show it.
    error_position: tuple[int, int] | None = None
    # A notebook: module line -> (cell number, line in the cell); diagnostics stay in module lines.
    cells: dict[int, tuple[int, int]] | None = None
    # A notebook: the cells left out of the analysis because they do not parse.
    cell_errors: list[CellError] = field(default_factory=list)
    # A notebook: module line -> line of the `.ipynb` text holding it (the diagnostics' lines),
    # for formats that can only point at the file's text (SARIF, GitHub annotations).
    artifact_lines: dict[int, int] | None = None
    # Why a well-formed file was not checked (a notebook whose kernel is not Python): no failure.
    skipped: str | None = None
    # One entry per diagnostic once rendered (see rendered_fixes); None: not rendered yet.
    fixes: list[RenderedFix | None] | None = None
    # What the analysis asked its project (analysis/witness.py), for the results cache; None: no
    # project was asked (no place), or the file was not analysed.
    witness: list[Any] | None = None

    def location(self, line: int) -> tuple[int | None, int]:
        """(cell number or None, line) as the user sees the file: in-cell lines for notebooks."""
        if self.cells is None:
            return None, line
        from ..sources.notebooks import cell_location

        return cell_location(self.cells, line)

    def rendered_fixes(self) -> list[RenderedFix | None]:
        """Each diagnostic's fix as a text edit (None where it has none), computed once."""
        if self.fixes is None:
            fixable = [d.fix for d in self.diagnostics if d.fix is not None]
            edits: Iterator[TextEdit] = iter([])
            if self.module is not None and fixable:
                from .fix_spans import fix_edits  # the tree is there, so libcst already is

                edits = iter(fix_edits(self.module, fixable))
            self.fixes = [
                RenderedFix(d.fix.description, d.fix.safe, next(edits))
                if d.fix is not None and self.module is not None
                else None
                for d in self.diagnostics
            ]
        return self.fixes

    def detached(self, with_fixes: bool) -> FileReport:
        """A copy without libcst objects (picklable, small), fixes rendered first if wanted."""
        fixes: list[RenderedFix | None] = self.rendered_fixes() if with_fixes else [None] * len(self.diagnostics)
        diagnostics = [replace(d, fix=None) for d in self.diagnostics]
        return replace(self, diagnostics=diagnostics, module=None, fixes=fixes)


@dataclass
class Report:
    files: list[FileReport] = field(default_factory=list)

    @property
    def diagnostic_count(self) -> int:
        return sum(len(file.diagnostics) for file in self.files)

    @property
    def errors(self) -> list[FileReport]:
        return [file for file in self.files if file.error is not None]

    @property
    def error_count(self) -> int:
        """Files that could not be checked, and notebook cells left out because they do not parse."""
        return len(self.errors) + sum(len(file.cell_errors) for file in self.files)

    def exit_code(self) -> int:
        """0 clean; 1 diagnostics or files that could not be checked; 2 an internal error.

        As ruff and flake8 do, a file (or a notebook cell) that does not parse or cannot be read is reported and the
        run goes on: it exits 1 like any finding, so one bad file does not look like a broken
        tool. 2 stays for what is the tool's fault (and for usage and config errors).
        """
        if any(file.internal for file in self.errors):
            return 2
        return 1 if self.diagnostic_count or self.errors or any(file.cell_errors for file in self.files) else 0
