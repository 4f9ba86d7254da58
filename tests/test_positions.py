"""Positions of reported nodes, checked against libcst's own PositionProvider."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from flake8_detach import positions
from flake8_detach.engine import analyze, parse

SOURCES = {
    "plain": "import torch\n\nx = torch.ones(2)\ny = x.numpy()\n",
    "semicolons and comments": "# header\nimport torch\n\n\n# a comment\na = 1; b = torch.ones(2)\nb.numpy()  # noqa: E1\n",
    "decorators": (
        "import torch\n\n\n# before\n@staticmethod\n\n# between\n@property\ndef f(t):\n    return t.numpy()\n\n"
        "class A:\n    @property\n    def g(self):\n        return self.t.data\n"
    ),
    "crlf": "import torch\r\n\r\nx = torch.ones(2, requires_grad=True)\r\nx.numpy()\r\n",
    "no trailing newline": "import torch\nx = torch.ones(2, requires_grad=True)\nx.numpy()",
    "continuations": "import torch\nx = (torch.ones(2,\n   requires_grad=True))\\\n  .numpy()\nif x:\n    pass\nelse:\n    x.numpy()\n",
    "tabs and unicode": "import torch\n\ndef f():\n\tß = torch.ones(2, requires_grad=True)\n\treturn ß.numpy()\n",
    "lambda called later": (
        "import torch\nconvert = lambda t: t.numpy()\n\n\ndef run():\n"
        "    return convert(torch.ones(2, requires_grad=True))\n"
    ),
}


def _names(module: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
                found.append(node)
            return True

    module.visit(Collect())
    return found


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_statement_positions_agree_with_libcst(name: str) -> None:
    source = SOURCES[name]
    module = parse(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    truth = wrapper.resolve(PositionProvider)
    nodes = _names(module)
    top = {node: index for index, statement in enumerate(module.body) for node in _names(statement)}
    found = positions.statement_start_positions(module, nodes, top, source, ast.parse(source))
    assert found == positions.start_positions(module, nodes)
    # A parenthesized node starts at its "(" for us (where flake8 would point), after it for libcst.
    unparenthesized = [node for node in nodes if not getattr(node, "lpar", ())]
    assert {node: found[node] for node in unparenthesized} == {
        node: (truth[node].start.line, truth[node].start.column) for node in unparenthesized
    }


def test_statement_positions_generate_only_the_statements_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    source = "import torch\n" + "".join(f"v{i} = torch.ones({i})\n" for i in range(50)) + "v3.numpy()\n"
    module = parse(source)
    target = module.body[-1]
    whole: list[object] = []

    def whole_module(*args: object) -> dict[cst.CSTNode, tuple[int, int]]:
        whole.append(args)
        return {}

    monkeypatch.setattr(positions, "start_positions", whole_module)
    node = _names(target)[0]
    assert positions.statement_start_positions(module, [node], {node: 51}, source, ast.parse(source)) == {
        node: (52, 0)
    }
    assert not whole


SOURCE = "import torch\nx = torch.ones(2)\nx.numpy()\n"


@pytest.mark.parametrize(
    ("index", "tree_text", "text"),
    [
        (0, SOURCE, SOURCE),  # the node is not in the statement named
        (2, "import torch\nx = 1\n", SOURCE),  # a tree of another text
        (2, SOURCE, "\n" + SOURCE),  # lines shifted
    ],
)
def test_any_doubt_falls_back_to_the_whole_module(index: int, tree_text: str, text: str) -> None:
    module = parse(SOURCE)
    node = _names(module.body[2])[0]
    found = positions.statement_start_positions(module, [node], {node: index}, text, ast.parse(tree_text))
    assert found == {node: (3, 0)}


def test_analysis_with_a_tree_reports_the_same_positions() -> None:
    source = SOURCES["decorators"] + SOURCES["continuations"] + "".join(SOURCES["lambda called later"].split("\n", 1)[1:])
    without = analyze(source)
    with_tree = analyze(source, tree=ast.parse(source))
    assert with_tree.diagnostics
    assert [(d.code, d.line, d.column) for d in with_tree.diagnostics] == [
        (d.code, d.line, d.column) for d in without.diagnostics
    ]
