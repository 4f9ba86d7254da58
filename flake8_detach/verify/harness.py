"""One verify run: discover fixtures, lint and fix them, plan the executions, run, judge.

Everything a run needs is decided before anything executes, so that every execution (original,
fixed, reference and write-skipped variants, on every device) goes to one runner subprocess in a
single batch.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..engine import Settings
from ..sources.files import discover
from .checks import (
    FAILED,
    PASSED,
    SKIPPED,
    FixOutcome,
    Row,
    Runs,
    claim_kinds,
    fix_fixture,
    judge,
    lint,
    lint_row,
    skip_reason,
    skip_statements,
    variants_needed,
)
from .devices import CudaStatus, DeviceLeg, plan_devices, probe_cuda
from .execution import Job, RunResult, check_timeout, run_jobs
from .fixtures import Fixture, discover_fixtures
from .runner import DEFAULT_MEMORY_LIMIT

NOTEBOOK_SKIP_REASON = (
    "a notebook: verify runs .py fixtures (with their `# expect:` claims); check and fix read notebooks"
)


@dataclass
class VerifyReport:
    rows: list[Row]
    legs: list[DeviceLeg]
    cuda: CudaStatus
    seconds: float
    fixtures: int
    environment: dict[str, str] = field(default_factory=dict)

    def count(self, status: str) -> int:
        return sum(1 for row in self.rows if row.status == status)

    @property
    def failures(self) -> list[Row]:
        return [row for row in self.rows if row.status == FAILED]

    def summary(self) -> str:
        return f"{self.count(PASSED)} passed, {self.count(FAILED)} failed, {self.count(SKIPPED)} skipped"

    @property
    def exit_code(self) -> int:
        return 1 if self.failures else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": {"passed": self.count(PASSED), "failed": self.count(FAILED), "skipped": self.count(SKIPPED), "fixtures": self.fixtures},
            "devices": [{"name": leg.name, "label": leg.label, "skipped": leg.skip_reason} for leg in self.legs],
            "cuda": {"available": self.cuda.available, "description": self.cuda.description},
            "environment": self.environment,
            "seconds": round(self.seconds, 2),
            "rows": [row.to_json() for row in self.rows],
        }


def environment() -> dict[str, str]:
    import numpy
    import torch

    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": numpy.__version__, "platform": platform.platform(terse=True)}


def verify(
    paths: Iterable[str | Path],
    devices: Sequence[str] | None = None,
    *,
    workers: int = 2,
    timeout: float = 60.0,
    settings: Settings | None = None,
    progress: Callable[[int, int], None] | None = None,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> VerifyReport:
    """Verify the fixtures under ``paths``; ``timeout`` (seconds) and ``memory_limit`` (MiB, None: none) bound each run."""
    check_timeout(timeout)
    started = time.perf_counter()
    settings = settings or Settings(preview=True)  # the fixtures prove every rule, the opt-in ones too
    cuda = probe_cuda()
    legs = plan_devices(devices, cuda)
    fixtures, linted = [], {}
    for fixture in discover_fixtures(paths):
        if not fixture.error:
            diagnostics, error = lint(fixture, settings)
            fixture = replace(fixture, kinds=claim_kinds(fixture, diagnostics))
            linted[fixture.path] = lint_row(fixture, diagnostics, error)
        fixtures.append(fixture)
    fixes = {fixture.path: fix_fixture(fixture, settings) for fixture in fixtures if fixture.claims and not fixture.error}

    rows: list[Row] = []
    pending: list[tuple[int, Fixture, DeviceLeg, dict[str, int]]] = []  # row index, ..., variant -> job index
    jobs: list[Job] = []
    for fixture in fixtures:
        if fixture.error:
            rows.append(Row(fixture.name, str(fixture.path), "-", FAILED, "a readable fixture", fixture.error))
            continue
        rows.append(linted[fixture.path])
        for leg in legs:
            reason = skip_reason(fixture, leg)
            if reason:
                rows.append(Row(fixture.name, str(fixture.path), leg.label, SKIPPED, "", reason))
                continue
            planned = _plan(fixture, leg, fixes.get(fixture.path), timeout)
            indices = {}
            for variant, job in planned.items():
                indices[variant] = len(jobs)
                jobs.append(job)
            pending.append((len(rows), fixture, leg, indices))
            rows.append(Row(fixture.name, str(fixture.path), leg.label, FAILED, "", "not judged"))

    # Notebooks are linted and fixed like .py files, but their cells are not fixtures: say so.
    for notebook in (path for path in discover(paths) if path.suffix == ".ipynb"):
        rows.append(Row(notebook.name, str(notebook), "-", SKIPPED, "", NOTEBOOK_SKIP_REASON))
    results = run_jobs(jobs, workers, progress, memory_limit)
    for row_index, fixture, leg, indices in pending:
        runs = Runs(**{variant: results[index] for variant, index in indices.items()})
        rows[row_index] = judge(fixture, leg, fixes.get(fixture.path), runs)
    return VerifyReport(rows, legs, cuda, time.perf_counter() - started, len(fixtures), environment())


def _plan(fixture: Fixture, leg: DeviceLeg, fix: FixOutcome | None, timeout: float) -> dict[str, Job]:
    filename = str(fixture.path.resolve())
    planned = {"original": Job(filename, fixture.source, leg.name, timeout=timeout)}
    for variant in sorted(variants_needed(fixture, leg, fix)):
        if variant == "fixed" and fix is not None:
            planned["fixed"] = Job(filename, fix.source, leg.name, timeout=timeout)
        elif variant == "reference":
            planned["reference"] = Job(filename, fixture.source, leg.name, force_numpy=True, timeout=timeout)
        elif variant == "write_skipped":
            source = skip_statements(fixture.source, fixture.lines_claiming("DET103"))
            if source is not None:
                planned["write_skipped"] = Job(filename, source, leg.name, timeout=timeout)
    return planned


__all__ = ["RunResult", "VerifyReport", "verify"]
