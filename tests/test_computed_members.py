"""A project module's name used for what an assignment gave it, and members picked at run time.

`import model` then `model = getattr(model, args.model)(adj)` (vgae_pytorch) or `model =
model.Net()`: from there on `model` is the network, not the module the import table names; and
`getattr(models, name)` of a module whose every public class is an nn.Module is one of them.
Each program is run too: the flagged line raises what the rule claims.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flake8_detach.analysis import project as project_module
from flake8_detach.analysis.project import forget_projects
from flake8_detach.engine import Place, analyze

GRAD_ERROR = "Can't call numpy() on Tensor that requires grad"
MODELS = """
import torch
from torch import nn


class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 1)

    def forward(self, x):
        return self.fc(x)


class Large(Small):
    pass
"""
TRAIN = """
import sys

import torch

import model

model = CHOICE
out = model(torch.ones(2, 3))
print(out.numpy())
"""


@pytest.fixture(autouse=True)
def _fresh_projects() -> None:
    forget_projects()
    project_module.use_summary_directory(None)


def lint(root: Path, files: dict[str, str], name: str) -> list[tuple[int, str]]:
    (root / "setup.py").write_text("")
    for file, text in files.items():
        (root / file).write_text(textwrap.dedent(text).lstrip())
    path = root / name
    return [(d.line, d.code) for d in analyze(path.read_text(), place=Place(path, None)).diagnostics]


def run(root: Path, script: str) -> str:
    result = subprocess.run([sys.executable, str(root / script), "Large"], cwd=root, capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(root)}, check=False, timeout=120)
    return result.stderr


@pytest.mark.parametrize("choice", ["getattr(model, sys.argv[1])(3)", "model.Large(3)"])
def test_a_rebound_module_name_is_the_network(tmp_path: Path, choice: str) -> None:
    train = TRAIN.replace("CHOICE", choice)
    assert lint(tmp_path, {"model.py": MODELS, "train.py": train}, "train.py") == [(9, "DET101")]
    pytest.importorskip("torch")
    assert GRAD_ERROR in run(tmp_path, "train.py")


def test_a_computed_member_of_a_module_with_other_classes_says_nothing(tmp_path: Path) -> None:
    """`getattr(model, name)` may pick a plain class there: no evidence of a module."""
    models = MODELS + "\n\nclass Config:\n    pass\n"
    train = TRAIN.replace("CHOICE", "getattr(model, sys.argv[1])(3)")
    assert lint(tmp_path, {"model.py": models, "train.py": train}, "train.py") == []


@pytest.mark.parametrize(("namespace", "call"), [
    ("torch.nn", "getattr(torch.nn, sys.argv[1])(3, 1)"),
    ("torchvision.models", "getattr(torchvision.models, sys.argv[1])()"),
])
def test_a_computed_member_of_a_library_namespace_of_modules(tmp_path: Path, namespace: str, call: str) -> None:
    source = f"import sys\n\nimport torch\nimport {namespace}\n\nnet = {call}\nprint(net(torch.ones(2, 3)).numpy())\n"
    assert lint(tmp_path, {"main.py": source}, "main.py") == [(7, "DET101")]


def test_an_import_error_fallback_leaves_the_import_in_charge(tmp_path: Path) -> None:
    """`except ImportError: np = None`: the name holds nothing of a known kind, so `np.asarray`
    is still NumPy's (DET106 of a grad tensor)."""
    source = ("import torch\n\ntry:\n    import numpy as np\nexcept ImportError:\n    np = None\n\n"
              "w = torch.ones(3, requires_grad=True)\nprint(np.asarray(w * 2))\n")
    assert lint(tmp_path, {"main.py": source}, "main.py") == [(9, "DET106")]


def test_a_parameter_named_as_an_import_leaves_the_import_in_charge(tmp_path: Path) -> None:
    """A marimo cell receives another cell's imports as parameters (`def _(nn, torch):`): of
    unknown origin, they are still the libraries, so `nn.Parameter(...).data` is a parameter's."""
    source = ("import marimo\n\napp = marimo.App()\n\n\n@app.cell\ndef _():\n    import torch\n"
              "    import torch.nn as nn\n    return nn, torch\n\n\n@app.cell\ndef _(nn, torch):\n"
              "    w = nn.Parameter(torch.ones(3))\n    w.data.fill_(1.0)\n    return\n")
    assert lint(tmp_path, {"cells.py": source}, "cells.py") == [(16, "DET103")]
