"""The results cache of `check`: a second run over unchanged files analyses nothing, and says
exactly what the first said; any change that could change a result misses it."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pytest

from flake8_detach.cli import check as check_module
from flake8_detach.cli import main
from flake8_detach.sources import cache as cache_module
from flake8_detach.sources.cache import SUBFOLDER, ResultsCache

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

REPO = Path(__file__).resolve().parent.parent
# `w`: a parameter (its layer may be moved to a GPU), so `.cpu().detach()` of it is DET102.
HAZARDS = "import torch\nw = torch.nn.Linear(3, 1).weight\nw.numpy()\nw.cpu().detach()\n"
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
    assert (project / "elsewhere" / SUBFOLDER / ".gitignore").exists() and not (project / "cache").exists()
    assert sorted(path.name for path in (project / "elsewhere").iterdir()) == [SUBFOLDER]


def test_cache_folder_ignores_itself_in_git(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    run([".", "--cache-dir", ".flake8_detach_cache"], capsys)
    assert len(list((project / ".flake8_detach_cache").rglob("*.json"))) >= 5
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            check=True, capture_output=True, text=True).stdout
    assert ".flake8_detach_cache" not in status and "bad.py" in status
    tag = project / ".flake8_detach_cache" / SUBFOLDER / "CACHEDIR.TAG"
    assert tag.read_text().startswith("Signature: 8a477f59")


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
    total = sum(cache_module.disk_usage(entry.stat()) for entry in (tmp_path / "cache").rglob("*.json"))
    assert total <= 4000 * 3 // 4


def _writer(directory: str, rounds: int) -> None:
    from flake8_detach.diagnostics import Diagnostic
    from flake8_detach.reporting.model import FileReport
    from flake8_detach.settings import Settings

    cache = ResultsCache.open(Path(directory))
    assert cache is not None
    for i in range(rounds):
        key = cache.key(str(i % 5).encode(), ".py", Settings(), "check")
        cache.put(key, FileReport("x.py", diagnostics=[Diagnostic("DET101", i % 5 + 1, 0, "DET101 " + "m" * 5000)],
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


@pytest.mark.parametrize("module", ["rules/det101_numpy_on_grad_tensor.py", "fixing/rewrites.py", "engine.py"])
def test_every_module_of_the_package_is_in_the_fingerprint(module: str) -> None:
    """A change anywhere in the package, not only beside the cache module, is a new cache."""
    path = Path(cache_module.__file__).parent.parent / module
    status = path.stat()
    cache_module.code_fingerprint.cache_clear()
    before = cache_module.code_fingerprint()
    try:
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))
        cache_module.code_fingerprint.cache_clear()
        assert cache_module.code_fingerprint() != before
    finally:
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
        cache_module.code_fingerprint.cache_clear()


# The cache owns only what it made (issue 22, items 7, 11 and 18b).

def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_a_users_json_files_in_the_cache_dir_are_never_touched(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = project / "data" / "db"
    for shard in ("ab", "cd", "0f"):
        (data / shard).mkdir(parents=True)
        (data / shard / "x.json").write_text('{"user": 1}')
        (data / shard / ("e" * 38 + ".json")).write_text("[]")  # named as the cache names its entries
    before = _snapshot(data)
    for _ in range(3):
        run([".", "--cache-dir", str(data)], capsys)
    cache = ResultsCache.open(data, max_bytes=1)  # every entry over the bound: prune all it owns
    assert cache is not None and cache.prune() >= 5
    run([".", "--cache-dir", str(data)], capsys)
    after = _snapshot(data)
    assert {name: text for name, text in after.items() if not name.startswith(SUBFOLDER)} == before
    assert sorted(path.name for path in data.iterdir()) == ["0f", "ab", "cd", SUBFOLDER]
    # Inside its own folder too, only the entries go: a file the cache did not name is kept.
    stray = cache.directory / "ab" / "notes.json"
    stray.parent.mkdir(exist_ok=True)
    stray.write_text("mine")
    cache.prune()
    assert stray.read_text() == "mine"


def test_cache_dir_dot_in_a_repository_hides_nothing_of_the_users(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    first = run([".", "--cache-dir", "."], capsys)
    assert not (project / ".gitignore").exists() and not (project / "CACHEDIR.TAG").exists()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            check=True, capture_output=True, text=True).stdout
    assert "bad.py" in status and "clean.py" in status and SUBFOLDER not in status
    assert run([".", "--cache-dir", "."], capsys) == first
    assert run([".", "--no-cache"], capsys) == first
    assert "DET101" in first[1] and "bad.py" in first[1]


def test_an_old_layout_cache_folder_is_left_as_it_is(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = project / "cache"
    (old / "ab").mkdir(parents=True)
    (old / "ab" / ("0" * 38 + ".json")).write_text('{"diagnostics": []}')
    (old / ".gitignore").write_text("*\n")
    before = _snapshot(old)
    uncached = run(["bad.py", "--no-cache"], capsys)
    assert run(["bad.py"], capsys) == uncached
    assert {name: text for name, text in _snapshot(old).items() if not name.startswith(SUBFOLDER)} == before


def _bad_entry(project: Path) -> tuple[ResultsCache, str, bytes]:
    from flake8_detach.settings import Settings

    cache = ResultsCache.open(project / "cache")
    assert cache is not None
    data = (project / "bad.py").read_bytes()
    key = cache.key(data, check_module.cache_kind(project / "bad.py"), Settings(), cache_module.MODE_CHECK)
    assert cache._entry(key).is_file(), "check did not store bad.py's result where expected"
    return cache, key, data


def test_an_entry_names_its_key_a_copied_entry_is_a_miss(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from flake8_detach.settings import Settings

    first = run(["bad.py", "clean.py"], capsys)
    cache, key, _ = _bad_entry(project)
    clean_key = cache.key((project / "clean.py").read_bytes(), check_module.cache_kind(project / "clean.py"), Settings(), cache_module.MODE_CHECK)
    cache._entry(key).write_bytes(cache._entry(clean_key).read_bytes())  # "nothing found", for bad.py
    counter = CountingCheck(monkeypatch)
    assert run(["bad.py", "clean.py"], capsys) == first
    assert counter.paths == []  # a miss: bad.py's result came from its entry kept with its witness
    assert json.loads(cache._entry(key).read_text())["key"] == key  # and was written over the copy
    witnessed = cache.witnessed_key((project / "bad.py").read_bytes(), ".py", Settings(), cache_module.MODE_CHECK)
    clean_witnessed = cache.witnessed_key((project / "clean.py").read_bytes(), ".py", Settings(),
                                          cache_module.MODE_CHECK)
    for target, source in ((key, clean_key), (witnessed, clean_witnessed)):
        cache._entry(target).write_bytes(cache._entry(source).read_bytes())
    assert run(["bad.py", "clean.py"], capsys) == first
    assert counter.paths == ["bad.py"]  # both copies are misses: computed again
    assert json.loads(cache._entry(witnessed).read_text())["key"] == witnessed


def test_a_shard_folder_that_is_a_link_is_neither_read_nor_written_through(
    project: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    uncached = run(["bad.py", "--no-cache"], capsys)
    run(["bad.py"], capsys)
    cache, key, _ = _bad_entry(project)
    outside = tmp_path_factory.mktemp("outside")
    planted = json.loads(cache._entry(key).read_text())
    planted["diagnostics"], planted["fixes"] = [], []
    (outside / cache._entry(key).name).write_text(json.dumps(planted))
    shard = cache._entry(key).parent
    for item in shard.iterdir():
        item.unlink()
    shard.rmdir()
    shard.symlink_to(outside, target_is_directory=True)
    before = _snapshot(outside)
    assert run(["bad.py"], capsys) == uncached
    assert run(["bad.py"], capsys) == uncached
    assert _snapshot(outside) == before, "the cache wrote through a link"
    # The cache's own folder as a link: no cache at all, nothing written there.
    (project / "c2").mkdir()
    (project / "c2" / SUBFOLDER).symlink_to(outside, target_is_directory=True)
    assert run(["bad.py", "--cache-dir", "c2"], capsys) == uncached
    assert _snapshot(outside) == before


def test_an_entry_that_is_a_link_is_not_followed(
    project: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    uncached = run(["bad.py", "--no-cache"], capsys)
    run(["bad.py"], capsys)
    cache, key, _ = _bad_entry(project)
    planted = json.loads(cache._entry(key).read_text())
    planted["diagnostics"], planted["fixes"] = [], []
    target = tmp_path_factory.mktemp("outside") / "entry.json"
    target.write_text(json.dumps(planted))
    cache._entry(key).unlink()
    cache._entry(key).symlink_to(target)
    assert run(["bad.py"], capsys) == uncached
    assert json.loads(target.read_text()) == planted  # replaced the link, never wrote through it
    assert not cache._entry(key).is_symlink()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_an_entry_that_is_a_fifo_does_not_hang_check(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    uncached = run(["bad.py", "--no-cache"], capsys)
    run(["bad.py"], capsys)
    cache, key, _ = _bad_entry(project)
    cache._entry(key).unlink()
    os.mkfifo(cache._entry(key))
    env = dict(os.environ, PYTHONPATH=str(REPO), FLAKE8_DETACH_CACHE_DIR=str(project / "cache"))
    completed = subprocess.run([sys.executable, "-m", "flake8_detach", "check", "bad.py"], cwd=project, env=env,
                               capture_output=True, text=True, timeout=60, check=False)
    assert (completed.returncode, completed.stdout) == uncached[:2]
    assert "Traceback" not in completed.stderr


def test_the_bound_is_disk_usage_not_length(tmp_path: Path) -> None:
    from flake8_detach.reporting.model import FileReport
    from flake8_detach.settings import Settings

    cache = ResultsCache.open(tmp_path / "cache", max_bytes=100 * 1024)
    assert cache is not None
    keys = [cache.key(str(i).encode(), ".py", Settings(), "check") for i in range(200)]
    for key in keys:
        cache.put(key, FileReport("x.py", error="e"))
    entries = list(cache.directory.rglob("*.json"))
    length = sum(entry.stat().st_size for entry in entries)
    usage = sum(cache_module.disk_usage(entry.stat()) for entry in entries)
    if usage <= 100 * 1024:
        pytest.skip("this file system stores small files in less than a block")
    assert length < 100 * 1024 < usage  # by length, nothing would go
    assert cache.prune() > 0
    usage = sum(cache_module.disk_usage(entry.stat()) for entry in cache.directory.rglob("*.json"))
    assert usage <= 100 * 1024 * 3 // 4


def test_stale_temporary_files_of_killed_runs_are_pruned_and_only_those(tmp_path: Path) -> None:
    cache = ResultsCache.open(tmp_path / "cache")
    assert cache is not None
    shard = cache.directory / "ab"
    shard.mkdir()
    stale, fresh = shard / ".tmp-abc123.part", shard / ".tmp-def456.part"
    for temporary in (stale, fresh):
        temporary.write_text("half an entry")
    os.utime(stale, (1_000_000, 1_000_000))
    cache.prune()
    assert not stale.exists() and fresh.exists()


# Damaged entries: anything the cache would not have written is a miss, never a traceback.

def _paths(value: object, at: tuple[object, ...] = ()) -> list[tuple[tuple[object, ...], object]]:
    """Every place inside an entry, with what is there (the entry itself first)."""
    found: list[tuple[tuple[object, ...], object]] = [(at, value)]
    if isinstance(value, dict):
        for name, item in value.items():
            found += _paths(item, (*at, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*at, index))
    return found


def _wrong(at: tuple[object, ...], value: object) -> list[object]:
    """Values no place ``at`` holding ``value`` accepts (None is offered only where it cannot be
    right: not for text or lists, nor for a cell error's optional line, column or JSON line)."""
    common: list[object] = [1.5, {}, float("nan")]
    optional = at[:1] == ("cell_errors",) and len(at) == 3 and at[2] in (2, 3, 4)
    if isinstance(value, bool):
        return [*common, None, 1, "true"]
    if isinstance(value, int):
        return [*common, str(value), 10**30, -1 - value, True, [value], *([] if optional else [None])]
    if isinstance(value, str):
        return [*common, 0, [value], "\ud800"]
    if value is None:
        return [*common, [[]], -1]
    assert isinstance(value, list)
    return [*common, "x", 7, [*value, 0]]


def _replaced(entry: object, at: tuple[object, ...], new: object) -> object:
    if not at:
        return new
    copy = json.loads(json.dumps(entry))
    place = copy
    for step in at[:-1]:
        place = place[step]
    place[at[-1]] = new
    return copy


def _corruptions(entry: dict[str, object]) -> SearchStrategy[str]:
    from hypothesis import strategies as st

    text = json.dumps(entry)
    places = [(at, value) for at, value in _paths(entry) if at]  # the whole entry: replaced below
    replaced = st.sampled_from(places).flatmap(
        lambda place: st.sampled_from(_wrong(*place)).map(lambda new: json.dumps(_replaced(entry, place[0], new))))
    fields = sorted(entry)
    dropped = st.sampled_from(fields).map(lambda name: json.dumps({k: v for k, v in entry.items() if k != name}))
    other_key = st.just(json.dumps({**entry, "key": "0" * 40}))
    extra = st.just(json.dumps({**entry, "extra": 1}))
    truncated = st.integers(0, len(text) - 1).map(lambda end: text[:end])
    wholesale = st.sampled_from(["null", "[]", "1", '"x"', "[" * 100_000, "\x00\xff", "{}", text + "x"])
    nested = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                          lambda inner: st.lists(inner, max_size=4), max_leaves=12)
    random_diagnostics = st.lists(nested, min_size=1, max_size=3).map(
        lambda items: json.dumps({**entry, "diagnostics": items}))
    return st.one_of(replaced, dropped, other_key, extra, truncated, wholesale, random_diagnostics)


def _entries(project: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[ResultsCache, str, Path, bytes]]:
    from flake8_detach.settings import Settings

    run(["bad.py", "train_across_cells.ipynb"], capsys)
    cache = ResultsCache.open(project / "cache")
    assert cache is not None
    found = []
    for name in ("bad.py", "train_across_cells.ipynb"):
        data = (project / name).read_bytes()
        key = cache.key(data, check_module.cache_kind(project / name), Settings(), cache_module.MODE_CHECK)
        entry = json.loads(cache._entry(key).read_text())
        assert entry["diagnostics"], f"{name}: an entry with nothing to damage"
        assert cache.get(key, name, data) is not None
        found.append((cache, key, project / name, data))
    return found


@pytest.mark.parametrize("damage", [
    lambda e: e["diagnostics"][0].__setitem__(1, str(e["diagnostics"][0][1])),  # a line given as a string
    lambda e: e["diagnostics"][0].__setitem__(0, None),  # a null code
    lambda e: e["diagnostics"][0].__setitem__(0, "DET999"),  # a code the catalog does not know
    lambda e: e["diagnostics"][0].__setitem__(3, "looks fine"),  # a message that is not the code's
    lambda e: e["diagnostics"][0].__setitem__(1, 10**30),  # far past the file's last line
    lambda e: e["diagnostics"][0].__setitem__(2, -1),
    lambda e: e["diagnostics"][0].__setitem__(1, True),
    lambda e: e["fixes"].pop(),  # fixes that do not match the diagnostics
    lambda e: e.__setitem__("source", "print()\n"),  # a notebook's entry for a .py file
    lambda e: e.__setitem__("key", "f" * 40),
], ids=["string line", "null code", "unknown code", "foreign message", "huge line", "negative column",
        "boolean line", "fixes short", "notebook source", "other key"])
def test_the_damage_issue_22_names_is_a_miss(
    project: Path, capsys: pytest.CaptureFixture[str], damage: Callable[[dict[str, Any]], object]
) -> None:
    uncached = run(["bad.py", "--no-cache"], capsys)
    run(["bad.py"], capsys)
    cache, key, data = _bad_entry(project)
    entry = json.loads(cache._entry(key).read_text())
    damage(entry)
    cache._entry(key).write_text(json.dumps(entry))
    assert cache.get(key, "bad.py", data) is None
    assert run(["bad.py"], capsys) == uncached


def test_a_damaged_entry_is_always_a_miss(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    entries = _entries(project, capsys)  # a .py file's and a notebook's
    originals = [cache._entry(key).read_text() for cache, key, _, _ in entries]
    corruptions = [_corruptions(json.loads(original)) for original in originals]

    @settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=True, database=None)
    @given(st.data(), st.sampled_from(range(len(entries))))
    def damaged_is_a_miss(draw: st.DataObject, which: int) -> None:
        cache, key, path, data = entries[which]
        text = draw.draw(corruptions[which])
        cache._entry(key).write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            assert cache.get(key, path.name, data) is None, text[:300]
        finally:
            cache._entry(key).write_text(originals[which])

    damaged_is_a_miss()
    for cache, key, path, data in entries:
        assert cache.get(key, path.name, data) is not None


def test_check_over_damaged_entries_says_what_no_cache_says(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    entries = _entries(project, capsys)
    names = [path.name for _, _, path, _ in entries]
    uncached = run([*names, "--format", "json", "--no-cache"], capsys)
    corruptions = [_corruptions(json.loads(cache._entry(key).read_text())) for cache, key, _, _ in entries]

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=True, database=None)
    @given(st.data())
    def same_output(draw: st.DataObject) -> None:
        for (cache, key, _, _), corruption in zip(entries, corruptions):
            text = draw.draw(corruption)
            cache._entry(key).write_text(text, encoding="utf-8", errors="surrogatepass")
        assert run([*names, "--format", "json"], capsys) == uncached

    same_output()
