"""Regenerate the rule pages, the autograd-graph figures and (on request) the runtime evidence.

    python scripts/generate_docs.py             # figures (docs/figures) and pages (docs/rules)
    python scripts/generate_docs.py --pages     # the pages only (no torch, no Graphviz needed)
    python scripts/generate_docs.py --evidence  # first re-run `flake8-detach verify` for the evidence
    python scripts/generate_docs.py --check     # exit 1 if a committed file is out of date

Everything is derived: the page text from the rule classes' documentation fields, the figures
from a real run of each rule's fixture (flake8_detach/figures.py), and the runtime evidence from
`flake8-detach verify --json`, condensed per rule into flake8_detach/runtime_evidence.json (it
runs the fixtures on every device this host has, so it is regenerated on request, not always).
`tests/test_docs_current.py` regenerates into a temporary folder and compares with the
committed files.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from flake8_detach.explain import (
    EVIDENCE_PAGE,
    EVIDENCE_PATH,
    FIGURES_DIR,
    RULES_DIR,
    Evidence,
    Observation,
    evidence_to_json,
    load_evidence,
    markdown_evidence,
    markdown_index,
    markdown_page,
)
from flake8_detach.rules import ALL_RULES

REPO = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------------
# Evidence: what `flake8-detach verify` observed, condensed per rule

OUTCOME_OF_STATUS = {"passed": "held", "failed": "not held", "skipped": "skipped"}


def run_verify(paths: list[str]) -> dict[str, Any]:
    """`flake8-detach verify --json PATH...` in a subprocess (it runs the fixtures in their own
    subprocesses); exit 1 only means a claim failed, which the evidence then shows."""
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "verify.json"
        completed = subprocess.run(
            [sys.executable, "-m", "flake8_detach", "verify", "--json", "--output-file", str(output), *paths],
            cwd=REPO, capture_output=True, text=True, check=False,
        )
        if completed.returncode not in (0, 1) or not output.is_file():
            raise RuntimeError(f"flake8-detach verify failed ({completed.returncode}): {completed.stderr.strip()}")
        return dict(json.loads(output.read_text(encoding="utf-8")))


def rule_of(path: str) -> str | None:
    """`fixtures/det101/flag_x.py` -> `DET101`: a fixture belongs to the rule its folder names."""
    match = re.search(r"(?:^|/)fixtures/(det\d+)/", Path(path).as_posix())
    return match.group(1).upper() if match else None


def evidence_from_verify(report: dict[str, Any]) -> Evidence:
    """The runtime rows of a verify report (lint rows are not run time), grouped by rule."""
    observations: dict[str, list[Observation]] = {}
    for row in report["rows"]:
        code = rule_of(row["path"])
        if code is None or row["device"] == "lint":
            continue
        observations.setdefault(code, []).append(
            Observation(
                fixture=Path(row["path"]).as_posix(),
                device=row["device"],
                claimed=row["claimed"],
                observed=row["observed"],
                fixed=row["fixed"],
                outcome=OUTCOME_OF_STATUS[row["status"]],
            )
        )
    return Evidence(
        source="flake8-detach verify",
        torch_version=report["environment"]["torch"],
        devices_not_run={d["label"]: d["skipped"] for d in report["devices"] if d["skipped"]},
        observations=observations,
    )


def collect_evidence() -> Evidence:
    return evidence_from_verify(run_verify(["fixtures"]))


# ---------------------------------------------------------------------------------------------
# Files


def generated_figures() -> dict[str, str]:
    """`docs/figures/DETxxx.dot` and `.svg` contents, drawn from real runs (needs torch; the SVG
    also needs Graphviz's `dot`, without which only the DOT sources are produced)."""
    from flake8_detach import figures

    files: dict[str, str] = {}
    for code in sorted(figures.FIGURES):
        dot = figures.to_dot(figures.build(code))
        files[f"{FIGURES_DIR}/{code}.dot"] = dot
        if figures.dot_available():
            files[f"{FIGURES_DIR}/{code}.svg"] = figures.to_svg(dot)
    return files


def generated_pages(root: Path, evidence: Evidence | None) -> dict[str, str]:
    """`docs/rules/*.md`: a page per rule, the index, and every fixture run (evidence.md);
    ``root`` holds the figures the pages embed."""
    files = {f"{RULES_DIR}/{rule.code}.md": markdown_page(rule, evidence, root) for rule in ALL_RULES}
    files[f"{RULES_DIR}/README.md"] = markdown_index()
    files[f"{RULES_DIR}/{EVIDENCE_PAGE}"] = markdown_evidence(evidence)
    return files


def write(root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def stale(root: Path, files: dict[str, str]) -> list[str]:
    """Generated paths whose committed copy differs or is missing."""
    return [rel for rel, content in sorted(files.items())
            if not (root / rel).is_file() or (root / rel).read_text(encoding="utf-8") != content]


def orphan_pages(root: Path, pages: dict[str, str]) -> list[Path]:
    """Rule pages on disk for a rule that no longer exists."""
    return sorted(p for p in (root / RULES_DIR).glob("DET*.md") if p.relative_to(root).as_posix() not in pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evidence", action="store_true", help="re-run flake8-detach verify for the evidence first")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything is out of date")
    parser.add_argument("--pages", action="store_true",
                        help="the pages only: leave the figures alone (no torch or Graphviz needed)")
    args = parser.parse_args(argv)

    evidence: Evidence | None
    if args.evidence:
        evidence = collect_evidence()
        if not args.check:
            EVIDENCE_PATH.write_text(evidence_to_json(evidence), encoding="utf-8")
    else:
        evidence = load_evidence()

    figures = {} if args.pages else generated_figures()
    if args.check:
        with tempfile.TemporaryDirectory() as scratch:
            write(Path(scratch), figures)
            pages = generated_pages(REPO if args.pages else Path(scratch), evidence)
        out_of_date = stale(REPO, {**figures, **pages})
        out_of_date += [p.relative_to(REPO).as_posix() for p in orphan_pages(REPO, pages)]
        for relative in out_of_date:
            print(f"out of date: {relative}", file=sys.stderr)
        return 1 if out_of_date else 0

    write(REPO, figures)
    pages = generated_pages(REPO, evidence)
    for orphan in orphan_pages(REPO, pages):
        orphan.unlink()
    write(REPO, pages)
    print(f"wrote {len(figures)} figure files and {len(pages)} pages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
