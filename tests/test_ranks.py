"""0-dim tensors (analysis/ranks.py): indexing one raises, so nothing flows from `loss.data[0]`.

The tables are read again from the installed torch, and the programs are executed: where the
linter now says nothing, the program stops with the IndexError before the conversion it used to
report.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flake8_detach import check_source
from flake8_detach.analysis import ranks
from flake8_detach.analysis.project import forget_projects
from flake8_detach.engine import Place, analyze
from flake8_detach.settings import Settings

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

net = nn.Linear(3, 2)
criterion = nn.NLLLoss()
losses = []
for step in range(2):
    x = torch.randn(4, 3)
    y = torch.zeros(4, dtype=torch.long)
    loss = 0
    loss += criterion(net(x), y)
    losses.append(VALUE)
plt.plot(losses)
"""


def codes(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check_source(source, settings=Settings(select=("DET106",)))]


def raised(source: str) -> type[BaseException] | None:
    try:
        exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})  # noqa: S102
    except Exception as error:  # noqa: BLE001  (which error the program stops with is the claim)
        return type(error)
    return None


@pytest.mark.parametrize("value", [
    "loss.data[0] / 3",                         # the accumulated loss, then arithmetic
    "criterion(net(x), y).data[0]",             # a loss module's call
    "F.mse_loss(net(x), net(x).detach()).data[-1]",  # a loss function with its default reduction
    "nn.MSELoss(size_average=False)(net(x), x[:, :2]).data[0]",  # `size_average=False` sums
    "net(x).sum().data[0]",                     # a full reduction, method form
    "torch.mean(net(x)).detach()[0]",           # function form, detached
    "(-loss.cpu() * 2).data[0]",                # moves and arithmetic keep it
])
def test_indexing_a_zero_dim_tensor_gives_nothing(value: str) -> None:
    source = PROGRAM.replace("VALUE", value)
    assert codes(source) == []
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    assert raised(source) is IndexError


@pytest.mark.parametrize("value", [
    "net(x).data[0]",                            # a row of the output: a tensor with grad's data
    "nn.MSELoss(reduction='none')(net(x), x[:, :2]).data[0]",  # no reduction: one row
    "F.mse_loss(net(x), x[:, :2], reduce=False).data[0]",
    "net(x).sum(0).data[0]",                     # a reduction over one dimension
    "(loss + net(x)).data[0]",                   # broadcast with a 2-d tensor
    "loss.data[None]",                           # `t[None]` of a 0-dim tensor works
])
def test_a_tensor_with_dimensions_still_flows(value: str) -> None:
    """The twins: each list holds a tensor plot refuses... on a GPU (DET106 speaks of the device
    here: the values carry no grad). With `.to(device)` the claim is the device's."""
    source = PROGRAM.replace("VALUE", value).replace("net = nn.Linear(3, 2)", (
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "net = nn.Linear(3, 2).to(device)")).replace("torch.randn(4, 3)", "torch.randn(4, 3).to(device)")
    assert codes(source) == [(source.count("\n"), "DET106")]


def _reduce_position(function: object) -> tuple[int, object]:
    parameters = list(inspect.signature(function).parameters.values())  # type: ignore[arg-type]
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    first = next(i for i, p in enumerate(parameters) if p.name in ("reduce", "reduction"))
    reduction = next(p.default for p in parameters if p.name == "reduction")
    return min(first, len(positional)), reduction


def test_the_loss_tables_match_the_installed_torch() -> None:
    """Every loss of torch.nn and torch.nn.functional with a `reduction` is in the tables, at the
    position its signature has, and reduces by default."""
    nn = pytest.importorskip("torch.nn")
    functional = pytest.importorskip("torch.nn.functional")
    modules = {name: _reduce_position(getattr(nn, name)) for name in dir(nn)
               if name.endswith("Loss") and "reduction" in inspect.signature(getattr(nn, name)).parameters}
    functions = {name: _reduce_position(getattr(functional, name)) for name in dir(functional)
                 if not name.startswith("_") and callable(getattr(functional, name)) and name.endswith(("loss", "entropy", "kl_div", "logits"))
                 and "reduction" in inspect.signature(getattr(functional, name)).parameters}
    assert {name: position for name, (position, _) in modules.items()} == ranks.LOSS_MODULES
    assert {name: position for name, (position, _) in functions.items()} == ranks.LOSS_FUNCTIONS
    assert {default for _, default in [*modules.values(), *functions.values()]} == {"mean"}


def test_full_reductions_give_zero_dim_tensors() -> None:
    torch = pytest.importorskip("torch")
    t = torch.rand(3, 4)
    for name in sorted(ranks.FULL_REDUCTIONS):
        operand = t > 0.5 if name in ("all", "any") else t[:3, :3] if name == "trace" else t
        assert getattr(operand, name)().dim() == 0, name
        assert getattr(torch, name)(operand).dim() == 0, name



HELPER = """
import torch


def masked_loss(logits, target, length):
    losses = -torch.gather(logits.log_softmax(-1), 1, target.view(-1, 1))
    return losses.sum() / length.float().sum()
"""
SCRIPT = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
from torch import nn

from helper import masked_loss

device = "meta"  # stands in for a GPU: .numpy() refuses it with the same TypeError
net = nn.Linear(3, 2).to(device)
history = []
for step in range(2):
    loss = masked_loss(net(torch.randn(4, 3, device=device)), torch.zeros(4, 1, dtype=torch.long, device=device),
                       torch.ones(4, device=device))
    history.append(loss.data[0])
plt.plot(history)
"""


@pytest.mark.parametrize(("reduction", "flagged"), [(".sum()", False), (".sum(1)", True)])
def test_what_another_files_function_returns_keeps_its_rank(tmp_path: Path, reduction: str, flagged: bool) -> None:
    """A helper of another file returns a 0-dim loss: the call's arguments give it their grad and
    device, not their shape, so `loss.data[0]` raises and plot gets nothing. Its twin returns one
    loss per row: `.data[0]` is a row, on the device, and plot refuses it."""
    forget_projects()
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "helper.py").write_text(textwrap.dedent(HELPER).lstrip().replace("losses.sum()", f"losses{reduction}"))
    script = textwrap.dedent(SCRIPT).lstrip()
    (tmp_path / "train.py").write_text(script)
    found = [(d.line, d.code) for d in analyze(script, place=Place(tmp_path / "train.py", None)).diagnostics]
    assert [item for item in found if item[1] == "DET106"] == ([(script.count("\n"), "DET106")] if flagged else [])
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    ran = subprocess.run([sys.executable, str(tmp_path / "train.py")], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)}, check=False, timeout=120)
    assert ("can't convert meta device type tensor to numpy" if flagged else "IndexError") in ran.stderr
