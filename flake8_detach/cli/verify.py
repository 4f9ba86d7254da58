"""`flake8-detach verify [PATH...]`: execute the fixtures and check every diagnostic's runtime claim.

Exit 0 when every claim held (skips included: a skipped leg is reported, never counted as
passed), 1 when any failed, 2 when the run could not happen (torch or numpy missing, no fixtures,
the runner broke).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from ..verify import DEFAULT_MEMORY_LIMIT, INSTALL_HINT
from ..verify.devices import DEVICE_NAMES
from .output import write_output_file
from .progress import ProgressBar

DEFAULT_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "verify",
        help=summary,
        description=(
            "Lint each fixture, run it in a subprocess once per device (DEVICE environment variable), "
            "run the fixer's output the same way, and check the claims of its '# expect:' comments."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="fixture files or folders (default: the repository's fixtures/)")
    parser.add_argument(
        "--device",
        dest="devices",
        action="append",
        choices=DEVICE_NAMES,
        help="a device to run on (repeatable; default: cpu, cuda, and meta as the cuda stand-in when there is no GPU)",
    )
    parser.add_argument("--json", action="store_true", help="write the report as JSON (for CI)")
    parser.add_argument("--output-file", type=Path, help="write the report to this file instead of stdout")
    parser.add_argument("--jobs", type=int, default=2, help="runs executed at once (default: 2)")
    parser.add_argument("--timeout", type=seconds, default=60.0, help="seconds one run may take (default: 60)")
    parser.add_argument(
        "--memory-limit",
        type=mebibytes,
        default=DEFAULT_MEMORY_LIMIT,
        metavar="MIB",
        help=f"MiB of data memory one run may use, or 'none' (default: {DEFAULT_MEMORY_LIMIT}; not applied on CUDA)",
    )
    parser.add_argument("--hide-skipped", action="store_true", help="leave skipped rows out of the text table")
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar (it is shown only when stderr is a terminal)"
    )
    parser.set_defaults(func=run)


def seconds(text: str) -> float:
    """argparse type of --timeout: a finite number of seconds above 0 (nan, inf, 0 would disable or break it)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, not {text!r}")
    return value


def mebibytes(text: str) -> int | None:
    """argparse type of --memory-limit: a whole number of MiB above 0, or 'none'."""
    if text.strip().lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of MiB (or 'none'): {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of MiB above 0 (or 'none'), not {text!r}")
    return value


def missing_dependencies() -> list[str]:
    """The verify extra's modules that cannot be imported, without importing them."""
    missing = []
    for name in ("torch", "numpy"):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # ValueError: sys.modules[name] is None (import blocked)
            found = False
        if not found:
            missing.append(name)
    return missing


def table_width(stream: TextIO, output_file: Path | None) -> int:
    """The terminal's width when the table goes to one; a fixed width for files and pipes."""
    from ..verify.report import DEFAULT_WIDTH

    if output_file is None and getattr(stream, "isatty", lambda: False)():
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


def run(args: argparse.Namespace) -> int:
    missing = missing_dependencies()
    if missing:
        print(
            f"flake8-detach verify: needs {' and '.join(missing)} to run the fixtures; install them with: {INSTALL_HINT}",
            file=sys.stderr,
        )
        return 2
    if not args.paths and not DEFAULT_FIXTURES.is_dir():
        print("flake8-detach verify: error: no fixtures/ folder beside this installation; pass the fixtures' PATH", file=sys.stderr)
        return 2
    paths = args.paths or [DEFAULT_FIXTURES]
    absent = [str(path) for path in paths if not Path(path).exists()]
    if absent:
        print(f"flake8-detach verify: error: no such file or directory: {', '.join(absent)}", file=sys.stderr)
        return 2

    from ..verify.execution import RunnerError
    from ..verify.harness import verify
    from ..verify.report import render_json, render_text

    bar = ProgressBar("verify", enabled=False if args.no_progress else None)
    try:
        report = verify(paths, args.devices, workers=max(1, args.jobs), timeout=args.timeout, progress=bar.update,
                        memory_limit=args.memory_limit)
    except RunnerError as error:
        bar.close()
        print(f"flake8-detach verify: error: {error}", file=sys.stderr)
        return 2
    bar.close()
    if not report.fixtures:
        print(f"flake8-detach verify: error: no fixtures found under {', '.join(map(str, paths))}", file=sys.stderr)
        return 2
    output = render_json(report) if args.json else render_text(
        report, show_skipped=not args.hide_skipped, width=table_width(sys.stdout, args.output_file))
    if args.output_file is not None:
        if not write_output_file(args.output_file, output, "flake8-detach verify"):
            return 2
        print(report.summary())
    else:
        sys.stdout.write(output)
    for row in report.failures:
        if args.json or args.output_file is not None:
            print(f"FAILED {row.message}", file=sys.stderr)
    return report.exit_code
