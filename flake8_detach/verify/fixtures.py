"""The fixture format: runnable scripts with `# expect: DETxxx` claims and `# requires:` headers.

A fixture is any ``.py`` file (fix snapshots ``*.fixed.py`` are outputs and are skipped). Its
claims are the trailing ``# expect:`` comments; a header comment ``# requires: NAME`` (a module, or
``python>=3.12``) names what it needs to run. A fixture that reads the ``DEVICE`` environment
variable runs on every device; one that does not would repeat the CPU run, so it runs on the CPU only.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..sources.files import SourceError, discover, read_source

EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>DET\d+(?:\s*,\s*DET\d+)*)")
REQUIRES = re.compile(r"^#\s*requires:\s*(?P<items>.+?)\s*$")
READS_DEVICE = re.compile(r"""(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*["']DEVICE["']""")
PYTHON_REQUIREMENT = re.compile(r"^python\s*>=\s*(?P<major>\d+)\.(?P<minor>\d+)$")


@dataclass(frozen=True)
class Fixture:
    path: Path
    source: str
    claims: dict[int, tuple[str, ...]] = field(default_factory=dict)  # line -> codes
    requires: tuple[str, ...] = ()
    reads_device: bool = False
    error: str | None = None  # set when the file could not be read
    # line -> what the claims there mean at run time ("grad", "device", "move", "data", "alias");
    # filled from the linter's messages by the harness (DET106 says which error it predicts).
    kinds: dict[int, frozenset[str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The path as the user named it (`flag_x.py` under `verify .`, `fixtures/det101/flag_x.py`);
        an absolute one (the default fixtures/) by its folder and file: `det101/flag_x.py`."""
        if not self.path.is_absolute():
            return self.path.as_posix()
        return f"{self.path.parent.name}/{self.path.name}"

    @property
    def codes(self) -> set[str]:
        return {code for codes in self.claims.values() for code in codes}

    def lines_claiming(self, code: str) -> list[int]:
        return sorted(line for line, codes in self.claims.items() if code in codes)

    def missing_requirement(self) -> str | None:
        """The first requirement this interpreter cannot meet, as a reason to skip; else None."""
        for requirement in self.requires:
            version = PYTHON_REQUIREMENT.match(requirement.replace(" ", ""))
            if version:
                wanted = (int(version["major"]), int(version["minor"]))
                if sys.version_info[:2] < wanted:
                    running = f"{sys.version_info.major}.{sys.version_info.minor}"
                    return f"requires {requirement} (running Python {running})"
            elif importlib.util.find_spec(requirement) is None:
                return f"requires {requirement} (not installed)"
        return None


def parse_claims(source: str) -> dict[int, tuple[str, ...]]:
    claims: dict[int, tuple[str, ...]] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            claims[number] = tuple(code.strip() for code in match.group("codes").split(","))
    return claims


def parse_requires(source: str) -> tuple[str, ...]:
    """`# requires:` comments in the leading comment block (comma-separated, several allowed)."""
    found: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            if stripped:
                break
            continue
        match = REQUIRES.match(stripped)
        if match:
            found.extend(item.strip() for item in match.group("items").split(",") if item.strip())
    return tuple(found)


def load_fixture(path: Path) -> Fixture:
    try:
        source = read_source(path)
    except SourceError as error:
        return Fixture(path, "", error=str(error))
    return Fixture(
        path=path,
        source=source,
        claims=parse_claims(source),
        requires=parse_requires(source),
        reads_device=bool(READS_DEVICE.search(source)),
    )


def is_fixture_file(path: Path) -> bool:
    return path.suffix == ".py" and not path.name.endswith(".fixed.py") and path.name != "__init__.py"


def discover_fixtures(paths: Iterable[str | Path]) -> list[Fixture]:
    """Every fixture under ``paths`` in a stable order; a named file is taken as it is."""
    fixtures: list[Fixture] = []
    for path in discover(paths):
        if path.exists() and not is_fixture_file(path):
            continue
        fixtures.append(load_fixture(path))
    return fixtures
