"""Summaries per calling context and the worklist that runs them to a fixed point
(analysis/summaries.py): results must not depend on the order of definitions or calls.

Each program is executed too: where a line is flagged, running it raises; where nothing is
flagged, it runs. The last test reverses the order of every run of consecutive function
definitions in the fixtures and asks for the same diagnostics.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from running import failing_line as run_program

from flake8_detach import check_source
from flake8_detach.analysis.summaries import MAX_CONTEXTS
from flake8_detach.settings import Settings

PREVIEW = Settings(preview=True)  # the caller-dependent code (DET111) too
PRELUDE = "import torch\n\nnet = torch.nn.Linear(3, 1)\nx = torch.ones(3)\n\n\n"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def program(body: str) -> str:
    return PRELUDE + textwrap.dedent(body).lstrip("\n")


def flagged(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check_source(source, PREVIEW)]


def line_of(source: str, text: str) -> int:
    """The 1-based line holding `text` (the line a diagnostic must be on)."""
    return next(number for number, line in enumerate(source.splitlines(), 1) if text in line)


def failing_line(source: str) -> int | None:
    return run_program(source, "<fixpoint>")


SPECTRUM = """
def spectrum(sig):
    return sig.abs()


reference = spectrum(torch.ones(3))
print(reference.numpy())
err = spectrum(torch.randn(3, requires_grad=True))
print(err.numpy())
"""


def test_each_calling_context_has_its_own_summary() -> None:
    source = program(SPECTRUM)
    sink = line_of(source, "err.numpy()")
    assert flagged(source) == [(sink, "DET101")]
    assert failing_line(source) == sink  # the first call's `.numpy()` ran; the second raised


def test_the_order_of_the_calls_does_not_matter() -> None:
    swapped = program(SPECTRUM.replace(
        "reference = spectrum(torch.ones(3))\nprint(reference.numpy())\n", "").replace(
        "print(err.numpy())\n", "print(err.numpy())\nreference = spectrum(torch.ones(3))\nprint(reference.numpy())\n"))
    sink = line_of(swapped, "err.numpy()")
    assert flagged(swapped) == [(sink, "DET101")]
    assert failing_line(swapped) == sink


PREDICT = """
def predict(t):
    return net(t).numpy()


with torch.no_grad():
    print(predict(x))
"""


def test_the_grad_mode_at_the_call_is_part_of_the_context() -> None:
    source = program(PREDICT)
    assert flagged(source) == []
    assert failing_line(source) is None
    called_with_grad_too = source + "print(predict(x))\n"
    sink = line_of(source, "net(t).numpy()")
    assert flagged(called_with_grad_too) == [(sink, "DET101")]
    assert failing_line(called_with_grad_too) == sink


CALLER_FIRST = """
def main():
    with torch.no_grad():
        show(net(x))


def show(t):
    print(t.numpy())


main()
"""


def test_a_caller_defined_before_its_helper_is_analysed_first() -> None:
    """Both uncalled when the walk reaches them: the one that calls the other goes first."""
    source = program(CALLER_FIRST)
    assert flagged(source) == []
    assert failing_line(source) is None
    nothing_calls_main = source.replace("\nmain()\n", "\n")
    assert flagged(nothing_calls_main) == []


RECURSIVE = """
def walk(n):
    if n > 0:
        out = walk(n - 1)
        print(out.numpy())
        return out
    return net(x)


walk(1)
"""


def test_a_recursive_call_sees_the_summary_it_is_part_of() -> None:
    """The first run reads its own (empty) summary; the base case's return grows it, so the
    function is analysed again and `out` is the model output."""
    source = program(RECURSIVE)
    sink = line_of(source, "out.numpy()")
    assert flagged(source) == [(sink, "DET101")]
    assert failing_line(source) == sink


def _chain(length: int, last: str) -> str:
    functions = "".join(f"def f{i}(t):\n    return f{i + 1}(t)\n\n\n" for i in range(length - 1))
    return functions + f"def f{length - 1}(t):\n    return {last}\n\n\n"


@pytest.mark.parametrize("length", [3, 12])
def test_a_return_value_that_grows_later_reaches_the_module_statements(length: int) -> None:
    """Twelve nested calls are past the on-demand depth: the deepest summaries are analysed from
    the queue after the module read an empty result, so the module is walked again."""
    source = program(_chain(length, "net(t)") + "print(f0(x).numpy())\n")
    sink = line_of(source, "f0(x).numpy()")
    assert flagged(source) == [(sink, "DET101")]
    assert failing_line(source) == sink
    twin = program(_chain(length, "net(t).detach()") + "print(f0(x).numpy())\n")
    assert flagged(twin) == []
    assert failing_line(twin) is None


def test_past_the_bound_calls_share_one_joined_context() -> None:
    kinds = ["torch.ones(3)", "[1.0]", "3", "'a'", "torch.zeros(3).numpy()", "net"]
    assert len(kinds) > MAX_CONTEXTS
    calls = "".join(f"same({kind})\n" for kind in kinds)
    source = program("def same(v):\n    return v\n\n\n" + calls + "print(same(net(x)).numpy())\n")
    sink = line_of(source, "same(net(x)).numpy()")
    assert flagged(source) == [(sink, "DET101")]
    assert failing_line(source) == sink


# ------------------------------------------------------------ order of definitions
def _reverse_function_runs(source: str) -> str | None:
    """The module with each run of consecutive top-level `def`s in reverse order (None if no
    run has two). A function's body reads names when called, so this keeps what runs."""
    module = cst.parse_module(source)
    body = list(module.body)
    changed = False
    start = 0
    while start < len(body):
        end = start
        while end < len(body) and isinstance(body[end], cst.FunctionDef):
            end += 1
        if end - start >= 2:
            body[start:end] = reversed(body[start:end])
            changed = True
        start = end + 1 if end == start else end
    return module.with_changes(body=body).code if changed else None


def _diagnostics_by_text(source: str) -> list[tuple[str, str]]:
    lines = source.splitlines()
    return sorted((d.code, lines[d.line - 1].strip()) for d in check_source(source, PREVIEW))


def _fixtures_with_runs() -> list[Path]:
    found = []
    for path in sorted(FIXTURES.glob("det*/*.py")):
        if path.name.endswith(".fixed.py"):
            continue
        source = path.read_text(encoding="utf-8")
        if _reverse_function_runs(source) is not None:
            found.append(path)
    return found


@pytest.mark.parametrize("path", _fixtures_with_runs(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_reversing_the_order_of_definitions_gives_the_same_diagnostics(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    reversed_source = _reverse_function_runs(source)
    assert reversed_source is not None
    assert _diagnostics_by_text(reversed_source) == _diagnostics_by_text(source)
