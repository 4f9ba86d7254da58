"""`flake8-detach check PATH...`: the flake8 diagnostics without flake8, in CI-friendly formats.

Same engine, same `# noqa` handling and the same decoding as the flake8 plugin, so a file reads
the same through both fronts. Also the same screen first: a file no selected rule can fire on is
reported clean without loading the engine (and libcst), so a run over clean files, such as
pre-commit makes on every commit, costs little more than Python's own start.

Exit 0 when clean, 1 when diagnostics were found or a file could not be checked (reported on
stderr, as ruff and flake8 report them), 2 for usage, configuration and internal errors: an
incomplete run must never look clean.
"""

from __future__ import annotations

import argparse
import ast
import functools
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..config import Config, ConfigError, ConfigResolver, discover_config
from ..diagnostics import AnalysisError
from ..files import SourceError, decode_source, read_source
from ..notebooks import (
    MAX_NOTEBOOK_BYTES,
    NotebookError,
    NotebookSkipped,
    notebook_from_bytes,
    read_notebook,
)
from ..reporting import FORMATS, FileReport, Report, TextOptions, render
from ..screening import worth_analysing
from ..settings import Settings
from .output import write_output_file
from .selection import add_selection_options, command_line_overrides, discover_files

if TYPE_CHECKING:
    from ..cache import ResultsCache

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_MIN_FILES = 16
FORMATS_WITH_FIXES = frozenset({"json", "sarif"})
# SyntaxErrors that are CPython's limits, not grammar a newer Python has (libcst has no such limits).
COMPILER_LIMITS = ("too many nested parentheses", "too many statically nested blocks",
                   "too many levels of indentation")


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "check",
        help=summary,
        description="Report tensor-to-NumPy hazards in Python files and folders, as the flake8 plugin does.",
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or folders ('-' reads stdin); default: .")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument("--output-file", type=Path, help="write the report to this file instead of stdout")
    add_selection_options(parser, "report")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when diagnostics are found")
    parser.add_argument("--statistics", action="store_true", help="count the diagnostics per code at the end")
    parser.add_argument("--show-source", action="store_true", help="show the source line and a caret under the token")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output: auto (default) on a terminal, unless NO_COLOR is set",
    )
    parser.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="neither read nor write the results cache (on by default, as ruff's)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="where the results cache lives (default: $FLAKE8_DETACH_CACHE_DIR, else .flake8_detach_cache)",
    )
    parser.add_argument("--stdin-filename", default="stdin", help="the name to report for '-' (default: stdin)")
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=0,
        help=f"worker processes (default 0: one per CPU; used from {PARALLEL_MIN_FILES} files on)",
    )
    parser.set_defaults(func=run)


def load_config(args: argparse.Namespace) -> Config:
    """The config of the folder the run starts in: it decides which files are found."""
    return command_line_overrides(args)(discover_config(Path.cwd(), args.config))


def check_text(source: str, display_path: str, settings: Settings) -> FileReport:
    """Check one decoded file; every failure becomes a one-line error, never an exception."""
    report = FileReport(display_path, source=source)
    tree: ast.AST | None
    syntax_error: str | None = None
    syntax_position: tuple[int, int] | None = None
    try:
        # flake8 compiles every file; a syntax error is an error even where no rule would look.
        tree = ast.parse(source, display_path)
    except SyntaxError as error:
        # Newer syntax than this Python's (3.12 generics on 3.11, say) is not the file's fault:
        # libcst reads every version's grammar, so it decides below.
        where = f" at line {error.lineno}, column {error.offset}" if error.lineno is not None else ""
        tree, syntax_error = None, f"syntax error{where}: {error.msg}"
        if error.lineno is not None:
            syntax_position = (error.lineno, max((error.offset or 1) - 1, 0))
        if error.msg.startswith(COMPILER_LIMITS):  # no Python runs it: not a matter of version
            report.error, report.error_position = syntax_error, syntax_position
            return report
    except (ValueError, RecursionError, MemoryError) as error:
        report.error = f"cannot parse: {_one_line(error)}"
        return report
    try:
        if syntax_error is None and not worth_analysing(source, settings, tree):
            return report  # what analyze() says of it, without loading the engine and libcst
        from ..engine import analyze_module, parse

        if syntax_error is None:
            analysis = analyze_module(parse(source, tree), settings, source, tree)
        else:  # libcst decides: newer Python than this one, or a broken file
            analysis = analyze_module(parse(source), settings)
    except AnalysisError as error:
        report.error = syntax_error or _one_line(error)
        report.error_position = syntax_position
        return report
    except Exception as error:  # noqa: BLE001 - a bug in a rule must not hide the other files
        report.error = f"internal error, file skipped: {type(error).__name__}: {_one_line(error)}"
        report.internal = True
        return report
    from ..suppression import unsuppressed  # flake8's noqa rules: loaded with the engine

    report.module = analysis.module
    report.diagnostics = unsuppressed(source, analysis.diagnostics)
    return report


def check_path(path: Path, settings: Settings, data: bytes | None = None) -> FileReport:
    """Check one file, from ``data`` when its bytes were already read (and hashed for the cache)."""
    if path.suffix == ".ipynb":
        return check_notebook(path, settings, data)
    try:
        source = read_source(path) if data is None else decode_source(data, str(path))
    except SourceError as error:
        return FileReport(str(path), error=str(error))
    return check_text(source, str(path), settings)


def check_notebook(path: Path, settings: Settings, data: bytes | None = None) -> FileReport:
    """A notebook's code cells as one module; positions name the cell (see notebooks.py)."""
    try:
        notebook = read_notebook(path) if data is None else notebook_from_bytes(data, str(path))
    except NotebookSkipped as skipped:
        return FileReport(str(path), skipped=str(skipped))
    except NotebookError as error:
        return FileReport(str(path), error=str(error))
    report = check_text(notebook.source, str(path), settings)
    report.cells = notebook.line_map
    report.notes = notebook.problems
    return report


Job = tuple[Path, Settings, "bytes | None"]


def _check_path_detached(job: Job, with_fixes: bool) -> FileReport:
    """Worker-process entry: check one file and send back plain data (no libcst trees)."""
    return check_path(*job).detached(with_fixes)


def check_paths(jobs_list: list[tuple[Path, Settings]], jobs: int, with_fixes: bool,
                cache: ResultsCache | None = None) -> list[FileReport]:
    """Check files (each with its own settings) in order: from the cache where it has them,
    the rest in parallel when that pays off, and what was computed goes into the cache."""
    if cache is None:
        return _check_uncached([(path, settings, None) for path, settings in jobs_list], jobs, with_fixes)
    reports: list[FileReport | None] = []
    misses: list[tuple[int, Job, str | None]] = []
    for index, (path, settings) in enumerate(jobs_list):
        data = _read_for_cache(path)
        key = None if data is None else cache.key(data, path.suffix, settings, with_fixes)
        hit = None if key is None else cache.get(key, str(path))
        if hit is not None and data is not None and hit.cells is None and hit.diagnostics:
            try:  # the formats quote a diagnostic's line; a .py file's source is its bytes, decoded again
                hit.source = decode_source(data, str(path))
            except SourceError:
                pass
        reports.append(hit)
        if hit is None:
            misses.append((index, (path, settings, data), key))
    computed = _check_uncached([job for _, job, _ in misses], jobs, with_fixes)
    for (index, _, key), report in zip(misses, computed):
        report = report.detached(with_fixes) if report.module is not None else report
        if key is not None:
            cache.put(key, report)
        reports[index] = report
    if cache.written:
        cache.prune()
    return [report for report in reports if report is not None]


def _open_cache(args: argparse.Namespace) -> ResultsCache | None:
    from ..cache import ResultsCache, default_directory  # `--no-cache` runs never load it

    return ResultsCache.open(args.cache_dir or default_directory())


def _read_for_cache(path: Path) -> bytes | None:
    """The file's bytes to hash, or None (unreadable, or a notebook too big to read): uncached."""
    try:
        if path.suffix == ".ipynb" and path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


def preload_analysis() -> None:
    """Import what a file that passes the screen needs (check_text imports it on demand)."""
    from .. import engine, suppression  # noqa: F401
    from ..reporting import fix_spans  # noqa: F401


def _check_uncached(jobs_list: list[Job], jobs: int, with_fixes: bool) -> list[FileReport]:
    if jobs <= 1 or len(jobs_list) < PARALLEL_MIN_FILES:
        return [check_path(*job) for job in jobs_list]
    import multiprocessing  # here: a run over a few files must not pay for the pool's imports
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # Forked workers inherit what is loaded: load the analysis once here rather than once in
    # each worker (most of a second of CPU each): in a run of this many files, some file
    # nearly always needs it.
    preload_analysis()
    worker = functools.partial(_check_path_detached, with_fixes=with_fixes)
    context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    workers = min(jobs, len(jobs_list))
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            return list(pool.map(worker, jobs_list, chunksize=max(1, len(jobs_list) // (workers * 8))))
    except (OSError, BrokenProcessPool):
        # No multiprocessing here (a sandbox without semaphores, a killed worker): as flake8
        # does, fall back to one process rather than fail the run.
        return [check_path(*job) for job in jobs_list]


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args)
    except ConfigError as error:
        print(f"flake8-detach: error: {error}", file=sys.stderr)
        return 2
    if args.jobs < 0:
        print("flake8-detach: error: --jobs must be 0 (one per CPU) or more", file=sys.stderr)
        return 2
    jobs = args.jobs or os.cpu_count() or 1
    # Each file gets the config of its nearest configured folder (as ruff resolves it), so a
    # monorepo's pkg_a/pyproject.toml governs pkg_a/ here as it does in the editor.
    resolver = ConfigResolver(args.config, command_line_overrides(args))
    # Slots in command-line order: a report already made (stdin, a missing path) or a file to check.
    slots: list[FileReport | Path] = []
    seen: set[Path] = set()
    for raw in args.paths:
        if raw == "-":
            try:
                source = decode_source(sys.stdin.buffer.read(), args.stdin_filename)
            except SourceError as error:
                slots.append(FileReport(args.stdin_filename, error=str(error)))
            else:
                try:
                    settings = resolver.for_path(Path(args.stdin_filename)).settings_for(Path(args.stdin_filename))
                except ConfigError as error:
                    print(f"flake8-detach: error: {error}", file=sys.stderr)
                    return 2
                slots.append(check_text(source, args.stdin_filename, settings))
            continue
        if not Path(raw).exists():
            slots.append(FileReport(raw, error="no such file or directory"))
            continue
        for path in discover_files(args, raw, config):
            if path not in seen:
                seen.add(path)
                slots.append(path)
    try:
        work = [(slot, resolver.for_path(slot).settings_for(slot)) for slot in slots if isinstance(slot, Path)]
    except ConfigError as error:
        print(f"flake8-detach: error: {error}", file=sys.stderr)
        return 2
    cache = _open_cache(args) if args.cache else None
    checked = iter(check_paths(work, jobs, with_fixes=args.format in FORMATS_WITH_FIXES, cache=cache))
    report = Report([next(checked) if isinstance(slot, Path) else slot for slot in slots])
    for file in report.files:
        for note in file.notes:
            print(f"{file.path}: {note}", file=sys.stderr)
        if file.skipped is not None:
            print(f"{file.path}: {file.skipped}", file=sys.stderr)
    for file in report.errors:
        print(f"{file.path}: error: {file.error}", file=sys.stderr)
    color = use_color(args.color, sys.stdout) and args.output_file is None
    output = render(args.format, report, TextOptions(show_source=args.show_source, color=color))
    if args.statistics and args.format in ("text", "github"):
        output += statistics(report)
    elif args.statistics:
        sys.stderr.write(statistics(report))  # json and sarif documents stay parseable
    if args.output_file is not None:
        if not write_output_file(args.output_file, output, "flake8-detach"):
            return 2
    else:
        sys.stdout.write(output)
        sys.stdout.flush()
    code = report.exit_code()
    return 0 if args.exit_zero and code == 1 else code


def statistics(report: Report) -> str:
    """flake8's `--statistics`: per code, the count and the first message."""
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for file in report.files:
        for diagnostic in file.diagnostics:
            counts[diagnostic.code] += 1
            first.setdefault(diagnostic.code, diagnostic.message)
    return "".join(f"{counts[code]:<5} {first[code]}\n" for code in sorted(counts))


def use_color(choice: str, stream: TextIO) -> bool:
    """`always`/`never`, or on a terminal unless NO_COLOR is set (https://no-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
