"""Real flake8 over fixtures/ must report exactly the `# expect:` annotations, both ways."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

from conftest import FIXTURES, REPO
from expectations import expected_diagnostics, lint_fixture_files

LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>DET\d+) ")


def run_flake8(*paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "DET", "--isolated", *paths],
        capture_output=True, text=True, cwd=REPO, check=False,
    )


def test_flake8_output_equals_fixture_annotations() -> None:
    result = run_flake8(str(FIXTURES))
    assert "Traceback" not in result.stderr
    reported = set()
    for line in result.stdout.splitlines():
        match = LINE.match(line)
        assert match, f"unexpected flake8 output line: {line}"
        reported.add((str(REPO / match["path"]) if not match["path"].startswith("/") else match["path"],
                      int(match["line"]), match["code"]))
    expected = set()
    for path in lint_fixture_files(FIXTURES):
        expected |= {(str(path), line, code) for line, code in expected_diagnostics(path)}
    assert sorted(expected - reported) == [], "fixtures expect diagnostics flake8 did not report"
    assert sorted(reported - expected) == [], "flake8 reported diagnostics no fixture expects"


def test_fixture_corpus_has_enough_flags_and_traps() -> None:
    flags: Counter[str] = Counter()
    traps: Counter[str] = Counter()
    for path in lint_fixture_files(FIXTURES):
        rule = path.parent.name.upper()
        if path.name.startswith("flag_"):
            assert expected_diagnostics(path), f"{path} is named flag_ but expects nothing"
            flags[rule] += 1
        elif path.name.startswith("ok_"):
            assert not expected_diagnostics(path), f"{path} is a must-not-flag trap but expects a diagnostic"
            traps[rule] += 1
    for rule in ("DET101", "DET102", "DET103", "DET104", "DET105", "DET106"):
        assert flags[rule] + traps[rule] >= 8, rule
        assert traps[rule] * 2 >= flags[rule] + traps[rule], f"{rule}: at least half must be traps"


def test_stdin_is_linted_from_flake8_lines_not_disk() -> None:
    source = (FIXTURES / "det101" / "flag_requires_grad_leaf.py").read_text()
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "DET", "--isolated", "-"],
        input=source, capture_output=True, text=True, cwd=REPO, check=False,
    )
    assert result.stdout.splitlines() == [
        "stdin:4:17: DET101 .numpy() on a tensor that may require grad raises RuntimeError; call .detach() first"
    ]


def test_noqa_silences_plugin_codes() -> None:
    source = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()  # noqa: DET101\nw.numpy()  # noqa: E501\n"
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "DET", "--isolated", "-"],
        input=source, capture_output=True, text=True, cwd=REPO, check=False,
    )
    assert [line.split(":")[1] for line in result.stdout.splitlines()] == ["4"]
