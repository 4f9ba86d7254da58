"""Drive the runner subprocess: send it the jobs, read back what each run did.

One runner process serves every job of a verify run (it imports torch once and forks a child per
job, see :mod:`.runner`), so the cost of importing torch is paid once, not once per run.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .runner import (
    DEFAULT_MEMORY_LIMIT,
    FILE_SIZE_LIMIT,
    GROUP_MARKER,
    HANDLED_SIGNALS,
    PROGRESS_MARKER,
)

# Run by path: `-m flake8_detach.verify.runner` would import the package, and libcst with it.
RUNNER = Path(__file__).with_name("runner.py")


class RunnerError(Exception):
    """The runner subprocess itself failed (not a fixture): the verify run cannot conclude."""


@dataclass(frozen=True)
class Job:
    filename: str  # the fixture's path: compiled under it, so traceback lines are the fixture's
    source: str
    device: str
    force_numpy: bool = False  # the reference run: every .numpy() converts as force=True does
    timeout: float = 60.0


@dataclass
class Raised:
    type: str
    message: str
    line: int | None
    traceback: str = ""

    def describe(self) -> str:
        where = f" at line {self.line}" if self.line is not None else ""
        return f"{self.type}: {_first_sentence(self.message)}{where}"


@dataclass
class RunResult:
    """What one execution did: how it ended, what it converted and moved, the module's values."""

    outcome: str  # ok, raised, timeout, crashed
    exception: Raised | None = None
    conversions: list[dict[str, Any]] = field(default_factory=list)
    moves: list[dict[str, Any]] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    output: str = ""
    seconds: float = 0.0
    executed_lines: frozenset[int] = frozenset()

    @property
    def ran_cleanly(self) -> bool:
        return self.outcome == "ok"

    def describe(self) -> str:
        if self.outcome == "ok":
            return "ran to the end without an error"
        if self.outcome == "timeout":
            return f"timed out after {self.seconds:.0f} s"
        if self.exception is not None:
            prefix = "crashed: " if self.outcome == "crashed" else ""
            return prefix + self.exception.describe()
        return self.outcome

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        exception = data.get("exception")
        return cls(
            outcome=data.get("outcome", "crashed"),
            exception=Raised(
                exception.get("type", "?"), exception.get("message", ""), exception.get("line"), exception.get("traceback", "")
            )
            if exception
            else None,
            conversions=data.get("conversions", []),
            moves=data.get("moves", []),
            values=data.get("values", {}),
            output=data.get("output", ""),
            seconds=float(data.get("seconds", 0.0)),
            executed_lines=frozenset(data.get("executed_lines", ())),
        )


# Seconds the runner is given to stop its runs and clean up after SIGTERM, before its group is killed.
STOP_GRACE = 5.0


def check_timeout(seconds: float) -> float:
    """``seconds`` if it is a usable timeout (finite, above zero); ValueError otherwise."""
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"a timeout must be a finite number of seconds above 0, not {seconds!r}")
    return float(seconds)


def run_jobs(
    jobs: list[Job],
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    file_size_limit: int = FILE_SIZE_LIMIT,
) -> list[RunResult]:
    """Execute ``jobs`` in one runner subprocess; results in the same order.

    ``progress(done, total)`` is called as the runner reports each finished job. Each run is
    limited to ``memory_limit`` MiB of data (None: no limit), its timeout in CPU time, and
    ``file_size_limit`` bytes per file it writes; its output is kept in part (see runner.BoundedOutput).
    """
    for job in jobs:
        check_timeout(job.timeout)
    if memory_limit is not None and memory_limit <= 0:
        raise ValueError(f"a memory limit must be a positive number of MiB, not {memory_limit!r}")
    if not jobs:
        return []
    scratch = tempfile.mkdtemp(prefix="flake8-detach-verify-")
    request = {
        "workers": workers,
        "scratch": os.path.join(scratch, "runs"),
        "limits": {"memory": memory_limit, "file_size": file_size_limit},
        "jobs": [
            {"filename": job.filename, "source": job.source, "device": job.device, "force_numpy": job.force_numpy, "timeout": job.timeout}
            for job in jobs
        ],
    }
    # Generous overall limit: every job's own timeout is enforced inside the runner.
    overall = 120 + sum(job.timeout for job in jobs) / max(1, workers)
    results_path = os.path.join(scratch, "results.json")
    try:
        returncode, stdout, stderr = _run_runner(results_path, json.dumps(request), overall, progress)
        if returncode != 0:
            tail = (stderr or stdout).strip()[-2000:]
            raise RunnerError(f"the runner exited with status {returncode}: {tail}")
        try:
            with open(results_path, encoding="utf-8") as stream:
                raw = json.load(stream)
        except (OSError, ValueError) as error:
            raise RunnerError(f"the runner wrote no readable results: {error}") from error
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if len(raw) != len(jobs):
        raise RunnerError(f"the runner returned {len(raw)} results for {len(jobs)} jobs")
    return [RunResult.from_json(item) for item in raw]


def _run_runner(
    results_path: str, request: str, overall: float, progress: Callable[[int, int], None] | None
) -> tuple[int, str, str]:
    """Run the runner; its progress lines go to ``progress``, the rest of stderr is kept.

    The runner leads a session of its own (a Ctrl-C at the terminal reaches this process only),
    and whatever way this function is left (the runner done, its overall limit passed, SIGTERM,
    SIGHUP or Ctrl-C here), the runner and every run it started are stopped before it returns.
    """
    process = subprocess.Popen(
        [sys.executable, str(RUNNER), results_path],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=hasattr(os, "setsid"),
    )
    stdout_parts: list[str] = []
    stderr_lines: list[str] = []
    groups: set[int] = set()  # the runs' process groups the runner reported open

    def feed() -> None:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(request)
            process.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        stdout_parts.append(process.stdout.read())

    def drain_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith(PROGRESS_MARKER):
                done, _, total = line.split()[-1].partition("/")
                if progress is not None:
                    progress(int(done), int(total))
            elif line.startswith(GROUP_MARKER):
                _, event, pgid = line.split()
                (groups.add if event == "start" else groups.discard)(int(pgid))
            else:
                stderr_lines.append(line)

    threads = [threading.Thread(target=feed, daemon=True), threading.Thread(target=drain_stderr, daemon=True)]
    for thread in threads:
        thread.start()
    try:
        with _signals_exit():
            try:
                returncode = process.wait(timeout=overall)
            except subprocess.TimeoutExpired as error:
                raise RunnerError(f"the runner did not finish within {overall:.0f} s") from error
    finally:
        _stop(process, groups, threads[1])
    for thread in threads:
        thread.join(timeout=10)
    return returncode, "".join(stdout_parts), "".join(stderr_lines)


@contextlib.contextmanager
def _signals_exit() -> Any:
    """SIGTERM and SIGHUP raise SystemExit here (in the main thread), so `finally` clauses run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for signum in HANDLED_SIGNALS:
        if signum != signal.SIGINT:  # Ctrl-C already raises KeyboardInterrupt
            previous[signum] = signal.signal(signum, _raise_exit)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _raise_exit(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _stop(process: subprocess.Popen[str], groups: set[int], reader: threading.Thread) -> None:
    """Stop the runner and everything it started; nothing of it outlives this call.

    Stop signals wait while it works (at most STOP_GRACE and a few seconds): a second Ctrl-C must
    not leave the runner and its runs behind.
    """
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in HANDLED_SIGNALS}
    try:
        _stop_runner(process, groups, reader)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _stop_runner(process: subprocess.Popen[str], groups: set[int], reader: threading.Thread) -> None:
    if process.poll() is None:
        with contextlib.suppress(OSError):
            process.terminate()  # the runner's handler kills its runs' groups and removes its scratch
        try:
            process.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            pass
    if process.poll() is not None:
        reader.join(timeout=2)  # the runner's last lines say which groups it closed itself
    killpg = getattr(os, "killpg", None)
    for pgid in [process.pid, *sorted(groups)]:
        if killpg is not None:
            with contextlib.suppress(OSError):
                killpg(pgid, signal.SIGKILL)
    if process.poll() is None:
        with contextlib.suppress(OSError):
            process.kill()
    process.wait()


def _first_sentence(text: str) -> str:
    """torch's messages add advice after the first sentence; the report keeps the fact."""
    head = text.split(". ")[0].rstrip(".")
    return _shorten(head)


def _shorten(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
