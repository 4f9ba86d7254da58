"""Exports computed for a question (analysis/demand.py): which definitions they analyse, and that
what they cover equals what the whole file's export says."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flake8_detach.analysis.demand import wanted_definitions
from flake8_detach.analysis.exports import compute_exports

ROOT = Path(__file__).resolve().parent.parent

SHARED = """\
import torch

HISTORY = []
counter = 0


def fill(net, x):
    HISTORY.append(net(x))


def read():
    return HISTORY[-1]


def bump():
    global counter
    counter += 1


def unrelated(x):
    return x * 2


class Base(torch.nn.Module):
    def setup(self, x):
        self.buffer = x


class Net(Base):
    def forward(self, x):
        return self.buffer + x


def make():
    return Net()


class Other:
    pass
"""


def wanted(source: str, *roots: str) -> set[str]:
    return set(wanted_definitions(ast.parse(source), source, roots))


def test_a_function_alone_needs_only_itself() -> None:
    assert wanted(SHARED, "unrelated") == {"unrelated"}


def test_a_module_list_filled_by_one_function_joins_its_readers() -> None:
    assert wanted(SHARED, "read") == {"read", "fill"}


def test_a_global_counter_is_shared_state() -> None:
    source = SHARED + "\n\ndef show():\n    return counter\n"
    assert wanted(source, "show") == {"show", "bump"}


def test_a_class_brings_its_bases_and_what_names_it() -> None:
    # Base's methods write the fields Net inherits; make() instantiates Net (its calls give contexts).
    assert wanted(SHARED, "Net") == {"Net", "Base", "make"}
    assert "Other" not in wanted(SHARED, "Net")


def test_roots_that_are_no_definition_are_ignored() -> None:
    assert wanted(SHARED, "torch", "nowhere") == set()


def _definitions(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:  # newer syntax than this Python's: exports nothing either way
        return []
    return [statement.name for statement in tree.body
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


SAMPLES = sorted(path for folder in ("fixtures", "examples") for path in (ROOT / folder).rglob("*.py")
                 if _definitions(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda path: str(path.relative_to(ROOT)))
def test_an_export_for_one_definition_equals_the_whole_files_on_what_it_covers(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    names = _definitions(source)
    whole = compute_exports(source, None)
    assert whole["covered"] is None
    for name in names:
        part = compute_exports(source, None, frozenset({name}))
        covered = set(part["covered"])
        assert name in covered
        for table in ("returns", "fields"):
            expected = {key: value for key, value in whole[table].items() if key.split(".")[0] in covered}
            assert part[table] == expected, (name, table)


def test_a_hook_nested_in_a_function_the_question_calls_is_still_analysed() -> None:
    """The hook's own analysis (a callback: callers unknown) fills the dict the caller returns."""
    source = """\
import torch


def activations(model, x):
    found = {}

    def hook(module, inputs, output):
        found["out"] = output.detach().numpy()

    model.register_forward_hook(hook)
    model(x)
    return found


def values(model, x):
    with torch.no_grad():
        return activations(model, x)
"""
    whole = compute_exports(source, None)
    part = compute_exports(source, None, frozenset({"values"}))
    assert part["covered"] == ["values"]
    assert part["returns"]["values"] == whole["returns"]["values"]
    assert part["returns"]["values"][1]  # the dict's elements: arrays
