"""Render a verify run: the full table for a terminal, JSON for CI, a compact Markdown table for docs/proof.md."""

from __future__ import annotations

import json
import re
import textwrap
from collections import defaultdict
from collections.abc import Sequence

from .checks import FAILED, LINT, PASSED, SKIPPED, Row
from .harness import VerifyReport

MARK = {PASSED: "pass", FAILED: "FAIL", SKIPPED: "skip"}
DEFAULT_WIDTH = 100  # the table's width where no terminal says (a file, a pipe, CI)
MAX_FIXTURE_WIDTH = 44  # longer fixture paths wrap
MIN_TEXT_WIDTH = 12  # the narrowest a claimed/observed/fixed column gets, however small the terminal
SEPARATOR = 2


def render_text(report: VerifyReport, *, show_skipped: bool = True, width: int = DEFAULT_WIDTH) -> str:
    """The table (fixture x device: status, claimed, observed, fixed version), failures, summary line.

    The table fits in ``width`` columns: the claimed, observed and fixed-version columns share
    what the others leave and wrap onto more lines, so no claim is cut.
    """
    header = ("fixture", "device", "status", "claimed", "observed", "fixed version")
    rows = [
        (row.fixture, row.device, MARK[row.status], row.claimed or "-", row.observed or "-", row.fixed or "-")
        for row in report.rows
        if show_skipped or row.status != SKIPPED
    ]
    widths = _column_widths(header, rows, width)
    lines = _wrapped(header, widths) + ["  ".join("-" * w for w in widths)]
    for row in rows:
        lines += _wrapped(row, widths)
    lines.append("")
    lines.append(_devices_line(report))
    failures = report.failures
    if failures:
        lines.append("")
        lines.append("failures:")
        lines += [f"  {row.message}" for row in failures]
    lines.append("")
    lines.append(f"{report.fixtures} fixtures, {len(report.rows)} rows, {report.seconds:.1f} s")
    lines.append(report.summary())
    return "\n".join(lines) + "\n"


def _column_widths(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], width: int) -> list[int]:
    """Natural widths for the short columns; the three text columns share the rest, by need."""
    natural = [max([len(header[i])] + [len(row[i]) for row in rows]) for i in range(len(header))]
    fixed = [min(natural[0], MAX_FIXTURE_WIDTH), natural[1], natural[2]]
    room = max(width - sum(fixed) - SEPARATOR * (len(header) - 1), MIN_TEXT_WIDTH * 3)
    wanted = natural[3:]
    if sum(wanted) <= room:
        return fixed + wanted
    # Each text column gets at least its minimum, the rest in proportion to what it would take.
    shares = [min(need, MIN_TEXT_WIDTH) for need in wanted]
    spare = room - sum(shares)
    extra_need = [need - share for need, share in zip(wanted, shares)]
    total_need = sum(extra_need) or 1
    shares = [share + spare * need // total_need for share, need in zip(shares, extra_need)]
    return fixed + shares


def _wrapped(cells: tuple[str, ...], widths: list[int]) -> list[str]:
    """One row over as many lines as its longest cell needs, each cell wrapped to its column."""
    columns = [textwrap.wrap(cell, width, break_long_words=True, break_on_hyphens=False) or [""]
               for cell, width in zip(cells, widths)]
    height = max(len(column) for column in columns)
    out = []
    for index in range(height):
        parts = [(column[index] if index < len(column) else "").ljust(width) for column, width in zip(columns, widths)]
        out.append("  ".join(parts).rstrip())
    return out


def render_json(report: VerifyReport) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"


def _devices_line(report: VerifyReport) -> str:
    parts = []
    for leg in report.legs:
        parts.append(f"{leg.label}: skipped ({leg.skip_reason})" if leg.skip_reason else f"{leg.label}: ran")
    return "devices: " + "; ".join(parts)


def render_markdown(report: VerifyReport, *, include_skipped_legs: bool = True) -> str:
    """One row per fixture, one column per device: a compact, regenerated proof for docs/proof.md.

    A leg skipped as a whole (no GPU) can be left out of the columns; the caller says so elsewhere.
    """
    legs = [leg for leg in report.legs if include_skipped_legs or not leg.skip_reason]
    labels = [LINT] + [leg.label for leg in legs]
    cells: dict[str, dict[str, Row]] = defaultdict(dict)
    order: list[str] = []
    for row in report.rows:
        if row.fixture not in cells:
            order.append(row.fixture)
        cells[row.fixture][row.device] = row
    lines = [
        "| fixture | " + " | ".join(labels) + " | fixed version (cpu) |",
        "|---|" + "---|" * len(labels) + "---|",
    ]
    for fixture in order:
        by_device = cells[fixture]
        cpu = by_device.get("cpu")
        fixed = _compact_fixed(cpu.fixed) if cpu is not None and cpu.fixed else ""
        columns = " | ".join(_escape(_cell(by_device.get(label))) for label in labels)
        lines.append(f"| `{fixture}` | {columns} | {_escape(fixed)} |")
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _cell(row: Row | None) -> str:
    if row is None:
        return ""
    if row.status == SKIPPED:
        return "skip: " + _compact_reason(row.observed)
    mark = "✅" if row.status == PASSED else "❌"
    if row.device == LINT:
        return mark
    return f"{mark} {_compact_observed(row.observed)}"


def _compact_observed(text: str) -> str:
    """`RuntimeError: Can't call numpy() ... at line 5; note` -> `RuntimeError at line 5; note`."""
    first, *rest = text.split("; ")
    kind = first.split(":")[0]
    if ": " in first and " at line " in first and kind.isidentifier():
        first = f"{kind} at line {first.rsplit(' at line ', 1)[1]}"
    return "; ".join([first, *rest])


def _compact_reason(text: str) -> str:
    if text.startswith("no CUDA device"):
        return "no GPU"
    if text.startswith("does not read DEVICE"):
        return "device-independent"
    if text.startswith("meta holds no data"):
        found = re.search(r"meta holds no data: (\w+):.* at line (\d+)", text)
        return f"meta holds no data ({found.group(1)} at line {found.group(2)})" if found else "meta holds no data"
    if text.startswith("meta cannot show"):
        return text.split(":")[0]
    return text


def _compact_fixed(text: str) -> str:
    return text.replace("the reference (.numpy(force=True))", "`.numpy(force=True)`").replace("the original", "original")
