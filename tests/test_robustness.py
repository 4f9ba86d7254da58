"""Hostile input through every front: the engine, flake8 with the plugin, `check` and `fix`.

Each bad file is written once into a folder; each front runs once over it (as a real
subprocess, with a timeout, so a hang fails the test instead of blocking CI) and every case
then asserts what that front said about its file: the expected diagnostic, or one clear line,
never a traceback, and for `fix` never a byte changed that the fix did not mean to change.
"""

from __future__ import annotations

import errno
import io
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flake8_detach import cli
from flake8_detach.engine import AnalysisError, analyze
from flake8_detach.fixing.fixer import FixFileError, fix_file
from flake8_detach.sources.files import SourceError, read_source

HEADER = "import torch\nw = torch.ones(2, requires_grad=True)\n"
FLAGGED = "a = w.numpy()\n"
FIXED = "a = w.detach().numpy()\n"
# Python 3.11 has no tree deeper than this for these chains: ast.parse itself overflows.
LONG_CHAIN = 3000
SUBPROCESS_TIMEOUT = 300


@dataclass(frozen=True)
class Case:
    """One hostile file and what every front must make of it.

    ``finding``: (line, 1-based column) of the DET101 that flake8 and `check` print, or None.
    ``flake8`` / ``check`` / ``fix``: the outcome class for that front (see the tests).
    ``flake8_finding``: where only flake8 reports it (it analyses its own `ast` tree, built into
    libcst's node types by ast_bridge.py; `check` and `fix` parse with libcst).
    """

    data: bytes
    finding: tuple[int, int] | None
    flake8: str  # "finding" | "clean" | "E999" | "DET000"
    check: str  # "finding" | "clean" | "error"
    fix: str  # "fixed" | "clean" | "error"
    flake8_finding: tuple[int, int] | None = None


def _text(source: str, newline: str = "\n") -> bytes:
    return source.replace("\n", newline).encode("utf-8")


def _twenty_thousand_functions() -> bytes:
    body = "".join(f"def f{index}(): pass\n" for index in range(20_000))
    return _text(HEADER + body + FLAGGED)


CASES: dict[str, Case] = {
    "syntax_error": Case(_text(HEADER + FLAGGED + "x = torch.ones(1\n"), None, "E999", "error", "error"),
    "python2": Case(_text(HEADER + "print 'hello'\n" + FLAGGED), None, "E999", "error", "error"),
    "null_bytes": Case(_text(HEADER + "x = 1\x00\n" + FLAGGED), None, "E999", "error", "error"),
    # flake8 falls back to latin-1 for undecodable bytes; `check` and `fix` refuse to guess.
    "non_utf8_no_cookie": Case(_text(HEADER) + b"s = '\xff\xfe'\n" + _text(FLAGGED), (4, 7), "finding", "error", "error"),
    "latin1_cookie": Case(
        b"# -*- coding: latin-1 -*-\n" + _text(HEADER) + b"s = '\xe9t\xe9'\n" + _text(FLAGGED),
        (5, 7), "finding", "finding", "fixed",
    ),
    "bom": Case(b"\xef\xbb\xbf" + _text(HEADER + FLAGGED), (3, 7), "finding", "finding", "fixed"),
    "crlf": Case(_text(HEADER + "s = 1\n" + FLAGGED, "\r\n"), (4, 7), "finding", "finding", "fixed"),
    # libcst 1.9 drops a final lone CR when it prints the tree again: `fix` parses the file with
    # a comment line after it, and cuts that off again (never a file one byte short).
    "lone_cr": Case(_text(HEADER + "s = 1\n" + FLAGGED, "\r"), (4, 7), "finding", "finding", "fixed"),
    # ... and the line ending after a final comment that ends in a backslash: the same cure.
    "backslash_comment_at_end": Case(_text(HEADER + FLAGGED + "# see \\\n"), (3, 7), "finding", "finding", "fixed"),
    "lone_cr_no_final_newline": Case(
        _text(HEADER + "s = 1\n" + FLAGGED, "\r")[:-1], (4, 7), "finding", "finding", "fixed"
    ),
    "form_feed_and_tabs": Case(
        _text(HEADER + "\x0c\nif True:\n\tb = w.numpy()\n\x0c\n"), (5, 8), "finding", "finding", "fixed"
    ),
    # libcst 1.9 loses a blank line before a last line of spaces (a notebook cell's tail): `fix`
    # parses the file without its blank tail and puts the tail back.
    "blank_line_then_spaces_at_end": Case(_text(HEADER + FLAGGED + "\n "), (3, 7), "finding", "finding", "fixed"),
    "blank_lines_and_tabs_at_end": Case(_text(HEADER + FLAGGED + "\n\n\t \n  \n "), (3, 7), "finding", "finding", "fixed"),
    "blank_tail_after_backslash_comment": Case(
        _text(HEADER + FLAGGED + "# see \\\n\n  "), (3, 7), "finding", "finding", "fixed"
    ),
    # ... and libcst drops a form feed that starts a statement line.
    "form_feed_before_statement": Case(_text(HEADER + "\x0cs = 1\n" + FLAGGED), (4, 7), "finding", "finding", "error"),
    # CPython refuses more than 200 nested brackets; libcst parses them.
    "deep_parentheses": Case(
        # No Python runs it (a CPython limit libcst does not have): check and fix both refuse it.
        _text(HEADER + "a = " + "(" * 300 + "w" + ")" * 300 + ".numpy()\n"), None, "E999", "error", "error"
    ),
    "deep_brackets": Case(
        _text(HEADER + "a = " + "[" * 300 + "w.numpy()" + "]" * 300 + "\n"), None, "E999", "error", "error"
    ),
    # A tree only libcst finds deep (ConcatenatedString nests; ast's constant is one string): the
    # flake8 front analyses the tree built from `ast` and finds the hazard; `check` and `fix` refuse.
    "concatenated_strings": Case(
        _text(HEADER + "s = " + " ".join(['"a"'] * 3000) + "\n" + FLAGGED), None, "finding", "error", "error", (4, 7)
    ),
    "twenty_thousand_functions": Case(_twenty_thousand_functions(), (20_003, 7), "finding", "finding", "fixed"),
    "empty": Case(b"", None, "clean", "clean", "clean"),
}
# Chains so long that CPython's own parser overflows: flake8 dies in ast.parse before any
# plugin runs (tested apart, so that it does not take the other files down with it).
CHAINS: dict[str, Case] = {
    "chain_of_detach": Case(_text(HEADER + "a = w" + ".detach()" * LONG_CHAIN + ".numpy()\n"), None, "crash", "error", "error"),
    "chain_of_cpu": Case(_text(HEADER + "a = w" + ".cpu()" * LONG_CHAIN + ".numpy()\n"), None, "crash", "error", "error"),
}
ALL_CASES = {**CASES, **CHAINS}


def expected_fixed_bytes(data: bytes) -> bytes:
    return data.replace(b".numpy()", b".detach().numpy()")


def run_front(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a front as users do, in a fresh interpreter, and never wait forever."""
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, check=False,
        timeout=SUBPROCESS_TIMEOUT, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def write_cases(folder: Path, cases: dict[str, Case]) -> None:
    folder.mkdir()
    for name, case in cases.items():
        (folder / f"{name}.py").write_bytes(case.data)


def lines_about(output: str, name: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(f"{name}.py:")]


def assert_no_traceback(output: str) -> None:
    assert "Traceback" not in output, output[-3000:]


# --- the engine, in process -------------------------------------------------------------

def _decode_as_flake8(data: bytes) -> str:
    """flake8's reading: the coding cookie or UTF-8 (BOM dropped), else latin-1; universal newlines."""
    try:
        text = read_source_bytes(data)
    except (SyntaxError, UnicodeDecodeError):
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_source_bytes(data: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding).removeprefix("\ufeff")


# The 20,000-function file goes through the three fronts below; once is enough for its cost.
@pytest.mark.parametrize("name", sorted(set(ALL_CASES) - {"twenty_thousand_functions"}))
def test_engine_returns_findings_or_one_analysis_error(name: str) -> None:
    case = ALL_CASES[name]
    source = _decode_as_flake8(case.data)
    started = time.perf_counter()
    try:
        diagnostics = analyze(source).diagnostics
    except AnalysisError as error:
        message = str(error)
        assert message and "\n" not in message
        assert case.finding is None, f"{name}: refused ({message}) but should report {case.finding}"
    else:
        found = [(d.line, d.column + 1) for d in diagnostics if d.code == "DET101"]
        if case.finding is not None:
            assert found == [case.finding]
        elif name not in ("deep_parentheses", "empty"):  # libcst reads what CPython refuses
            pytest.fail(f"{name}: expected an AnalysisError, got {found}")
    # Deep inputs are refused from flake8's tree in milliseconds, not after minutes in libcst.
    if name in CHAINS:
        assert time.perf_counter() - started < 10


def test_deep_chain_is_refused_without_libcst_parsing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import ast

    import libcst

    def forbidden(*_: object, **__: object) -> None:
        raise AssertionError("libcst was asked to parse a file the depth screen should refuse")

    monkeypatch.setattr(libcst, "parse_module", forbidden)
    source = CHAINS["chain_of_cpu"].data.decode().replace(".cpu()" * LONG_CHAIN, ".cpu()" * 400)
    with pytest.raises(AnalysisError, match=r"nested \d+ levels deep"):
        analyze(source, tree=ast.parse(source))


# --- flake8 with the plugin ---------------------------------------------------------------

@pytest.fixture(scope="module")
def flake8_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    folder = tmp_path_factory.mktemp("flake8") / "bad"
    write_cases(folder, CASES)
    (folder / "a_directory.py").mkdir()
    return run_front(["-m", "flake8", "--isolated", "--select", "DET,E9", "."], folder)


@pytest.mark.parametrize("name", sorted(CASES))
def test_flake8_plugin_on_hostile_input(flake8_run: subprocess.CompletedProcess[str], name: str) -> None:
    assert_no_traceback(flake8_run.stdout + flake8_run.stderr)
    case = CASES[name]
    lines = lines_about(flake8_run.stdout.replace("./", ""), name)
    if case.flake8 == "finding":
        position = case.flake8_finding or case.finding
        assert position is not None
        line, column = position
        assert [entry.split(" ")[0] + entry.split(" ")[1] for entry in lines] == [f"{name}.py:{line}:{column}:DET101"]
    elif case.flake8 == "clean":
        assert lines == []
    else:
        assert len(lines) == 1 and f" {case.flake8} " in lines[0], lines


def test_flake8_walks_into_a_folder_named_like_a_file(flake8_run: subprocess.CompletedProcess[str]) -> None:
    assert "a_directory" not in flake8_run.stdout + flake8_run.stderr


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_flake8_own_parser_overflow_is_not_ours(tmp_path: Path, name: str) -> None:
    """CPython cannot build a tree for a 3000-call chain, so flake8 stops before any plugin."""
    (tmp_path / f"{name}.py").write_bytes(CHAINS[name].data)
    result = run_front(["-m", "flake8", "--isolated", "--select", "DET", f"{name}.py"], tmp_path)
    output = result.stdout + result.stderr
    assert "flake8_detach" not in output
    assert result.returncode != 0 and "during ast construction" in output


def test_flake8_unreadable_file_is_one_line(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: chmod 000 does not stop root from reading (covered in process below)")
    target = tmp_path / "secret.py"
    target.write_text(HEADER + FLAGGED)
    target.chmod(0)
    result = run_front(["-m", "flake8", "--isolated", "--select", "DET,E9", "secret.py"], tmp_path)
    assert_no_traceback(result.stdout + result.stderr)
    assert "secret.py:" in result.stdout and "E902" in result.stdout


# --- flake8-detach check --------------------------------------------------------------------

@pytest.fixture(scope="module")
def check_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    folder = tmp_path_factory.mktemp("check") / "bad"
    write_cases(folder, ALL_CASES)
    (folder / "a_directory.py").mkdir()
    return run_front(["-m", "flake8_detach", "check", "."], folder)


def test_check_exit_code_says_the_run_was_incomplete(check_run: subprocess.CompletedProcess[str]) -> None:
    assert check_run.returncode == 1  # files reported as not checked: not clean, not a tool failure
    assert_no_traceback(check_run.stdout + check_run.stderr)


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_check_on_hostile_input(check_run: subprocess.CompletedProcess[str], name: str) -> None:
    case = ALL_CASES[name]
    reported = lines_about(check_run.stdout, name)
    errors = lines_about(check_run.stderr, name)
    if case.check == "finding":
        assert case.finding is not None and errors == []
        line, column = case.finding
        assert len(reported) == 1 and reported[0].startswith(f"{name}.py:{line}:{column}: DET101 ")
    elif case.check == "clean":
        assert reported == [] and errors == []
    else:
        assert reported == [] and len(errors) == 1 and errors[0].startswith(f"{name}.py: error: ")


# --- flake8-detach fix ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fix_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    folder = tmp_path_factory.mktemp("fix") / "bad"
    write_cases(folder, ALL_CASES)
    (folder / "a_directory.py").mkdir()
    # The results cache outside the folder, whose listing the tests check.
    return folder, run_front(["-m", "flake8_detach", "fix", ".", "--cache-dir", str(folder.parent / "cache")], folder)


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_fix_on_hostile_input(fix_run: tuple[Path, subprocess.CompletedProcess[str]], name: str) -> None:
    folder, result = fix_run
    assert_no_traceback(result.stdout + result.stderr)
    case = ALL_CASES[name]
    after = (folder / f"{name}.py").read_bytes()
    errors = lines_about(result.stderr, name)
    if case.fix == "fixed":
        assert errors == []
        assert after == expected_fixed_bytes(case.data)  # encoding, BOM, newlines all kept
    elif case.fix == "clean":
        assert errors == [] and after == case.data
    else:
        assert after == case.data, "a file the fix refused was modified"
        assert len(errors) == 1 and errors[0].startswith(f"{name}.py: error: ")


def test_fix_leaves_no_temporary_files(fix_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    folder, result = fix_run
    assert result.returncode == 2  # some files could not be fixed: the run must not look clean
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        [f"{name}.py" for name in ALL_CASES] + ["a_directory.py"]
    )


# --- a directory or an unreadable file, in process (tests run as root here) ---------------

def test_directory_given_to_the_readers_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "looks_like_a_file.py"
    folder.mkdir()
    with pytest.raises(SourceError, match="^is a directory$"):
        read_source(folder)
    with pytest.raises(FixFileError, match="^is a directory$"):
        fix_file(folder)


def _deny(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """Make reading ``denied`` fail as it does for a non-root user on a chmod 000 file."""
    original = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.resolve() == denied.resolve():
            raise PermissionError(13, "Permission denied", str(self))
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    original_open = os.open

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:  # the readers open with os.open
        if Path(os.fsdecode(path)).resolve() == denied.resolve():
            raise PermissionError(13, "Permission denied", str(path))
        return original_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


@pytest.mark.parametrize("command", ["check", "fix"])
def test_unreadable_file_is_one_line_and_not_exit_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    target = tmp_path / "secret.py"
    target.write_bytes(_text(HEADER + FLAGGED))
    _deny(monkeypatch, target)
    monkeypatch.chdir(tmp_path)
    # check reports a file it cannot read and exits 1 (as ruff and flake8 do); fix exits 2: a
    # file it was asked to fix stays unfixed.
    assert cli.main([command, "secret.py"]) == (1 if command == "check" else 2)
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "secret.py" in line]
    assert errors == ["secret.py: error: cannot read: Permission denied"]
    monkeypatch.undo()
    assert target.read_bytes() == _text(HEADER + FLAGGED)


def test_messages_are_single_lines(check_run: subprocess.CompletedProcess[str]) -> None:
    """Every error line names its file first: no continuation lines, no stray output."""
    for line in check_run.stderr.splitlines():
        assert re.match(r"^[\w.]+\.py: error: \S", line), line


# --- the fixer under faults ----------------------------------------------------------------

FIXABLE = _text(HEADER + FLAGGED)


def _names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


class _HalfWritingStream:
    """A file object that writes half of what it is given to disk, then hits a full disk."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *_: object) -> None:
        self.stream.close()

    def write(self, data: bytes) -> int:
        self.stream.write(data[: len(data) // 2])
        self.stream.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()


def _fail_with_full_disk(*_: object, **__: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("fault", ["half_written", "fsync", "replace"])
def test_interrupted_write_keeps_the_original_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    target = tmp_path / "model.py"
    target.write_bytes(FIXABLE)
    if fault == "half_written":
        real_fdopen = os.fdopen
        monkeypatch.setattr(os, "fdopen", lambda fd, mode: _HalfWritingStream(real_fdopen(fd, mode)))
    else:
        monkeypatch.setattr(os, fault, _fail_with_full_disk)
    with pytest.raises(FixFileError, match="^cannot write: No space left on device$"):
        fix_file(target)
    monkeypatch.undo()
    assert target.read_bytes() == FIXABLE
    assert _names(tmp_path) == ["model.py"]


def test_interrupt_during_replace_keeps_the_original(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C at the worst moment: the exception goes on (the CLI exits 130), nothing is damaged."""
    target = tmp_path / "model.py"
    target.write_bytes(FIXABLE)

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fix_file(target)
    monkeypatch.undo()
    assert target.read_bytes() == FIXABLE and _names(tmp_path) == ["model.py"]


def test_completed_fix_is_whole(tmp_path: Path) -> None:
    target = tmp_path / "model.py"
    target.write_bytes(FIXABLE)
    assert fix_file(target).changed
    assert target.read_bytes() == expected_fixed_bytes(FIXABLE) and _names(tmp_path) == ["model.py"]


def test_read_only_file_is_reported_not_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Mode bits, not open(): root may write anything, and a rename replaces read-only files."""
    target = tmp_path / "frozen.py"
    target.write_bytes(FIXABLE)
    target.chmod(0o444)
    with pytest.raises(FixFileError, match="^cannot write: the file is read-only$"):
        fix_file(target)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["fix", "frozen.py"]) == 2
    assert [line for line in capsys.readouterr().err.splitlines() if "frozen.py" in line] == [
        "frozen.py: error: cannot write: the file is read-only"
    ]
    assert target.read_bytes() == FIXABLE and _names(tmp_path) == ["frozen.py"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


def test_read_only_folder_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    target = folder / "model.py"
    target.write_bytes(FIXABLE)
    if os.geteuid() == 0:
        # Root creates files in a 0o555 folder; make the temporary file fail as it would.
        def denied(*_: object, **__: object) -> None:
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(tempfile, "mkstemp", denied)
    else:
        folder.chmod(0o555)
    try:
        with pytest.raises(FixFileError, match="^cannot write: Permission denied$"):
            fix_file(target)
    finally:
        folder.chmod(0o755)
    assert target.read_bytes() == FIXABLE and _names(folder) == ["model.py"]


ENCODED_SOURCE = "# -*- coding: {} -*-\n" + HEADER + "label = 'café, naïve'  # é\n" + FLAGGED


@pytest.mark.parametrize("encodings", [("utf-8", "latin-1"), ("utf-8", "cp1252"), ("utf-8-sig", "latin-1")])
def test_same_content_in_two_encodings_both_come_out_right(tmp_path: Path, encodings: tuple[str, str]) -> None:
    files = {}
    for index, encoding in enumerate(encodings):
        cookie = "utf-8" if encoding == "utf-8-sig" else encoding
        text = ENCODED_SOURCE.format(cookie)
        files[tmp_path / f"file_{index}.py"] = (text, encoding)
        (tmp_path / f"file_{index}.py").write_bytes(text.encode(encoding))
    assert len({path.read_bytes() for path in files}) == 2  # really different bytes
    result = run_front(["-m", "flake8_detach", "fix", "."], tmp_path)
    assert result.returncode == 0 and "2 fixes applied in 2 files" in result.stdout, result.stdout + result.stderr
    for path, (text, encoding) in files.items():
        assert path.read_bytes() == text.replace("w.numpy()", "w.detach().numpy()").encode(encoding)
