"""The options users of ruff and flake8 expect from `check` and `fix`, each run for real."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, diagnostic_lines

from flake8_detach.cli import main

GRAD_LEAF = "import torch\nw = torch.ones(3, requires_grad=True)\n"
HAZARD = GRAD_LEAF + "w.numpy()\n"
TWO_RULES = "import torch\nw = torch.ones(3, requires_grad=True).cuda()\nw.numpy()\n"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    (tmp_path / "bad.py").write_text(HAZARD)
    return tmp_path


def test_exit_zero_keeps_the_output_but_not_the_failure(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["check", "bad.py", "--exit-zero"], capsys)
    assert code == 0 and out.startswith("bad.py:3:3: DET101")
    assert run(["check", "missing_config.py", "--exit-zero", "--select", "E501"], capsys)[0] == 2  # usage error


def test_statistics_count_per_code(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "two.py").write_text(TWO_RULES + "w.numpy()\n")
    code, out, _ = run(["check", ".", "--statistics"], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[-4].startswith("3     DET101 .numpy() on a tensor that may require grad")
    assert lines[-3].startswith("2     DET104 ")
    assert lines[-2:] == ["Found 5 errors.", "[*] 5 fixable with `--fix`."]  # the summary closes the output
    code, out, err = run(["check", ".", "--statistics", "--format", "json"], capsys)
    json.loads(out)  # the document stays valid: the table goes to stderr
    assert err.splitlines()[0].startswith("3     DET101")


def test_show_source_prints_the_line_and_a_caret(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "tabs.py").write_text(GRAD_LEAF + "if True:\n\tw.numpy()\n")
    code, out, _ = run(["check", "bad.py", "tabs.py", "--show-source"], capsys)
    assert code == 1
    first = "bad.py:3:3: DET101 [*] .numpy() on a tensor that may require grad raises RuntimeError; call .detach() first"
    assert out.splitlines()[:3] == [first, "w.numpy()", "  ^^^^^"]
    assert out.splitlines()[4:6] == ["\tw.numpy()", "\t  ^^^^^"]


def test_color_always_never_and_no_color(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert "\033[" in run(["check", "bad.py", "--color", "always"], capsys)[1]
    assert "\033[" not in run(["check", "bad.py", "--color", "never"], capsys)[1]
    assert "\033[" not in run(["check", "bad.py"], capsys)[1]  # auto, and pytest's stdout is no terminal


def _on_a_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run the CLI with stdout and stderr on a pseudo-terminal, as a user's shell does."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "flake8_detach", *args], cwd=cwd, env=env,
                               stdout=follower, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_unless_no_color(project: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    assert "\033[31mDET101" in _on_a_terminal(["check", "bad.py"], project, env)
    plain = _on_a_terminal(["check", "bad.py"], project, {**env, "NO_COLOR": "1"})
    assert "DET101" in plain and "\033[" not in plain


def test_extend_select_and_extend_ignore(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "two.py").write_text(TWO_RULES)
    (project / "pyproject.toml").write_text("[tool.flake8-detach]\nselect = ['DET104']\n")
    def codes(out: str) -> list[str]:
        return sorted({line.split()[1] for line in diagnostic_lines(out)})

    assert codes(run(["check", "two.py"], capsys)[1]) == ["DET104"]
    assert codes(run(["check", "two.py", "--extend-select", "DET101"], capsys)[1]) == ["DET101", "DET104"]
    assert codes(run(["check", "two.py", "--extend-select", "DET101", "--extend-ignore", "DET104"], capsys)[1]) == ["DET101"]
    (project / "pyproject.toml").write_text("[tool.flake8-detach]\nextend-ignore = ['DET104']\n")
    assert codes(run(["check", "two.py"], capsys)[1]) == ["DET101"]


def test_per_file_ignores(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "tests").mkdir()
    (project / "tests" / "test_model.py").write_text(TWO_RULES)
    (project / "pyproject.toml").write_text(
        '[tool.flake8-detach]\nper-file-ignores = { "tests/*" = ["DET101"], "bad.py" = ["DET1"] }\n'
    )
    code, out, _ = run(["check", "."], capsys)
    assert diagnostic_lines(out) == [line for line in diagnostic_lines(out) if "DET104" in line]
    assert "tests/test_model.py:3:3: DET104" in out and code == 1
    (project / "pyproject.toml").write_text('[tool.flake8-detach]\nper-file-ignores = { "x" = ["E501"] }\n')
    code, _, err = run(["check", "."], capsys)
    assert code == 2 and "per-file-ignores.x" in err


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for folder in ("build", "generated"):
        (project / folder).mkdir()
        (project / folder / "bad.py").write_text(HAZARD)
    out = run(["check", "."], capsys)[1]
    assert "generated/bad.py" in out and "build/bad.py" not in out
    out = run(["check", ".", "--exclude", "generated"], capsys)[1]
    assert "build/bad.py" in out and "generated/bad.py" not in out
    out = run(["check", ".", "--extend-exclude", "generated"], capsys)[1]
    assert "build/bad.py" not in out and "generated/bad.py" not in out


def test_gitignore_is_respected_by_check_and_fix(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("generated/\n*_pb2.py\n")
    (project / "generated").mkdir()
    (project / "generated" / "bad.py").write_text(HAZARD)
    (project / "model_pb2.py").write_text(HAZARD)
    (project / "src").mkdir()
    (project / "src" / ".gitignore").write_text("local.py\n")
    (project / "src" / "local.py").write_text(HAZARD)
    (project / "src" / "kept.py").write_text(HAZARD)
    out = run(["check", "."], capsys)[1]
    reported = sorted({line.split(":")[0] for line in diagnostic_lines(out)})
    assert reported == ["bad.py", "src/kept.py"]
    # fix leaves the ignored (generated) files alone.
    run(["fix", "."], capsys)
    assert (project / "generated" / "bad.py").read_text() == HAZARD
    assert (project / "model_pb2.py").read_text() == HAZARD
    assert ".detach()" in (project / "src" / "kept.py").read_text()
    # Explicitly named files are checked; the opt-out walks everything.
    assert "model_pb2.py:3:3" in run(["check", "model_pb2.py"], capsys)[1]
    out = run(["check", ".", "--no-respect-gitignore"], capsys)[1]
    assert "generated/bad.py" in out and "src/local.py" in out


def test_the_walk_reads_gitignores_of_the_repository_above(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("out/\n")
    (project / "pkg" / "out").mkdir(parents=True)
    (project / "pkg" / "out" / "bad.py").write_text(HAZARD)
    (project / "pkg" / "ok.py").write_text(HAZARD)
    monkeypatch.chdir(project / "pkg")
    out = run(["check", "."], capsys)[1]
    assert "ok.py:3:3" in out and "out/bad.py" not in out


def test_fix_stdin_writes_the_fixed_source_to_stdout(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.flake8-detach]\nper-file-ignores = { "skip_*.py" = ["DET1"] }\n')
    command = [sys.executable, "-m", "flake8_detach", "fix", "-", "--stdin-filename", "train.py"]
    fixed = subprocess.run(command, input=HAZARD, capture_output=True, text=True, cwd=project, check=False)
    assert (fixed.returncode, fixed.stdout) == (0, HAZARD.replace("w.numpy()", "w.detach().numpy()"))
    assert "1 fix applied" in fixed.stderr
    command[-1] = "skip_this.py"  # the name decides the config: per-file-ignores apply
    left = subprocess.run(command, input=HAZARD, capture_output=True, text=True, cwd=project, check=False)
    assert (left.returncode, left.stdout) == (0, HAZARD)
    unfixable = GRAD_LEAF + "w.data.add_(1)\n"  # an unsafe fix: not applied, reported
    command[-1] = "train.py"
    kept = subprocess.run(command, input=unfixable, capture_output=True, text=True, cwd=project, check=False)
    assert (kept.returncode, kept.stdout) == (1, unfixable)
    assert "train.py:3:3: DET103" in kept.stderr
    source = "import torch\nw.numpy(\n"
    broken = subprocess.run(command, input=source, capture_output=True, text=True, cwd=project, check=False)
    assert (broken.stdout, broken.returncode) == (source, 2)  # the buffer comes back whole
    assert "train.py: error: syntax error at line 2, column 8: '(' was never closed" in broken.stderr


def test_github_format_carries_the_end_and_no_repeated_code(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "syntax.py").write_text("import torch\nx = (\n")
    out = run(["check", "bad.py", "syntax.py", "--format", "github"], capsys)[1]
    first, second = out.splitlines()
    assert first.startswith("::error file=bad.py,line=3,endLine=3,col=3,endColumn=8,title=DET101::.numpy() on")
    assert "::DET101" not in first
    assert second.startswith("::error file=syntax.py,line=2,col=")


def test_json_output_matches_its_schema(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "docs" / "schemas" / "check-output.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    (project / "two.py").write_text(TWO_RULES + "w.data.add_(1)\n")
    (project / "syntax.py").write_text("import torch\nx = (\n")
    document = json.loads(run(["check", ".", "--format", "json"], capsys)[1])
    assert document["diagnostics"] and document["errors"]
    assert any(entry["fix"] for entry in document["diagnostics"])
    jsonschema.Draft202012Validator(schema).validate(document)
    broken = {**document, "summary": {"files": -1, "diagnostics": 0, "errors": 0}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)


def test_verify_shows_progress_only_on_a_terminal(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="verify runs fixtures (verify extra)")
    fixture = REPO / "fixtures" / "det101" / "flag_requires_grad_leaf.py"
    args = ["verify", str(fixture), "--device", "cpu"]
    env = dict(os.environ)
    on_terminal = _on_a_terminal(args, tmp_path, env)
    assert "verify [" in on_terminal and "1/" in on_terminal
    piped = subprocess.run([sys.executable, "-m", "flake8_detach", *args], cwd=tmp_path,
                           capture_output=True, text=True, check=False)
    assert piped.returncode == 0, piped.stderr
    assert "verify [" not in piped.stderr + piped.stdout
    assert "verify [" not in _on_a_terminal([*args, "--no-progress"], tmp_path, env)


def test_a_bad_command_line_value_is_named_as_an_option(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["check", "bad.py", "--extend-ignore", "XYZ"], capsys)
    assert code == 2
    assert err.startswith("flake8-detach: error: command line: --extend-ignore: 'XYZ' matches no flake8-detach rule")
    assert "[tool." not in err


class FakeTerminal(io.StringIO):
    """stderr as a terminal shows it: the progress bar draws only on one."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("command", ["check", "fix"])
def test_check_and_fix_show_progress_on_a_terminal_after_the_delay(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    from flake8_detach.cli import progress

    monkeypatch.setattr(progress, "DELAY_SECONDS", 0.0)  # as if the run had lasted over a second
    monkeypatch.delenv("CI", raising=False)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    main([command, "--no-cache", "."])
    assert f"\r{command} [" in terminal.getvalue() and "/" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r\033[K")  # the line is cleared when the run ends
    for quiet in (["--no-progress"], []):
        if not quiet:  # the real delay: a quick run draws nothing
            monkeypatch.setattr(progress, "DELAY_SECONDS", 60.0)
        terminal = FakeTerminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        main([command, "--no-cache", ".", *quiet])
        assert f"{command} [" not in terminal.getvalue()
    piped = io.StringIO()  # not a terminal: never drawn
    monkeypatch.setattr(progress, "DELAY_SECONDS", 0.0)
    monkeypatch.setattr(sys, "stderr", piped)
    main([command, "--no-cache", "."])
    assert f"{command} [" not in piped.getvalue()
    monkeypatch.setenv("CI", "true")  # a CI job in a pseudo-terminal: its log stays clean
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    main([command, "--no-cache", "."])
    assert f"{command} [" not in terminal.getvalue()
