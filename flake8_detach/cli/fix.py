"""`flake8-detach fix PATH...`: apply the rules' fixes to files, as `ruff check --fix` does.

Exit 0 when nothing is left to fix; 1 when files were (or, with --diff/--check, would be)
changed or diagnostics remain that need a hand (or --unsafe-fixes); 2 when the configuration,
a path, or a file could not be read, decoded, parsed or written, or a notebook cell was left out
because it does not parse: an incomplete run never looks clean.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..config import ConfigError, ConfigResolver, discover_config
from ..files import SourceError, decode_source
from ..fixer import FixFileError, FixResult, fix_file, fix_notebook_data, fix_source
from ..notebooks import cell_error_line, display_location
from ..settings import FIX_STYLES
from .selection import add_selection_options, command_line_overrides, discover_files


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fix",
        help="fix tensor-to-NumPy hazards in place (like ruff check --fix)",
        description="Apply the safe fixes (and with --unsafe-fixes the unsafe ones) of DET101-DET104 "
        "to Python files and folders.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursing into .py files)")
    parser.add_argument("--diff", action="store_true", help="print a unified diff of the fixes; change nothing")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything would change")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe (DET103 writes)")
    add_selection_options(parser, "fix")
    parser.add_argument(
        "--stdin-filename",
        default="stdin",
        help="with '-' as the path: the file name the source stands for (config and per-file-ignores); "
        "a name ending in .ipynb reads and writes a notebook's JSON",
    )
    parser.add_argument(
        "--style",
        choices=FIX_STYLES,
        help="chain: .detach().cpu().numpy() (default); force: .numpy(force=True), torch >= 1.13",
    )
    parser.set_defaults(func=run)


@dataclass
class _Tally:
    fixes: int = 0
    files: int = 0
    remaining: int = 0
    unsafe_available: int = 0
    errors: list[str] = field(default_factory=list)


def run(args: argparse.Namespace) -> int:
    override = command_line_overrides(args, fix_style=args.style)
    # The folder the run starts in decides which files are found; each file is then fixed with
    # the config of its nearest configured folder, as `check` and the editor resolve it.
    resolver = ConfigResolver(args.config, override)
    try:
        config = override(discover_config(Path.cwd(), args.config))
    except ConfigError as error:
        print(f"flake8-detach: error: {error}", file=sys.stderr)
        return 2
    dry_run = args.diff or args.check
    # The diff owns stdout (so it can be piped to `patch`); everything else goes to stderr then.
    messages: TextIO = sys.stderr if args.diff else sys.stdout
    tally = _Tally()
    if "-" in args.paths:
        if args.paths != ["-"]:
            print("flake8-detach: error: '-' (standard input) cannot be mixed with paths", file=sys.stderr)
            return 2
        return _fix_stdin(args, resolver)
    for raw in args.paths:
        if not Path(raw).exists():
            tally.errors.append(f"{raw}: error: no such file or directory")
            continue
        for path in discover_files(args, raw, config):
            try:
                settings = resolver.for_path(path).settings_for(path)
            except ConfigError as error:
                print(f"flake8-detach: error: {error}", file=sys.stderr)
                return 2
            try:
                links = _link_count(path)
                result = fix_file(path, settings, unsafe=args.unsafe_fixes, write=not dry_run)
            except FixFileError as error:
                tally.errors.append(f"{path}: error: {error}")
                continue
            if result.error is not None:
                tally.errors.append(f"{path}: error: {result.error}; left unchanged")
                continue
            if result.skipped is not None:
                print(f"{path}: {result.skipped}", file=sys.stderr)
                continue
            _report_file(path, result, args, messages, tally)
            if dry_run and result.unwritable is not None:  # the change is shown; writing it would be refused
                print(f"{path}: note: fix would not write it: {result.unwritable}", file=sys.stderr)
            if links > 1 and result.changed and not dry_run:  # the atomic replace breaks the hard link
                print(f"{path}: note: was hard-linked; the other links keep the old text", file=messages)
    for problem in tally.errors:
        print(problem, file=sys.stderr)
    print(_summary(tally, dry_run, args.unsafe_fixes), file=messages)
    if tally.errors:
        return 2
    return 1 if tally.files or tally.remaining else 0


def _link_count(path: Path) -> int:
    """How many hard links the file has (1 when that cannot be told: reading it will say why)."""
    try:
        return path.stat().st_nlink
    except OSError:
        return 1


def _fix_stdin(args: argparse.Namespace, resolver: ConfigResolver) -> int:
    """`fix -`: the fixed source on stdout (for editors and formatters), messages on stderr.

    As `ruff check --fix -`: the whole source is always written back, fixed or not, so a
    formatter pipeline never loses the buffer; what could not be fixed is reported on stderr.
    With `--stdin-filename x.ipynb` the buffer is a notebook's JSON, written back the same way
    (byte for byte when nothing changes). `--diff` prints only the diff; `--check` prints nothing.
    """
    name = Path(args.stdin_filename)
    data = sys.stdin.buffer.read()
    echo = not (args.diff or args.check)
    try:
        settings = resolver.for_path(name).settings_for(name)
        if name.suffix == ".ipynb":
            result = fix_notebook_data(data, args.stdin_filename, settings, unsafe=args.unsafe_fixes)
            source = ""
        else:
            source = decode_source(data, args.stdin_filename)
            result = fix_source(source, settings, unsafe=args.unsafe_fixes)
    except (SourceError, ConfigError, FixFileError) as error:
        if echo:
            sys.stdout.buffer.write(data)
        print(f"{args.stdin_filename}: error: {error}", file=sys.stderr)
        return 2
    if result.skipped is not None:
        if echo:
            sys.stdout.buffer.write(data)
        print(f"{args.stdin_filename}: {result.skipped}", file=sys.stderr)
        return 0
    if result.error is not None:
        if echo:
            sys.stdout.buffer.write(data)
        print(f"{args.stdin_filename}: error: {result.error}; left unchanged", file=sys.stderr)
        return 2
    if name.suffix == ".ipynb":
        if result.changed and result.notebook_text is None and echo:
            sys.stdout.buffer.write(data)
            print(f"{args.stdin_filename}: error: not written: {result.unwritable}", file=sys.stderr)
            return 2
        fixed = result.notebook_text.encode("utf-8") if result.changed and result.notebook_text is not None else data
    else:
        text = result.source
        if b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b""):
            text = text.replace("\n", "\r\n")  # decoding read universal newlines: give CRLF back
        fixed = text.encode("utf-8") if result.changed else data
    if echo:
        sys.stdout.buffer.write(fixed)
    elif args.diff and result.changed:
        _write_diff(args.stdin_filename, result)
    sys.stdout.flush()
    tally = _Tally(fixes=len(result.applied), files=int(result.changed))
    for cell_error in result.cell_errors:
        tally.errors.append(cell_error_line(args.stdin_filename, cell_error))
    for problem in tally.errors:
        print(problem, file=sys.stderr)
    for diagnostic in result.remaining:
        tally.remaining += 1
        where = display_location(args.stdin_filename, result.cells, diagnostic.line)
        print(f"{where}:{diagnostic.column + 1}: {diagnostic.message}", file=sys.stderr)
    print(_summary(tally, not echo, args.unsafe_fixes), file=sys.stderr)
    if tally.errors:
        return 2
    if not echo and result.changed:
        return 1
    return 1 if result.remaining else 0


def _write_diff(name: str, result: FixResult) -> None:
    """A unified diff of the fix on stdout: per changed cell for a notebook, of the text otherwise."""
    # A notebook: one diff per changed cell, its lines numbered within the cell.
    changes = (
        [(f"{name}:cell {cell}", old, new) for cell, (old, new) in sorted(result.cell_changes.items())]
        if result.cell_changes is not None else [(name, result.original, result.source)]
    )
    for label, old, new in changes:
        sys.stdout.writelines(
            _with_final_newlines(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                fromfile=f"a/{label}", tofile=f"b/{label}",
            ))
        )


def _report_file(path: Path, result: FixResult, args: argparse.Namespace, out: TextIO, tally: _Tally) -> None:
    if result.changed:
        tally.files += 1
        tally.fixes += len(result.applied)
        if args.diff:
            _write_diff(path.as_posix(), result)
    for cell_error in result.cell_errors:  # nothing in that cell was looked at: not clean
        tally.errors.append(cell_error_line(str(path), cell_error))
    for diagnostic in result.remaining:
        tally.remaining += 1
        hint = ""
        if diagnostic.fix is not None and not diagnostic.fix.safe and not args.unsafe_fixes:
            tally.unsafe_available += 1
            hint = " [unsafe fix available]"
        where = display_location(str(path), result.cells, diagnostic.line)
        print(f"{where}:{diagnostic.column + 1}: {diagnostic.message}{hint}", file=out)


def _with_final_newlines(lines: Iterable[str]) -> Iterator[str]:
    """A cell's last line has no newline: end every diff line with one, as `diff` marks it."""
    for line in lines:
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of cell\n"


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _summary(tally: _Tally, dry_run: bool, unsafe: bool) -> str:
    verb = "would be applied" if dry_run else "applied"
    fixes = _plural(tally.fixes, "fix", "fixes")
    text = f"{fixes} {verb} in {_plural(tally.files, 'file')}"
    if tally.remaining:
        text += f"; {_plural(tally.remaining, 'diagnostic')} left"
        if tally.unsafe_available and not unsafe:
            text += f" ({tally.unsafe_available} fixable with --unsafe-fixes)"
    if tally.errors:
        text += f"; {_plural(len(tally.errors), 'error')}"
    return text
