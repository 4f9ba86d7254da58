"""Fixing files on disk for `fix` and `check --fix`: one loop, one cache, one account per file.

Each file is fixed with :func:`flake8_detach.fixing.fixer.fix_file` and comes back as a
:class:`FileFix`: what was changed (for `--diff`) and a `check`-style :class:`FileReport` of what
is left, so `fix` lists it and `check --fix` renders it in any format.

As `check` does, the loop keeps a cache (:mod:`flake8_detach.sources.cache`): a file that a run left with
nothing (more) to fix, at the same bytes, settings, fix style and unsafe flag, is not analysed
again; its entry says what is left in it. A file the run rewrote is stored under its new bytes.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..diagnostics import Diagnostic
from ..fixing.fixer import FixFileError, FixResult, fix_file
from ..reporting import FileReport
from ..settings import Settings
from ..sources.cache import MODE_FIX, MODE_FIX_UNSAFE, ResultsCache, read_for_cache
from ..sources.files import SourceError, decode_source
from ..sources.notebooks import NotebookError, NotebookSkipped, notebook_from_bytes
from .check import cache_kind
from .parallel import PARALLEL_MIN_FILES, map_files
from .progress import Progress


@dataclass
class FileFix:
    """One file after fixing: what is left in it, and what changed (or would change)."""

    report: FileReport  # detached (no libcst tree): the remaining diagnostics, or why it failed
    applied: int = 0  # fixes applied (in a dry run: that would be)
    # (label, old text, new text) per change: the file, or each changed cell of a notebook.
    changes: list[tuple[str, str, str]] = field(default_factory=list)
    hard_linked: bool = False  # rewritten by a rename: its other hard links keep the old text
    # Could not be read, decoded or written (the others' errors are about the text: a syntax error).
    unreadable: bool = False
    # A notebook whose fixed JSON would not round-trip: why a run that writes would refuse it.
    unwritable: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def fix_paths(
    work: list[tuple[Path, Settings]],
    *,
    unsafe: bool,
    write: bool,
    cache: ResultsCache | None = None,
    progress: Progress | None = None,
    jobs: int = 1,
    folders: Mapping[Path, Path] | None = None,
) -> list[FileFix]:
    """Fix each file with its settings, in order (in ``jobs`` processes when that pays off);
    ``write=False`` changes nothing on disk. ``folders``: the folder given on the command line
    that each walked file was found in; a symlink there to a file outside it is not written."""
    fix = functools.partial(_fix_job, unsafe=unsafe, write=write, cache=cache, folders=folders or {})
    done = map_files(fix, work, jobs, progress)
    in_workers = jobs > 1 and len(work) >= PARALLEL_MIN_FILES  # their writes are not counted here
    if cache is not None and (cache.written or in_workers):
        cache.prune()
    return done


def _fix_job(job: tuple[Path, Settings], *, unsafe: bool, write: bool, cache: ResultsCache | None,
             folders: Mapping[Path, Path]) -> FileFix:
    return _fix_one(job[0], job[1], unsafe=unsafe, write=write, cache=cache, folder=folders.get(job[0]))


def _fix_one(path: Path, settings: Settings, *, unsafe: bool, write: bool, cache: ResultsCache | None,
             folder: Path | None = None) -> FileFix:
    mode = MODE_FIX_UNSAFE if unsafe else MODE_FIX
    data = read_for_cache(path)
    key = cache.key(data, cache_kind(path), settings, mode) if cache is not None and data is not None else None
    if cache is not None and key is not None:
        hit = cache.get(key, str(path), data)
        if hit is not None:
            if hit.cells is None and data is not None:
                try:  # as check's hits: a .py file's source is its bytes, decoded again
                    hit.source = decode_source(data, str(path))
                except SourceError:
                    pass
            return FileFix(hit)
    links = _link_count(path)
    from ..place import located

    try:
        with located(path):  # the engine reads the file's project (analysis/project.py)
            result = fix_file(path, settings, unsafe=unsafe, write=write, data=data, folder=folder)
    except FixFileError as error:
        return FileFix(FileReport(str(path), error=str(error)), unreadable=True)
    settled = not result.remaining or not _fixable(result.remaining, unsafe)  # fixing again would change nothing
    report = left_over(path, result)
    if report.cells is not None and report.diagnostics:
        report.artifact_lines = _artifact_lines(path, result, data, report)
    fixed = FileFix(report, applied=len(result.applied) if result.changed else 0, changes=changes_of(path.as_posix(), result),
                    hard_linked=links > 1 and result.changed and write, unwritable=result.unwritable)
    if cache is not None and settled:
        if not result.changed and key is not None:
            cache.put(key, report)
        elif result.written is not None:
            cache.put(cache.key(result.written, cache_kind(path), settings, mode), report)
    return fixed


def left_over(path: Path, result: FixResult) -> FileReport:
    """What is left in the fixed file, as `check` reports a file (fixes rendered, no tree)."""
    report = FileReport(
        str(path),
        diagnostics=list(result.remaining),
        module=result.module,
        source=result.source,
        error=result.error,
        internal=result.internal,
        error_position=result.error_position,
        cells=result.cells,
        cell_errors=list(result.cell_errors),
        skipped=result.skipped,
    )
    return report.detached(with_fixes=True)


def _artifact_lines(path: Path, result: FixResult, data: bytes | None, report: FileReport) -> dict[int, int] | None:
    """A notebook's diagnostics' lines in its JSON as it now is (written, would be, or unchanged),
    as `check` finds them, so SARIF and GitHub point into the `.ipynb` after `check --fix` too."""
    if result.written is not None:
        text = result.written
    elif result.changed:
        text = result.notebook_text.encode("utf-8") if result.notebook_text is not None else b""
    else:
        text = data or b""
    try:
        notebook = notebook_from_bytes(text, str(path))
    except (NotebookError, NotebookSkipped):
        return None
    if notebook.line_map != report.cells:
        return None
    return notebook.artifact_lines(diagnostic.line for diagnostic in report.diagnostics)


def changes_of(name: str, result: FixResult) -> list[tuple[str, str, str]]:
    """(label, old, new) per change of the file ``name``: the whole text, or each changed cell."""
    if not result.changed:
        return []
    if result.cell_changes is not None:  # a notebook: one change per cell, numbered as Jupyter shows them
        return [(f"{name}:cell {cell}", old, new) for cell, (old, new) in sorted(result.cell_changes.items())]
    return [(name, result.original, result.source)]


def _link_count(path: Path) -> int:
    """How many hard links the file has (1 when that cannot be told: reading it will say why)."""
    try:
        return path.stat().st_nlink
    except OSError:
        return 1


def write_diff(changes: list[tuple[str, str, str]], out: TextIO) -> None:
    """Unified diffs (`a/label`, `b/label`), as `patch -p1` and `git apply` read them.

    Lines are cut at `\\n` only, as those tools cut them: a CR (a file with lone CR line
    endings is one long line to them), a form feed or a CRLF's CR stays inside its line, so
    the patch applies to the file's bytes as they are.
    """
    for label, old, new in changes:
        what = "cell" if label.rpartition(":")[2].startswith("cell ") else "file"  # a notebook's: `x.ipynb:cell 3`
        out.writelines(_with_final_newlines(difflib.unified_diff(
            diff_lines(old), diff_lines(new), fromfile=f"a/{label}", tofile=f"b/{label}",
        ), what))


def diff_lines(text: str) -> list[str]:
    """``text`` cut after each `\\n` (not at CR, form feed or the other breaks `splitlines` knows)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _with_final_newlines(lines: Iterable[str], what: str) -> Iterator[str]:
    """A last line without a newline (a cell's always): end it with one, and the marker `diff` writes."""
    for line in lines:
        yield line if line.endswith("\n") else f"{line}\n\\ No newline at end of {what}\n"


def _fixable(remaining: list[Diagnostic], unsafe: bool) -> bool:
    """Whether another pass would fix any of ``remaining`` (their tree is loaded, so libcst is)."""
    from ..fixing.passes import choose_fixes

    return bool(choose_fixes(remaining, unsafe))
