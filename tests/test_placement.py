"""Tensors known to live on the CPU (analysis/placement.py): `.cpu()` of one returns it, so DET102
claims nothing there; every way a tensor can leave the CPU, or be joined with one that may have,
keeps the claim."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from test_project import write

from flake8_detach.analysis.project import forget_projects, project_view
from flake8_detach.analysis.witness import holds
from flake8_detach.engine import Place, analyze, check_source
from flake8_detach.settings import Settings

HEAD = "import torch\nfrom torch import nn\n"


def det102_lines(source: str) -> list[int]:
    return [d.line for d in check_source(HEAD + source) if d.code == "DET102"]


ON_THE_CPU = [
    "w = torch.ones(3, requires_grad=True)\n",
    "w = torch.ones(3, requires_grad=True) * 2 + torch.zeros(3)\n",
    "w = nn.Parameter(torch.FloatTensor(3, 3).fill_(1.0))\n",
    "w = nn.Parameter(torch.zeros(3)).to(torch.float64)\n",
    "w = torch.tensor([1.0, 2.0], requires_grad=True).exp().sum()\n",
    "w = torch.cat([torch.ones(2, requires_grad=True), torch.zeros(2)])\n",
    "w = torch.zeros_like(torch.ones(3), requires_grad=True)\n",
    "w = torch.ones(3, requires_grad=True, device='cpu')\n",
    "w = nn.Linear(3, 1)(torch.ones(3)).cpu() * 2\n",  # after `.cpu()`, every operation stays there
    "w = torch.from_numpy(__import__('numpy').ones(3)).requires_grad_()\n",
    "def make():\n    return torch.ones(3, requires_grad=True) @ torch.eye(3)\nw = make()\n",
    "w = torch.zeros(2, requires_grad=True)\nfor _ in range(3):\n    w = torch.cat([w, torch.ones(2)])\n",
]


@pytest.mark.parametrize("made", ON_THE_CPU)
def test_a_tensor_made_and_kept_on_the_cpu_is_not_flagged(made: str) -> None:
    assert det102_lines(made + "w.cpu().detach()\n") == []


MAY_BE_ELSEWHERE = [
    "w = torch.ones(3, requires_grad=True).cuda()\n",
    "w = torch.ones(3, requires_grad=True, device='cuda')\n",
    "w = torch.ones(3, requires_grad=True).to(DEV)\n",  # a place the file cannot read
    "w = torch.ones(3, requires_grad=True).type(torch.cuda.FloatTensor)\n",
    "w = torch.ones(3, requires_grad=True) + torch.ones(3).to(DEV)\n",  # an operand may be elsewhere
    "w = torch.tensor(DEV, requires_grad=True)\n",  # a tensor's data keeps its device
    "w = torch.tensor(nn.Linear(3, 1).weight, requires_grad=True)\n",
    "w = nn.Linear(3, 1).weight\n",  # its layer may be moved
    "w = nn.Linear(3, 1)(torch.ones(3))\n",  # a model's output: where the model is
    "w = torch.ones(3, requires_grad=True) if DEV else nn.Linear(3, 1)(torch.ones(3))\n",  # a join
    "w = torch.zeros(2, requires_grad=True)\nfor _ in range(3):\n    w = torch.cat([w, torch.ones(2).to(DEV)])\n",
    "with torch.device(DEV):\n    w = torch.ones(3, requires_grad=True)\n",
    "torch.set_default_device(DEV)\nw = torch.ones(3, requires_grad=True)\n",
]


@pytest.mark.parametrize("made", MAY_BE_ELSEWHERE)
def test_a_tensor_that_may_be_elsewhere_is_flagged(made: str) -> None:
    assert det102_lines("DEV = torch.ones(1).cuda()\n" + made + "w.cpu().detach()\n") != []


def test_a_field_is_not_known_to_stay_on_the_cpu() -> None:
    # `model.cuda()` moves the parameters its fields hold, wherever it is called.
    source = (
        "class Mask(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.mask = nn.Parameter(torch.zeros(3))\n"
        "    def log(self):\n"
        "        return self.mask.cpu().detach()\n"
        "m = Mask()\nm.log()\n"
    )
    assert det102_lines(source) == [8]


def test_a_move_to_the_gpu_of_a_cpu_tensor_is_still_flagged() -> None:
    assert det102_lines("w = torch.ones(3, requires_grad=True)\nw.cuda().detach()\n") == [4]


def test_a_helper_judged_by_its_callers_joins_where_they_put_its_argument() -> None:
    helper = "def log(t):\n    return t.cpu().detach()\n"
    assert det102_lines(helper + "log(torch.ones(3, requires_grad=True))\n") == []
    both = helper + "log(torch.ones(3, requires_grad=True))\nlog(torch.ones(3, requires_grad=True).cuda())\n"
    assert det102_lines(both) == [4]


@pytest.fixture
def _fresh_projects() -> None:
    forget_projects()


@pytest.mark.usefixtures("_fresh_projects")
def test_a_project_that_moves_the_default_device_keeps_the_claim(tmp_path: Path) -> None:
    train = HEAD + "import setup_gpu\nw = torch.ones(3, requires_grad=True)\nw.cpu().detach()\n"
    write(tmp_path, {"setup.py": "", "train.py": train, "setup_gpu.py": "import torch\n# set_default_device\n"})
    cache = tmp_path / "cache"

    def lines() -> list[int]:
        path = tmp_path / "train.py"
        found = analyze(path.read_text(), Settings(), place=Place(path, cache)).diagnostics
        return [d.line for d in found if d.code == "DET102"]

    assert lines() == []  # the word alone, in a comment: no call
    view = project_view(tmp_path / "train.py")
    assert view is not None
    view.witness = {}
    assert view.moves_default_device() is False
    recorded = list(view.witness.values())
    write(tmp_path, {"setup_gpu.py": "import torch\ntorch.set_default_device('cuda')\n"})
    forget_projects()
    assert lines() == [5]
    # A result cached before the edit is not reused: the question it asked is answered otherwise.
    assert not holds(project_view(tmp_path / "train.py"), recorded)


def test_the_typed_constructors_give_cpu_tensors_whatever_they_are_given() -> None:
    """The library fact `placement.TYPED_CPU_CONSTRUCTORS` rests on, and `torch.tensor`'s opposite one."""
    elsewhere = torch.ones(2, device="meta")
    with pytest.raises(TypeError, match="device=cpu"):
        torch.FloatTensor(elsewhere)
    assert torch.tensor(elsewhere).device.type == "meta"  # takes its data's device
    made = torch.ones(2)
    assert made.cpu() is made  # on the CPU, `.cpu()` is the tensor itself: nothing is recorded
