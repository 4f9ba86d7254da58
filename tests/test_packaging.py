"""What a user installs: the wheel's metadata and files, and an sdist that carries its own tests."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from conftest import REPO

import flake8_detach

pytest.importorskip("build", reason="building the distributions needs `build` (test extra)")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    completed = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(REPO)],
        capture_output=True, text=True, check=False, timeout=600,
    )
    if completed.returncode != 0 and "Could not find a version" in completed.stdout + completed.stderr:
        pytest.skip("no package index reachable for the build backend")
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return out


@pytest.mark.slow
def test_wheel_metadata_and_files(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next(name for name in names if name.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert "flake8_detach/py.typed" in names
    assert "flake8_detach/runtime_evidence.json" in names
    assert metadata["Version"] == flake8_detach.__version__  # one place: the package's __version__
    assert metadata["License-Expression"] == "MIT"
    classifiers = metadata.get_all("Classifier")
    for version in ("3.9", "3.10", "3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert metadata["Requires-Python"] == ">=3.9"
    assert any(url.startswith("Source, ") for url in metadata.get_all("Project-URL"))
    assert "libcst<2,>=1.8" in metadata.get_all("Requires-Dist")
    # The long description is the README, whose first lines are the two commands CI runs.
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload().startswith("# flake8-detach\n\n```bash\npython3 -m venv .venv")


@pytest.mark.slow
def test_sdist_carries_what_its_tests_need(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in ("LICENSE", "tests/conftest.py", "tests/test_engine.py", "fixtures/README.md",
                   "fixtures/det101/flag_requires_grad_leaf.py", "examples/bad_pytorch.py",
                   "docs/rules/DET101.md", "docs/schemas/check-output.schema.json", ".pre-commit-hooks.yaml",
                   # what the README links and the tests read: the proof, every run, the pages
                   "docs/proof.md", "docs/rules/evidence.md", "docs/configuration.md", "scripts/update_proof.py"):
        assert needed in names, needed
    assert not any("__pycache__" in name for name in names)
