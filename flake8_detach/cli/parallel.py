"""Running one function over many files, in worker processes when that pays off: `check` and `fix`.

Results come back in order, and ``progress(done, total)`` hears of each as it arrives. Where no
worker process can be started (a sandbox without semaphores, a killed worker), the run falls back
to this process, as flake8 does, rather than fail.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from .progress import Progress

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_MIN_FILES = 16

Item = TypeVar("Item")
Result = TypeVar("Result")


def map_files(function: Callable[[Item], Result], items: Sequence[Item], jobs: int,
              progress: Progress | None = None) -> list[Result]:
    """``[function(item) for item in items]``, across ``jobs`` processes from PARALLEL_MIN_FILES on.

    In worker processes, ``function`` must be picklable (a module-level function or a partial of
    one) and return picklable results.
    """
    if jobs <= 1 or len(items) < PARALLEL_MIN_FILES:
        return _counted((function(item) for item in items), len(items), progress)
    import multiprocessing  # here: a run over a few files must not pay for the pool's imports
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # Forked workers inherit what is loaded: load the analysis once here rather than once in
    # each worker (most of a second of CPU each): in a run of this many files, some file
    # nearly always needs it.
    preload_analysis()
    context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    workers = min(jobs, len(items))
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            chunks = max(1, len(items) // (workers * 8))
            return _counted(pool.map(function, items, chunksize=chunks), len(items), progress)
    except (OSError, BrokenProcessPool):
        return _counted((function(item) for item in items), len(items), progress)


def preload_analysis() -> None:
    """Import what a file that passes the screen needs (checking and fixing import it on demand)."""
    from .. import suppression  # noqa: F401
    from ..reporting import fix_spans  # noqa: F401


def _counted(results: Iterable[Result], total: int, progress: Progress | None) -> list[Result]:
    done: list[Result] = []
    for result in results:
        done.append(result)
        if progress is not None:
            progress(len(done), total)
    return done
