"""`flake8-detach fix PATH...`: apply the rules' fixes to files, as `ruff check --fix` does.

Exit 0 when nothing is left to fix; 1 when files were (or, with --diff/--check, would be)
changed or diagnostics remain that need a hand (or --unsafe-fixes); 2 when the configuration,
a path, or a file could not be read, decoded, parsed or written: an incomplete run never looks
clean.
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
from ..fixer import FixFileError, FixResult, fix_file, fix_source
from ..notebooks import display_location
from ..settings import FIX_STYLES
from .selection import add_selection_options, command_line_overrides, discover_files


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "fix",
        help=summary,
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
        help="with '-' as the path: the file name the source stands for (config and per-file-ignores)",
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
    """
    name = Path(args.stdin_filename)
    data = sys.stdin.buffer.read()
    try:
        source = decode_source(data, args.stdin_filename)
        settings = resolver.for_path(name).settings_for(name)
    except (SourceError, ConfigError) as error:
        sys.stdout.buffer.write(data)
        print(f"{args.stdin_filename}: error: {error}", file=sys.stderr)
        return 2
    result = fix_source(source, settings, unsafe=args.unsafe_fixes)
    if result.error is not None:
        sys.stdout.write(source)
        print(f"{args.stdin_filename}: error: {result.error}; left unchanged", file=sys.stderr)
        return 2
    fixed = result.source
    if b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b""):
        fixed = fixed.replace("\n", "\r\n")  # decoding read universal newlines: give CRLF back
    sys.stdout.buffer.write(fixed.encode("utf-8"))
    sys.stdout.flush()
    tally = _Tally(fixes=len(result.applied), files=int(result.changed))
    for diagnostic in result.remaining:
        tally.remaining += 1
        print(f"{args.stdin_filename}:{diagnostic.line}:{diagnostic.column + 1}: {diagnostic.message}", file=sys.stderr)
    print(_summary(tally, False, args.unsafe_fixes), file=sys.stderr)
    return 1 if result.remaining else 0


def _report_file(path: Path, result: FixResult, args: argparse.Namespace, out: TextIO, tally: _Tally) -> None:
    if result.changed:
        tally.files += 1
        tally.fixes += len(result.applied)
        if args.diff:
            name = path.as_posix()
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
