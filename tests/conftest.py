from __future__ import annotations

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


@pytest.fixture
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(autouse=True)
def _own_results_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets an empty results cache of its own (subprocesses inherit it), so no test
    reads another's results and none writes into the checkout."""
    monkeypatch.setenv("FLAKE8_DETACH_CACHE_DIR", str(tmp_path_factory.mktemp("cache") / "results"))


# The closing lines of `check`'s text output (see flake8_detach/reporting/summary.py).
SUMMARY_STARTS = ("All checks passed!", "Found ", "[*] ")


def diagnostic_lines(out: str) -> list[str]:
    """`check`'s text output without its summary lines and `[*]` marks: what flake8 prints."""
    return [line.replace(" [*] ", " ", 1) for line in out.splitlines()
            if not line.startswith(SUMMARY_STARTS) and "unsafe fix" not in line]
