"""Where the walk follows the order of statements, not only the join over every write.

Each pattern came from the ninth held-out set (docs/reviews/ninth-set-review.md), where the join
made a false diagnostic; each test pairs the case that must stay clean with the look-alike that
must still flag.
"""

from __future__ import annotations

import libcst as cst
import pytest
from running import failing_line

from flake8_detach import check_source
from flake8_detach.analysis.syntax import rewrites_every_entry
from flake8_detach.settings import Settings

PREVIEW = Settings(preview=True)


def lines(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check_source(source, PREVIEW)]


@pytest.mark.parametrize(("loop", "rewrites"), [
    ("for k, v in d.items():\n    d[k] = f(v)\n", True),
    ("for k in d:\n    d[k] = 1\n", True),
    ("for k in d.keys():\n    x = 2\n    d[k] = x\n", True),
    ("for i, v in enumerate(xs):\n    xs[i] = v\n", True),
    ("for i in range(len(xs)):\n    xs[i] = xs[i].numpy()\n", True),
    ("for k, v in d.items():\n    if v: d[k] = 1\n", False),  # not every entry
    ("for k, v in d.items():\n    if v: continue\n    d[k] = 1\n", False),  # skipped by `continue`
    ("for k, v in d.items():\n    d[k] = 1\n    if v: break\n", False),  # the rest by `break`
    ("for k, v in d.items():\n    d[k] = 1\n    d = {}\n", False),  # another object afterwards
    ("for k, v in d.items():\n    k = v\n    d[k] = 1\n", False),  # another key
    ("for k in d.items():\n    d[k] = 1\n", False),  # pairs, not keys
    ("for k, v in e.items():\n    d[k] = 1\n", False),  # another container
    ("for k in range(3):\n    d[k] = 1\n", False),  # some indexes only
])
def test_loops_that_replace_every_entry(loop: str, rewrites: bool) -> None:
    statement = cst.parse_module(loop).body[0]
    assert isinstance(statement, cst.For)
    assert (rewrites_every_entry(statement) is not None) is rewrites


DICT = """\
import numpy as np
import torch

model = torch.nn.Linear(3, 2)
masks = {{0: model(torch.ones(3)), 1: model(torch.ones(3))}}
for key, value in masks.items():
    masks[key] = {write}
np.vstack([masks[0], masks[1]])
"""


def test_a_dict_rewritten_entry_by_entry_holds_what_was_written() -> None:
    assert lines(DICT.format(write="value.detach().numpy()")) == []
    assert lines(DICT.format(write="value * 2")) == [(8, "DET106")]


TUPLE_FROM_A_MODULE_METHOD = """\
import numpy as np
import torch


class Net(torch.nn.Module):
    def forward_masks(self, x):
        return x, {{0: x}}


net = Net()
explained, masks = net.forward_masks(torch.ones(3, requires_grad=True))
for key, value in masks.items():
    masks[key] = {write}
np.vstack([masks[0]])
"""


def test_items_or_keys_show_a_dict_whatever_the_walk_took_it_for() -> None:
    assert lines(TUPLE_FROM_A_MODULE_METHOD.format(write="value.detach().numpy()")) == []
    assert lines(TUPLE_FROM_A_MODULE_METHOD.format(write="value + 1")) == [(14, "DET106")]


FIELD = """\
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Ternary(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = np.eye(9)
        {between}
        self.v = np.transpose(self.w)
        self.w = torch.tensor(self.w).to(device)

    def reset(self):
        self.w = torch.ones(9, 9).to(device)

    def later(self):
        return np.transpose(self.w)
"""


def test_a_field_read_after_its_write_in_the_same_method_is_what_was_written() -> None:
    assert lines(FIELD.format(between="pass")) == [(19, "DET106")]  # `later` sees every write


def test_a_call_that_may_write_the_instance_forgets_what_the_method_wrote() -> None:
    assert lines(FIELD.format(between="self.reset()")) == [(12, "DET106"), (19, "DET106")]


def test_a_write_under_an_if_leaves_the_join() -> None:
    source = FIELD.format(between="if device.type == 'cuda':\n            self.w = torch.ones(9, 9).to(device)")
    assert lines(source) == [(13, "DET106"), (20, "DET106")]


GRAD_SWITCH = """\
import torch

model = torch.nn.Linear(3, 2)
{switch}


def estimate(x):
    return model(x).numpy()
"""


def test_a_module_statement_turning_grad_off_covers_the_functions_of_the_file() -> None:
    assert lines(GRAD_SWITCH.format(switch="torch.set_grad_enabled(False)")) == []
    assert lines(GRAD_SWITCH.format(switch="if model.training:\n    torch.set_grad_enabled(False)")) == [
        (9, "DET101")]  # under an `if`: it may not have run
    assert lines(GRAD_SWITCH.format(switch="torch.set_grad_enabled(False)\ntorch.set_grad_enabled(True)")) == [
        (9, "DET101")]


def test_shape_arguments_carry_neither_grad_nor_dtype() -> None:
    source = """\
import torch


def reshape(t, rows, cols):
    return t.view(rows, cols).numpy()


def concat(t, other):
    return t.mul(other).numpy()
"""
    assert lines(source) == [(5, "DET111"), (9, "DET111")]  # `t` itself is still the caller's
    with_int = source.replace("return t.view(", "return torch.zeros(4, dtype=torch.long).view(")
    assert lines(with_int) == [(9, "DET111")]


def test_the_labels_of_a_torchvision_detection_model_are_class_indices() -> None:
    source = """\
import torch
import torchvision


def detect(model, images):
    pred = model(images)
    return pred[0]["labels"].cpu().numpy(), pred[0]["scores"].cpu().numpy()


detect(torchvision.models.detection.fasterrcnn_resnet50_fpn(weights=None).eval(), [torch.rand(3, 64, 64)])
"""
    assert lines(source) == [(7, "DET101")]  # the scores, not the labels (int64: never requires grad)
    classifier = source.replace("detection.fasterrcnn_resnet50_fpn", "resnet18")
    assert [code for _, code in lines(classifier)] == ["DET101", "DET101"]  # no such fact for other models


def test_a_defaultdict_gives_each_key_it_spells_its_own_list() -> None:
    source = """\
from collections import defaultdict

import matplotlib.pyplot as plt
import numpy as np
import torch

net = torch.nn.Linear(4, 1)
history = defaultdict(list)
history["loss"].append(np.mean([1.0]))
history["out"].append(net(torch.ones(4)))
plt.plot(history["loss"])
plt.plot(history["out"])
"""
    assert lines(source) == [(12, "DET106")]
    computed = source + "for key in ['loss']:\n    history[key].append(net(torch.ones(4)))\n"
    assert lines(computed) == [(11, "DET106"), (12, "DET106")]  # a computed key may be any of them


CONVERTED_TOGETHER = """
import numpy as np
import torch
from torch import nn

net = nn.Linear(3, 2).to("cuda" if torch.cuda.is_available() else "cpu")


def post_processing(output):
    boxes = output[0]
    confs = output[1]
    if {test}:
        boxes = boxes.detach().cpu().numpy()
        {conversion}
    return np.argmax(confs, axis=1), boxes


x = torch.ones(2, 3)
post_processing((net(x), net(x)))
post_processing((np.ones((2, 2)), np.ones((2, 2))))
"""


@pytest.mark.parametrize("test", ["type(boxes).__name__ != 'ndarray'", "isinstance(boxes, torch.Tensor)"])
def test_names_converted_together_by_a_type_test_are_arrays_together(test: str) -> None:
    """pytorch-YOLOv4's `post_processing`: `if type(box_array).__name__ != 'ndarray':` converts
    both outputs; where the test fails both were arrays, so `np.argmax(confs)` gets an array. The
    look-alike that converts only `boxes` leaves `confs` a tensor that requires grad (it raises)."""
    clean = CONVERTED_TOGETHER.format(test=test, conversion="confs = confs.detach().cpu().numpy()")
    assert lines(clean) == []
    exec(compile(clean, "<clean>", "exec"), {})  # noqa: S102
    flagged = CONVERTED_TOGETHER.format(test=test, conversion="pass")
    assert lines(flagged) == [(15, "DET106")]
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(flagged, "<flagged>", "exec"), {})  # noqa: S102


@pytest.mark.parametrize("test", ["isinstance(out, torch.Tensor)", "torch.is_tensor(out)"])
def test_a_tensor_test_keeps_what_the_tensor_was(test: str) -> None:
    """`if isinstance(out, torch.Tensor): out.numpy()`: the test says `out` is a tensor; it was a
    module's output that requires grad, and still is (it raises)."""
    source = f"import torch\nfrom torch import nn\n\nout = nn.Linear(3, 1)(torch.ones(3))\nif {test}:\n    out.numpy()\n"
    assert lines(source) == [(6, "DET101")]
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(source, "<tensor test>", "exec"), {})  # noqa: S102


def test_a_module_tested_against_a_class_the_file_cannot_tell_stays_a_module() -> None:
    """semantic-segmentation-pytorch's `for m in self.modules(): if isinstance(m, BatchNorm2d):`
    with `BatchNorm2d = SynchronizedBatchNorm2d`, a class of the project: a module for which the
    test holds is an instance of a module class, so `m.weight.data` writes a parameter."""
    source = """
import torch
from torch import nn


class SyncNorm(nn.BatchNorm2d):
    pass


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = SyncNorm(3)
        for m in self.modules():
            if isinstance(m, SyncNorm):
                m.weight.data.fill_(1)
"""
    assert lines(source) == [(16, "DET103")]


PEEK = """import torch
from torch import nn

model = nn.Linear(3, 2)
for x in [torch.ones(4, 3)]:
    out = model(x)
with torch.no_grad():
    for x in [torch.ones(4, 3)]:
        out = model(x)
        break
print(out.numpy())
"""


def test_a_loop_that_ends_in_break_runs_once() -> None:
    """`for x, _ in loader: x_hat = model(x); break` under no_grad (a notebook's peek at one test
    batch): afterwards `x_hat` is that batch's output, not joined with the training loop's output
    the name held before (an empty loader is no use case). A loop that may go on is still joined."""
    assert lines(PEEK) == []
    going_on = PEEK.replace("        break\n", "        if out.sum() > 0:\n            break\n")
    assert lines(going_on) == [(12, "DET101")]
    pytest.importorskip("torch")
    assert failing_line(PEEK) is None
