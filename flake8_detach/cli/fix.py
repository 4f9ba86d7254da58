"""`flake8-detach fix [PATH...]`: apply the rules' fixes to files, as `ruff check --fix` does.

Exit codes as ruff's: 0 when nothing is left (everything found was fixed, or nothing was found);
1 when diagnostics remain that need a hand (or --unsafe-fixes), or, with --diff/--check, when
files would change; 2 for usage and configuration errors, when a path or a file could not be
read, decoded, parsed or written, or a notebook cell was left out because it does not parse: an
incomplete run never looks clean.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..config import ConfigError, ConfigResolver
from ..fixing.fixer import FixFileError, fix_notebook_data, fix_source, read_python_bytes
from ..settings import FIX_STYLES, Settings
from ..sources.files import SourceError, read_stream
from ..sources.notebooks import cell_error_line, display_location
from .check import open_cache
from .fixing import FileFix, changes_of, fix_paths, write_diff
from .progress import add_progress_option, progress_bar
from .selection import (
    add_run_options,
    add_selection_options,
    command_line_overrides,
    discover_files,
    screen,
    workers,
)


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "fix",
        help=summary,
        description="Apply the safe fixes of DET101-DET111 (and with --unsafe-fixes the unsafe ones: "
        "DET105's copies, some of DET103's, and DET111's, which --preview selects) to Python files, "
        "notebooks and folders.",
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                        help="files or folders (recursing into .py files and notebooks); '-' reads stdin; default: .")
    parser.add_argument("--diff", action="store_true", help="print a unified diff of the fixes; change nothing")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything would change")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe (DET103 writes, DET105)")
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
    add_run_options(parser, "neither read nor write the results cache (on by default: files left with nothing to fix are skipped)")
    add_progress_option(parser)
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
        config = resolver.for_folder(Path.cwd())  # from the resolver's cache: read once per run
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
    work: list[tuple[Path, Settings]] = []
    folders: dict[Path, Path] = {}  # a walked file -> the folder named: fix writes nothing outside it
    for raw in args.paths:
        if not Path(raw).exists():
            tally.errors.append(f"{raw}: error: no such file or directory")
            continue
        walked = Path(raw).is_dir()
        for path in discover_files(args, raw, config):
            refused = screen(path, not walked)
            if refused is not None:
                if refused[0] == "skipped":
                    print(f"{path}: {refused[1]}", file=sys.stderr)
                else:
                    tally.errors.append(f"{path}: error: {refused[1]}")
                continue
            if walked:
                folders.setdefault(path, Path(raw))
            try:
                work.append((path, resolver.for_path(path).settings_for(path)))
            except ConfigError as error:
                print(f"flake8-detach: error: {error}", file=sys.stderr)
                return 2
    cache = open_cache(args) if args.cache else None
    bar = progress_bar("fix", args)
    fixes = fix_paths(work, unsafe=args.unsafe_fixes, write=not dry_run, cache=cache, progress=bar.update,
                      jobs=workers(args), folders=folders)
    bar.close()
    for fix in fixes:
        _report_file(fix, args, messages, tally)
        if dry_run and fix.unwritable is not None:  # the change is shown; writing it would be refused
            print(f"{fix.report.path}: note: fix would not write it: {fix.unwritable}", file=sys.stderr)
    for problem in tally.errors:
        print(problem, file=sys.stderr)
    print(_summary(tally, dry_run, args.unsafe_fixes), file=messages)
    if tally.errors:
        return 2
    return 1 if tally.remaining or (dry_run and tally.files) else 0


def _fix_stdin(args: argparse.Namespace, resolver: ConfigResolver) -> int:
    """`fix -`: the fixed source on stdout (for editors and formatters), messages on stderr.

    As `ruff check --fix -`: the whole source is always written back, fixed or not, so a
    formatter pipeline never loses the buffer; what could not be fixed is reported on stderr.
    With `--stdin-filename x.ipynb` the buffer is a notebook's JSON, written back the same way
    (byte for byte when nothing changes). `--diff` prints only the diff; `--check` prints nothing.
    """
    name = Path(args.stdin_filename)
    try:
        data = read_stream(sys.stdin.buffer, args.stdin_filename)
    except SourceError as error:  # nothing to echo: the input was never whole
        print(f"{args.stdin_filename}: error: {error}", file=sys.stderr)
        return 2
    echo = not (args.diff or args.check)
    try:
        settings = resolver.for_path(name).settings_for(name)
        if name.suffix == ".ipynb":
            result = fix_notebook_data(data, args.stdin_filename, settings, unsafe=args.unsafe_fixes)
            source, encoding = "", "utf-8"
        else:
            source, encoding = read_python_bytes(data)  # newlines, BOM and coding kept, as for a file
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
        fixed = result.source.encode(encoding) if result.changed else data
    if echo:
        sys.stdout.buffer.write(fixed)
    elif args.diff and result.changed:
        write_diff(changes_of(args.stdin_filename, result), sys.stdout)
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


def _report_file(fix: FileFix, args: argparse.Namespace, out: TextIO, tally: _Tally) -> None:
    """One file's lines: its diff (with --diff), what is left in it, why it could not be fixed."""
    report = fix.report
    if report.error is not None:
        detail = "" if fix.unreadable else "; left unchanged"
        tally.errors.append(f"{report.path}: error: {report.error}{detail}")
        return
    if report.skipped is not None:
        print(f"{report.path}: {report.skipped}", file=sys.stderr)
        return
    if fix.changed:
        tally.files += 1
        tally.fixes += fix.applied
        if args.diff:
            write_diff(fix.changes, sys.stdout)
    for cell_error in report.cell_errors:  # nothing in that cell was looked at: not clean
        tally.errors.append(cell_error_line(report.path, cell_error))
    for diagnostic, rendered in zip(report.diagnostics, report.rendered_fixes()):
        tally.remaining += 1
        hint = ""
        if rendered is not None and not rendered.safe and not args.unsafe_fixes:
            tally.unsafe_available += 1
            hint = " [unsafe fix available]"
        where = display_location(report.path, report.cells, diagnostic.line)
        print(f"{where}:{diagnostic.column + 1}: {diagnostic.message}{hint}", file=out)
    if fix.hard_linked:  # the atomic replace breaks the hard link
        print(f"{report.path}: note: was hard-linked; the other links keep the old text", file=out)


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
