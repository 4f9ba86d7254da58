"""`flake8-detach explain`: every rule's page in the terminal, the rule table, unknown codes,
and the Markdown pages rendered from the same rule fields (one source for both)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flake8_detach.cli import main
from flake8_detach.explain import (
    Evidence,
    Observation,
    evidence_to_json,
    load_evidence,
    markdown_evidence,
    markdown_index,
    markdown_page,
    text_page,
    text_table,
)
from flake8_detach.rules import ALL_RULES, RULES_BY_CODE

REPO = Path(__file__).resolve().parent.parent
SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety", "Runtime evidence")


def unwrapped(text: str) -> str:
    """Text with all runs of whitespace made one space, to find a wrapped paragraph in it."""
    return " ".join(text.split())


@pytest.mark.parametrize("code", sorted(RULES_BY_CODE))
def test_explain_prints_every_section_of_the_rule(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    rule = RULES_BY_CODE[code]
    assert main(["explain", code]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{code}: {rule.name}\n")
    positions = [out.index(f"\n{title}\n") for title in SECTIONS]
    assert positions == sorted(positions), "sections are printed in the documented order"
    flat = unwrapped(out)
    for text in (rule.what_it_does, rule.why_bad, rule.fix_safety, rule.runtime_truth):
        assert unwrapped(text) in flat
    # Code keeps its line structure, indented as a block.
    assert textwrap.indent(rule.example, "    ") in out
    assert textwrap.indent(rule.use_instead, "    ") in out


def test_explain_accepts_lower_case_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "det102"]) == 0
    assert capsys.readouterr().out.startswith("DET102: cpu-before-detach\n")


def test_explain_accepts_the_rule_name_as_ruff_rule_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "numpy-on-device-tensor"]) == 0
    assert capsys.readouterr().out.startswith("DET104: numpy-on-device-tensor\n")


@pytest.mark.parametrize("argv", [["explain", "DET999"], ["explain", "E501"], ["explain"]])
def test_unknown_or_missing_code_exits_2_listing_the_known_codes(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    for rule in ALL_RULES:
        assert rule.code in captured.err


def test_list_prints_one_row_per_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(ALL_RULES)
    for line, rule in zip(lines, ALL_RULES):
        assert line.split()[:2] == [rule.code, rule.name]
        assert line.endswith(rule.message)
    assert text_table() == "\n".join(lines) + "\n"


def test_list_summaries_say_what_each_rule_flags() -> None:
    """One accurate line per rule: DET106 is a conversion the library makes, not `.numpy()` in the
    code; DET105 works both ways (an array from a tensor, a tensor from an array)."""
    summaries = {rule.code: line.split(None, 2)[2] for rule, line in zip(ALL_RULES, text_table().splitlines())}
    assert "numpy() on a tensor that may require grad" in summaries["DET101"]
    assert ".cpu() before .detach()" in summaries["DET102"]
    assert ".data" in summaries["DET103"]
    assert "may live on a GPU" in summaries["DET104"]
    assert "array" in summaries["DET105"] and "tensor" in summaries["DET105"]
    assert "shares memory" in summaries["DET105"]
    det106 = summaries["DET106"]
    assert "NumPy" in det106 and "matplotlib" in det106 and "pandas" in det106
    assert "require grad" in det106 and "GPU" in det106
    assert not det106.startswith("converts a tensor with .numpy()")


def test_explain_runs_without_importing_torch_or_numpy() -> None:
    """Explaining is as light as linting: the console script must not pull in torch."""
    script = (
        "import sys\nfrom flake8_detach.cli import main\n"
        "assert main(['explain', 'DET101']) == 0\n"
        "print(sorted(m for m in ('torch', 'numpy', 'graphviz') if m in sys.modules))\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert completed.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda rule: rule.code)
def test_markdown_page_is_built_from_the_rule_fields(rule: object) -> None:
    from flake8_detach.rules.base import Rule

    assert isinstance(rule, Rule)
    page = markdown_page(rule, None, REPO)
    assert page.startswith(f"# {rule.code}: {rule.name}\n")
    for title in SECTIONS:
        assert f"\n## {title}\n" in page
    for text in (rule.what_it_does, rule.why_bad, rule.fix_safety, rule.runtime_truth):
        assert text in page
    assert f"```python\n{rule.example.rstrip()}\n```" in page
    assert f"```python\n{rule.use_instead.rstrip()}\n```" in page
    has_figure = (REPO / "docs" / "figures" / f"{rule.code}.dot").is_file()
    assert (f"](../figures/{rule.code}.svg)" in page) == has_figure


def test_pages_embed_figures_for_the_graph_rules() -> None:
    for code in ("DET101", "DET102", "DET103", "DET106"):
        page = markdown_page(RULES_BY_CODE[code], None, REPO)
        assert f"![The autograd graph behind {code}](../figures/{code}.svg)" in page


def test_index_links_every_page() -> None:
    index = markdown_index()
    for rule in ALL_RULES:
        assert f"| [{rule.code}]({rule.code}.md) | {rule.name} |" in index


def sample_evidence() -> Evidence:
    return Evidence(
        source="a test",
        torch_version="9.9.9",
        devices_not_run={"cuda": "no GPU"},
        observations={
            "DET101": [
                Observation("fixtures/det101/flag_a.py", "cpu", "RuntimeError at line 3",
                            "RuntimeError at line 3", "runs", "held"),
                Observation("fixtures/det101/flag_b.py", "cpu", "RuntimeError at line 4",
                            "ran to the end", "", "not held"),
                Observation("fixtures/det101/flag_b.py", "meta (stand-in for cuda)", "",
                            "does not read DEVICE", "", "skipped"),
            ]
        },
    )


def test_evidence_section_counts_and_links_every_run() -> None:
    """The rule's page says how many runs held in one sentence and links the runs, not lists them."""
    page = markdown_page(RULES_BY_CODE["DET101"], sample_evidence(), REPO)
    evidence = page[page.index("## Runtime evidence"):]
    assert "2 runs of this rule's fixtures on cpu, 1 as claimed, 1 not: [every run](evidence.md#det101)" in evidence
    assert "](../proof.md)" in evidence
    assert "flag_b.py" not in evidence and "| fixture |" not in evidence
    # The section is the heading, one paragraph and the generator's comment.
    assert len([line for line in evidence.splitlines() if line.strip()]) == 3
    text = text_page(RULES_BY_CODE["DET101"], sample_evidence())
    assert "2 runs of this rule's fixtures on cpu, 1 as claimed, 1 not." in unwrapped(text)
    assert "Every run: https://" in text and "evidence.md#det101" in text
    assert "flag_b.py" not in text


def test_evidence_page_tabulates_every_run() -> None:
    page = markdown_evidence(sample_evidence())
    assert "\n## DET101\n" in page and "[DET101: numpy-on-grad-tensor](DET101.md)" in page
    assert "2 runs of this rule's fixtures on cpu, 1 as claimed, 1 not." in page
    assert "- cuda: not run here: no GPU" in page
    assert "- meta (stand-in for cuda): 1 skipped: does not read DEVICE" in page
    assert ("| [flag_b.py](../../fixtures/det101/flag_b.py) | cpu | RuntimeError at line 4 | ran to the end "
            "| - | **not held** |") in page
    assert "flag_b.py](../../fixtures/det101/flag_b.py) | meta" not in page  # skipped runs are counted, not listed
    for rule in ALL_RULES:  # every rule has its anchor, with or without runs
        assert f"\n## {rule.code}\n" in page


def test_evidence_json_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "evidence.json"
    path.write_text(evidence_to_json(sample_evidence()), encoding="utf-8")
    assert load_evidence(path) == sample_evidence()
    assert load_evidence(tmp_path / "missing.json") is None


def test_page_without_evidence_says_so() -> None:
    page = markdown_page(RULES_BY_CODE["DET104"], None, REPO)
    assert "No runtime evidence has been generated yet" in page
