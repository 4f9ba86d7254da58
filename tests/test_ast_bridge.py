"""The libcst tree built from `ast` (flake8_detach/ast_bridge.py) against libcst's own parse.

Two checks, over every fixture and every file of this repository's code, and over a table of
constructs that the two trees spell differently: the trees agree once whitespace, parentheses
and punctuation are set aside, and the flake8 front (which analyses the bridged tree) reports
exactly what the libcst tree gives, positions included.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import libcst as cst
import pytest
from conftest import FIXTURES, REPO

from flake8_detach import engine
from flake8_detach.ast_bridge import BridgedModule, Unbridgeable, bridge
from flake8_detach.settings import Settings
from flake8_detach.sources.notebooks import NotebookError, NotebookSkipped, read_notebook

ALL_RULES = Settings(preview=True)
# Layout, not meaning: the analysis never reads these fields.
LAYOUT = frozenset({
    "lpar", "rpar", "leading_lines", "header", "footer", "comma", "equal", "semicolon", "colon",
    "lines_after_decorators", "trailing_whitespace", "first_colon", "second_colon", "dot", "lbracket",
    "rbracket", "lbrace", "rbrace", "indent", "encoding", "default_indent", "default_newline",
    "has_trailing_newline", "whitespace_after_type_parameters", "type_parameters",
})
STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def shape(node: Any) -> Any:
    """What the analysis can read of a libcst node, as nested tuples."""
    if isinstance(node, (list, tuple)):
        return tuple(item for part in node for item in _flattened(part))
    if isinstance(node, cst.MaybeSentinel) or node == "":
        return None
    if not isinstance(node, cst.CSTNode):
        return node
    if isinstance(node, STRINGS):
        return _string_shape(node)
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return type(node).__name__, ast.literal_eval(node.value)
    if isinstance(node, cst.Else) and len(node.body.body) == 1 and isinstance(node.body.body[0], cst.If):
        return shape(node.body.body[0])  # `else: if` and `elif` are one thing to ast
    if isinstance(node, (cst.SimpleStatementSuite, cst.IndentedBlock)):
        return "block", shape(node.body)
    if isinstance(node, cst.Parameters):
        return "params", shape(node.posonly_params), shape(node.params), shape(node.star_arg), \
            shape(node.kwonly_params), shape(node.star_kwarg)
    fields = [field.name for field in dataclasses.fields(node)]  # type: ignore[arg-type]
    return (type(node).__name__,) + tuple(
        (name, shape(getattr(node, name))) for name in fields
        if name not in LAYOUT and not name.startswith("whitespace"))


def _flattened(node: Any) -> list[Any]:
    if isinstance(node, cst.SimpleStatementLine):  # `a = 1; b = 2` is two statements to ast
        return [shape(small) for small in node.body]
    if isinstance(node, cst.Dot):
        return ["."]
    return [shape(node)]


def _string_shape(node: cst.BaseExpression) -> Any:
    expressions = [shape(part.expression) for part in _formatted_parts(node)]
    if expressions or isinstance(node, cst.FormattedString) or _has_fstring(node):
        return "f-string", tuple(expressions)
    return "str", node.evaluated_value  # type: ignore[attr-defined]


def _has_fstring(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.FormattedString):
        return True
    return isinstance(node, cst.ConcatenatedString) and (_has_fstring(node.left) or _has_fstring(node.right))


def _formatted_parts(node: cst.CSTNode) -> list[cst.FormattedStringExpression]:
    if isinstance(node, cst.ConcatenatedString):
        return _formatted_parts(node.left) + _formatted_parts(node.right)
    if isinstance(node, cst.FormattedString):
        found = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                found.append(part)
                found += [inner for spec in part.format_spec or () for inner in _formatted_parts_of(spec)]
        return found
    return []


def _formatted_parts_of(part: cst.CSTNode) -> list[cst.FormattedStringExpression]:
    return [part] if isinstance(part, cst.FormattedStringExpression) else []


def bridged(source: str) -> BridgedModule:
    return bridge(ast.parse(source), source)


CONSTRUCTS = [
    "if a:\n    x = 1\nelif b:\n    x = 2\nelse:\n    if c:\n        x = 3\n",
    "y = a[(1, 2)]\nz = a[1, 2]\nw = img[:, :, ::-1]\nv = a[1:2, ..., None]\nu = a[()]\n",
    "s = 'a' 'b'\nt = f'{x!r:>{width}} and {y}'\nr = rb'\\d'\nq = 'é'\nn = -1.5e-3 + 2j\n",
    "f(a=1, *rest)\ng(*a, b, **k)\nh(x for x in y if x)\n",
    "def f(a, /, b=1, *c, d, e=2, **g) -> int:\n    return a\nlam = lambda p, *q, r=3, **s: p\n",
    "def k(*, only):\n    pass\n",
    "@dec\n@dec2(1)\nasync def g():\n    async with a as (b, c):\n        async for i in j:\n            await i\n",
    "class C(Base, metaclass=M):\n    x: int = 1\n    y: str\n",
    "def gen():\n    yield\n    yield 1\n    yield from other()\n    global G\n",
    "def outer():\n    v = 1\n    def inner():\n        nonlocal v\n        v += 1\n",
    "try:\n    pass\nexcept (A, B) as e:\n    raise C from e\nexcept D:\n    raise\nelse:\n    pass\nfinally:\n    del a, b\n",
    "try:\n    pass\nexcept* E:\n    pass\n",
    "from . import a\nfrom ..pkg.mod import b as c, d\nfrom x import *\nimport os.path as p, sys\n",
    "a = 1; b = 2\nif x: y = 3\nwhile t: break\nelse: continue_ = 1\nfor i in r: continue\n",
    "z = a < b <= c is not d not in e\nw = not a and b and c or d\nv = (a if b else c)\nu = (n := 5)\n",
    "d = {1: 2, **other}\ns = {1, *rest}\nl = [*a, b]\nt = *a, b\nc = {k: v for k, v in x.items() if k for _ in y}\n",
    "a, *b = c\n[d, e] = f\nx = y = z\nx[0] @= m\nx.attr **= 2\nassert x, 'message'\n",
]


@pytest.mark.parametrize("source", CONSTRUCTS)
def test_constructs_build_the_tree_libcst_parses(source: str) -> None:
    assert shape(bridged(source).module) == shape(cst.parse_module(source))


def _repository_sources() -> list[Path]:
    paths = sorted((REPO / "flake8_detach").rglob("*.py")) + sorted(FIXTURES.rglob("*.py"))
    return paths + sorted((REPO / "tests").glob("*.py")) + sorted((REPO / "benchmarks").rglob("*.py"))


def _text(path: Path) -> str:
    return read_notebook(path).source if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")


def test_every_file_here_builds_the_tree_libcst_parses() -> None:
    differing = []
    for path in _repository_sources():
        source = _text(path)
        try:
            built = bridged(source)
        except (SyntaxError, Unbridgeable):
            continue  # fixtures of broken files; what the bridge declines is libcst's (tested below)
        if shape(built.module) != shape(cst.parse_module(source)):
            differing.append(str(path.relative_to(REPO)))
    assert differing == []


def _lint_files() -> list[Path]:
    return sorted(FIXTURES.rglob("*.py")) + sorted(FIXTURES.rglob("*.ipynb"))


@pytest.mark.parametrize("path", _lint_files(), ids=lambda path: str(path.relative_to(FIXTURES)))
def test_flake8_front_reports_what_the_libcst_tree_gives(path: Path) -> None:
    try:
        source = _text(path)
    except (NotebookError, NotebookSkipped) as error:
        pytest.skip(f"no Python to analyse: {error}")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        pytest.skip("not Python: the front reports the syntax error before any analysis")
    try:
        expected = [dataclasses.replace(d, fix=None) for d in engine.analyze(source, ALL_RULES).diagnostics]
    except engine.AnalysisError as error:
        with pytest.raises(engine.AnalysisError, match=str(error)[:30]):
            engine.report_diagnostics(source, ALL_RULES, tree)
        return
    assert engine.report_diagnostics(source, ALL_RULES, tree) == expected


NON_ASCII = """\
import torch
x = torch.ones(2, requires_grad=True)
label = "é→"; y = x.numpy()
"""


def test_columns_count_characters_not_bytes() -> None:
    tree = ast.parse(NON_ASCII)
    reported = engine.report_diagnostics(NON_ASCII, ALL_RULES, tree)
    assert [(d.code, d.line, d.column) for d in reported] == [("DET101", 3, 20)]
    assert NON_ASCII.splitlines()[2][20:25] == "numpy"  # the 2 characters before are 5 bytes
    assert [(d.line, d.column) for d in engine.analyze(NON_ASCII, ALL_RULES).diagnostics] == [(3, 20)]


MATCHING = """\
import torch
x = torch.ones(2, requires_grad=True)
match x.dim():
    case 1:
        y = x.numpy()
"""


def test_what_the_bridge_declines_is_analysed_on_libcsts_tree() -> None:
    with pytest.raises(Unbridgeable):
        bridged(MATCHING)
    reported = engine.report_diagnostics(MATCHING, ALL_RULES, ast.parse(MATCHING))
    assert [(d.code, d.line) for d in reported] == [("DET101", 5)]


def test_a_node_without_an_ast_position_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    source = (FIXTURES / "det101" / "flag_requires_grad_leaf.py").read_text()
    expected = engine.report_diagnostics(source, ALL_RULES, ast.parse(source))
    assert expected
    monkeypatch.setattr(BridgedModule, "start", lambda self, node: None)
    assert engine.report_diagnostics(source, ALL_RULES, ast.parse(source)) == expected


def test_a_lone_carriage_return_is_left_to_libcst() -> None:
    source = "import torch\rx = torch.ones(1)\n"
    with pytest.raises(Unbridgeable):
        bridged(source)
