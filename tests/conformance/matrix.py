"""The conformance matrix: sources x carriers x sinks, each hazard with its safe twin.

A case is a small program (one folder, a project of its own) that makes a value from a
**source**, carries it through a **carrier** (the heap matrix's constructs of
tests/test_heap.py, a helper called in two contexts, a helper of another file of the project)
and gives it to a **sink**. Its twin makes the safe value instead (detached for a grad source,
moved to the CPU for a device source). Nothing here imports torch: the cases are text, run by
`runner.py` in one subprocess and linted by `flake8-detach check` as a user would.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from test_exports import STORE
from test_heap import CARRIERS as HEAP_CARRIERS

PRELUDE = textwrap.dedent("""\
    import collections
    import dataclasses
    import itertools
    import typing

    import matplotlib
    import numpy as np
    import pandas as pd
    import torch

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402

    DEVICE = torch.device("cuda")
    net = torch.nn.Linear(3, 1)
    x = torch.ones(3)
    y = torch.zeros(1)
""")
# Where a case runs without a GPU, `meta` stands in for it: it refuses `.numpy()` with the same
# TypeError ("can't convert meta device type tensor to numpy"), checked on torch 2.13.
RUNTIME_DEVICE = (('torch.device("cuda")', 'torch.device("meta")'), (".cuda()", '.to("meta")'))


@dataclass(frozen=True)
class Source:
    hazard: str  # the expression that makes the hazardous value
    safe: str  # its twin
    kind: str  # "grad" or "device"


SOURCES = {
    "module_output": Source("net(x)", "net(x).detach()", "grad"),
    "loss": Source("torch.nn.functional.mse_loss(net(x), y, reduction='none')",
                   "torch.nn.functional.mse_loss(net(x), y, reduction='none').detach()", "grad"),
    "parameter": Source("net.weight", "net.weight.detach()", "grad"),
    "requires_grad_factory": Source("torch.ones(1, requires_grad=True)", "torch.ones(1)", "grad"),
    # The twins stay on the CPU: `meta`, the stand-in for a GPU here, has no data to copy back.
    "cuda_method": Source("torch.ones(1).cuda()", "torch.ones(1).cpu()", "device"),
    "to_device": Source("torch.ones(1).to(DEVICE)", 'torch.ones(1).to("cpu")', "device"),
}


@dataclass(frozen=True)
class Sink:
    template: str  # a line converting `{}`
    codes: dict[str, str]  # source kind -> the code that must be on the line


SINKS = {
    "numpy": Sink("print(({}).numpy())", {"grad": "DET101", "device": "DET104"}),
    "np_asarray": Sink("print(np.asarray({}))", {"grad": "DET106", "device": "DET106"}),
    "np_mean_of_list": Sink("print(np.mean([{}]))", {"grad": "DET106", "device": "DET106"}),
    "plt_plot": Sink("plt.plot({})", {"grad": "DET106", "device": "DET106"}),
    "pd_dataframe": Sink("print(pd.DataFrame({}))", {"grad": "DET106", "device": "DET106"}),
}

# A carrier: (value expression, a suffix for its names) -> (lines that put it in, expression
# reading it back, other files of the project: name -> text).
Files = dict[str, str]
Carrier = Callable[[str, str], tuple[str, str, Files]]


def _heap(name: str) -> Carrier:
    def carry(value: str, suffix: str) -> tuple[str, str, Files]:
        lines, read = HEAP_CARRIERS[name](value, suffix)
        return lines, read, {}
    return carry


def _direct(value: str, suffix: str) -> tuple[str, str, Files]:
    return "", value, {}


def _two_contexts(value: str, suffix: str) -> tuple[str, str, Files]:
    """A helper called first with a plain tensor, then with the value (summaries per context)."""
    lines = f"def same{suffix}(t):\n    return t * 1\n\n\nplain{suffix} = same{suffix}(torch.zeros(1))\n"
    return lines, f"same{suffix}({value})", {}


def _other_file_function(value: str, suffix: str) -> tuple[str, str, Files]:
    """A function of another file of the project returns what it is passed."""
    module = f"helpers{suffix}"
    return f"from {module} import scaled\n", f"scaled({value})", {
        f"{module}.py": "import torch\n\n\ndef scaled(t):\n    return t * 2\n"}


def _other_file_method(value: str, suffix: str) -> tuple[str, str, Files]:
    """A method of another file's class keeps what one call stores and another returns."""
    module = f"store{suffix}"
    text = textwrap.dedent(STORE).lstrip("\n")
    return f"from {module} import Store\n\nbox{suffix} = Store()\nbox{suffix}.add({value})\n", f"box{suffix}.last()", {
        f"{module}.py": text}


def _other_file_callable(value: str, suffix: str) -> tuple[str, str, Files]:
    """An instance of another file's class is called: its `__call__` returns what it is passed."""
    module = f"scales{suffix}"
    text = "import torch\n\n\nclass Scale:\n    def __call__(self, t):\n        return t * 1\n"
    return f"from {module} import Scale\n\nscale{suffix} = Scale()\n", f"scale{suffix}({value})", {f"{module}.py": text}


CARRIERS: dict[str, Carrier] = {
    "direct": _direct,
    "two_contexts": _two_contexts,
    **{name: _heap(name) for name in HEAP_CARRIERS},
    "other_file_function": _other_file_function,
    "other_file_method": _other_file_method,
    "other_file_callable": _other_file_callable,
}
# Nested pairs (the first inside the second), for the first source and sink only.
OUTERS = ("generator", "dict_of_lists", "two_contexts")


@dataclass(frozen=True)
class Case:
    name: str  # carrier(+outer)/source/sink/hazard|twin
    carrier: str
    source: str
    sink: str
    hazard: bool
    code: str  # what must be on the sink line of a hazard
    files: dict[str, str] = field(default_factory=dict)  # main.py and the project's other files

    @property
    def sink_line(self) -> int:
        return self.files["main.py"].count("\n")


def program(carriers: list[str], value: str, sink: str) -> tuple[dict[str, str], str]:
    body = ""
    others: Files = {}
    read = value
    for index, name in enumerate(carriers):
        lines, read, files = CARRIERS[name](read, str(index))
        body += lines
        others.update(files)
    main = PRELUDE + body + SINKS[sink].template.format(read) + "\n"
    return {"main.py": main, **others}, main


def cases() -> list[Case]:
    out: list[Case] = []
    combos: list[tuple[list[str], str, str]] = [
        ([carrier], source, sink) for carrier in CARRIERS for source in SOURCES for sink in SINKS]
    combos += [([carrier, outer], "module_output", "numpy") for outer in OUTERS for carrier in CARRIERS
               if carrier not in (outer, "direct")]
    for carriers, source_name, sink in combos:
        source = SOURCES[source_name]
        for hazard in (True, False):
            files, _ = program(carriers, source.hazard if hazard else source.safe, sink)
            name = f"{'+'.join(carriers)}/{source_name}/{sink}/{'hazard' if hazard else 'twin'}"
            out.append(Case(name, "+".join(carriers), source_name, sink, hazard, SINKS[sink].codes[source.kind], files))
    return out


def runtime_text(text: str) -> str:
    """The program as run here: `meta` standing in for a GPU."""
    for gpu, stand_in in RUNTIME_DEVICE:
        text = text.replace(gpu, stand_in)
    return text
