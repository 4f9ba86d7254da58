"""Fix source text, or a file on disk, with the rules' fixes: the front `fix`, the language
server, the runtime harness and the snapshots share.

The text is screened first, as the flake8 plugin and `check` screen it: a file no selected rule
can fire on comes back unchanged without loading the engine or libcst. What passes the screen is
parsed and fixed in passes by :mod:`flake8_detach.fixing.passes`.
"""

from __future__ import annotations

import io
import os
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..diagnostics import AnalysisError, Diagnostic
from ..place import located_path
from ..screening import worth_analysing
from ..settings import DEFAULT_SETTINGS, Settings
from ..sources.files import SourceError, read_file_bytes
from ..sources.notebooks import (
    CellError,
    NotebookError,
    NotebookSkipped,
    assemble,
    cell_number,
    notebook_from_bytes,
    placed_in_cells,
    read_notebook_bytes,
    render_notebook,
    split_cells,
)
from ..sources.writing import (
    CHANGED_ON_DISK,
    FileSnapshot,
    WriteRefused,
    read_snapshot,
    write_atomically,
)
from ..syntax import python_parse

if TYPE_CHECKING:  # the libcst passes load only for a file that passes the screen
    import libcst as cst


@dataclass
class FixResult:
    """The outcome of fixing one source text.

    ``applied`` holds the fixed diagnostics with the positions they had in the pass that fixed
    them; ``remaining`` the diagnostics of the final text that were not fixed (no fix, unsafe
    without ``unsafe=True``) and not silenced by `# noqa`. ``error`` is set, and ``source`` is
    the original text, when the file could not be analysed.
    """

    source: str
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    original: str = ""
    error: str | None = None
    # A notebook: its changed cells (cell number -> (old source, new source)), and the line map
    # of the fixed module (module line -> (cell, line in cell)) that `remaining` is positioned in.
    cell_changes: dict[int, tuple[str, str]] | None = None
    cells: dict[int, tuple[int, int]] | None = None
    skipped: str | None = None  # a well-formed file that is not ours (a notebook of another kernel)
    error_position: tuple[int, int] | None = None  # where a syntax error is: (1-based line, 0-based column)
    internal: bool = False  # the error is a bug of ours, not a property of the file
    # The fixed module, whose nodes ``remaining``'s fixes point into (None when nothing was parsed).
    module: cst.Module | None = None
    # The bytes written to disk (fix_file and fix_notebook with write=True and a change).
    written: bytes | None = None
    # A notebook: the cells left out because they do not parse (nothing in them was fixed).
    cell_errors: list[CellError] = field(default_factory=list)
    # A notebook: its fixed JSON text (None when nothing changed or it cannot be written back),
    # and why it cannot be written back (its JSON layout does not round-trip).
    notebook_text: str | None = None
    unwritable: str | None = None

    @property
    def changed(self) -> bool:
        return self.source != self.original


def fix_source(source: str, settings: Settings = DEFAULT_SETTINGS, *, unsafe: bool = False) -> FixResult:
    """Fix one file's text. Never raises on bad input: ``error`` says why nothing was done.

    A file that is not Python is an error in `check`'s words (see :mod:`.syntax`), also where no
    rule would look: `fix` must not call a file clean that `check` reports.
    """
    _, problem = python_parse(source)
    if problem is not None and (problem.final or not _libcst_reads(source)):
        return FixResult(source, original=source, error=problem.message, error_position=problem.position)
    if not worth_analysing(source, settings, in_project=located_path() is not None):
        return FixResult(source, original=source)
    try:
        from ..engine import parse
        from .passes import fix_module

        module, added, tail = _printable_module(source, parse)
        outcome = fix_module(module, settings, unsafe=unsafe)
        fixed = outcome.module.code
        if added:  # the text added to make the module printable goes again, the blank tail comes back
            if not fixed.endswith(added):
                raise AnalysisError("a fix changed the end of the file, which libcst cannot print as it was")
            fixed = fixed[:-len(added)] + tail
    except AnalysisError as error:
        return FixResult(source, original=source, error=str(error))
    except RecursionError:
        return FixResult(source, original=source, error="the file is nested too deeply to analyse")
    except Exception as error:  # noqa: BLE001 - a bug of ours must not cost the user a file or a traceback
        return FixResult(source, original=source, error=f"internal error, file left unchanged: {error!r}",
                         internal=True)
    return FixResult(fixed, outcome.applied, outcome.remaining, original=source, module=outcome.module)


# A comment line after the last one: libcst 1.9 drops the final newline after a comment that
# ends in a backslash, and a final lone CR; with a line after them it prints the file as it is.
_CLOSING_LINE = "#\n"
# What Python reads as blank: a file's tail of these holds no code.
_BLANK = " \t\f\v\r\n"


def _printable_module(source: str, parse: Callable[[str], cst.Module]) -> tuple[cst.Module, str, str]:
    """``source`` parsed so that its code prints back byte for byte: the module, the text added
    at its end for that, and the blank tail of ``source`` left out for that.

    The added text is a newline and a comment: no rule sees it and no fix touches it, so it is
    cut off the fixed text again and the tail put back. libcst 1.9 loses a blank line before a
    last line of spaces (``"x = 1\\n\\n "`` prints as ``"x = 1\\n "``), hence the tail: the
    file without it, which is the same code. A form feed starting a statement is the one case
    left refused.
    """
    body = source.rstrip(_BLANK)
    tail = source[len(body):]
    for text, added, left_out in ((source, "", ""), (source + _CLOSING_LINE, _CLOSING_LINE, ""),
                                  (body + "\n", "\n", tail), (body + "\n" + _CLOSING_LINE, "\n" + _CLOSING_LINE, tail)):
        module = parse(text)
        if module.code == text:
            return module, added, left_out
    raise AnalysisError("libcst cannot print this file back byte for byte (a form feed before a statement)")


def _libcst_reads(source: str) -> bool:
    """Whether libcst parses what this Python's ``ast`` refused (newer grammar): then it is Python."""
    from ..engine import parse

    try:
        parse(source)
    except (AnalysisError, RecursionError):
        return False
    return True


class FixFileError(Exception):
    """The file could not be read, decoded or written; the message is one line for the user."""


def read_python_bytes(data: bytes) -> tuple[str, str]:
    """Decode as Python does (BOM, coding cookie, else UTF-8), newlines untouched: (text, encoding).

    The encoding is ``utf-8-sig`` for a file with a BOM, so encoding the text back restores it.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        raise FixFileError(f"cannot decode: {str(error).splitlines()[0] if str(error) else error}") from error
    if text.encode(encoding) != data:
        raise FixFileError(f"cannot round-trip the file's bytes through {encoding}")
    return text, encoding


def _snapshot_for_writing(path: Path, data: bytes | None) -> FileSnapshot:
    """The snapshot a write will be checked against; ``data``, bytes read before, must match it."""
    try:
        snapshot = read_snapshot(path)
    except FileNotFoundError as error:  # worded as files.read_file_bytes words them
        raise FixFileError("no such file or directory") from error
    except IsADirectoryError as error:
        raise FixFileError("is a directory") from error
    except OSError as error:
        raise FixFileError(f"cannot read: {error.strerror or error}") from error
    if data is not None and snapshot.data != data:
        raise FixFileError(CHANGED_ON_DISK)
    return snapshot


def _outside(snapshot: FileSnapshot, folder: Path | None) -> str | None:
    """Why ``snapshot``'s file, found by walking ``folder``, must not be written: it lies outside."""
    if folder is None:
        return None
    root = Path(os.path.realpath(folder))
    if snapshot.path == root or root in snapshot.path.parents:
        return None
    return f"a symbolic link to {snapshot.path}, outside {folder}; not written (name the file itself to fix it)"


def fix_notebook_data(data: bytes, name: str, settings: Settings = DEFAULT_SETTINGS, *,
                      unsafe: bool = False) -> FixResult:
    """Fix a notebook's code cells from its bytes (a file's or standard input's); nothing is written.

    The cells are fixed as one module (so a fix sees the state of earlier cells) and cut back into
    cells; ``notebook_text`` is the JSON with only the fixed cells' sources changed. Where that
    JSON cannot be reproduced byte for byte elsewhere, ``unwritable`` says why, and the cells'
    changes are still there for a diff. Raises :class:`FixFileError` when it is not a notebook.
    """
    try:
        notebook = notebook_from_bytes(data, name)
    except NotebookSkipped as skipped:
        return FixResult("", original="", error=None, skipped=str(skipped))
    except NotebookError as error:
        raise FixFileError(str(error)) from error
    result = fix_source(notebook.source, settings, unsafe=unsafe)
    result.cells = notebook.line_map
    result.cell_errors = list(notebook.cell_errors)
    if result.changed and result.error is None:
        old = {cell.index: cell.text for cell in notebook.cells}
        try:
            cut = split_cells(notebook, result.source)
        except NotebookError as error:  # the fix cannot be put back into the cells without a guess
            return FixResult(notebook.source, original=notebook.source, error=str(error), cells=notebook.line_map,
                             cell_errors=list(notebook.cell_errors))
        new = {index: text for index, text in cut.items() if text != old[index]}
        result.cell_changes = {cell_number(index): (old[index], text) for index, text in new.items()}
        fixed = assemble(name, [(cell.index, new.get(cell.index, cell.text)) for cell in notebook.cells])
        result.cells = fixed.line_map if fixed.source == result.source else None
        try:
            result.notebook_text = render_notebook(notebook, new)
        except NotebookError as error:
            result.unwritable = str(error)
    if result.cells is not None:
        result.remaining = placed_in_cells(result.remaining, result.cells)
    return result


def fix_notebook(path: Path, settings: Settings = DEFAULT_SETTINGS, *, unsafe: bool = False,
                 write: bool = True, data: bytes | None = None, folder: Path | None = None) -> FixResult:
    """Fix a notebook file (from ``data``, its bytes, when already read); only its fixed cells'
    sources change, written as `.py` files are (:func:`fix_file`). A notebook whose JSON does not
    round-trip is never written (:class:`FixFileError`)."""
    try:
        data = read_notebook_bytes(path) if data is None else data
    except NotebookError as error:
        raise FixFileError(str(error)) from error
    snapshot = _snapshot_for_writing(path, data) if write else None
    result = fix_notebook_data(data, str(path), settings, unsafe=unsafe)
    if snapshot is not None and result.changed and result.error is None:
        if result.notebook_text is None:
            raise FixFileError(f"not written: {result.unwritable or 'the fixed notebook could not be rendered'}")
        _write_fixed(path, result.notebook_text.encode("utf-8"), snapshot, folder)
        result.written = result.notebook_text.encode("utf-8")
    return result


def _write_fixed(path: Path, data: bytes, snapshot: FileSnapshot, folder: Path | None) -> None:
    outside = _outside(snapshot, folder)
    if outside is not None:
        raise FixFileError(outside)
    try:
        write_atomically(path, data, snapshot)
    except WriteRefused as error:
        raise FixFileError(str(error)) from error
    except OSError as error:
        raise FixFileError(f"cannot write: {error.strerror or error}") from error


def fix_file(
    path: str | os.PathLike[str],
    settings: Settings = DEFAULT_SETTINGS,
    *,
    unsafe: bool = False,
    write: bool = True,
    data: bytes | None = None,
    folder: Path | None = None,
) -> FixResult:
    """Fix a file in place (``write=False``: only compute the result); ``data``: its bytes, if read.

    The text is decoded as Python does and encoded back the same way, so the BOM, the coding
    cookie, line endings and every byte outside the fixed expressions are kept. A file that
    cannot be parsed is left untouched and ``error`` says why. Raises :class:`FixFileError`
    when the file cannot be read, decoded or written, changed on disk while it was being fixed,
    or would lose its owner or extended attributes (see :func:`write_atomically`). ``folder``:
    the folder a walk found the file in; a symlink in it to a file outside it is not written.
    """
    file = Path(path)
    if file.suffix == ".ipynb":
        return fix_notebook(file, settings, unsafe=unsafe, write=write, data=data, folder=folder)
    snapshot = None
    if write:
        snapshot = _snapshot_for_writing(file, data)
        data = snapshot.data
    elif data is None:
        try:  # a regular file within the size bound only
            data = read_file_bytes(file)
        except SourceError as error:
            raise FixFileError(str(error)) from error
    text, encoding = read_python_bytes(data)
    result = fix_source(text, settings, unsafe=unsafe)
    if snapshot is not None and result.changed and result.error is None:
        try:
            written = result.source.encode(encoding)
        except UnicodeEncodeError as error:
            raise FixFileError(f"cannot write: {error}") from error
        _write_fixed(file, written, snapshot, folder)
        result.written = written
    return result
