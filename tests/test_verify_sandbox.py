"""`verify` as a sandbox: hostile fixtures (loud, greedy, hanging, forking) are bounded and cleaned up.

Every run is limited in memory, CPU time, file size and kept output; its process group is killed
when it ends, at its timeout, and when verify itself is stopped (SIGTERM, Ctrl-C); the scratch
folder goes with it. The fixtures are written here, not under fixtures/ (the rules' proof set).
"""

from __future__ import annotations

import importlib.util
import math
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flake8_detach import verify as verify_package
from flake8_detach.cli import main
from flake8_detach.verify import runner
from flake8_detach.verify.execution import Job, RunResult, run_jobs
from flake8_detach.verify.harness import verify

REPO = Path(__file__).resolve().parents[1]
needs_torch = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("torch", "numpy")), reason="needs torch and numpy"
)
needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists() or not hasattr(os, "killpg"), reason="needs Linux /proc")


def live_in_group(pgid: int) -> list[int]:
    """Processes of process group ``pgid`` that are alive (zombies, already dead, do not count)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()  # state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def spawning_fixture(record: Path, then: str) -> str:
    """A fixture that starts `sleep 1000`, writes 'its pgid, the sleep's pid, its parent's pid' to ``record``, then ``then``."""
    return textwrap.dedent(
        f"""
        import os, subprocess, time
        import torch

        child = subprocess.Popen(["sleep", "1000"])
        with open({str(record)!r} + ".tmp", "w") as stream:
            stream.write(f"{{os.getpgrp()}} {{child.pid}} {{os.getppid()}}")
        os.replace({str(record)!r} + ".tmp", {str(record)!r})
        {then}
        """
    )


def job(tmp_path: Path, name: str, source: str, timeout: float = 30.0) -> Job:
    path = tmp_path / name
    path.write_text(source)
    return Job(str(path), source, "cpu", timeout=timeout)


@pytest.fixture
def scratch_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary folder of its own for verify's scratch, to see what is left in it."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setattr(tempfile, "tempdir", None)
    yield root
    tempfile.tempdir = None


# --- the timeout and the limits are validated ---------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "soon"])
def test_a_timeout_that_is_not_finite_and_positive_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["verify", "--timeout", value, "--device", "cpu"])
    assert stopped.value.code == 2
    assert "--timeout" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_a_memory_limit_that_is_not_positive_is_a_usage_error(value: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["verify", "--memory-limit", value, "--device", "cpu"])
    assert stopped.value.code == 2


@pytest.mark.parametrize("value", [math.nan, math.inf, 0.0, -1.0])
def test_the_library_refuses_a_timeout_that_would_disable_it(value: float, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="finite number of seconds above 0"):
        verify([tmp_path], ["cpu"], timeout=value)
    with pytest.raises(ValueError, match="finite number of seconds above 0"):
        run_jobs([Job("x.py", "", "cpu", timeout=value)])


def test_the_limits_parse_as_documented() -> None:
    from flake8_detach.cli.verify import mebibytes, seconds

    assert (seconds("0.5"), seconds("60")) == (0.5, 60.0)
    assert (mebibytes("512"), mebibytes("none"), mebibytes("None")) == (512, None, None)


def test_the_default_memory_limit_is_the_same_on_both_sides() -> None:
    assert verify_package.DEFAULT_MEMORY_LIMIT == runner.DEFAULT_MEMORY_LIMIT


def test_output_is_kept_in_bounded_memory_with_a_note() -> None:
    output = runner.BoundedOutput(100)
    for _ in range(1000):
        output.feed(b"a" * 30 + b"b" * 30)
    text = output.text()
    assert text.startswith("a" * 30 + "b" * 20) and text.endswith("a" * 20 + "b" * 30)
    assert "[... output truncated: 59900 bytes]" in text
    short = runner.BoundedOutput(100)
    short.feed(b"hello")
    assert short.text() == "hello"


# --- hostile runs, one runner for all of them -----------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("hostile")
    root = folder / "tmp"
    root.mkdir()
    records = {name: folder / f"{name}.record" for name in ("hangs", "leaves")}
    jobs = {
        "loud": job(folder, "ok_loud.py", textwrap.dedent(
            """
            import os, sys
            for _ in range(50):
                sys.stdout.write("x" * 1_000_000)
            sys.stdout.flush()
            scratch_bytes = sum(
                os.path.getsize(os.path.join(folder, name))
                for folder, _, names in os.walk(os.environ["TMPDIR"]) for name in names
            )
            """)),
        "greedy_torch": job(folder, "ok_greedy_torch.py", "import torch\n\nbig = torch.ones(2**29)\n"),
        "greedy_python": job(folder, "ok_greedy_python.py", "big = bytearray(3 * 2**30)\n"),
        "writer": job(folder, "ok_writer.py", textwrap.dedent(
            f"""
            with open({str(folder / 'big.bin')!r}, "wb") as stream:
                for _ in range(4):
                    stream.write(b"0" * 2**20)
            """)),
        "hangs": job(folder, "ok_spawns_and_hangs.py", spawning_fixture(records["hangs"], "time.sleep(1000)"), timeout=4),
        "leaves": job(folder, "ok_spawns_and_ends.py", spawning_fixture(records["leaves"], "pass")),
    }
    previous = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(root)
    tempfile.tempdir = None
    try:
        results = run_jobs(list(jobs.values()), workers=2, memory_limit=1024, file_size_limit=3 * 2**20)
    finally:
        if previous is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = previous
        tempfile.tempdir = None
    return {"results": dict(zip(jobs, results)), "records": records, "root": root}


@needs_torch
def test_a_run_printing_50_mb_keeps_a_bounded_output_and_writes_no_scratch_file(hostile: dict) -> None:
    result: RunResult = hostile["results"]["loud"]
    assert result.outcome == "ok"
    assert "[... output truncated: " in result.output and len(result.output) < 3000
    assert result.values["scratch_bytes"]["value"] < 1_000_000  # the output never went to a file


@needs_torch
def test_a_run_allocating_beyond_the_memory_limit_fails_saying_so(hostile: dict) -> None:
    for name in ("greedy_torch", "greedy_python"):
        result: RunResult = hostile["results"][name]
        assert result.outcome == "raised", (name, result.describe())
        assert "out of memory under the run's limit of 1024 MiB (--memory-limit)" in result.describe()


@needs_torch
def test_a_run_writing_past_the_file_size_limit_gets_an_error(hostile: dict) -> None:
    result: RunResult = hostile["results"]["writer"]
    assert result.outcome == "raised" and result.exception is not None
    assert result.exception.type == "OSError" and "File too large" in result.exception.message


@needs_torch
@needs_proc
def test_a_run_past_its_timeout_is_killed_with_the_processes_it_started(hostile: dict) -> None:
    result: RunResult = hostile["results"]["hangs"]
    assert result.outcome == "timeout"
    pgid, sleeper, _ = map(int, hostile["records"]["hangs"].read_text().split())
    assert live_in_group(pgid) == [] and not alive(sleeper)


@needs_torch
@needs_proc
def test_processes_a_run_leaves_behind_are_killed_when_it_ends(hostile: dict) -> None:
    assert hostile["results"]["leaves"].outcome == "ok"
    pgid, sleeper, _ = map(int, hostile["records"]["leaves"].read_text().split())
    assert live_in_group(pgid) == [] and not alive(sleeper)


@needs_torch
def test_no_scratch_is_left_after_a_run(hostile: dict) -> None:
    assert list(hostile["root"].iterdir()) == []


# --- verify stopped from outside ----------------------------------------------------------------------

STOPPABLE = (
    "import signal, sys\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"  # as at a terminal, even if started in the background
    "from flake8_detach.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


@needs_torch
@needs_proc
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 130)])
def test_verify_stopped_by_a_signal_leaves_no_process_and_no_scratch(
    signum: int, code: int, tmp_path: Path, scratch_root: Path
) -> None:
    record = tmp_path / "record"
    fixture = tmp_path / "ok_waits.py"
    fixture.write_text(spawning_fixture(record, "time.sleep(1000)"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    process = subprocess.Popen(
        [sys.executable, "-c", STOPPABLE, "verify", str(fixture), "--device", "cpu", "--timeout", "300", "--no-progress"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 120
        while not record.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the fixture never started"
            time.sleep(0.1)
        pgid, sleeper, runner_pid = map(int, record.read_text().split())
        assert list(scratch_root.iterdir())  # the scratch exists while verify runs
        process.send_signal(signum)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == code
    assert not alive(runner_pid) and not alive(sleeper) and live_in_group(pgid) == []
    assert list(scratch_root.iterdir()) == []


# --- a run that torch's C++ code aborts --------------------------------------------------------------


def test_an_aborted_run_is_named_at_the_fixtures_line_with_the_cpp_error(tmp_path: Path) -> None:
    """SIGABRT leaves no result file: faulthandler's stack names the fixture's line, and the
    C++ `what()` torch printed becomes the message (DET108's claim on `torch.from_dlpack`)."""
    source = (
        "import numpy as np\nimport torch\n\n"
        "flipped = np.arange(6.0)[::-1]\n"
        "t = torch.from_dlpack(flipped)\n"
    )
    (result,) = run_jobs([job(tmp_path, "aborts.py", source)])
    assert result.outcome == "crashed"
    assert result.exception is not None
    assert (result.exception.type, result.exception.line) == ("abort", 5)
    assert "Storage size calculation overflowed" in result.exception.message


def test_a_run_killed_by_another_signal_is_not_an_abort(tmp_path: Path) -> None:
    source = "import os, signal\nimport torch\n\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    (result,) = run_jobs([job(tmp_path, "segfault.py", source)])
    assert result.outcome == "crashed"
    assert result.exception is not None and result.exception.type == "crash"
    assert "signal" in result.exception.message
