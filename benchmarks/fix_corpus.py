"""Real-code fix check: run `flake8-detach fix` over copies of real source trees and audit the result.

Usage: python benchmarks/fix_corpus.py CORPUS [CORPUS ...] [--keep DIR] [--sample N] [--seed S]
                                       [--json FILE]

Each CORPUS (a folder of Python code) is copied (``.git`` and ``__pycache__`` left out, symlinks
kept as links) into a temporary folder, or into ``DIR/<corpus name>`` with ``--keep DIR``, where
it stays for inspection. The original is never written: a symlink in the copy that points outside
the copy is replaced by a copy of what it points to, since the fixer writes through links.

On the copy, as a user would, the script runs in subprocesses ``python -m flake8_detach fix COPY``
(the safe fixes), then ``fix --unsafe-fixes COPY``, then ``fix --unsafe-fixes COPY`` once more.
Around them it runs ``flake8 --isolated --select DET`` (before the first and after the second fix
run) and snapshots the bytes of every ``.py`` and ``.ipynb`` file. It reports, per corpus:

- DET diagnostics before / after, per code, as flake8 reports them (``.py`` files only: flake8 does
  not read notebooks; its default excludes differ slightly from the CLI's, which does not matter
  for a difference since files the fix skips count the same before and after).
- files changed: ``.py``/``.ipynb`` files whose bytes differ after the two fix runs.
- fixes applied: diagnostics before minus diagnostics after, per code (a negative count means the
  fixes made more diagnostics of that code than they removed). These are diagnostics removed, not
  fix operations: one fix can clear two diagnostics at one place (``w.data.numpy()``: DET101 and
  DET103), and notebooks are not counted; the CLI's own summaries are shown for comparison.

And these figures, each of which must be 0 (exit status 1 otherwise):

- no longer compile: changed ``.py`` files (and notebooks, their code cells as one module with
  IPython syntax masked) that compiled before the fix and do not after. A fix must never break a
  file; the fixer re-parses with libcst, which is more lenient than CPython's compiler.
- second run changed: files that a third run (``fix --unsafe-fixes`` again) still changes. The fix
  must reach a fixed point in one run, or editors and pre-commit hooks would keep rewriting.
- fixable diagnostics left: after the fix, ``flake8_detach.engine.analyze`` (in process, with each
  file's configuration, on the files the CLI discovers, ``# noqa`` honoured as the fixer does)
  still reports a diagnostic that carries a fix. With ``--unsafe-fixes`` every fix, safe or not,
  should have been applied. Files the fixer refuses (it reports an error, e.g. libcst cannot
  print them back byte for byte, or a notebook's JSON is not laid out as Jupyter writes it) are
  listed apart, as "refused", and do not count.
- chains a person would not write: the fixed text gained an occurrence (per file and pattern, the
  count in the final text exceeds the count in the original) of ``.detach().detach()``,
  ``.cpu().cpu()``, ``.detach().clone().detach()``, ``.data.detach()``, ``.detach().data``,
  ``.cuda().cuda()`` (whitespace and newlines allowed between the calls of the first two) or two
  ``.detach()`` calls in one chain with other calls between (``.detach().cpu().detach()``; the
  calls' arguments must hold no parentheses); the matches on added diff lines are listed. A
  pattern that was already in the original the same number of times is the author's, not the
  fix's. Also two no_grad heuristics on the final text's ``ast``, where "grad-off" means
  ``X.no_grad()``, ``X.inference_mode()`` or ``X.set_grad_enabled(False)``:
  *adjacent no_grad blocks*: two sibling grad-off ``with`` blocks with the same context
  expression, the first holding exactly one statement, separated only by comment lines (a blank
  line separates what the author grouped apart, as the fixer's merging rule says), where either
  ``with`` line was added by the fix; and *nested no_grad*: an added grad-off ``with`` line that
  is already under a grad-off ``with`` or inside a function with a grad-off decorator
  (``@torch.no_grad()``, ``@torch.no_grad``, ...); a nested ``def`` or ``lambda`` starts afresh
  (it runs in its caller's mode), an ``enable_grad()``/``set_grad_enabled(...)`` block ends the
  region. Names are matched by their last part only (``torch.no_grad``, ``no_grad``,
  ``torch.autograd.no_grad``); an alias such as ``from torch import no_grad as ng`` is not
  recognised, and an ``if``/``for`` between two blocks makes them non-siblings.
- files added or removed: any file (of any kind) that appeared or vanished in the copy during the
  fix runs, e.g. a temporary file left by an interrupted atomic write.
- fix runs that crashed: a fix or flake8 subprocess that exited with an unexpected status or
  printed a traceback (``fix`` exits 0 or 1 normally, 2 when some file could not be read or
  parsed; those file errors are listed but do not count).

``--sample N --seed S`` prints N randomly chosen hunks of the fix's unified diffs (2 lines of
context) for review by hand; ``--json FILE`` writes every figure, list and sampled hunk to FILE.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from flake8_detach.config import ConfigResolver, discover_config
from flake8_detach.engine import AnalysisError, analyze
from flake8_detach.fixing.fixer import fix_source
from flake8_detach.sources.files import SourceError, decode_source, discover
from flake8_detach.sources.notebooks import NotebookError, NotebookSkipped, notebook_from_bytes
from flake8_detach.suppression import unsuppressed

SOURCE_SUFFIXES = (".py", ".ipynb")
COPY_IGNORE = shutil.ignore_patterns(".git", "__pycache__")
FLAKE8_FORMAT = "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s"
DIFF_CONTEXT = 2

# Chains no person writes: the fix must not produce (more of) them.
CHAIN_PATTERNS: dict[str, re.Pattern[str]] = {
    ".detach().detach()": re.compile(r"\.detach\(\)\s*\.detach\(\)"),
    ".cpu().cpu()": re.compile(r"\.cpu\(\)\s*\.cpu\(\)"),
    ".detach().clone().detach()": re.compile(r"\.detach\(\)\.clone\(\)\.detach\(\)"),
    # Two detaches in one chain with calls between (`.detach().cpu().detach()`); the case above
    # is left to its own pattern so that no occurrence counts twice.
    ".detach()...detach()": re.compile(
        r"\.detach\(\)(?!\.clone\(\)\.detach\(\))(?:\s*\.\w+\([^()]*\))+?\s*\.detach\(\)"),
    ".data.detach()": re.compile(r"\.data\.detach\(\)"),
    ".detach().data": re.compile(r"\.detach\(\)\.data\b"),
    ".cuda().cuda()": re.compile(r"\.cuda\(\)\.cuda\(\)"),
}
GRAD_OFF = frozenset({"no_grad", "inference_mode"})
GRAD_ON = frozenset({"enable_grad", "set_grad_enabled"})


@dataclass
class CliRun:
    """One subprocess run: its command (abbreviated), exit status, output and time."""

    label: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def summary(self) -> str:
        """The last non-empty line it printed (informational only: figures are computed here)."""
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def crashed(self, expected: Sequence[int]) -> bool:
        return self.returncode not in expected or "Traceback (most recent call last)" in self.stderr


@dataclass
class CorpusReport:
    corpus: str
    copy: str
    py_files: int = 0
    notebooks: int = 0
    notes: list[str] = field(default_factory=list)
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    applied: dict[str, int] = field(default_factory=dict)
    files_changed: list[str] = field(default_factory=list)
    no_longer_compile: list[str] = field(default_factory=list)
    second_run_changed: list[str] = field(default_factory=list)
    fixable_left: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    not_analysable: list[str] = field(default_factory=list)
    chains: list[str] = field(default_factory=list)
    chain_count: int = 0
    files_added_or_removed: list[str] = field(default_factory=list)
    crashed_runs: list[str] = field(default_factory=list)
    fix_errors: list[str] = field(default_factory=list)
    cli_summaries: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    hunks: list[str] = field(default_factory=list)

    def must_be_zero(self) -> dict[str, int]:
        return {
            "no longer compile": len(self.no_longer_compile),
            "second run changed": len(self.second_run_changed),
            "fixable diagnostics left": len(self.fixable_left),
            "chains a person would not write": self.chain_count,
            "files added or removed": len(self.files_added_or_removed),
            "fix runs that crashed": len(self.crashed_runs),
        }

    def failed(self) -> bool:
        return any(self.must_be_zero().values())


# --- copying -------------------------------------------------------------------------------------


def copy_corpus(corpus: Path, destination: Path) -> list[str]:
    """Copy ``corpus`` to ``destination``; return notes on links replaced so no write escapes."""
    shutil.copytree(corpus, destination, symlinks=True, ignore=COPY_IGNORE)
    notes: list[str] = []
    replaced = True
    while replaced:  # a copied-in folder may hold escaping links of its own
        replaced = False
        for link in escaping_links(destination):
            target = link.resolve()
            link.unlink()
            if target.is_dir():
                shutil.copytree(target, link, symlinks=True, ignore=COPY_IGNORE)
            else:
                shutil.copy2(target, link)
            notes.append(f"{link.relative_to(destination)}: a link to {target} outside the copy, "
                         "replaced by a copy of it")
            replaced = True
    return notes


def escaping_links(root: Path) -> Iterator[Path]:
    """Symlinks under ``root`` whose existing target lies outside ``root``."""
    top = root.resolve()
    for folder, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            path = Path(folder) / name
            if path.is_symlink() and path.exists():
                target = path.resolve()
                if target != top and top not in target.parents:
                    yield path


# --- snapshots -----------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, bytes]:
    """The bytes of every regular ``.py``/``.ipynb`` file, by path relative to ``root``."""
    files: dict[str, bytes] = {}
    for folder, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(folder) / name
            if name.endswith(SOURCE_SUFFIXES) and not path.is_symlink() and path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def all_paths(root: Path) -> set[str]:
    """Every file and link under ``root``, relative."""
    return {(Path(folder) / name).relative_to(root).as_posix()
            for folder, _, filenames in os.walk(root) for name in filenames}


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))


# --- subprocesses --------------------------------------------------------------------------------


def run_command(label: str, command: list[str], cwd: Path) -> CliRun:
    start = time.perf_counter()
    process = subprocess.run(command, cwd=cwd, capture_output=True, text=True, errors="replace",
                             check=False)
    return CliRun(label, process.returncode, process.stdout, process.stderr,
                  time.perf_counter() - start)


def fix_options() -> list[str]:
    """Options the installed `fix` takes that this check wants (only those it has)."""
    help_text = subprocess.run([sys.executable, "-m", "flake8_detach", "fix", "--help"],
                               capture_output=True, text=True, check=False).stdout
    return [option for option in ("--no-cache",) if option in help_text]


def run_fix(copy: Path, label: str, *, unsafe: bool, options: list[str]) -> CliRun:
    command = [sys.executable, "-m", "flake8_detach", "fix", *options]
    if unsafe:
        command.append("--unsafe-fixes")
    return run_command(label, [*command, str(copy)], copy)


def run_flake8(copy: Path, label: str) -> tuple[CliRun, Counter[str]]:
    """flake8's DET diagnostics over the copy, counted by code."""
    run = run_command(label, [sys.executable, "-m", "flake8", "--isolated", "--select", "DET",
                              "-j", "2", "--format", FLAKE8_FORMAT, str(copy)], copy)
    counts: Counter[str] = Counter()
    for line in run.stdout.splitlines():
        parts = line.split("|", 4)
        if len(parts) == 5 and parts[3].startswith("DET"):
            counts[parts[3]] += 1
    return run, counts


def fix_error_lines(run: CliRun) -> list[str]:
    return [f"[{run.label}] {line}" for line in run.stderr.splitlines() if ": error:" in line]


# --- reading source ------------------------------------------------------------------------------


def source_text(path: str, data: bytes) -> str | None:
    """A ``.py`` file's text as the CLI reads it, or a notebook's code cells as one module; None
    when unreadable."""
    try:
        if path.endswith(".ipynb"):
            return notebook_from_bytes(data, path).source
        return decode_source(data, path)
    except (NotebookError, SourceError, ValueError):
        return None


def is_skipped_notebook(path: Path) -> bool:
    """A well-formed notebook of another kernel (R, Julia...): the fixer leaves it alone."""
    if path.suffix != ".ipynb":
        return False
    try:
        notebook_from_bytes(path.read_bytes(), str(path))
    except NotebookSkipped:
        return True
    except NotebookError:
        return False
    return False


def compiles(text: str, path: str) -> bool:
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if path.endswith(".ipynb") else 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def parse_tree(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# --- diffs ---------------------------------------------------------------------------------------


def added_lines(original: str, final: str) -> set[int]:
    """1-based numbers of the final text's lines that the diff marks as added."""
    matcher = difflib.SequenceMatcher(None, original.splitlines(), final.splitlines())
    added: set[int] = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            added.update(range(j1 + 1, j2 + 1))
    return added


def diff_hunks(path: str, original: str, final: str) -> list[str]:
    """The unified diff's hunks, each with the file's name and its ``@@`` header."""
    lines = list(difflib.unified_diff(original.splitlines(), final.splitlines(), f"a/{path}",
                                      f"b/{path}", n=DIFF_CONTEXT, lineterm=""))
    hunks: list[list[str]] = []
    for line in lines[2:]:
        if line.startswith("@@"):
            hunks.append([])
        if hunks:
            hunks[-1].append(line)
    return [f"{path}\n" + "\n".join(hunk) for hunk in hunks]


def line_starts(text: str) -> list[int]:
    starts, offset = [0], 0
    for line in text.splitlines(keepends=True):
        offset += len(line)
        starts.append(offset)
    return starts


def chain_findings(path: str, original: str, final: str, added: set[int]) -> tuple[int, list[str]]:
    """How many chains the fix added (per pattern, the final count minus the original's), and
    the matches on added lines of the patterns whose count grew."""
    starts = line_starts(final)
    lines = final.splitlines()
    count, listed = 0, []
    for name, pattern in CHAIN_PATTERNS.items():
        gained = len(pattern.findall(final)) - len(pattern.findall(original))
        if gained <= 0:
            continue
        count += gained
        for match in pattern.finditer(final):
            line = bisect.bisect_right(starts, match.start())
            if line in added:
                listed.append(f"{path}:{line}: {name}: {lines[line - 1].strip()}")
    return count, listed


def _callee_name(expression: ast.expr) -> str | None:
    if isinstance(expression, ast.Call):
        expression = expression.func
    if isinstance(expression, ast.Name):
        return expression.id
    if isinstance(expression, ast.Attribute):
        return expression.attr
    return None


def _turns_grad_off(expression: ast.expr) -> bool:
    """``X.no_grad()``, ``X.inference_mode()`` or ``X.set_grad_enabled(False)`` (as a context
    manager or decorator; a bare ``@X.no_grad`` decorator too)."""
    name = _callee_name(expression)
    if not isinstance(expression, ast.Call):
        return name in GRAD_OFF
    if name in GRAD_OFF:
        return not expression.args and not expression.keywords
    if name == "set_grad_enabled" and len(expression.args) == 1 and not expression.keywords:
        argument = expression.args[0]
        return isinstance(argument, ast.Constant) and argument.value is False
    return False


def _grad_off_context(node: ast.With | ast.AsyncWith) -> str | None:
    """The dumped context expression when the ``with`` turns grad off."""
    for item in node.items:
        if isinstance(item.context_expr, ast.Call) and _turns_grad_off(item.context_expr):
            return ast.dump(item.context_expr)
    return None


def _turns_grad_on(node: ast.With | ast.AsyncWith) -> bool:
    """``enable_grad()``, or ``set_grad_enabled(...)`` with anything but a literal False."""
    return any(_callee_name(item.context_expr) in GRAD_ON for item in node.items)


def nested_no_grad(tree: ast.AST, added: set[int]) -> list[int]:
    """Lines of added grad-off ``with`` statements that are already under a grad-off context."""
    found: list[int] = []
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, under = stack.pop()
        for child in ast.iter_child_nodes(node):
            child_under = under
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                child_under = any(_turns_grad_off(d) for d in child.decorator_list)
            elif isinstance(child, ast.Lambda):
                child_under = False
            elif isinstance(child, (ast.With, ast.AsyncWith)):
                if _grad_off_context(child) is not None:
                    if under and child.lineno in added:
                        found.append(child.lineno)
                    child_under = True
                elif _turns_grad_on(child):
                    child_under = False
            stack.append((child, child_under))
    return sorted(found)


def adjacent_no_grad(tree: ast.AST, lines: Sequence[str], added: set[int]) -> list[int]:
    """Lines of grad-off ``with`` blocks of one statement followed, across comment lines only,
    by a sibling ``with`` of the same context, when either ``with`` line was added."""
    found: list[int] = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if not isinstance(statements, list):
                continue
            for first, second in zip(statements, statements[1:]):
                if not (isinstance(first, (ast.With, ast.AsyncWith))
                        and isinstance(second, type(first)) and len(first.body) == 1):
                    continue
                context = _grad_off_context(first)
                if context is None or context != _grad_off_context(second):
                    continue
                end = first.end_lineno or first.lineno
                between = lines[end:second.lineno - 1]
                if all(line.strip().startswith("#") for line in between) \
                        and (first.lineno in added or second.lineno in added):
                    found.append(first.lineno)
    return sorted(found)


def no_grad_findings(path: str, final: str, added: set[int]) -> list[str]:
    tree = parse_tree(final)
    if tree is None:
        return []
    lines = final.splitlines()
    try:
        nested = nested_no_grad(tree, added)
        adjacent = adjacent_no_grad(tree, lines, added)
    except RecursionError:
        return []
    return [f"{path}:{line}: nested no_grad: {lines[line - 1].strip()}" for line in nested] + [
        f"{path}:{line}: adjacent no_grad blocks: {lines[line - 1].strip()}" for line in adjacent]


# --- the in-process audit ------------------------------------------------------------------------


def audit_fixable_left(copy: Path, report: CorpusReport) -> None:
    """Diagnostics with a fix that remain on the files the CLI discovers (noqa honoured)."""
    cli_errors = {}  # path -> the error the CLI printed for it
    for line in report.fix_errors:
        where, _, error = line.partition("] ")[2].partition(": error: ")
        if error:
            cli_errors[where] = error
    resolver = ConfigResolver()
    config = discover_config(copy)
    for path in discover([copy], config.extend_exclude, config.root):
        relative = path.relative_to(copy).as_posix()
        if path.is_symlink() or not path.is_file() or is_skipped_notebook(path):
            continue
        text = source_text(relative, path.read_bytes())
        if text is None:
            report.not_analysable.append(f"{relative}: cannot be decoded or read")
            continue
        settings = resolver.for_path(path).settings_for(path)
        try:
            diagnostics = unsuppressed(text, analyze(text, settings).diagnostics)
        except (AnalysisError, RecursionError) as error:
            report.not_analysable.append(f"{relative}: {error}")
            continue
        left = [d for d in diagnostics if d.fix is not None]
        if not left:
            continue
        # Refused by the fixer itself, or by the front that writes the file (a notebook whose JSON
        # is not laid out as Jupyter writes it is not rewritten): either way the CLI said why.
        error_text = fix_source(text, settings, unsafe=True).error or cli_errors.get(str(path))
        target = report.refused if error_text is not None else report.fixable_left
        for diagnostic in left:
            safety = "safe" if diagnostic.fix is not None and diagnostic.fix.safe else "unsafe"
            reason = f" (fix refused: {error_text})" if error_text is not None else ""
            target.append(f"{relative}:{diagnostic.line}:{diagnostic.column + 1}: "
                          f"{diagnostic.message} [{safety} fix]{reason}")


def audit_changes(original: dict[str, bytes], final: dict[str, bytes], report: CorpusReport) -> None:
    """Compile check, chain and no_grad heuristics and diff hunks over the changed files."""
    for path in report.files_changed:
        if path not in original or path not in final:
            continue
        old, new = source_text(path, original[path]), source_text(path, final[path])
        if old is None or new is None:
            report.not_analysable.append(f"{path}: cannot be decoded or read after the fix")
            continue
        if compiles(old, path) and not compiles(new, path):
            report.no_longer_compile.append(f"{path}: {compile_error(new, path)}")
        added = added_lines(old, new)
        count, listed = chain_findings(path, old, new, added)
        no_grad = no_grad_findings(path, new, added)
        report.chain_count += count + len(no_grad)
        report.chains.extend(listed + no_grad)
        report.hunks.extend(diff_hunks(path, old, new))


def compile_error(text: str, path: str) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return f"{type(error).__name__}: {error}"
    return "compiles without the notebook flags"


# --- one corpus ----------------------------------------------------------------------------------


def check_corpus(corpus: Path, copy: Path, options: list[str]) -> CorpusReport:
    report = CorpusReport(str(corpus), str(copy))
    start = time.perf_counter()
    report.notes = copy_corpus(corpus, copy)
    report.seconds["copy"] = time.perf_counter() - start
    original = snapshot(copy)
    report.py_files = sum(path.endswith(".py") for path in original)
    report.notebooks = sum(path.endswith(".ipynb") for path in original)
    paths_before = all_paths(copy)

    flake8_before, before = run_flake8(copy, "flake8 before")
    safe = run_fix(copy, "fix", unsafe=False, options=options)
    unsafe = run_fix(copy, "fix --unsafe-fixes", unsafe=True, options=options)
    flake8_after, after = run_flake8(copy, "flake8 after")
    final = snapshot(copy)
    paths_after = all_paths(copy)
    rerun = run_fix(copy, "fix --unsafe-fixes (second run)", unsafe=True, options=options)
    again = snapshot(copy)

    runs = [(flake8_before, (0, 1)), (safe, (0, 1, 2)), (unsafe, (0, 1, 2)),
            (flake8_after, (0, 1)), (rerun, (0, 1, 2))]
    for run, expected in runs:
        report.seconds[run.label] = run.seconds
        if run.crashed(expected):
            tail = (run.stderr.strip().splitlines() or ["(no stderr)"])[-1]
            report.crashed_runs.append(f"{run.label}: exit {run.returncode}: {tail}")
    for run in (safe, unsafe, rerun):
        report.cli_summaries[run.label] = run.summary
        report.fix_errors.extend(fix_error_lines(run))

    report.before, report.after = dict(sorted(before.items())), dict(sorted(after.items()))
    deltas = {code: before[code] - after[code] for code in sorted(before.keys() | after.keys())}
    report.applied = {code: delta for code, delta in deltas.items() if delta}
    report.files_changed = changed(original, final)
    report.second_run_changed = changed(final, again)
    report.files_added_or_removed = sorted(
        [f"added: {path}" for path in paths_after - paths_before]
        + [f"removed: {path}" for path in paths_before - paths_after])

    start = time.perf_counter()
    audit_changes(original, final, report)
    audit_fixable_left(copy, report)
    report.seconds["audit"] = time.perf_counter() - start
    return report


# --- output --------------------------------------------------------------------------------------


def counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{code} {count}" for code, count in counts.items()) or "none"


def print_report(report: CorpusReport) -> None:
    print(f"corpus: {report.corpus} ({report.py_files} .py files, {report.notebooks} notebooks)")
    print(f"  copy: {report.copy}")
    for note in report.notes:
        print(f"  note: {note}")
    print(f"  DET diagnostics before: {counts_text(report.before)}   "
          f"after: {counts_text(report.after)}")
    print(f"  {'files changed':<32} {len(report.files_changed)}")
    applied_total = sum(report.applied.values())
    print(f"  {'fixes applied':<32} {applied_total} ({counts_text(report.applied)})")
    for name, value in report.must_be_zero().items():
        print(f"  {name:<32} {value:<4} (must be 0)")
    print(f"  {'fixable left in refused files':<32} {len(report.refused)}")
    print(f"  {'files not analysable':<32} {len(report.not_analysable)}")
    print(f"  {'file errors the fix reported':<32} {len(report.fix_errors)}")
    for label, summary in report.cli_summaries.items():
        print(f"  cli [{label}]: {summary}")
    timing = ", ".join(f"{label} {seconds:.1f}s" for label, seconds in report.seconds.items())
    print(f"  time: {timing}")
    lists = [
        ("no longer compile", report.no_longer_compile),
        ("second run changed", report.second_run_changed),
        ("fixable diagnostics left", report.fixable_left),
        ("chains a person would not write", report.chains),
        ("files added or removed", report.files_added_or_removed),
        ("fix runs that crashed", report.crashed_runs),
        ("fixable left in refused files", report.refused),
        ("files not analysable", report.not_analysable),
        ("file errors the fix reported", report.fix_errors),
    ]
    for title, items in lists:
        if items:
            print(f"\n  {title}:")
            for item in items:
                print(f"    {item}")
    if report.chain_count and not report.chains:
        print("\n  chains: the counts grew, but no match lies on an added line (see the diff)")
    print()


def corpus_document(report: CorpusReport) -> dict[str, Any]:
    """The report for --json: every figure and list; the hunks only counted (see the sample)."""
    document = asdict(report)
    del document["hunks"]
    document["hunk_count"] = len(report.hunks)
    document["fixes_applied"] = sum(report.applied.values())
    document["must_be_zero"] = report.must_be_zero()
    return document


def print_sample(sample: list[str]) -> None:
    for number, hunk in enumerate(sample, 1):
        print(f"--- sample {number}/{len(sample)}: {hunk}\n")


# --- main ----------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("corpora", nargs="+", type=Path, metavar="CORPUS",
                        help="folders of Python code (never modified: a copy is fixed)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="fix the copies in DIR/<corpus name> and leave them there")
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="print N random diff hunks of the applied fixes for review")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the sample")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write everything to FILE")
    return parser.parse_args(argv)


def copy_destinations(corpora: Sequence[Path], keep: Path | None, scratch: Path) -> list[Path]:
    """Where each corpus is copied: ``DIR/<name>`` (``<name>-2``... when names repeat)."""
    base = keep if keep is not None else scratch
    taken: set[str] = set()
    destinations = []
    for corpus in corpora:
        name = corpus.resolve().name or "corpus"
        candidate, suffix = name, 1
        while candidate in taken:
            suffix += 1
            candidate = f"{name}-{suffix}"
        taken.add(candidate)
        destinations.append(base / candidate)
    return destinations


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    for corpus in args.corpora:
        if not corpus.is_dir():
            print(f"fix_corpus: error: {corpus} is not a folder", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="fix-corpus-") as scratch:
        destinations = copy_destinations(args.corpora, args.keep, Path(scratch))
        existing = [str(path) for path in destinations if path.exists()]
        if existing:
            print(f"fix_corpus: error: already exists: {', '.join(existing)}", file=sys.stderr)
            return 2
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
        options = fix_options()
        reports = []
        for corpus, destination in zip(args.corpora, destinations):
            report = check_corpus(corpus, destination, options)
            print_report(report)
            reports.append(report)
    hunks = [hunk for report in reports for hunk in report.hunks]
    sample = random.Random(args.seed).sample(hunks, min(args.sample, len(hunks)))
    print_sample(sample)
    failed = any(report.failed() for report in reports)
    if args.json is not None:
        document: dict[str, Any] = {
            "corpora": [corpus_document(report) for report in reports],
            "sample": sample,
            "seed": args.seed,
            "failed": failed,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
