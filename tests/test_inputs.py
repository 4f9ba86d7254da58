"""Inputs that are not what a linter expects (issue 22): things that are not regular files, files
too large to read, exclude patterns with a slash and no config, deeply nested TOML, the config
read once per run. Each case that could hang runs in a subprocess with a timeout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_detach import cli, config
from flake8_detach.config import ConfigError, ConfigResolver, discover_config
from flake8_detach.files import MAX_SOURCE_BYTES, SourceError, read_file_bytes

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
