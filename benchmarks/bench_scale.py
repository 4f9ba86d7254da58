"""Checking time grows linearly with file size: 1x, 10x, 100x the same content.

Usage: python benchmarks/bench_scale.py [--multiples 1,10,100] [--rounds 5] [--largest CORPUS]

The content is every fixture that this Python can compile, concatenated (about 900 lines of
torch code with hazards, traps, helpers, classes and grad contexts); the 10x and 100x files
repeat it. For each size the script times what the flake8 plugin pays per file, ``analyze``
given flake8's ``ast`` tree (libcst parse, import table, interpreter, rules, positions), and
separately the fixer's ``fix_source``. It prints the best of ``--rounds`` runs (the minimum
is the least noisy estimate on a shared machine), the time per line, and the ratio of each
size's time per line to the 1x time per line: linear growth keeps the ratios near 1.

With ``--largest CORPUS`` it also reports peak memory on the corpus's largest ``.py`` file (timm's
is ``timm/models/vision_transformer.py``): each measurement runs in a fresh process, which reads
the file, notes its resident size, then either ``ast.parse``s it (what flake8 pays anyway) or runs
the plugin's ``analyze`` on that tree; the peak resident size minus the size before is what the
work added, printed side by side with tracemalloc's peak of Python allocations. On Linux the peak
(``VmHWM``) is reset first through ``/proc/self/clear_refs``: otherwise the imports' own peak hides
the work's (``ru_maxrss`` then read +0.0 MiB); elsewhere ``ru_maxrss`` is the fallback.
"""

from __future__ import annotations

import argparse
import ast
import functools
import gc
import json
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from flake8_detach.engine import analyze
from flake8_detach.fixing.fixer import fix_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def base_content() -> str:
    """The fixtures this interpreter can compile (3.12 syntax is left out on 3.11), joined."""
    pieces = []
    for path in sorted(FIXTURES.glob("*/*.py")):
        text = path.read_text(encoding="utf-8")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(text)
        except SyntaxError:
            continue
        pieces.append(text if text.endswith("\n") else text + "\n")
    return "".join(pieces)


def best_time(action: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        gc.collect()
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


# Run in a fresh process: the peak is a high-water mark, so each measurement needs its own.
MEMORY_PROBE = """
import ast, json, re, resource, sys, tracemalloc
from flake8_detach.engine import analyze

def resident_kib(key):
    with open("/proc/self/status") as status:
        return int(re.search(key + r":\\s+(\\d+)", status.read()).group(1))

source = open(sys.argv[1], encoding="utf-8").read()
try:  # Linux: reset the high-water mark, so that the imports' own peak does not hide the work's
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    before, peak = resident_kib("VmRSS"), lambda: resident_kib("VmHWM")
except OSError:
    before, peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, (
        lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
tracemalloc.start()
tree = ast.parse(source)
if sys.argv[2] == "analyze":
    diagnostics = len(analyze(source, tree=tree).diagnostics)
else:
    diagnostics = 0
peak_python = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps({"rss_kib": peak() - before, "python_peak": peak_python, "diagnostics": diagnostics}))
"""


def largest_file(corpus: Path) -> Path:
    return max(corpus.rglob("*.py"), key=lambda path: path.stat().st_size)


def peak_memory(path: Path, work: str) -> dict[str, int]:
    out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(path), work], check=True,
                         capture_output=True, text=True)
    result: dict[str, int] = json.loads(out.stdout)
    return result


def report_peak_memory(corpus: Path) -> None:
    path = largest_file(corpus)
    size = path.stat().st_size
    lines = path.read_text(encoding="utf-8").count("\n")
    print(f"\npeak memory on the largest file of {corpus}: {path.relative_to(corpus)} "
          f"({lines} lines, {size / 2**20:.2f} MiB)")
    parsed = peak_memory(path, "parse")
    analysed = peak_memory(path, "analyze")
    for label, measured in (("ast.parse (flake8's own)", parsed), ("ast.parse + analyze", analysed)):
        print(f"  {label:<26} resident +{measured['rss_kib'] / 1024:7.1f} MiB   "
              f"python peak {measured['python_peak'] / 2**20:7.1f} MiB "
              f"({measured['python_peak'] / size:5.0f} bytes per byte of source)")
    print(f"  analyze / ast.parse, resident growth: {analysed['rss_kib'] / max(parsed['rss_kib'], 1):.1f}x "
          f"({analysed['diagnostics']} diagnostics)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--multiples", default="1,10,100", help="sizes as multiples of the base (default 1,10,100)")
    parser.add_argument("--rounds", type=int, default=5, help="runs per size for the 1x file (default 5)")
    parser.add_argument("--large-rounds", type=int, default=2, help="runs per size for larger files (default 2)")
    parser.add_argument("--skip-fix", action="store_true", help="time only the check")
    parser.add_argument("--largest", type=Path, help="also report peak memory on this corpus's largest file")
    parser.add_argument("--skip-timing", action="store_true", help="only the peak memory (with --largest)")
    args = parser.parse_args()
    if args.skip_timing:
        if args.largest is None:
            parser.error("--skip-timing needs --largest")
        report_peak_memory(args.largest)
        return 0
    multiples = [int(item) for item in args.multiples.split(",")]
    base = base_content()
    base_lines = base.count("\n")
    print(f"Python {sys.version.split()[0]}; base content: {base_lines} lines")
    header = f"{'size':>6} {'lines':>8} {'check s':>9} {'us/line':>8} {'ratio':>6}"
    if not args.skip_fix:
        header += f" {'fix s':>9} {'us/line':>8} {'ratio':>6}"
    print(header)
    first_check = first_fix = None
    for multiple in multiples:
        source = base * multiple
        lines = source.count("\n")
        tree = ast.parse(source)
        rounds = args.large_rounds if multiple > 1 else args.rounds
        diagnostics = len(analyze(source, tree=tree).diagnostics)
        check = best_time(functools.partial(analyze, source, tree=tree), rounds) / lines * 1e6
        first_check = first_check or check
        row = f"{multiple:>5}x {lines:>8} {check * lines / 1e6:>9.2f} {check:>8.1f} {check / first_check:>6.2f}"
        if not args.skip_fix:
            fix = best_time(functools.partial(fix_source, source), rounds) / lines * 1e6
            first_fix = first_fix or fix
            row += f" {fix * lines / 1e6:>9.2f} {fix:>8.1f} {fix / first_fix:>6.2f}"
        print(row + f"   ({diagnostics} diagnostics, best of {rounds})", flush=True)
    print("ratio = time per line / time per line at the first size; linear growth keeps it near 1")
    print("(on Python 3.11 with libcst 1.9, libcst's native parser costs more per line up to about 10,000")
    print(" lines, then stays flat; the engine's own phases are flat from the start)")
    if args.largest is not None:
        report_peak_memory(args.largest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
