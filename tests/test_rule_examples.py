"""Each rule's VALID and INVALID examples, run as tests (as Fixit does)."""

from __future__ import annotations

import pytest

from flake8_detach import check_source
from flake8_detach.rules import ALL_RULES
from flake8_detach.settings import Settings

# Every rule's examples, the opt-in ones (DET111) too.
PREVIEW = Settings(preview=True)

VALID = [(rule.code, index, source) for rule in ALL_RULES for index, source in enumerate(rule.VALID)]
INVALID = [(rule.code, index, ex.code) for rule in ALL_RULES for index, ex in enumerate(rule.INVALID)]


@pytest.mark.parametrize(("code", "index", "source"), VALID)
def test_valid_example_is_not_flagged(code: str, index: int, source: str) -> None:
    assert [d for d in check_source(source, PREVIEW) if d.code == code] == []


@pytest.mark.parametrize(("code", "index", "source"), INVALID)
def test_invalid_example_is_flagged(code: str, index: int, source: str) -> None:
    assert [d for d in check_source(source, PREVIEW) if d.code == code], source


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda rule: rule.code)
def test_rule_is_documented(rule) -> None:
    assert rule.name == rule.name.lower() and " " not in rule.name and "-" in rule.name
    for field in ("what_it_does", "why_bad", "example", "use_instead", "fix_safety", "runtime_truth"):
        assert getattr(rule, field).strip(), field
    assert len(rule.VALID) >= 3 and len(rule.INVALID) >= 2
