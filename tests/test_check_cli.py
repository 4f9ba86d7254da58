"""`flake8-detach check`: the same diagnostics as flake8, file discovery, decoding, exit codes."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import diagnostic_lines

from flake8_detach.cli import main

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"

GRAD_LEAF = "import torch\nw = torch.ones(3, requires_grad=True)\n"
HAZARD = GRAD_LEAF + "w.numpy()\n"
CLEAN = GRAD_LEAF + "w.detach().numpy()\n"
DET101_LINE = "bad.py:3:3: DET101 .numpy() on a tensor that may require grad"


def run_check(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def flake8_lines(paths: list[Path], cwd: Path) -> list[str]:
    """What flake8 itself reports (DET codes only), for side-by-side comparison."""
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "DET", "--no-show-source", *map(str, paths)],
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
    )
    assert completed.returncode in (0, 1), completed.stderr
    return completed.stdout.splitlines()


def test_text_output_is_flake8s_on_the_fixtures(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    # flake8 on this interpreter cannot parse every fixture (newer syntax): compare the others.
    files = sorted(
        path.relative_to(REPO)
        for path in FIXTURES.rglob("*.py")
        if _parses(path)
    )
    assert files, "no fixtures found"
    # The same selection on both fronts: flake8's explicit `--select DET` names the opt-in DET111 too.
    code, out, err = run_check(["--select", "DET", *(str(path) for path in files)], capsys)
    expected = flake8_lines(files, REPO)
    assert diagnostic_lines(out) == expected
    assert expected, "the fixtures flag nothing: the comparison would prove nothing"
    assert code == 1
    assert err == ""


def _parses(path: Path) -> bool:
    try:
        ast.parse(path.read_bytes())
    except SyntaxError:
        return False
    return True


def test_clean_file_exits_0_saying_so_as_ruff_does(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("ok.py").write_text(CLEAN)
    assert run_check(["ok.py"], capsys) == (0, "All checks passed!\n", "")


def test_hazard_exits_1_with_the_flake8_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.py").write_text(HAZARD)
    code, out, _ = run_check(["bad.py"], capsys)
    assert code == 1
    assert diagnostic_lines(out)[0].startswith(DET101_LINE)
    assert diagnostic_lines(out) == flake8_lines([Path("bad.py")], tmp_path)


NOQA_CASES = {
    "bare": "w.numpy()  # noqa\n",
    "named": "w.numpy()  # noqa: DET101\n",
    "prefix": "w.numpy()  # noqa:DET1\n",
    "other code": "w.numpy()  # noqa: DET102\n",
    "other tool": "w.numpy()  # noqa: E501\n",
    "lowercase": "w.numpy()  # NOQA: det101\n",
    "backslash continuation": "x = \\\n    w.numpy()  # noqa: DET101\n",
    "multi-line string on the line": 'f(w.numpy(), """\n""")  # noqa: DET101\n',
    "parenthesised continuation": "x = (\n    w.numpy()\n)  # noqa: DET101\n",
    "file-level": "# flake8: noqa\nw.numpy()\n",
    "file-level with code": "w.numpy()  # flake8: noqa\n",
}


@pytest.mark.parametrize("case", sorted(NOQA_CASES))
def test_noqa_handling_matches_flake8(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.py").write_text(GRAD_LEAF + "def f(*a): pass\n" + NOQA_CASES[case])
    _, out, _ = run_check(["bad.py"], capsys)
    assert diagnostic_lines(out) == flake8_lines([Path("bad.py")], tmp_path)


def test_noqa_cases_are_not_all_silent(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard for the parity test above: some cases must report, some must not."""
    monkeypatch.chdir(tmp_path)
    reported = {}
    for case, tail in NOQA_CASES.items():
        Path("bad.py").write_text(GRAD_LEAF + "def f(*a): pass\n" + tail)
        reported[case] = run_check(["bad.py"], capsys)[0]
    assert reported["other code"] == reported["other tool"] == reported["parenthesised continuation"] == 1
    assert reported["named"] == reported["backslash continuation"] == reported["file-level"] == 0


def test_coding_cookie_and_bom_are_decoded_like_flake8(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    latin = "# -*- coding: latin-1 -*-\n" + GRAD_LEAF + "café = 1; w.numpy()\n"
    Path("latin.py").write_bytes(latin.encode("latin-1"))
    Path("bom.py").write_bytes(b"\xef\xbb\xbf" + HAZARD.encode())
    Path("crlf.py").write_bytes(HAZARD.replace("\n", "\r\n").encode())
    code, out, err = run_check(["latin.py", "bom.py", "crlf.py"], capsys)
    assert code == 1, err
    assert sorted(diagnostic_lines(out)) == flake8_lines([Path("latin.py"), Path("bom.py"), Path("crlf.py")], tmp_path)
    # The column counts characters: `café = 1; ` is 10 of them (11 bytes in UTF-8).
    assert diagnostic_lines(out)[0].startswith("latin.py:4:13: DET101")
    assert len(diagnostic_lines(out)) == 3


def test_undecodable_and_unparsable_files_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("binary.py").write_bytes(b"import torch\nx = '\xff\xfe'\n")
    Path("cookie.py").write_bytes(b"# coding: no-such-codec\nimport torch\n")
    Path("syntax.py").write_text("import torch\nx = (\n")
    code, out, err = run_check(["binary.py", "cookie.py", "syntax.py"], capsys)
    assert code == 1  # reported, as ruff and flake8 do; 2 is for usage and internal errors
    assert out == "Found 3 errors.\n"  # a file that cannot be checked counts, as ruff counts a syntax error
    lines = err.splitlines()
    assert len(lines) == 3, err
    assert lines[0].startswith("binary.py: error: cannot decode as utf-8")
    assert lines[1].startswith("cookie.py: error: cannot decode")
    assert lines[2].startswith("syntax.py: error: syntax error at line 2")
    assert "Traceback" not in err


def test_a_file_that_cannot_be_checked_exits_1_not_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.py").write_text(HAZARD)
    code, out, err = run_check(["bad.py", "missing.py"], capsys)
    assert code == 1
    assert diagnostic_lines(out)[0].startswith(DET101_LINE)
    assert err == "missing.py: error: no such file or directory\n"


def test_directories_recurse_and_skip_the_usual_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for folder in ("src/pkg", ".git", ".venv/lib", "venv", "build", "dist", "__pycache__", ".tox", ".eggs", "node_modules", "generated"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / "bad.py").write_text(HAZARD)
    Path("src/pkg/notes.txt").write_text(HAZARD)
    code, out, _ = run_check(["."], capsys)
    assert code == 1
    assert sorted(line.split(":")[0] for line in diagnostic_lines(out)) == ["generated/bad.py", "src/pkg/bad.py"]
    code, out, _ = run_check([".", "--extend-exclude", "generated"], capsys)
    assert [line.split(":")[0] for line in diagnostic_lines(out)] == ["src/pkg/bad.py"]


def test_extend_exclude_from_pyproject(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("pyproject.toml").write_text('[tool.flake8-detach]\nextend-exclude = ["legacy", "src/gen_*.py"]\n')
    for name in ("legacy/old.py", "src/gen_a.py", "src/real.py"):
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(HAZARD)
    code, out, _ = run_check(["."], capsys)
    assert code == 1
    assert [line.split(":")[0] for line in diagnostic_lines(out)] == ["src/real.py"]


def test_select_and_ignore(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.py").write_text(HAZARD)
    assert run_check(["bad.py", "--ignore", "DET101"], capsys)[0] == 0
    assert run_check(["bad.py", "--select", "DET104"], capsys)[0] == 0
    assert run_check(["bad.py", "--select", "DET1"], capsys)[0] == 1
    code, _, err = run_check(["bad.py", "--select", "E501"], capsys)
    assert code == 2
    assert "select" in err and "'E501' matches no flake8-detach rule" in err


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(HAZARD.encode())))
    code, out, _ = run_check(["-", "--stdin-filename", "bad.py"], capsys)
    assert code == 1
    assert diagnostic_lines(out)[0].startswith(DET101_LINE)


def test_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.py").write_text(HAZARD)
    code, out, _ = run_check(["bad.py", "--format", "json", "--output-file", "report.json"], capsys)
    assert (code, out) == (1, "")
    assert json.loads(Path("report.json").read_text())["summary"]["diagnostics"] == 1


def test_output_format_is_ruffs_name_for_format(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.py").write_text(HAZARD)
    code, out, _ = run_check(["bad.py", "--output-format", "json"], capsys)
    assert code == 1
    assert json.loads(out)["summary"]["diagnostics"] == 1


def test_bad_config_exits_2_naming_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("pyproject.toml").write_text('[tool.flake8-detach]\nfix-style = "forced"\n')
    Path("bad.py").write_text(HAZARD)
    code, out, err = run_check(["bad.py"], capsys)
    assert (code, out) == (2, "")
    assert "fix-style" in err and "'forced'" in err
    assert len(err.splitlines()) == 1


def test_console_script_end_to_end(tmp_path: Path) -> None:
    """The installed entry point, as CI runs it."""
    (tmp_path / "bad.py").write_text(HAZARD)
    completed = subprocess.run(
        [sys.executable, "-m", "flake8_detach", "check", "--format", "github", "bad.py"],
        cwd=tmp_path,
        check=False,
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.startswith("::error file=bad.py,line=3,endLine=3,col=3,endColumn=8,title=DET101::.numpy()")


def test_a_file_named_explicitly_is_checked_whatever_its_name(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """pre-commit passes scripts it recognises by their shebang (`types: [python]`) by name."""
    monkeypatch.chdir(tmp_path)
    Path("train").write_text("#!/usr/bin/env python\n" + HAZARD)
    code, out, _ = run_check(["train"], capsys)
    assert code == 1
    assert diagnostic_lines(out)[0].startswith("train:4:3: DET101")


def test_is_path_excluded_looks_at_folders_between_root_and_file(tmp_path: Path) -> None:
    from flake8_detach.sources.files import is_path_excluded

    assert is_path_excluded(tmp_path / ".venv" / "lib" / "x.py", (), tmp_path)
    assert is_path_excluded(tmp_path / "gen" / "x.py", ("gen",), tmp_path)
    assert not is_path_excluded(tmp_path / "src" / "x.py", ("gen",), tmp_path)
    # Folders above the root are not the project's business (a checkout under ~/build/ is fine).
    assert not is_path_excluded(tmp_path / "src" / "x.py", (), tmp_path / "src")
    assert not is_path_excluded(tmp_path / "build" / "proj" / "x.py", (), tmp_path / "build" / "proj")


@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_parallel_run_reports_exactly_what_the_serial_run_does(
    output_format: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from flake8_detach.cli.check import PARALLEL_MIN_FILES

    monkeypatch.chdir(tmp_path)
    for index in range(PARALLEL_MIN_FILES + 4):
        Path(f"m{index:02}.py").write_text(HAZARD if index % 3 else CLEAN)
    Path("m99.py").write_text("import torch\nx = (\n")
    serial = run_check([".", "--jobs", "1", "--format", output_format], capsys)
    parallel = run_check([".", "--jobs", "2", "--format", output_format], capsys)
    assert serial == parallel
    assert serial[0] == 1 and "m99.py: error: syntax error" in serial[2]
    if output_format == "json":
        assert sum(1 for d in json.loads(serial[1])["diagnostics"] if d["fix"]) == 13


def test_check_paths_really_uses_worker_processes(tmp_path: Path) -> None:
    """Reports from workers arrive detached (no libcst tree): proof the pool ran, not the fallback."""
    from flake8_detach.cli.check import PARALLEL_MIN_FILES, check_paths
    from flake8_detach.engine import Settings

    paths = []
    for index in range(PARALLEL_MIN_FILES):
        path = tmp_path / f"m{index:02}.py"
        path.write_text(HAZARD)
        paths.append(path)
    serial = check_paths([(path, Settings()) for path in paths], jobs=1, with_fixes=True)
    parallel = check_paths([(path, Settings()) for path in paths], jobs=2, with_fixes=True)
    assert all(report.module is not None for report in serial)
    assert all(report.module is None for report in parallel)
    assert [r.rendered_fixes() for r in parallel] == [r.rendered_fixes() for r in serial]
    assert [[(d.code, d.line, d.column) for d in r.diagnostics] for r in parallel] == [
        [(d.code, d.line, d.column) for d in r.diagnostics] for r in serial
    ]


def test_lsp_without_pygls_says_how_to_install_it(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name == "pygls" or name.startswith(("pygls.", "flake8_detach.lsp"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pygls", None)  # makes `import pygls` raise ImportError
    assert main(["lsp"]) == 2
    assert "pip install 'flake8-detach[lsp]'" in capsys.readouterr().err


def test_null_byte_is_one_clear_line(tmp_path) -> None:
    import subprocess
    import sys

    path = tmp_path / "nul.py"
    path.write_bytes(b"import torch\nx = 1\x00\n")
    result = subprocess.run([sys.executable, "-m", "flake8_detach", "check", str(path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "None" not in result.stdout + result.stderr
    assert "null bytes" in result.stdout + result.stderr


def test_only_a_clean_run_exits_0_even_with_a_syntax_error_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("syntax.py").write_text("import torch\nx = (\n")
    code, out, err = run_check(["syntax.py"], capsys)
    assert (code, out) == (1, "Found 1 error.\n")
    assert err.startswith("syntax.py: error: syntax error at line 2")


def test_an_internal_error_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import flake8_detach.engine as engine_module

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("a bug in a rule")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(engine_module, "analyze_module", broken)
    Path("bad.py").write_text(HAZARD)
    code, _, err = run_check(["bad.py", "--jobs", "1"], capsys)
    assert code == 2
    assert "bad.py: error: internal error, file skipped: KeyError" in err


def test_newer_syntax_than_this_python_is_read_by_libcst(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # PEP 695 generics (3.12): Python 3.11's ast refuses them, libcst reads them.
    monkeypatch.chdir(tmp_path)
    Path("new.py").write_text(
        "import torch\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n\n"
        "w = torch.ones(2, requires_grad=True)\nw.numpy()\n"
    )
    code, out, err = run_check(["new.py"], capsys)
    assert (code, err) == (1, "")
    assert diagnostic_lines(out)[0].startswith("new.py:7:3: DET101")


def test_a_compiler_warning_is_not_printed(tmp_path: Path) -> None:
    """`1if x` is a SyntaxWarning from the compiler, not a finding: check and fix stay quiet."""
    (tmp_path / "w.py").write_text("import torch\nx = 1if True else 2\n")
    for argv in (["check", "--no-cache", "w.py"], ["fix", "--no-cache", "w.py"]):
        completed = subprocess.run([sys.executable, "-W", "always", "-m", "flake8_detach", *argv], cwd=tmp_path,
                                   capture_output=True, text=True, check=False, timeout=120)
        assert completed.returncode == 0, completed.stderr
        assert "Warning" not in completed.stderr
