"""The conformance matrix, end to end (see harness.py): generated, proven at run time, linted by
`flake8-detach check`, and compared with expected.json both ways, so a new miss fails and so does
a known miss that starts to pass (its entry must then be updated: scripts/update_conformance.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "scripts"))

from harness import evaluate
from matrix import CARRIERS, cases


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return evaluate(tmp_path_factory.mktemp("conformance"))


def test_every_case_has_an_expected_outcome() -> None:
    expected = json.loads((HERE / "expected.json").read_text())
    assert sorted(expected) == sorted(case.name for case in cases())


def test_the_outcomes_are_the_expected_ones(results: dict[str, str]) -> None:
    expected = json.loads((HERE / "expected.json").read_text())
    changed = {name: (expected.get(name), outcome) for name, outcome in results.items() if expected.get(name) != outcome}
    assert not changed, f"{len(changed)} outcomes changed (expected, now): {dict(list(changed.items())[:20])}"


def test_no_twin_is_flagged_and_every_carrier_below_one_has_a_reason(results: dict[str, str]) -> None:
    import update_conformance

    assert "flagged" not in results.values()
    missed = {name.split("/")[0].split("+")[0] for name, outcome in results.items() if outcome == "missed"}
    assert missed == set(update_conformance.REASONS), "a reason for each carrier with misses, and none for others"
    unproven = {name.split("/")[0].split("+")[0] for name, outcome in results.items() if outcome == "unproven"}
    assert unproven == set(update_conformance.UNPROVEN)
    assert set(update_conformance.REASONS) <= set(CARRIERS)


def test_the_report_is_current(results: dict[str, str]) -> None:
    import update_conformance

    assert (REPO / "docs" / "conformance.md").read_text(encoding="utf-8") == update_conformance.page(results)
