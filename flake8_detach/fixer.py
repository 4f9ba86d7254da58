"""Fix source text, or a file on disk, with the rules' fixes: the front `fix`, the language
server, the runtime harness and the snapshots share.

The text is screened first, as the flake8 plugin and `check` screen it: a file no selected rule
can fire on comes back unchanged without loading the engine or libcst. What passes the screen is
parsed and fixed in passes by :mod:`flake8_detach.fix_passes`.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import AnalysisError, Diagnostic
from .notebooks import (
    NotebookError,
    NotebookSkipped,
    parse_notebook,
    read_notebook,
    render_notebook,
    split_cells,
)
from .screening import worth_analysing
from .settings import DEFAULT_SETTINGS, Settings


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

    @property
    def changed(self) -> bool:
        return self.source != self.original


def fix_source(source: str, settings: Settings = DEFAULT_SETTINGS, *, unsafe: bool = False) -> FixResult:
    """Fix one file's text. Never raises on bad input: ``error`` says why nothing was done."""
    if not worth_analysing(source, settings):
        return FixResult(source, original=source)
    try:
        from .engine import parse
        from .fix_passes import fix_module

        module = parse(source)
        if module.code != source:  # libcst 1.9 drops a final lone CR and a form feed starting a statement
            raise AnalysisError("libcst cannot print this file back byte for byte (a final lone CR, or a form feed before a statement)")
        outcome = fix_module(module, settings, unsafe=unsafe)
    except AnalysisError as error:
        return FixResult(source, original=source, error=str(error))
    except RecursionError:
        return FixResult(source, original=source, error="the file is nested too deeply to analyse")
    except Exception as error:  # noqa: BLE001 - a bug of ours must not cost the user a file or a traceback
        return FixResult(source, original=source, error=f"internal error, file left unchanged: {error!r}")
    return FixResult(outcome.module.code, outcome.applied, outcome.remaining, original=source)


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


def write_atomically(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder and a rename; keep the permission bits.

    A reader (or a crash) sees either the old file or the new one, never half of one.
    """
    target = Path(os.path.realpath(path))  # replace the file a symlink points to, not the link
    mode = stat.S_IMODE(target.stat().st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):  # a rename would replace it anyway
        raise PermissionError(errno.EACCES, "the file is read-only", str(path))
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def fix_notebook(path: Path, settings: Settings = DEFAULT_SETTINGS, *, unsafe: bool = False,
                 write: bool = True) -> FixResult:
    """Fix a notebook's code cells; only their sources change, the JSON elsewhere byte for byte.

    The cells are fixed as one module (so a fix sees the state of earlier cells), cut back into
    cells, and written atomically as for `.py` files. A notebook that is not nbformat 4 JSON as
    Jupyter writes it is reported and never written (:class:`FixFileError`).
    """
    try:
        notebook = read_notebook(path)
    except NotebookSkipped as skipped:
        return FixResult("", original="", error=None, skipped=str(skipped))
    except NotebookError as error:
        raise FixFileError(str(error)) from error
    result = fix_source(notebook.source, settings, unsafe=unsafe)
    result.cells = notebook.line_map
    if not result.changed or result.error is not None:
        return result
    old = {cell.index: cell.text for cell in notebook.cells}
    numbers = {cell.index: cell.number for cell in notebook.cells}
    new = {index: text for index, text in split_cells(notebook, result.source).items() if text != old[index]}
    try:
        rendered = render_notebook(notebook, new)
        fixed = parse_notebook(rendered, str(path))
    except NotebookError as error:
        raise FixFileError(str(error)) from error
    result.cell_changes = {numbers[index]: (old[index], text) for index, text in new.items()}
    result.cells = fixed.line_map if fixed.source == result.source else None
    if write:
        try:
            write_atomically(path, rendered.encode("utf-8"))
        except OSError as error:
            raise FixFileError(f"cannot write: {error.strerror or error}") from error
    return result


def fix_file(
    path: str | os.PathLike[str],
    settings: Settings = DEFAULT_SETTINGS,
    *,
    unsafe: bool = False,
    write: bool = True,
) -> FixResult:
    """Fix a file in place (``write=False``: only compute the result).

    The text is decoded as Python does and encoded back the same way, so the BOM, the coding
    cookie, line endings and every byte outside the fixed expressions are kept. A file that
    cannot be parsed is left untouched and ``error`` says why. Raises :class:`FixFileError`
    when the file cannot be read, decoded or written.
    """
    file = Path(path)
    if file.suffix == ".ipynb":
        return fix_notebook(file, settings, unsafe=unsafe, write=write)
    try:
        data = file.read_bytes()
    except OSError as error:
        raise FixFileError(f"cannot read: {error.strerror or error}") from error
    text, encoding = read_python_bytes(data)
    result = fix_source(text, settings, unsafe=unsafe)
    if write and result.changed and result.error is None:
        try:
            write_atomically(file, result.source.encode(encoding))
        except (OSError, UnicodeEncodeError) as error:
            message = error.strerror if isinstance(error, OSError) else str(error)
            raise FixFileError(f"cannot write: {message or error}") from error
    return result
