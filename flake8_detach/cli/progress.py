"""A one-line progress bar on stderr for long runs, silent where nobody watches.

It draws only when stderr is a terminal (never in CI logs, pipes or files), and `--no-progress`
turns it off there too. No dependency: a carriage return redraws the line, and the line is
cleared when the run ends.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30


class ProgressBar:
    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.started = time.monotonic()
        self._drawn = False

    def update(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        filled = WIDTH * done // total
        elapsed = time.monotonic() - self.started
        bar = "#" * filled + "-" * (WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total} {elapsed:4.0f}s")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False
