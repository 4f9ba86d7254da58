"""Read the `# expect: DETxxx` annotations of fixture files."""

from __future__ import annotations

import pathlib
import re

EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>DET\d+(?:\s*,\s*DET\d+)*)")


def expected_diagnostics(path: pathlib.Path) -> set[tuple[int, str]]:
    found = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for code in match.group("codes").split(","):
                found.add((number, code.strip()))
    return found


def lint_fixture_files(root: pathlib.Path) -> list[pathlib.Path]:
    """Fixture sources (fix snapshots `*.fixed.py` are outputs, not inputs)."""
    return sorted(p for p in root.rglob("*.py") if not p.name.endswith(".fixed.py"))
