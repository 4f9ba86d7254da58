"""Inputs that are not what a linter expects (issue 22): things that are not regular files, files
too large to read, exclude patterns with a slash and no config, deeply nested TOML, the config
read once per run. Each case that could hang runs in a subprocess with a timeout."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_detach import cli, config
from flake8_detach.config import ConfigError, ConfigResolver, discover_config
from flake8_detach.sources.files import MAX_SOURCE_BYTES, SourceError, discover, read_file_bytes

REPO = Path(__file__).resolve().parent.parent
HAZARD = "import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n"
TIMEOUT = 60


def run_cli(args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """The command line as a subprocess: a hang fails the test after TIMEOUT seconds."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "flake8_detach", *args, "--no-cache"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        errors="backslashreplace",
    )


# --- item 8: --exclude / --extend-exclude with a slash, no [tool.flake8-detach] table ----------

@pytest.mark.parametrize("option", ["--exclude", "--extend-exclude"])
@pytest.mark.parametrize("pattern", ["generated/*", "./generated/*", "generated/g.py", "generated/"])
def test_exclude_patterns_with_a_slash_work_without_a_config_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], option: str, pattern: str
) -> None:
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "g.py").write_text(HAZARD)
    (tmp_path / "a.py").write_text(HAZARD)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--no-cache", option, pattern, "."]) == 1
    out = capsys.readouterr().out
    assert "a.py:3:3" in out and "g.py" not in out
    assert cli.main(["fix", "--no-cache", option, pattern, "."]) == 0
    assert (tmp_path / "generated" / "g.py").read_text() == HAZARD  # untouched
    assert (tmp_path / "a.py").read_text() != HAZARD


# --- item 14: only regular files are read, within a size bound --------------------------------

def _specials(folder: Path) -> list[str]:
    """A FIFO and a link to /dev/zero, each named as a Python file and as a notebook."""
    names = []
    for suffix in (".py", ".ipynb"):
        os.mkfifo(folder / f"fifo{suffix}")
        (folder / f"zero{suffix}").symlink_to("/dev/zero")
        names += [f"fifo{suffix}", f"zero{suffix}"]
    return names


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs FIFOs and /dev/zero")
@pytest.mark.parametrize("command", [["check"], ["fix"], ["fix", "--diff"], ["check", "--fix"]])
def test_fifos_and_devices_in_a_folder_are_skipped_not_read(tmp_path: Path, command: list[str]) -> None:
    names = _specials(tmp_path)
    (tmp_path / "a.py").write_text(HAZARD)
    result = run_cli([*command, "."], tmp_path)
    assert "Traceback" not in result.stderr
    for name in names:
        assert f"{name}: skipped: not a regular file" in result.stderr.splitlines()
    if command == ["check"]:
        assert result.returncode == 1 and "a.py:3:3: DET101" in result.stdout  # the real file is checked
    elif command == ["fix"]:
        assert result.returncode == 0 and "1 fix applied in 1 file" in result.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs FIFOs and /dev/zero")
@pytest.mark.parametrize("command", ["check", "fix"])
def test_fifos_and_devices_named_on_the_command_line_are_errors(tmp_path: Path, command: str) -> None:
    names = _specials(tmp_path)
    result = run_cli([command, *names], tmp_path)
    assert "Traceback" not in result.stderr
    assert result.returncode == (1 if command == "check" else 2)
    for name in names:
        assert f"{name}: error: not a regular file" in result.stderr.splitlines()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_the_reader_refuses_a_fifo_without_blocking_on_open(tmp_path: Path) -> None:
    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)  # no writer: a blocking open would wait forever
    with pytest.raises(SourceError, match="^not a regular file$"):
        read_file_bytes(fifo)


def test_a_python_file_over_the_bound_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" * (MAX_SOURCE_BYTES // 6 + 1))
    (tmp_path / "a.py").write_text(HAZARD)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--no-cache", "."]) == 1
    err = capsys.readouterr().err
    assert "big.py: error: the file is 10 MB; flake8-detach reads Python files up to 10 MB (exclude it)" in err
    with pytest.raises(SourceError, match="reads Python files up to 10 MB"):
        read_file_bytes(big)
    assert cli.main(["fix", "--no-cache", "big.py"]) == 2
    assert "big.py: error: the file is 10 MB" in capsys.readouterr().err


def test_the_bound_is_checked_before_reading_and_while_reading(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.py"
    path.write_bytes(b"#" * 100)
    with pytest.raises(SourceError, match="up to 0 MB"):
        read_file_bytes(path, limit=50)  # st_size is over: refused before reading
    assert read_file_bytes(path, limit=100) == b"#" * 100
    real_fstat = os.fstat

    def stale_fstat(descriptor: int) -> os.stat_result:  # the file grew after fstat looked
        info = real_fstat(descriptor)
        return os.stat_result((info.st_mode, *info[1:6], 10, *info[7:]))

    monkeypatch.setattr(os, "fstat", stale_fstat)
    with pytest.raises(SourceError, match="up to 0 MB"):
        read_file_bytes(path, limit=50)


# --- item 13: a deeply nested pyproject.toml ----------------------------------------------------

DEEP_TOML = "[tool.flake8-detach]\nselect = " + "[" * 10_000 + "]" * 10_000 + "\n"


def test_a_deeply_nested_pyproject_is_one_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(DEEP_TOML)
    with pytest.raises(ConfigError, match="invalid TOML: nested too deeply to parse"):
        discover_config(tmp_path)


def test_a_deeply_nested_pyproject_exits_2_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(DEEP_TOML)
    (tmp_path / "a.py").write_text(HAZARD)
    for command in ("check", "fix"):
        result = run_cli([command, "."], tmp_path)
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            "flake8-detach: error: pyproject.toml: invalid TOML: nested too deeply to parse"
        ] or result.stderr.strip().endswith("invalid TOML: nested too deeply to parse"), result.stderr
        assert "Traceback" not in result.stderr


# --- config parsed once per run, not once per folder -------------------------------------------

@pytest.mark.parametrize("command", [None, "check", "fix"])
def test_the_config_is_read_once_for_a_tree_of_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], command: str | None) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-detach]\nignore = ["DET102"]\n')
    (tmp_path / "setup.cfg").write_text("[flake8]\nmax-line-length = 100\n")
    files = []
    for index in range(30):
        folder = tmp_path / "src" / f"pkg{index}" / "sub"
        folder.mkdir(parents=True)
        files += [folder / "a.py", folder.parent / "b.py"]
    reads: list[Path] = []
    original_pyproject, original_flake8 = config._read_pyproject_table, config._read_flake8_options

    def count_pyproject(path: Path) -> dict[str, object] | None:
        reads.append(path)
        return original_pyproject(path)

    def count_flake8(path: Path) -> dict[str, object] | None:
        reads.append(path)
        return original_flake8(path)

    monkeypatch.setattr(config, "_read_pyproject_table", count_pyproject)
    monkeypatch.setattr(config, "_read_flake8_options", count_flake8)
    if command is None:
        resolver = ConfigResolver()
        answers = {resolver.for_path(file).path for file in files}
        assert answers == {tmp_path / "pyproject.toml"}
    else:  # a whole run: the folder it starts in, then every file's folder, one read per config file
        for file in files:
            file.write_text(HAZARD)
        monkeypatch.chdir(tmp_path)
        assert cli.main([command, "--no-cache", "."]) in (0, 1)
        capsys.readouterr()
    assert sorted(reads) == [tmp_path / "pyproject.toml", tmp_path / "setup.cfg"]


# --- item 13: file names that are not UTF-8, in every format and in --output-file ---------------

@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the file system must accept any bytes in a name")
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_name_that_is_not_utf8_is_written_in_every_format(tmp_path: Path, fmt: str) -> None:
    name = b"bad\xff.py"
    with open(os.path.join(os.fsencode(tmp_path), name), "wb") as stream:
        stream.write(HAZARD.encode())
    (tmp_path / "report").write_text("the previous report\n")
    env_utf8 = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}  # stdout errors: strict
    env = {**os.environ, **env_utf8, "PYTHONPATH": str(REPO)}
    for extra in ([], ["--output-file", "report"]):
        result = subprocess.run([sys.executable, "-m", "flake8_detach", "check", "--no-cache", "--format", fmt, ".",
                                 *extra], cwd=tmp_path, env=env, capture_output=True, timeout=TIMEOUT, check=False)
        assert result.returncode == 1, result.stderr
        assert b"Traceback" not in result.stderr and b"internal error" not in result.stderr
        out = (tmp_path / "report").read_bytes() if extra else result.stdout
        if fmt == "text":  # the name's own bytes, as ls and flake8 print it
            assert out.startswith(b"bad\xff.py:3:3: DET101")
            continue
        text = out.decode("utf-8")  # the other formats are UTF-8 documents
        if fmt == "json":
            assert json.loads(text)["diagnostics"][0]["path"] == "bad\\xff.py"
        elif fmt == "sarif":
            uri = json.loads(text)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            assert uri == "bad%FF.py"  # the bytes, percent-encoded (RFC 3986)
            assert urllib.parse.unquote_to_bytes(uri) == name
        else:
            assert text.startswith("::error file=bad\\xff.py,line=3,")


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the file system must accept any bytes in a name")
def test_a_name_that_is_not_utf8_in_fix_and_its_diff(tmp_path: Path) -> None:
    name = os.path.join(os.fsencode(tmp_path), b"bad\xff.py")
    with open(name, "wb") as stream:
        stream.write(HAZARD.encode())
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(REPO)}
    diff = subprocess.run([sys.executable, "-m", "flake8_detach", "fix", "--no-cache", "--diff", "."], cwd=tmp_path,
                          env=env, capture_output=True, timeout=TIMEOUT, check=False)
    assert diff.returncode == 1 and diff.stdout.startswith(b"--- a/bad\xff.py\n+++ b/bad\xff.py\n"), diff.stderr
    fixed = subprocess.run([sys.executable, "-m", "flake8_detach", "fix", "--no-cache", "."], cwd=tmp_path,
                           env=env, capture_output=True, timeout=TIMEOUT, check=False)
    assert fixed.returncode == 0 and b"Traceback" not in fixed.stderr
    with open(name, "rb") as stream:
        assert b"w.detach().numpy()" in stream.read()
    with open(name, "wb") as stream:
        stream.write(b"x = (\n")
    broken = subprocess.run([sys.executable, "-m", "flake8_detach", "check", "--no-cache", "."], cwd=tmp_path,
                            env=env, capture_output=True, timeout=TIMEOUT, check=False)
    assert broken.returncode == 1 and broken.stderr.startswith(b"bad\xff.py: error: syntax error"), broken.stderr


def test_the_output_file_is_never_left_truncated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.py").write_text(HAZARD)
    report = tmp_path / "report.json"
    report.write_text("the previous report\n")
    monkeypatch.chdir(tmp_path)

    def full_disk(descriptor: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    assert cli.main(["check", "--no-cache", "--format", "json", "--output-file", "report.json", "."]) == 2
    assert "cannot write report.json: No space left on device" in capsys.readouterr().err
    assert report.read_text() == "the previous report\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.py", "report.json"]  # no temporary left
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    report.chmod(0o640)
    assert cli.main(["check", "--no-cache", "--format", "json", "--output-file", "report.json", "."]) == 1
    assert json.loads(report.read_text())["summary"]["diagnostics"] == 1
    assert report.stat().st_mode & 0o777 == 0o640  # the file's mode is kept


def test_output_file_that_is_not_a_regular_file_is_written_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.py").write_text(HAZARD)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--no-cache", "--output-file", os.devnull, "."]) == 1
    assert Path(os.devnull).exists() and not Path(os.devnull).is_file()  # not replaced by a file


def test_an_internal_error_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from flake8_detach.cli import check

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("a bug\nsecond line")

    monkeypatch.setattr(check, "render", broken)
    (tmp_path / "a.py").write_text(HAZARD)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--no-cache", "."]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("flake8-detach: internal error: ValueError: a bug (set FLAKE8_DETACH_TRACEBACK")
    assert "Traceback" not in err


# --- item 13: every .gitignore line git accepts is matched as git matches it ---------------------

GIT = shutil.which("git") or "git"
HAS_GIT = shutil.which("git") is not None
NAMES = ["a.py", "z.py", "-.py", "!.py", "#.py", "[.py", "].py", "\\.py", "ab.py", "za.py", " .py", "^.py", "[z-a].py"]


def _git_ignored(folder: Path, names: list[str]) -> set[str]:
    result = subprocess.run([GIT, "check-ignore", "--no-index", "--stdin", "-z"], input="\0".join(names) + "\0",
                            cwd=folder, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert result.returncode in (0, 1), result.stderr
    return {name for name in result.stdout.split("\0") if name}


def _compare_with_git(folder: Path, lines: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    subprocess.run([GIT, "init", "-q", str(folder)], check=True, timeout=TIMEOUT)
    (folder / ".gitignore").write_text("\n".join(lines) + "\n")
    for name in NAMES:
        (folder / name).touch()
    ours = set(NAMES) - {path.name for path in discover([folder])}
    assert ours == _git_ignored(folder, NAMES), lines
    return capsys.readouterr().err


@pytest.mark.skipif(not HAS_GIT, reason="needs git")
@pytest.mark.parametrize("lines", [
    ["!"], ["\\"], ["a\\"], ["[z-a].py"], ["[z-a-c].py"], ["[!z-a].py"], ["\\#.py", "\\!.py"], ["#.py"],
    ["*.py", "!a.py"], ["*.py", "!"], ["[]z-a].py"], ["[a-].py"], ["\\[z-a].py"], ["[.py"],
])
def test_gitignore_lines_that_pathspec_refuses_are_matched_as_git_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str]
) -> None:
    assert _compare_with_git(tmp_path, lines, capsys) == ""  # nothing left out: no warning


def test_a_gitignore_line_that_cannot_be_matched_is_one_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    import pathspec

    original = pathspec.GitIgnoreSpec.from_lines

    def refuses_weird(lines: list[str]) -> pathspec.GitIgnoreSpec:
        if "weird" in lines:
            raise ValueError("cannot compile")
        return original(lines)

    monkeypatch.setattr(pathspec.GitIgnoreSpec, "from_lines", refuses_weird)
    (tmp_path / ".gitignore").write_text("*.log\nweird\nskip.py\n")
    for name in ("a.py", "skip.py", "weird"):
        (tmp_path / name).touch()
    assert [path.name for path in discover([tmp_path])] == ["a.py"]
    gitignore = tmp_path / ".gitignore"
    assert capsys.readouterr().err == (f"flake8-detach: warning: {gitignore}:2: .gitignore pattern 'weird' cannot be "
                                       "matched; it is left out\n")


@pytest.mark.skipif(not HAS_GIT, reason="needs git")
@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.text(alphabet="az*?[]-!\\#^ ", min_size=1, max_size=5),
                          st.sampled_from(["", ".py", "*"])).map("".join), min_size=1, max_size=3))
def test_gitignore_matches_git_check_ignore(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([GIT, "init", "-q", folder], check=True, timeout=TIMEOUT)
        (Path(folder) / ".gitignore").write_text("\n".join(lines) + "\n")
        for name in NAMES:
            (Path(folder) / name).touch()
        with contextlib.redirect_stderr(io.StringIO()):
            ours = set(NAMES) - {path.name for path in discover([Path(folder)])}
        assert ours == _git_ignored(Path(folder), NAMES), lines


# --- item 16: `fix --diff` applies with patch and git apply, whatever the line endings ----------

ENDINGS = {
    "cr.py": b"import torch\rw = torch.ones(3, requires_grad=True)\rw.numpy()\rprint(1)",  # lone CRs
    "crlf.py": b"import torch\r\nw = torch.ones(3, requires_grad=True)\r\nw.numpy()\r\n",
    "formfeed.py": b"import torch\x0c\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n",
    "mixed.py": b"import torch\r\nw = torch.ones(3, requires_grad=True)\rw.numpy()\nprint(2)\r\n",
    "nofinal.py": b"import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()",
    # libcst drops the last line ending of these two when it prints them; fix keeps it.
    "cr_final.py": b"import torch\rw = torch.ones(3, requires_grad=True)\rw.numpy()\r",
    "backslash.py": b"import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n# see \\\n",
}


@pytest.mark.skipif(not HAS_GIT, reason="needs git")
@pytest.mark.parametrize("tool", ["patch", "git apply"])
def test_the_diff_of_any_line_endings_applies_to_the_file(tmp_path: Path, tool: str) -> None:
    if tool == "patch" and shutil.which("patch") is None:
        pytest.skip("patch is not installed")
    subprocess.run([GIT, "init", "-q", str(tmp_path)], check=True, timeout=TIMEOUT)
    for name, data in ENDINGS.items():
        (tmp_path / name).write_bytes(data)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    diff = subprocess.run([sys.executable, "-m", "flake8_detach", "fix", "--no-cache", "--diff", *ENDINGS],
                          cwd=tmp_path, env=env, capture_output=True, timeout=TIMEOUT, check=False)  # bytes: CRs kept
    assert diff.returncode == 1 and diff.stdout.count(b"--- a/") == len(ENDINGS), diff.stderr
    (tmp_path / "fix.patch").write_bytes(diff.stdout)
    command = ["patch", "-p1", "-i", "fix.patch"] if tool == "patch" else [GIT, "apply", "fix.patch"]
    applied = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    patched = {name: (tmp_path / name).read_bytes() for name in ENDINGS}
    for name, data in ENDINGS.items():
        (tmp_path / name).write_bytes(data)
    fixed = run_cli(["fix", *ENDINGS], tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    for name, data in ENDINGS.items():  # the patch made exactly what fix writes
        assert patched[name] == (tmp_path / name).read_bytes() != data, name


STDIN_FILES = {
    **ENDINGS,
    "bom_latin1.py": b"\xef\xbb\xbfimport torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()  # caf\xc3\xa9\n",
    "latin1.py": b"# -*- coding: latin-1 -*-\nimport torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()  # caf\xe9\n",
}


@pytest.mark.parametrize("name", sorted(STDIN_FILES))
def test_fix_of_standard_input_writes_what_fix_writes_to_the_file(tmp_path: Path, name: str) -> None:
    """`fix -` keeps line endings, BOM and encoding as `fix FILE` does: only the fix changes."""
    data = STDIN_FILES[name]
    piped = subprocess.run([sys.executable, "-m", "flake8_detach", "fix", "--no-cache", "-", "--stdin-filename", name],
                           cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, input=data,
                           capture_output=True, timeout=TIMEOUT, check=False)
    (tmp_path / name).write_bytes(data)
    written = run_cli(["fix", "--no-cache", name], tmp_path)
    assert written.returncode == 0, written.stderr
    assert piped.stdout == (tmp_path / name).read_bytes() == data.replace(b"w.numpy()", b"w.detach().numpy()")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_config_named_with_config_that_is_a_fifo_is_one_error(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pyproject.toml")
    (tmp_path / "a.py").write_text(HAZARD)
    result = run_cli(["check", "--config", "pyproject.toml", "."], tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == ["flake8-detach: error: pyproject.toml: not a regular file"]
    result = run_cli(["check", "."], tmp_path)  # found by the walk up: not a file, so not a config
    assert result.returncode == 1 and "a.py:3:3" in result.stdout


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("command", ["check", "fix"])
@pytest.mark.parametrize("name", ["stdin", "x.ipynb"])
def test_endless_standard_input_stops_at_the_bound(tmp_path: Path, command: str, name: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open("/dev/zero", "rb") as zero:
        result = subprocess.run([sys.executable, "-m", "flake8_detach", command, "--no-cache", "--stdin-filename",
                                 name, "-"], stdin=zero, cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=TIMEOUT, check=False)
    assert result.returncode == (1 if command == "check" else 2), result.stderr
    assert "Traceback" not in result.stderr
    limit = "25 MB" if name.endswith(".ipynb") else "10 MB"
    assert f"{name}: error: " in result.stderr and f"up to {limit}" in result.stderr
