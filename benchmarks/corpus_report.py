"""Run every rule over a real source tree and print what a reviewer needs to judge precision.

Usage: python benchmarks/corpus_report.py PATH... [--sample N] [--seed S] [--json]
                                          [--codes DET101,DET104] [--context 2]

For each ``.py`` file under the given paths it decodes the bytes as Python
does (BOM and coding cookie, via ``tokenize.open``), runs
``flake8_detach.engine.analyze`` and collects the diagnostics. Files that
cannot be decoded or parsed (by ``ast`` or by the engine) are counted as
skipped, never fatal: the point of the script is to see the rules on code
nobody wrote for them. It prints counts per rule, file counts, time, and a
seeded random sample of diagnostics with their source line and context so
each one can be labelled true or false positive by hand.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
import time
import tokenize
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from flake8_detach.engine import AnalysisError, analyze


@dataclass
class Hit:
    path: str
    line: int
    column: int
    code: str
    message: str


@dataclass
class Report:
    files_scanned: int = 0  # .py files found
    files_analysed: int = 0  # files the screen let through to libcst
    files_skipped: int = 0  # unreadable, not valid Python, or AnalysisError
    skipped: list[str] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    seconds: float = 0.0

    def per_rule(self) -> Counter[str]:
        return Counter(hit.code for hit in self.hits)


def python_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_file():
            yield path
        else:
            yield from sorted(p for p in path.rglob("*.py") if p.is_file())


def read_source(path: Path) -> str:
    """Decode as the interpreter would: BOM and PEP 263 cookie honoured."""
    with tokenize.open(path) as handle:
        return handle.read()


def scan(paths: list[Path]) -> Report:
    report = Report()
    start = time.perf_counter()
    for path in python_files(paths):
        report.files_scanned += 1
        try:
            source = read_source(path)
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError) as error:
            report.files_skipped += 1
            report.skipped.append(f"{path}: {type(error).__name__}: {error}")
            continue
        try:
            analysis = analyze(source, tree=tree)
        except AnalysisError as error:
            report.files_skipped += 1
            report.skipped.append(f"{path}: AnalysisError: {error}")
            continue
        except Exception as error:  # noqa: BLE001 - an engine crash is a finding of this report
            report.files_skipped += 1
            report.internal_errors.append(f"{path}: {type(error).__name__}: {error}")
            continue
        if analysis.module is not None:
            report.files_analysed += 1
        for diagnostic in analysis.diagnostics:
            report.hits.append(Hit(str(path), diagnostic.line, diagnostic.column,
                                   diagnostic.code, diagnostic.message))
    report.seconds = time.perf_counter() - start
    return report


def context_lines(path: str, line: int, context: int) -> list[str]:
    try:
        lines = read_source(Path(path)).splitlines()
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    first = max(1, line - context)
    last = min(len(lines), line + context)
    return [f"{'>' if n == line else ' '}{n:6d} | {lines[n - 1]}" for n in range(first, last + 1)]


def sample(hits: list[Hit], size: int, seed: int, codes: set[str] | None) -> list[Hit]:
    pool = [hit for hit in hits if codes is None or hit.code in codes]
    chosen = random.Random(seed).sample(pool, min(size, len(pool)))
    return sorted(chosen, key=lambda hit: (hit.path, hit.line, hit.column, hit.code))


def print_text(report: Report, chosen: list[Hit], context: int) -> None:
    print(f"files scanned: {report.files_scanned}  analysed (passed the screen): "
          f"{report.files_analysed}  skipped: {report.files_skipped}  "
          f"internal errors: {len(report.internal_errors)}  time: {report.seconds:.2f}s")
    for line in report.skipped:
        print(f"  skipped {line}")
    for line in report.internal_errors:
        print(f"  INTERNAL ERROR {line}")
    counts = report.per_rule()
    print(f"diagnostics: {len(report.hits)}")
    for code in sorted(counts):
        print(f"  {code}: {counts[code]}")
    if not chosen:
        return
    print(f"\nsample of {len(chosen)} diagnostics:")
    for hit in chosen:
        print(f"\n{hit.path}:{hit.line}:{hit.column + 1}: {hit.message}")
        for line in context_lines(hit.path, hit.line, context):
            print(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--sample", type=int, default=20, help="diagnostics to show (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--codes", default="", help="only sample these codes (comma-separated)")
    parser.add_argument("--context", type=int, default=2, help="source lines around each sample")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    codes = {c.strip() for c in args.codes.split(",") if c.strip()} or None
    report = scan(args.paths)
    chosen = sample(report.hits, args.sample, args.seed, codes)
    if args.json:
        json.dump({
            "files_scanned": report.files_scanned,
            "files_analysed": report.files_analysed,
            "files_skipped": report.files_skipped,
            "skipped": report.skipped,
            "internal_errors": report.internal_errors,
            "seconds": round(report.seconds, 3),
            "per_rule": dict(sorted(report.per_rule().items())),
            "diagnostics": [asdict(hit) for hit in report.hits],
            "sample": [dict(asdict(hit), context=context_lines(hit.path, hit.line, args.context))
                       for hit in chosen],
        }, sys.stdout, indent=1)
        print()
    else:
        print_text(report, chosen, args.context)
    return 1 if report.internal_errors else 0


if __name__ == "__main__":
    sys.exit(main())
