"""`flake8-detach fix`: modes, exit codes, summary line, selection, excludes, bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flake8_detach.cli import main

# `w`: a parameter (its layer may be moved to a GPU), so `.cpu().detach()` of it is DET102.
GRAD = "import torch\nw = torch.nn.Linear(3, 1).weight\n"
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


class CountingFix:
    """Counts the files `fix` really analyses (the cache answers the others)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from flake8_detach.cli import fixing

        self.paths: list[str] = []
        original = fixing.fix_file

        def counted(path, *args, **kwargs):
            self.paths.append(Path(path).name)
            return original(path, *args, **kwargs)

        monkeypatch.setattr(fixing, "fix_file", counted)


def test_the_cache_skips_files_left_with_nothing_to_fix(project, capsys, monkeypatch):
    (project / "write.py").write_text(WRITE)
    counter = CountingFix(monkeypatch)
    first = run(capsys, ".")
    assert first[0] == 1 and sorted(counter.paths) == ["clean.py", "eval.py", "train.py", "write.py"]
    # Fixed files were stored under their new bytes, the others under theirs: nothing is analysed.
    second = run(capsys, ".")
    assert len(counter.paths) == 4, counter.paths
    assert second[0] == 1 and "write.py:3:14: DET103" in second[1] and "[unsafe fix available]" in second[1]
    assert second[1].strip().splitlines()[-1] == "0 fixes applied in 0 files; 1 diagnostic left (1 fixable with --unsafe-fixes)"
    assert run(capsys, ".", "--no-cache")[1] == second[1]
    assert len(counter.paths) == 8
    # Another unsafe flag or style is another entry; an edited file is analysed again.
    assert run(capsys, ".", "--unsafe-fixes")[0] == 0
    assert (project / "write.py").read_text().endswith("    model.weight.zero_()\n")
    (project / "pkg" / "eval.py").write_text(ONE_FIX)
    counter.paths.clear()
    assert run(capsys, ".", "--unsafe-fixes")[0] == 0
    assert counter.paths == ["eval.py"]


def test_the_fix_cache_lives_where_cache_dir_says(project, capsys, tmp_path_factory):
    directory = tmp_path_factory.mktemp("elsewhere") / "cache"
    run(capsys, "--cache-dir", str(directory), "pkg")
    own = directory / "flake8-detach-v1"  # the cache writes only in its own folder
    assert (own / "CACHEDIR.TAG").is_file() and any(own.glob("??/*.json"))


def test_a_dry_run_never_stores_a_file_it_would_change(project, capsys, monkeypatch):
    counter = CountingFix(monkeypatch)
    run(capsys, "--check", "pkg/eval.py")
    run(capsys, "--check", "pkg/eval.py")
    assert counter.paths == ["eval.py", "eval.py"]
    assert (project / "pkg" / "eval.py").read_text() == ONE_FIX


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_fix_fixes_then_reports_what_is_left(project, capsys):
    (project / "write.py").write_text(WRITE)
    code, out, _ = check(capsys, "--fix", ".")
    assert code == 1  # the unsafe DET103 write is left
    assert out.splitlines() == [
        ("write.py:3:14: DET103 in-place write through .data is invisible to autograd and can silently corrupt "
        "gradients; write under torch.no_grad() instead"),
        "Found 4 errors (3 fixed, 1 remaining).",
        "1 unsafe fix available with `--fix --unsafe-fixes`.",
    ]
    assert (project / "pkg" / "eval.py").read_text() == GRAD + "c = w.detach().cpu().numpy()\n"
    code, out, _ = check(capsys, "--fix", "--unsafe-fixes", ".")
    assert (code, out) == (0, "Found 1 error (1 fixed, 0 remaining).\n")
    assert check(capsys, "--fix", ".")[:2] == (0, "All checks passed!\n")


def test_check_fix_reports_in_every_format(project, capsys):
    import json

    (project / "write.py").write_text(WRITE)
    code, out, _ = check(capsys, "--fix", "--format", "json", ".")
    document = json.loads(out)
    assert code == 1 and [entry["code"] for entry in document["diagnostics"]] == ["DET103"]
    assert document["diagnostics"][0]["fix"]["safe"] is False  # the unsafe fix is still offered


def test_check_diff_changes_nothing_and_exits_1_when_something_would_change(project, capsys):
    code, out, err = check(capsys, "--diff", "pkg")
    assert code == 1
    assert "-c = w.cpu().numpy()\n+c = w.detach().cpu().numpy()\n" in out
    assert err == "Would fix 3 errors.\n"
    assert (project / "pkg" / "eval.py").read_text() == ONE_FIX
    assert check(capsys, "--fix", "--diff", "pkg/clean.py")[::2] == (0, "No errors would be fixed.\n")


def test_check_fix_and_fix_agree(project, capsys, tmp_path_factory):
    import shutil

    twin = tmp_path_factory.mktemp("twin")
    shutil.copytree(project / "pkg", twin / "pkg")
    check(capsys, "--fix", "pkg")
    main(["fix", str(twin / "pkg")])
    for name in ("train.py", "eval.py", "clean.py"):
        assert (project / "pkg" / name).read_text() == (twin / "pkg" / name).read_text()


def test_check_fix_refuses_stdin(project, capsys):
    code, _, err = check(capsys, "--fix", "-")
    assert code == 2 and "fix -" in err


def test_fix_help_names_every_rule_with_a_fix(capsys):
    from flake8_detach.rules import ALL_RULES

    with pytest.raises(SystemExit):
        main(["fix", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    with_fixes = [rule.code for rule in ALL_RULES if any(example.fixed is not None for example in rule.INVALID)]
    assert with_fixes == ["DET101", "DET102", "DET103", "DET104", "DET105", "DET106", "DET107", "DET108", "DET109",
                          "DET111"]
    assert f"{with_fixes[0]}-{with_fixes[-1]}" in text


def test_check_fix_on_a_notebook_points_sarif_into_its_json(project, capsys):
    import json

    cells = [GRAD + "a = w.numpy()", "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.weight.data.zero_()"]
    document = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                           "source": source.splitlines(keepends=True)} for i, source in enumerate(cells)],
                "metadata": {"kernelspec": {"language": "python", "name": "k", "display_name": "k"}},
                "nbformat": 4, "nbformat_minor": 5}
    (project / "nb.ipynb").write_text(json.dumps(document, indent=1) + "\n")
    code, out, _ = check(capsys, "--fix", "--format", "sarif", "nb.ipynb")
    assert code == 1  # the DET103 write is left (its fix is unsafe)
    fixed = json.loads(out)["runs"][0]["results"]
    assert "w.detach().numpy()" in (project / "nb.ipynb").read_text()
    # The same place a plain check of the fixed notebook gives: the line of the .ipynb holding it.
    plain = json.loads(check(capsys, "--format", "sarif", "nb.ipynb")[1])["runs"][0]["results"]
    assert [r["locations"] for r in fixed] == [r["locations"] for r in plain]
    assert fixed[0]["locations"][0]["physicalLocation"]["region"]["startLine"] > 1


def test_fix_in_worker_processes_does_what_one_process_does(tmp_path, monkeypatch, capsys):
    from flake8_detach.cli.parallel import PARALLEL_MIN_FILES

    monkeypatch.chdir(tmp_path)
    for folder in ("serial", "parallel"):
        (tmp_path / folder).mkdir()
        for index in range(PARALLEL_MIN_FILES + 2):
            (tmp_path / folder / f"m{index:02}.py").write_text(TWO_FIXES if index % 3 else WRITE)
    serial = run(capsys, "--jobs", "1", "serial")
    parallel = run(capsys, "--jobs", "2", "parallel")
    assert parallel == (serial[0], serial[1].replace("serial/", "parallel/"), serial[2])
    assert serial[0] == 1 and serial[1].strip().splitlines()[-1] == (
        "24 fixes applied in 12 files; 6 diagnostics left (6 fixable with --unsafe-fixes)")
    for path in (tmp_path / "serial").iterdir():
        assert (tmp_path / "parallel" / path.name).read_text() == path.read_text()
    # The workers' cache entries are read back: nothing is analysed again.
    counter = CountingFix(monkeypatch)
    assert run(capsys, "--jobs", "2", "parallel") == run(capsys, "--jobs", "1", "parallel")
    assert counter.paths == []
