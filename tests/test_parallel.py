"""flake8 `--jobs`: the plugin gives the same answers in worker processes as in one process.

flake8 forks a pool only when it has more than one file and more than one job, so every run
here covers a folder of many files. What could break is state: the settings that
`parse_options` stores on the plugin class must reach the workers, and nothing one file leaves
behind (caches of compiled patterns, interpreter state) may change another file's result.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CONTEXT_OPTION = "--detach-no-grad-contexts=myproject.utils.evaluating"
HAZARD_IN_PROJECT_CONTEXT = (
    "import torch\n"
    "from myproject.utils import evaluating\n"
    "w = torch.ones(3, requires_grad=True)\n"
    "with evaluating():\n"
    "    w.numpy()\n"
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every fixture, twice (so workers see repeated and interleaved files), and context files."""
    folder = tmp_path_factory.mktemp("parallel")
    for copy in ("a", "b"):
        for fixture in sorted(FIXTURES.glob("*/*.py")):
            shutil.copy(fixture, folder / f"{copy}_{fixture.parent.name}_{fixture.name}")
    for index in range(6):
        (folder / f"context_{index}.py").write_text(HAZARD_IN_PROJECT_CONTEXT)
    return folder


def flake8(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "DET", *options, "."],
        cwd=folder, capture_output=True, text=True, check=False, timeout=600,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def test_corpus_is_big_enough_to_run_in_parallel(corpus: Path) -> None:
    assert len(list(corpus.glob("*.py"))) > 20


@pytest.mark.parametrize("options", [(), (CONTEXT_OPTION,)], ids=["defaults", "project-context-option"])
def test_jobs_2_reports_exactly_what_jobs_1_reports(corpus: Path, options: tuple[str, ...]) -> None:
    serial = flake8(corpus, "--jobs", "1", *options)
    parallel = flake8(corpus, "--jobs", "2", *options)
    assert "Traceback" not in serial.stderr + parallel.stderr
    assert serial.returncode == parallel.returncode == 1  # the flag fixtures are flagged
    assert serial.stdout.count("\n") > 40
    assert parallel.stdout == serial.stdout


def test_option_reaches_the_worker_processes(corpus: Path) -> None:
    without = flake8(corpus, "--jobs", "2")
    configured = flake8(corpus, "--jobs", "2", CONTEXT_OPTION)
    context_lines = [line for line in without.stdout.splitlines() if line.startswith("./context_")]
    assert len(context_lines) == 6  # flagged without the option ...
    assert "./context_" not in configured.stdout  # ... and clean in every worker with it
    others = [line for line in without.stdout.splitlines() if not line.startswith("./context_")]
    assert configured.stdout.splitlines() == others


def test_jobs_2_really_uses_worker_processes(corpus: Path) -> None:
    """flake8 silently falls back to one process when it cannot start a pool; make sure it did not."""
    verbose = flake8(corpus, "--jobs", "2", "-vv")
    assert "PoolWorker" in verbose.stderr
