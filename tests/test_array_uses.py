"""The array-use analysis: what happens to the array a `.numpy()` call makes (read, written, escapes)."""

from __future__ import annotations

import libcst as cst
import pytest

from flake8_detach.analysis.array_uses import ESCAPES, READ, WRITTEN, ArrayUse, array_use, line_of
from flake8_detach.analysis.facts import Facts
from flake8_detach.analysis.imports import ImportTable
from flake8_detach.analysis.interpreter import Interpreter

HEADER = "import numpy as np\nimport torch\nimport matplotlib.pyplot as plt\nimport pandas as pd\nt = torch.ones(2, 3)\n"


def analysed(body: str) -> tuple[Facts, cst.Call]:
    module = cst.parse_module(HEADER + body)
    facts = Interpreter(module, ImportTable.from_module(module)).run()
    (call,) = facts.method_calls["numpy"][:1]
    return facts, call


def use_of_first_conversion(body: str) -> ArrayUse:
    facts, call = analysed(body)
    return array_use(call, facts)


CASES = [
    # read only
    ("bare expression", "t.numpy()\n", READ),
    ("method that copies", "a = t.numpy()\nb = a.copy()\nb[0] = 1\n", READ),
    ("reductions and tolist", "a = t.numpy()\nprint(a.mean(), a.tolist(), a.astype('float64'))\n", READ),
    ("arithmetic and comparison", "a = t.numpy()\nb = a * 2 + 1\nc = a > 0\nb[0] = 5\n", READ),
    ("numpy function making a new array", "a = t.numpy()\nb = np.exp(a)\nb[0] = 1\n", READ),
    ("print len float", "a = t.numpy()\nprint(a)\nlen(a)\nfloat(a[0, 0])\n", READ),
    ("matplotlib", "a = t.numpy()\nplt.plot(a)\nfig, ax = plt.subplots()\nax.imshow(a)\n", READ),
    ("torch.tensor copies", "a = t.numpy()\nb = torch.tensor(a)\nb.add_(1)\n", READ),
    ("pandas constructor", "df = pd.DataFrame(t.numpy())\ndf.iloc[0, 0] = 3\n", READ),
    ("list of arrays to a numpy function", "a = t.numpy()\nb = np.concatenate([a, a])\nb[0] = 1\n", READ),
    ("advanced indexing copies", "a = t.numpy()\nb = a[[0, 1]]\nb[0] = 1\n", READ),
    ("f-string", "a = t.numpy()\nprint(f'{a}')\n", READ),
    ("TensorBoard", ("from torch.utils.tensorboard import SummaryWriter\nwriter = SummaryWriter()\n"
                     "writer.add_histogram('w', t.numpy(), 0)\n"), READ),
    ("rebound by a tuple target", "a = t.numpy()\na, b = 1, 2\nprint(a)\n", READ),
    ("a write before the binding is another value", "a = np.zeros(3)\na[0] = 1\na = t.numpy()\nprint(a)\n", READ),
    ("the source of an augmented assignment", "a = t.numpy()\nb = np.zeros((2, 3))\nb += a\n", READ),
    # written
    ("item assignment", "a = t.numpy()\na[0, 0] = 100.0\n", WRITTEN),
    ("augmented assignment", "a = t.numpy()\na += 1\n", WRITTEN),
    ("in-place method", "a = t.numpy()\na.fill(0)\n", WRITTEN),
    ("sort in place", "a = t.numpy()\na.sort()\n", WRITTEN),
    ("directly", "t.numpy()[0] = 1\n", WRITTEN),
    ("view by attribute", "a = t.numpy()\nv = a.T\nv[0] = 1\n", WRITTEN),
    ("view by method", "a = t.numpy().reshape(3, 2)\na[0] = 1\n", WRITTEN),
    ("view by basic slice", "a = t.numpy()\nrow = a[0]\nrow[:] = 0\n", WRITTEN),
    ("view by np.asarray", "a = np.asarray(t.numpy())\na[0] = 1\n", WRITTEN),
    ("second name", "a = t.numpy()\nb = a\nb *= 2\n", WRITTEN),
    ("np.copyto", "a = t.numpy()\nnp.copyto(a, np.zeros((2, 3)))\n", WRITTEN),
    ("out=", "a = t.numpy()\nnp.add(a, 1, out=a)\n", WRITTEN),
    ("torch.from_numpy then in-place", "a = t.numpy()\ntorch.from_numpy(a).add_(1)\n", WRITTEN),
    ("write in a loop body before the binding", "for i in range(2):\n    if i:\n        a[0] = 1\n    a = t.numpy()\n", WRITTEN),
    ("rebound before the write (counted as written)", "a = t.numpy()\na = a * 2\na[0] = 1\n", WRITTEN),
    ("rows of a for loop", "for row in t.numpy():\n    row[0] = 1\n", WRITTEN),
    ("unpacked rows", "first, second = t.numpy()\nfirst[0] = 1\n", WRITTEN),
    ("in a function", "def f(x):\n    a = x.numpy()\n    a[0] = 1\n    return a.sum()\n", WRITTEN),
    ("written and returned", "def f(x):\n    a = x.numpy()\n    a[0] = 1\n    return a\n", WRITTEN),
    # escapes
    ("returned", "def f(x):\n    return x.numpy()\n", ESCAPES),
    ("returned through a name", "def f(x):\n    a = x.numpy()\n    return a\n", ESCAPES),
    ("yielded", "def f(x):\n    yield x.numpy()\n", ESCAPES),
    ("attribute", "class C:\n    def f(self, x):\n        self.a = x.numpy()\n", ESCAPES),
    ("container", "out = {}\nout['a'] = t.numpy()\n", ESCAPES),
    ("list append", "arrays = []\narrays.append(t.numpy())\n", ESCAPES),
    ("user function", "def keep(a):\n    pass\nkeep(t.numpy())\n", ESCAPES),
    ("library not in the table", "import scipy.ndimage\nscipy.ndimage.gaussian_filter(t.numpy(), 1)\n", ESCAPES),
    ("captured by a nested function", "def f(x):\n    a = x.numpy()\n    def g():\n        return a\n    return g\n", ESCAPES),
    ("captured by a lambda", "a = t.numpy()\ng = lambda: a\n", ESCAPES),
    ("second name escapes", "def f(x):\n    a = x.numpy()\n    b = a\n    return b\n", ESCAPES),
    ("global", "def f(x):\n    global a\n    a = x.numpy()\n", ESCAPES),
    ("tuple returned", "def f(x):\n    return x.numpy(), 1\n", ESCAPES),
]


@pytest.mark.parametrize(("body", "expected"), [(body, kind) for _, body, kind in CASES], ids=[name for name, _, _ in CASES])
def test_array_use(body: str, expected: str) -> None:
    use = use_of_first_conversion(body)
    assert use.kind == expected, use


def test_the_write_is_named_with_its_line() -> None:
    facts, call = analysed("w = t.numpy()\nprint(w)\nw[0, 0] = 100.0\n")
    use = array_use(call, facts)
    assert use.kind == WRITTEN
    assert use.what == "'w' is written"
    assert line_of(facts, use.node) == HEADER.count("\n") + 3


def test_an_escape_says_how() -> None:
    use = use_of_first_conversion("def f(x):\n    return x.numpy()\n")
    assert (use.what, use.who) == ("is returned", "by the caller")
    use = use_of_first_conversion("def keep(a):\n    pass\nkeep(t.numpy())\n")
    assert (use.what, use.who) == ("is passed to keep()", "by keep()")
