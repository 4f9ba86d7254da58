"""Rule pages, rendered from the rule classes' documentation fields (the only copy of the text).

One page per rule, in two renderings: Markdown for ``docs/rules/DETxxx.md`` (written by
``scripts/generate_docs.py``) and plain text for ``flake8-detach explain`` in a terminal. Both add
the runtime evidence: the rule's claim plus what running its fixtures observed, read from
``runtime_evidence.json`` beside this module (generated, never typed in).

Imports no torch: explaining a rule must be as light as linting.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path

from .reporting import RULE_DOCS_BASE_URL, rule_url
from .rules import ALL_RULES
from .rules.base import Rule

EVIDENCE_PATH = Path(__file__).with_name("runtime_evidence.json")
# Paths as they are written in the pages, relative to the repository root.
RULES_DIR = "docs/rules"
FIGURES_DIR = "docs/figures"
GENERATOR = "scripts/generate_docs.py"
# Every fixture run of every rule, one page beside the rule pages (docs/rules/evidence.md).
EVIDENCE_PAGE = "evidence.md"


# ---------------------------------------------------------------------------------------------
# Evidence


@dataclass(frozen=True)
class Observation:
    """One fixture run on one device: what the rule claims there and what happened."""

    fixture: str  # repository-relative path
    device: str
    claimed: str
    observed: str
    fixed: str  # what the fixed version (`flake8-detach fix` output) did, or "" if none
    outcome: str  # "held", "not held" or "skipped"


OUTCOMES = ("held", "not held", "skipped")


@dataclass(frozen=True)
class Evidence:
    source: str  # how the observations were obtained
    torch_version: str
    devices_not_run: dict[str, str]  # device -> why it was not run
    observations: dict[str, list[Observation]]  # rule code -> runs of its fixtures

    def for_rule(self, code: str) -> list[Observation]:
        return self.observations.get(code, [])


def load_evidence(path: Path = EVIDENCE_PATH) -> Evidence | None:
    """The committed evidence, or None where it was never generated."""
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return Evidence(
        source=data["source"],
        torch_version=data["torch_version"],
        devices_not_run=dict(data["devices_not_run"]),
        observations={
            code: [Observation(**row) for row in rows] for code, rows in data["observations"].items()
        },
    )


def evidence_to_json(evidence: Evidence) -> str:
    """Stable JSON (sorted keys, fixed indent) so regenerating with equal results changes nothing."""
    data = {
        "source": evidence.source,
        "torch_version": evidence.torch_version,
        "devices_not_run": evidence.devices_not_run,
        "observations": {
            code: [asdict(row) for row in rows] for code, rows in sorted(evidence.observations.items())
        },
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


# ---------------------------------------------------------------------------------------------
# Figures (drawn by flake8_detach.figures; here only their captions are read back)


def figure_caption(code: str, root: Path) -> str | None:
    """The caption stored in the figure's DOT source (``// caption: ...``), None if no figure."""
    dot = root / FIGURES_DIR / f"{code}.dot"
    if not dot.is_file():
        return None
    for line in dot.read_text(encoding="utf-8").splitlines():
        if line.startswith("// caption: "):
            return line.removeprefix("// caption: ")
    return None


# ---------------------------------------------------------------------------------------------
# Shared pieces


def summary(rule: Rule) -> str:
    """One line for tables: the diagnostic message itself, which already says what and why."""
    return rule.message


def rule_source_file(rule: Rule) -> str:
    module = type(rule).__module__.rsplit(".", 1)[-1]
    return f"flake8_detach/rules/{module}.py"


def evidence_rows(rule: Rule, evidence: Evidence | None) -> list[Observation]:
    return evidence.for_rule(rule.code) if evidence is not None else []


def evidence_summary(rule: Rule, evidence: Evidence | None) -> list[str]:
    """Sentences about what was and was not run, shared by both renderings."""
    if evidence is None:
        return ["No runtime evidence has been generated yet (run scripts/generate_docs.py --evidence)."]
    rows = evidence_rows(rule, evidence)
    ran = [row for row in rows if row.outcome != "skipped"]
    devices = sorted({row.device for row in ran})
    held = sum(row.outcome == "held" for row in ran)
    lines = [
        (
            f"Observed by {evidence.source} (torch {evidence.torch_version}): {len(ran)} runs of "
            f"this rule's fixtures on {', '.join(devices) or 'no device'}, {held} as claimed, "
            f"{len(ran) - held} not."
        )
    ]
    lines += [f"{device}: not run here: {why}" for device, why in sorted(evidence.devices_not_run.items())]
    skipped: dict[tuple[str, str], int] = {}
    for row in rows:
        if row.outcome == "skipped" and row.device not in evidence.devices_not_run:
            skipped[(row.device, row.observed)] = skipped.get((row.device, row.observed), 0) + 1
    lines += [f"{device}: {count} skipped: {why}" for (device, why), count in sorted(skipped.items())]
    return lines


# ---------------------------------------------------------------------------------------------
# Markdown (docs/rules/DETxxx.md)


def _fenced(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_page(rule: Rule, evidence: Evidence | None, root: Path) -> str:
    """The rule's page; ``root`` is the repository root (where the figures live)."""
    parts = [
        f"# {rule.code}: {rule.name}",
        f"> {rule.code} {rule.message}",
        "## What it does",
        rule.what_it_does,
        "## Why is this bad",
        rule.why_bad,
    ]
    caption = figure_caption(rule.code, root)
    if caption is not None:
        parts += [
            f"![The autograd graph behind {rule.code}](../figures/{rule.code}.svg)",
            (
                f"*{caption}* Arrows follow the forward computation; `backward()` walks them in "
                "reverse, from the tensor up to the leaves."
            ),
        ]
    parts += [
        "## Example",
        _fenced(rule.example),
        "## Use instead",
        _fenced(rule.use_instead),
        "## Fix safety",
        rule.fix_safety,
        "## Runtime evidence",
        f"**Claim:** {rule.runtime_truth} {evidence_line(rule, evidence)}",
        (
            f"<!-- Generated by {GENERATOR} from {rule_source_file(rule)} and "
            "flake8_detach/runtime_evidence.json; edit those, not this file. -->"
        ),
    ]
    return "\n\n".join(parts) + "\n"


def evidence_line(rule: Rule, evidence: Evidence | None) -> str:
    """One sentence for the rule's page: how many runs held, and where each run is listed."""
    if evidence is None:
        return evidence_summary(rule, evidence)[0]
    first = evidence_summary(rule, evidence)[0].rstrip(".")
    return f"{first}: [every run]({EVIDENCE_PAGE}#{rule.code.lower()}), [how they are made](../proof.md)."


def markdown_evidence(evidence: Evidence | None, rules: tuple[Rule, ...] = ALL_RULES) -> str:
    """docs/rules/evidence.md: per rule, its claim and every fixture run `flake8-detach verify` made."""
    parts = [
        "# Runtime evidence",
        (
            "Each rule's claim about run time, and what running its fixtures showed: generated from "
            "`flake8_detach/runtime_evidence.json`, the condensed output of `flake8-detach verify` "
            "(see [the proof](../proof.md) for how the fixtures are run and checked)."
        ),
    ]
    for rule in rules:
        parts += [
            f"## {rule.code}",
            f"[{rule.code}: {rule.name}]({rule.code}.md)",
            f"**Claim:** {rule.runtime_truth}",
            "\n".join(f"- {line}" for line in evidence_summary(rule, evidence)),
        ]
        rows = [row for row in evidence_rows(rule, evidence) if row.outcome != "skipped"]
        if rows:
            table = [
                "| fixture | device | claimed | observed | fixed version | outcome |",
                "|---|---|---|---|---|---|",
            ]
            for row in rows:
                name = row.fixture.rsplit("/", 1)[-1]
                outcome = "**not held**" if row.outcome == "not held" else row.outcome
                table.append(
                    f"| [{name}](../../{row.fixture}) | {row.device} | {_markdown_cell(row.claimed)} "
                    f"| {_markdown_cell(row.observed)} | {_markdown_cell(row.fixed) or '-'} | {outcome} |"
                )
            parts.append("\n".join(table))
    parts.append(
        f"<!-- Generated by {GENERATOR} from flake8_detach/runtime_evidence.json; "
        "regenerate it with `python scripts/generate_docs.py --evidence`. -->"
    )
    return "\n\n".join(parts) + "\n"


def markdown_index(rules: tuple[Rule, ...] = ALL_RULES) -> str:
    """docs/rules/README.md: the table of rules, each linking to its page."""
    lines = [
        "# Rules",
        "",
        "| code | name | summary |",
        "|---|---|---|",
        *(f"| [{r.code}]({r.code}.md) | {r.name} | {_markdown_cell(summary(r))} |" for r in rules),
        "",
        f"Every fixture run of every rule, as `flake8-detach verify` observed it: [{EVIDENCE_PAGE}]({EVIDENCE_PAGE}).",
        "",
        f"<!-- Generated by {GENERATOR}; edit the rule classes in flake8_detach/rules/. -->",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Plain text (flake8-detach explain)

WIDTH = 88


def _plain(text: str) -> str:
    """Markdown inline code stays readable as it is; only links lose their targets."""
    return re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)


def _paragraph(text: str) -> str:
    """Wrapped to the terminal page's width, paragraph by paragraph, `- ` items with a hanging indent."""
    blocks = []
    for block in text.split("\n\n"):
        items = block.split("\n- ")
        lines = [_fill(items[0], "- " if items[0].startswith("- ") else "")]
        lines += [_fill("- " + item, "- ") for item in items[1:]]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _fill(text: str, bullet: str) -> str:
    return textwrap.fill(_plain(text), WIDTH, subsequent_indent=" " * len(bullet),
                         break_on_hyphens=False, break_long_words=False)


def _code(text: str) -> str:
    return textwrap.indent(text.rstrip(), "    ")


def _section(title: str, body: str) -> str:
    return f"{title}\n{'-' * len(title)}\n{body}"


def text_page(rule: Rule, evidence: Evidence | None, root: Path | None = None) -> str:
    """The page as plain text for a terminal: same sections, wrapped, code indented."""
    title = f"{rule.code}: {rule.name}"
    why = _paragraph(rule.why_bad)
    if root is not None and figure_caption(rule.code, root) is not None:
        why += f"\n\nFigure (the real autograd graph): {FIGURES_DIR}/{rule.code}.svg"
    evidence_lines = [_paragraph(f"Claim: {rule.runtime_truth}"), _paragraph(evidence_summary(rule, evidence)[0])]
    if evidence is not None:
        evidence_lines.append(f"Every run: {RULE_DOCS_BASE_URL}{EVIDENCE_PAGE}#{rule.code.lower()}")
    parts = [
        f"{title}\n{'=' * len(title)}\n{_paragraph(f'{rule.code} {rule.message}')}",
        _section("What it does", _paragraph(rule.what_it_does)),
        _section("Why is this bad", why),
        _section("Example", _code(rule.example)),
        _section("Use instead", _code(rule.use_instead)),
        _section("Fix safety", _paragraph(rule.fix_safety)),
        _section("Runtime evidence", "\n".join(evidence_lines)),
        f"Page: {rule_url(rule.code)}",
    ]
    return "\n\n".join(parts) + "\n"


def text_table(rules: tuple[Rule, ...] = ALL_RULES) -> str:
    """`explain --list`: code, name and one-line summary, aligned in columns."""
    name_width = max(len(rule.name) for rule in rules)
    return "".join(f"{rule.code}  {rule.name:<{name_width}}  {summary(rule)}\n" for rule in rules)
