"""The pre-commit hooks, run by the real pre-commit (`try-repo`) from a throwaway repository.

`try-repo` clones this checkout at HEAD plus its uncommitted changes to tracked files, installs
it in a fresh virtual environment (from PyPI or the configured index) and runs the hook, exactly
as a user's `pre-commit run` would. Slow (each run installs the package): about half a minute.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HAZARD = "import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n"

pytestmark = pytest.mark.slow


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, check=False).returncode:
        pytest.skip(f"{REPO} is not a git checkout with a commit; try-repo needs one")
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra")
    folder = tmp_path / "project"
    folder.mkdir()
    _git(folder, "init", "-q")
    (folder / "bad.py").write_text(HAZARD)
    _git(folder, "add", "bad.py")
    _git(folder, "commit", "-q", "-m", "a hazard")
    return folder


def try_repo(project: Path, *args: str, files: tuple[str, ...] = ("bad.py",)) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PRE_COMMIT_HOME=str(project.parent / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), *args, "--files", *files],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_hooks_fail_on_the_hazard_fix_it_and_then_pass(project: Path) -> None:
    checked = try_repo(project, "flake8-detach")
    output = checked.stdout + checked.stderr
    assert checked.returncode == 1, output
    assert "bad.py:3:3: DET101 [*] .numpy() on a tensor that may require grad" in output
    assert "Traceback" not in output

    fixed = try_repo(project, "flake8-detach-fix")
    output = fixed.stdout + fixed.stderr
    # A hook that changes files fails, as formatters do: pre-commit sees the change (fix exits 0 as ruff).
    assert fixed.returncode == 1, output
    assert "files were modified by this hook" in output
    assert (project / "bad.py").read_text() == HAZARD.replace("w.numpy()", "w.detach().numpy()")

    # Both hooks (no hook id: every hook of the repository) now pass on the fixed file.
    again = try_repo(project)
    output = again.stdout + again.stderr
    assert again.returncode == 0, output
    assert output.count("Passed") == 2, output


def test_the_hooks_run_on_notebooks(project: Path) -> None:
    notebook = REPO / "fixtures" / "notebooks" / "train_across_cells.ipynb"
    (project / "train.ipynb").write_bytes(notebook.read_bytes())
    _git(project, "add", "train.ipynb")
    checked = try_repo(project, "flake8-detach", files=("train.ipynb",))
    output = checked.stdout + checked.stderr
    assert checked.returncode == 1, output
    assert "train.ipynb:cell 4:3:12: DET101" in output  # cells counted as ruff counts them
    fixed = try_repo(project, "flake8-detach-fix", files=("train.ipynb",))
    assert "files were modified by this hook" in fixed.stdout + fixed.stderr
    assert "out.detach().numpy()" in (project / "train.ipynb").read_text(encoding="utf-8")
