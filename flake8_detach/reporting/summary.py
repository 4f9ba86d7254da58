"""The closing lines of `check`'s text output, worded as ruff words them.

`All checks passed!` when nothing was found; else `Found N errors.` and what `--fix` (and
`--fix --unsafe-fixes`) would do about them. After `check --fix`, `Found N errors (F fixed, R
remaining).` A file that could not be checked, and a notebook cell left out because it does not
parse, count as errors, as ruff counts a syntax error: a run with one never reads as passed.
"""

from __future__ import annotations

from .model import FileReport, Report


def fixable(safe: bool | None, unsafe: bool) -> bool:
    """Whether a fix of this safety (None: no fix) is applied by `--fix`: ruff's `[*]` mark."""
    return safe is not None and (safe or unsafe)


def fix_counts(files: list[FileReport], unsafe: bool) -> tuple[int, int]:
    """(diagnostics `--fix` would fix, those only `--fix --unsafe-fixes` would)."""
    applied = hidden = 0
    for file in files:
        for fix in file.fixes or ():
            if fix is None:
                continue
            if fixable(fix.safe, unsafe):
                applied += 1
            else:
                hidden += 1
    return applied, hidden


def summary(report: Report, *, unsafe: bool = False, fixed: int | None = None) -> str:
    """The closing lines; ``fixed``: how many diagnostics `check --fix` fixed (None: no --fix)."""
    # A file that could not be checked, or a notebook cell left out, is no pass: each counts.
    remaining = report.diagnostic_count + report.error_count
    found = remaining + (fixed or 0)
    applicable, hidden = fix_counts(report.files, unsafe)
    if found == 0:
        return "All checks passed!\n"
    if fixed is not None:
        lines = [f"Found {_errors(found)} ({fixed} fixed, {remaining} remaining)."]
    else:
        lines = [f"Found {_errors(found)}."]
    hidden_text = f"{hidden} unsafe {'fix' if hidden == 1 else 'fixes'} available with `--fix --unsafe-fixes`"
    if applicable:
        extra = f" ({hidden_text})" if hidden else ""
        lines.append(f"[*] {applicable} fixable with `--fix`{extra}.")
    elif hidden:
        lines.append(f"{hidden_text}.")
    return "".join(f"{line}\n" for line in lines)


def _errors(count: int) -> str:
    return f"{count} {'error' if count == 1 else 'errors'}"
