"""What one run of `check` found, per file, before any format writes it."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..diagnostics import Diagnostic


@dataclass
class FileReport:
    path: str  # as the user named it (or found under a folder they named), for display
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # The analysed tree, kept so formats can render fixes; None when screened out or unreadable.
    module: cst.Module | None = None
    source: str | None = None
    error: str | None = None  # one line: why the file could not be checked


@dataclass
class Report:
    files: list[FileReport] = field(default_factory=list)

    @property
    def diagnostic_count(self) -> int:
        return sum(len(file.diagnostics) for file in self.files)

    @property
    def errors(self) -> list[FileReport]:
        return [file for file in self.files if file.error is not None]

    def exit_code(self) -> int:
        """0 clean, 1 diagnostics, 2 when a file could not be checked (the run is incomplete)."""
        if self.errors:
            return 2
        return 1 if self.diagnostic_count else 0
