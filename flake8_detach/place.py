"""Where a file being analysed lives, in a module that imports nothing heavy.

The engine needs a file's path to read its project (analysis/project.py). `fix` reaches the
engine through the fixing passes, which know only the text, so its loop names the file with
`located`; that loop also runs for files with nothing to fix, which must not load the engine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Place:
    """Where a file lives, for the project index (analysis/project.py): its ``path`` on disk
    (the .py, or the .ipynb of a notebook) and the folder that caches project summaries (None:
    computed in memory only). No place (stdin, a test's string): the file alone, as before."""

    path: str | os.PathLike[str]
    cache_directory: Path | None = None

    @classmethod
    def of(cls, path: str | os.PathLike[str] | None) -> Place | None:
        """The place of a file at ``path`` with the process's summary folder; None without a path."""
        if path is None:
            return None
        from .analysis.project import summary_directory

        return cls(path, summary_directory())


# The path of the file being fixed (see `located`); a path only, so that naming it is free.
_CURRENT_PATH: ContextVar[str | os.PathLike[str] | None] = ContextVar("flake8_detach_path", default=None)


@contextmanager
def located(path: str | os.PathLike[str] | None) -> Iterator[None]:
    """Analyses inside this block without a place of their own are of the file at ``path``."""
    token = _CURRENT_PATH.set(path)
    try:
        yield
    finally:
        _CURRENT_PATH.reset(token)


def located_path() -> str | os.PathLike[str] | None:
    """The path `located` names here, or None: whether there is a place, without making one."""
    return _CURRENT_PATH.get()


def current_place() -> Place | None:
    """The place `located` names here, or None."""
    return Place.of(_CURRENT_PATH.get())
