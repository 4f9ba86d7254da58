"""Regenerate the fix snapshots: `fixtures/<rule>/<name>.fixed.py` beside each fixture.

A snapshot is what `flake8-detach fix --unsafe-fixes` makes of the fixture, with the fixture's
`# expect:` annotations removed first (the fixed file is not a lint fixture: it must lint clean
for every code that was fixed, and the runtime harness runs it to show the hazard is gone).
Only fixtures that have at least one fixable diagnostic get a snapshot; a stale snapshot (its
fixture gone or no longer fixable) is deleted. `tests/test_fixes.py` checks they are current.

    python scripts/update_fix_snapshots.py          # rewrite the snapshots
    python scripts/update_fix_snapshots.py --check  # exit 1 if any is missing or out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from flake8_detach.fixing.fixer import fix_source
from flake8_detach.settings import Settings

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
SNAPSHOT_SUFFIX = ".fixed.py"
PREVIEW = Settings(preview=True)
# A trailing `# expect: DET101` / `# expect: DET101,DET104` annotation and the blanks before it.
_EXPECT = re.compile(r"[ \t]*#[ \t]*expect:[ \t]*DET\d+(?:[ \t]*,[ \t]*DET\d+)*[ \t]*(?=\r?\n|\r|$)", re.MULTILINE)


def fixture_files(root: Path = FIXTURES) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if not p.name.endswith(SNAPSHOT_SUFFIX))


def snapshot_path(fixture: Path) -> Path:
    return fixture.with_name(fixture.name[: -len(".py")] + SNAPSHOT_SUFFIX)


def strip_expectations(source: str) -> str:
    return _EXPECT.sub("", source)


def expected_snapshot(fixture: Path) -> str | None:
    """The fixed text of ``fixture``, or None when nothing in it can be fixed."""
    source = strip_expectations(fixture.read_text(encoding="utf-8"))
    result = fix_source(source, PREVIEW, unsafe=True)  # every rule's fixture, the opt-in ones too
    if result.error is not None:
        raise RuntimeError(f"{fixture}: {result.error}")
    return result.source if result.applied else None


def outdated(root: Path = FIXTURES) -> dict[Path, str | None]:
    """Snapshot path -> the text it should have (None: it should not exist), for each one that differs."""
    wanted: dict[Path, str | None] = {snapshot_path(f): expected_snapshot(f) for f in fixture_files(root)}
    for existing in root.rglob("*" + SNAPSHOT_SUFFIX):
        wanted.setdefault(existing, None)
    changes: dict[Path, str | None] = {}
    for path, text in wanted.items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            changes[path] = text
    return changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a snapshot is out of date")
    args = parser.parse_args(argv)
    changes = outdated()
    for path, text in sorted(changes.items()):
        relative = path.relative_to(REPO)
        if args.check:
            print(f"out of date: {relative}")
        elif text is None:
            path.unlink()
            print(f"removed {relative}")
        else:
            path.write_text(text, encoding="utf-8", newline="")
            print(f"wrote {relative}")
    total = sum(1 for _ in FIXTURES.rglob("*" + SNAPSHOT_SUFFIX))
    print(f"{len(changes)} snapshot(s) {'out of date' if args.check else 'updated'}; {total} in fixtures/")
    return 1 if args.check and changes else 0


if __name__ == "__main__":
    sys.exit(main())
