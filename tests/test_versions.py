"""Tests of torch's version (analysis/versions.py): only the branch a current torch runs is analysed.

The programs are executed too, on the torch installed here: a flagged line must raise, an
unflagged program must run.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from running import failing_line

from flake8_detach import check_source
from flake8_detach.analysis.imports import ImportTable
from flake8_detach.analysis.versions import version_branch
from flake8_detach.settings import Settings

HEADER = """
import torch
from packaging import version as pv
from distutils.version import LooseVersion
version = torch.__version__
import numpy as np
"""


def verdict(test: str) -> bool | None:
    module = cst.parse_module(textwrap.dedent(HEADER) + f"if {test}:\n    pass\n")
    statement = module.body[-1]
    assert isinstance(statement, cst.If)
    return version_branch(statement.test, ImportTable.from_module(module))


@pytest.mark.parametrize(("test", "expected"), [
    ("int(version[0]) > 0 or int(version[2]) > 3", True),  # Person_reID's switch for torch 0.3
    ("torch.__version__ < '0.4'", False),
    ("torch.__version__ >= '1.10'", True),  # TorchVersion compares as a version, not as a string
    ("torch.__version__ >= (1, 6)", True),
    ("torch.__version__[:3] >= '1.10'", True),  # a slice is a plain string: '2.1' >= '1.10'
    ("version.startswith('0.')", False),
    ("float(torch.__version__[:3]) < 1.3", False),
    ("tuple(int(x) for x in version.split('.')[:2]) >= (1, 8)", None),  # a generator: not judged
    ("pv.parse(torch.__version__) >= pv.parse('1.6.0')", True),
    ("LooseVersion(torch.__version__) < LooseVersion('1.0')", False),
    ("not version.split('.')[0] == '0'", True),
    ("torch.cuda.is_available()", None),  # no version read
    ("version >= '1.0' and use_amp", None),  # a flag the test does not know
])
def test_a_version_test_is_judged_as_on_a_current_torch(test: str, expected: bool | None) -> None:
    assert verdict(test) is expected


def test_the_judged_tests_agree_with_the_installed_torch() -> None:
    """Each test the evaluator judges gives the same truth on the torch installed here (2.13)."""
    import torch

    namespace = {"torch": torch, "version": torch.__version__}
    for test in ("int(version[0]) > 0 or int(version[2]) > 3", "torch.__version__ >= '1.10'",
                 "torch.__version__ >= (1, 6)", "torch.__version__[:3] >= '1.10'", "version.startswith('0.')",
                 "float(torch.__version__[:3]) < 1.3", "torch.__version__ < '0.4'"):
        assert eval(test, namespace) is verdict(test), test


PROGRAM = """
import torch
from torch import nn
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

version = torch.__version__
net = nn.Linear(3, 1)
running = 0.0
loss = net(torch.ones(3)).sum()
loss.backward()
if int(version[0]) > 0 or int(version[2]) > 3:  # torch 0.4 and later
    running += {new}
else:  # torch 0.3: a 1-element tensor
    running += loss.data[0]
plt.plot([running])
"""


def test_the_branch_for_an_old_torch_binds_nothing() -> None:
    """Person_reID's `running_loss += loss.data[0]` for torch 0.3: on a current torch only
    `loss.item()` is added, so the plotted history holds floats."""
    source = PROGRAM.format(new="loss.item()")
    assert check_source(source, Settings(preview=True)) == []
    assert failing_line(source) is None
    flagged = PROGRAM.format(new="loss")  # the live branch adds the tensor itself: flagged, and it raises
    assert [(d.line, d.code) for d in check_source(flagged, Settings(preview=True))] == [(17, "DET106")]
    assert failing_line(flagged) == 17


@pytest.mark.parametrize(("test", "expected"), [
    ("hasattr(torch, 'no_grad')", True),
    ("not hasattr(torch, 'inference_mode')", False),
    ("hasattr(torch, 'some_future_feature')", None),  # the table does not say what is missing
    ("hasattr(np, 'no_grad')", None),
])
def test_a_feature_test_of_torch_is_judged_by_the_table(test: str, expected: bool | None) -> None:
    assert verdict(test) is expected


def test_the_feature_table_holds_on_the_installed_torch() -> None:
    import torch

    from flake8_detach.analysis.versions import TORCH_ATTRIBUTES

    assert all(hasattr(torch, name) for name in TORCH_ATTRIBUTES)
