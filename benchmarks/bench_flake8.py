"""What flake8-detach adds to flake8's own time, measured side by side on real code.

Usage: python benchmarks/bench_flake8.py [CORPUS...] [--rounds N] [--bare-venv DIR] [--skip-direct]

flake8 runs every installed plugin on every file whatever ``--select`` says, so
the cost users pay is "flake8's default run with the plugin installed" minus
"the same run without it". This script times exactly that:

* WITH: ``python -m flake8 -j1 --isolated`` from the interpreter running this
  script (the environment where flake8-detach is installed);
* WITHOUT: the same command from a second virtual environment that holds only
  flake8 and its checkers at the same versions (created once and cached under
  ``--bare-venv``, default ``/tmp/flake8-detach-bench/venv``).

Both run as subprocesses, alternating within each round (the order flips every
round so that drift in machine load hits both sides), and the script prints
every round, the medians and ``(with - without) / without``: the fraction of
flake8's own time the plugin adds. The issue's target is at most 0.5.

As extra information it also measures the plugin's own cost in process: the
engine's ``analyze`` over every corpus file next to ``ast.parse`` of the same
files (flake8 parses every file with ``ast`` anyway, and hands the tree to the
plugin for free).

The default corpus is the installed torch package's ``nn``, ``optim`` and
``utils/data`` sources (found by importing torch here; linting never imports it).
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tokenize
from importlib import metadata
from pathlib import Path

# flake8 and the checkers that make up its default run: pinned to the versions of
# the plugin's environment so that both sides run the same flake8.
FLAKE8_DISTRIBUTIONS = ("flake8", "pycodestyle", "pyflakes", "mccabe")
DEFAULT_BARE_VENV = Path(tempfile.gettempdir()) / "flake8-detach-bench" / "venv"


def default_corpus() -> list[Path]:
    import torch  # only the benchmark imports torch, to find its sources

    root = Path(torch.__file__).parent
    return [root / "nn", root / "optim", root / "utils" / "data"]


def pinned_requirements() -> list[str]:
    return [f"{name}=={metadata.version(name)}" for name in FLAKE8_DISTRIBUTIONS]


def bare_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def installed_versions(python: Path) -> list[str]:
    code = ("from importlib import metadata; "
            f"print(' '.join(f'{{n}}=={{metadata.version(n)}}' for n in {FLAKE8_DISTRIBUTIONS!r}))")
    out = subprocess.run([str(python), "-c", code], check=False, capture_output=True, text=True)
    return out.stdout.split() if out.returncode == 0 else []


def ensure_bare_venv(venv: Path) -> Path:
    """A venv with flake8 (same versions) and no flake8-detach; built once, then reused."""
    python = bare_python(venv)
    wanted = pinned_requirements()
    if python.exists() and installed_versions(python) == wanted:
        return python
    print(f"creating {venv} with {' '.join(wanted)} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *wanted],
                   check=True)
    if installed_versions(python) != wanted:
        raise SystemExit(f"{venv} does not hold {wanted}")
    return python


def plugin_listed(python: Path) -> bool:
    out = subprocess.run([str(python), "-m", "flake8", "--version"], check=False, capture_output=True, text=True)
    return "flake8-detach" in out.stdout


def flake8_command(python: Path, corpus: list[Path]) -> list[str]:
    # -j1: one process, the figure that does not depend on the core count;
    # --isolated: no config file of the working directory changes the run.
    return [str(python), "-m", "flake8", "-j1", "--isolated", *map(str, corpus)]


def time_flake8(command: list[str]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    out = subprocess.run(command, check=False, capture_output=True, text=True,
                         cwd=tempfile.gettempdir())
    elapsed = time.perf_counter() - start
    if out.returncode not in (0, 1):  # 1 just means flake8 found something
        raise SystemExit(f"{command[0]} flake8 failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return elapsed, out.stdout.splitlines()


def python_files(corpus: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in corpus:
        files.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return files


def direct_measure(corpus: list[Path]) -> None:
    """The engine's own cost next to ast.parse, in this process."""
    from flake8_detach.engine import AnalysisError, analyze

    sources: list[tuple[str, ast.AST]] = []
    for path in python_files(corpus):
        try:
            with tokenize.open(path) as handle:
                text = handle.read()
            sources.append((text, ast.parse(text)))
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
            continue  # flake8 reports E999/E902 and never calls plugins on these
    start = time.perf_counter()
    for text, _ in sources:
        ast.parse(text)
    ast_seconds = time.perf_counter() - start
    parsed = errors = 0
    start = time.perf_counter()
    for text, tree in sources:
        try:
            parsed += analyze(text, tree=tree).module is not None
        except AnalysisError:
            errors += 1
    engine_seconds = time.perf_counter() - start
    lines = sum(text.count("\n") for text, _ in sources)
    print(f"\nin process ({len(sources)} files, {lines} lines):")
    print(f"  ast.parse of every file:      {ast_seconds:7.2f}s")
    print(f"  engine analyze (tree given):  {engine_seconds:7.2f}s  = {engine_seconds / ast_seconds:.2f}x ast.parse; "
          f"{parsed} files passed the screen and were parsed with libcst, {errors} AnalysisError")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="*", type=Path, help="files or directories (default: torch nn/optim/utils/data)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each runs flake8 once with and once without")
    parser.add_argument("--bare-venv", type=Path, default=DEFAULT_BARE_VENV,
                        help=f"venv holding only flake8 (default {DEFAULT_BARE_VENV})")
    parser.add_argument("--skip-direct", action="store_true", help="skip the in-process engine measure")
    args = parser.parse_args(argv)
    corpus = [path.resolve() for path in args.corpus] or default_corpus()

    with_python = Path(sys.executable)
    without_python = ensure_bare_venv(args.bare_venv)
    if not plugin_listed(with_python):
        raise SystemExit(f"flake8-detach is not installed for {with_python}")
    if plugin_listed(without_python):
        raise SystemExit(f"flake8-detach is installed in {args.bare_venv}; it must hold flake8 only")

    files = python_files(corpus)
    print(f"corpus: {' '.join(map(str, corpus))} ({len(files)} .py files)")
    print(f"flake8: {' '.join(pinned_requirements())}; python {platform.python_version()}; "
          f"{os.cpu_count()} cores; rounds: {args.rounds}")
    commands = {"with": flake8_command(with_python, corpus), "without": flake8_command(without_python, corpus)}
    times: dict[str, list[float]] = {"with": [], "without": []}
    det_lines = 0
    for round_number in range(args.rounds):
        order = ("with", "without") if round_number % 2 == 0 else ("without", "with")
        for side in order:
            elapsed, output = time_flake8(commands[side])
            times[side].append(elapsed)
            if side == "with":
                det_lines = sum(": DET" in line for line in output)
        print(f"  round {round_number + 1}: with {times['with'][-1]:7.2f}s   without {times['without'][-1]:7.2f}s",
              flush=True)
    with_median = statistics.median(times["with"])
    without_median = statistics.median(times["without"])
    ratio = (with_median - without_median) / without_median
    print(f"median: with {with_median:.2f}s, without {without_median:.2f}s "
          f"(the plugin reported {det_lines} DET lines)")
    print(f"plugin adds (with - without) / without = {ratio:.3f} of flake8's own time (target <= 0.5)")
    if not args.skip_direct:
        direct_measure(corpus)
    return 0


if __name__ == "__main__":
    sys.exit(main())
