"""The fixes and the fixer: what each rule's fix writes, and the guarantees of the issue.

Guarantees: the fixed text parses and a second run changes nothing; `# noqa` lines are left
alone; encoding, BOM, coding cookie, CRLF, tabs and comments outside the fixed expression are
kept byte for byte; files are written atomically with their permission bits; an unparsable file
is reported and left untouched; flake8 reports none of the fixed diagnostics afterwards; every
fixture with a fixable diagnostic has a current snapshot.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_detach.engine import Settings, check_source
from flake8_detach.fixing import fixer
from flake8_detach.fixing import passes as fix_passes
from flake8_detach.fixing.fixer import FixFileError, fix_file, fix_source
from flake8_detach.rules import ALL_RULES

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"

_spec = importlib.util.spec_from_file_location("update_fix_snapshots", REPO / "scripts" / "update_fix_snapshots.py")
assert _spec is not None and _spec.loader is not None
snapshots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(snapshots)

GRAD = "import torch\nw = torch.ones(3, requires_grad=True)\n"
GRAD_ON_DEVICE = "import torch\nw = torch.ones(3, requires_grad=True).cuda()\n"
# A parameter: its layer may be moved to a GPU, so `.cpu().detach()` of it is DET102 (of `GRAD`'s
# tensor, built on the CPU and never moved, it is not: `.cpu()` returns the tensor itself).
PARAMETER = "import torch\nw = torch.nn.Linear(3, 1).weight\n"


def fixed(source: str, **kwargs) -> str:
    return fix_source(source, **kwargs).source


def assert_parses_and_idempotent(text: str, **kwargs) -> None:
    ast.parse(text)
    again = fix_source(text, **kwargs)
    assert again.source == text and not again.applied


# ------------------------------------------------------------------ rule examples
INVALID_WITH_FIX = [
    pytest.param(rule.code, example, id=f"{rule.code}-{index}")
    for rule in ALL_RULES
    for index, example in enumerate(rule.INVALID)
    if example.fixed is not None
]


@pytest.mark.parametrize(("code", "example"), INVALID_WITH_FIX)
def test_rule_invalid_examples_fix_to_their_fixed_text(code, example):
    preview = Settings(preview=True)  # every rule's examples, the opt-in ones (DET111) too
    result = fix_source(example.code, preview, unsafe=True)
    assert result.source == example.fixed
    assert code in {d.code for d in result.applied}
    assert_parses_and_idempotent(result.source, settings=preview, unsafe=True)
    assert code not in {d.code for d in check_source(result.source, preview)}


def test_every_rule_has_a_fixed_example():
    assert {code for code, *_ in (p.values for p in INVALID_WITH_FIX)} == {r.code for r in ALL_RULES}


# ---------------------------------------------------------------------- DET101
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("w.numpy()", "w.detach().numpy()"),
        ("w.cpu().numpy()", "w.detach().cpu().numpy()"),
        ("w.to('cpu').cpu().numpy()", "w.detach().to('cpu').cpu().numpy()"),
        ("(w * 2).squeeze().cpu().numpy()", "(w * 2).squeeze().detach().cpu().numpy()"),
    ],
)
def test_det101_inserts_detach_before_the_first_device_move(line, expected):
    result = fix_source(GRAD + line + "\n")
    assert result.source == GRAD + expected + "\n"
    assert [d.code for d in result.applied] == ["DET101"]
    assert all(d.fix is not None and d.fix.safe for d in result.applied)


def test_det101_and_det104_on_one_numpy_combine_over_passes():
    result = fix_source(GRAD_ON_DEVICE + "a = w.numpy()  # keep\n")
    assert result.source == GRAD_ON_DEVICE + "a = w.detach().cpu().numpy()  # keep\n"
    assert sorted(d.code for d in result.applied) == ["DET101", "DET104"]
    assert result.remaining == []
    assert_parses_and_idempotent(result.source)


def test_det101_after_a_move_to_the_gpu_keeps_the_move_and_adds_cpu():
    source = "import torch\nw = torch.ones(3, requires_grad=True)\nw.to('cuda').numpy()\n"
    assert fixed(source).endswith("w.detach().to('cuda').cpu().numpy()\n")


def test_force_style_writes_numpy_force_true():
    style = Settings(fix_style="force")
    assert fixed(GRAD_ON_DEVICE + "a = w.numpy()\n", settings=style).endswith("a = w.numpy(force=True)\n")
    assert fixed(GRAD + "w.numpy(force=False)\n", settings=style).endswith("w.numpy(force=True)\n")
    # DET102 has no `.numpy()` to force: its fix is the same in both styles.
    assert fixed(PARAMETER + "w.cpu().detach()\n", settings=style).endswith("w.detach().cpu()\n")


def test_chain_split_over_lines_keeps_one_link_per_line_and_comments_in_place():
    source = GRAD + "a = (\n    w  # the weights\n    .cpu()\n    .numpy()\n)\n"
    expected = GRAD + "a = (\n    w  # the weights\n    .detach()\n    .cpu()\n    .numpy()\n)\n"
    assert fixed(source) == expected


# ------------------------------------------- DET101: a crash must not become memory sharing
@pytest.mark.parametrize(
    "write",
    ["a[0] = 5.0", "a += 1", "a.fill(0)", "np.copyto(a, 0.0)", "np.add(a, 1, out=a)", "b = a.T\nb[0] = 1",
     "b = a\nb *= 2", "for _ in range(2):\n    a[0] = 1"],
)
def test_det101_copies_an_array_that_is_written_later(write):
    source = "import numpy as np\n" + GRAD + "a = w.numpy()\n" + write + "\n"
    result = fix_source(source)
    assert result.source == source.replace("a = w.numpy()", "a = w.detach().numpy().copy()")
    (applied,) = result.applied
    assert applied.fix is not None and applied.fix.safe
    assert applied.fix.description.startswith("insert .detach() before the conversion and .copy(): '")
    assert " is written" in applied.fix.description
    last_line = 5 + write.count("\n")  # the write is the last line
    assert f"at line {last_line}, and without a copy the write would change the tensor on the CPU" in applied.fix.description
    assert_parses_and_idempotent(result.source)


@pytest.mark.parametrize(
    ("source", "escape"),
    [
        ("def f(t):\n    return t.numpy()\nf(w)\n", "the array is returned"),
        ("kept = []\nkept.append(w.numpy())\n", "the array is stored in a container"),
        ("def keep(a):\n    pass\nkeep(w.numpy())\n", "the array is passed to keep()"),
    ],
)
def test_det101_fix_of_an_escaping_array_is_unsafe_and_says_where(source, escape):
    source = GRAD + source
    safe_only = fix_source(source)
    assert not safe_only.changed
    (remaining,) = safe_only.remaining
    assert remaining.fix is not None and not remaining.fix.safe
    assert f"; unsafe: {escape}; on the CPU it shares the tensor's memory" in remaining.fix.description
    unsafe = fixed(source, unsafe=True)
    assert "w.detach().numpy()" in unsafe or "t.detach().numpy()" in unsafe
    assert ".copy()" not in unsafe


def test_det101_fix_of_a_read_only_array_stays_safe_without_copy():
    source = "import numpy as np\n" + GRAD + "a = w.numpy()\nprint(a.mean(), np.exp(a), a * 2, a.tolist())\nb = a.copy()\nb[0] = 1\n"
    result = fix_source(source)
    assert result.source == source.replace("a = w.numpy()", "a = w.detach().numpy()")
    assert [d.fix.safe for d in result.applied if d.fix] == [True]


def test_det101_copy_with_a_move_in_the_chain():
    source = GRAD + "a = w.to('cpu').numpy()\na[0] = 1\n"
    assert fixed(source) == GRAD + "a = w.detach().to('cpu').numpy().copy()\na[0] = 1\n"


def test_force_style_carries_the_copy_and_the_safety():
    style = Settings(fix_style="force")
    written = GRAD + "a = w.numpy()\na[0] = 1\n"
    assert fixed(written, settings=style) == GRAD + "a = w.numpy(force=True).copy()\na[0] = 1\n"
    returned = GRAD + "def f(t):\n    return t.numpy()\nf(w)\n"
    result = fix_source(returned, settings=style)
    assert not result.changed and [d.fix.safe for d in result.remaining if d.fix] == [False]
    assert "return t.numpy(force=True)\n" in fixed(returned, settings=style, unsafe=True)
    # DET104 on the same call forces too: it owes DET101's copy.
    on_device = GRAD_ON_DEVICE + "a = w.numpy()\na += 1\n"
    assert fixed(on_device, settings=style) == GRAD_ON_DEVICE + "a = w.numpy(force=True).copy()\na += 1\n"


def test_det104_alone_stays_safe_without_copy():
    """On a GPU `.cpu()` copies; on the CPU the original ran and shared memory the same way."""
    source = "import torch\nx = torch.ones(3).cuda()\na = x.numpy()\na[0] = 1\n"
    result = fix_source(source)
    assert result.source == source.replace("x.numpy()", "x.cpu().numpy()")
    assert [(d.code, d.fix.safe) for d in result.applied if d.fix] == [("DET104", True)]


# ------------------------------------------- DET106: keep a tensor, copy a shared result
NP_GRAD = "import numpy as np\n" + GRAD


def test_det106_keeps_a_tensor_where_numpy_returns_one():
    result = fix_source(NP_GRAD + "r = np.exp(w)\ns = r.sum(dim=0)\n")
    assert result.source == NP_GRAD + "r = np.exp(w.detach())\ns = r.sum(dim=0)\n"
    (applied,) = result.applied
    assert applied.fix is not None and applied.fix.safe
    assert applied.fix.description == "pass .detach(): np.exp() returns a tensor for a tensor that does not require grad"


def test_det106_tensor_result_on_a_device_is_unsafe():
    source = "import numpy as np\nimport torch\nx = torch.ones(3).cuda()\nr = np.exp(x)\n"
    result = fix_source(source)
    assert not result.changed
    (remaining,) = result.remaining
    assert remaining.fix is not None and not remaining.fix.safe
    assert "gives a CPU tensor" in remaining.fix.description
    assert fixed(source, unsafe=True).endswith("r = np.exp(x.cpu())\n")


def test_det106_array_converters_keep_converting():
    result = fix_source(NP_GRAD + "r = np.vstack(w)\n")
    assert result.source == NP_GRAD + "r = np.vstack(w.detach().cpu().numpy())\n"


def test_det106_shared_result_that_is_written_is_copied():
    source = NP_GRAD + "a = np.asarray(w)\na[0] = 0\n"
    result = fix_source(source)
    assert result.source == NP_GRAD + "a = np.asarray(w.detach().cpu().numpy().copy())\na[0] = 0\n"
    assert [d.fix.safe for d in result.applied if d.fix] == [True]
    reshaped = NP_GRAD + "r = np.reshape(w, (3, 1))\nr.add_(1)\n"
    assert fixed(reshaped) == NP_GRAD + "r = np.reshape(w.detach().clone(), (3, 1))\nr.add_(1)\n"


def test_det106_shared_result_that_escapes_is_unsafe():
    source = NP_GRAD + "def f():\n    return np.asarray(w)\n"
    result = fix_source(source)
    assert not result.changed
    (remaining,) = result.remaining
    assert remaining.fix is not None and not remaining.fix.safe
    assert "unsafe: the array is returned" in remaining.fix.description


# ---------------------------------------------------------------------- DET102
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("w.cpu().detach()", "w.detach().cpu()"),
        ("w.cpu(non_blocking=True).detach()", "w.detach().cpu(non_blocking=True)"),
        ('w.to("cpu", non_blocking=True).detach().numpy()', 'w.detach().to("cpu", non_blocking=True).numpy()'),
        ("w.to(device='cpu').detach()", "w.detach().to(device='cpu')"),
    ],
)
def test_det102_swaps_keeping_the_arguments(line, expected):
    result = fix_source(PARAMETER + line + "\n")
    assert result.source == PARAMETER + expected + "\n"
    assert [d.code for d in result.applied] == ["DET102"]


def test_det102_chain_over_lines_keeps_the_comment_on_its_line():
    source = PARAMETER + "a = (\n    w\n    .cpu()  # note\n    .detach()\n)\n"
    assert fixed(source) == PARAMETER + "a = (\n    w\n    .detach()  # note\n    .cpu()\n)\n"


# ---------------------------------------------------------------------- DET103
@pytest.mark.parametrize("method", ["numpy()", "clone()", "tolist()", "sum()", "cpu().numpy()", "view(3).clone()", "T.sum()"])
def test_det103_reads_become_detach_and_are_safe(method):
    result = fix_source(GRAD + f"a = w.data.{method}\n")
    assert result.source == GRAD + f"a = w.detach().{method}\n"
    assert [(d.code, d.fix.safe) for d in result.applied if d.fix] == [("DET103", True)]


@pytest.mark.parametrize(
    "kept",
    ["a = w.data.cpu()", "a = w.data.view(3)", "a = w.data.t()[0]", "a = w.data.float().T", "print(w.data.reshape(3))",
     "a, b = w.data.chunk(2)"],
)
def test_det103_a_kept_view_of_data_is_a_bare_read_with_an_unsafe_fix(kept):
    """`.cpu()` of a CPU tensor, `.float()` of a float one and every view share `w`'s storage:
    a later write through the name is unseen by autograd before the fix and seen after it."""
    source = GRAD + kept + "\n"
    safe_only = fix_source(source)
    assert not safe_only.changed
    [diagnostic] = safe_only.remaining
    assert diagnostic.fix is not None and not diagnostic.fix.safe
    assert "in-place write" not in diagnostic.message
    assert fixed(source, unsafe=True) == GRAD + kept.replace("w.data", "w.detach()") + "\n"


def test_det103_data_clone_detach_becomes_detach_clone_without_a_second_detach():
    result = fix_source(GRAD + "a = w.data.clone().detach()\n")
    assert result.source == GRAD + "a = w.detach().clone()\n"
    assert fix_source(result.source).source == result.source


def test_det103_plain_read_fix_is_unsafe():
    source = "import torch\nmodel = torch.nn.Linear(2, 2)\nbuf = model.weight.data\n"
    result = fix_source(source)
    assert not result.changed
    assert [(d.code, d.fix.safe) for d in result.remaining if d.fix] == [("DET103", False)]
    assert fixed(source, unsafe=True).endswith("buf = model.weight.detach()\n")


LAYER = "import torch\nmodel = torch.nn.Linear(2, 2)\n"


@pytest.mark.parametrize(
    ("statement", "rewritten"),
    [
        ("model.weight.data.add_(1)", "model.weight.add_(1)"),
        ("model.weight.data = torch.zeros(2, 2)", "model.weight.copy_(torch.zeros(2, 2))"),
        ("model.weight.data += 1", "model.weight.add_(1)"),
        ("model.weight.data *= 2", "model.weight.mul_(2)"),
    ],
)
def test_det103_writes_move_under_no_grad_only_as_unsafe_fixes(statement, rewritten):
    source = LAYER + statement + "  # why\n"
    safe_only = fix_source(source)
    assert not safe_only.changed
    assert [d.code for d in safe_only.remaining] == ["DET103"]
    result = fix_source(source, unsafe=True)
    assert result.source == LAYER + f"with torch.no_grad():\n    {rewritten}  # why\n"
    assert [(d.code, d.fix.safe) for d in result.applied if d.fix] == [("DET103", False)]
    assert_parses_and_idempotent(result.source, unsafe=True)


def test_det103_write_uses_the_modules_torch_alias_and_indentation():
    source = "import torch as T\n\ndef step(m):\n\tfor p in m.parameters():\n\t\tp.data.sub_(p.grad)\n"
    expected = "import torch as T\n\ndef step(m):\n\tfor p in m.parameters():\n\t\twith T.no_grad():\n\t\t\tp.sub_(p.grad)\n"
    assert fixed(source, unsafe=True) == expected


def test_det103_write_with_only_no_grad_imported():
    source = "from torch import nn, no_grad\nlayer = nn.Linear(2, 2)\nlayer.weight.data.zero_()\n"
    assert fixed(source, unsafe=True).endswith("with no_grad():\n    layer.weight.zero_()\n")


def test_det103_write_already_under_no_grad_needs_no_new_block():
    source = LAYER + "with torch.no_grad():\n    model.weight.data.zero_()\n"
    assert fixed(source, unsafe=True) == LAYER + "with torch.no_grad():\n    model.weight.zero_()\n"


@pytest.mark.parametrize(
    ("read", "expected", "safe"),
    [
        # The kept result shares `w`'s storage: `a.add_(1)` is unseen by autograd before, seen after.
        ("w.data.detach()", "w.detach()", False),
        ("w.detach().data", "w.detach()", False),
        ("w.data.to('cpu').cuda().detach()", "w.detach().to('cpu').cuda()", False),
        ("(w.data).detach().numpy()", "(w).detach().numpy()", True),
        ("w.data.cpu().detach().numpy()", "w.detach().cpu().numpy()", True),
        ("w.data.dtype", "w.dtype", True),
        ("w.data.size(0)", "w.size(0)", True),
    ],
)
def test_det103_data_next_to_detach_is_dropped_never_doubled(read, expected, safe):
    result = fix_source(GRAD + f"a = {read}\n", unsafe=True)
    assert result.source == GRAD + f"a = {expected}\n"
    assert ".detach().detach()" not in result.source
    assert {d.fix.safe for d in result.applied if d.code == "DET103" and d.fix} == {safe}
    assert_parses_and_idempotent(result.source, unsafe=True)


@pytest.mark.parametrize(
    ("read", "expected"),
    [
        ("w.data.cpu().detach()", "w.detach().cpu()"),
        ("w.data.to('cpu', non_blocking=True).detach()", "w.detach().to('cpu', non_blocking=True)"),
        ("(w.data\n     .cpu()  # move\n     .detach())", "(w\n     .detach()  # move\n     .cpu())"),
    ],
)
def test_det103_data_before_moves_and_detach_is_fixed_in_one_step(read, expected):
    """`x.data.cpu().detach()` becomes `x.detach().cpu()` in one fix, not `x.cpu().detach()` that
    DET102 reorders in a second pass (whose change lay outside every first-pass fix: the fuzz
    test's span check found it); arguments and comments are kept."""
    result = fix_source(GRAD + f"a = {read}\n", unsafe=True)
    assert result.source == GRAD + f"a = {expected}\n"
    assert [d.code for d in result.applied] == ["DET103"]
    assert_parses_and_idempotent(result.source, unsafe=True)


def test_adjacent_writes_share_one_no_grad_block_comments_kept_and_a_blank_line_ends_the_run():
    source = LAYER + (
        "def copy(other):\n"
        "    # copy the weights\n"
        "    model.weight.data = other.weight.data.clone()\n"
        "    # and the bias\n"
        "    model.bias.data = other.bias.data  # same shape\n"
        "    model.weight.data.mul_(2)\n"
        "\n"
        "    model.bias.data += 1\n"
    )
    expected = LAYER + (
        "def copy(other):\n"
        "    # copy the weights\n"
        "    with torch.no_grad():\n"
        "        model.weight.copy_(other.weight.clone())\n"
        "        # and the bias\n"
        "        model.bias.copy_(other.bias)  # same shape\n"
        "        model.weight.mul_(2)\n"
        "\n"
        "    with torch.no_grad():\n"
        "        model.bias.add_(1)\n"
    )
    result = fix_source(source, unsafe=True)
    assert result.source == expected
    assert [d.line for d in result.applied] == [5, 7, 8, 10]
    assert_parses_and_idempotent(result.source, unsafe=True)


def test_writes_in_different_blocks_or_under_no_grad_get_no_merged_block():
    source = LAYER + (
        "if model.training:\n"
        "    model.weight.data.zero_()\n"
        "else:\n"
        "    print(0)\n"
        "model.bias.data.zero_()\n"
        "with torch.no_grad():\n"
        "    model.weight.data.fill_(1)\n"
        "@torch.no_grad()\n"
        "def reset():\n"
        "    model.bias.data.fill_(1)\n"
    )
    expected = LAYER + (
        "if model.training:\n"
        "    with torch.no_grad():\n"
        "        model.weight.zero_()\n"
        "else:\n"
        "    print(0)\n"
        "with torch.no_grad():\n"
        "    model.bias.zero_()\n"
        "with torch.no_grad():\n"
        "    model.weight.fill_(1)\n"
        "@torch.no_grad()\n"
        "def reset():\n"
        "    model.bias.fill_(1)\n"
    )
    assert fixed(source, unsafe=True) == expected


def test_an_if_that_only_writes_joins_the_block_of_its_neighbours():
    source = "import math\nimport torch\n" + (
        "def init(m, fan_out):\n"
        "    if isinstance(m, torch.nn.Conv2d):\n"
        "        m.weight.data.normal_(0, math.sqrt(2.0 / fan_out))\n"
        "        # no bias for some convs\n"
        "        if m.bias is not None:  # kept\n"
        "            m.bias.data.zero_()\n"
        "    elif isinstance(m, torch.nn.Linear):\n"
        "        if m.bias is not None:\n"
        "            m.bias.data.zero_()\n"
    )
    expected = "import math\nimport torch\n" + (
        "def init(m, fan_out):\n"
        "    if isinstance(m, torch.nn.Conv2d):\n"
        "        with torch.no_grad():\n"
        "            m.weight.normal_(0, math.sqrt(2.0 / fan_out))\n"
        "            # no bias for some convs\n"
        "            if m.bias is not None:  # kept\n"
        "                m.bias.zero_()\n"
        "    elif isinstance(m, torch.nn.Linear):\n"
        "        if m.bias is not None:\n"
        "            with torch.no_grad():\n"
        "                m.bias.zero_()\n"
    )
    result = fix_source(source, unsafe=True)
    assert result.source == expected
    assert_parses_and_idempotent(result.source, unsafe=True)


def test_a_value_that_changes_dtype_device_or_storage_is_a_rebinding_left_with_advice():
    source = LAYER + (
        "model.weight.data = model.weight.data.half()\nmodel.bias.data = model.bias.to('cuda')\n"
        "model.weight.data = model.weight.data.clone()\n"
    )
    result = fix_source(source, unsafe=True)
    writes = [d for d in result.remaining if d.column in (11, 13) and d.line in (3, 4, 5)]
    assert [(d.line, d.fix) for d in writes] == [(3, None), (4, None), (5, None)]
    assert all("swaps the tensor's storage" in d.message for d in writes)
    assert "copy_" not in result.source


def test_a_tensor_assigned_to_the_data_of_an_unknown_object_is_not_flagged():
    """A tensor in `box.data` shows that the field holds a tensor, not that `box` is one (a
    Dataset's `.data` does too): `box.copy_(...)` would raise AttributeError."""
    source = "import torch\ndef convert(module, aux, box):\n    aux.weight.data = module.weight.data.clone()\n    box.data = box.other.data\n"
    assert [d.line for d in check_source(source + "    box.data = module.detach()\n")] == [3, 3]
    result = fix_source(source, unsafe=True)
    assert "        aux.weight.copy_(module.weight.clone())\n" in result.source
    assert "    box.data = box.other.data\n" in result.source


def test_a_write_is_fixed_whole_tensor_data_in_its_value_dropped_other_data_kept():
    source = LAYER + (
        "import numpy as np\n"
        "table = np.zeros((2, 2))\n"
        "model.weight.data = model.weight.data.clamp(-1, 1) + torch.from_numpy(table.data.obj)\n"
        "model.bias.data.add_(model.bias.data.detach() * 2)\n"
    )
    result = fix_source(source, unsafe=True)
    assert result.source.endswith(
        "with torch.no_grad():\n"
        "    model.weight.copy_(model.weight.clamp(-1, 1) + torch.from_numpy(table.data.obj))\n"
        "    model.bias.add_(model.bias.detach() * 2)\n"
    )
    assert [d.code for d in result.remaining] == []


@pytest.mark.parametrize(
    ("value", "same"),
    [
        ("model.weight.data.clamp(-1, 1)", True),
        ("torch.zeros_like(model.weight)", True),
        ("(model.weight.data.abs())", True),
        ("torch.zeros_like(model.weight, dtype=torch.float64)", False),
        ("torch.zeros(2, 2)", False),
        ("other.weight.data", False),
    ],
)
def test_assignment_fix_says_when_copy_may_change_shape_or_dtype(value, same):
    source = LAYER + "other = torch.nn.Linear(2, 2)\n" + f"model.weight.data = {value}\n"
    [fix] = [d.fix for d in check_source(source) if d.fix is not None and d.fix.description.startswith("write")]
    assert fix.description.startswith("write into the tensor with copy_() under torch.no_grad()")
    assert ("has the tensor's shape and dtype" in fix.description) is same
    assert ("broadcasts or raises, and casts the dtype" in fix.description) is not same
    assert ("nn.Parameter" in fix.description) is not same


@pytest.mark.parametrize(
    ("imports", "expected_imports"),
    [
        ("import numpy as np\nfrom torch import nn\n", "import numpy as np\nimport torch\nfrom torch import nn\n"),
        ("# torch\nfrom torch import nn  # layers\n", "# torch\nimport torch\nfrom torch import nn  # layers\n"),
    ],
)
def test_import_torch_is_added_once_above_the_first_from_torch_import(imports, expected_imports):
    body = "layer = nn.Linear(2, 2)\nlayer.weight.data.zero_()\nlayer.bias.data.zero_()\n"
    result = fix_source('"""Doc."""\n' + imports + body, unsafe=True)
    assert result.source == '"""Doc."""\n' + expected_imports + (
        "layer = nn.Linear(2, 2)\nwith torch.no_grad():\n    layer.weight.zero_()\n    layer.bias.zero_()\n"
    )
    assert all("adds `import torch`" in d.fix.description for d in result.applied if d.fix)
    assert_parses_and_idempotent(result.source, unsafe=True)


def test_import_torch_is_not_added_when_torch_is_imported_under_its_name():
    source = "import torch.nn as nn\nimport torch\nlayer = nn.Linear(2, 2)\nlayer.weight.data.zero_()\n"
    assert fixed(source, unsafe=True).count("import torch\n") == 1


def test_det103_write_that_is_not_a_whole_statement_is_left_with_advice():
    source = LAYER + "out = model.weight.data.add_(1)\n"
    result = fix_source(source, unsafe=True)
    assert not result.changed
    [diagnostic] = result.remaining
    assert diagnostic.code == "DET103" and diagnostic.fix is None
    assert "torch.no_grad()" in diagnostic.message


@pytest.mark.parametrize(
    ("write", "rewritten"),
    [
        ("w.data.view(3).add_(1)", "w.view(3).add_(1)"),
        ("w.data.t()[0] = 1", "w.t()[0] = 1"),
        ("w.data[0].zero_()", "w[0].zero_()"),
        ("w.data.float().T.mul_(2)", "w.float().T.mul_(2)"),
        ("w.data.view(3)[:2] += w.data.sum()", "w.view(3)[:2] += w.sum()"),
        ("torch.add(w, 1, out=w.data)", "torch.add(w, 1, out=w)"),
    ],
)
def test_det103_a_write_through_views_of_data_is_a_write_with_an_unsafe_fix(write, rewritten):
    """`w.data.view(3).add_(1)` writes `w`'s storage unseen by autograd: never a safe read fix."""
    source = GRAD + write + "\n"
    safe_only = fix_source(source)
    assert "w.data" in safe_only.source  # only a read in the written value (`w.data.sum()`) is fixed
    writes = [d for d in safe_only.remaining if "in-place write through .data" in d.message]
    assert len(writes) == 1 and writes[0].fix is not None and not writes[0].fix.safe
    result = fix_source(source, unsafe=True)
    assert result.source == GRAD + f"with torch.no_grad():\n    {rewritten}\n"
    assert_parses_and_idempotent(result.source, unsafe=True)


def test_det103_a_write_through_views_inside_a_larger_statement_is_left_with_advice():
    source = GRAD + "y = w.data.view(3).add_(1)\n"
    [diagnostic] = check_source(source)
    assert "in-place write through .data" in diagnostic.message and diagnostic.fix is None


@pytest.mark.parametrize(
    ("imports", "expected_imports"),
    [
        # Only for type checkers: the name does not exist at run time.
        ("from typing import TYPE_CHECKING\nfrom torch import nn\nif TYPE_CHECKING:\n    import torch\n",
         "from typing import TYPE_CHECKING\nimport torch\nfrom torch import nn\nif TYPE_CHECKING:\n    import torch\n"),
        ("import typing\nimport torch.nn as nn\nif typing.TYPE_CHECKING:\n    import torch\n",
         "import typing\nimport torch.nn as nn\nimport torch\n\nif typing.TYPE_CHECKING:\n    import torch\n"),
        ("import typing\nimport torch.nn as nn\nif typing.TYPE_CHECKING: import torch\n",
         "import typing\nimport torch.nn as nn\nimport torch\n\nif typing.TYPE_CHECKING: import torch\n"),
        # A class body's import is a class attribute, not a module name.
        ("from torch import nn\nclass Holder:\n    import torch\n",
         "import torch\nfrom torch import nn\nclass Holder:\n    import torch\n"),
        # Bound in another function only.
        ("import torch.nn as nn\ndef version():\n    import torch\n    return torch.__version__\n",
         "import torch.nn as nn\nimport torch\n\ndef version():\n    import torch\n    return torch.__version__\n"),
    ],
)
def test_det103_write_fix_imports_torch_when_no_torch_name_is_bound_at_run_time(imports, expected_imports):
    body = "layer = nn.Linear(2, 2)\nlayer.weight.data.zero_()\n"
    result = fix_source(imports + body, unsafe=True)
    assert result.source == expected_imports + "layer = nn.Linear(2, 2)\nwith torch.no_grad():\n    layer.weight.zero_()\n"
    assert [d.fix.description.endswith("(adds `import torch`)") for d in result.applied if d.fix] == [True]
    assert_parses_and_idempotent(result.source, unsafe=True)
    ran = subprocess.run([sys.executable, "-c", result.source], check=False, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr  # the fixed file runs: torch is bound


@pytest.mark.parametrize(
    ("source", "context"),
    [
        # The `else:` of a TYPE_CHECKING test runs.
        (("import typing\nif typing.TYPE_CHECKING:\n    import torch\nelse:\n    import torch as T\n"
          "def f(m):\n    m.weight.data.zero_()\nf(T.nn.Linear(2, 2))\n"), "T.no_grad()"),
        (("from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n    import torch as T\n"
          "def f(m):\n    m.weight.data.zero_()\nf(T.nn.Linear(2, 2))\n"), "T.no_grad()"),
        # The write's own function imports it first.
        ("def reset():\n    import torch\n    m = torch.nn.Linear(2, 2)\n    m.weight.data.zero_()\n", "torch.no_grad()"),
        ("def reset():\n    from torch import nn, no_grad\n    m = nn.Linear(2, 2)\n    m.weight.data.zero_()\n", "no_grad()"),
    ],
)
def test_det103_write_fix_uses_a_name_bound_where_the_write_runs(source, context):
    result = fix_source(source, unsafe=True)
    assert f"with {context}:\n" in result.source
    assert "(adds `import torch`)" not in result.applied[0].fix.description
    assert result.source.count("import torch") == source.count("import torch")


@pytest.mark.parametrize(
    "source",
    [
        "import numpy as torch\nimport torch.nn as nn\nm = nn.Linear(2, 2)\nm.weight.data.zero_()\n",
        # An import later in the same function makes `torch` local there: unbound at the write.
        "import torch.nn as nn\ndef reset():\n    m = nn.Linear(2, 2)\n    m.weight.data.zero_()\n    import torch\n",
        # Imported only below the top-level write: not bound when it runs.
        "import torch.nn as nn\nm = nn.Linear(2, 2)\nm.weight.data.zero_()\nimport torch\n",
    ],
)
def test_det103_write_fix_is_withheld_where_torch_names_something_else(source):
    [diagnostic] = check_source(source)
    assert diagnostic.code == "DET103" and diagnostic.fix is None


# ---------------------------------------------------------------------- DET104
def test_det104_inserts_cpu_after_detach():
    source = "import torch\nx = torch.ones(3, device='cuda')\nx.detach().numpy()\n"
    result = fix_source(source)
    assert result.source.endswith("x.detach().cpu().numpy()\n")
    assert [d.code for d in result.applied] == ["DET104"]


# ------------------------------------------------------------------------ noqa
@pytest.mark.parametrize("comment", ["# noqa", "# noqa: DET101", "# NOQA:DET1", "# noqa: E501,DET101"])
def test_noqa_lines_are_left_alone(comment):
    source = GRAD + f"w.numpy()  {comment}\nw.cpu().numpy()\n"
    result = fix_source(source)
    assert result.source == GRAD + f"w.numpy()  {comment}\nw.detach().cpu().numpy()\n"
    assert [d.line for d in result.applied] == [4]
    assert result.remaining == []  # a silenced diagnostic is not "left to fix"


def test_a_file_wide_flake8_noqa_leaves_the_file_alone():
    source = "# flake8: noqa\n" + GRAD + "w.numpy()\n"
    result = fix_source(source)
    assert not result.changed and result.remaining == []


def test_noqa_naming_another_code_does_not_protect_the_line():
    source = GRAD_ON_DEVICE + "w.numpy()  # noqa: DET104\n"
    result = fix_source(source)
    assert result.source == GRAD_ON_DEVICE + "w.detach().numpy()  # noqa: DET104\n"
    assert [d.code for d in result.applied] == ["DET101"]


def test_noqa_after_a_multiline_string_covers_its_lines_as_in_flake8():
    source = GRAD + 'print(w.numpy(), """\ntext\n""")  # noqa: DET101\n'
    assert not fix_source(source).changed


# ------------------------------------------------------------ byte preservation
def test_layout_outside_the_fix_is_kept_for_text():
    source = (
        "import torch\r\n"
        "# a comment\r\n"
        "w = torch.ones(3,   requires_grad=True)  # spaced\r\n"
        "if True:\r\n"
        "\tarr = w.numpy()   # tabs and CRLF\r\n"
        "\tother = [1,2 ,3]\r\n"
    )
    result = fix_source(source)
    assert result.source == source.replace("w.numpy()", "w.detach().numpy()")


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_fix_file_keeps_bom_crlf_and_the_rest_byte_for_byte(tmp_path):
    original = b"\xef\xbb\xbfimport torch\r\nw = torch.ones(3, requires_grad=True)\r\nv = w.numpy()  # \xc3\xa9t\xc3\xa9\r\n"
    path = write(tmp_path / "bom.py", original)
    result = fix_file(path)
    assert [d.code for d in result.applied] == ["DET101"]
    assert path.read_bytes() == original.replace(b"w.numpy()", b"w.detach().numpy()")


def test_fix_file_keeps_a_latin1_coding_cookie(tmp_path):
    original = (
        "# -*- coding: latin-1 -*-\nimport torch\nw = torch.ones(3, requires_grad=True)\n"
        "label = 'café'\nv = w.cpu().numpy()\n"
    ).encode("latin-1")
    path = write(tmp_path / "latin.py", original)
    fix_file(path)
    assert path.read_bytes() == original.replace(b"w.cpu().numpy()", b"w.detach().cpu().numpy()")
    assert b"caf\xe9" in path.read_bytes()


def test_fix_file_writes_atomically_and_keeps_permission_bits(tmp_path):
    path = write(tmp_path / "script.py", (GRAD + "w.numpy()\n").encode())
    os.chmod(path, 0o751)
    inode = path.stat().st_ino
    fix_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.stat().st_ino != inode  # a new file renamed over the old one, not rewritten in place
    assert path.read_text() == GRAD + "w.detach().numpy()\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script.py"]  # no temporary file left


def test_a_failed_write_leaves_the_file_and_no_temporary(tmp_path, monkeypatch):
    original = (GRAD + "w.numpy()\n").encode()
    path = write(tmp_path / "script.py", original)

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(FixFileError, match="cannot write: Permission denied"):
        fix_file(path)
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script.py"]


def test_fix_file_through_a_symlink_fixes_the_target_and_keeps_the_link(tmp_path):
    target = write(tmp_path / "real.py", (GRAD + "w.numpy()\n").encode())
    link = tmp_path / "link.py"
    link.symlink_to(target)
    fix_file(link)
    assert link.is_symlink()
    assert target.read_text().endswith("w.detach().numpy()\n")


def test_unparsable_file_is_reported_and_left_untouched(tmp_path):
    original = (GRAD + "w.numpy(\n").encode()
    path = write(tmp_path / "broken.py", original)
    mtime = path.stat().st_mtime_ns
    result = fix_file(path)
    # check's words (syntax.py), never libcst's `Syntax Error @ 3:8.`
    assert result.error == "syntax error at line 3, column 8: '(' was never closed"
    assert result.error_position == (3, 7)
    assert not result.changed and result.applied == []
    assert path.read_bytes() == original and path.stat().st_mtime_ns == mtime


def test_undecodable_file_raises_a_one_line_error(tmp_path):
    path = write(tmp_path / "bad.py", b"import torch\nx = '\xff\xfe'\n")
    with pytest.raises(FixFileError, match="cannot decode"):
        fix_file(path)


def test_dry_run_does_not_write(tmp_path):
    original = (GRAD + "w.numpy()\n").encode()
    path = write(tmp_path / "script.py", original)
    result = fix_file(path, write=False)
    assert result.changed and path.read_bytes() == original


def test_files_without_torch_or_candidates_are_returned_unchanged():
    for source in ("import numpy as np\nnp.zeros(3).data\n", "x = 1\n", ""):
        result = fix_source(source)
        assert result.source == source and not result.applied and result.error is None


# ------------------------------------------------------------------- snapshots
FIXTURE_FILES = snapshots.fixture_files(FIXTURES)


def test_fixtures_exist_and_some_are_snapshotted():
    assert FIXTURE_FILES
    assert list(FIXTURES.rglob("*.fixed.py"))


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fix_snapshot_is_current(fixture):
    expected = snapshots.expected_snapshot(fixture)
    path = snapshots.snapshot_path(fixture)
    if expected is None:
        assert not path.exists(), f"stale snapshot {path.name}: run scripts/update_fix_snapshots.py"
        return
    assert path.exists(), f"missing snapshot {path.name}: run scripts/update_fix_snapshots.py"
    assert path.read_text(encoding="utf-8") == expected, "run scripts/update_fix_snapshots.py"
    assert "# expect:" not in expected
    assert_parses_and_idempotent(expected, unsafe=True)


def test_every_snapshot_belongs_to_a_fixture():
    sources = {snapshots.snapshot_path(f) for f in FIXTURE_FILES}
    assert set(FIXTURES.rglob("*.fixed.py")) <= sources


def test_every_fixable_expectation_gets_a_snapshot():
    """A fixture annotating a code whose rule has fixes either gets a snapshot or says why not."""
    fixable = {rule.code for rule in ALL_RULES if any(e.fixed for e in rule.INVALID)}
    for fixture in FIXTURE_FILES:
        text = fixture.read_text(encoding="utf-8")
        annotations = [line.split("# expect:", 1)[1] for line in text.splitlines() if "# expect:" in line]
        expects_fixable = any(code in annotation for annotation in annotations for code in fixable)
        if expects_fixable and snapshots.expected_snapshot(fixture) is None:
            remaining = fix_source(snapshots.strip_expectations(text), unsafe=True).remaining
            assert remaining and all(d.fix is None for d in remaining), fixture


def _flake8_det(paths: list[Path]) -> dict[str, set[tuple[int, str]]]:
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=DET", "--format=%(path)s|%(row)d|%(code)s", *map(str, paths)],
        check=False, capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert completed.returncode in (0, 1), completed.stderr
    found: dict[str, set[tuple[int, str]]] = {}
    for line in completed.stdout.splitlines():
        path, row, code = line.rsplit("|", 2)
        found.setdefault(str(Path(path).resolve()), set()).add((int(row), code))
    return found


def test_flake8_reports_none_of_the_fixed_diagnostics_on_the_snapshots():
    pairs = [(f, snapshots.snapshot_path(f)) for f in FIXTURE_FILES if snapshots.snapshot_path(f).exists()]
    reported = _flake8_det([snapshot for _, snapshot in pairs])
    for fixture, snapshot in pairs:
        result = fix_source(snapshots.strip_expectations(fixture.read_text(encoding="utf-8")), unsafe=True)
        left = reported.get(str(snapshot.resolve()), set())
        assert left == {(d.line, d.code) for d in result.remaining}, snapshot
        assert not {d.code for d in result.applied} & {code for _, code in left}, snapshot


def test_flake8_after_fix_file_reports_nothing_fixed(tmp_path):
    path = write(tmp_path / "script.py", (GRAD_ON_DEVICE + "a = w.cpu().detach()\nb = w.numpy()\nc = w.data.numpy()\n").encode())
    before = _flake8_det([path])[str(path.resolve())]
    assert {code for _, code in before} == {"DET101", "DET102", "DET103", "DET104"}
    result = fix_file(path)
    assert {d.code for d in result.applied} == {"DET101", "DET102", "DET103", "DET104"}
    assert _flake8_det([path]).get(str(path.resolve()), set()) == set()


RUN_SNAPSHOTS = """
import contextlib, io, json, runpy, sys
outcomes = {}
for path in sys.argv[1:]:
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(path, run_name="__main__")
        outcomes[path] = "ok"
    except Exception as error:
        outcomes[path] = f"{type(error).__name__}: {error}"
print(json.dumps(outcomes))
"""


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_fixed_snapshots_run_without_the_hazard(device):
    """Run every snapshot with DEVICE=cpu and, where a GPU exists, DEVICE=cuda (where DET104's
    TypeError and DET102's recorded copy are real), as the runtime harness will.

    An unsafe DET103 write fix may turn a silently wrong gradient into autograd's in-place error:
    that is the documented truth of the rule, the only failure accepted here.
    """
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine: the GPU leg runs only where torch.cuda.is_available()")
    fixed_files = sorted(str(p) for p in FIXTURES.rglob("*.fixed.py"))
    completed = subprocess.run(
        [sys.executable, "-c", RUN_SNAPSHOTS, *fixed_files],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        env={**os.environ, "DEVICE": device},
    )
    assert completed.returncode == 0, completed.stderr
    outcomes = json.loads(completed.stdout.splitlines()[-1])
    for path, outcome in outcomes.items():
        if outcome != "ok":
            assert "DET103" in path or "det103" in path, (path, outcome)
            assert "modified by an inplace operation" in outcome, (path, outcome)
    assert "ok" in outcomes.values()


def test_passes_are_bounded_when_fixes_never_converge(monkeypatch):
    import libcst.matchers as m

    from flake8_detach.diagnostics import Diagnostic, Fix
    from flake8_detach.engine import Analysis

    def ever_growing(module, settings):
        [name] = m.findall(module, m.Name(value=m.MatchIfTrue(lambda v: v.startswith("x"))))
        grown = name.with_changes(value=name.value + "_")
        return Analysis(module, diagnostics=[Diagnostic("DET101", 2, 0, "DET101 grow", Fix(name, grown, True, "grow"))])

    monkeypatch.setattr(fix_passes, "analyze_module", ever_growing)
    result = fix_source("import torch\nx.numpy()\n")
    assert result.source == "import torch\nx" + "_" * fix_passes.MAX_PASSES + ".numpy()\n"
    assert len(result.applied) == fix_passes.MAX_PASSES


@pytest.mark.parametrize(("style", "ok"), [("force", True), ("chain", True), ("bogus", False)])
def test_flake8_accepts_the_fix_style_option(tmp_path, style, ok):
    path = write(tmp_path / "script.py", (GRAD + "w.numpy()\n").encode())
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=DET", f"--detach-fix-style={style}", str(path)],
        check=False,
        capture_output=True,
        text=True,
    )
    if ok:
        assert completed.returncode == 1 and "DET101" in completed.stdout
    else:
        assert completed.returncode != 0 and "--detach-fix-style" in completed.stdout + completed.stderr


def test_internal_error_leaves_the_text_unchanged_with_a_message(monkeypatch) -> None:
    source = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
    monkeypatch.setattr(fix_passes, "fix_module", lambda *a, **k: (_ for _ in ()).throw(KeyError("boom")))
    result = fixer.fix_source(source)
    assert result.source == source and "internal error" in (result.error or "")


def test_configured_converting_function_is_fixed_like_flake8_reports_it() -> None:
    from flake8_detach import Settings, check_source
    from flake8_detach.fixing.fixer import fix_source

    source = (
        "import torch\nfrom myproj.plots import show\n"
        "w = torch.ones(2, requires_grad=True)\nshow(w * 2)\n"
    )
    settings = Settings(converting_functions=frozenset({"myproj.plots.show"}))
    assert [d.code for d in check_source(source, settings)] == ["DET106"]
    result = fix_source(source, settings)
    assert "show((w * 2).detach().cpu().numpy())" in result.source
    assert [d.code for d in result.applied] == ["DET106"]
