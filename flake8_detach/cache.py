"""What `check` found in a file, or what `fix` left in it, kept between runs so that unchanged
files cost a read and a hash.

As ruff and mypy do, a result is keyed by everything that decides it: the file's bytes, its kind
(a notebook reads differently), the settings, the mode (`check`, or `fix` with or without unsafe
fixes), and the version of the code that produced it (the package's version and a fingerprint of
its modules, so an edited checkout never reads a stale result). One small JSON file per result,
written to a temporary name and renamed into place, so concurrent runs never see half an entry;
the folder holds its own ``.gitignore`` and ``CACHEDIR.TAG`` and is pruned, oldest first, once it
grows past its bound. A cache that cannot be read or written is no cache: the run goes on and
computes.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .diagnostics import Diagnostic
from .notebooks import MAX_NOTEBOOK_BYTES, CellError
from .reporting.model import FileReport, RenderedFix
from .reporting.spans import TextEdit
from .settings import Settings

try:  # hashlib's own import loads OpenSSL for algorithms unused here: 5 ms of every warm run
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without CPython's module
    from hashlib import blake2b

DEFAULT_DIRECTORY = ".flake8_detach_cache"
DIRECTORY_VARIABLE = "FLAKE8_DETACH_CACHE_DIR"
MAX_BYTES = 64 * 2**20  # past this, the oldest entries go until a quarter is free
FORMAT = "2"  # bump when an entry's layout changes
GITIGNORE = "# Created by flake8-detach: its results cache, never committed.\n*\n"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by flake8-detach.\n"
                "# For information about cache directory tags, see https://bford.info/cachedir/\n")


# What an entry holds, part of its key: `check`'s diagnostics (with their fixes rendered), or
# what `fix` left in a file it had nothing (more) to fix in, with or without the unsafe fixes.
MODE_CHECK = "check"
MODE_FIX = "fix"
MODE_FIX_UNSAFE = "fix --unsafe-fixes"


def default_directory() -> Path:
    return Path(os.environ.get(DIRECTORY_VARIABLE) or DEFAULT_DIRECTORY)


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The version plus each module's name, size and mtime: a changed checkout is a new cache."""
    digest = blake2b(f"{__version__}\0{FORMAT}".encode(), digest_size=16)
    package = Path(__file__).parent
    for module in sorted(package.rglob("*.py")):
        try:
            stat = module.stat()
        except OSError:
            continue
        digest.update(f"{module.relative_to(package)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def settings_key(settings: Settings) -> str:
    """The settings as a canonical string (frozensets sorted: their order varies per process)."""
    return json.dumps([list(settings.select), list(settings.ignore), sorted(settings.no_grad_contexts),
                       sorted(settings.converting_functions), settings.fix_style])


@dataclass
class ResultsCache:
    directory: Path
    max_bytes: int = MAX_BYTES
    written: int = 0

    @classmethod
    def open(cls, directory: Path, max_bytes: int = MAX_BYTES) -> ResultsCache | None:
        """The cache in ``directory`` (created with its .gitignore), or None if it cannot be made."""
        try:
            directory.mkdir(parents=True, exist_ok=True)
            for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
                marker = directory / name
                if not marker.exists():
                    _write_atomically(marker, text)
        except OSError:
            return None
        return cls(directory, max_bytes)

    def key(self, data: bytes, kind: str, settings: Settings, mode: str) -> str:
        """The entry of one file's result; ``mode`` names what was computed (see the MODE_ names)."""
        digest = blake2b(digest_size=20)
        for part in (code_fingerprint(), kind, settings_key(settings), mode):
            digest.update(part.encode())
            digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key[2:]}.json"

    def get(self, key: str, path: str) -> FileReport | None:
        """The report stored under ``key``, named ``path``; None when absent or unreadable."""
        entry = self._entry(key)
        try:
            stored = json.loads(entry.read_text(encoding="utf-8"))
            report = report_from_data(stored, path)
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None
        try:
            os.utime(entry)  # recently used: pruned last
        except OSError:
            pass
        return report

    def put(self, key: str, report: FileReport) -> None:
        """Store a detached report (no libcst tree); internal errors are never kept."""
        if report.internal:
            return
        entry = self._entry(key)
        try:
            entry.parent.mkdir(exist_ok=True)
            self.written += _write_atomically(entry, json.dumps(report_to_data(report), separators=(",", ":")))
        except OSError:
            return

    def prune(self) -> int:
        """Delete the oldest entries while the cache is over its bound; returns how many went."""
        entries: list[tuple[float, int, Path]] = []
        total = 0
        try:
            for folder in os.scandir(self.directory):
                if not folder.is_dir(follow_symlinks=False) or len(folder.name) != 2:
                    continue
                for item in os.scandir(folder.path):
                    if item.name.endswith(".json"):
                        stat = item.stat(follow_symlinks=False)
                        entries.append((stat.st_mtime, stat.st_size, Path(item.path)))
                        total += stat.st_size
        except OSError:
            return 0
        if total <= self.max_bytes:
            return 0
        removed = 0
        for _, size, entry in sorted(entries, key=lambda item: item[0]):
            if total <= self.max_bytes * 3 // 4:
                break
            try:
                entry.unlink()
            except OSError:
                continue  # another run pruned it first
            total -= size
            removed += 1
        return removed


def read_for_cache(path: Path) -> bytes | None:
    """The file's bytes to hash, or None (unreadable, or a notebook too big to read): uncached."""
    try:
        if path.suffix == ".ipynb" and path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _write_atomically(target: Path, text: str) -> int:
    """Write to a temporary file beside ``target`` and rename it over: readers see all or nothing."""
    import tempfile  # a run whose files are all cached writes nothing: it need not load this

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return len(text)


def report_to_data(report: FileReport) -> dict[str, Any]:
    fixes = report.fixes if report.fixes is not None else [None] * len(report.diagnostics)
    return {
        "diagnostics": [[d.code, d.line, d.column, d.message, list(d.related) if d.related else None]
                        for d in report.diagnostics],
        "fixes": [None if fix is None else [fix.description, fix.safe,
                                            [fix.edit.start_line, fix.edit.start_column, fix.edit.end_line,
                                             fix.edit.end_column, fix.edit.new_text]]
                  for fix in fixes],
        "error": report.error,
        "error_position": list(report.error_position) if report.error_position else None,
        "cells": [[line, cell, in_cell] for line, (cell, in_cell) in report.cells.items()]
        if report.cells is not None else None,
        "cell_errors": [[e.cell, e.message, e.line, e.column, e.artifact_line] for e in report.cell_errors],
        "artifact_lines": [[line, at] for line, at in report.artifact_lines.items()]
        if report.artifact_lines is not None else None,
        "skipped": report.skipped,
        # A notebook's source is assembled from its cells: kept, where a .py file is decoded again.
        "source": report.source if report.cells is not None else None,
    }


def report_from_data(data: dict[str, Any], path: str) -> FileReport:
    diagnostics = [Diagnostic(code, line, column, message, None, tuple(related) if related else None)
                   for code, line, column, message, related in data["diagnostics"]]
    fixes = [None if fix is None else RenderedFix(fix[0], fix[1], TextEdit(*fix[2])) for fix in data["fixes"]]
    if len(fixes) != len(diagnostics):
        raise ValueError("an entry whose fixes do not match its diagnostics")
    position = data["error_position"]
    cells = data["cells"]
    return FileReport(
        path,
        diagnostics=diagnostics,
        error=data["error"],
        error_position=(position[0], position[1]) if position else None,
        cells={line: (cell, in_cell) for line, cell, in_cell in cells} if cells is not None else None,
        cell_errors=[CellError(*entry) for entry in data["cell_errors"]],
        artifact_lines={line: at for line, at in data["artifact_lines"]} if data["artifact_lines"] is not None else None,
        skipped=data["skipped"],
        fixes=fixes,
        source=data["source"],
    )
