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
