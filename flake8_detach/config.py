"""`[tool.flake8-detach]` in pyproject.toml: found, read, validated, turned into engine Settings.

The CLI and the language server read it; flake8 reads the same settings from its own config
through the plugin's ``--detach-...`` options, validated by the same functions here. Every error
names the key it is about, because a silently ignored typo in a linter's config is a rule that
quietly stops running.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .catalog import RULE_CODES
from .settings import SECTION, ConfigError, Settings, validate_dotted_names, validate_fix_style

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

KEYS: tuple[str, ...] = (
    "select",
    "ignore",
    "extend-exclude",
    "fix-style",
    "no-grad-contexts",
    "converting-functions",
)
# flake8's VALID_CODE_PREFIX: codes and prefixes such as DET, DET1, DET101.
_CODE_PREFIX = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$", re.ASCII)


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    fix_style: str = "chain"
    no_grad_contexts: frozenset[str] = frozenset()
    converting_functions: frozenset[str] = frozenset()
    # The pyproject.toml it came from (None: defaults) and its folder, which relative
    # extend-exclude patterns are resolved against.
    path: Path | None = field(default=None, compare=False)

    @property
    def root(self) -> Path | None:
        return self.path.parent if self.path else None

    def settings(self) -> Settings:
        return Settings(
            select=self.select,
            ignore=self.ignore,
            no_grad_contexts=self.no_grad_contexts,
            converting_functions=self.converting_functions,
            fix_style=self.fix_style,
        )

    def overridden(
        self,
        *,
        select: Iterable[str] | None = None,
        ignore: Iterable[str] | None = None,
        extend_exclude: Iterable[str] | None = None,
        fix_style: str | None = None,
        source: str = "command line",
    ) -> Config:
        """This config with command-line values replacing the file's (validated the same way)."""
        changes: dict[str, Any] = {}
        if select is not None:
            changes["select"] = validate_codes("select", list(select), source)
        if ignore is not None:
            changes["ignore"] = validate_codes("ignore", list(ignore), source)
        if extend_exclude is not None:
            changes["extend_exclude"] = (*self.extend_exclude, *extend_exclude)
        if fix_style is not None:
            changes["fix_style"] = validate_fix_style("fix-style", fix_style, source)
        return replace(self, **changes)


def split_comma_list(value: str | Iterable[str] | None) -> list[str]:
    """`a, b,c` or a list of strings -> ['a', 'b', 'c'] (flake8's comma-separated options)."""
    if not value:
        return []
    items = value.split(",") if isinstance(value, str) else value
    return [item.strip() for item in items if item.strip()]


def _string_list(key: str, value: object, source: str | None) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(key, f"expected a list of strings, got {_describe(value)}", source)
    return [item.strip() for item in value]


def validate_codes(key: str, codes: list[str], source: str | None = None) -> tuple[str, ...]:
    """Codes or prefixes (DET, DET1, DET101) that select at least one flake8-detach rule."""
    known = list(RULE_CODES)
    for code in codes:
        if not _CODE_PREFIX.match(code):
            raise ConfigError(key, f"{code!r} is not a rule code or prefix (like DET101 or DET1)", source)
        if not any(rule_code.startswith(code) for rule_code in known):
            raise ConfigError(
                key, f"{code!r} matches no flake8-detach rule (known: {', '.join(known)})", source
            )
    return tuple(codes)


def parse_table(table: Mapping[str, object], path: Path | None = None) -> Config:
    """Validate a `[tool.flake8-detach]` table; unknown keys and bad values raise ConfigError."""
    source = str(path) if path else None
    for key in table:
        if key not in KEYS:
            close = difflib.get_close_matches(key.replace("_", "-"), KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(KEYS)}"
            raise ConfigError(key, f"unknown key{hint}", source)
    values: dict[str, Any] = {"path": path}
    if "select" in table:
        values["select"] = validate_codes("select", _string_list("select", table["select"], source), source)
    if "ignore" in table:
        values["ignore"] = validate_codes("ignore", _string_list("ignore", table["ignore"], source), source)
    if "extend-exclude" in table:
        values["extend_exclude"] = tuple(_string_list("extend-exclude", table["extend-exclude"], source))
    if "fix-style" in table:
        values["fix_style"] = validate_fix_style("fix-style", table["fix-style"], source)
    for key in ("no-grad-contexts", "converting-functions"):
        if key in table:
            names = _string_list(key, table[key], source)
            values[key.replace("-", "_")] = validate_dotted_names(key, names, source)
    return Config(**values)


def load_pyproject(path: Path) -> Config:
    """Read one pyproject.toml; a file without the section gives the defaults."""
    try:
        with path.open("rb") as file:
            document = tomllib.load(file)
    except OSError as error:
        raise ConfigError(None, f"cannot read: {error.strerror or error}", str(path)) from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(None, f"invalid TOML: {error}", str(path)) from error
    table = document.get("tool", {}).get(SECTION)
    if table is None:
        return Config(path=path)
    if not isinstance(table, dict):
        raise ConfigError(None, f"[tool.{SECTION}] must be a table", str(path))
    return parse_table(table, path)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a `[tool.flake8-detach]` table.

    As ruff does, a pyproject.toml without the table does not stop the search, so a
    sub-package's packaging file does not hide the project's settings.
    """
    folder = start.absolute()
    if folder.is_file():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and _mentions_section(pyproject):
            return pyproject
    return None


def _mentions_section(pyproject: Path) -> bool:
    try:
        text = pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"^\s*\[\s*tool\s*\.\s*[\"']?flake8-detach[\"']?\s*[\].]", text, re.MULTILINE) is not None


def discover_config(start: Path, explicit: Path | None = None) -> Config:
    """The config for a run started in ``start`` (or the file given with ``--config``)."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(None, "no such file", str(explicit))
        return load_pyproject(explicit)
    found = find_pyproject(start)
    return load_pyproject(found) if found else Config()


def _describe(value: object) -> str:
    return f"{type(value).__name__} {value!r}"
