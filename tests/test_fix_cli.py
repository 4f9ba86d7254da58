"""`flake8-detach fix`: modes, exit codes, summary line, selection, excludes, bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flake8_detach.cli import main

GRAD = "import torch\nw = torch.ones(3, requires_grad=True)\n"
TWO_FIXES = GRAD + "a = w.numpy()\nb = w.cpu().detach()\n"
ONE_FIX = GRAD + "c = w.cpu().numpy()\n"
WRITE = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.weight.data.zero_()\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no pyproject.toml above: default configuration
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(TWO_FIXES)
    (tmp_path / "pkg" / "eval.py").write_text(ONE_FIX)
    (tmp_path / "pkg" / "clean.py").write_text(GRAD + "a = w.detach().numpy()\n")
    for excluded in (".venv", "build", "node_modules", "__pycache__"):
        (tmp_path / excluded).mkdir()
        (tmp_path / excluded / "vendored.py").write_text(ONE_FIX)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["fix", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_fix_writes_and_prints_the_summary(project, capsys):
    code, out, _ = run(capsys, ".")
    assert code == 0  # as ruff: everything found was fixed, nothing is left
    assert out.strip().splitlines()[-1] == "3 fixes applied in 2 files"
    assert (project / "pkg" / "train.py").read_text() == GRAD + "a = w.detach().numpy()\nb = w.detach().cpu()\n"
    assert (project / "pkg" / "eval.py").read_text() == GRAD + "c = w.detach().cpu().numpy()\n"
    for excluded in (".venv", "build", "node_modules", "__pycache__"):
        assert (project / excluded / "vendored.py").read_text() == ONE_FIX
    code, out, _ = run(capsys, ".")
    assert (code, out.strip()) == (0, "0 fixes applied in 0 files")


def test_diff_prints_a_unified_diff_and_changes_nothing(project, capsys):
    code, out, err = run(capsys, "--diff", "pkg")
    assert code == 1
    assert "--- a/pkg/eval.py\n+++ b/pkg/eval.py\n" in out
    assert "-c = w.cpu().numpy()\n+c = w.detach().cpu().numpy()\n" in out
    assert err.strip().splitlines()[-1] == "3 fixes would be applied in 2 files"
    assert (project / "pkg" / "eval.py").read_text() == ONE_FIX


def test_diff_applies_cleanly_with_patch(project, capsys):
    patch = pytest.importorskip("shutil").which("patch")
    if patch is None:
        pytest.skip("no patch(1) on this machine")
    _, out, _ = run(capsys, "--diff", "pkg")
    subprocess.run([patch, "-p1", "--quiet"], input=out, text=True, check=True, cwd=project)
    assert (project / "pkg" / "eval.py").read_text() == GRAD + "c = w.detach().cpu().numpy()\n"


def test_check_exit_codes(project, capsys):
    code, out, _ = run(capsys, "--check", "pkg")
    assert code == 1 and out.strip().endswith("3 fixes would be applied in 2 files")
    assert (project / "pkg" / "train.py").read_text() == TWO_FIXES
    code, out, _ = run(capsys, "--check", "pkg/clean.py")
    assert (code, out.strip()) == (0, "0 fixes would be applied in 0 files")


def test_unsafe_fixes_are_opt_in_and_remaining_diagnostics_are_listed(project, capsys):
    path = project / "write.py"
    path.write_text(WRITE)
    code, out, _ = run(capsys, "write.py")
    assert code == 1  # something is left to fix
    assert "write.py:3:14: DET103 in-place write through .data" in out
    assert "[unsafe fix available]" in out
    assert out.strip().splitlines()[-1] == "0 fixes applied in 0 files; 1 diagnostic left (1 fixable with --unsafe-fixes)"
    assert path.read_text() == WRITE
    code, out, _ = run(capsys, "--unsafe-fixes", "write.py")
    assert (code, out.strip()) == (0, "1 fix applied in 1 file")
    assert path.read_text().endswith("with torch.no_grad():\n    model.weight.zero_()\n")


def test_select_and_ignore(project, capsys):
    _, out, _ = run(capsys, "--select", "DET102", "pkg")
    assert out.strip() == "1 fix applied in 1 file"
    assert (project / "pkg" / "train.py").read_text() == GRAD + "a = w.numpy()\nb = w.detach().cpu()\n"
    assert (project / "pkg" / "eval.py").read_text() == ONE_FIX
    code, out, _ = run(capsys, "--ignore", "DET101", "pkg")
    assert (code, out.strip()) == (0, "0 fixes applied in 0 files")  # only DET101 is left, and ignored
    assert (project / "pkg" / "eval.py").read_text() == ONE_FIX


def test_style_force(project, capsys):
    _, out, _ = run(capsys, "--style", "force", "pkg/eval.py")
    assert out.strip() == "1 fix applied in 1 file"
    assert (project / "pkg" / "eval.py").read_text() == GRAD + "c = w.cpu().numpy(force=True)\n"


def test_style_from_pyproject(project, capsys):
    (project / "pyproject.toml").write_text('[tool.flake8-detach]\nfix-style = "force"\n')
    run(capsys, "pkg/eval.py")
    assert (project / "pkg" / "eval.py").read_text().endswith("c = w.cpu().numpy(force=True)\n")


def test_missing_path_and_unparsable_file_exit_2_and_the_rest_is_fixed(project, capsys):
    broken = project / "pkg" / "broken.py"
    broken.write_text(GRAD + "w.numpy(\n")
    code, out, err = run(capsys, "pkg", "missing.py")
    assert code == 2
    assert "missing.py: error: no such file or directory" in err
    # check's words for a syntax error, never libcst's `Syntax Error @ 4:1.`
    assert "broken.py: error: syntax error at line 3, column 8: '(' was never closed; left unchanged" in err
    assert broken.read_text() == GRAD + "w.numpy(\n"
    assert out.strip().splitlines()[-1] == "3 fixes applied in 2 files; 2 errors"


def test_usage_errors_exit_2(project, capsys):
    with pytest.raises(SystemExit) as raised:
        main(["fix", "--style", "fancy", "pkg"])
    assert raised.value.code == 2
    code, _, err = run(capsys, "--select", "not-a-code", "pkg")
    assert code == 2 and "select" in err
    assert (project / "pkg" / "eval.py").read_text() == ONE_FIX


def test_console_script_in_a_subprocess(project):
    completed = subprocess.run(
        [sys.executable, "-m", "flake8_detach", "fix", "pkg/eval.py"], check=False, capture_output=True, text=True, cwd=project
    )
    assert (completed.returncode, completed.stdout.strip()) == (0, "1 fix applied in 1 file"), completed.stderr


def test_no_path_means_the_current_folder(project, capsys):
    code, out, _ = run(capsys)
    assert (code, out.strip()) == (0, "3 fixes applied in 2 files")
    assert (project / "pkg" / "eval.py").read_text() == GRAD + "c = w.detach().cpu().numpy()\n"


def test_a_syntax_error_without_a_hazard_token_is_reported_as_check_reports_it(project, capsys):
    (project / "pkg" / "plain.py").write_text("x = 1\n\ndef f(:\n    pass\n")
    code, _, err = run(capsys, "pkg/plain.py")
    assert code == 2
    assert err.splitlines()[0] == "pkg/plain.py: error: syntax error at line 3, column 7: invalid syntax; left unchanged"
    check_code = main(["check", "pkg/plain.py"])
    check_err = capsys.readouterr().err
    assert check_code == 1
    assert check_err.splitlines()[0] == "pkg/plain.py: error: syntax error at line 3, column 7: invalid syntax"


def test_newer_grammar_than_this_python_is_no_error(project, capsys):
    # libcst reads every version's grammar: what only a newer Python reads is fixed, not refused.
    import ast
    source = GRAD + "type Alias = int\nc = w.cpu().numpy()\n"
    try:
        ast.parse(source)
    except SyntaxError:
        pass
    else:
        pytest.skip("this Python reads `type` statements")
    (project / "pkg" / "newer.py").write_text(source)
    code, out, err = run(capsys, "pkg/newer.py")
    assert (code, out.strip(), err) == (0, "1 fix applied in 1 file", "")


def test_exit_codes_follow_ruff(project, capsys):
    (project / "write.py").write_text(WRITE)
    assert run(capsys, "pkg/clean.py")[0] == 0  # nothing found
    assert run(capsys, "--diff", "pkg/eval.py")[0] == 1  # would change
    assert run(capsys, "pkg/eval.py")[0] == 0  # everything fixed
    assert run(capsys, "--diff", "pkg/eval.py")[0] == 0  # nothing left to change
    assert run(capsys, "write.py")[0] == 1  # a diagnostic is left (its fix is unsafe)
    assert run(capsys, "--check", "write.py")[0] == 1
