"""The flake8 plugin's results cache: a second run of an unchanged project reads its diagnostics
without loading the engine, and anything that decides them (the file, the settings) is part of
the key. Another file of its project decides them only through what the analysis asked of it:
after an edit elsewhere, a result is reused while its witness holds (analysis/witness.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import REPO

MODELS = """\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        return self.fc(x)
"""
NOT_A_MODULE = """\
import torch


class Net:
    def __call__(self, x):
        return torch.zeros(1)  # a plain class: its output has no grad
"""
TRAIN = "import torch\nfrom models import Net\n\nout = Net()(torch.ones(2))\nprint(out.numpy())\n"


def _plugin_run(path: Path, *options: str) -> dict[str, object]:
    """The plugin's lines for ``path`` in a fresh process, and whether that process loaded the engine."""
    code = textwrap.dedent(f"""
        import ast, json, sys
        from flake8_detach.plugin import DetachPlugin
        if {list(options)!r}:
            DetachPlugin.use_cache = False
        path = {str(path)!r}
        source = open(path, encoding="utf-8").read()
        lines = [[line, column, message] for line, column, message, _ in
                 DetachPlugin(ast.parse(source), source.splitlines(True), path).run()]
        print(json.dumps({{"lines": lines, "engine": "flake8_detach.engine" in sys.modules,
                          "libcst": "libcst" in sys.modules}}))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                            check=False, timeout=120)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def _entries() -> list[Path]:
    """The results' entries (each file's result is kept twice: under its project's fingerprint,
    and with its witness)."""
    folder = Path(os.environ["FLAKE8_DETACH_CACHE_DIR"]) / "flake8-detach-v1"
    return [entry for entry in folder.glob("??/*.json")]


def _project(tmp_path: Path) -> Path:
    (tmp_path / "models.py").write_text(MODELS)
    train = tmp_path / "train.py"
    train.write_text(TRAIN)
    return train


def test_an_unchanged_file_is_read_from_the_cache_without_the_engine(tmp_path: Path) -> None:
    train = _project(tmp_path)
    first = _plugin_run(train)
    assert first["engine"] and [message[:6] for _, _, message in first["lines"]] == ["DET101"]  # type: ignore[index,union-attr]
    assert len(_entries()) == 2
    second = _plugin_run(train)
    assert second["lines"] == first["lines"]
    assert second["engine"] is False and second["libcst"] is False


def test_an_edit_to_another_file_of_the_project_is_a_miss(tmp_path: Path) -> None:
    train = _project(tmp_path)
    assert _plugin_run(train)["lines"]
    (tmp_path / "models.py").write_text(NOT_A_MODULE)  # Net is no module now: its output has no grad
    again = _plugin_run(train)
    assert again["engine"] is True and again["lines"] == []


def test_an_edit_that_changes_no_answer_reuses_the_result_without_the_engine(tmp_path: Path) -> None:
    train = _project(tmp_path)
    first = _plugin_run(train)
    (tmp_path / "notes.py").write_text("print('unrelated')\n")  # a new file: the fingerprint changes
    with (tmp_path / "models.py").open("a") as handle:
        handle.write("# a comment changes no answer train.py's analysis got\n")
    again = _plugin_run(train)
    assert again["lines"] == first["lines"]
    assert again["engine"] is False and again["libcst"] is False  # the witness held: nothing was parsed
    assert _plugin_run(train)["engine"] is False  # and the result is stored under the new fingerprint


def test_a_new_caller_of_a_helper_changes_the_helper_s_result(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(MODELS)
    helper = tmp_path / "plots.py"
    helper.write_text("import torch\n\n\ndef show(t):\n    return t.numpy()\n")
    (tmp_path / "evaluate.py").write_text(
        "import torch\nfrom models import Net\nfrom plots import show\n\n"
        "with torch.no_grad():\n    show(Net()(torch.ones(2)))\n")
    assert _plugin_run(helper)["lines"] == []  # its one caller runs under no_grad
    (tmp_path / "train.py").write_text(TRAIN.replace("print(out.numpy())", "from plots import show\nshow(out)"))
    again = _plugin_run(helper)
    assert again["engine"] is True and [message[:6] for _, _, message in again["lines"]] == ["DET101"]  # type: ignore[index,union-attr]
    proof = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True,
                           check=False, timeout=120)
    assert "Can't call numpy() on Tensor that requires grad" in proof.stderr


def test_an_edit_to_the_file_itself_is_a_miss(tmp_path: Path) -> None:
    train = _project(tmp_path)
    _plugin_run(train)
    train.write_text(TRAIN.replace("out.numpy()", "out.detach().numpy()"))
    again = _plugin_run(train)
    assert again["engine"] is True and again["lines"] == []


def test_a_corrupt_entry_is_computed_again(tmp_path: Path) -> None:
    train = _project(tmp_path)
    first = _plugin_run(train)
    for entry in _entries():
        entry.write_text(json.dumps({"key": "not this one"}))
    again = _plugin_run(train)
    assert again["engine"] is True and again["lines"] == first["lines"]


def test_no_cache_neither_reads_nor_writes_results(tmp_path: Path) -> None:
    train = _project(tmp_path)
    assert _plugin_run(train, "--detach-no-cache")["lines"]
    assert _entries() == []


def test_the_no_cache_option_reaches_the_plugin_through_flake8(tmp_path: Path) -> None:
    train = _project(tmp_path)
    command = [sys.executable, "-m", "flake8", "--isolated", "--select", "DET", str(train)]
    with_cache = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, check=False, timeout=120)
    assert "DET101" in with_cache.stdout and len(_entries()) == 2
    (train.parent / "other.py").write_text(TRAIN)
    without = subprocess.run([*command[:-1], "--detach-no-cache", str(train.parent / "other.py")],
                             capture_output=True, text=True, cwd=tmp_path, check=False, timeout=120)
    assert "DET101" in without.stdout and len(_entries()) == 2
