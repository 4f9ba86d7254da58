"""Parameters declared by annotation (analysis/interpreter.py `param_value`): a `DataLoader` gives
batches of tensors, and an instance of a project class may be one of any project subclass, so
calling a method runs the class's own (or a base's) and every subclass's override, abstract
methods apart (ProjectView.subclass_returns: class hierarchy analysis across files).

Each case has a runtime proof: the small project runs and shows what the value at the site is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import run_script, write

from flake8_detach.analysis import project as project_module
from flake8_detach.analysis.project import forget_projects
from flake8_detach.engine import Place, analyze
from flake8_detach.settings import Settings


@pytest.fixture(autouse=True)
def _fresh_projects() -> None:
    forget_projects()
    project_module.use_summary_directory(None)


def found(root: Path, name: str) -> list[tuple[int, str]]:
    path = root / name
    result = analyze(path.read_text(), Settings(preview=True), place=Place(path, None))
    return [(d.line, d.message[:6]) for d in result.diagnostics]


BASE = """
    from abc import ABC, abstractmethod


    class BaseSet(ABC):
        @abstractmethod
        def loaders(self, batch_size):
            \"\"\"The train and test loaders.\"\"\"
            pass
"""

TRAINER = """
    from base import BaseSet


    def test(dataset: BaseSet):
        _, loader = dataset.loaders(batch_size=2)
        for inputs, labels in loader:
            print(type(labels).__name__, labels.data.tolist())
"""

MAIN = """
    from sets import Numbers
    from trainer import test

    test(Numbers())
"""

TENSOR_SET = """
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from base import BaseSet


    class Numbers(BaseSet):
        def __init__(self):
            self.rows = TensorDataset(torch.arange(4.0), torch.arange(4))

        def loaders(self, batch_size):
            return DataLoader(self.rows, batch_size=batch_size), DataLoader(self.rows, batch_size=batch_size)
"""

RECORD_SET = """
    import numpy as np

    from base import BaseSet


    class Box:
        def __init__(self, data):
            self.data = data


    class Numbers(BaseSet):
        def loaders(self, batch_size):
            return [], [(Box(np.zeros(2)), Box(np.ones(2)))]
"""


def test_an_abstract_method_of_a_declared_instance_runs_the_subclasses_overrides(tmp_path: Path) -> None:
    """Deep-SVDD's trainers (the thirty-first set): `dataset: BaseADDataset`, whose `loaders` is
    abstract; the project's subclass returns DataLoaders, so the batches are tensors."""
    write(tmp_path, {"setup.py": "", "base.py": BASE, "trainer.py": TRAINER, "sets.py": TENSOR_SET,
                     "main.py": MAIN})
    assert found(tmp_path, "trainer.py") == [(7, "DET103")]
    proof = run_script(tmp_path, "main.py")
    assert proof.returncode == 0 and proof.stdout.startswith("Tensor "), proof.stderr


def test_a_declared_instance_whose_subclass_gives_records_is_no_tensor(tmp_path: Path) -> None:
    """The twin: the only subclass's loader gives records whose `.data` field holds an array."""
    write(tmp_path, {"setup.py": "", "base.py": BASE, "trainer.py": TRAINER, "sets.py": RECORD_SET,
                     "main.py": MAIN})
    assert found(tmp_path, "trainer.py") == []
    proof = run_script(tmp_path, "main.py")
    assert proof.returncode == 0 and proof.stdout.startswith("Box "), proof.stderr


INHERITED_SET = """
    import numpy as np
    import torch

    from base import BaseSet


    class Numbers(BaseSet):
        def loaders(self, batch_size):
            return [], [(torch.zeros(2), torch.ones(2))]


    class Evens(Numbers):
        pass
"""


def test_an_inherited_method_counts_and_a_subclass_may_give_something_else(tmp_path: Path) -> None:
    """`dataset: Evens`, whose `loaders` is its base's: tensors. With a subclass of Evens whose
    override gives records, the declared instance may be either, and a value that may be no
    tensor is not flagged (as a join in one file)."""
    trainer = TRAINER.replace("BaseSet", "Evens").replace("from base import", "from sets import")
    main = MAIN.replace("Numbers", "Evens")
    write(tmp_path, {"setup.py": "", "base.py": BASE, "trainer.py": trainer, "sets.py": INHERITED_SET,
                     "main.py": main})
    assert found(tmp_path, "trainer.py") == [(7, "DET103")]
    proof = run_script(tmp_path, "main.py")
    assert proof.returncode == 0 and proof.stdout.startswith("Tensor "), proof.stderr
    forget_projects()
    records = RECORD_SET.replace("from base import BaseSet", "from sets import Evens").replace(
        "class Numbers(BaseSet)", "class Boxes(Evens)")
    write(tmp_path, {"boxes.py": records, "main.py": main + "    from boxes import Boxes\n    test(Boxes())\n"})
    assert found(tmp_path, "trainer.py") == []
    proof = run_script(tmp_path, "main.py")
    assert proof.returncode == 0 and "\nBox " in proof.stdout and proof.stdout.startswith("Tensor "), proof.stderr


def test_a_parameter_declared_a_data_loader_gives_tensor_batches(tmp_path: Path) -> None:
    """A helper nothing in its project calls: its annotation is all that says what it gets (the
    proof calls it from outside the project)."""
    project = tmp_path / "project"
    write(project, {"setup.py": "", "show.py": """
        from torch.utils.data import DataLoader


        def show(loader: DataLoader):
            for batch in loader:
                inputs, labels = batch
                print(type(labels).__name__, labels.data.tolist())
    """})
    assert found(project, "show.py") == [(7, "DET103")]
    write(tmp_path, {"run.py": """
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        from show import show

        show(DataLoader(TensorDataset(torch.arange(4.0), torch.arange(4)), batch_size=2))
    """})
    proof = run_script(project, "../run.py")
    assert proof.returncode == 0 and proof.stdout.startswith("Tensor "), proof.stderr
