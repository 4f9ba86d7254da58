"""The project index (analysis/project.py): facts that cross files, on small projects in tmp_path.

Each project case has a runtime proof: the small project is executed with torch (in a subprocess,
the project's folder on sys.path) and fails, or runs clean, as the diagnostics claim.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flake8_detach.analysis import project as project_module
from flake8_detach.analysis.project import find_root, forget_projects, project_view, summarise
from flake8_detach.analysis.values import Flag, Value
from flake8_detach.engine import Place, analyze
from flake8_detach.settings import Settings

GRAD_ERROR = "Can't call numpy() on Tensor that requires grad"
CALLER_DEPENDENT = "it depends on the caller"
PREVIEW = Settings(preview=True)


@pytest.fixture(autouse=True)
def _fresh_projects() -> None:
    forget_projects()
    project_module.use_summary_directory(None)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"))


def codes(root: Path, name: str, cache: Path | None = None, with_place: bool = True) -> list[tuple[int, str]]:
    path = root / name
    place = Place(path, cache) if with_place else None
    # DET111 (caller-dependent) is opt-in: preview shows it, so a helper's three states are visible.
    return [(d.line, d.message) for d in analyze(path.read_text(), PREVIEW, place=place).diagnostics]


def run_script(root: Path, script: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, str(root / script)], cwd=cwd or root, env=env,
                          capture_output=True, text=True, check=False, timeout=120)


MODELS = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x)
"""

TRAIN = """
    import torch
    from models import Net

    model = Net()
    out = model(torch.ones(1, 3))
    print(out.numpy())
"""

SMART = """
    import torch


    def smart_inference_mode(new=True):
        def decorate(fn):
            return (torch.inference_mode if new else torch.no_grad)()(fn)
        return decorate
"""

METRICS = """
    import torch


    def to_array(t):
        return t.numpy()
"""


def test_a_module_class_of_models_py_is_a_module_in_train_py(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "train.py": TRAIN})
    assert codes(tmp_path, "train.py", with_place=False) == []  # the file alone does not know Net
    found = codes(tmp_path, "train.py")
    assert [line for line, _ in found] == [6] and found[0][1].startswith("DET101")
    proof = run_script(tmp_path, "train.py")
    assert proof.returncode != 0 and GRAD_ERROR in proof.stderr


def test_a_subclass_of_a_project_module_class_is_a_module_too(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "heads.py": """
        from models import Net


        class Head(Net):
            pass
    """, "train.py": TRAIN.replace("from models import Net", "from heads import Head as Net")})
    assert [line for line, _ in codes(tmp_path, "train.py")] == [6]
    proof = run_script(tmp_path, "train.py")
    assert GRAD_ERROR in proof.stderr


TEMPLATE = """
    from abc import abstractmethod

    import torch
    from torch import nn


    class MetaTemplate(nn.Module):
        @abstractmethod
        def set_forward(self, x):
            pass

        def correct(self, x):
            scores = self.set_forward(x)
            return scores.numpy().argmax(1)
"""

PROTONET = """
    import torch
    from torch import nn

    from template import MetaTemplate


    class ProtoNet(MetaTemplate):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def set_forward(self, x):
            return self.fc(x)


    print(ProtoNet().correct(torch.ones(1, 3)))
"""


def test_a_template_method_called_on_self_gives_what_the_subclasses_of_other_files_return(tmp_path: Path) -> None:
    """CloserLookFewShot: `MetaTemplate.correct` calls `self.set_forward(x)`, an abstract method
    whose body is `pass`; what runs is a subclass's override, in another file of the project."""
    write(tmp_path, {"setup.py": "", "template.py": TEMPLATE, "protonet.py": PROTONET})
    found = codes(tmp_path, "template.py")
    assert [line for line, _ in found] == [14] and found[0][1].startswith("DET101")
    proof = run_script(tmp_path, "protonet.py")
    assert proof.returncode != 0 and GRAD_ERROR in proof.stderr
    write(tmp_path, {"protonet.py": PROTONET.replace("return self.fc(x)", "return self.fc(x).detach()")})
    forget_projects()
    assert codes(tmp_path, "template.py") == []
    assert run_script(tmp_path, "protonet.py").returncode == 0


NODE_TRAINER = """
    import torch
    from torch import nn


    class Trainer(nn.Module):
        def __init__(self, model, loss_function):
            super().__init__()
            self.model = model
            self.loss_function = loss_function

        def train_on_batch(self, x, y):
            loss = self.loss_function(self.model(x), y).mean()
            loss.backward()
            return {'loss': loss}
"""

NODE_NOTEBOOK = """
    import sys
    sys.path.insert(0, '..')
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import torch
    import torch.nn.functional as F
    import lib

    trainer = lib.Trainer(torch.nn.Linear(3, 1), F.mse_loss)
    loss_history = []
    metrics = trainer.train_on_batch(torch.ones(2, 3), torch.zeros(2, 1))
    loss_history.append(metrics['loss'])
    plt.plot(loss_history)
"""


def test_a_loss_past_its_backward_call_reaches_a_notebook_in_another_folder(tmp_path: Path) -> None:
    """NODE: `lib.Trainer.train_on_batch` returns `{'loss': loss}` after `loss.backward()`, with
    the model and the loss function constructor arguments; a notebook under `notebooks/` (on
    `sys.path.insert(0, '..')`, `lib` re-exporting the trainer with a star import) plots the
    history of those losses: matplotlib converts each and raises."""
    write(tmp_path, {"setup.py": "", "lib/__init__.py": "from .trainer import *\n", "lib/trainer.py": NODE_TRAINER,
                     "notebooks/run.py": NODE_NOTEBOOK})
    found = codes(tmp_path, "notebooks/run.py")
    assert [line for line, _ in found] == [14] and found[0][1].startswith("DET106")
    proof = run_script(tmp_path, "notebooks/run.py", cwd=tmp_path / "notebooks")
    assert proof.returncode != 0 and GRAD_ERROR in proof.stderr
    write(tmp_path, {"lib/trainer.py": NODE_TRAINER.replace("{'loss': loss}", "{'loss': loss.item()}")})
    forget_projects()
    assert codes(tmp_path, "notebooks/run.py") == []
    assert run_script(tmp_path, "notebooks/run.py", cwd=tmp_path / "notebooks").returncode == 0


def test_a_project_no_grad_decorator_factory_makes_its_callees_clean(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "utils/__init__.py": "", "utils/torch_utils.py": SMART,
                     "utils/metrics.py": METRICS, "val.py": """
        import torch
        from models import Net
        from utils.metrics import to_array
        from utils.torch_utils import smart_inference_mode


        @smart_inference_mode()
        def run():
            model = Net()
            out = model(torch.ones(1, 3))
            print(to_array(out), out.numpy())


        run()
    """})
    alone = codes(tmp_path, "utils/metrics.py", with_place=False)
    assert len(alone) == 1 and CALLER_DEPENDENT in alone[0][1]
    assert codes(tmp_path, "utils/metrics.py") == []  # its one caller runs under inference mode
    assert codes(tmp_path, "val.py") == []  # `@smart_inference_mode()` turns grad off as torch's own do
    proof = run_script(tmp_path, "val.py")
    assert proof.returncode == 0, proof.stderr


@pytest.mark.parametrize(("imported", "decorator"), [
    ("from utils import torch_utils", "torch_utils.smart_inference_mode"),
    ("import utils.torch_utils as tu", "tu.smart_inference_mode"),
    ("from utils.torch_utils import smart_inference_mode as quiet", "quiet"),
])
def test_a_project_decorator_turns_grad_off_however_it_is_imported(tmp_path: Path, imported: str,
                                                                   decorator: str) -> None:
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "utils/__init__.py": "", "utils/torch_utils.py": SMART,
                     "val.py": f"""
        import torch
        from models import Net
        {imported}


        @{decorator}()
        def run():
            print(Net()(torch.ones(1, 3)).numpy())


        run()
    """})
    assert codes(tmp_path, "val.py") == []
    assert run_script(tmp_path, "val.py").returncode == 0
    loud = tmp_path / "val.py"
    loud.write_text(loud.read_text().replace(f"@{decorator}()\n", ""))
    assert [code[:6] for _, code in codes(tmp_path, "val.py")] == ["DET101"]
    assert GRAD_ERROR in run_script(tmp_path, "val.py").stderr


AVERAGER = """
    import torch


    class Averager:
        def __init__(self):
            self.total = 0.0

        def add(self, values):
            for value in values:
                self.total += float(value.data.sum())
"""


@pytest.mark.parametrize(("passed", "expected"), [
    ("net.parameters()", ["DET103"]),  # the parameters of a layer: `.data` of tensors
    ("[Box(1.0), Box(2.0)]", []),  # records whose `.data` is their own field, not Tensor.data
])
def test_a_method_is_judged_by_what_calls_in_other_files_pass(tmp_path: Path, passed: str,
                                                              expected: list[str]) -> None:
    write(tmp_path, {"setup.py": "", "meters.py": AVERAGER, "train.py": f"""
        import torch
        from meters import Averager



        class Box:
            def __init__(self, value):
                self.data = torch.tensor(value)


        net = torch.nn.Linear(2, 1)
        meter = Averager()
        meter.add({passed})
        print(meter.total)
    """})
    assert [message[:6] for _, message in codes(tmp_path, "meters.py")] == expected
    assert codes(tmp_path, "meters.py", with_place=False) == []  # the file alone does not know the values
    run = run_script(tmp_path, "train.py")
    assert run.returncode == 0, run.stderr


def test_a_helper_with_a_grad_caller_elsewhere_stays_flagged(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "metrics.py": METRICS, "train.py": """
        import torch
        from metrics import to_array
        from models import Net

        with torch.no_grad():
            quiet = to_array(Net()(torch.ones(1, 3)))
        print(to_array(Net()(torch.ones(1, 3))))
    """})
    found = codes(tmp_path, "metrics.py")
    # DET101, not DET111: train.py's exports (analysis/exports.py) say what this call passes, a
    # module's output with grad on, so the claim is the file's, not an unknown caller's.
    assert len(found) == 1 and found[0][1].startswith("DET101")
    proof = run_script(tmp_path, "train.py")
    assert GRAD_ERROR in proof.stderr


ENGINE = """
    import torch


    class Engine:
        def __init__(self, config):
            self.config = config

        def evaluate(self, evaluate_data):
            with torch.no_grad():
                users = evaluate_data[0]
                if self.config["use_cuda"]:
                    users = users.cuda()
                return users.data.view(-1).tolist()
"""


@pytest.mark.parametrize("data", ["sample_generator.evaluate_data", "[torch.LongTensor([1, 2])]"])
def test_an_inherited_method_is_judged_by_calls_on_subclass_instances_of_a_script(tmp_path: Path, data: str) -> None:
    # neural-collaborative-filtering: train.py (a script with no main guard) calls `evaluate` on a
    # GMFEngine, which inherits it from Engine, and passes what a property of data.py returns.
    write(tmp_path, {"setup.py": "", "engine.py": ENGINE, "gmf.py": """
        from engine import Engine


        class GMFEngine(Engine):
            def __init__(self, config):
                super().__init__(config)
    """, "data.py": """
        import torch


        class SampleGenerator:
            @property
            def evaluate_data(self):
                return [torch.LongTensor([1, 2]), torch.LongTensor([3])]
    """, "train.py": f"""
        import torch
        from data import SampleGenerator
        from gmf import GMFEngine

        sample_generator = SampleGenerator()
        engine = GMFEngine({{"use_cuda": False}})
        for epoch in range(2):
            print(engine.evaluate({data}))
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "engine.py")] == [(13, "DET103")]
    assert run_script(tmp_path, "train.py").returncode == 0  # `.data` of a tensor: it runs, legacy


def test_a_cycle_of_bases_across_files_ends(tmp_path: Path) -> None:
    # Not valid Python at run time, but a file being edited can say it: the method lookups and the
    # callers index's search for heirs must end.
    write(tmp_path, {"setup.py": "", "a.py": """
        import torch
        from b import B


        class A(B):
            def show(self, t):
                return t.data
    """, "b.py": """
        from a import A


        class B(A):
            pass
    """, "train.py": """
        import torch
        from b import B

        B().show(torch.ones(2))
        B().missing(torch.ones(2))
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "a.py")] == [(7, "DET103")]
    assert codes(tmp_path, "train.py") == []


def test_a_module_class_whose_nn_comes_from_a_star_import_is_a_module(tmp_path: Path) -> None:
    # NER-pytorch: model.py has `from utils import *` and no `nn` of its own (utils.py imports
    # `torch.nn as nn`); train.py's `from loader import *` binds `model` to the module model.py
    # before `model = Tagger()` rebinds it, so the method is found among the project's module
    # classes, which must count Tagger.
    write(tmp_path, {"setup.py": "", "utils.py": """
        import numpy as np
        import torch.nn as nn
    """, "loader.py": """
        import os
        import model
    """, "model.py": """
        import torch
        from utils import *


        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def neg_log_likelihood(self, x):
                return self.fc(x).sum()
    """, "train.py": """
        import torch
        from loader import *
        from model import Tagger

        use_gpu = torch.cuda.is_available()
        model = Tagger()
        for epoch in range(2):
            x = torch.ones(1, 3)
            if use_gpu:
                loss = model.neg_log_likelihood(x.cuda())
            else:
                loss = model.neg_log_likelihood(x)
            print(loss.data)
            loss.backward()
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "train.py")] == [(13, "DET103")]
    assert run_script(tmp_path, "train.py").returncode == 0


LOSSES = """
    import torch
    from torch import nn


    class PairLoss(nn.Module):
        def forward(self, input, target):
            self.est = [d[:, :1] for d in input]
            return sum(((d - target) ** 2).mean() for d in input)
"""


@pytest.mark.parametrize(("computed", "expected"), [("", [(11, "DET102")]),
                                                     ("with torch.no_grad():\n            ", [])])
def test_a_field_another_files_module_computes_from_its_input_holds_what_the_file_passed(
        tmp_path: Path, computed: str, expected: list[tuple[int, str]]) -> None:
    # MonoDepth-PyTorch: the loss keeps the model's disparities in fields its forward computes
    # from its input; the trainer shows them with `.cpu().detach()`.
    write(tmp_path, {"setup.py": "", "losses.py": LOSSES, "train.py": f"""
        import torch
        from torch import nn
        from losses import PairLoss

        model = nn.Linear(3, 2)
        loss_function = PairLoss()
        x = torch.ones(2, 4, 3)
        target = torch.zeros(4, 2)
        {computed}out = model(x)
        loss = loss_function(out, target)
        print(loss_function.est[0].cpu().detach().numpy())
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "train.py")] == expected
    assert run_script(tmp_path, "train.py").returncode == 0


def test_a_property_of_another_files_class_reads_its_getter(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "data.py": """
        import torch


        class Source:
            @property
            def weights(self):
                return torch.randn(3, requires_grad=True)

            def plain(self):
                return torch.randn(3, requires_grad=True)
    """, "use.py": """
        from data import Source

        source = Source()
        source.weights.numpy()
        source.plain.numpy()
    """})
    # the property gives its getter's value; a method read without a call is a bound method
    assert [(line, message[:6]) for line, message in codes(tmp_path, "use.py")] == [(4, "DET101")]
    assert GRAD_ERROR in run_script(tmp_path, "use.py").stderr


def test_an_argument_computed_under_no_grad_makes_its_parameter_clean(tmp_path: Path) -> None:
    # pytorch/examples fast_neural_style: `output` is computed under no_grad, passed after it.
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "utils.py": """
        import torch


        def save(name, data):
            return name, data.clone().numpy()
    """, "main.py": """
        import torch
        import utils
        from models import Net


        def run_elsewhere(image):
            return torch.from_numpy(image.numpy() * 2)


        def stylize(name, elsewhere=False):
            if elsewhere:
                output = run_elsewhere(torch.ones(1, 3))
            else:
                with torch.no_grad():
                    output = Net()(torch.ones(1, 3))
            utils.save(name, output[0])
            held = Net()(torch.ones(1, 3))
            return held


        stylize("x")
        stylize("y", elsewhere=True)
    """})
    assert codes(tmp_path, "utils.py") == []
    assert run_script(tmp_path, "main.py").returncode == 0
    write(tmp_path, {"main.py": """
        import torch
        import utils
        from models import Net

        utils.save("x", Net()(torch.ones(1, 3)))
    """})
    forget_projects()
    assert len(codes(tmp_path, "utils.py")) == 1  # a value computed with grad on: flagged as before
    assert GRAD_ERROR in run_script(tmp_path, "main.py").stderr


def test_a_helper_nothing_calls_stays_caller_dependent(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "metrics.py": METRICS, "other.py": "import metrics\n"})
    found = codes(tmp_path, "metrics.py")
    assert len(found) == 1 and CALLER_DEPENDENT in found[0][1]


def test_callers_that_only_run_under_no_grad_callers_count_as_no_grad(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "metrics.py": METRICS, "steps.py": """
        from metrics import to_array


        def report(out):
            return to_array(out)
    """, "main.py": """
        import torch
        from models import Net
        from steps import report

        with torch.no_grad():
            print(report(Net()(torch.ones(1, 3))))
    """})
    assert codes(tmp_path, "metrics.py") == []
    assert run_script(tmp_path, "main.py").returncode == 0


def test_relative_imports_in_a_package(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/models.py": MODELS,
                     "pkg/train.py": TRAIN.replace("from models import Net", "from .models import Net")})
    assert [line for line, _ in codes(tmp_path, "pkg/train.py")] == [6]
    proof = subprocess.run([sys.executable, "-m", "pkg.train"], cwd=tmp_path, capture_output=True, text=True, check=False,
                           timeout=120)
    assert GRAD_ERROR in proof.stderr


def test_a_src_layout(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "", "src/mypkg/__init__.py": "", "src/mypkg/models.py": MODELS,
                     "scripts/train.py": TRAIN.replace("from models import Net", "from mypkg.models import Net")})
    assert find_root(tmp_path / "scripts" / "train.py") == tmp_path.resolve()
    assert [line for line, _ in codes(tmp_path, "scripts/train.py")] == [6]
    proof = run_script(tmp_path / "src", "../scripts/train.py")
    assert GRAD_ERROR in proof.stderr


def test_without_a_marker_the_root_is_where_the_package_is_imported_from(tmp_path: Path) -> None:
    if any((folder / marker).exists() for folder in tmp_path.resolve().parents for marker in project_module.ROOT_MARKERS):
        pytest.skip("a project marker above the temporary folder decides the root")
    write(tmp_path, {"models/__init__.py": "", "models/layers/__init__.py": "", "models/layers/net.py": MODELS,
                     "train.py": TRAIN.replace("from models import Net", "from models.layers.net import Net"),
                     "notes/scratch.py": "x = 1\n"})
    root = tmp_path.resolve()
    assert find_root(tmp_path / "models" / "layers" / "net.py") == root  # above every package folder
    assert find_root(tmp_path / "train.py") == root
    assert find_root(tmp_path / "notes" / "scratch.py") == root / "notes"  # no package: its own folder
    assert [line for line, _ in codes(tmp_path, "train.py")] == [6]
    assert GRAD_ERROR in run_script(tmp_path, "train.py").stderr


def test_a_marker_less_notebook_is_placed_by_its_own_imports(tmp_path: Path) -> None:
    """NODE: no project marker, `notebooks/*.ipynb` only (no `.py` beside them) importing `lib` from
    the folder above. A notebook's code cells place it as a module's imports do, so the root is
    the repository's top and `lib.Trainer` is the project's class."""
    if any((folder / marker).exists() for folder in tmp_path.resolve().parents for marker in project_module.ROOT_MARKERS):
        pytest.skip("a project marker above the temporary folder decides the root")
    cell = textwrap.dedent(NODE_NOTEBOOK).lstrip("\n")
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                           "source": cell.splitlines(keepends=True)}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write(tmp_path, {"lib/__init__.py": "from .trainer import *\n", "lib/trainer.py": NODE_TRAINER})
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "run.ipynb").write_text(json.dumps(notebook))
    assert find_root(tmp_path / "notebooks" / "run.ipynb") == tmp_path.resolve()
    assert [line for line, _ in codes_of_notebook(tmp_path / "notebooks" / "run.ipynb")] == [15]  # after the cell marker


def codes_of_notebook(path: Path) -> list[tuple[int, str]]:
    from flake8_detach.sources.notebooks import read_notebook

    return [(d.line, d.message) for d in analyze(read_notebook(path).source, PREVIEW, place=Place(path, None)).diagnostics]


def test_a_cycle_between_two_modules(tmp_path: Path) -> None:
    write(tmp_path, {".git/HEAD": "", "a.py": """
        import torch
        import b


        class A(torch.nn.Module):
            def forward(self, x):
                return x * 2


        class Loop(b.Loop2):
            pass
    """, "b.py": """
        import torch
        import a


        class B(a.A):
            pass


        class Loop2(a.Loop):
            pass
    """, "train.py": """
        import torch
        from b import B, Loop2

        w = torch.ones(2, requires_grad=True)
        print(Loop2)
        print(B()(w).numpy())
    """})
    assert [line for line, _ in codes(tmp_path, "train.py")] == [6]
    view = project_module.project_view(tmp_path / "train.py")
    assert view is not None and not view.is_module_class("b.Loop2")  # the cycle ends, undecided: no module
    proof = run_script(tmp_path, "train.py")
    assert proof.returncode != 0  # the class cycle itself fails to import; B alone is the claim
    write(tmp_path, {"b.py": "import a\n\n\nclass B(a.A):\n    pass\n", "a.py": """
        import torch


        class A(torch.nn.Module):
            def forward(self, x):
                return x * 2
    """, "train.py": """
        import torch
        from b import B

        w = torch.ones(2, requires_grad=True)
        print(B()(w).numpy())
    """})
    assert GRAD_ERROR in run_script(tmp_path, "train.py").stderr


def test_summaries_are_cached_and_an_edit_invalidates_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "train.py": TRAIN})
    assert [line for line, _ in codes(tmp_path, "train.py", cache)] == [6]
    # The folder keeps exports too (asked for by `Net()`: whether the class holds parameters).
    stored = sorted((cache / project_module.SUMMARY_FOLDER).rglob("*.json"))
    assert sum(1 for path in stored if "imports" in json.loads(path.read_text())) == 2  # train.py's, models.py's
    forget_projects()  # a new process: only the disk is left

    def refuse(source: str | bytes) -> None:
        raise AssertionError("a summary of unchanged text was computed again")

    monkeypatch.setattr(project_module, "summarise", refuse)
    assert [line for line, _ in codes(tmp_path, "train.py", cache)] == [6]
    monkeypatch.setattr(project_module, "summarise", summarise)
    forget_projects()
    write(tmp_path, {"models.py": MODELS.replace("nn.Module", "object").replace("super().__init__()", "pass")})
    assert codes(tmp_path, "train.py", cache) == []  # Net is no module any more
    # The `ast` summaries (the folder also keeps exports, asked for now by `model(...)` of a
    # plain class: its `__call__`): the two before and the edited file's new one.
    stored = sorted((cache / project_module.SUMMARY_FOLDER).rglob("*.json"))
    assert sum(1 for path in stored if "imports" in json.loads(path.read_text())) == 3


def test_library_model_loaders_give_modules() -> None:
    source = textwrap.dedent("""
        import torch
        from transformers import AutoModel, AutoTokenizer

        model = torch.load("model.pt", weights_only=False)
        print(model(torch.ones(1, 3)).numpy())
        scripted = torch.jit.load("model.ts")
        print(scripted(torch.ones(1, 3)).numpy())
        bert = AutoModel.from_pretrained("bert-base-uncased")
        print(bert(torch.ones(1, 3)).numpy())
        tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
        print(tokenizer("a text").numpy())
    """)
    assert [(d.line, d.code) for d in analyze(source).diagnostics] == [(6, "DET101"), (8, "DET101"), (10, "DET101")]


def test_torch_load_of_a_saved_module_gives_outputs_that_require_grad(tmp_path: Path) -> None:
    import torch

    torch.save(torch.nn.Linear(3, 2), tmp_path / "model.pt")
    torch.jit.save(torch.jit.script(torch.nn.Linear(3, 2)), tmp_path / "model.ts")
    for loaded in (torch.load(tmp_path / "model.pt", weights_only=False), torch.jit.load(tmp_path / "model.ts")):
        with pytest.raises(RuntimeError, match="requires grad"):
            loaded(torch.ones(1, 3)).numpy()


def test_the_fronts_pass_the_path(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "train.py": TRAIN})
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    check = subprocess.run([sys.executable, "-m", "flake8_detach", "check", "--no-cache", "train.py"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, check=False, timeout=120)
    assert "train.py:6:11: DET101" in check.stdout, check.stdout + check.stderr
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "DET", "train.py"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert "train.py:6:11: DET101" in flake8.stdout, flake8.stdout + flake8.stderr
    stdin = subprocess.run([sys.executable, "-m", "flake8_detach", "check", "--no-cache", "-"], cwd=tmp_path, env=env,
                           input=(tmp_path / "train.py").read_text(), capture_output=True, text=True, check=False, timeout=120)
    assert "DET101" not in stdin.stdout  # standard input has no place: the file alone, as before


def test_check_results_cache_follows_an_edit_to_an_imported_module(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project, {"setup.py": "", "models.py": MODELS, "train.py": TRAIN})
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    command = [sys.executable, "-m", "flake8_detach", "check", "--cache-dir", str(tmp_path / "cache"), "train.py"]

    def check() -> str:
        return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, check=False,
                              timeout=120).stdout

    assert "train.py:6:11: DET101" in check()
    assert "train.py:6:11: DET101" in check()  # from the cache
    assert list((tmp_path / "cache").rglob(f"{project_module.SUMMARY_FOLDER}/*/*.json"))
    write(project, {"models.py": MODELS.replace("nn.Module", "object").replace("super().__init__()", "pass")})
    assert "DET101" not in check()  # train.py's own bytes did not change; its project did
    fix = subprocess.run([sys.executable, "-m", "flake8_detach", "fix", "--no-cache", "--diff", "train.py"],
                         cwd=project, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert ".detach()" not in fix.stdout
    write(project, {"models.py": MODELS})
    fix = subprocess.run([sys.executable, "-m", "flake8_detach", "fix", "--no-cache", "--diff", "train.py"],
                         cwd=project, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert "+print(out.detach().numpy())" in fix.stdout, fix.stdout + fix.stderr


def test_the_language_server_reads_the_project_of_a_file_uri(tmp_path: Path) -> None:
    pytest.importorskip("pygls")
    from flake8_detach.config import Config
    from flake8_detach.lsp.server import DetachLanguageServer

    write(tmp_path, {"setup.py": "", "models.py": MODELS, "train.py": TRAIN})
    source = (tmp_path / "train.py").read_text()
    on_disk = DetachLanguageServer.check((tmp_path / "train.py").as_uri(), source, Config(), tmp_path)
    assert [(d.line, d.code) for d in on_disk.diagnostics] == [(6, "DET101")]
    untitled = DetachLanguageServer.check("untitled:Untitled-1", source, Config(), None)
    assert untitled.diagnostics == []  # no path: the buffer alone, as before


def test_a_notebook_beside_the_project_reads_it(tmp_path: Path) -> None:
    import json

    write(tmp_path, {"setup.py": "", "models.py": MODELS})
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": textwrap.dedent(TRAIN).lstrip("\n")}]
    (tmp_path / "explore.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                        "nbformat_minor": 5}))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    check = subprocess.run([sys.executable, "-m", "flake8_detach", "check", "--no-cache", "explore.ipynb"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert "DET101" in check.stdout, check.stdout + check.stderr


def test_a_device_constant_of_another_module_may_be_a_gpu(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "config.py": """
        import torch
        DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        CPU = torch.device("cpu")
    """, "settings.py": "from config import DEVICE\n", "train.py": """
        import torch
        import config
        from settings import DEVICE  # re-exported
        from config import CPU

        a = torch.ones(2).to(DEVICE)
        a.numpy()
        b = torch.ones(2).to(config.DEVICE)
        b.numpy()
        c = torch.ones(2).to(CPU)
        c.numpy()
    """})
    found = codes(tmp_path, "train.py")
    assert [line for line, message in found if message.startswith("DET104")] == [7, 9]
    assert codes(tmp_path, "train.py", with_place=False) == []  # the file alone does not know DEVICE


def test_what_torch_load_gives_is_a_model_only_where_it_is_called(tmp_path: Path) -> None:
    """`torch.load` gives whatever was pickled; DETR's plot_utils reads evaluation arrays with it."""
    import torch

    torch.save({"precision": torch.ones(2, 3)}, tmp_path / "eval.pth")
    source = textwrap.dedent("""
        import torch
        import matplotlib.pyplot as plt
        data = torch.load(PATH)
        precision = data["precision"][0, :]
        plt.plot(precision.numpy())
        model = torch.load(MODEL, weights_only=False)
        model.eval()
        out = model(torch.ones(1, 3))
        out.numpy()
    """)
    found = [(d.line, d.code) for d in analyze(source).diagnostics]
    assert found == [(10, "DET101")]
    torch.save(torch.nn.Linear(3, 2), tmp_path / "model.pt")
    namespace = {"PATH": tmp_path / "eval.pth", "MODEL": tmp_path / "model.pt"}
    with pytest.raises(RuntimeError, match="requires grad") as raised:
        # The checkpoint's lines run; the model's output raises.
        runnable = source.replace("matplotlib.pyplot as plt", "builtins as plt").replace("plt.plot", "plt.print")
        exec(compile(runnable, "case", "exec"), namespace)  # noqa: S102
    assert raised.traceback[-1].lineno + 1 == 10  # pytest counts lines from 0


def _notebook(path: Path, *sources: str) -> None:
    import json

    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": textwrap.dedent(source).lstrip("\n")} for source in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


def test_a_package_star_re_export_names_the_class(tmp_path: Path) -> None:
    """`from base import Trainer` where base/__init__.py says `from .trainer import *`."""
    write(tmp_path, {"setup.py": "", "models.py": MODELS, "base/__init__.py": "from .trainer import *\n",
                     "base/trainer.py": """
        import torch
        from models import Net


        class Trainer:
            def __init__(self):
                self.model = Net()


        def _private():
            return Net()
    """, "train.py": """
        import torch
        from base import Trainer


        class Runner(Trainer):
            def step(self):
                return self.model(torch.ones(1, 3)).numpy()


        Runner().step()
    """})
    found = codes(tmp_path, "train.py")
    assert [line for line, message in found if message.startswith("DET101")] == [7]
    proof = run_script(tmp_path, "train.py")
    assert GRAD_ERROR in proof.stderr
    # A private name is not star-exported, and a star import of a module that lacks the name binds nothing.
    view = project_module.project_view(tmp_path / "train.py")
    assert view is not None
    project = view.project
    assert project.definition(tmp_path / "train.py", "base.Trainer") == (tmp_path / "base/trainer.py", "Trainer")
    assert project.definition(tmp_path / "train.py", "base.Missing") is None
    assert project.definition(tmp_path / "train.py", "base._private") is None


def test_notebook_calls_judge_a_helper_of_the_project(tmp_path: Path) -> None:
    """A helper of `lib.py` that only notebooks call is judged by what they pass."""
    write(tmp_path, {"setup.py": "", "lib.py": """
        import torch


        def show(x):
            return x.numpy()
    """})
    assert CALLER_DEPENDENT in codes(tmp_path, "lib.py")[0][1]  # no caller yet: it depends on the caller
    _notebook(tmp_path / "explore.ipynb", "import torch\nfrom lib import show\n",
              "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "show(torch.ones(3).to(device))\n")
    forget_projects()
    found = codes(tmp_path, "lib.py")
    assert [message[:6] for _, message in found] == ["DET104"]  # the notebook passes a tensor that may be on a GPU
    _notebook(tmp_path / "explore.ipynb", "import torch\nfrom lib import show\n",
              "net = torch.nn.Linear(3, 3)\nwith torch.no_grad():\n    out = net(torch.ones(3))\nshow(out)\n")
    forget_projects()
    assert codes(tmp_path, "lib.py") == []  # every caller passes a value computed under no_grad
    _notebook(tmp_path / "explore.ipynb", "import torch\nfrom lib import show\n",
              "net = torch.nn.Linear(3, 3)\nshow(net(torch.ones(3)))\n")
    forget_projects()
    found = codes(tmp_path, "lib.py")
    assert [message[:6] for _, message in found] == ["DET101"]


def test_a_notebook_that_is_not_json_is_skipped_by_the_index(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "lib.py": METRICS, "broken.ipynb": "{not json"})
    found = codes(tmp_path, "lib.py")
    assert len(found) == 1 and CALLER_DEPENDENT in found[0][1]


def test_without_a_marker_a_file_importing_only_libraries_is_rooted_where_its_neighbours_are(tmp_path: Path) -> None:
    """`train/metrics.py` imports only torch; `train/run.py` beside it imports `train.metrics` from
    the tree's top (no `__init__.py`, no marker): metrics.py is rooted there too, so run.py's call
    judges its helper."""
    if any((folder / marker).exists() for folder in tmp_path.resolve().parents for marker in project_module.ROOT_MARKERS):
        pytest.skip("a project marker above the temporary folder decides the root")
    write(tmp_path, {"train/metrics.py": """
        import torch


        def accuracy(scores):
            return torch.softmax(scores, 1).cpu().detach()
    """, "train/run.py": """
        import torch
        from train.metrics import accuracy as score

        net = torch.nn.Linear(3, 2)
        print(score(net(torch.ones(1, 3))))
    """, "notes/scratch.py": "import json\n"})
    root = tmp_path.resolve()
    assert find_root(tmp_path / "train" / "metrics.py") == root
    assert find_root(tmp_path / "notes" / "scratch.py") == root / "notes"  # nothing beside it places it
    assert [(line, message[:6]) for line, message in codes(tmp_path, "train/metrics.py")] == [(5, "DET102")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_the_project_does_not_block_the_index(tmp_path: Path) -> None:
    """The index reads regular files only: a FIFO named like a module or a notebook is skipped."""
    import threading

    write(tmp_path, {"setup.py": "", "lib.py": METRICS})
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / "pipe.ipynb")
    found: list[list[tuple[int, str]]] = []
    worker = threading.Thread(target=lambda: found.append(codes(tmp_path, "lib.py")), daemon=True)
    worker.start()
    worker.join(60)
    assert found and len(found[0]) == 1 and CALLER_DEPENDENT in found[0][0][1]


def test_the_flake8_front_summarises_the_linted_file_from_its_own_tree(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """flake8 hands the plugin the file's `ast` tree: a cold run summarises the linted file from it
    instead of parsing the text again, and the summary is the one a parse gives."""
    from flake8_detach.engine import witnessed_report

    write(tmp_path, {"setup.py": "", "models.py": MODELS, "train.py": TRAIN})
    source = (tmp_path / "train.py").read_text()
    tree = ast.parse(source)
    parsed: list[object] = []
    real_parse = ast.parse

    def counting_parse(text: str | bytes, *args: object, **kwargs: object) -> ast.Module:
        parsed.append(text)
        return real_parse(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(project_module.ast, "parse", counting_parse)
    found, _ = witnessed_report(source, PREVIEW, tree, Place(tmp_path / "train.py", tmp_path / "cache"))
    assert [d.line for d in found] == [6]
    assert source.encode() not in parsed and source not in parsed  # models.py is parsed, train.py is not
    monkeypatch.setattr(project_module.ast, "parse", real_parse)
    view = project_view(tmp_path / "train.py", None, tmp_path / "cache")
    assert view is not None
    assert view.project.summary((tmp_path / "train.py").resolve()) == project_module.SummaryStore(None).summary_of(
        source.encode())


def test_stored_summaries_are_tuples_the_cycle_collector_stops_walking(tmp_path: Path) -> None:
    """A summary lives as long as the run and holds a record per call site (100,000 on timm):
    kept as lists, each of flake8's full collections walked them all. The store keeps them as
    tuples of strings, which Python stops tracking, with the same content as `summarise`."""
    import gc

    from flake8_detach.analysis.project import SummaryStore

    data = b"import torch\nfrom helpers import scale\n\n\ndef run(x):\n    with torch.no_grad():\n        return scale(x, 2)\n"
    store = SummaryStore(tmp_path)
    summary = store.summary_of(data)
    assert summary is not None

    def lists(value: object) -> int:
        if isinstance(value, list):
            return 1 + sum(map(lists, value))
        if isinstance(value, (tuple, dict)):
            return sum(map(lists, value.values() if isinstance(value, dict) else value))
        return 0

    assert lists(summary) == 0 and summary["calls"]
    for _ in range(5):  # a pass untracks a tuple whose items are untracked already: one level a pass
        gc.collect()
    assert not any(gc.is_tracked(call) for call in summary["calls"])
    from_disk = SummaryStore(tmp_path).summary_of(data)
    assert from_disk is not None and lists(from_disk) == 0
    assert {k: v for k, v in from_disk.items() if k != "key"} == summary  # read back from disk: the same
    fresh = summarise(data)
    assert fresh is not None and summary["calls"] == tuple(
        tuple(tuple(tuple(part) if isinstance(part, list) else part for part in item) if isinstance(item, list)
              else item for item in call) for call in fresh["calls"])


def test_a_star_import_of_a_project_module_brings_torch_and_its_names(tmp_path: Path) -> None:
    """`from models import *` with no import of torch: torch, `Net` and the helpers come from
    models.py, as Python binds them; calls there judge models.py's helpers."""
    write(tmp_path, {"setup.py": "", "models.py": """
        import torch
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(3, 3))])

            def forward(self, x):
                return self.blocks[0](x)


        def reset(self):
            for block in self.blocks:
                block[0].bias.data.zero_()
    """, "train.py": """
        from models import *

        net = Net()
        reset(net)
        print(net(torch.ones(1, 3)).numpy())
    """})
    found = codes(tmp_path, "train.py")
    assert [line for line, message in found if message.startswith("DET101")] == [5]
    assert [line for line, message in codes(tmp_path, "models.py") if message.startswith("DET103")] == [16]
    proof = run_script(tmp_path, "train.py")
    assert GRAD_ERROR in proof.stderr
    view = project_module.project_view(tmp_path / "train.py")
    assert view is not None and view.star_names()["nn"] == "torch.nn" and view.star_names()["Net"] == "models.Net"


LIGHTNING_LIKE = """
    import torch
    from torch import nn


    class LightningModule(nn.Module):
        @classmethod
        def load_from_checkpoint(cls, path):
            return cls()
"""


def test_a_model_loaded_from_a_checkpoint_is_an_instance_of_its_class(tmp_path: Path) -> None:
    """`ScoreModel.load_from_checkpoint(path)` (a library classmethod) gives a ScoreModel: its
    methods are read from models.py, not taken for calls of the model; `.eval()` keeps the class."""
    project = tmp_path / "project"
    write(tmp_path, {"lib/fakelightning.py": LIGHTNING_LIKE, "project/setup.py": "", "project/models.py": """
        import torch
        from torch import nn
        from fakelightning import LightningModule


        class ScoreModel(LightningModule):
            def __init__(self):
                super().__init__()
                self.net = nn.Linear(2, 2)
                self.sde = make_sde()

            def to_audio(self, spec):
                return spec * 2

            def forward(self, x):
                return self.net(x)


        def make_sde():
            return object()
    """, "project/enhance.py": """
        import torch
        from models import ScoreModel

        model = ScoreModel.load_from_checkpoint("model.ckpt")
        model.eval()
        print(model.to_audio(torch.ones(2)).numpy(), model.sde)
        print(model(torch.ones(2)).numpy())
    """})
    found = codes(project, "enhance.py")
    assert [line for line, message in found if message.startswith("DET101")] == [7]
    env = {**os.environ, "PYTHONPATH": f"{project}{os.pathsep}{tmp_path / 'lib'}"}
    proof = subprocess.run([sys.executable, "enhance.py"], cwd=project, env=env, capture_output=True, text=True,
                           check=False, timeout=120)
    assert GRAD_ERROR in proof.stderr and "[2. 2.]" in proof.stdout  # line 6 ran, line 7 raised


def test_a_field_the_class_sets_to_an_unknown_value_is_no_parameter(tmp_path: Path) -> None:
    """`net.scale` of another file's module class, set there from a call the analysis cannot
    read: unknown to the importer, not a parameter it guesses (exports keep every field)."""
    write(tmp_path, {"setup.py": "", "models.py": """
        import math

        import torch
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = math.sqrt(2.0)

            def forward(self, x):
                return x * self.scale
    """, "train.py": """
        import torch
        from models import Net

        net = Net()
        print(torch.as_tensor(net.scale).numpy())
    """})
    assert codes(tmp_path, "train.py") == []
    assert run_script(tmp_path, "train.py").returncode == 0


def test_a_base_class_in_a_file_without_torch_tells_its_fields(tmp_path: Path) -> None:
    """`self.chunk_length` set by a base class whose file does not import torch (megatron's retro
    attention): its value is read from that file's exports, not guessed a parameter of the module."""
    write(tmp_path, {"setup.py": "", "base.py": """
        class Configured:
            def __init__(self, config):
                self.chunk_length = config.chunk_length
    """, "attention.py": """
        import numpy as np
        import torch
        from torch import nn

        from base import Configured


        class Attention(Configured, nn.Module):
            def __init__(self, config):
                Configured.__init__(self, config)
                nn.Module.__init__(self)

            def forward(self, hidden):
                length, width = hidden.shape
                chunks = int(np.ceil(length / self.chunk_length))
                return hidden.reshape(chunks, -1, width)


        class Config:
            chunk_length = 2


        print(Attention(Config())(torch.ones(4, 3)).shape)
    """})
    assert codes(tmp_path, "attention.py") == []
    assert run_script(tmp_path, "attention.py").returncode == 0


def test_a_method_of_a_model_of_unknown_class_is_read_from_the_project_classes(tmp_path: Path) -> None:
    """`model.inference(x)` where `model` comes from a factory that picks a class by name: the
    project's module classes that define `inference` say what it returns (class hierarchy
    analysis), here a detached CPU tensor, not a call of the model."""
    write(tmp_path, {"setup.py": "", "models.py": """
        import torch
        from torch import nn


        class Base(nn.Module):
            def inference(self, x):
                with torch.no_grad():
                    return self.forward(x).cpu().detach()


        class Small(Base):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            def forward(self, x):
                return self.fc(x)


        MODELS = {"small": Small}


        def create(name):
            return MODELS[name]()
    """, "viz.py": """
        import torch


        def show(model):
            prediction = model.inference(torch.ones(1, 2))
            return prediction.numpy()
    """, "run.py": """
        import torch
        from models import create
        from viz import show

        device = "cuda" if torch.cuda.is_available() else "cpu"
        model = create("small")
        model.parameters()
        print(show(model.to(device)))
    """})
    assert codes(tmp_path, "viz.py") == []
    assert run_script(tmp_path, "run.py").returncode == 0


def test_without_a_marker_namespace_packages_are_rooted_where_their_imports_resolve(tmp_path: Path) -> None:
    """`model/graph/user.py` imports `model.graph.layers` and `base.run` from the tree's top, in
    folders without `__init__.py` (namespace packages): its root is that top, where Python runs it
    from, so the model class of another folder is known there."""
    if any((folder / marker).exists() for folder in tmp_path.resolve().parents for marker in project_module.ROOT_MARKERS):
        pytest.skip("a project marker above the temporary folder decides the root")
    write(tmp_path, {"model/graph/layers.py": MODELS, "base/run.py": "def steps():\n    return 2\n", "model/graph/user.py": """
        import torch
        from base.run import steps
        from model.graph.layers import Net

        net = Net()
        for _ in range(steps()):
            print(net(torch.ones(1, 3)).numpy())
    """, "notes/scratch.py": "import json\n"})
    root = tmp_path.resolve()
    assert find_root(tmp_path / "model" / "graph" / "user.py") == root
    assert find_root(tmp_path / "notes" / "scratch.py") == root / "notes"  # nothing of the tree imported
    assert [line for line, message in codes(tmp_path, "model/graph/user.py") if message.startswith("DET101")] == [7]
    assert GRAD_ERROR in run_script(tmp_path, "model/graph/user.py", cwd=tmp_path).stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_the_namespace_root_never_reads_a_fifo(tmp_path: Path) -> None:
    """Rooting a marker-less file reads its imports: a FIFO named like a module is refused, not
    read (opening it would wait for a writer forever)."""
    if any((folder / marker).exists() for folder in tmp_path.resolve().parents for marker in project_module.ROOT_MARKERS):
        pytest.skip("a project marker above the temporary folder decides the root")
    (tmp_path / "pkg").mkdir()
    os.mkfifo(tmp_path / "pkg" / "x.py")
    code = ("import sys; from pathlib import Path; from flake8_detach.analysis.project import find_root; "
            "print(find_root(Path(sys.argv[1])))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "pkg" / "x.py")], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == str((tmp_path / "pkg").resolve())


TORCHLESS_UTILS = """
    def normalize_image(x):
        top = float(x.max().cpu().data)
        return x / top


    def to_array(x):
        return x.numpy()


    def show(x):
        return x.numpy()
"""

TORCHLESS_TRAIN = """
    import torch
    from torch import nn
    from utils import *

    net = nn.Linear(3, 3)
    out = net(torch.ones(1, 3))
    print(normalize_image(out))
    print(to_array(torch.ones(2)))
"""


def test_a_file_without_torch_is_judged_by_what_its_project_passes(tmp_path: Path) -> None:
    """utils.py never imports torch, yet train.py passes its helper a module output: the `.data`
    there reads a tensor. Its second helper gets a tensor that needs no grad, and nothing calls
    its third: no claim (DET111's caller-dependent claim needs a file of torch code)."""
    write(tmp_path, {"setup.py": "", "utils.py": TORCHLESS_UTILS, "train.py": TORCHLESS_TRAIN})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "utils.py")] == [(2, "DET103")]
    assert codes(tmp_path, "utils.py", with_place=False) == []  # the file alone: nothing passes it tensors
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    check = subprocess.run([sys.executable, "-m", "flake8_detach", "check", "--no-cache", "utils.py"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, check=False, timeout=120)
    assert check.stdout.count("DET") == 1 and "utils.py:2:" in check.stdout, check.stdout + check.stderr
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "DET", "utils.py"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert flake8.stdout.count("DET103") == 1 and "utils.py:2:" in flake8.stdout, flake8.stdout + flake8.stderr
    fix = subprocess.run([sys.executable, "-m", "flake8_detach", "fix", "--no-cache", "--unsafe-fixes", "--diff",
                          "utils.py"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert "+    top = float(x.max().detach().cpu())" in fix.stdout, fix.stdout + fix.stderr
    write(tmp_path, {"train.py": TORCHLESS_TRAIN.replace("net(torch.ones(1, 3))", "Batch()").replace(
        "from utils import *", "from utils import *\n    class Batch:\n        data = None")})
    forget_projects()
    assert codes(tmp_path, "utils.py") == []  # what train.py passes now is no tensor


def test_methods_of_a_field_built_in_init_are_judged_by_the_calls_through_it(tmp_path: Path) -> None:
    """`self.ema = Ema(self.model)` in `__init__`, `self.ema.restore(self.model.parameters())` in
    another method of another file, under `torch.no_grad()`: `restore`'s parameter holds the
    model's parameters, so `param.data` there reads a Parameter (DET103), grad off or not."""
    write(tmp_path, {"setup.py": "", "pkg/__init__.py": "", "pkg/ema.py": """
        import torch
        from torch import nn


        class Ema(nn.Module):
            def __init__(self, model):
                super().__init__()
                self.collected = []

            def store(self, parameters):
                self.collected = [p.clone() for p in parameters]

            def restore(self, parameters):
                for kept, param in zip(self.collected, parameters):
                    param.data.copy_(kept.data)
    """, "pkg/model.py": """
        import torch
        from torch import nn
        from pkg.ema import Ema


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = nn.Linear(2, 2)
                self.ema = Ema(self.model)

            @torch.no_grad()
            def swap(self):
                self.ema.store(self.model.parameters())
                self.ema.restore(self.model.parameters())
    """})
    assert [line for line, message in codes(tmp_path, "pkg/ema.py") if message.startswith("DET103")] == [15, 15]
    write(tmp_path, {"pkg/model.py": (tmp_path / "pkg/model.py").read_text().replace(
        "self.model.parameters())", "[])")})
    forget_projects()
    # The calls pass no tensor: `kept` (what `store` kept of them) is no longer taken for one;
    # `param.data.copy_(...)` still says by itself that `param` is a tensor wherever it runs.
    found = codes(tmp_path, "pkg/ema.py")
    assert [line for line, _ in found] == [15] and "in-place write" in found[0][1]


@pytest.mark.parametrize("built", ["load()", "Separator()"])
def test_a_freezing_method_of_another_files_class_freezes_the_model(tmp_path: Path, built: str) -> None:
    """`separator.freeze()` whose method (in models.py) sets requires_grad=False on all of `self`'s
    parameters, on a model of that class or of a class the file cannot tell (every project module
    class's `freeze` freezes): its output of an input without grad needs no detach, and neither do
    its attributes; without the call DET102 holds."""
    write(tmp_path, {"setup.py": "", "models.py": """
        import torch
        from torch import nn


        class Separator(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
                self.rate = 44100

            def forward(self, x):
                return self.fc(x)

            def freeze(self):
                for p in self.parameters():
                    p.requires_grad = False
                self.eval()


        def load():
            return Separator()
    """, "evaluate.py": f"""
        import torch
        from models import Separator, load

        separator = {built}
        separator.freeze()
        out = separator(torch.ones(2) * separator.rate)
        print(out.cpu().detach().numpy())
    """})
    assert codes(tmp_path, "evaluate.py") == []
    write(tmp_path, {"evaluate.py": (tmp_path / "evaluate.py").read_text().replace("separator.freeze()\n", "")})
    forget_projects()
    assert [message[:6] for _, message in codes(tmp_path, "evaluate.py")] == ["DET102"]


BASE_TRAINER = """
    class BaseTrainer:
        def __init__(self, config, model, criterion):
            self.config = config
            self.model = model
            self.criterion = criterion
"""


@pytest.mark.parametrize("call", ["super(Trainer, self).__init__(config, model, criterion)",
                                  "super().__init__(config, model=model, criterion=criterion)",
                                  "BaseTrainer.__init__(self, config, model, criterion)"])
def test_fields_a_base_class_of_another_file_stores_from_its_constructor(tmp_path: Path, call: str) -> None:
    """DBNet's trainer: `self.model = model` in `BaseTrainer.__init__` (base/base_trainer.py, a
    file without torch), reached by `super().__init__(config, model, criterion)` in a subclass of
    another file, which the script constructs with a module: `self.model(x)` requires grad there."""
    write(tmp_path, {"setup.py": "", "base/__init__.py": "", "base/base_trainer.py": BASE_TRAINER,
                     "trainer.py": f"""
        import torch
        from base.base_trainer import BaseTrainer


        class Trainer(BaseTrainer):
            def __init__(self, config, model, criterion):
                {call}
                self.inputs = torch.ones(2, 3)

            def train_epoch(self):
                preds = self.model(self.inputs)
                return preds.numpy()
    """, "train.py": """
        import torch
        from torch import nn

        from trainer import Trainer

        trainer = Trainer({}, nn.Linear(3, 1), nn.MSELoss())
        print(trainer.train_epoch())
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "trainer.py")] == [(12, "DET101")]
    assert GRAD_ERROR in run_script(tmp_path, "train.py").stderr
    # The safe twin: the script passes a frozen model; the field holds what the call passes.
    write(tmp_path, {"train.py": (tmp_path / "train.py").read_text().replace(
        "nn.Linear(3, 1)", "nn.Linear(3, 1).requires_grad_(False)")})
    forget_projects()
    assert codes(tmp_path, "trainer.py") == []
    assert run_script(tmp_path, "train.py").returncode == 0


def test_fields_an_instance_of_another_files_class_gets_from_its_constructor(tmp_path: Path) -> None:
    """`BaseTrainer({}, net, loss).model(x)`: the constructor of another file's class stores the
    module this file passes in `self.model`, so the instance's field is that module here."""
    write(tmp_path, {"setup.py": "", "base_trainer.py": BASE_TRAINER, "train.py": """
        import torch
        from torch import nn

        from base_trainer import BaseTrainer

        trainer = BaseTrainer({}, nn.Linear(3, 1), nn.MSELoss())
        out = trainer.model(torch.ones(3))
        print(out.numpy())
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "train.py")] == [(8, "DET101")]
    assert GRAD_ERROR in run_script(tmp_path, "train.py").stderr
    write(tmp_path, {"train.py": (tmp_path / "train.py").read_text().replace("nn.Linear(3, 1)", "nn.ReLU()")})
    forget_projects()
    assert codes(tmp_path, "train.py") == []
    assert run_script(tmp_path, "train.py").returncode == 0


SOLVER = """
    import torch
    from torch import nn


    class Solver:
        def __init__(self, loader):
            self.loader = loader
            self.model = nn.Linear(3, 1)
"""
ENTRY = """
    import torch

    from solver import Solver


    def main(rows):
        return Solver([torch.ones(3) * len(rows), torch.zeros(3)])
"""


def test_an_instance_another_files_function_returns_keeps_its_class(tmp_path: Path) -> None:
    """dagmm's notebook: `solver = main(config)` with `main` in main.py returning a `Solver` of
    solver.py. Its export names the class (exports.encode), so the instance's fields are read:
    `solver.model` is a module whose output requires grad; `solver.loader` holds what the
    project's one call of `Solver` passes (CPU tensors without grad), not "a caller's"."""
    write(tmp_path, {"setup.py": "", "solver.py": SOLVER, "main.py": ENTRY, "run.py": """
        import torch

        from main import main

        solver = main([1.0, 2.0])
        for row in solver.loader:
            print(row.numpy())
        print(solver.model(torch.ones(3)).numpy())
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "run.py")] == [(8, "DET101")]
    assert GRAD_ERROR in run_script(tmp_path, "run.py").stderr
    write(tmp_path, {"run.py": (tmp_path / "run.py").read_text().replace(
        "print(solver.model(torch.ones(3)).numpy())", "print(solver.model(torch.ones(3)).detach().numpy())")})
    forget_projects()
    assert codes(tmp_path, "run.py") == []
    assert run_script(tmp_path, "run.py").returncode == 0


def test_an_instance_whose_class_has_callers_outside_keeps_its_fields_export(tmp_path: Path) -> None:
    """The same, where the class escapes (a table of factories another program may call): its
    loader holds what that program passes, so the field's export stands ("a caller's")."""
    write(tmp_path, {"setup.py": "", "solver.py": SOLVER, "main.py": ENTRY, "run.py": "from main import main\n"})
    solver = f"@{tmp_path / 'solver.py'}::Solver"
    view = project_view(tmp_path / "run.py")
    assert view is not None
    made = view.constructed_field(solver, "loader")
    assert made is not None and made.has(Flag.CONTAINER) and made.element().flags & Flag.TENSOR
    assert not made.has(Flag.UNKNOWN_ARG) and not made.element().has(Flag.UNKNOWN_ARG)
    write(tmp_path, {"main.py": ENTRY + "\n\nFACTORIES = {'solver': Solver}\n"})
    forget_projects()
    view = project_view(tmp_path / "run.py")
    assert view is not None and view.constructed_field(solver, "loader") is None
    assert view.member(solver, "loader", "fields") == Value(Flag.UNKNOWN_ARG, origin="loader of Solver")


def test_a_record_class_and_an_iterator_of_other_files(tmp_path: Path) -> None:
    """da-rnn: `DaRnnNet = collections.namedtuple(...)` in custom_types.py, built in train.py with
    the model's parts, whose `net.decoder(x)` is the decoder's output. Chinese-Text-Classification:
    `build_iterator` in utils.py returns a `DatasetIterater` whose `__next__` gives tensor batches,
    passed to `train` in another file (every call passes that class: the join keeps it)."""
    write(tmp_path, {"setup.py": "", "custom_types.py": """
        import collections

        Net = collections.namedtuple("Net", ["encoder", "decoder"])
    """, "utils.py": """
        import torch


        class Batches:
            def __init__(self, rows):
                self.rows, self.index = rows, 0

            def __next__(self):
                if self.index >= len(self.rows):
                    raise StopIteration
                self.index += 1
                return torch.ones(2), torch.tensor([self.index])

            def __iter__(self):
                return self


        def build_iterator(rows):
            return Batches(rows)
    """, "evaluate.py": """
        def train(batches):
            for x, labels in batches:
                print(labels.data)
    """, "run.py": """
        import torch
        from torch import nn

        from custom_types import Net
        from evaluate import train
        from utils import build_iterator

        if __name__ == "__main__":  # an entry point: its export reads what other files return
            net = Net(nn.Linear(2, 2), nn.Linear(2, 1))
            print(net.decoder(torch.ones(2)).cpu().data.numpy())
            train(build_iterator([[1], [2]]))
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "run.py")] == [(10, "DET103")]
    assert [(line, message[:6]) for line, message in codes(tmp_path, "evaluate.py")] == [(3, "DET103")]
    assert run_script(tmp_path, "run.py").returncode == 0  # `.data` hides what `.detach()` would say


def test_a_field_used_as_a_module_is_one_in_every_method(tmp_path: Path) -> None:
    """DBNet's trainer: `self.model` is a constructor argument a base class of another file stores,
    built by a factory that picks its class with `eval`, so only its use tells what it is:
    `self.model.train()` in one method and `self.model(batch["img"])` in another make it a module,
    and the batch a mapping whose tensors `batch[key] = value.to(device)` wrote."""
    write(tmp_path, {"setup.py": "", "base.py": BASE_TRAINER, "models.py": """
        from torch import nn


        def build(name):
            return eval(name)(3, 1)
    """, "trainer.py": """
        import torch

        from base import BaseTrainer


        class Trainer(BaseTrainer):
            def __init__(self, config, model, criterion, loader):
                super().__init__(config, model, criterion)
                self.loader = loader

            def train_epoch(self):
                self.model.train()
                for batch in self.loader:
                    for key, value in batch.items():
                        if isinstance(value, torch.Tensor):
                            batch[key] = value.to("cpu")
                    preds = self.model(batch["img"])
                    print(preds.numpy(), batch["mask"].numpy())
                    print(batch["mask"].data.sum())
    """, "train.py": """
        import torch

        from models import build
        from trainer import Trainer

        loader = [{"img": torch.ones(2, 3), "mask": torch.zeros(2, 1), "name": "a"}]
        Trainer({}, build("nn.Linear"), None, loader).train_epoch()
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "trainer.py")] == [(18, "DET101"), (19, "DET103")]
    assert GRAD_ERROR in run_script(tmp_path, "train.py").stderr


def test_a_method_only_one_project_class_defines_is_what_an_unknown_object_runs(tmp_path: Path) -> None:
    """tacotron2's `logger.log_validation(val_loss, model, y, y_pred, iteration)`, where `logger`
    is a parameter filled by a factory that may give None: only `Tacotron2Logger` defines
    `log_validation`, so its parameters get what the call passes (a model's output with grad)."""
    write(tmp_path, {"setup.py": "", "logger.py": """
        class Logger:
            def __init__(self, directory):
                self.directory = directory

            def log_validation(self, loss, y_pred):
                return y_pred.numpy()
    """, "train.py": """
        import torch
        from torch import nn

        from logger import Logger


        def prepare_logger(rank):
            return Logger("logs") if rank == 0 else None


        def validate(model, logger):
            y_pred = model(torch.ones(3))
            logger.log_validation(0.0, y_pred)


        validate(nn.Linear(3, 1), prepare_logger(0))
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "logger.py")] == [(6, "DET101")]
    assert GRAD_ERROR in run_script(tmp_path, "train.py").stderr
    # A second class defining the method: which one runs is not known, so nothing is said.
    write(tmp_path, {"other.py": "class Other:\n    def log_validation(self, loss, y_pred):\n        return None\n"})
    forget_projects()
    assert codes(tmp_path, "logger.py") == []


@pytest.mark.parametrize("added", [
    'sys.path.append("../lib")',
    'sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))',
    'sys.path.append(str(Path(__file__).resolve().parents[1] / "lib"))',
])
def test_a_folder_a_script_adds_to_sys_path_holds_its_imports(tmp_path: Path, added: str) -> None:
    """Research code imports its package through the path (`sys.path.append("../lib")`, then
    `from models import Net`): the project index looks there too (analysis/import_paths.py)."""
    write(tmp_path, {"setup.py": "", "lib/models.py": MODELS, "scripts/train.py": f"""
        import os
        import sys
        from pathlib import Path
        {added}
        import torch
        from models import Net

        model = Net()
        out = model(torch.ones(1, 3))
        print(out.numpy())
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "scripts/train.py")] == [(10, "DET101")]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    proof = subprocess.run([sys.executable, "train.py"], cwd=tmp_path / "scripts", env=env,
                           capture_output=True, text=True, check=False, timeout=120)
    assert GRAD_ERROR in proof.stderr
    elsewhere = tmp_path / "scripts" / "train.py"
    elsewhere.write_text(elsewhere.read_text().replace("lib", "vendor"))  # a folder with no such module
    forget_projects()
    assert codes(tmp_path, "scripts/train.py") == []


@pytest.mark.parametrize(("text", "expected"), [
    ('sys.path.append("../semi-supervised")', ("cwd", "../semi-supervised")),
    ("sys.path.insert(0, '.')", ("cwd", ".")),
    ("sys.path.append(os.path.dirname(__file__))", ("file", ".")),
    ("sys.path.append(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))", ("file", "..")),
    ('sys.path.insert(1, os.path.join(os.path.dirname(__file__), "src", "pkg"))', ("file", "src/pkg")),
    ("sys.path.append(str(Path(__file__).parent.parent))", ("file", "..")),
    ('sys.path.append(str(Path(__file__).absolute().parents[2] / "third_party"))', ("file", "../../third_party")),
    ('sys.path.append("/opt/lib")', None),
    ("sys.path.append(os.environ['ROOT'])", None),
    ("sys.path.append(__file__)", None),
    ("paths.append('../lib')", None),
])
def test_which_sys_path_additions_are_read(text: str, expected: tuple[str, str] | None) -> None:
    from flake8_detach.analysis.import_paths import added_folder

    call = ast.parse(text).body[0].value  # type: ignore[attr-defined]
    assert added_folder(call) == expected


VIEWER = """
    import torch


    def load_model(path):
        checkpoint = torch.load(path)
        model = checkpoint["model"]
        model.cpu()
        return [], model


    def show_next(loader, model, x):
        return model(x).data.numpy()
"""


def test_a_script_passes_what_a_project_loader_returned_to_a_project_helper(tmp_path: Path) -> None:
    """`loader, model = V.load_model(path)` then `V.show_next(loader, model, x)` in a script or a
    notebook: the helper's `model` is the loaded model (exports of entry points read what other
    project files return, one level deep)."""
    script = """
        import torch
        import viewer as V

        if __name__ == "__main__":
            loader, model = V.load_model("model.pt")
            V.show_next(loader, model, torch.ones(3))
    """
    write(tmp_path, {"setup.py": "", "viewer.py": VIEWER, "run.py": script})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "viewer.py")] == [(12, "DET103")]
    forget_projects()
    write(tmp_path, {"run.py": script.replace('if __name__ == "__main__":', "def main():")})
    assert codes(tmp_path, "viewer.py") == []  # a library module's export reads no other file's returns


LAYERS = """
    import torch
    from torch import nn


    class Smoothing(nn.Module):
        def __init__(self, value, classes):
            super().__init__()
            self.confidence = 1.0 - value
            self.value = value / (classes - 1)
            self.classes = classes

        def forward(self, target):
            out = torch.zeros(len(target), self.classes)
            out.fill_(self.value)
            out.scatter_(1, target.unsqueeze(1), self.confidence)
            return out


    class Wrapper(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x) * 2


    class Scaled(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(classes))

        def forward(self, target):
            return self.scale * target


    class Encoding(nn.Module):
        def __init__(self, size):
            super().__init__()
            self.register_buffer("table", torch.arange(size, dtype=torch.float32))
            self.proj = nn.Linear(size, size)

        def forward(self, x):
            return self.proj(x + self.table)
"""


@pytest.mark.parametrize(("made", "given", "flagged"), [
    ("Smoothing(0.1, 4)", "torch.tensor([1, 0, 3])", False),  # fields of numbers, an output of torch.zeros
    ("Wrapper(nn.ReLU())", "torch.ones(3, 4)", False),  # given a module with no parameters
    ("Wrapper(nn.Linear(4, 4))", "torch.ones(3, 4)", True),  # given one with parameters
    ("Scaled(4)", "torch.ones(3, 4)", True),  # an nn.Parameter of its own
])
def test_a_module_class_of_another_file_holds_parameters_only_as_its_file_says(
        tmp_path: Path, made: str, given: str, flagged: bool) -> None:
    """Set 30's label smoothing: a module class of another project file whose body makes no
    parameters, given none by its constructor's call, gives an output that requires grad only
    where its input does, as a module class of the linted file does."""
    write(tmp_path, {"setup.py": "", "layers.py": LAYERS, "show.py": f"""
        import torch
        from torch import nn

        from layers import Scaled, Smoothing, Wrapper

        layer = {made}
        given = {given}
        print(layer(given).numpy())
    """})
    found = [(line, message[:6]) for line, message in codes(tmp_path, "show.py")]
    assert found == ([(8, "DET101")] if flagged else [])
    proof = run_script(tmp_path, "show.py")
    assert (GRAD_ERROR in proof.stderr) if flagged else proof.returncode == 0, proof.stderr


def test_a_buffer_of_another_files_class_is_no_parameter(tmp_path: Path) -> None:
    """Set 30's positional encoding: `pe.table` registered with `register_buffer` by a class of
    another project file is a tensor without grad; its layer's weight is a parameter. A subclass
    of this file reads the buffer through `self`."""
    write(tmp_path, {"setup.py": "", "layers.py": LAYERS, "show.py": """
        import torch

        from layers import Encoding


        class Shifted(Encoding):
            def table_twice(self):
                return (self.table * 2).numpy()


        pe = Encoding(4)
        print(pe.table.numpy(), Shifted(4).table_twice())
        print(pe.proj.weight.numpy())
    """})
    assert [(line, message[:6]) for line, message in codes(tmp_path, "show.py")] == [(13, "DET101")]
    proof = run_script(tmp_path, "show.py")
    assert GRAD_ERROR in proof.stderr and "[0. 1. 2. 3.]" in proof.stdout, proof.stderr


def test_a_package_with_its_own_build_script_is_part_of_the_project_that_imports_it(tmp_path: Path) -> None:
    """glow-tts's `monotonic_align/` (the thirty-third set): a package whose `setup.py` builds its
    Cython extension, imported by the `models.py` beside it. Its marker is its build's, not the
    project's: the root is above, so the caller's tensor reaches the helper's parameters. A
    marked folder nothing beside imports stays a root of its own."""
    write(tmp_path, {"align/__init__.py": """
        import numpy as np


        def maximum_path(value, mask):
            value = value * mask
            print(type(value).__name__)
            return value.data.cpu().numpy().astype(np.float32)
    """, "align/setup.py": "", "models.py": """
        import torch

        import align

        print(align.maximum_path(torch.ones(2, 3), torch.ones(2, 3)))
    """, "tools/setup.py": "", "tools/__init__.py": ""})
    assert find_root(tmp_path / "align" / "__init__.py") == tmp_path.resolve()
    assert find_root(tmp_path / "tools" / "__init__.py") == (tmp_path / "tools").resolve()
    assert [(line, message[:6]) for line, message in codes(tmp_path, "align/__init__.py")] == [(7, "DET103")]
    proof = run_script(tmp_path, "models.py")
    assert proof.returncode == 0 and proof.stdout.startswith("Tensor"), proof.stderr


def test_the_summaries_list_record_classes_a_call_makes() -> None:
    summary = summarise(
        "import collections\nimport typing\nfrom collections import namedtuple\n"
        "A = collections.namedtuple('A', ['x', 'y'])\nB = namedtuple('B', 'x, y z')\n"
        "C = typing.NamedTuple('C', [('x', int), ('y', float)])\nD = namedtuple('D', FIELDS)\n"
    )
    assert summary is not None
    assert summary["namedtuples"] == {"A": ["x", "y"], "B": ["x", "y", "z"], "C": ["x", "y"]}


DIAMOND = """

    class Root(nn.Module):
        def step(self):
            return 1


    class Left(Root):
        pass


    class Right(Root):
        def step(self):
            return 2


    class Both(Left, Right):
        pass
"""


def test_a_class_lineage_is_pythons_method_order_once_per_class_and_bounded(tmp_path: Path) -> None:
    """Project.lineage, the one walk over a class's project bases that inherited methods, module
    classes, subclass tests and the view's per-class questions share: C3 as Python orders them,
    a cycle ended, eight levels at most."""
    chain = "".join(f"class C{i}(C{i + 1}):\n    pass\n\n\n" for i in range(12)) + "class C12(nn.Module):\n    pass\n"
    loop = "\n\nclass Loop1(Loop2):\n    pass\n\n\nclass Loop2(Loop1):\n    pass\n"
    write(tmp_path, {"setup.py": "", "base.py": "from torch import nn\n" + textwrap.dedent(DIAMOND) + loop,
                     "deep.py": "from torch import nn\n\n\n" + chain, "train.py": "import base\nimport deep\n"})
    view = project_view(tmp_path / "train.py")
    assert view is not None
    project, train = view.project, view.path
    base = (tmp_path / "base.py").resolve()
    names = [unit[1] for unit, _ in project.lineage(train, "base.Both")]
    assert names == ["Both", "Left", "Right", "Root"]  # Python's C3 order, not depth first
    namespace: dict[str, object] = {}
    exec(textwrap.dedent(DIAMOND).replace("nn.Module", "object"), namespace)  # noqa: S102 - our own text
    assert names == [cls.__name__ for cls in namespace["Both"].__mro__[:-1]]  # type: ignore[attr-defined]
    assert project.inherited((base, "Both.step")) == (base, "Right.step")  # as `Both().step()` runs
    assert [unit[1] for unit, _ in project.lineage(train, "base.Loop1")] == ["Loop1", "Loop2"]  # a cycle ends
    assert project.derives_from(train, "base.Both", (base, "Root"))
    assert not project.derives_from(train, "base.Left", (base, "Right"))
    deep = [unit[1] for unit, _ in project.lineage(train, "deep.C0")]
    assert deep == [f"C{i}" for i in range(project_module.MAX_LINEAGE + 1)]  # C0 and eight levels of bases
    assert project.is_module_class(train, "deep.C4") and not project.is_module_class(train, "deep.C0")


WRAPPER = """
    import torch


    class DataParallel(torch.nn.DataParallel):
        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self.module, name)
"""


def test_an_attribute_a_project_classs_getattr_answers_is_not_guessed_a_parameter(tmp_path: Path) -> None:
    """Wave-U-Net's trainer: `model = model_utils.DataParallel(model)`, whose `__getattr__` hands
    `model.shapes` (a dict of ints) to the wrapped model; without that method a module's unknown
    attribute is read as a parameter, as before."""
    train = """
        import numpy as np
        import torch
        from wrapper import DataParallel


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(2, 2)
                self.shapes = {"output_frames": 4}


        model = DataParallel(Net())
        lengths = [n // model.shapes["output_frames"] + 1 for n in (8, 16)]
        print(np.cumsum(lengths))
    """
    write(tmp_path, {"setup.py": "", "wrapper.py": WRAPPER, "train.py": train})
    assert codes(tmp_path, "train.py") == []
    assert run_script(tmp_path, "train.py").returncode == 0
    forget_projects()
    write(tmp_path, {"wrapper.py": "import torch\n\n\nclass DataParallel(torch.nn.DataParallel):\n    pass\n"})
    assert [line for line, message in codes(tmp_path, "train.py") if "DET106" in message] == [15]


HELPERS_THAT_DROP_GRAD = """
    import torch


    def detached(x):
        return x.detach()


    def reciprocal_rank(indices, targets):
        hits = (targets.view(-1, 1).expand_as(indices) == indices).nonzero()
        return torch.reciprocal((hits[:, -1] + 1).float()).sum().data / targets.size(0)
"""


def test_a_helper_of_another_file_that_drops_grad_keeps_its_arguments_device(tmp_path: Path) -> None:
    """GRU4REC's metric: an MRR computed from the targets' indices (`nonzero`, `.data`) lives where
    the caller's targets do, though no grad reaches it; a helper that detaches its argument too."""
    train = """
        import numpy as np
        import torch
        from metrics import detached, reciprocal_rank

        DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = torch.nn.Linear(3, 2).to(DEVICE)
        out = model(torch.ones(4, 3).to(DEVICE))
        target = torch.zeros(4, dtype=torch.long).to(DEVICE)
        scores = [reciprocal_rank(torch.topk(out, 1, -1)[1], target)]
        print(np.mean(scores), detached(out).numpy())
        print(detached(out.cpu()).numpy(), reciprocal_rank(torch.zeros(4, 1, dtype=torch.long), torch.zeros(4)).numpy())
    """
    write(tmp_path, {"setup.py": "", "metrics.py": HELPERS_THAT_DROP_GRAD, "train.py": train})
    found = codes(tmp_path, "train.py")
    assert [(line, message[:6]) for line, message in found] == [(10, "DET106"), (10, "DET104")]
    assert run_script(tmp_path, "train.py").returncode == 0  # on the CPU; on a GPU line 10 raises
