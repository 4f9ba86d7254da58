"""The results cache of `check`: a second run over unchanged files analyses nothing, and says
exactly what the first said; any change that could change a result misses it."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
from pathlib import Path

import pytest

from flake8_detach import cache as cache_module
from flake8_detach.cache import ResultsCache
from flake8_detach.cli import check as check_module
from flake8_detach.cli import main

REPO = Path(__file__).resolve().parent.parent
HAZARDS = "import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\nw.cpu().detach()\n"
NOTEBOOK = REPO / "fixtures" / "notebooks"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "bad.py").write_text(HAZARDS)
    (tmp_path / "clean.py").write_text("import torch\nprint(torch.ones(2).numpy())\n")
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n")
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9'\n")
    for notebook in sorted(NOTEBOOK.glob("*.ipynb")):
        (tmp_path / notebook.name).write_bytes(notebook.read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLAKE8_DETACH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


class CountingCheck:
    """Counts the files `check` really analyses (the cache answers the others)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        original = check_module.check_path

        def counted(path: Path, *args: object) -> object:
            self.paths.append(path.name)
            return original(path, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(check_module, "check_path", counted)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check", "--jobs", "1", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_second_run_analyses_nothing_and_reports_the_same(
    project: Path, fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = CountingCheck(monkeypatch)
    extra = ["--show-source"] if fmt == "text" else []
    first = run([".", "--format", fmt, *extra], capsys)
    analysed = len(counter.paths)
    assert analysed >= 5  # the .py files and the notebooks
    second = run([".", "--format", fmt, *extra], capsys)
    assert len(counter.paths) == analysed, "the second run analysed files again"
    assert second == first
    uncached = run([".", "--format", fmt, "--no-cache", *extra], capsys)
    assert uncached == first
    assert "DET101" in first[1] and first[0] == 1
    if fmt == "json":  # the rendered fixes come back from the cache too
        assert any(entry["fix"] for entry in json.loads(second[1])["diagnostics"])


def test_changed_content_or_settings_miss_the_cache(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = CountingCheck(monkeypatch)
    run(["bad.py"], capsys)
    (project / "bad.py").write_text(HAZARDS.replace("w.numpy()", "w.detach().numpy()"))
    code, out, _ = run(["bad.py"], capsys)
    assert "DET101" not in out and "DET102" in out
    code, out, _ = run(["bad.py", "--select", "DET101"], capsys)
    assert out == "All checks passed!\n" and code == 0
    code, out, _ = run(["bad.py", "--format", "json"], capsys)  # every format renders fixes: the same entry
    assert counter.paths == ["bad.py"] * 3
    (project / "pyproject.toml").write_text('[tool.flake8-detach]\nignore = ["DET102"]\n')
    code, out, _ = run(["bad.py"], capsys)
    assert out == "All checks passed!\n" and counter.paths == ["bad.py"] * 4


def test_no_cache_writes_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run([".", "--no-cache"], capsys)
    assert not (project / "cache").exists()
    run([".", "--cache-dir", "elsewhere"], capsys)
    assert (project / "elsewhere" / ".gitignore").exists() and not (project / "cache").exists()


def test_cache_folder_ignores_itself_in_git(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    run([".", "--cache-dir", ".flake8_detach_cache"], capsys)
    assert len(list((project / ".flake8_detach_cache").rglob("*.json"))) >= 5
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            check=True, capture_output=True, text=True).stdout
    assert ".flake8_detach_cache" not in status and "bad.py" in status
    assert (project / ".flake8_detach_cache" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f59")


def test_a_damaged_entry_is_a_miss_not_a_crash(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run(["bad.py"], capsys)
    for entry in (project / "cache").rglob("*.json"):
        entry.write_text('{"diagnostics": [["DET101", 1')
    counter = CountingCheck(monkeypatch)
    assert run(["bad.py"], capsys) == first
    assert counter.paths == ["bad.py"]


def test_an_unusable_cache_folder_is_no_cache(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "blocked").write_text("a file where the folder would be")
    uncached = run(["bad.py", "--no-cache"], capsys)
    assert run(["bad.py", "--cache-dir", "blocked"], capsys) == uncached


def test_the_cache_is_bounded_oldest_entries_go_first(tmp_path: Path) -> None:
    from flake8_detach.reporting.model import FileReport
    from flake8_detach.settings import Settings

    cache = ResultsCache.open(tmp_path / "cache", max_bytes=4000)
    assert cache is not None
    keys = [cache.key(str(i).encode(), ".py", Settings(), "check") for i in range(40)]
    for age, key in enumerate(keys):
        cache.put(key, FileReport("x.py", error="n" * 150))
        entry = cache._entry(key)
        os.utime(entry, (1_000_000 + age, 1_000_000 + age))
    assert cache.prune() > 0
    kept = [key for key in keys if cache.get(key, "x.py") is not None]
    assert kept == keys[len(keys) - len(kept):], "not the newest entries that were kept"
    total = sum(entry.stat().st_size for entry in (tmp_path / "cache").rglob("*.json"))
    assert total <= 4000 * 3 // 4


def _writer(directory: str, rounds: int) -> None:
    from flake8_detach.diagnostics import Diagnostic
    from flake8_detach.reporting.model import FileReport
    from flake8_detach.settings import Settings

    cache = ResultsCache.open(Path(directory))
    assert cache is not None
    for i in range(rounds):
        key = cache.key(str(i % 5).encode(), ".py", Settings(), "check")
        cache.put(key, FileReport("x.py", diagnostics=[Diagnostic("DET101", i % 5, 0, "DET101 " + "m" * 5000)],
                                  fixes=[None]))
        assert cache.get(key, "x.py") is not None


def test_concurrent_runs_never_see_half_an_entry(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path / "cache"), 200)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert len(entries) == 5
    assert not list((tmp_path / "cache").rglob("*.part"))
    for entry in entries:
        json.loads(entry.read_text())


def test_a_changed_module_of_the_tool_is_a_new_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    from flake8_detach.settings import Settings

    cache = ResultsCache(Path("unused"))
    before = cache.key(b"x", ".py", Settings(), "check")
    cache_module.code_fingerprint.cache_clear()
    monkeypatch.setattr(cache_module, "__version__", "0.0.0-other")
    try:
        assert cache.key(b"x", ".py", Settings(), "check") != before
    finally:
        cache_module.code_fingerprint.cache_clear()
