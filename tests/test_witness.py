"""Witnesses (analysis/witness.py): a cached result that depends on other files of its project is
reused after an edit elsewhere while every question its analysis asked gets the same answer, and
is computed again as soon as one answer changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_project import write

from flake8_detach.analysis import exports as exports_module
from flake8_detach.analysis import project as project_module
from flake8_detach.analysis.project import ProjectView, forget_projects, project_view
from flake8_detach.analysis.values import Flag, Value
from flake8_detach.analysis.witness import canonical, holds
from flake8_detach.engine import Place, analyze
from flake8_detach.settings import Settings


@pytest.fixture(autouse=True)
def _fresh_projects() -> None:
    forget_projects()
    project_module.use_summary_directory(None)


def codes(root: Path, name: str, cache: Path) -> list[tuple[int, str]]:
    path = root / name
    return [(d.line, d.code) for d in analyze(path.read_text(), Settings(), place=Place(path, cache)).diagnostics]


GPU_CONFIG = 'import torch\nDEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
BUFFER = """
    import torch
    from config import DEVICE


    class Buffer:
        def sample(self):
            return torch.ones(2).to(DEVICE)
"""
TRAIN = "import torch\nfrom buffer import Buffer\n\nBuffer().sample().numpy()\n"


def test_exports_are_reused_until_an_answer_they_used_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    write(tmp_path, {"setup.py": "", "config.py": GPU_CONFIG, "buffer.py": BUFFER, "train.py": TRAIN})
    assert codes(tmp_path, "train.py", cache) == [(4, "DET104")]  # buffer.py's export: a tensor on DEVICE
    computed: list[str] = []
    compute = exports_module.compute_exports

    def counting(source: str, view: Any, roots: frozenset[str] | None = None) -> dict[str, Any]:
        computed.append(view.path.name)
        return compute(source, view, roots)

    monkeypatch.setattr(exports_module, "compute_exports", counting)
    forget_projects()  # a new process: only the disk is left
    write(tmp_path, {"notes.py": "print('unrelated')\n"})
    assert codes(tmp_path, "train.py", cache) == [(4, "DET104")]
    assert computed == []  # buffer.py's export was read back: its witness held
    forget_projects()
    write(tmp_path, {"config.py": 'import torch\nDEVICE = torch.device("cpu")\n'})
    assert codes(tmp_path, "train.py", cache) == []  # DEVICE is the CPU now
    assert computed == ["buffer.py"]  # is_device_constant("config.DEVICE") answered otherwise


def test_canonical_answers_do_not_depend_on_set_order() -> None:
    assert canonical(frozenset({"b", "a"})) == ["a", "b"]
    assert canonical((True, frozenset({"y", "x"}))) == [True, ["x", "y"]]
    grad = Value(Flag.GRAD, origin="output of model")
    assert canonical({"t": grad}) == {"t": canonical(Value(Flag.GRAD, origin="output of model"))}
    assert canonical(grad) != canonical(Value(Flag.DEVICE, origin="output of model"))


def _view(tmp_path: Path) -> ProjectView:
    write(tmp_path, {"setup.py": "", "config.py": GPU_CONFIG, "train.py": TRAIN})
    view = project_view(tmp_path / "train.py")
    assert view is not None
    return view


def test_a_witness_holds_when_its_answers_are_given_again(tmp_path: Path) -> None:
    view = _view(tmp_path)
    view.witness = {}
    assert view.is_device_constant("config.DEVICE") is True
    assert view.is_module_class("config.DEVICE") is False
    recorded, view.witness = list(view.witness.values()), None
    assert len(recorded) == 2 and holds(view, recorded)
    changed = [[name, arguments, not answer] for name, arguments, answer in recorded]
    assert not holds(view, changed)


def test_a_witness_with_a_null_argument_holds(tmp_path: Path) -> None:
    # `model.eval()` of a model of unknown class asks method_freezes(None, "eval"): a witness that
    # recorded it was refused as malformed, so such a file never reused its result.
    view = _view(tmp_path)
    view.witness = {}
    assert view.method_freezes(None, "eval") is False
    recorded, view.witness = list(view.witness.values()), None
    assert recorded == [["method_freezes", [None, "eval"], False]]
    assert holds(view, recorded)


@pytest.mark.parametrize("stored", [
    None, "is_device_constant", [["open", ["/etc/passwd"], True]], [["is_device_constant", ["config.DEVICE"]]],
    [["is_device_constant", [], True]], [["is_device_constant", [1], True]], [["witness", [], None]],
])
def test_a_malformed_witness_never_holds(tmp_path: Path, stored: Any) -> None:
    assert not holds(_view(tmp_path), stored)


def test_check_reuses_a_result_while_its_witness_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flake8_detach import engine
    from flake8_detach.cli.check import check_paths
    from flake8_detach.sources.cache import ResultsCache

    write(tmp_path, {"setup.py": "", "config.py": GPU_CONFIG, "buffer.py": BUFFER, "train.py": TRAIN})

    def check() -> list[tuple[int, str]]:
        forget_projects()  # a new run: only the disk is left
        cache = ResultsCache.open(tmp_path / "cache")
        assert cache is not None
        project_module.use_summary_directory(cache.directory)
        (report,) = check_paths([(tmp_path / "train.py", Settings())], 1, False, cache)
        return [(d.line, d.code) for d in report.diagnostics]

    assert check() == [(4, "DET104")]
    parses: list[str] = []
    parse = engine.parse
    monkeypatch.setattr(engine, "parse", lambda *arguments: parses.append("train.py") or parse(*arguments))
    write(tmp_path, {"notes.py": "print('unrelated')\n"})  # the project's fingerprint changes
    assert check() == [(4, "DET104")] and parses == []  # the witness held: train.py was not analysed
    write(tmp_path, {"config.py": 'import torch\nDEVICE = torch.device("cpu")\n'})
    assert check() == [] and parses == ["train.py"]


def test_check_reuses_a_notebooks_result_while_its_witness_holds(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Notebooks too: the replay reads the code cells assembled from the notebook's bytes."""
    import json

    from flake8_detach import engine
    from flake8_detach.cli.check import check_paths
    from flake8_detach.sources.cache import ResultsCache

    write(tmp_path, {"setup.py": "", "config.py": GPU_CONFIG, "buffer.py": BUFFER})
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": ["import torch\n", "from buffer import Buffer\n"]},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": ["Buffer().sample().numpy()\n"]}]
    notebook = {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook))

    def check() -> list[tuple[int, str]]:
        forget_projects()
        cache = ResultsCache.open(tmp_path / "cache")
        assert cache is not None
        project_module.use_summary_directory(cache.directory)
        (report,) = check_paths([(tmp_path / "train.ipynb", Settings())], 1, False, cache)
        return [(d.line, d.code) for d in report.diagnostics]

    first = check()
    assert [code for _, code in first] == ["DET104"]
    parses: list[str] = []
    parse = engine.parse
    monkeypatch.setattr(engine, "parse", lambda *arguments: parses.append("train.ipynb") or parse(*arguments))
    write(tmp_path, {"notes.py": "print('unrelated')\n"})
    assert check() == first and parses == []  # the witness held: the notebook was not analysed
    write(tmp_path, {"config.py": 'import torch\nDEVICE = torch.device("cpu")\n'})
    assert check() == [] and parses == ["train.ipynb"]
