"""Each output format of `check`: its structure, and that its locations and fixes are right."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flake8_detach.cli.check import check_text
from flake8_detach.diagnostics import Diagnostic
from flake8_detach.engine import Settings, check_source
from flake8_detach.reporting import (
    RULE_DOCS_BASE_URL,
    FileReport,
    Report,
    TextOptions,
    render,
    rule_url,
)
from flake8_detach.rules import ALL_RULES

REPO = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"  # vendored: see its LICENSE.md

# Line 3: DET101 (fixable). Line 5: DET103 read (`.data`). Two files, one unreadable.
SOURCE = (
    "import torch\n"
    "w = torch.ones(3, requires_grad=True)\n"
    "a = w.cpu().numpy()\n"
    "b = 1\n"
    "c = w.data.numpy()\n"
)


def make_report() -> Report:
    report = Report()
    report.files.append(check_text(SOURCE, "src/train model.py", Settings()))
    report.files.append(FileReport("broken.py", error="syntax error at line 1, column 5: '(' was never closed"))
    return report


def apply_edit(source: str, start: tuple[int, int], end: tuple[int, int], text: str) -> str:
    """Apply a (1-based line, 1-based column) edit, end exclusive."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        return offsets[position[0] - 1] + position[1] - 1

    return source[: offset(start)] + text + source[offset(end) :]


def test_report_has_both_rules() -> None:
    codes = [d.code for d in make_report().files[0].diagnostics]
    assert "DET101" in codes and "DET103" in codes


def test_text_format_is_flake8_style_with_ruffs_fixable_mark() -> None:
    lines = render("text", make_report()).splitlines()
    assert lines[0] == (
        "src/train model.py:3:13: DET101 [*] .numpy() on a tensor that may require grad raises "
        "RuntimeError; call .detach() first"
    )
    assert all(line.startswith("src/train model.py:") for line in lines)


def test_json_format() -> None:
    data = json.loads(render("json", make_report()))
    first = data["diagnostics"][0]
    assert first["path"] == "src/train model.py"
    assert (first["line"], first["column"], first["end_column"]) == (3, 13, 18)
    assert SOURCE.splitlines()[2][first["column"] - 1 : first["end_column"] - 1] == "numpy"
    assert first["code"] == "DET101" and first["name"] == "numpy-on-grad-tensor"
    assert first["message"].startswith("DET101 ")
    assert first["url"] == rule_url("DET101") == RULE_DOCS_BASE_URL + "DET101.md"
    # Every error has the same shape; a file's has no cell, and here no position was given.
    assert data["errors"] == [{"path": "broken.py", "cell": None, "line": None, "column": None,
                               "message": "syntax error at line 1, column 5: '(' was never closed"}]
    assert data["summary"] == {"files": 2, "diagnostics": len(data["diagnostics"]), "errors": 1}


def test_json_fix_edit_repairs_the_file() -> None:
    data = json.loads(render("json", make_report()))
    det101 = data["diagnostics"][0]
    assert det101["fix"] is not None and det101["fix"]["safe"] is True
    edit = det101["fix"]["edit"]
    fixed = apply_edit(
        SOURCE,
        (edit["start"]["line"], edit["start"]["column"]),
        (edit["end"]["line"], edit["end"]["column"]),
        edit["content"],
    )
    assert "w.detach().cpu().numpy()" in fixed
    assert "DET101" not in {d.code for d in check_source(fixed)}


def test_github_format() -> None:
    lines = render("github", make_report()).splitlines()
    assert lines[0] == (
        "::error file=src/train model.py,line=3,endLine=3,col=13,endColumn=18,title=DET101::.numpy() on a "
        "tensor that may require grad raises RuntimeError; call .detach() first"
    )
    assert lines[-1] == "::error file=broken.py,title=flake8-detach::syntax error at line 1, column 5: '(' was never closed"


def test_github_format_escapes() -> None:
    report = Report([FileReport("a,b:c.py", error="50% bad\nsecond line")])
    assert render("github", report) == "::error file=a%2Cb%3Ac.py,title=flake8-detach::50%25 bad%0Asecond line\n"


def sarif() -> dict[str, Any]:
    return json.loads(render("sarif", make_report()))


def test_sarif_structure() -> None:
    log = sarif()
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "flake8-detach"
    assert driver["version"] and driver["informationUri"].startswith("https://")
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in ALL_RULES]
    for descriptor, rule in zip(driver["rules"], ALL_RULES):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.message
        assert descriptor["fullDescription"]["text"] == rule.what_it_does
        assert rule.why_bad in descriptor["help"]["text"]
        assert rule.use_instead in descriptor["help"]["markdown"]
        assert descriptor["helpUri"] == f"{RULE_DOCS_BASE_URL}{rule.code}.md"
    assert run["columnKind"] == "unicodeCodePoints"
    results = run["results"]
    assert [r["ruleId"] for r in results] == [d.code for d in make_report().files[0].diagnostics]
    first = results[0]
    assert first["level"] == "error"
    assert first["message"]["text"].startswith("DET101 ")
    assert driver["rules"][first["ruleIndex"]]["id"] == "DET101"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/train%20model.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 3, "startColumn": 13, "endLine": 3, "endColumn": 18}
    # The unreadable file is a failed-execution notification, not a result.
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    assert "broken.py" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_a_syntax_error_with_a_place_is_a_sarif_result() -> None:
    """Code scanning shows results as alerts on the file; a tool notification appears on none."""
    report = Report([FileReport("broken.py", error="syntax error at line 2, column 5: '(' was never closed",
                                error_position=(2, 4))])
    (run,) = json.loads(render("sarif", report))["runs"]
    (result,) = run["results"]
    assert result["ruleId"] == "syntax-error" and result["message"]["text"].startswith("syntax error at line 2")
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 5}
    assert run["invocations"][0] == {"executionSuccessful": False, "toolExecutionNotifications": []}


def test_sarif_fixes_apply() -> None:
    results = sarif()["runs"][0]["results"]
    with_fixes = [r for r in results if "fixes" in r]
    assert with_fixes, "no fix rendered"
    det101 = next(r for r in with_fixes if r["ruleId"] == "DET101")
    (change,) = det101["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "src/train%20model.py"
    (replacement,) = change["replacements"]
    region = replacement["deletedRegion"]
    fixed = apply_edit(
        SOURCE,
        (region["startLine"], region["startColumn"]),
        (region["endLine"], region["endColumn"]),
        replacement["insertedContent"]["text"],
    )
    assert fixed.splitlines()[2] == "a = w.detach().cpu().numpy()"


def test_sarif_omits_fixes_for_diagnostics_without_one() -> None:
    report = make_report()
    diagnostics = report.files[0].diagnostics
    report.files[0].diagnostics = [d.__class__(d.code, d.line, d.column, d.message, None) for d in diagnostics]
    assert all("fixes" not in result for result in json.loads(render("sarif", report))["runs"][0]["results"])


def test_sarif_validates_against_the_official_schema() -> None:
    import jsonschema  # the test extra's; the schema itself is vendored, so this runs in every clone
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema)
    errors = sorted(validator.iter_errors(sarif()), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    # A broken log must fail, or the validation above proves nothing.
    broken = sarif()
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert list(validator.iter_errors(broken))


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        render("xml", Report())


def test_sarif_uri_outside_the_working_directory_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    inside = tmp_path / "pkg" / "a.py"
    outside = Path("/opt/elsewhere/b.py")
    report = Report([FileReport(str(inside), error="x"), FileReport(str(outside), error="y")])
    notifications = json.loads(render("sarif", report))["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    locations = [n["locations"][0]["physicalLocation"]["artifactLocation"] for n in notifications]
    assert locations == [{"uri": "pkg/a.py", "uriBaseId": "%SRCROOT%"}, {"uri": "file:///opt/elsewhere/b.py"}]


NESTED_WRITE = (
    "import torch\n"
    "model = torch.nn.Linear(2, 2)\n"
    "def step(lr):\n"
    "    for p in model.parameters():\n"
    "        p.data.add_(-lr * p.grad)\n"
)


def test_statement_fix_inside_a_function_keeps_indentation() -> None:
    """An unsafe DET103 fix wraps the statement in `with torch.no_grad():`; the edit must indent it."""
    report = Report([check_text(NESTED_WRITE, "step.py", Settings())])
    (entry,) = [d for d in json.loads(render("json", report))["diagnostics"] if d["fix"]]
    edit = entry["fix"]["edit"]
    fixed = apply_edit(
        NESTED_WRITE, (edit["start"]["line"], edit["start"]["column"]), (edit["end"]["line"], edit["end"]["column"]), edit["content"]
    )
    assert fixed.splitlines()[4:] == ["        with torch.no_grad():", "            p.add_(-lr * p.grad)"]


def test_minimal_edit_always_rebuilds_the_new_text() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from flake8_detach.reporting.spans import minimal_edit

    text = st.text(alphabet="ab_ .()\r\n\t\u00e9\U0001f600", max_size=15)

    def apply(old: str, edit: Any) -> str:
        import re

        lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", old)

        def offset(line: int, column: int) -> int:
            return sum(len(piece) for piece in lines[: line - 1]) + column

        return old[: offset(edit.start_line, edit.start_column)] + edit.new_text + old[offset(edit.end_line, edit.end_column) :]

    @settings(max_examples=500, deadline=None)
    @given(text, text)
    def check(old: str, new: str) -> None:
        assert apply(old, minimal_edit(old, new)) == new

    check()


EDGE_CASES = [
    NESTED_WRITE,
    NESTED_WRITE.rstrip("\n"),  # no final newline: libcst drops the last statement's newline
    "import torch\r\nw = torch.ones(3, requires_grad=True)\r\nif w:\r\n\tw.data.zero_()\r\n\ty = (w\r\n\t  .cpu()\r\n\t  .numpy())\r\n",
    (
        "import torch\nclass A:\n    def f(self):\n        p = torch.nn.Parameter(torch.ones(1))\n"
        "        # comment\n        p.data = torch.zeros(1)\n        return p.cpu().detach()\n"
    ),
]


def _sources_with_fixes() -> list[tuple[str, str]]:
    fixtures = sorted(path for path in (REPO / "fixtures").rglob("*.py") if not path.name.endswith(".fixed.py"))
    named = [(str(path.relative_to(REPO)), path.read_text(encoding="utf-8")) for path in fixtures]
    return named + [(f"edge case {index}", source) for index, source in enumerate(EDGE_CASES)]


def test_each_fix_edit_is_exactly_libcsts_rewrite() -> None:
    """Every fix of every fixture, as a text edit, gives what applying it to the tree gives."""
    from flake8_detach.engine import AnalysisError, analyze
    from flake8_detach.fixing.passes import replace_nodes
    from flake8_detach.reporting.fix_spans import fix_edits

    checked = 0
    for name, source in _sources_with_fixes():
        try:
            analysis = analyze(source, Settings())
        except AnalysisError:
            continue
        fixes = [d.fix for d in analysis.diagnostics if d.fix is not None]
        if analysis.module is None or not fixes:
            continue
        for fix, edit in zip(fixes, fix_edits(analysis.module, fixes)):
            expected = replace_nodes(analysis.module, {fix.node: fix.replacement}).code
            got = apply_edit(
                source, (edit.start_line, edit.start_column + 1), (edit.end_line, edit.end_column + 1), edit.new_text
            )
            assert got == expected, name
            checked += 1
    assert checked >= 10, "too few fixes exercised"


def _report_with_fixes(*safety: bool | None) -> Report:
    from flake8_detach.reporting.model import RenderedFix
    from flake8_detach.reporting.spans import TextEdit

    diagnostics = [Diagnostic("DET101", line, 0, "DET101 m") for line in range(1, len(safety) + 1)]
    fixes = [None if safe is None else RenderedFix("d", safe, TextEdit(1, 0, 1, 0, "")) for safe in safety]
    return Report([FileReport("a.py", diagnostics=diagnostics, fixes=fixes)])


def test_summary_is_worded_as_ruffs() -> None:
    from flake8_detach.reporting.summary import summary

    assert summary(Report([FileReport("a.py")])) == "All checks passed!\n"
    assert summary(_report_with_fixes(True, True, False)) == (
        "Found 3 errors.\n[*] 2 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).\n")
    assert summary(_report_with_fixes(True, True, False), unsafe=True) == "Found 3 errors.\n[*] 3 fixable with `--fix`.\n"
    assert summary(_report_with_fixes(None, False, False)) == (
        "Found 3 errors.\n2 unsafe fixes available with `--fix --unsafe-fixes`.\n")
    assert summary(_report_with_fixes(None)) == "Found 1 error.\n"
    assert summary(_report_with_fixes(False), fixed=2) == (
        "Found 3 errors (2 fixed, 1 remaining).\n1 unsafe fix available with `--fix --unsafe-fixes`.\n")
    assert summary(Report([FileReport("a.py")]), fixed=1) == "Found 1 error (1 fixed, 0 remaining).\n"
    # A file that could not be checked is no pass.
    assert summary(Report([FileReport("b.py", error="cannot read")])) == "Found 1 error.\n"


def test_text_marks_only_what_fix_applies() -> None:
    lines = render("text", _report_with_fixes(True, False, None)).splitlines()
    assert lines == ["a.py:1:1: DET101 [*] m", "a.py:2:1: DET101 m", "a.py:3:1: DET101 m"]
    lines = render("text", _report_with_fixes(True, False, None), TextOptions(unsafe_fixes=True)).splitlines()
    assert lines == ["a.py:1:1: DET101 [*] m", "a.py:2:1: DET101 [*] m", "a.py:3:1: DET101 m"]
