"""Tensors known to live on the CPU (analysis/placement.py): `.cpu()` of one returns it, so DET102
claims nothing there; every way a tensor can leave the CPU, or be joined with one that may have,
keeps the claim."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from test_project import write
from torch import nn

from flake8_detach.analysis import placement
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


# ---------------------------------------------------------------- runs that stop on a GPU
# A tensor on the CPU meets one on a GPU in an operation that checks devices: a run with the GPU
# raises there, so what the operation gives is only computed on the CPU (Flag.CPU_RUNS_ONLY).
GPU_HEAD = "DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"


def device_lines(source: str, code: str = "DET104") -> list[int]:
    return [d.line for d in check_source(HEAD + GPU_HEAD + source) if d.code == code]


STOPPED_ON_A_GPU = [
    # line 3 of HEAD + GPU_HEAD is the first line below; the `.numpy()` is on the last line
    "w = torch.zeros(3, 2, device=DEVICE)\ny = torch.mm(torch.ones(4, 3), w)\n",
    "w = torch.zeros(3, 2, device=DEVICE)\ny = torch.ones(4, 3) @ w + 1\n",
    "w = torch.zeros(2, 3, device=DEVICE)\ny = torch.nn.functional.linear(torch.ones(4, 3), w).exp()\n",
    "w = torch.zeros(3, 2, device=DEVICE)\ny = torch.ones(4, 3).matmul(w)\n",
    # an elementwise operation with a GPU tensor afterwards passes it on
    "w = torch.zeros(3, 2, device=DEVICE)\nb = torch.zeros(2, device=DEVICE)\ny = torch.add(torch.mm(torch.ones(4, 3), w), b)\n",
    "layer = nn.Linear(3, 2).to(DEVICE)\ny = layer(torch.ones(4, 3)).detach()\n",
    "layer = nn.LSTM(3, 2).to(DEVICE)\ny, _ = layer(torch.ones(5, 4, 3))\ny = y.detach()\n",
    # through a function of the file: the result stays one that only CPU runs compute
    ("def soft(z):\n    return torch.exp(z) / torch.exp(z).sum()\n"
    "w = torch.zeros(3, 2, device=DEVICE)\ny = soft(torch.mm(torch.ones(4, 3), w))\n"),
    # through a method of a plain class whose weights were made on the device (set 55's notebook)
    ("class Scratch:\n    def __init__(self):\n        self.w = torch.zeros(2, 3, device=DEVICE)\n"
    "    def forward(self, x):\n        logits = torch.mm(x, self.w.t())\n        return logits, torch.softmax(logits, dim=1)\n"
    "model = Scratch()\n_, y = model.forward(torch.tensor([[1.0, 2.0, 3.0]]).float())\n"),
    # a join with what a GPU run cannot reach is where the other side is
    "w = torch.zeros(3, 2, device=DEVICE)\ny = torch.mm(torch.ones(4, 3), w) if FLAG else torch.ones(4, 2)\n",
    # a module class of the file whose own layer meets the CPU input, called on an instance moved there
    ("class Flow(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(3, 2)\n"
     "    def forward(self, x):\n        return self.net(x).exp()\n"
     "model = Flow().to(DEVICE)\ny = model(torch.ones(4, 3)).detach()\n"),
    # the parameter of a helper every call gives a CPU tensor
    "w = torch.zeros(3, 2, device=DEVICE)\ndef predict(x):\n    return torch.mm(x, w)\ny = predict(torch.ones(4, 3))\n",
]


@pytest.mark.parametrize("computed", STOPPED_ON_A_GPU)
def test_what_only_runs_without_a_gpu_compute_is_not_on_a_gpu(computed: str) -> None:
    assert device_lines(computed + "y.numpy()\n") == []


STILL_ON_A_GPU = [
    "w = torch.zeros(3, 2, device=DEVICE)\ny = torch.mm(torch.ones(4, 3).to(DEVICE), w)\n",  # both there
    "w = torch.zeros(3, device=DEVICE)\ny = torch.ones(()) + w\n",  # `+` takes a 0-dim CPU tensor
    "w = torch.zeros(3, 2, device=DEVICE)\ny = torch.mm(X, w)\n",  # X: nothing says where it lives
    # a join with a value a GPU run computes
    "w = torch.zeros(3, 2, device=DEVICE)\nif FLAG:\n    y = torch.mm(torch.ones(4, 3), w)\nelse:\n    y = w * 2\n",
    # a module of unknown class may move its input itself
    "model = torch.hub.load('repo', 'net').to(DEVICE)\ny = model(torch.ones(4, 3)).detach()\n",
    # a module class of the file that moves its input to where its layers are
    ("class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 2)\n"
    "    def forward(self, x):\n        return self.fc(x.to(DEVICE))\n"
    "model = Net().to(DEVICE)\ny = model(torch.ones(4, 3)).detach()\n"),
    "model = nn.DataParallel(nn.Linear(3, 2)).to(DEVICE)\ny = model(torch.ones(4, 3)).detach()\n",
    # the same class, its input moved first, or its output moved after
    ("class Flow(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(3, 2)\n"
     "    def forward(self, x):\n        return self.net(x).exp()\n"
     "model = Flow().to(DEVICE)\ny = model(torch.ones(4, 3).to(DEVICE)).detach()\n"),
    ("class Flow(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(3, 2)\n"
     "    def forward(self, x):\n        return self.net(x).exp()\n"
     "model = Flow()\ny = model(torch.ones(4, 3)).detach().to(DEVICE)\n"),
    # the program may build its factories on the GPU
    "torch.set_default_device(DEVICE)\nw = torch.zeros(3, 2, device=DEVICE)\ny = torch.mm(torch.ones(4, 3), w)\n",
    # a helper whose parameter some call gives a GPU tensor
    ("w = torch.zeros(3, 2, device=DEVICE)\ndef predict(x):\n    return torch.mm(x, w)\n"
    "predict(torch.ones(4, 3))\ny = predict(torch.ones(4, 3).to(DEVICE))\n"),
]


@pytest.mark.parametrize("computed", STILL_ON_A_GPU)
def test_what_a_gpu_run_may_compute_is_still_flagged(computed: str) -> None:
    assert device_lines(computed + "y.numpy()\n") == [len((computed + "y.numpy()\n").splitlines()) + 3]


def test_a_copy_to_the_cpu_of_what_only_cpu_runs_compute_is_no_recorded_copy() -> None:
    """DET102's claim is a copy recorded on a GPU: a run that gets here has none."""
    source = ("w = torch.zeros(3, 2, device=DEVICE, requires_grad=True)\n"
              "y = torch.mm(torch.ones(4, 3), w)\ny.cpu().detach()\n")
    assert device_lines(source, "DET102") == []
    assert device_lines(source.replace("torch.ones(4, 3)", "X"), "DET102") == [6]


# torch 2.13 on the meta device checks these layers' parameters against a CPU input as CUDA does;
# Conv and `torch.mm` pass on meta and are checked on a GPU only (CUDA: "Input type
# (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same",
# "... (when checking argument for argument mat2 in method wrapper_CUDA_mm)").
META_CHECKED = {"Linear": (nn.Linear(3, 2), (torch.ones(4, 3),)),
                "Bilinear": (nn.Bilinear(3, 3, 2), (torch.ones(4, 3), torch.ones(4, 3))),
                "LSTM": (nn.LSTM(3, 2), (torch.ones(5, 4, 3),)), "GRU": (nn.GRU(3, 2), (torch.ones(5, 4, 3),)),
                "LSTMCell": (nn.LSTMCell(3, 2), (torch.ones(4, 3),)), "GRUCell": (nn.GRUCell(3, 2), (torch.ones(4, 3),))}


@pytest.mark.parametrize("name", sorted(META_CHECKED))
def test_a_layer_elsewhere_refuses_a_cpu_input(name: str) -> None:
    assert name in placement.DEVICE_CHECKING_LAYERS
    layer, inputs = META_CHECKED[name]
    with pytest.raises(RuntimeError, match="device"):
        layer.to("meta")(*inputs)


GPU_CHECKED = {"Conv2d": (nn.Conv2d(1, 1, 1), lambda: torch.ones(1, 1, 2, 2)), "RNN": (nn.RNN(3, 2), lambda: torch.ones(5, 4, 3)),
               "Linear": (nn.Linear(3, 2), lambda: torch.ones(4, 3))}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the GPU's device checks cannot be run here")
@pytest.mark.parametrize("name", sorted(GPU_CHECKED))
def test_a_layer_on_the_gpu_refuses_a_cpu_input(name: str) -> None:
    layer, make = GPU_CHECKED[name]
    with pytest.raises(RuntimeError):
        layer.cuda()(make())
    with pytest.raises(RuntimeError):
        torch.mm(torch.ones(2, 2), torch.ones(2, 2, device="cuda"))
