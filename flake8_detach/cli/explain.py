"""`flake8-detach explain DET101` / `explain --list`: a rule's page in the terminal.

The text comes from the rule class (the same fields the generated docs/rules pages use) and the
committed runtime evidence, so the terminal and the docs cannot disagree. Exit 0 on success,
2 for an unknown code or a missing argument (with the known codes on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..catalog import RULE_CODES

# The checkout the package runs from; figures are mentioned only where they exist there.
REPO_ROOT = Path(__file__).resolve().parent.parent.parent


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "explain",
        help=summary,
        description="Explain a rule: what it flags, why it matters, what to write instead, and what "
        "running its fixtures showed.",
    )
    parser.add_argument("code", nargs="?", metavar="CODE", help="a rule code such as DET101, or its name (numpy-on-grad-tensor)")
    parser.add_argument("--list", action="store_true", help="print the table of rules (code, name, summary)")
    parser.set_defaults(func=run)


def known_codes() -> str:
    return ", ".join(RULE_CODES)


def run(args: argparse.Namespace) -> int:
    # The pages come from the rule classes, which import libcst: loaded here, not for `--help`.
    from ..explain import load_evidence, text_page, text_table
    from ..rules import RULES_BY_CODE

    if args.list:
        sys.stdout.write(text_table())
        return 0
    if not args.code:
        sys.stderr.write(f"flake8-detach explain: give a rule code or --list; known codes: {known_codes()}\n")
        return 2
    # A code (`DET101`, `det101`) or, as ruff's `rule` takes it, the kebab-case name.
    wanted = args.code.strip()
    rule = RULES_BY_CODE.get(wanted.upper()) or next(
        (rule for rule in RULES_BY_CODE.values() if rule.name == wanted.lower()), None)
    if rule is None:
        sys.stderr.write(f"flake8-detach explain: unknown rule code {args.code!r}; known codes: {known_codes()}\n")
        return 2
    sys.stdout.write(text_page(rule, load_evidence(), REPO_ROOT))
    return 0
