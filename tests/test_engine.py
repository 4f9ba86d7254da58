"""The engine's answers on small sources: evidence, positions, screening and bad input."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from flake8_detach import Settings, analyze, check_source
from flake8_detach.engine import DEFAULT_SETTINGS, AnalysisError
from flake8_detach.parsing import nesting_depth


def codes(source: str, settings: Settings = Settings()) -> list[tuple[int, int, str]]:
    return [(d.line, d.column, d.code) for d in check_source(source, settings)]


def test_aliases_of_torch_resolve() -> None:
    source = (
        "import torch as T\nfrom torch import no_grad\nfrom torch.nn import functional as F\n"
        "w = T.ones(2, requires_grad=True)\n"
        "with no_grad():\n    w.numpy()\n"
        "F.relu(w).numpy()\n"
    )
    assert codes(source) == [(7, 10, "DET101")]


def test_module_without_torch_import_is_not_checked() -> None:
    source = "import tensorflow as tf\nw = tf.Variable(1.0)\nw.numpy()\ndef f(t):\n    return t.numpy()\n"
    assert codes(source) == []
    assert analyze(source).module is None  # screened out before parsing


def test_file_without_candidate_attributes_is_never_parsed() -> None:
    assert analyze("import torch\nx = torch.ones(2)\nprint(x.sum())\n").module is None


def test_from_torch_utils_data_import_is_not_a_candidate() -> None:
    source = "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader([1])\n"
    assert analyze(source).module is None


def test_column_points_at_attribute_in_multiline_chain() -> None:
    source = "import torch\nm = torch.nn.Linear(1, 1)\ny = (\n    m(torch.ones(1))\n      .cpu()\n      .numpy()\n)\n"
    assert codes(source) == [(6, 7, "DET101")]


def test_columns_are_characters_not_bytes() -> None:
    source = "import torch\nw = torch.ones(2, requires_grad=True)\nÄ = 'é'; w.numpy()\n"
    assert codes(source) == [(3, 11, "DET101")]


def test_crlf_and_lone_cr_line_endings() -> None:
    source = "import torch\r\nw = torch.ones(2, requires_grad=True)\r\n\r\nw.numpy()\r\n"
    assert codes(source) == [(4, 2, "DET101")]


def test_select_and_ignore_prefixes() -> None:
    source = "import torch\nw = torch.ones(2, requires_grad=True).cuda()\nw.numpy()\n"
    assert [c for _, _, c in codes(source)] == ["DET101", "DET104"]
    assert [c for _, _, c in codes(source, Settings(select=("DET104",)))] == ["DET104"]
    assert [c for _, _, c in codes(source, Settings(ignore=("DET10",)))] == []


def test_project_no_grad_context_from_settings() -> None:
    source = (
        "import torch\nfrom myproj.utils import evaluating\nw = torch.ones(2, requires_grad=True)\n"
        "with evaluating(w):\n    w.numpy()\n"
    )
    assert [c for _, _, c in codes(source)] == ["DET101"]
    assert codes(source, Settings(no_grad_contexts=frozenset({"myproj.utils.evaluating"}))) == []


def test_model_moved_in_place_makes_outputs_device_tensors() -> None:
    source = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.to('cuda')\n"
        "def predict(x):\n    with torch.no_grad():\n        return model(x).numpy()\n"
    )  # an input made on the CPU would stop a GPU run at the call (analysis/placement.py)
    assert [c for _, _, c in codes(source)] == ["DET104"]


def test_attributes_set_in_init_are_known_in_other_methods() -> None:
    source = (
        "import torch\nclass Wrapper:\n    def __init__(self):\n        self.net = torch.nn.Linear(2, 2)\n"
        "    def predict(self, x):\n        return self.net(x).numpy()\n"
    )
    assert [c for _, _, c in codes(source)] == ["DET101"]


def test_libcst_failure_is_an_analysis_error_not_a_crash() -> None:
    with pytest.raises(AnalysisError):
        analyze("import torch\nx = torch.ones(1)\nx.numpy(\n")


def test_flake8_never_shows_a_traceback_on_bad_input(tmp_path) -> None:
    files = {
        "syntax.py": "import torch\nx = torch.ones(1\n",
        "python2.py": "import torch\nprint 'hello'\nx.numpy()\n",
        "bom.py": "\ufeffimport torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n",
        "nested.py": "import torch\nx = torch.ones(1, requires_grad=True)\ny = " + "(" * 150 + "x" + ")" * 150 + ".numpy()\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "latin1.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9'\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
    )
    (tmp_path / "nonutf8.py").write_bytes(b"import torch\ns = '\xff\xfe'\n")
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "DET,E9", "--isolated", str(tmp_path)],
        capture_output=True, text=True, check=False,
    )
    assert "Traceback" not in result.stderr + result.stdout
    out = result.stdout
    assert "bom.py:3:3: DET101" in out
    assert "latin1.py:5:3: DET101" in out
    assert "syntax.py:" in out and "E999" in out.split("syntax.py:")[1].splitlines()[0]
    assert "python2.py:" in out and "E999" in out.split("python2.py:")[1].splitlines()[0]
    assert "nonutf8.py" not in out  # flake8 falls back to latin-1; nothing to report, no crash
    assert "nested.py:3:" in out and ("DET101" in out or "DET000" in out)  # analysed, or one clear line


def test_screen_ignores_tensor_methods_named_like_numpy_functions() -> None:
    # `x.tanh()` / `x.sum()` in a file that imports numpy are tensor methods, not np.tanh.
    source = "import numpy as np\nimport torch\nx = torch.ones(2)\nprint(x.tanh(), x.sum(), np.pi)\n"
    import ast

    assert analyze(source, tree=ast.parse(source)).module is None
    flagged = "import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True)\nnp.tanh(w)\n"
    assert [d.code for d in check_source(flagged, tree=ast.parse(flagged))] == ["DET106"]
    imported = "from numpy import asarray\nimport torch\nw = torch.ones(2, requires_grad=True)\nasarray(w)\n"
    assert analyze(imported, tree=ast.parse(imported)).module is not None


def test_screen_ignores_data_of_an_imported_module() -> None:
    """`timm.data.create_loader`, `tf.data.Dataset`: a package's `data`, not Tensor.data."""
    import ast

    source = ("import torch\nimport timm\nimport tensorflow as tf\n"
              "loader = timm.data.create_loader(None)\nds = tf.data.Dataset\n")
    assert analyze(source, tree=ast.parse(source)).module is None
    from_import = "import torch\nfrom nets import model\nmodel.data.add_(1)\n"  # may be a tensor
    assert analyze(from_import, tree=ast.parse(from_import)).module is not None


def test_screen_ignores_detach_not_after_a_device_move() -> None:
    import ast

    source = "import torch\nw = torch.ones(2, requires_grad=True)\nv = w.detach()\n"
    assert analyze(source, tree=ast.parse(source)).module is None


def test_subscript_store_through_data_is_a_write() -> None:
    source = "import torch\nm = torch.nn.Linear(2, 2)\nm.weight.data[0] = 1.0\nprint(m.data_size if False else 0)\n"
    messages = [d.message for d in check_source(source)]
    assert len(messages) == 1 and "in-place write through .data" in messages[0]


def test_helper_sink_names_the_call_that_passes_the_hazard() -> None:
    source = (
        "import torch\n\n\ndef to_numpy(tensor):\n    return tensor.numpy()\n\n\n"
        "model = torch.nn.Linear(2, 2)\nto_numpy(model(torch.ones(2)))\n"
    )
    (diagnostic,) = check_source(source)
    assert (diagnostic.line, diagnostic.code) == (5, "DET101")
    assert diagnostic.message.endswith("(the value is passed by the call on line 9)")


def test_return_value_carries_model_output_to_callers() -> None:
    source = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\n\n\ndef predict(x):\n    return model(x)\n\n\n"
        "predict(torch.ones(2)).numpy()\n"
    )
    assert [(d.line, d.code) for d in check_source(source)] == [(9, "DET101")]


def test_identity_helper_does_not_make_its_results_unknown() -> None:
    source = "import torch\n\n\ndef first(items):\n    return items[0]\n\n\nfirst([torch.zeros(2)]).numpy()\n"
    assert check_source(source) == []


def test_parse_skips_validation_only_while_parsing() -> None:
    """The parse builds libcst's nodes unvalidated (a quarter of its time); hand-built nodes
    are validated again as soon as it returns, and the tree is the one a validating parse gives."""
    import libcst as cst
    from libcst._nodes.base import CSTNode

    from flake8_detach.parsing import _VALIDATING_POST_INIT, parse

    source = "import torch\n\ndef f(x):\n    return x.detach().cpu().numpy()  # noqa\n"
    assert parse(source).deep_equals(cst.parse_module(source))
    assert CSTNode.__post_init__ is _VALIDATING_POST_INIT
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not an identifier")


def test_overlapping_parses_in_threads_restore_validation() -> None:
    from concurrent.futures import ThreadPoolExecutor

    import libcst as cst
    from libcst._nodes.base import CSTNode

    from flake8_detach.parsing import _VALIDATING_POST_INIT, parse

    sources = [f"import torch\nx{i} = torch.ones(3)\n" * 200 for i in range(16)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        modules = list(pool.map(parse, sources))
    assert all(module.code == source for module, source in zip(modules, sources))
    assert CSTNode.__post_init__ is _VALIDATING_POST_INIT
    with pytest.raises(cst.CSTValidationError):
        cst.Name("1x")


def _reference_depth(node: ast.AST) -> int:
    return 1 + max((_reference_depth(child) for child in ast.iter_child_nodes(node)), default=0)


@pytest.mark.parametrize(
    "source",
    ["", "x", "a + b", "f(x).g[y:z] = -w", "def f(*, a=1):\n    return [i for i in a if not i]\n",
     "x = " + "(" * 50 + "1" + ")" * 50 + "\n", "y = " + " + ".join(["a"] * 120) + "\n"],
)
def test_nesting_depth_counts_as_the_tree_goes_leaves_included(source: str) -> None:
    tree = ast.parse(source)
    assert nesting_depth(tree) == _reference_depth(tree)


def test_report_lines_gives_flake8_plain_values_and_leaves_no_cyclic_garbage() -> None:
    import gc

    from flake8_detach.engine import report_lines

    source = (
        "import torch\n\ndef helper(t):\n    return t.numpy()\n\nclass Box:\n    def run(self):\n"
        "        w = torch.ones(2, requires_grad=True)\n        return helper(w), w.data.numpy()\n"
    )
    expected = [(d.line, d.column, d.message) for d in check_source(source, tree=ast.parse(source))]
    assert expected
    gc.collect()
    assert report_lines(source, tree=ast.parse(source)) == expected
    assert gc.collect() == 0  # the analysis's reference cycles were collected before returning


def test_the_flake8_report_leaves_no_reference_cycles_for_the_collector() -> None:
    """The interpreter's records and the bridge's builder are released, so the tree and the
    values die by their reference counts: a collector pass finds nothing (278 objects before)."""
    import gc

    from flake8_detach.engine import _plain_report

    source = (
        "import torch\n\ndef helper(t):\n    return t.numpy()\n\nclass Box:\n    def run(self):\n"
        "        w = torch.ones(2, requires_grad=True)\n        return helper(w), w.data.numpy()\n"
    )
    gc.collect()
    gc.disable()
    try:
        found = _plain_report(source, DEFAULT_SETTINGS, ast.parse(source))
        assert [d.code for d in found] == ["DET101", "DET103"]
        assert gc.collect() == 0
    finally:
        gc.enable()


_EVERY_COMPOUND_STATEMENT = '''\
import torch
if TYPE_CHECKING: import numpy
if a:
    import x1
elif b:
    import x2
else:
    import x3
for i in y:
    import x4
else:
    import x5
while c:
    import x6
else: import x7
try:
    import x8
except ValueError:
    import x9
except (KeyError, OSError) as e: import x10
else:
    import x11
finally:
    import x12
try:
    import x13
except* TypeError:
    import x14
with open(f) as g, h:
    import x15
async def f():
    async with g:
        import x16
    async for j in k:
        import x17
@deco
class C(Base):
    import x18
    def m(self): import x19
match v:
    case [1, *rest] if rest:
        import x20
    case {"k": w}:
        import x21
    case _: import x22
'''


def test_statement_walk_reads_the_same_statements_as_libcst_children() -> None:
    """The import walk reads the statement fields directly; it must find what libcst's
    `children` finds, in the same order, for every kind of compound statement."""
    import libcst as cst

    from flake8_detach.analysis import imports

    def by_children(node: cst.CSTNode) -> list[cst.CSTNode]:
        found: list[cst.CSTNode] = []
        for child in node.children:
            if isinstance(child, cst.IndentedBlock):
                found.extend(child.body)
            elif isinstance(child, (cst.SimpleStatementSuite, *imports._BLOCK_PARTS)):
                found.append(child)
        return found

    module = cst.parse_module(_EVERY_COMPOUND_STATEMENT)
    compared, stack = 0, list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            continue
        expected = by_children(node)
        assert [id(child) for child in imports._statement_children(node)] == [id(child) for child in expected]
        compared += 1
        stack.extend(expected)
    assert compared >= 25
    lines = [line.body[0] for line in imports.iter_simple_statements(module.body)
             if isinstance(line.body[0], cst.Import)]
    assert [cst.Module([]).code_for_node(line.names[0].name) for line in lines] == [
        "torch", "numpy", *(f"x{i}" for i in range(1, 23))]


def test_exports_parse_unvalidated_and_restore_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    """A project file's exports use the engine's parse: libcst's nodes built without `_validate`
    (a quarter of the parse), validation back on as soon as it returns."""
    import libcst as cst
    from libcst._nodes.base import CSTNode

    from flake8_detach.analysis.exports import compute_exports
    from flake8_detach.parsing import _VALIDATING_POST_INIT

    validated: list[str] = []
    original = cst.Name._validate

    def counting(node: cst.Name) -> None:
        validated.append(node.value)
        original(node)

    monkeypatch.setattr(cst.Name, "_validate", counting)
    source = "import torch\nfrom torch import nn\n\ndef make():\n    return nn.Linear(2, 2)(torch.ones(2))\n"
    exports = compute_exports(source, None)
    assert exports["returns"]["make"][0] != 0
    assert validated == []
    assert CSTNode.__post_init__ is _VALIDATING_POST_INIT
    cst.parse_module(source)  # libcst's own parse validates: the spy sees it
    assert "make" in validated


# The screen's text tests as first written (one alternation each): slow, since `re` cannot scan
# for their first characters, and the reference the faster forms must agree with.
_REFERENCE_LAYOUT_TEXT = (r"::\s*-\s*\d|[\[,][^\[\]:,\n]*:[^\[\]:,\n]*:\s*-\s*\d|(?:\b(?:np|numpy)\.|(?<![.\w]))"
                          r"(?:flip(?:lr|ud)?|rot90)\s*\(|newbyteorder|[\"']>[a-zA-Z]")
_REFERENCE_FLOAT64_TEXT = r"float64|double|DoubleTensor|\bnumpy\b"


@pytest.mark.parametrize("code, reference", [("DET108", _REFERENCE_LAYOUT_TEXT), ("DET109", _REFERENCE_FLOAT64_TEXT)])
def test_screen_text_tests_find_what_their_reference_pattern_finds(code: str, reference: str) -> None:
    import random
    import re
    from pathlib import Path

    from flake8_detach.catalog import SCREENS_BY_CODE

    test = SCREENS_BY_CODE[code].required_text
    assert test is not None
    pattern = re.compile(reference)
    samples = ["flip(", "np.flip(a)", "numpy.flip (a)", "x.flip(0)", "myflip(a)", "_flip(", "fliplr(a)",
               "np.fliplr(", "rot90(", "np.rot90(", "a.rot90(", "xrot90(", "anp.flip(", "snumpy.flip(",
               "(flip(", " flipud (", "\nflip(", "a[::-1]", "a[5:0:-2]", "a[:-1]", "a[1:2, ::- 3]", "'>f4'",
               "x.newbyteorder()", "import numpy", "anumpy", "numpy_x", "xfloat64", "double", "Double"]
    rnd = random.Random(23)
    alphabet = list("fliprot90udnumpy.( _a:[],-1'\">\nxdbeD64")
    samples += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 16))) for _ in range(30000)]
    samples += [path.read_text(encoding="utf-8") for path in Path(__file__).parent.rglob("*.py")]
    mismatched = [text for text in samples if bool(test.search(text)) != bool(pattern.search(text))]
    assert mismatched == []


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the source holds `match` and `except*`")
def test_screen_statement_walk_is_ast_walk_without_expressions() -> None:
    """The screen reads imports from statements only; in `ast.walk`'s order, so that a name
    imported twice resolves as before."""
    from flake8_detach.screen_context import ScreenContext, statements

    tree = ast.parse(_EVERY_COMPOUND_STATEMENT + "import numpy as x1\n")
    kinds = (ast.Module, ast.stmt, ast.excepthandler, ast.match_case)
    expected = [id(node) for node in ast.walk(tree) if isinstance(node, kinds)]
    assert [id(node) for node in statements(tree)] == expected
    aliases = ScreenContext(tree).aliases
    assert set(aliases) == {"torch", "numpy", *(f"x{i}" for i in range(1, 23))}
    assert aliases["x1"] == "x1"  # the nested import comes later in `ast.walk`'s order


_STRING_LITERALS = [
    '"cuda"', "'cpu'", '""', "''", '""""""', "''''''", '"""a "quoted" word"""', "'''it's'''", '"\'\'\'"',
    'r"\\d+"', 'R"\\n"', 'u"x"', 'U"x"', 'b"bytes"', 'rb"\\x"', 'Br"x"', '"tab\\there"', '"\\u00e9"',
    '"""two\r\nlines"""', '"""two\nlines"""', "'>f4'", '"\\N{DEGREE SIGN}"', '"bad \\z escape"',
]


@pytest.mark.parametrize("literal", _STRING_LITERALS)
def test_string_value_is_libcsts_evaluated_value(literal: str) -> None:
    """The fast string value agrees with libcst's (which compiles each string), errors included."""
    import warnings

    import libcst as cst

    from flake8_detach.analysis.syntax import string_value

    node = cst.parse_expression(literal)
    assert isinstance(node, cst.SimpleString)

    def outcome(read: object) -> tuple[str, object]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ("value", read())  # type: ignore[operator]
        except Exception as error:  # noqa: BLE001 - the same failure is part of the contract
            return ("error", type(error))

    assert outcome(lambda: string_value(node)) == outcome(lambda: node.evaluated_value)
