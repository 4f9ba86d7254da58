"""Evidence by use (analysis/uses.py), distributions' draws (analysis/distributions.py) and the
fields an assignment rewrites: each case with its twin, and executed where torch is installed.
"""

from __future__ import annotations

import warnings

import pytest
from running import failing_line

from flake8_detach import check_source
from flake8_detach.analysis.uses import TENSOR_ARGUMENTS
from flake8_detach.settings import Settings

PREVIEW = Settings(preview=True)


def codes(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check_source(source, settings=PREVIEW)]


ENCODING = """import math

import torch


def encode(d_model, max_len):
    position = torch.arange(0, max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model))
    return torch.as_tensor(position.numpy() * div_term.unsqueeze(0).numpy())
"""


def test_a_parameter_used_as_a_size_is_a_number() -> None:
    """`torch.arange(0, d_model, 2)`: `d_model` is a number, so what it divides carries no grad a
    caller could pass (the Transformer's positional encoding)."""
    assert codes(ENCODING) == []
    unsized = ENCODING.replace("torch.arange(0, d_model, 2)", "torch.arange(0, 8, 2)")
    assert codes(unsized) == [(9, "DET111")]  # `d_model` may be a tensor a caller passes with grad
    pytest.importorskip("torch")
    assert failing_line(ENCODING + "\nencode(8, 5)\n") is None
    assert failing_line(unsized + "\nencode(torch.tensor(8.0, requires_grad=True), 5)\n") == 9


POLICY = """import torch
from torch import nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        dist = Categorical(logits=self.fc(x))
        return dist, x.sum()


policy = Policy()
dist, value = policy(torch.ones(1, 4))
action = dist.sample()
print(action.cpu().numpy())
print(dist.log_prob(action).numpy())
"""


def test_a_draw_from_a_distribution_carries_no_grad() -> None:
    """`dist.sample()` runs under no_grad inside torch: its `.numpy()` works; `log_prob` keeps the
    grad of the logits the distribution was built from."""
    assert codes(POLICY) == [(20, "DET101")]
    pytest.importorskip("torch")
    assert failing_line(POLICY) == 20
    assert failing_line(POLICY.replace("dist.log_prob(action)", "dist.log_prob(action).detach()")) is None


FIELDS = """import numpy as np
import torch


class Trainer:
    def __init__(self, edges):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.edges = edges
        self.net = torch.nn.Linear(2, 2).to(self.device)

    def setup(self):
        self.pos = self.edges[:2]
        self.pos = torch.from_numpy(np.array(self.pos, dtype=np.float32)).to(self.device)

    def save(self):
        self.z = self.net(self.pos)
        self.z = self.z.cpu().detach().numpy()
        self.z = np.concatenate([np.zeros((2, 1)).reshape(-1, 1), self.z], axis=1)


trainer = Trainer([[1, 2], [3, 4], [5, 6]])
trainer.setup()
trainer.save()
"""


def test_a_field_rewritten_from_itself_is_what_was_written_before() -> None:
    """`self.pos = torch.from_numpy(np.array(self.pos))...`: the read is the list written the line
    before, not the join with the tensor this very line writes; a method call on an array
    (`np.zeros(...).reshape(...)`) rebinds no field of `self`."""
    assert codes(FIELDS) == [(17, "DET102")]
    moved = FIELDS.replace("        self.pos = self.edges[:2]\n", "        self.pos = self.net(torch.ones(2, 2))\n")
    assert (13, "DET106") in codes(moved)  # the field holds an output on the device there
    pytest.importorskip("torch")
    assert failing_line(FIELDS) is None


METRICS = """import torch
import torch.nn.functional as F


def compute_metrics(decode, embeddings, edges):
    scores = decode(embeddings, edges)
    loss = F.binary_cross_entropy(scores, torch.ones_like(scores))
    if scores.is_cuda:
        scores = scores.cpu()
    return loss, list(scores.data.numpy())
"""


def test_the_input_of_a_functional_is_a_tensor() -> None:
    """`F.binary_cross_entropy(scores, ...)`, `torch.ones_like(scores)`: a list or an array raises
    there, so `scores.data` is Tensor.data (hgcn's link-prediction metrics)."""
    assert codes(METRICS) == [(10, "DET103")]
    untold = METRICS.replace("F.binary_cross_entropy(scores, torch.ones_like(scores))", "0.0")
    assert codes(untold) == []  # `.cpu()` and `.is_cuda` say no more than a module's would


INIT_LSTM = """import numpy as np
import torch.nn as nn


def init_lstm(input_lstm):
    for ind in range(0, input_lstm.num_layers):
        weight = eval('input_lstm.weight_ih_l' + str(ind))
        bias = np.sqrt(6.0 / (weight.size(0) / 4 + weight.size(1)))
        nn.init.uniform_(weight, -bias, bias)
    if input_lstm.bias:
        for ind in range(0, input_lstm.num_layers):
            weight = eval('input_lstm.bias_ih_l' + str(ind))
            print(weight.data.norm())
"""


def test_the_input_of_an_init_function_is_a_tensor() -> None:
    """`nn.init.uniform_(weight, ...)` refuses a list or an array, so `weight` is a tensor (a
    parameter) wherever the function names it: NER-pytorch's `init_lstm`, whose weights come out
    of `eval`."""
    assert codes(INIT_LSTM) == [(13, "DET103")]
    assert codes(INIT_LSTM.replace("nn.init.uniform_(weight, -bias, bias)", "nn.init.calculate_gain('relu')")) == []


INIT_GATE = """import torch


def init_gate(bias):
    n = bias.size(0)
    start, end = n // 4, n // 2
    bias.data[start:end].fill_(1.)
    return bias


def first_image(dataset):
    images = dataset.data.unsqueeze(1)
    return dataset.data, images
"""


def test_an_in_place_method_on_the_data_of_a_name_makes_it_a_tensor() -> None:
    """`bias.data[start:end].fill_(1.)` initialises a parameter (End-to-end-ASR's `init_gate`, given a
    `getattr` of an LSTM's bias); a dataset's `.data` is a tensor too, but only read, never filled
    in place, so `dataset.data.unsqueeze(1)` says nothing of `dataset`."""
    assert codes(INIT_GATE) == [(7, "DET103")]
    assert codes(INIT_GATE.replace(".fill_(1.)", ".sum()")) == []
    pytest.importorskip("torch")
    written = INIT_GATE + (  # the parameter itself is written, and a dataset's `.data` is a tensor
        "\nlstm = torch.nn.LSTM(2, 3)\ninit_gate(lstm.bias_ih_l0)\n"
        "assert lstm.bias_ih_l0[3:6].tolist() == [1.0, 1.0, 1.0]\n"
        "class Digits:\n    data = torch.zeros(2, 4, 4)\n\n\nassert first_image(Digits())[1].shape == (2, 1, 4, 4)\n")
    assert failing_line(written) is None


def test_the_init_functions_refuse_an_array_and_a_list() -> None:
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    from torch.nn import init

    from flake8_detach.analysis.uses import _takes_a_tensor

    names = [name for name in dir(init) if not name.startswith("_") and callable(getattr(init, name))]
    taking = [name for name in names if _takes_a_tensor(f"torch.nn.init.{name}")]
    assert "uniform_" in taking and "xavier_normal" in taking and "calculate_gain" not in taking
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the names without `_` are deprecated aliases
        for name in taking:
            rest = (0.5,) if name.startswith(("constant", "sparse")) else ()  # the value, the sparsity
            for given in (np.zeros((3, 4)), [[0.0] * 4] * 3):
                with pytest.raises((AttributeError, TypeError)):
                    getattr(init, name)(given, *rest)
            getattr(init, name)(torch.zeros(3, 3, 3) if name.startswith("dirac") else torch.zeros(3, 4), *rest)


FOCAL = """import torch.nn.functional as F


def focal(logits, target, alpha):
    target = target.view(-1, 1)
    logpt = F.log_softmax(logits, dim=1).gather(1, target).view(-1)
    at = alpha.gather(0, target.data.view(-1))
    return -(at * logpt).mean()
"""


def test_the_index_of_a_tensor_method_is_a_tensor() -> None:
    """`x.gather(1, target)` takes only a tensor as its index (a list or an array raises), so
    `target.data` is Tensor.data (character-based-cnn's focal loss)."""
    assert codes(FOCAL) == [(7, "DET103")]
    assert codes(FOCAL.replace(".gather(1, target)", "")) == []  # `.view(-1, 1)` is an ndarray's too


@pytest.mark.parametrize("method", sorted(TENSOR_ARGUMENTS))
def test_the_methods_that_take_a_tensor_argument_refuse_an_array(method: str) -> None:
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    position, keyword = TENSOR_ARGUMENTS[method]
    x = torch.rand(3, 3)
    given = np.zeros((3, 3), dtype=bool) if keyword == "mask" else np.zeros((3, 1), dtype=np.int64)
    arguments: list[object] = [1, given, x[:, :1] if "scatter" in method else 0.5][: 3] if position else [given, x]
    if method.startswith("index_"):
        arguments = [0, given.reshape(-1), x if method.startswith(("index_add", "index_copy")) else 0.5]
    if method.startswith(("gather", "index_select")):
        arguments = arguments[:2]
    if method.startswith(("masked_fill", "masked_scatter")):
        arguments = [given, 0.5 if "fill" in method else x]
    if method == "masked_select":
        arguments = [given]
    assert not hasattr(np.ndarray, method)
    with pytest.raises(TypeError):
        getattr(x.clone(), method)(*arguments)
    converted = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in arguments]
    getattr(x.clone(), method)(*converted)  # the same call with a tensor there runs


def test_the_tensor_only_methods_are_no_other_batchs() -> None:
    """Every method the table says only a tensor has is a method of torch.Tensor and of none of
    the objects a batch or a converted value may be instead (NumPy arrays and scalars, pandas frames
    and series, plain Python containers and strings, modules, PackedSequence)."""
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    torch = pytest.importorskip("torch")
    from torch.nn.utils.rnn import PackedSequence

    from flake8_detach.analysis.uses import TENSOR_ONLY_RESULTS, TENSOR_ONLY_USES

    def public(kind: type) -> set[str]:
        return {name for name in dir(kind) if not name.startswith("_")}

    others = set().union(*map(public, (np.ndarray, np.generic, pd.DataFrame, pd.Series, list, tuple, dict, set, str,
                                       bytes, torch.nn.Module, PackedSequence)))
    assert TENSOR_ONLY_RESULTS <= TENSOR_ONLY_USES <= public(torch.Tensor)
    assert TENSOR_ONLY_USES & others == {"requires_grad_"}  # nn.Module's, which has no `.data` nor `.grad`
    assert not hasattr(torch.nn.Linear(1, 1), "data") and not TENSOR_ONLY_RESULTS & others


LOADER = """import torch


def evaluate(loader, device):
    for clean, noisy in loader:
        clean = clean.unsqueeze(1).to(device)
        print(clean.cpu().data)
        print(noisy.cpu().data)
"""


def test_a_method_only_a_tensor_has_makes_its_result_one() -> None:
    """segan's batches of a loader its callers pass: `clean.unsqueeze(1)` ran, so it gave a
    tensor, whose `.data` is the legacy attribute; `noisy`, of which nothing says it, stays unknown."""
    assert codes(LOADER) == [(7, "DET103")]
    assert codes(LOADER.replace(".unsqueeze(1)", "")) == []


STEP = """import torch


def step(model, x):
    loss = model(x).mean()
    loss.backward()
    return loss.numpy()


step(torch.nn.Linear(3, 1), torch.ones(2, 3))
"""


def test_a_name_past_its_backward_call_requires_grad() -> None:
    """`loss.backward()` raises unless `loss` requires grad: past it, `loss.numpy()` raises
    whatever model a caller passes (NODE's trainer returns such a loss to its notebooks)."""
    assert codes(STEP.replace("step(torch", "# step(torch")) == [(7, "DET101")]
    before = STEP.replace("    loss.backward()\n    return loss.numpy()", "    print(loss.numpy())\n    loss.backward()")
    assert codes(before.replace("step(torch", "# step(torch")) == [(6, "DET111")]  # a caller's model decides
    pytest.importorskip("torch")
    assert failing_line(STEP) == 7
