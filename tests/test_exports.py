"""Values across files (analysis/exports.py): what a function or a class's method of another
project file returns, and what its fields hold, inherited or not.

Each case is a small project written to disk, linted with its place, and run with torch in a
subprocess to show the claimed error (grad on CPU; a GPU stands in as `meta`, which refuses
`.numpy()` with the same TypeError) or the clean run of its safe twin.
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
DEVICE_ERROR = "can't convert meta device type tensor to numpy"


@pytest.fixture(autouse=True)
def _fresh_projects() -> None:
    forget_projects()
    project_module.use_summary_directory(None)


def write(root: Path, files: dict[str, str]) -> None:
    (root / "setup.py").write_text("")
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text).lstrip("\n"))


def codes(root: Path, name: str, cache: Path | None = None) -> list[tuple[int, str]]:
    path = root / name
    return [(d.line, d.code) for d in analyze(path.read_text(), place=Place(path, cache)).diagnostics]


def run(root: Path, script: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, str(root / script)], cwd=root, env=env, capture_output=True,
                          text=True, check=False, timeout=120)


PREDICTOR = """
    import torch
    from torch import nn


    class Predictor:
        def __init__(self):
            self.net = nn.Linear(3, 1)

        def predict(self, x):
            return self.net(x)
"""

USE_PREDICTOR = """
    import torch
    from predictor import Predictor

    p = Predictor()
    print(p.predict(torch.ones(3)).numpy())
"""


def test_a_method_of_another_files_class_gives_what_it_returns(tmp_path: Path) -> None:
    write(tmp_path, {"predictor.py": PREDICTOR, "main.py": USE_PREDICTOR})
    assert codes(tmp_path, "main.py") == [(5, "DET101")]
    assert GRAD_ERROR in run(tmp_path, "main.py").stderr


def test_its_detached_twin_is_clean_and_runs(tmp_path: Path) -> None:
    write(tmp_path, {"predictor.py": PREDICTOR.replace("return self.net(x)", "return self.net(x).detach()"),
                     "main.py": USE_PREDICTOR})
    assert codes(tmp_path, "main.py") == []
    assert run(tmp_path, "main.py").returncode == 0


BUFFER = """
    import numpy as np
    import torch


    class Buffer:
        def __init__(self, device=None):
            self.items = [np.zeros(2, dtype=np.float32)]
            self.device = torch.device(device or ("cuda:0" if torch.cuda.is_available() else "cpu"))

        def sample(self):
            return torch.from_numpy(np.vstack(self.items)).to(self.device)
"""

AGENT = """
    import torch
    from buffer import Buffer


    class Agent(Buffer):
        def learn(self):
            batch = self.sample()
            return batch.numpy()

        def zeros(self):
            return torch.zeros(2).to(self.device).numpy()


    Agent(DEVICE).learn()
"""


@pytest.mark.parametrize("device", ["meta", None])
def test_inherited_methods_and_fields_carry_the_device(tmp_path: Path, device: str | None) -> None:
    """`self.sample()` and `self.device` come from a base class in another file: a GPU when one
    is available (here: `meta`, which fails as a GPU does; `None`: the file's own choice)."""
    write(tmp_path, {"buffer.py": BUFFER, "agent.py": AGENT.replace("DEVICE", repr(device))})
    assert codes(tmp_path, "agent.py") == [(8, "DET104"), (11, "DET104")]
    proof = run(tmp_path, "agent.py")
    if device == "meta":
        assert DEVICE_ERROR in proof.stderr
    else:
        assert proof.returncode == 0 or "cuda" in proof.stderr  # CPU here: runs; a GPU: raises


def test_a_function_of_another_file_gives_what_it_returns(tmp_path: Path) -> None:
    write(tmp_path, {"data.py": """
        import torch


        def noisy(x):
            return x + torch.randn(3, requires_grad=True)
    """, "main.py": """
        import torch
        from data import noisy

        print(noisy(torch.ones(3)).numpy())
        with torch.no_grad():
            print(noisy(torch.ones(3)).numpy())
    """})
    assert codes(tmp_path, "main.py") == [(4, "DET101")]
    assert GRAD_ERROR in run(tmp_path, "main.py").stderr


def test_exports_are_cached_and_follow_an_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flake8_detach.analysis import exports

    cache = tmp_path / "cache"
    write(tmp_path, {"predictor.py": PREDICTOR, "main.py": USE_PREDICTOR})
    assert codes(tmp_path, "main.py", cache) == [(5, "DET101")]
    forget_projects()  # a new process: only the disk is left

    def refuse(source: str, view: object, roots: object = None) -> None:
        raise AssertionError("the exports of unchanged files were computed again")

    monkeypatch.setattr(exports, "compute_exports", refuse)
    assert codes(tmp_path, "main.py", cache) == [(5, "DET101")]
    monkeypatch.undo()
    forget_projects()
    write(tmp_path, {"predictor.py": PREDICTOR.replace("return self.net(x)", "return self.net(x).detach()")})
    assert codes(tmp_path, "main.py", cache) == []


def test_what_other_files_pass_judges_a_helper_as_its_own_files_calls_would(tmp_path: Path) -> None:
    """A helper nothing in its file calls: grad passed from train.py makes it DET101 (no longer
    caller-dependent); plain tensors passed from there make it clean."""
    write(tmp_path, {"helpers.py": """
        import torch


        def to_np(t):
            return t.numpy()


        def show(t):
            return t.numpy()
    """, "train.py": """
        import torch

        from helpers import show, to_np

        print(show(torch.ones(3)))
        model = torch.nn.Linear(3, 1)
        print(to_np(model(torch.ones(3))))
    """})
    assert codes(tmp_path, "helpers.py") == [(5, "DET101")]
    proof = run(tmp_path, "train.py")
    assert GRAD_ERROR in proof.stderr and "[1. 1. 1.]" in proof.stdout  # show ran, to_np raised


RECORDER = """
    import torch
    from torch import nn


    class Recorder:
        def __init__(self):
            self.net = nn.Linear(3, 1)
            self.outputs = []

        def run(self, x):
            def keep(value):  # a closure (a hook, often) filling the instance's list
                self.outputs.append(value)

            keep(self.net(x))
"""

USE_RECORDER = """
    import torch
    from recorder import Recorder

    r = Recorder()
    r.run(torch.ones(3))
    print(r.outputs[0].numpy())
"""


def test_a_list_field_filled_by_a_closure_carries_its_elements_across_files(tmp_path: Path) -> None:
    write(tmp_path, {"recorder.py": RECORDER, "main.py": USE_RECORDER})
    assert codes(tmp_path, "main.py") == [(6, "DET101")]
    assert GRAD_ERROR in run(tmp_path, "main.py").stderr
    forget_projects()
    write(tmp_path, {"recorder.py": RECORDER.replace("append(value)", "append(value.detach())")})
    assert codes(tmp_path, "main.py") == []
    assert run(tmp_path, "main.py").returncode == 0


def test_a_file_that_imports_no_torch_is_exported_without_a_libcst_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """`layers/helpers.py`-style modules (pure Python helpers) are imported across a project:
    their export tells what they give back (a tuple of what the call passed, a base class's
    fields), and reading their text must not pay libcst's parse, the largest part of a cold run's
    exports: the tree is built from `ast`."""
    import libcst

    from flake8_detach.analysis.exports import compute_exports

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("libcst parsed the file (imports no torch)")

    monkeypatch.setattr(libcst, "parse_module", refuse)
    helpers = "import collections.abc\n\n\ndef to_2tuple(x):\n    return (x, x)\n"
    exported = compute_exports(helpers, None)
    assert set(exported["returns"]) == {"to_2tuple"} and len(exported["returns"]["to_2tuple"][2]) == 2  # (x, x)
    # A file that imports torch is analysed on the tree built from `ast` (ast_bridge.py): no libcst
    # parse either, and its exports are there.
    made = compute_exports("import torch\n\n\ndef f():\n    return torch.ones(1, requires_grad=True)\n", None)
    assert set(made["returns"]) == {"f"}
    # What the bridge declines (a `match` statement) is parsed by libcst, as before.
    with pytest.raises(AssertionError, match="libcst parsed the file"):
        compute_exports("import torch\n\n\ndef f(x):\n    match x:\n        case _:\n            return x\n", None)


STORE = """
    import torch


    class Store:
        def __init__(self):
            self.items = []

        def add(self, t):
            self.items.append(t)

        def last(self):
            return self.items[-1]
"""

USE_STORE = """
    import torch
    from store import Store

    box = Store()
    box.add(torch.ones(2, requires_grad=True))
    print(box.last().numpy())
"""


@pytest.mark.parametrize("store, main, flagged", [
    (STORE, USE_STORE, True),
    # The twin: what the file stores needs no grad.
    (STORE, USE_STORE.replace("requires_grad=True", "requires_grad=False"), False),
    # The store detaches what it keeps: its export returns no value of the callers'.
    (STORE.replace("self.items.append(t)", "self.items.append(t.detach())"), USE_STORE, False),
    # Another object of the class holds the grad tensor: this one gives back only its own.
    (STORE, USE_STORE.replace("print(box.last()", "other = Store()\n    other.add(torch.ones(2))\n    print(other.last()"), False),
])
def test_an_object_of_another_files_class_gives_back_what_the_file_stored(
        tmp_path: Path, store: str, main: str, flagged: bool) -> None:
    """`box.add(t)` then `box.last()` (the conformance matrix's `other_file_method`): what the file
    passed to the object comes back where the export's return came from its parameters. Each
    program runs: flagged iff it raises."""
    write(tmp_path, {"store.py": store, "main.py": main})
    line = textwrap.dedent(main).lstrip("\n").count("\n")
    assert codes(tmp_path, "main.py") == ([(line, "DET101")] if flagged else [])
    result = run(tmp_path, "main.py")
    assert (GRAD_ERROR in result.stderr) if flagged else result.returncode == 0, result.stderr


FACTORY = """
    import torch


    class Piece:
        def __init__(self, t):
            self.data = t


    class Factory:
        def __init__(self, t):
            self.t = t

        def __getitem__(self, key):
            return Piece(self.t + 1)
"""


def test_what_an_object_of_another_files_class_was_given_is_not_its_items(tmp_path: Path) -> None:
    """Indexing an instance of another file's class does not give back the tensor passed to it
    (a checkpoint factory's `state['k'].data` is its record's field, not `Tensor.data`: a false
    positive on Megatron's tests while the kept values were the instance's own heap object)."""
    write(tmp_path, {"factory.py": FACTORY, "main.py": """
        import torch
        from factory import Factory

        state = {"level": Factory(torch.arange(3))}
        print(state["level"]["a"].data)
    """})
    assert codes(tmp_path, "main.py") == []
    assert run(tmp_path, "main.py").returncode == 0


TRAINER = """
    import torch


    class Trainer:
        def __init__(self):
            self.net = torch.nn.Linear(3, 2)

        def update(self, x):
            pred = self.net(x)
            return pred, {"loss": pred.pow(2).mean()}
"""
UPDATE = """
    import torch
    from trainer import Trainer

    trainer = Trainer()
    CONTEXT
        pred, info = trainer.update(torch.ones(4, 3))
    print(info["loss"].numpy())
"""


def test_a_call_under_no_grad_gives_the_items_and_elements_of_its_result_without_grad(tmp_path: Path) -> None:
    """RIFE's `pred, info = model.update(...)` under `no_grad()`: `info["loss"]` is computed with
    grad off too (the exported tuple's items, and the dict's elements)."""
    write(tmp_path, {"trainer.py": TRAINER, "main.py": UPDATE.replace("CONTEXT", "with torch.no_grad():")})
    assert codes(tmp_path, "main.py") == []
    assert run(tmp_path, "main.py").returncode == 0
    write(tmp_path, {"main.py": UPDATE.replace("CONTEXT", "if True:")})
    assert codes(tmp_path, "main.py") == [(7, "DET101")]
    assert GRAD_ERROR in run(tmp_path, "main.py").stderr
