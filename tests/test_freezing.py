"""Frozen modules (analysis/freezing.py): a model whose parameters were all set
`requires_grad=False` gives outputs without grad, unless its input has grad or it was thawed.

Every program is executed too: a flagged line must raise there, an unflagged program must run.
"""

from __future__ import annotations

import textwrap

import pytest
from running import failing_line as run_program

from flake8_detach import check_source
from flake8_detach.settings import Settings

PRELUDE = "import numpy as np\nimport torch\nfrom torch import nn\n\nx = torch.ones(2, 3)\n\n\n"


def program(body: str) -> str:
    return PRELUDE + textwrap.dedent(body).lstrip("\n")


def flagged_lines(source: str) -> list[int]:
    return sorted(d.line for d in check_source(source, Settings(preview=True)) if d.code in ("DET101", "DET106"))


def failing_line(source: str) -> int | None:
    return run_program(source, "<freezing>")


FROZEN = {
    "loop": """
        model = nn.Linear(3, 3)
        for p in model.parameters():
            p.requires_grad = False
        model(x).numpy()
        """,
    "named loop, method form": """
        model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
        for name, p in model.named_parameters():
            p.requires_grad_(False)
        model.eval()
        np.asarray(model(x))
        """,
    "requires_grad_(False)": """
        model = nn.Linear(3, 3)
        model.requires_grad_(False)
        model(x).numpy()
        """,
    "requires_grad_(False) in the expression that builds it": """
        model = nn.Linear(3, 3).requires_grad_(requires_grad=False)
        model(x).numpy()
        """,
    "a module class of the file with a name and a config dict, no parameters (uvadlc's activations)": """
        class ActivationFunction(nn.Module):
            def __init__(self):
                super().__init__()
                self.name = self.__class__.__name__
                self.config = {"name": self.name}

        class LeakyReLU(ActivationFunction):
            def __init__(self, alpha=0.1):
                super().__init__()
                self.config["alpha"] = alpha

            def forward(self, x):
                return torch.where(x > 0, x, self.config["alpha"] * x)

        LeakyReLU()(x).numpy()
        """,
    "frozen in a loader function": """
        def load():
            model = nn.Linear(3, 3)
            for p in model.parameters():
                p.requires_grad = False
            return model

        class Runner:
            def __init__(self):
                self.model = load()

            def run(self, batch):
                return self.model(batch).cpu().numpy()

        Runner().run(x)
        """,
    "a module with no parameters (frozen from the start)": """
        act = nn.ReLU()
        act(x).numpy()
        """,
    "a loss of inputs without grad": """
        criterion = nn.MSELoss()
        criterion(x, torch.zeros(2, 3)).numpy()
        """,
    "an embedding whose weight is frozen": """
        emb = nn.Embedding(5, 3)
        emb.weight.requires_grad = False
        emb(torch.tensor([1, 2])).numpy()
        """,
    "an embedding from pretrained vectors (frozen by default)": """
        emb = nn.Embedding.from_pretrained(torch.ones(5, 3))
        bag = nn.EmbeddingBag.from_pretrained(torch.ones(5, 3), True)
        emb(torch.tensor([1, 2])).numpy()
        bag(torch.tensor([[1, 2]])).numpy()
        """,
    "a module class of the file with a buffer and parameter-free layers": """
        class Shift(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.act = nn.ReLU()
                self.drop = nn.Dropout(0.0)
                self.register_buffer("offset", torch.ones(n))

            def forward(self, t):
                return self.drop(self.act(t + self.offset))

        class Twice(nn.Module):
            def __init__(self):
                super().__init__()
                self.shift = Shift(3)

            def forward(self, t):
                return self.shift(self.shift(t))

        Shift(3)(x).numpy()
        Twice()(x).numpy()
        """,
}

THAWED = {
    "a module class of the file whose config dict holds a parameter": """
        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.config = {"name": self.__class__.__name__}
                self.config["scale"] = nn.Linear(3, 3).weight

            def forward(self, x):
                return x @ self.config["scale"]

        Scaled()(x).numpy()  # flagged
        """,
    "thawed in the expression that builds it": """
        model = nn.Linear(3, 3).requires_grad_(False).requires_grad_()
        model(x).numpy()  # flagged
        """,
    "a new head after the freeze (transfer learning)": """
        model = nn.Sequential(nn.Linear(3, 3))
        for p in model.parameters():
            p.requires_grad = False
        model.head = nn.Linear(3, 3)
        model = nn.Sequential(model, model.head)
        model(x).numpy()  # flagged
        """,
    "part of it thawed": """
        model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
        for p in model.parameters():
            p.requires_grad = False
        for p in model[1].parameters():
            p.requires_grad = True
        model(x).numpy()  # flagged
        """,
    "frozen only on some parameters": """
        model = nn.Linear(3, 3)
        for name, p in model.named_parameters():
            if name == "bias":
                p.requires_grad = False
        model(x).numpy()  # flagged
        """,
    "a layer replaced by index": """
        model = nn.Sequential(nn.Linear(3, 3))
        model.requires_grad_(False)
        model[0] = nn.Linear(3, 3)
        model(x).numpy()  # flagged
        """,
    "frozen on one branch only": """
        model = nn.Linear(3, 3)
        if len(x) > 5:
            model.requires_grad_(False)
        model(x).numpy()  # flagged
        """,
    "an input that requires grad": """
        model = nn.Linear(3, 3)
        model.requires_grad_(False)
        model(x.requires_grad_()).numpy()  # flagged
        """,
    "requires_grad_() turns it back on": """
        model = nn.Linear(3, 3)
        model.requires_grad_(False)
        model.requires_grad_()
        model(x).numpy()  # flagged
        """,
    "a module with no parameters, of an input with grad": """
        act = nn.ReLU()
        act(nn.Linear(3, 3)(x)).numpy()  # flagged
        """,
    "a loss of a model's output": """
        criterion = nn.MSELoss()
        loss = criterion(nn.Linear(3, 3)(x), torch.zeros(2, 3))
        loss.numpy()  # flagged
        """,
    "a linear layer with only its weight frozen (the bias trains)": """
        lin = nn.Linear(3, 3)
        lin.weight.requires_grad = False
        lin(x).numpy()  # flagged
        """,
    "an embedding from pretrained vectors with freeze=False": """
        emb = nn.Embedding.from_pretrained(torch.ones(5, 3), freeze=False)
        emb(torch.tensor([1, 2])).numpy()  # flagged
        """,
    "a module class of the file with a parameter": """
        class Scale(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU()
                self.factor = nn.Parameter(torch.ones(1))

            def forward(self, t):
                return self.act(t) * self.factor

        Scale()(x).numpy()  # flagged
        """,
    "a module class of the file given a layer by its caller": """
        class Wrap(nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, t):
                return self.inner(t)

        Wrap(nn.Linear(3, 3))(x).numpy()  # flagged
        """,
    "a module class of the file that gets a layer outside __init__": """
        class Lazy(nn.Module):
            def build(self):
                self.fc = nn.Linear(3, 3)

            def forward(self, t):
                return self.fc(t)

        lazy = Lazy()
        lazy.build()
        lazy(x).numpy()  # flagged
        """,
    "a module class of the file whose forward calls a model": """
        backbone = nn.Linear(3, 3)

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU()

            def forward(self, t):
                return self.act(backbone(t))

        Head()(x).numpy()  # flagged
        """,
    "a module class of a library base": """
        class Tied(nn.Linear):
            def forward(self, t):
                return super().forward(t)

        Tied(3, 3)(x).numpy()  # flagged
        """,
}


@pytest.mark.parametrize("body", FROZEN.values(), ids=FROZEN.keys())
def test_a_frozen_module_gives_outputs_without_grad(body: str) -> None:
    source = program(body)
    assert failing_line(source) is None
    assert flagged_lines(source) == []


@pytest.mark.parametrize("body", THAWED.values(), ids=THAWED.keys())
def test_a_module_that_may_have_grad_again_is_flagged(body: str) -> None:
    source = program(body)
    line = next(number for number, text in enumerate(source.splitlines(), 1) if "# flagged" in text)
    assert failing_line(source) == line
    assert flagged_lines(source) == [line]
