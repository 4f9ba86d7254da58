"""`__init__` runs before any other method of its object (analysis/construction.py): a field it
reads before writing holds nothing that a later method stores, unless the constructor could have
run that method or the class body or a base's constructor sets it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from flake8_detach.engine import check_source

AGENT = """\
import numpy as np
import torch


class Agent:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)
        self.log_alpha = torch.tensor(np.log(self.alpha), requires_grad=True)

    def train(self):
        self.alpha = self.log_alpha.exp()

    def report(self):
        return np.log(self.alpha)


agent = Agent(alpha=0.2)
agent.train()
"""


def det106(source: str) -> list[int]:
    return [d.line for d in check_source(source) if d.code == "DET106"]


def test_a_constructor_does_not_see_what_a_later_method_stores() -> None:
    # Line 8 reads the float `__dict__.update` set; line 14 may read train()'s tensor that requires grad.
    assert det106(AGENT) == [14]


def test_the_claim_holds_at_run_time(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT + "agent.report()\n")
    failed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False, timeout=120)
    assert "Can't call numpy() on Tensor that requires grad" in failed.stderr  # report(), line 14
    script.write_text(AGENT)
    assert subprocess.run([sys.executable, str(script)], check=False, timeout=120).returncode == 0  # line 8 runs


def test_a_constructor_that_runs_a_method_may_see_its_writes() -> None:
    calls_train = AGENT.replace("        self.log_alpha = torch.tensor(", "        self.train()\n        self.log_alpha = torch.tensor(")
    assert 9 in det106(calls_train)


def test_a_constructor_that_lets_its_object_out_may_see_any_write() -> None:
    registered = AGENT.replace("        self.__dict__.update(kwargs)\n", "        self.__dict__.update(kwargs)\n        setup(self)\n")
    source = registered.replace("class Agent:", "def setup(agent):\n    agent.train()\n\n\nclass Agent:")
    assert 13 in det106(source)  # the read, four lines down


def test_a_subclass_may_write_the_field_before_calling_the_constructor() -> None:
    subclass = AGENT.replace("\n\nagent = Agent(", (
        "\n\nclass Tuned(Agent):\n    def __init__(self):\n"
        "        self.alpha = torch.ones(1, requires_grad=True)\n        super().__init__()\n\n\nagent = Agent("))
    assert 8 in det106(subclass)


def test_a_field_bound_in_a_nested_target_is_set_by_the_constructor() -> None:
    nested = AGENT.replace("        self.__dict__.update(kwargs)\n",
                           "        self.__dict__.update(kwargs)\n        (_, (self.alpha, *_)) = (0, (torch.ones(1, requires_grad=True), 1))\n")
    assert 9 in det106(nested)  # the read sees the tensor the constructor's own tuple assignment bound


INFERER = """\
import torch
from torch import nn


class Inferer:
    def __init__(self):
        self.model = nn.Linear(3, 2)
        self.model.eval()
        torch.autograd.set_grad_enabled(False)

    def evaluate(self, x):
        return self.model(x).numpy()


inf = Inferer()
print(inf.evaluate(torch.ones(1, 3)))
"""


def _runs(source: str, tmp_path: Path) -> bool:
    script = tmp_path / "script.py"
    script.write_text(source)
    return subprocess.run([sys.executable, str(script)], capture_output=True, check=False).returncode == 0


def test_a_constructor_that_switches_grad_off_does_so_before_the_objects_methods(tmp_path: Path) -> None:
    """ABSA-PyTorch's `Inferer.__init__` calls `torch.autograd.set_grad_enabled(False)`: every
    later method of the object runs with grad off, whoever calls it (it ran first)."""
    assert [d.code for d in check_source(INFERER)] == [] and _runs(INFERER, tmp_path)
    # Turned on again in the constructor, or only on one branch of it: the output requires grad.
    on_again = INFERER.replace("set_grad_enabled(False)", "set_grad_enabled(False)\n        torch.set_grad_enabled(True)")
    assert [(d.line, d.code) for d in check_source(on_again)] == [(13, "DET101")] and not _runs(on_again, tmp_path)
    branch = INFERER.replace("        torch.autograd", "        if len(self.__dict__) > 9:\n            torch.autograd")
    assert [(d.line, d.code) for d in check_source(branch)] == [(13, "DET101")] and not _runs(branch, tmp_path)
