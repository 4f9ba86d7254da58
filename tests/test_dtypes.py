"""The dtype/layout lattice: what each factory and operation gives, as the analysis sees it.

Each case is a snippet whose last line is `probe = EXPR`; the test reads the value the
interpreter recorded for EXPR. The facts themselves (torch 2.13, NumPy 2.4) are asserted on the
libraries by scripts/check_dtype_facts.py.
"""

from __future__ import annotations

import libcst as cst
import pytest

from flake8_detach.analysis import dtypes as dt
from flake8_detach.analysis.imports import ImportTable
from flake8_detach.analysis.interpreter import Interpreter
from flake8_detach.analysis.values import DTYPES, Flag, Value

HEADER = "import numpy as np\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def probe(body: str) -> Value:
    module = cst.parse_module(HEADER + body)
    facts = Interpreter(module, ImportTable.from_module(module)).run()
    found: list[cst.Assign] = []

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            target = node.targets[0].target
            if isinstance(target, cst.Name) and target.value == "probe":
                found.append(node)

    module.visit(Finder())
    assert found, "the snippet assigns no `probe`"
    return facts.value_of(found[-1].value)


F16, BF16, F32, F64, INT, BOOL, COMPLEX = dt.F16, dt.BF16, dt.F32, dt.F64, dt.INT, dt.BOOL, dt.COMPLEX

DTYPE_CASES = [
    # torch factories and conversions
    ("probe = torch.zeros(3)", F32),
    ("probe = torch.randn(2, 3)", F32),
    ("probe = torch.ones(3, dtype=torch.bfloat16)", BF16),
    ("probe = torch.zeros(3, dtype=torch.float64)", F64),
    ("probe = torch.tensor([1.0, 2.0])", F32),
    ("probe = torch.tensor([1, 2])", INT),
    ("probe = torch.randint(0, 5, (3,))", INT),
    ("probe = torch.arange(5)", INT),
    ("probe = torch.arange(0.0, 1.0, 0.1)", F32),
    ("x = torch.ones(3)\nprobe = x.bfloat16()", BF16),
    # `view(dtype)` reads the same bytes as another dtype; `view(shape)` keeps it (a fifth review's
    # false positive: `t.view(torch.int16).numpy()` of a bfloat16 tensor runs).
    ("x = torch.ones(4).bfloat16()\nprobe = x.view(torch.int16)", INT),
    ("x = torch.ones(4).bfloat16()\nprobe = x.view(dtype=torch.int16)", INT),
    ("x = torch.ones(4).bfloat16()\nprobe = x.view(-1)", BF16),
    ("x = torch.ones(4).bfloat16()\nprobe = x.view(2, 2)", BF16),
    ("probe = np.zeros(4, dtype=np.float32).view(np.int32)", INT),
    ("x = torch.ones(3)\nprobe = x.to(torch.bfloat16)", BF16),
    ("x = torch.ones(3)\nprobe = x.to(dtype=torch.bfloat16)", BF16),
    ("x = torch.ones(3)\nprobe = x.to('cpu', torch.float64)", F64),
    ("x = torch.ones(3)\nprobe = x.type(torch.bfloat16)", BF16),
    ("x = torch.ones(3).bfloat16()\nprobe = x.float()", F32),
    ("x = torch.ones(3)\nprobe = x.double()", F64),
    ("x = torch.ones(3)\nprobe = x.half()", F16),
    ("x = torch.ones(3)\nprobe = x.long()", INT),
    ("x = torch.ones(3).bfloat16()\nprobe = x.detach().cpu()", BF16),
    ("x = torch.ones(3).bfloat16()\nprobe = x.sum(0)", BF16),
    ("x = torch.ones(3).bfloat16()\nprobe = x[0]", BF16),
    ("x = torch.ones(3)\nprobe = torch.zeros_like(x, dtype=torch.bfloat16)", BF16),
    ("x = torch.ones(3).double()\nprobe = torch.zeros_like(x)", F64),
    ("dt = torch.bfloat16\nprobe = torch.ones(3).to(dt)", BF16),
    # NumPy defaults and the hand-over
    ("probe = np.random.rand(4, 3)", F64),
    ("probe = np.random.randn(4)", F64),
    ("probe = np.random.uniform(size=4)", F64),
    ("probe = np.zeros((2, 2))", F64),
    ("probe = np.linspace(0, 1, 5)", F64),
    ("probe = np.loadtxt('f.csv')", F64),
    ("probe = np.arange(0.0, 1.0)", F64),
    ("probe = np.arange(3)", INT),
    ("probe = np.zeros(3, dtype=np.float32)", F32),
    ("probe = np.random.rand(4).astype(np.float32)", F32),
    ("a = np.random.rand(4, 3)\nprobe = a.reshape(2, 6)", F64),
    ("a = np.random.rand(4, 3)\nprobe = a[:, :2]", F64),
    ("a = np.random.rand(4, 3)\nprobe = torch.from_numpy(a)", F64),
    ("a = np.random.rand(4, 3)\nprobe = torch.as_tensor(a)", F64),
    ("a = np.random.rand(4, 3)\nprobe = torch.tensor(a)", F64),
    ("a = np.random.rand(4, 3).astype(np.float32)\nprobe = torch.from_numpy(a)", F32),
    ("x = torch.ones(3).double()\nprobe = x.numpy()", F64),
    # promotion
    ("a = torch.ones(3)\nb = torch.ones(3).double()\nprobe = a + b", F64),
    ("a = torch.ones(3).bfloat16()\nb = torch.ones(3)\nprobe = a * b", F32),
    ("a = torch.ones(3).bfloat16()\nprobe = a * 2.0", BF16),
    ("a = torch.ones(3).half()\nb = torch.ones(3).bfloat16()\nprobe = a + b", F32),
    ("a = torch.ones(3).bfloat16()\nb = torch.ones(3)\nprobe = torch.cat([a, b])", BF16 | F32),
    ("a = torch.ones(3).long()\nprobe = a * 0.5", 0),
    ("a = torch.ones(3).bfloat16()\nprobe = torch.sigmoid(a)", BF16),
    ("a = torch.ones(3).double()\nb = torch.ones(3)\nprobe = a.mul(b)", F64),
    ("a = np.random.rand(3)\nprobe = a * 2", F64),
    # modules
    ("m = nn.Linear(3, 1)\nprobe = m(torch.ones(2, 3))", F32),
    ("m = nn.Linear(3, 1).bfloat16()\nprobe = m(torch.ones(2, 3).bfloat16())", BF16),
    ("m = nn.Linear(3, 1).to(torch.bfloat16)\nprobe = m(torch.ones(2, 3))", BF16),
    ("m = nn.Linear(3, 1)\nm.double()\nprobe = m(torch.ones(2, 3))", F64),
    ("m = nn.ReLU()\nprobe = m(torch.ones(2, 3))", F32),  # no parameters: the input's dtype
    ("m = nn.CrossEntropyLoss()\nprobe = m(torch.ones(2, 3).bfloat16(), torch.tensor([0, 1]))", BF16),
    ("t = torch.rand(3)\nprobe = torch.where(t > 0.5, t.double(), t.double())", F64),
    ("t = torch.rand(3)\nprobe = torch.where(t > 0.5, t.bfloat16(), 0.0)", BF16),
    ("m = nn.Linear(3, 1)\nm.type(torch.DoubleTensor)\nprobe = m(torch.ones(2, 3))", 0),
    ("m = nn.Linear(3, 1)\nm.type(torch.float64)\nprobe = m(torch.ones(2, 3))", F64),
    # autocast: only the ops autocast runs in lower precision
    ("m = nn.Linear(3, 1)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    probe = m(torch.ones(2, 3))", BF16),
    ("a = torch.ones(2, 3)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    probe = a @ torch.ones(3, 2)", BF16),
    ("a = torch.ones(2, 3)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    probe = torch.matmul(a, a.T)", BF16),
    ("a = torch.ones(2, 3)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    probe = torch.softmax(a, 1)", F32),
    ("a = torch.ones(2, 3)\nwith torch.autocast('cuda'):\n    probe = a @ a.T", F16),
    ("acc = torch.zeros(3)\nacc += torch.ones(3).bfloat16()\nprobe = acc", F32),  # in place: acc's dtype
    # a dtype unknown stays unknown
    ("def f(x):\n    return x\nprobe = f(1)", 0),
    ("a = torch.ones(3).bfloat16()\nprobe = a * unknown_tensor", 0),
    ("x = torch.ones(3)\nprobe = x.to(torch.get_default_dtype())", 0),
    ("names = {'bf16': torch.bfloat16, 'fp32': torch.float32}\nprobe = torch.ones(3).to(names[key])", 0),
    ("x = torch.ones(3)\nprobe = x.to(torch.bfloat16 if low else torch.float32)", BF16 | F32),
    ("probe = torch.tensor([1 + 2j, 3.0])", dt.COMPLEX),
    ("probe = torch.tensor([2j])", dt.COMPLEX),
    ("probe = torch.ones(3, dtype=torch.int64) + 1j", dt.COMPLEX),
]


@pytest.mark.parametrize(("body", "expected"), DTYPE_CASES, ids=[case[0].splitlines()[-1] for case in DTYPE_CASES])
def test_dtype_of(body: str, expected: int) -> None:
    value = probe(body)
    assert value.flags & DTYPES == expected, f"{dt.describe(value.flags & DTYPES) or 'unknown'} != {dt.describe(expected) or 'unknown'}"


LAYOUT_CASES = [
    ("x = torch.ones(2, 2)\nprobe = x.to_sparse()", Flag.SPARSE),
    ("x = torch.ones(2, 2)\nprobe = x.to_sparse_csr()", Flag.SPARSE),
    ("probe = torch.sparse_coo_tensor([[0], [1]], [1.0], (2, 2))", Flag.SPARSE),
    ("x = torch.ones(2, 2).to_sparse()\nprobe = x.detach().cpu()", Flag.SPARSE),
    ("x = torch.ones(2, 2).to_sparse()\nprobe = x.to_dense()", 0),
    ("x = torch.ones(2, 2).to_sparse()\nprobe = x.coalesce()", Flag.SPARSE),
    ("z = torch.fft.fft(torch.ones(4))\nprobe = z.conj()", Flag.CONJ),
    ("z = torch.fft.fft(torch.ones(4))\nprobe = torch.conj(z)", Flag.CONJ),
    ("z = torch.fft.fft(torch.ones(4))\nprobe = z.conj().detach().reshape(2, 2)", Flag.CONJ),
    ("z = torch.fft.fft(torch.ones(4))\nprobe = z.conj().resolve_conj()", 0),
    ("z = torch.fft.fft(torch.ones(4))\nprobe = z.conj() * 2", 0),
    ("z = torch.fft.fft(torch.ones(4))\nprobe = z.conj().clone()", 0),
    ("x = torch.ones(4)\nprobe = x.conj()", 0),  # a real tensor: conj() is a no-op
    # Complex from Python's imaginary literals (torch 2.13: complex64, complex128 from float64).
    ("probe = torch.tensor([1 + 2j]).conj()", Flag.CONJ),
    ("a = torch.linspace(0, 1, 5) + torch.linspace(0, 1, 5) * 1j\nprobe = torch.conj(a)", Flag.CONJ),
    ("t = torch.ones(2).to(some_dtype)\nprobe = (t * -1j).conj()", Flag.CONJ),  # dtype unknown, still complex
    ("probe = (torch.ones(2) * 1j).conj().resolve_conj()", 0),
    ("probe = torch.tensor([1.0, 2.0]).conj()", 0),
]


@pytest.mark.parametrize(("body", "expected"), LAYOUT_CASES, ids=[case[0].splitlines()[-1] for case in LAYOUT_CASES])
def test_layout_of(body: str, expected: int) -> None:
    assert probe(body).flags & (Flag.SPARSE | Flag.CONJ) == expected


def test_promote_is_a_union_over_the_may_sets() -> None:
    assert dt.promote(F32 | BF16, F64) == F64
    assert dt.promote(F32 | BF16, F32) == F32
    assert dt.promote(F16, BF16) == F32
    assert dt.promote(0, F64) == 0


def test_det101_and_det107_fixes_compose_into_code_that_runs() -> None:
    """Both rules fix the same `.numpy()`: the fixer applies both, and the result converts."""
    from flake8_detach.engine import Settings
    from flake8_detach.fixing.fixer import fix_source

    source = (
        "import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 1).bfloat16()\n"
        "out = model(torch.ones(2, 3).bfloat16())\nfirst = out.numpy()\nsecond = np.asarray(out)\n"
    )
    result = fix_source(source, Settings(), unsafe=False)
    assert "out.detach().float().numpy()" in result.source
    assert not result.remaining
    namespace: dict[str, object] = {}
    exec(compile(result.source, "<fixed>", "exec"), namespace)  # noqa: S102 - the fixed fixture must run
    assert str(namespace["first"].dtype) == "float32"  # type: ignore[attr-defined]


def test_the_det109_screen_wants_float64_or_numpy_in_the_text() -> None:
    """`torch.tensor(...)` is in most torch files: alone it must not make a file a DET109 candidate."""
    from flake8_detach.catalog import SCREENS
    from flake8_detach.screening import has_candidates

    (screen,) = [screen for screen in SCREENS if screen.code == "DET109"]
    assert not has_candidates("import torch\nx = torch.tensor([1.0])\n", (screen,))
    assert has_candidates("import torch\nimport numpy as np\nx = torch.tensor(np.ones(2))\n", (screen,))
    assert has_candidates("import torch\nx = torch.tensor([1.0], dtype=torch.float64)\n", (screen,))
    assert has_candidates("import torch\nx = torch.ones(2).double()\n", (screen,))


def test_the_det107_screen_wants_a_conversion_in_the_file() -> None:
    """An optimiser that keeps bfloat16 state never converts it: DET107 reports at a conversion,
    so a file with a bfloat16 source and no `.numpy()` or implicit conversion is not a candidate,
    whichever rules are selected; with one, it is (and the engine then flags it)."""
    import ast

    from flake8_detach.catalog import SCREENS_BY_CODE
    from flake8_detach.engine import check_source
    from flake8_detach.screening import has_candidates

    only = (SCREENS_BY_CODE["DET107"],)
    kept = "import torch\nstate = torch.zeros(4, dtype=torch.bfloat16)\nstate.add_(1)\n"
    assert not has_candidates(kept, only)
    assert not has_candidates(kept, only, ast.parse(kept))
    for sink in ("state.numpy()", "np.asarray(state)", "plt.plot(state)"):
        source = f"import numpy as np\nimport matplotlib.pyplot as plt\n{kept}{sink}\n"
        assert has_candidates(source, only)
        assert has_candidates(source, only, ast.parse(source))
        assert [d.code for d in check_source(source, tree=ast.parse(source))] == ["DET107"], sink
    # A conversion alone (no bfloat16, sparse or conjugate source) is not a DET107 candidate.
    assert not has_candidates("import torch\nx = torch.ones(2)\nx.numpy()\n", only)


_DTYPE_TESTS = {
    # name: (program before a last line that converts `x`, the lines flagged counted back from
    # that one; flagged lines raise for flag=True)
    "equal_then_float": ("if x.dtype == torch.bfloat16:\n    x = x.float()\n", ()),
    "not_equal_guards": ("if x.dtype != torch.bfloat16:\n    print(x.numpy())\nx = x.float()\n", ()),
    "is_then_early_return": ("if x.dtype is torch.bfloat16:\n    return x.float().numpy()\n", ()),
    "is_not": ("if x.dtype is not torch.bfloat16:\n    pass\nelse:\n    x = x.float()\n", ()),
    "in_tuple": ("if x.dtype in (torch.float16, torch.bfloat16):\n    x = x.float()\n", ()),
    "negated": ("if not x.dtype == torch.bfloat16:\n    pass\nelse:\n    x = x.float()\n", ()),
    "name_holding_dtype": (("dt = torch.bfloat16 if flag else torch.float32\nif dt == torch.bfloat16:\n"
                           "    dt = torch.float32\nx = x.to(dt)\n"), ()),
    "assert": ("x = x.float() if x.dtype == torch.bfloat16 else x\nassert x.dtype != torch.bfloat16\n", ()),
    # Tests that leave bfloat16 possible: still flagged, and they raise.
    "other_dtype": ("if x.dtype == torch.float16:\n    x = x.float()\n", (0,)),
    "not_in_other": ("if x.dtype not in (torch.float16,):\n    pass\nelse:\n    x = x.float()\n", (0,)),
    "unknown_member": ("if x.dtype in (torch.float16, other):\n    x = x.float()\n", (0,)),
    "body_only": ("if x.dtype == torch.bfloat16:\n    print(x.numpy())\n", (1, 0)),
}


@pytest.mark.parametrize("case", sorted(_DTYPE_TESTS))
def test_a_dtype_test_narrows_what_the_tensor_may_be(case: str) -> None:
    """`if x.dtype == torch.bfloat16: x = x.float()` is how bfloat16 conversions are fixed (a real
    review's false positives): behind such a test x is no longer bfloat16. A test that leaves
    bfloat16 possible keeps the diagnostic. Each program runs with torch: flagged iff it raises."""
    import ast
    import textwrap

    from flake8_detach.engine import check_source

    torch = pytest.importorskip("torch")
    body, back = _DTYPE_TESTS[case]
    raises = bool(back)
    source = ("import torch\n\n\ndef convert(flag, other=None):\n"
              "    x = torch.ones(2, dtype=torch.bfloat16) if flag else torch.ones(2)\n"
              + textwrap.indent(body, "    ") + "    return x.numpy()\n")
    flagged = {(d.line, d.code) for d in check_source(source, tree=ast.parse(source))}
    last = source.count("\n")
    assert flagged == {(last - offset, "DET107") for offset in back}, (case, flagged)
    namespace: dict[str, object] = {}
    exec(compile(source, case, "exec"), namespace)  # noqa: S102 - the claim is about run time
    convert = namespace["convert"]
    convert(False)  # type: ignore[operator]
    if raises:
        with pytest.raises(TypeError, match="BFloat16"):
            convert(True, torch.float32)  # type: ignore[operator]
    else:
        convert(True, torch.float32)  # type: ignore[operator]


_VIEW_PROGRAMS = {
    # name: (program, flagged, the error it raises when flagged)
    "view_as_int16": ("t = torch.randn(4).bfloat16()\nt.view(torch.int16).numpy()\n", False),
    "view_as_int16_then_numpy_view": (
        "t = torch.randn(4).bfloat16()\nt.view(torch.int16).numpy().view(np.uint16).tobytes()\n", False),
    "view_shape_keeps_bfloat16": ("t = torch.randn(4).bfloat16()\nt.view(-1).numpy()\n", True),
    "view_as_float16": ("t = torch.randn(4).bfloat16()\nt.view(torch.float16).numpy()\n", False),
}


@pytest.mark.parametrize("case", sorted(_VIEW_PROGRAMS))
def test_view_with_a_dtype_reinterprets_the_bytes(case: str) -> None:
    """Flagged iff the program raises the bfloat16 TypeError on torch."""
    import ast

    from flake8_detach.engine import check_source

    pytest.importorskip("torch")
    body, flagged = _VIEW_PROGRAMS[case]
    source = "import numpy as np\nimport torch\n" + body
    found = [d.code for d in check_source(source, tree=ast.parse(source))]
    assert found == (["DET107"] if flagged else []), case
    _runs_as_claimed(source, case, TypeError("BFloat16") if flagged else None)


def _runs_as_claimed(source: str, name: str, raised: Exception | None) -> None:
    """Run a program: it raises `raised`'s type with its text in the message, or (None) it runs."""
    if raised is None:
        exec(compile(source, name, "exec"), {})  # noqa: S102 - the claim is about run time
        return
    with pytest.raises(type(raised), match=str(raised)):
        exec(compile(source, name, "exec"), {})  # noqa: S102


_LOADER_HEADER = """\
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

model = nn.Linear(3, 1)
features = np.random.rand(16, 3)
targets = np.random.rand(16)
"""
_TABULAR = """\
class Tabular(Dataset):
    def __init__(self, x, y):
        self.x = x{cast}
        self.y = y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


"""
_LOADER_PROGRAMS = {
    # name: (program after the header, flagged): flagged ones raise the float64 RuntimeError.
    "dataset_of_float64_arrays": (_TABULAR.format(cast="") + "for xb, yb in DataLoader(Tabular(features, targets), batch_size=4):\n    model(xb)\n", True),
    "dataset_cast_to_float32": (_TABULAR.format(cast=".astype(np.float32)")
                                + "for xb, yb in DataLoader(Tabular(features, targets), batch_size=4):\n    model(xb)\n", False),
    "loader_in_a_name": (_TABULAR.format(cast="")
                         + "loader = DataLoader(Tabular(features, targets), batch_size=4, shuffle=True)\n"
                         + "for xb, yb in loader:\n    model(xb)\n", True),
    "batch_converted": (_TABULAR.format(cast="") + "for xb, yb in DataLoader(Tabular(features, targets)):\n    model(xb.float())\n", False),
    "tensor_dataset_float64": (("data = TensorDataset(torch.from_numpy(features), torch.from_numpy(targets))\n"
                               "for xb, yb in DataLoader(data, batch_size=4):\n    model(xb)\n"), True),
    "tensor_dataset_float32": (("data = TensorDataset(torch.from_numpy(features).float(), torch.from_numpy(targets))\n"
                               "for xb, yb in DataLoader(data, batch_size=4):\n    model(xb)\n"), False),
    "list_of_pairs": (("pairs = [(features[i], targets[i]) for i in range(16)]\n"
                      "for xb, yb in DataLoader(pairs, batch_size=4):\n    model(xb)\n"), True),
    "dict_items": (_TABULAR.format(cast="").replace("return self.x[index], self.y[index]",
                                                     'return {"x": self.x[index], "y": self.y[index]}')
                   + "for batch in DataLoader(Tabular(features, targets), batch_size=4):\n    model(batch['x'])\n", True),
    "dict_items_cast": (_TABULAR.format(cast=".astype(np.float32)").replace("return self.x[index], self.y[index]",
                                                                            'return {"x": self.x[index], "y": self.y[index]}')
                        + "for batch in DataLoader(Tabular(features, targets), batch_size=4):\n    model(batch['x'])\n", False),
    "random_split": (_TABULAR.format(cast="") + "train, test = torch.utils.data.random_split(Tabular(features, targets), [0.5, 0.5])\n"
                     + "for xb, yb in DataLoader(train, batch_size=4):\n    model(xb)\n", True),
    "subset_cast": (_TABULAR.format(cast=".astype(np.float32)")
                    + "part = torch.utils.data.Subset(Tabular(features, targets), [0, 1, 2])\n"
                    + "for xb, yb in DataLoader(part, batch_size=4):\n    model(xb)\n", False),
    "own_collate": (_TABULAR.format(cast="") + "def collate(rows):\n"
                    "    return torch.tensor(np.stack([r[0] for r in rows]), dtype=torch.float32), None\n"
                    "for xb, yb in DataLoader(Tabular(features, targets), batch_size=4, collate_fn=collate):\n"
                    "    model(xb)\n", False),
}


@pytest.mark.parametrize("case", sorted(_LOADER_PROGRAMS))
def test_loader_batches_keep_the_dataset_dtype(case: str) -> None:
    """`default_collate` keeps a float64 item's dtype, so a float64 dataset feeds float64 batches
    to a float32 model (the most asked tabular-data crash). Each program runs: flagged iff it raises."""
    import ast

    from flake8_detach.catalog import SCREENS
    from flake8_detach.engine import check_source
    from flake8_detach.screening import has_candidates

    pytest.importorskip("torch")
    body, flagged = _LOADER_PROGRAMS[case]
    source = _LOADER_HEADER + body
    assert has_candidates(source, SCREENS, ast.parse(source))
    found = [d.code for d in check_source(source, tree=ast.parse(source))]
    assert found == (["DET109"] if flagged else []), case
    from flake8_detach.engine import Settings

    alone = Settings(select=("DET109",))  # the imports alone must pass the screen (a seventh review's find)
    assert [d.code for d in check_source(source, alone, tree=ast.parse(source))] == found
    assert [d.code for d in check_source(source, alone)] == found
    _runs_as_claimed(source, case, RuntimeError("dtype") if flagged else None)
