"""`flake8-detach check [PATH...]`: the flake8 diagnostics without flake8, in CI-friendly formats.

Same engine, same `# noqa` handling and the same decoding as the flake8 plugin, so a file reads
the same through both fronts. Also the same screen first: a file no selected rule can fire on is
reported clean without loading the engine (and libcst), so a run over clean files, such as
pre-commit makes on every commit, costs little more than Python's own start. The text format adds what ruff prints: `[*]` on the diagnostics
`--fix` fixes, and a summary (`Found N errors.`, or `All checks passed!`). `--fix` applies the
fixes first, with the loop `fix` uses (:mod:`.fixing`), and reports what is left; `--diff`
prints what `--fix` would change instead.

Exit 0 when clean, 1 when diagnostics were found (after --fix: remain; with --diff: something
would change) or a file could not be checked (reported on stderr, as ruff and flake8 report
them), 2 for usage, configuration and internal errors: an incomplete run must never look clean.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..config import ConfigError, ConfigResolver
from ..diagnostics import AnalysisError
from ..reporting import FORMATS, FileReport, Report, TextOptions, render
from ..reporting.summary import fix_counts
from ..reporting.summary import summary as closing_summary
from ..screening import worth_analysing
from ..settings import Settings
from ..sources.files import SourceError, decode_source, read_source, read_stream
from ..syntax import one_line, python_parse
from .output import write_output_file
from .parallel import PARALLEL_MIN_FILES, map_files
from .progress import Progress, add_progress_option, progress_bar
from .selection import (
    add_run_options,
    add_selection_options,
    command_line_overrides,
    discover_files,
    screen,
    workers,
)

if TYPE_CHECKING:
    from ..sources.cache import ResultsCache
    from ..sources.notebooks import NotebookModule
    from .fixing import FileFix


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "check",
        help=summary,
        description="Report tensor-to-NumPy hazards in Python files and folders, as the flake8 plugin does.",
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or folders ('-' reads stdin); default: .")
    parser.add_argument("--format", "--output-format", dest="format", choices=FORMATS, default="text",
                        help="output format (default: text); --output-format is ruff's name for it")
    parser.add_argument("--output-file", type=Path, help="write the report to this file instead of stdout")
    add_selection_options(parser, "report")
    parser.add_argument("--fix", action="store_true", help="apply the fixes (as `fix` does), then report what is left")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="with --fix, also apply the unsafe fixes; without it, mark them fixable ([*])")
    parser.add_argument("--diff", action="store_true",
                        help="print a unified diff of what --fix would change; change nothing (implies --fix)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when diagnostics are found")
    parser.add_argument("--statistics", action="store_true", help="count the diagnostics per code at the end")
    parser.add_argument("--show-source", action="store_true", help="show the source line and a caret under the token")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output: auto (default) on a terminal, unless NO_COLOR is set",
    )
    add_run_options(parser, "neither read nor write the results cache (on by default, as ruff's)")
    add_progress_option(parser)
    parser.add_argument("--stdin-filename", default="stdin", help="the name to report for '-' (default: stdin); a name ending in .ipynb reads a notebook's JSON")
    parser.set_defaults(func=run)


def check_text(source: str, display_path: str, settings: Settings, path: Path | None = None) -> FileReport:
    """Check one decoded file; every failure becomes a one-line error, never an exception.

    ``path``: where the file lives, for the project index (None: standard input, the file alone)."""
    report = FileReport(display_path, source=source)
    # flake8 compiles every file; a syntax error is an error even where no rule would look.
    tree, problem = python_parse(source, display_path)
    if problem is not None and problem.final:
        report.error, report.error_position = problem.message, problem.position
        return report
    try:
        if problem is None and not worth_analysing(source, settings, tree, in_project=path is not None):
            return report  # what analyze() says of it, without loading the engine and libcst
        from ..engine import Place, analyze_module, parse, settle_imports, witness_of, witnessing

        settle_imports()

        place = Place.of(path)
        project = witnessing(place, source, tree if problem is None else None)
        try:
            if problem is None:
                analysis = analyze_module(parse(source, tree), settings, source, tree, place, project)
            else:  # newer syntax than this Python's is not the file's fault: libcst, which reads
                # every version's grammar, decides
                analysis = analyze_module(parse(source), settings, place=place, project=project)
        finally:
            report.witness = witness_of(project)
    except AnalysisError as error:
        report.error = problem.message if problem is not None else one_line(error)
        report.error_position = problem.position if problem is not None else None
        return report
    except Exception as error:  # noqa: BLE001 - a bug in a rule must not hide the other files
        report.error = f"internal error, file skipped: {type(error).__name__}: {one_line(error)}"
        report.internal = True
        return report
    from ..suppression import unsuppressed  # flake8's noqa rules: loaded with the engine

    report.module = analysis.module
    report.diagnostics = unsuppressed(source, analysis.diagnostics)
    return report


def check_path(path: Path, settings: Settings, data: bytes | None = None, on_disk: bool = True) -> FileReport:
    """Check one file, from ``data`` when its bytes were already read (and hashed for the cache).

    ``on_disk``: ``path`` is where the file lives (its project is read); not so for stdin's name."""
    if path.suffix == ".ipynb":
        from ..sources.notebooks import (
            NotebookError,
            NotebookSkipped,
            notebook_from_bytes,
            read_notebook,
        )

        try:
            notebook = read_notebook(path) if data is None else notebook_from_bytes(data, str(path))
        except NotebookSkipped as skipped:
            return FileReport(str(path), skipped=str(skipped))
        except NotebookError as error:
            return FileReport(str(path), error=str(error))
        return check_notebook_module(notebook, str(path), settings, path if on_disk else None)
    try:
        source = read_source(path) if data is None else decode_source(data, str(path))
    except SourceError as error:
        return FileReport(str(path), error=str(error))
    return check_text(source, str(path), settings, path if on_disk else None)


def check_stdin(data: bytes, display_path: str, settings: Settings) -> FileReport:
    """Check the bytes of standard input as the file ``display_path`` names (a notebook's JSON too)."""
    # `--stdin-filename src/x.py` (an editor's buffer) says where the file lives; the default does not.
    report = check_path(Path(display_path), settings, data, on_disk=display_path != "stdin")
    report.path = display_path  # as the user wrote it (`./x.py`), not as Path normalises it
    return report


def check_notebook_module(notebook: NotebookModule, display_path: str, settings: Settings,
                          path: Path | None = None) -> FileReport:
    """Check a notebook's module (from a file, stdin or the editor) and put its findings in cells:
    positions and the places messages name, the cells left out, and where each lies in the JSON."""
    from ..sources.notebooks import placed_in_cells

    report = check_text(notebook.source, display_path, settings, path)
    report.cells = notebook.line_map
    report.cell_errors = list(notebook.cell_errors)
    report.diagnostics = placed_in_cells(report.diagnostics, notebook.line_map)
    if report.diagnostics:
        report.artifact_lines = notebook.artifact_lines(d.line for d in report.diagnostics)
    return report


Job = tuple[Path, Settings, "bytes | None"]


def _check_path_detached(job: Job, with_fixes: bool) -> FileReport:
    """Worker-process entry: check one file and send back plain data (no libcst trees)."""
    return check_path(*job).detached(with_fixes)


def check_paths(jobs_list: list[tuple[Path, Settings]], jobs: int, with_fixes: bool,
                cache: ResultsCache | None = None, progress: Progress | None = None) -> list[FileReport]:
    """Check files (each with its own settings) in order: from the cache where it has them,
    the rest in parallel when that pays off, and what was computed goes into the cache.

    ``progress(done, total)`` is called as files are done (cache hits first)."""
    total = len(jobs_list)
    if cache is None:
        return _check_uncached([(path, settings, None) for path, settings in jobs_list], jobs, with_fixes,
                               _offset(progress, 0, total))
    from ..sources.cache import MODE_CHECK, read_for_cache

    reports: list[FileReport | None] = []
    misses: list[tuple[int, Job, str | None]] = []
    mode = MODE_CHECK if with_fixes else f"{MODE_CHECK} without fixes"
    for index, (path, settings) in enumerate(jobs_list):
        data = read_for_cache(path)
        key = None if data is None else cache.key(data, cache_kind(path), settings, mode)
        hit = None if key is None else cache.get(key, str(path), data)
        if hit is None and key is not None and data is not None:  # the project changed: see the witness
            hit = _witnessed_hit(cache, path, settings, mode, data)
            if hit is not None:
                cache.put(key, hit)
        if hit is not None and data is not None and hit.cells is None and hit.diagnostics:
            try:  # the formats quote a diagnostic's line; a .py file's source is its bytes, decoded again
                hit.source = decode_source(data, str(path))
            except SourceError:
                pass
        reports.append(hit)
        if hit is None:
            misses.append((index, (path, settings, data), key))
    if progress is not None:
        progress(total - len(misses), total)
    computed = _check_uncached([job for _, job, _ in misses], jobs, with_fixes,
                               _offset(progress, total - len(misses), total))
    for (index, (path, settings, data), key), report in zip(misses, computed):
        report = report.detached(with_fixes) if report.module is not None else report
        if key is not None:
            cache.put(key, report)
        if report.witness is not None and data is not None:
            cache.put(cache.witnessed_key(data, path.suffix, settings, mode), report, report.witness)
        reports[index] = report
    if cache.written:
        cache.prune()
    return [report for report in reports if report is not None]


def _offset(progress: Progress | None, done: int, total: int) -> Progress | None:
    """``progress`` for a part of the run that starts once ``done`` of ``total`` files are done."""
    if progress is None:
        return None
    report = progress
    return lambda finished, _: report(done + finished, total)


def _check_uncached(jobs_list: list[Job], jobs: int, with_fixes: bool,
                    progress: Progress | None = None) -> list[FileReport]:
    if jobs <= 1 or len(jobs_list) < PARALLEL_MIN_FILES:  # in this process: reports keep their trees
        return map_files(_check_job, jobs_list, 1, progress)
    return map_files(functools.partial(_check_path_detached, with_fixes=with_fixes), jobs_list, jobs, progress)


def _check_job(job: Job) -> FileReport:
    return check_path(*job)


def run(args: argparse.Namespace) -> int:
    # Each file gets the config of its nearest configured folder (as ruff resolves it), so a
    # monorepo's pkg_a/pyproject.toml governs pkg_a/ here as it does in the editor. The folder the
    # run starts in (whose config decides which files are found) comes from the same cache: each
    # config file is read once per run.
    resolver = ConfigResolver(args.config, command_line_overrides(args))
    try:
        config = resolver.for_folder(Path.cwd())
    except ConfigError as error:
        print(f"flake8-detach: error: {error}", file=sys.stderr)
        return 2
    jobs = workers(args)
    fixing = args.fix or args.diff
    if fixing and "-" in args.paths:
        print("flake8-detach: error: check --fix does not read standard input; use `flake8-detach fix -`",
              file=sys.stderr)
        return 2
    # Slots in command-line order: a report already made (stdin, a missing path) or a file to check.
    slots: list[FileReport | Path] = []
    seen: set[Path] = set()
    folders: dict[Path, Path] = {}  # a walked file -> the folder named: --fix writes nothing outside it
    for raw in args.paths:
        if raw == "-":
            name = Path(args.stdin_filename)
            try:
                settings = resolver.for_path(name).settings_for(name)
            except ConfigError as error:
                print(f"flake8-detach: error: {error}", file=sys.stderr)
                return 2
            # As ruff reads `--stdin-filename x.ipynb`: the buffer is the notebook's JSON.
            try:
                data = read_stream(sys.stdin.buffer, args.stdin_filename)
            except SourceError as error:
                slots.append(FileReport(args.stdin_filename, error=str(error)))
                continue
            slots.append(check_stdin(data, args.stdin_filename, settings))
            continue
        if not Path(raw).exists():
            slots.append(FileReport(raw, error="no such file or directory"))
            continue
        walked = Path(raw).is_dir()
        for path in discover_files(args, raw, config):
            if path not in seen:
                seen.add(path)
                refused = screen(path, not walked)
                if refused is None:
                    slots.append(path)
                    if walked:
                        folders[path] = Path(raw)
                elif refused[0] == "skipped":
                    slots.append(FileReport(str(path), skipped=refused[1]))
                else:
                    slots.append(FileReport(str(path), error=refused[1]))
    try:
        work = [(slot, resolver.for_path(slot).settings_for(slot)) for slot in slots if isinstance(slot, Path)]
    except ConfigError as error:
        print(f"flake8-detach: error: {error}", file=sys.stderr)
        return 2
    cache = open_cache(args) if args.cache else None
    bar = progress_bar("fix" if fixing else "check", args)
    fixed: int | None = None
    if fixing:
        from .fixing import fix_paths

        fixes = fix_paths(work, unsafe=args.unsafe_fixes, write=not args.diff, cache=cache, progress=bar.update,
                          jobs=jobs, folders=folders)
        bar.close()
        if args.diff:
            return _report_diff(fixes, args.unsafe_fixes)
        done: list[FileReport] = [fix.report for fix in fixes]
        fixed = sum(fix.applied for fix in fixes)
        for fix in fixes:
            if fix.hard_linked:
                print(f"{fix.report.path}: note: was hard-linked; the other links keep the old text", file=sys.stderr)
    else:
        # Fixes are rendered for every format: text marks the fixable diagnostics ([*]) and counts them.
        done = check_paths(work, jobs, with_fixes=True, cache=cache, progress=bar.update)
        bar.close()
    checked = iter(done)
    report = Report([next(checked) if isinstance(slot, Path) else slot for slot in slots])
    for file in report.files:
        if file.cell_errors:
            from ..sources.notebooks import cell_error_line

            for cell_error in file.cell_errors:
                print(cell_error_line(file.path, cell_error), file=sys.stderr)
        if file.skipped is not None:
            print(f"{file.path}: {file.skipped}", file=sys.stderr)
    for file in report.errors:
        print(f"{file.path}: error: {file.error}", file=sys.stderr)
    color = use_color(args.color, sys.stdout) and args.output_file is None
    options = TextOptions(show_source=args.show_source, color=color, unsafe_fixes=args.unsafe_fixes)
    output = render(args.format, report, options)
    if args.statistics and args.format in ("text", "github"):
        output += statistics(report)
    elif args.statistics:
        sys.stderr.write(statistics(report))  # json and sarif documents stay parseable
    if args.format == "text":
        output += closing_summary(report, unsafe=args.unsafe_fixes, fixed=fixed)
    if args.output_file is not None:
        if not write_output_file(args.output_file, output, "flake8-detach"):
            return 2
    else:
        sys.stdout.write(output)
        sys.stdout.flush()
    code = report.exit_code()
    return 0 if args.exit_zero and code == 1 else code


def _witnessed_hit(cache: ResultsCache, path: Path, settings: Settings, mode: str, data: bytes) -> FileReport | None:
    """A file's result kept with its witness, when the witness holds in the project now."""
    from ..analysis.project import summary_directory, witness_holds

    source = _analysed_text(path, data)
    if source is None:
        return None
    return cache.get_if_witnessed(cache.witnessed_key(data, path.suffix, settings, mode), str(path), data,
                                  lambda witness: witness_holds(path, source, summary_directory(), witness))


def _analysed_text(path: Path, data: bytes) -> str | None:
    """The text the analysis read from these bytes: a notebook's code cells, assembled as every
    front reads them, or a module's decoded source; None when they cannot be read so."""
    if path.suffix == ".ipynb":
        from ..sources.notebooks import NotebookError, notebook_from_bytes

        try:
            return notebook_from_bytes(data, str(path)).source
        except (NotebookError, ValueError, RecursionError):
            return None
    try:
        return decode_source(data, str(path))
    except SourceError:
        return None


def cache_kind(path: Path) -> str:
    """What besides its bytes a file's cached result depends on: its suffix and its project."""
    from ..analysis.project import project_fingerprint

    try:
        return f"{path.suffix}\0{project_fingerprint(path)}"
    except OSError:
        return path.suffix


def open_cache(args: argparse.Namespace) -> ResultsCache | None:
    """The results cache of ``--cache-dir`` (``--no-cache`` runs never load the module)."""
    from ..analysis.project import use_summary_directory
    from ..sources.cache import ResultsCache, default_directory

    cache = ResultsCache.open(args.cache_dir or default_directory())
    use_summary_directory(cache.directory if cache is not None else None)  # the project index's summaries
    return cache


def _report_diff(fixes: list[FileFix], unsafe: bool) -> int:
    """`check --diff`: the diff on stdout, what it would fix on stderr; 1 when anything would change."""
    from .fixing import write_diff

    for fix in fixes:
        write_diff(fix.changes, sys.stdout)
    sys.stdout.flush()
    would_fix = sum(fix.applied for fix in fixes)
    _, hidden = fix_counts([fix.report for fix in fixes], unsafe)
    hint = f" ({hidden} unsafe {'fix' if hidden == 1 else 'fixes'} available with `--unsafe-fixes`)" if hidden else ""
    if would_fix:
        print(f"Would fix {would_fix} {'error' if would_fix == 1 else 'errors'}{hint}.", file=sys.stderr)
    else:
        print(f"No errors would be fixed{hint}.", file=sys.stderr)
    for fix in fixes:
        if fix.report.error is not None:
            print(f"{fix.report.path}: error: {fix.report.error}", file=sys.stderr)
    if any(fix.report.internal for fix in fixes):
        return 2
    return 1 if any(fix.changed for fix in fixes) else 0


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
