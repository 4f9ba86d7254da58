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
from flake8_detach.rules.base import Rule

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


# ---------------------------------------------------------------------------------------------
# The README and the hand-written docs: what a test can hold them to


README = REPO / "README.md"
# What CI runs (.ci/run calls the second line), so the README must start with exactly these.
README_COMMANDS = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/flake8 --select DET examples/bad_pytorch.py",
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[verify,test]' torch==2.13.0 && .venv/bin/python -m pytest",
)
FIX_KINDS = ("safe", "unsafe", "none")


def readme_rules_table() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    start = text.index("<!-- rules-table")
    table = text[start : text.index("<!-- rules-table:end -->", start)]
    rows = [line for line in table.splitlines() if line.startswith("| [DET")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


def fix_kinds_seen(code: str) -> set[str]:
    """What the rule's diagnostics carry on its fixtures and INVALID examples: a safe fix, an
    unsafe one, or none."""
    from flake8_detach.engine import check_source
    from flake8_detach.rules import RULES_BY_CODE
    from flake8_detach.settings import Settings

    rule = RULES_BY_CODE[code]
    sources = [p.read_text(encoding="utf-8") for p in sorted((REPO / "fixtures" / code.lower()).glob("*.py"))
               if not p.name.endswith(".fixed.py")]
    sources += [example.code for example in rule.INVALID]
    kinds = set()
    for source in sources:
        for diagnostic in check_source(source, Settings(preview=True)):  # the opt-in rules too
            if diagnostic.code == code:
                fix = diagnostic.fix
                kinds.add("none" if fix is None else "safe" if fix.safe else "unsafe")
    return kinds


def test_readme_starts_with_the_two_commands_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.startswith("# flake8-detach\n\n```bash\n" + "\n".join(README_COMMANDS) + "\n```\n")
    ci = REPO / ".ci" / "run"  # in a clone; an sdist does not carry it
    if ci.is_file():
        assert README_COMMANDS[1] in ci.read_text(encoding="utf-8")


def test_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250, "move detail to docs/"


def test_readme_rules_table_matches_the_rule_classes() -> None:
    rows = readme_rules_table()
    assert [row[0] for row in rows] == [f"[{rule.code}](docs/rules/{rule.code}.md)" for rule in ALL_RULES]
    assert [row[1] for row in rows] == [rule.name for rule in ALL_RULES]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda rule: rule.code)
def test_readme_fix_column_says_which_fixes_the_rule_makes(rule: Rule) -> None:
    """`safe`, `unsafe` and `none` in the fix column are exactly the kinds of fix the rule's
    diagnostics carry on its fixtures and examples."""
    code = rule.code
    (row,) = [row for row in readme_rules_table() if row[0].startswith(f"[{code}]")]
    claimed = {kind for kind in FIX_KINDS if f"`{kind}`" in row[3]}
    assert claimed == fix_kinds_seen(code), f"README's fix column for {code}: {row[3]}"


def markdown_files() -> list[Path]:
    return [README, *sorted((REPO / "docs").rglob("*.md"))]


def heading_anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings (lower case, punctuation dropped, spaces to -)."""
    import re

    anchors = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("path", markdown_files(), ids=lambda path: path.relative_to(REPO).as_posix())
def test_relative_links_resolve(path: Path) -> None:
    """Every relative link of the README and docs/ points at a file that exists (and a heading
    that exists, for `page.md#anchor`)."""
    import re

    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        missing_anchor = bool(anchor) and linked.suffix == ".md" and linked.is_file() \
            and anchor not in heading_anchors(linked)
        if not linked.exists() or missing_anchor:
            broken.append(target)
    assert not broken, f"{path.relative_to(REPO)}: {broken}"


def test_readme_links_every_docs_page() -> None:
    """The README is the way in: every hand-written page under docs/ is linked from it."""
    text = README.read_text(encoding="utf-8")
    pages = {p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")}
    pages -= {"docs/precision-review.md", "docs/fix-review.md"}  # linked from precision.md, fixes.md
    assert {page for page in pages if f"]({page})" not in text} == set()


def test_configuration_keys_are_the_ones_config_reads() -> None:
    """The README's pyproject example and docs/configuration.md's table name every key, no other."""
    import re

    from flake8_detach.config import KEYS

    readme = README.read_text(encoding="utf-8")
    example = readme[readme.index("[tool.flake8-detach]\n"):]
    example = example[: example.index("```")]
    assert sorted(line.split(" =")[0] for line in example.splitlines()[1:] if line) == sorted(KEYS)
    table = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| `([a-z][a-z-]*)` \|", table, flags=re.MULTILINE)
    assert sorted(documented) == sorted(KEYS)
