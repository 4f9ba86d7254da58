"""What `check` found in a file, or what `fix` left in it, kept between runs so that unchanged
files cost a read and a hash.

As ruff and mypy do, a result is keyed by everything that decides it: the file's bytes, its kind
(a notebook reads differently), the settings, the mode (`check`, or `fix` with or without unsafe
fixes), and the version of the code that produced it (the package's version and a fingerprint of
its modules, so an edited checkout never reads a stale result). One small JSON file per result,
written to a temporary name and renamed into place, so concurrent runs never see half an entry.
A cache that cannot be read or written is no cache: the run goes on and computes.

The cache owns only what it made. Everything it writes lies in one dedicated folder,
``<cache dir>/flake8-detach-v1/`` (:data:`SUBFOLDER`), which holds its own ``CACHEDIR.TAG`` and a
``.gitignore`` of ``*`` (git applies a nested ``.gitignore`` to its own folder only, so
``--cache-dir .`` hides nothing of the user's); nothing is written beside it, and pruning walks only
that folder and deletes only files named as the cache names its entries.

An entry is never trusted as it is: it is read only when it is a regular file (not a link, a FIFO
or a device, opened without following links and without blocking) under a shard folder that is
itself no link, and of a bounded size; then it is checked field by field (types, ranges, codes of
the catalog, lines within the file, fixes one per diagnostic) and must name the key it is stored
under. Any doubt is a miss: the file is computed again and its entry overwritten.

What this does not do: tell an honest entry from a well-formed lie. Whoever can write the cache
folder can write an entry that says "nothing found" for the key of a file that has findings, as
they could edit that file or the configuration; the cache is as trusted as the checkout it sits in
(a CI cache restored from an untrusted branch is untrusted input: use ``--no-cache`` there).
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat as stat_module
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..diagnostics import Diagnostic
from ..reporting.model import FileReport, RenderedFix
from ..reporting.spans import TextEdit
from ..settings import Settings
from .files import SourceError, read_file_bytes, size_limit
from .writing import replace_file

try:  # hashlib's own import loads OpenSSL for algorithms unused here: 5 ms of every warm run
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without CPython's module
    from hashlib import blake2b

DEFAULT_DIRECTORY = ".flake8_detach_cache"
DIRECTORY_VARIABLE = "FLAKE8_DETACH_CACHE_DIR"
# The folder inside the cache directory that holds all the cache writes: a name no user folder
# is likely to have, versioned so that a new layout never reads (or prunes) an old one's files.
SUBFOLDER = "flake8-detach-v1"
MAX_BYTES = 64 * 2**20  # disk usage; past this, the oldest entries go until a quarter is free
MAX_ENTRY_BYTES = 16 * 2**20  # larger entries are neither written nor read
FORMAT = "3"  # bump when an entry's layout changes
GITIGNORE = "# Created by flake8-detach: its results cache, never committed.\n*\n"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by flake8-detach.\n"
                "# For information about cache directory tags, see https://bford.info/cachedir/\n")
SHARD_NAME = re.compile(r"[0-9a-f]{2}\Z")
ENTRY_NAME = re.compile(r"[0-9a-f]{38}\.json\Z")
TEMPORARY_NAME = re.compile(r"\.tmp-[A-Za-z0-9_]+\.part\Z")
STALE_TEMPORARY_SECONDS = 3600  # a temporary file this old was left by a run that was killed
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


# What an entry holds, part of its key: `check`'s diagnostics (with their fixes rendered), or
# what `fix` left in a file it had nothing (more) to fix in, with or without the unsafe fixes, or
# the flake8 plugin's diagnostics.
MODE_CHECK = "check"
MODE_FIX = "fix"
MODE_FIX_UNSAFE = "fix --unsafe-fixes"
MODE_FLAKE8 = "flake8"  # the flake8 plugin's diagnostics (no fixes), keyed by the text flake8 decoded


def default_directory() -> Path:
    return Path(os.environ.get(DIRECTORY_VARIABLE) or DEFAULT_DIRECTORY)


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The version plus each module's name, size and mtime: a changed checkout is a new cache."""
    digest = blake2b(f"{__version__}\0{FORMAT}".encode(), digest_size=16)
    package = Path(__file__).parent.parent  # the whole flake8_detach package, not sources/ alone
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
                       sorted(settings.converting_functions), settings.fix_style,
                       list(settings.extend_select), settings.preview])


def disk_usage(stat: os.stat_result) -> int:
    """The bytes a file takes on disk (its blocks), not its length: a small entry takes a block."""
    blocks = getattr(stat, "st_blocks", None)
    return blocks * 512 if blocks is not None else stat.st_size


def _is_real_folder(path: Path) -> bool:
    """A folder, and not a link to one (a link could send the writes anywhere)."""
    try:
        return stat_module.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


@dataclass
class ResultsCache:
    directory: Path  # the cache's own folder: <cache dir>/SUBFOLDER
    max_bytes: int = MAX_BYTES
    written: int = 0

    @classmethod
    def open(cls, directory: Path, max_bytes: int = MAX_BYTES) -> ResultsCache | None:
        """The cache in ``directory``/SUBFOLDER (made with its CACHEDIR.TAG and .gitignore), or
        None if it cannot be made or is not a plain folder."""
        own = directory / SUBFOLDER
        try:
            directory.mkdir(parents=True, exist_ok=True)
            try:
                own.mkdir()
            except FileExistsError:
                pass
            if not _is_real_folder(own):
                return None
            for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
                marker = own / name
                if not os.path.lexists(marker):
                    _write_atomically(marker, text)
        except OSError:
            return None
        return cls(own, max_bytes)

    def key(self, data: bytes, kind: str, settings: Settings, mode: str) -> str:
        """The entry of one file's result; ``mode`` names what was computed (see the MODE_ names)."""
        digest = blake2b(digest_size=20)
        for part in (code_fingerprint(), kind, settings_key(settings), mode):
            digest.update(part.encode())
            digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def witnessed_key(self, data: bytes, suffix: str, settings: Settings, mode: str) -> str:
        """The entry of a file's result kept with its witness: as :meth:`key`, with no project
        fingerprint in the kind (the witness says when the result still holds: analysis/witness.py)."""
        return self.key(data, f"{suffix}\0witnessed", settings, mode)

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key[2:]}.json"

    def get(self, key: str, path: str, data: bytes | None = None) -> FileReport | None:
        """The report stored under ``key``, named ``path``; None when absent, unreadable or in any
        way doubtful. ``data``, the file's bytes, bounds the lines and columns the entry may name."""
        found = self.get_witnessed(key, path, data)
        return None if found is None else found[0]

    def get_witnessed(self, key: str, path: str, data: bytes | None = None) -> tuple[FileReport, Any] | None:
        """As :meth:`get`, with the witness stored beside the report (None: none was), as read:
        whoever replays it checks it (analysis/witness.py)."""
        entry = self._entry(key)
        if not _is_real_folder(entry.parent):
            return None
        try:
            handle = os.open(entry, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_BINARY)
        except OSError:
            return None
        try:
            stat = os.fstat(handle)
            if not stat_module.S_ISREG(stat.st_mode) or stat.st_size > MAX_ENTRY_BYTES:
                return None
            chunks = []
            size = 0
            while size <= stat.st_size:
                chunk = os.read(handle, max(stat.st_size + 1 - size, 1))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if size > MAX_ENTRY_BYTES:
                return None
            try:
                stored = json.loads(b"".join(chunks).decode("utf-8"))
                witness = stored.pop("witness", None) if type(stored) is dict else None
                report = report_from_data(stored, path, key, data, Path(path).suffix == ".ipynb")
            except Exception:  # noqa: BLE001 - whatever is wrong with an entry, it is a miss
                return None
            try:
                os.utime(handle if os.utime in os.supports_fd else entry)  # recently used: pruned last
            except OSError:
                pass
            return report, witness
        except OSError:
            return None
        finally:
            os.close(handle)

    def get_if_witnessed(self, key: str, path: str, data: bytes, holds: Callable[[Any], bool]) -> FileReport | None:
        """The report stored under ``key`` with a witness, when ``holds(witness)``: the project
        answers every question of the stored analysis as it did then (analysis/witness.py)."""
        found = self.get_witnessed(key, path, data)
        if found is None or found[1] is None or not holds(found[1]):
            return None
        return found[0]

    def put(self, key: str, report: FileReport, witness: list[Any] | None = None) -> None:
        """Store a detached report (no libcst tree), with the witness of what its analysis asked
        the project when given; internal errors are never kept."""
        if report.internal:
            return
        entry = self._entry(key)
        stored = report_to_data(report, key)
        if witness is not None:
            stored["witness"] = witness
        text = json.dumps(stored, separators=(",", ":"))
        if len(text) > MAX_ENTRY_BYTES:
            return
        try:
            try:
                entry.parent.mkdir()
            except FileExistsError:
                pass
            if not _is_real_folder(entry.parent):
                return  # a link (or a file) where a shard folder belongs: never written through
            self.written += _write_atomically(entry, text)
        except OSError:
            return

    def prune(self) -> int:
        """Delete the oldest entries while the cache's disk usage is over its bound; returns how
        many went. Only the cache's own folder is walked, and only files named as its entries (and
        its stale temporary files) are ever deleted."""
        import time

        entries: list[tuple[float, int, str]] = []
        total = 0
        stale = time.time() - STALE_TEMPORARY_SECONDS
        try:
            with os.scandir(self.directory) as folders:
                shards = [folder.path for folder in folders
                          if SHARD_NAME.match(folder.name) and folder.is_dir(follow_symlinks=False)]
            for shard in shards:
                with os.scandir(shard) as items:
                    for item in items:
                        if not item.is_file(follow_symlinks=False):
                            continue
                        if ENTRY_NAME.match(item.name):
                            stat = item.stat(follow_symlinks=False)
                            entries.append((stat.st_mtime, disk_usage(stat), item.path))
                            total += disk_usage(stat)
                        elif TEMPORARY_NAME.match(item.name):
                            stat = item.stat(follow_symlinks=False)
                            if stat.st_mtime < stale:
                                _unlink(item.path)
        except OSError:
            return 0
        if total <= self.max_bytes:
            return 0
        removed = 0
        for _, size, entry in sorted(entries, key=lambda item: item[0]):
            if total <= self.max_bytes * 3 // 4:
                break
            if not _unlink(entry):
                continue  # another run pruned it first
            total -= size
            removed += 1
        return removed


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def read_for_cache(path: Path) -> bytes | None:
    """The file's bytes to hash, or None (not a regular file, unreadable, too large): uncached."""
    try:
        return read_file_bytes(path, size_limit(path))
    except SourceError:
        return None


def _write_atomically(target: Path, text: str) -> int:
    """Write an entry through a temporary file and a rename: readers see all of it or nothing.
    Not fsynced: a lost entry is recomputed."""
    data = text.encode("utf-8")
    replace_file(target, data, prefix=".tmp-", suffix=".part", durable=False)
    return len(data)


def report_to_data(report: FileReport, key: str) -> dict[str, Any]:
    fixes = report.fixes if report.fixes is not None else [None] * len(report.diagnostics)
    return {
        "key": key,  # an entry copied under another file's name is not that file's result
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


FIELDS = frozenset(("key", "diagnostics", "fixes", "error", "error_position", "cells", "cell_errors",
                    "artifact_lines", "skipped", "source"))
UNBOUNDED = 2**62


class _Doubt(ValueError):
    """Something in an entry that the cache never writes: the entry is a miss."""


def _int(value: object, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise _Doubt(f"not an integer in [{low}, {high}]: {value!r}")
    return value


def _text(value: object) -> str:
    if type(value) is not str:
        raise _Doubt(f"not a string: {value!r}")
    value.encode("utf-8")  # a lone surrogate (JSON allows "\ud800") could not be printed
    return value


def _optional_text(value: object) -> str | None:
    return None if value is None else _text(value)


def _optional_int(value: object, low: int, high: int) -> int | None:
    return None if value is None else _int(value, low, high)


def _record(value: object, size: int) -> list[Any]:
    if type(value) is not list or len(value) != size:
        raise _Doubt(f"not a list of {size}: {value!r}")
    return value


def _records(value: object, size: int) -> list[list[Any]]:
    if type(value) is not list:
        raise _Doubt(f"not a list: {value!r}")
    return [_record(item, size) for item in value]


def _line_count(text: bytes | str) -> int:
    """At least the number of lines of ``text`` (every kind of line break counted)."""
    if isinstance(text, bytes):
        return text.count(b"\n") + text.count(b"\r") + 1
    return text.count("\n") + text.count("\r") + 1


def report_from_data(data: object, path: str, key: str | None = None, content: bytes | None = None,
                     notebook: bool | None = None) -> FileReport:
    """The report an entry holds, checked field by field first: anything the cache would not
    have written raises ValueError. ``key`` must be the one the entry names; ``content`` (the
    file's bytes) bounds its lines and columns; ``notebook`` says which kind of file it is for."""
    from ..catalog import RULE_CODES  # no libcst: the screen's table of the rules

    if type(data) is not dict or set(data) != FIELDS:
        raise _Doubt("not an entry")
    if key is not None and data["key"] != key:
        raise _Doubt("an entry stored under another key")
    source = _optional_text(data["source"])
    cells_data = data["cells"]
    if (cells_data is None) != (source is None) or (notebook is False and source is not None):
        raise _Doubt("a notebook's entry for a .py file")
    # The lines and columns positions may name: within the module's text (a notebook's assembled
    # source, a file's bytes), one past its end at most (Python places some syntax errors there).
    text: bytes | str | None = source if source is not None else content
    lines = _line_count(text) + 1 if text is not None else UNBOUNDED
    columns = len(text) + 1 if text is not None else UNBOUNDED
    file_lines = _line_count(content) + 1 if content is not None else UNBOUNDED
    file_size = len(content) + 1 if content is not None else UNBOUNDED

    diagnostics = []
    for code, line, column, message, related in _records(data["diagnostics"], 5):
        if code not in RULE_CODES or not _text(message).startswith(code):
            raise _Doubt(f"not a diagnostic of this tool: {code!r}")
        if related is not None:
            related_line, related_column = _record(related, 2)
            related = (_int(related_line, 1, lines), _int(related_column, 0, columns))
        diagnostics.append(Diagnostic(code, _int(line, 1, lines), _int(column, 0, columns), message, None, related))
    fixes_data = data["fixes"]
    if type(fixes_data) is not list or len(fixes_data) != len(diagnostics):
        raise _Doubt("an entry whose fixes do not match its diagnostics")
    fixes: list[RenderedFix | None] = []
    for fix in fixes_data:
        if fix is None:
            fixes.append(None)
            continue
        description, safe, edit = _record(fix, 3)
        start_line, start_column, end_line, end_column, new_text = _record(edit, 5)
        start = (_int(start_line, 1, lines), _int(start_column, 0, columns))
        end = (_int(end_line, 1, lines), _int(end_column, 0, columns))
        if type(safe) is not bool or end < start:
            raise _Doubt("not a fix")
        fixes.append(RenderedFix(_text(description), safe, TextEdit(*start, *end, _text(new_text))))
    position = data["error_position"]
    if position is not None:
        position_line, position_column = _record(position, 2)
        position = (_int(position_line, 1, lines), _int(position_column, 0, columns))
    cells = None
    if cells_data is not None:
        cells = {_int(line, 1, lines): (_int(cell, 1, file_size), _int(in_cell, 1, lines))
                 for line, cell, in_cell in _records(cells_data, 3)}
    cell_errors = [] if data["cell_errors"] == [] else _cell_errors(data["cell_errors"], file_size, file_lines)
    artifact_lines = None
    if data["artifact_lines"] is not None:
        artifact_lines = {_int(line, 1, lines): _int(at, 1, file_lines)
                          for line, at in _records(data["artifact_lines"], 2)}
    return FileReport(
        path,
        diagnostics=diagnostics,
        error=_optional_text(data["error"]),
        error_position=position,
        cells=cells,
        cell_errors=cell_errors,
        artifact_lines=artifact_lines,
        skipped=_optional_text(data["skipped"]),
        fixes=fixes,
        source=source,
    )


def _cell_errors(records: Any, file_size: int, file_lines: int) -> list[Any]:
    """The cells a notebook's entry says were left out (notebooks.py loads only for those)."""
    from .notebooks import CellError

    return [CellError(_int(cell, 1, file_size), _text(message), _optional_int(line, 1, file_size),
                      _optional_int(column, 0, file_size), _optional_int(at, 1, file_lines))
            for cell, message, line, column, at in _records(records, 5)]
