"""Finding the Python files a command should look at, and reading them as flake8 does.

Shared by the command-line fronts (`check`, `fix`) so that both skip the same
folders and decode files the same way.
"""

from __future__ import annotations

import fnmatch
import io
import os
import stat
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    import pathspec

# Folders no one wants linted: VCS data, virtual environments, build output, caches.
DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "build",
    "dist",
    "__pycache__",
    ".tox",
    ".nox",
    ".eggs",
    "*.egg-info",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
)


# What a folder walk looks at: Python files and Jupyter notebooks (their code cells).
SOURCE_SUFFIXES = (".py", ".ipynb")

# The largest Python file read (notebooks have their own bound, MAX_NOTEBOOK_BYTES): a
# bigger one is generated data, and reading it whole could exhaust the memory.
MAX_SOURCE_BYTES = 10 * 1024 * 1024
MAX_NOTEBOOK_BYTES = 25 * 1024 * 1024  # a notebook carries its outputs (images) beside the code
NOT_REGULAR = "not a regular file"


class SourceError(Exception):
    """The file could not be read or decoded; the message is one line meant for the user."""


def is_excluded(path: Path, patterns: Sequence[str], root: Path | None = None) -> bool:
    """Whether ``path`` matches an exclude pattern, as flake8 matches them.

    A pattern matches the file or folder name (``build``, ``*_pb2.py``) or, when it contains a
    slash, the path relative to ``root`` (``src/generated/*``) or the absolute path.
    """
    name = path.name
    for pattern in patterns:
        if fnmatch.fnmatch(name, pattern):
            return True
        if "/" in pattern or os.sep in pattern:
            stripped = pattern.rstrip("/")
            absolute = path.absolute().as_posix()
            if fnmatch.fnmatch(absolute, stripped):
                return True
            if root is not None:
                try:
                    relative = path.absolute().relative_to(root.absolute()).as_posix()
                except ValueError:
                    continue
                if fnmatch.fnmatch(relative, stripped.removeprefix("./")):
                    return True
    return False


def discover(
    paths: Iterable[str | Path],
    extend_exclude: Sequence[str] = (),
    root: Path | None = None,
    *,
    exclude: Sequence[str] | None = None,
    respect_gitignore: bool = True,
) -> Iterator[Path]:
    """Yield the Python files under ``paths`` in a stable order.

    Files named explicitly are always yielded (pre-commit passes exactly the files it wants
    checked, and a user naming a file means it), unless an ``extend_exclude`` pattern matches
    them; folders are walked, skipping ``exclude`` (default :data:`DEFAULT_EXCLUDES`, as
    flake8's `--exclude` replaces its defaults), ``extend_exclude`` and, unless told otherwise,
    what the `.gitignore` files of the walked tree and its repository ignore (as ruff does).
    A path that does not exist is yielded as is, so that reading it reports the error.
    """
    patterns = (*(DEFAULT_EXCLUDES if exclude is None else exclude), *extend_exclude)
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            if is_excluded(path, extend_exclude, root) and path.name not in {".", ".."}:
                continue
            ignores = GitIgnores.above(path) if respect_gitignore else None
            for file in _walk(path, patterns, root, ignores):
                if file not in seen:
                    seen.add(file)
                    yield file
        elif path not in seen and not is_excluded(path, extend_exclude, root):
            seen.add(path)
            yield path


def _walk(folder: Path, patterns: Sequence[str], root: Path | None, ignores: GitIgnores | None) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(folder):
        current = Path(dirpath)
        if ignores is not None:
            ignores.enter(current)
        dirnames[:] = sorted(
            d for d in dirnames
            if not is_excluded(current / d, patterns, root)
            and not (ignores is not None and ignores.ignored(current / d, is_dir=True))
        )
        for filename in sorted(filenames):
            file = current / filename
            if (filename.endswith(SOURCE_SUFFIXES) and not is_excluded(file, patterns, root)
                    and not (ignores is not None and ignores.ignored(file, is_dir=False))):
                yield file


class GitIgnores:
    """The `.gitignore` files that govern a walk, matched with pathspec's git semantics.

    Each file applies to its own folder and below; a nested `.gitignore` is read when the walk
    enters its folder. Above the walked folder, the files up to the repository root (the folder
    holding `.git`) count too, as git applies them; outside a repository only the walked tree's.
    """

    def __init__(self) -> None:
        self._specs: list[tuple[Path, pathspec.PathSpec]] = []
        self._read: set[Path] = set()

    @classmethod
    def above(cls, folder: Path) -> GitIgnores:
        ignores = cls()
        start = folder.absolute()
        chain = [start]
        for parent in start.parents:
            if (chain[-1] / ".git").exists():
                break
            chain.append(parent)
        else:
            chain = [start]  # not in a repository: only the walked tree's own files
        for candidate in reversed(chain):
            ignores.enter(candidate)
        exclude = next((f / ".git" / "info" / "exclude" for f in chain if (f / ".git").is_dir()), None)
        if exclude is not None and exclude.is_file():
            ignores._add(exclude.parent.parent.parent, exclude)
        return ignores

    def enter(self, folder: Path) -> None:
        folder = folder.absolute()
        if folder not in self._read:
            self._read.add(folder)
            gitignore = folder / ".gitignore"
            if gitignore.is_file():
                self._add(folder, gitignore)

    def _add(self, base: Path, file: Path) -> None:
        try:
            lines = read_file_bytes(file, MAX_SOURCE_BYTES).decode("utf-8", errors="replace").splitlines()
        except SourceError:
            return
        import pathspec  # only a walk that meets a .gitignore pays for it, not a list of files

        try:
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except Exception:  # noqa: BLE001 - pathspec refuses some lines that git accepts: line by line
            spec = pathspec.GitIgnoreSpec.from_lines(_lines_as_git_reads_them(file, lines))
        self._specs.append((base, spec))


    def ignored(self, path: Path, is_dir: bool) -> bool:
        absolute = path.absolute()
        for base, spec in self._specs:
            try:
                relative = absolute.relative_to(base).as_posix()
            except ValueError:
                continue
            if spec.match_file(relative + "/" if is_dir else relative):
                return True
        return False


def _lines_as_git_reads_them(file: Path, lines: list[str]) -> list[str]:
    """The lines of a `.gitignore` that pathspec refuses, made into what git matches.

    Git matches nothing for `!` alone or a pattern ending in a lone backslash, and reads a
    reversed range (`[z-a]`) as its first character only; pathspec raises on all three. A line
    that is none of these and still does not compile is left out with one warning naming it.
    """
    import sys

    import pathspec

    kept: list[str] = []
    for number, line in enumerate(lines, start=1):
        for candidate in (line, _git_ranges(line)):
            if _compiles(pathspec, candidate):
                kept.append(candidate)
                break
        else:
            stripped = line.rstrip(" ")
            trailing = len(stripped) - len(stripped.rstrip("\\"))
            if stripped.lstrip("!") == "" or trailing % 2 == 1:
                continue  # git matches nothing for these either
            print(f"flake8-detach: warning: {file}:{number}: .gitignore pattern {line!r} cannot be matched; "
                  "it is left out", file=sys.stderr)
    return kept


def _compiles(pathspec: Any, line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except Exception:  # noqa: BLE001 - whatever pathspec raises for a pattern it cannot read
        return False
    return True


def _git_ranges(pattern: str) -> str:
    """``pattern`` with each reversed range of a bracket (`[z-a]`) as git's wildmatch reads it:
    the first character alone (then a `-` after it is a literal `-`, written last)."""
    out: list[str] = []
    index, size = 0, len(pattern)
    while index < size:
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index:index + 2])
            index += 2
            continue
        if char != "[":
            out.append(char)
            index += 1
            continue
        end = index + 1
        if end < size and pattern[end] in "!^":
            end += 1
        if end < size and pattern[end] == "]":
            end += 1
        while end < size and pattern[end] != "]":
            end += 2 if pattern[end] == "\\" else 1
        if end >= size:  # no closing bracket: git reads `[` literally, and so does pathspec
            out.append(pattern[index:])
            break
        out.append("[" + _bracket_body(pattern[index + 1:end]) + "]")
        index = end + 1
    return "".join(out)


def _bracket_body(body: str) -> str:
    start = 1 if body[:1] in ("!", "^") else 0
    items: list[str] = []  # single characters, escaped pairs, and kept ranges
    dash = False
    index = start
    previous: str | None = None
    while index < len(body):
        item = body[index:index + 2] if body[index] == "\\" else body[index]
        index += len(item)
        if item == "-" and previous is not None and index < len(body):
            upper = body[index:index + 2] if body[index] == "\\" else body[index]
            index += len(upper)
            if previous[-1] <= upper[-1]:
                items[-1] = f"{items[-1]}-{upper}"
            # a reversed range adds nothing to the character before it, which git already matched
            previous = None
            continue
        if item == "-":
            dash = True
            continue
        items.append(item)
        previous = item
    return body[:start] + "".join(items) + ("-" if dash else "")


def decode_source(data: bytes, display_name: str = "<source>") -> str:
    """Decode bytes as Python does: BOM or coding cookie, else UTF-8; newlines become ``\\n``.

    This is what ``tokenize.open`` (and so flake8) does, so line numbers agree with flake8's.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceError(f"cannot decode: {error.msg if hasattr(error, 'msg') else error}") from error
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise SourceError(f"cannot decode as {encoding}: {_first_line(error)}") from error
    text = text.removeprefix("\ufeff")
    # Universal newlines, as a text-mode file object reads them.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def size_limit(path: Path) -> int:
    """The most bytes read from ``path``: the notebooks' bound for `.ipynb`, else a Python file's."""
    if path.suffix == ".ipynb":
        return MAX_NOTEBOOK_BYTES
    return MAX_SOURCE_BYTES


def too_large(path: Path, size: int, limit: int | None = None) -> str:
    """The one line that says why a file of ``size`` bytes is not read."""
    limit = size_limit(path) if limit is None else limit
    if path.suffix == ".ipynb":
        return (f"the notebook is {size / 2**20:.0f} MB; flake8-detach reads notebooks up to "
                f"{limit / 2**20:.0f} MB (clear the outputs to check it)")
    return (f"the file is {size / 2**20:.0f} MB; flake8-detach reads Python files up to "
            f"{limit / 2**20:.0f} MB (exclude it)")


def unreadable(path: Path) -> str | None:
    """Why ``path`` will not be read, without opening it: not a regular file (a FIFO, a device,
    a socket, a folder), too large, or gone; None when it is a regular file within the bound."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return "no such file or directory"
    except OSError as error:
        return f"cannot read: {error.strerror or error}"
    if stat.S_ISDIR(info.st_mode):
        return "is a directory"
    if not stat.S_ISREG(info.st_mode):
        return NOT_REGULAR
    if info.st_size > size_limit(path):
        return too_large(path, info.st_size)
    return None


def read_file_bytes(path: Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (default: :func:`size_limit`).

    Opened without blocking (a FIFO's open would wait for a writer) and checked on the open
    descriptor, so a FIFO, a device such as /dev/zero, or a file swapped for one after a walk
    found it is refused in one line instead of hanging or reading until memory runs out.
    :class:`SourceError` says why.
    """
    limit = size_limit(path) if limit is None else limit
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError as error:
        raise SourceError("no such file or directory") from error
    except IsADirectoryError as error:
        raise SourceError("is a directory") from error
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from error
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise SourceError("is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(NOT_REGULAR)
        if info.st_size > limit:
            raise SourceError(too_large(path, info.st_size, limit))
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        chunks: list[bytes] = []
        size = 0
        while True:  # to the end, but never past the bound (a file that grows as it is read)
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise SourceError(too_large(path, size, limit))
        return b"".join(chunks)
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from error
    finally:
        os.close(descriptor)


def read_stream(stream: BinaryIO, name: str) -> bytes:
    """All of ``stream`` (standard input) up to the bound for a file called ``name``; one line
    (:class:`SourceError`) beyond it, so `check - < /dev/zero` stops instead of filling memory."""
    limit = size_limit(Path(name))
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(min(1 << 20, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            kind = "notebooks" if name.endswith(".ipynb") else "Python files"
            raise SourceError(f"standard input is over {limit / 2**20:.0f} MB; flake8-detach reads {kind} "
                              f"up to {limit / 2**20:.0f} MB")


def read_source(path: Path) -> str:
    """Read and decode a Python file; :class:`SourceError` (one line) when that is impossible."""
    return decode_source(read_file_bytes(path), str(path))


def _first_line(error: BaseException) -> str:
    text = str(error)
    return text.splitlines()[0] if text else type(error).__name__


def is_path_excluded(path: Path, extend_exclude: Sequence[str] = (), root: Path | None = None) -> bool:
    """Whether ``discover`` would skip ``path`` when walking from ``root``.

    True when the file, or a folder between it and ``root``, matches an exclude. Editors open
    single files, so they need this answer without a walk.
    """
    if is_excluded(path, extend_exclude, root):
        return True
    if root is None:
        return False  # without a project root, folders above the file are none of our business
    patterns = (*DEFAULT_EXCLUDES, *extend_exclude)
    stop = root.absolute()
    for folder in path.absolute().parents:
        if folder == stop or stop not in folder.parents:
            break
        if is_excluded(folder, patterns, root):
            return True
    return False
