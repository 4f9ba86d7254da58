"""A one-line progress bar on stderr for long runs, silent where nobody watches.

It draws only when stderr is a terminal (never in CI logs, pipes or files), and `--no-progress`
turns it off there too; with a ``delay`` only once the run has lasted that long, so a quick
`check` prints nothing but its report. No dependency: a carriage return redraws the line, and
the line is cleared when the run ends.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

WIDTH = 30
# `check` and `fix` runs shorter than this show no bar: most runs print their report and nothing else.
DELAY_SECONDS = 1.0

Progress = Callable[[int, int], None]  # (files done, files in all)


class ProgressBar:
    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool | None = None,
                 delay: float = 0.0) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self.delay = delay
        self.started = time.monotonic()
        self._drawn = False

    def update(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        elapsed = time.monotonic() - self.started
        if elapsed < self.delay:
            return
        filled = WIDTH * done // total
        bar = "#" * filled + "-" * (WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total} {elapsed:4.0f}s")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


def add_progress_option(parser: Any) -> None:
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (shown only when stderr is a terminal, outside CI, once the run lasts over a second)",
    )


def progress_bar(label: str, args: argparse.Namespace) -> ProgressBar:
    """`check`'s and `fix`'s bar: on a terminal, after a second, unless --no-progress or in CI
    (the `CI` variable every CI service sets: some run the job in a pseudo-terminal)."""
    quiet = args.no_progress or bool(os.environ.get("CI"))
    return ProgressBar(label, enabled=False if quiet else None, delay=DELAY_SECONDS)
