"""The committed docs are what `scripts/generate_docs.py` makes now: rule pages, figures, evidence.

Pages need only the rule classes and the committed evidence. Figures are redrawn from real runs
(torch), compared as DOT always and as SVG where Graphviz's `dot` is installed in the version
that drew the committed files; each comparison that cannot run is skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from flake8_detach.explain import EVIDENCE_PATH, load_evidence
from flake8_detach.rules import ALL_RULES

REPO = Path(__file__).resolve().parent.parent
REGENERATE = "run `python scripts/generate_docs.py` and commit the result"
REGENERATE_EVIDENCE = "run `python scripts/generate_docs.py --evidence` and commit the result"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_docs", REPO / "scripts" / "generate_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_docs"] = module
    spec.loader.exec_module(module)
    return module


generate_docs = load_generator()


def assert_current(generated: dict[str, str], root: Path = REPO) -> None:
    stale = generate_docs.stale(root, generated)
    assert not stale, f"out of date: {', '.join(stale)}; {REGENERATE}"


def test_rule_pages_are_current() -> None:
    assert_current(generate_docs.generated_pages(REPO, load_evidence()))


def test_every_rule_has_a_page_and_no_page_outlives_its_rule() -> None:
    pages = sorted(p.stem for p in (REPO / "docs" / "rules").glob("DET*.md"))
    assert pages == sorted(rule.code for rule in ALL_RULES), REGENERATE


def test_evidence_covers_exactly_the_fixtures_on_disk() -> None:
    evidence = load_evidence()
    assert evidence is not None, REGENERATE_EVIDENCE
    on_disk = {
        p.relative_to(REPO).as_posix()
        for rule in ALL_RULES
        for p in (REPO / "fixtures" / rule.code.lower()).glob("*.py")
        if not p.name.endswith(".fixed.py")
    }
    recorded = {row.fixture for rows in evidence.observations.values() for row in rows}
    assert recorded == on_disk, (
        f"missing: {sorted(on_disk - recorded)}, gone: {sorted(recorded - on_disk)}; {REGENERATE_EVIDENCE}"
    )


def test_committed_evidence_matches_a_fresh_verify_run() -> None:
    """The evidence is what the harness observes, not text: re-run two fixtures and compare."""
    pytest.importorskip("torch", reason="the verify extra (torch) is needed to run fixtures")
    fixtures = ["fixtures/det101/flag_requires_grad_leaf.py", "fixtures/det103/flag_inplace_on_saved_output.py"]
    fresh = generate_docs.evidence_from_verify(generate_docs.run_verify(fixtures))
    committed = load_evidence()
    assert committed is not None
    for code, rows in fresh.observations.items():
        assert rows, code
        for row in rows:
            assert row in committed.for_rule(code), f"{row} differs from {EVIDENCE_PATH.name}; {REGENERATE_EVIDENCE}"
    leaf_cpu = next(row for row in fresh.for_rule("DET101") if row.device == "cpu")
    assert leaf_cpu.outcome == "held" and "RuntimeError" in leaf_cpu.observed


# ---------------------------------------------------------------------------------------------
# Figures


@pytest.fixture(scope="module")
def figures() -> ModuleType:
    pytest.importorskip("torch", reason="figures are drawn from real autograd graphs: needs torch (verify extra)")
    pytest.importorskip("graphviz", reason="figures need the graphviz Python package (docs extra)")
    from flake8_detach import figures as module

    # The fixtures the figures are drawn from are this checkout's (or unpacked sdist's), also
    # when the package itself is installed elsewhere (a non-editable install from the sdist).
    module.REPO_ROOT = REPO
    return module


@pytest.fixture(scope="module")
def dot_sources(figures: ModuleType) -> dict[str, str]:
    return {code: figures.to_dot(figures.build(code)) for code in sorted(figures.FIGURES)}


def test_figure_dot_sources_are_current(dot_sources: dict[str, str]) -> None:
    assert_current({f"docs/figures/{code}.dot": dot for code, dot in dot_sources.items()})


def test_figure_svgs_are_current(figures: ModuleType, dot_sources: dict[str, str]) -> None:
    if shutil.which("dot") is None:
        pytest.skip("Graphviz `dot` is not installed (apt-get install graphviz): SVGs not compared")
    committed = (REPO / "docs/figures/DET101.svg").read_text(encoding="utf-8")
    rendered = {f"docs/figures/{code}.svg": figures.to_svg(dot) for code, dot in dot_sources.items()}
    here, there = figures.graphviz_version_of(rendered["docs/figures/DET101.svg"]), figures.graphviz_version_of(committed)
    if here != there:
        pytest.skip(f"Graphviz {here} here, the SVGs were drawn with {there}: layouts differ, DOT compared instead")
    assert_current(rendered)


def test_figures_are_deterministic(figures: ModuleType, dot_sources: dict[str, str]) -> None:
    assert figures.to_dot(figures.build("DET103")) == dot_sources["DET103"]


def test_figures_mark_what_the_run_showed(dot_sources: dict[str, str]) -> None:
    det101, det102, det103, det106 = (dot_sources[c] for c in ("DET101", "DET102", "DET103", "DET106"))
    # DET101: the model output's real graph, the numpy exit that raises, the detach cut.
    assert "AddmmBackward0" in det101 and "model.weight" in det101
    assert "RuntimeError: Can't call numpy() on Tensor that requires" in det101
    assert 'label="detach() cuts here"' in det101 and "same storage: True" in det101
    # DET102: no copy on the CPU, a recorded ToCopyBackward0 for a real cross-device copy.
    assert "`loss.cpu() is loss` is True" in det102
    assert "ToCopyBackward0" in det102 and "grad_fn=None: plain data" in det102
    # DET103: exp's saved result written through .data without a version bump, a wrong gradient.
    assert "ExpBackward0" in det103 and "saved result" in det103
    assert "version 0 -> 0: unseen" in det103 and "version 0 -> 1" in det103
    assert "inputs.grad = [3.297, 5.437]" in det103 and "exp(inputs) = [1.649, 2.718]" in det103
    # DET106: NumPy's implicit conversion fails like .numpy().
    assert "Tensor.__array__" in det106 and "RuntimeError: Can't call numpy()" in det106


def test_graph_walk_names_leaves_and_follows_next_functions(figures: ModuleType) -> None:
    import torch

    weights = torch.ones(3, requires_grad=True)
    bias = torch.zeros(3, requires_grad=True)
    total = (weights * 2 + bias).sum()
    figure = figures.Figure("T", "t", "c")
    ids = figures.add_graph(figure, total, "total", figures.tensor_names({"weights": weights, "bias": bias}))
    labels = {node.id: node.label.split("\n")[0] for node in figure.nodes}
    assert sorted(labels.values()) == sorted(
        ["SumBackward0", "AddBackward0", "MulBackward0", "weights", "bias", "total"]
    )
    edges = {(labels[e.tail], labels[e.head]) for e in figure.edges}
    assert edges == {
        ("weights", "MulBackward0"), ("MulBackward0", "AddBackward0"), ("bias", "AddBackward0"),
        ("AddBackward0", "SumBackward0"), ("SumBackward0", "total"),
    }
    assert labels[ids.tensor] == "total"
