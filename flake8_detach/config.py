"""`[tool.flake8-detach]` in pyproject.toml: found, read, validated, turned into engine Settings.

The CLI and the language server read it; flake8 reads the same settings from its own config
through the plugin's ``--detach-...`` options, validated by the same functions here. Every error
names the key it is about, because a silently ignored typo in a linter's config is a rule that
quietly stops running.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .catalog import RULE_CODES
from .settings import (
    FLAKE8_OPTION_FILES,
    SECTION,
    ConfigError,
    Settings,
    validate_dotted_names,
    validate_fix_style,
)
from .sources.files import MAX_SOURCE_BYTES, SourceError, read_file_bytes

KEYS: tuple[str, ...] = (
    "select",
    "ignore",
    "extend-select",
    "extend-ignore",
    "per-file-ignores",
    "extend-exclude",
    "fix-style",
    "no-grad-contexts",
    "converting-functions",
    "preview",
)
# flake8's VALID_CODE_PREFIX: codes and prefixes such as DET, DET1, DET101.
_CODE_PREFIX = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$", re.ASCII)


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # Added to select, or to the default selection when select is empty (names opt-in codes).
    extend_select: tuple[str, ...] = ()
    # The opt-in codes (DET111) in the default selection too, as ruff's `preview = true`.
    preview: bool = False
    extend_exclude: tuple[str, ...] = ()
    # Glob (relative to the config's folder, or a file name) -> codes ignored in matching files.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
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
        return self.settings_for(None)

    def settings_for(self, path: Path | None) -> Settings:
        """The engine settings for one file: the config's, plus its per-file-ignores."""
        ignore = self.ignore
        if path is not None and self.per_file_ignores:
            ignore = (*ignore, *(code for pattern, codes in self.per_file_ignores
                                 if self._matches(path, pattern) for code in codes))
        return Settings(
            select=self.select,
            ignore=ignore,
            extend_select=self.extend_select,
            preview=self.preview,
            no_grad_contexts=self.no_grad_contexts,
            converting_functions=self.converting_functions,
            fix_style=self.fix_style,
        )

    def _matches(self, path: Path, pattern: str) -> bool:
        """As ruff matches per-file-ignores: the file name, or the path below the config's folder."""
        if fnmatch.fnmatch(path.name, pattern):
            return True
        absolute = path.absolute()
        if self.root is not None:
            try:
                relative = absolute.relative_to(self.root.absolute()).as_posix()
            except ValueError:
                relative = None
            if relative is not None and (fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(
                    relative, pattern.removeprefix("./"))):
                return True
        return fnmatch.fnmatch(absolute.as_posix(), pattern)

    def overridden(
        self,
        *,
        select: Iterable[str] | None = None,
        ignore: Iterable[str] | None = None,
        extend_select: Iterable[str] | None = None,
        extend_ignore: Iterable[str] | None = None,
        extend_exclude: Iterable[str] | None = None,
        fix_style: str | None = None,
        preview: bool | None = None,
        source: str = "command line",
    ) -> Config:
        """This config with command-line values replacing the file's (validated the same way)."""
        changes: dict[str, Any] = {}
        if select is not None:
            changes["select"] = validate_codes("select", list(select), source)
            changes["extend_select"] = ()  # the command line's select replaces the config's selection
        if ignore is not None:
            changes["ignore"] = validate_codes("ignore", list(ignore), source)
        if extend_select is not None:
            added = validate_codes("extend-select", list(extend_select), source)
            changes["extend_select"] = (*changes.get("extend_select", self.extend_select), *added)
        if extend_ignore is not None:
            added = validate_codes("extend-ignore", list(extend_ignore), source)
            changes["ignore"] = (*changes.get("ignore", self.ignore), *added)
        if extend_exclude is not None:
            changes["extend_exclude"] = (*self.extend_exclude, *extend_exclude)
        if fix_style is not None:
            changes["fix_style"] = validate_fix_style("fix-style", fix_style, source)
        if preview:
            changes["preview"] = True
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
            import difflib  # only a misspelt key needs the suggestion

            close = difflib.get_close_matches(key.replace("_", "-"), KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(KEYS)}"
            raise ConfigError(key, f"unknown key{hint}", source)
    values: dict[str, Any] = {"path": path}
    if "select" in table:
        values["select"] = validate_codes("select", _string_list("select", table["select"], source), source)
    if "ignore" in table:
        values["ignore"] = validate_codes("ignore", _string_list("ignore", table["ignore"], source), source)
    if "extend-select" in table:
        values["extend_select"] = validate_codes(
            "extend-select", _string_list("extend-select", table["extend-select"], source), source)
    if "extend-ignore" in table:
        added = validate_codes("extend-ignore", _string_list("extend-ignore", table["extend-ignore"], source), source)
        values["ignore"] = (*values.get("ignore", ()), *added)
    if "per-file-ignores" in table:
        values["per_file_ignores"] = _per_file_ignores(table["per-file-ignores"], source)
    if "extend-exclude" in table:
        values["extend_exclude"] = tuple(_string_list("extend-exclude", table["extend-exclude"], source))
    if "fix-style" in table:
        values["fix_style"] = validate_fix_style("fix-style", table["fix-style"], source)
    if "preview" in table:
        if not isinstance(table["preview"], bool):
            raise ConfigError("preview", f"expected true or false, got {_describe(table['preview'])}", source)
        values["preview"] = table["preview"]
    for key in ("no-grad-contexts", "converting-functions"):
        if key in table:
            names = _string_list(key, table[key], source)
            values[key.replace("-", "_")] = validate_dotted_names(key, names, source)
    return Config(**values)


def _per_file_ignores(value: object, source: str | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`{"tests/*" = ["DET101"], "notebooks/**" = ["DET1"]}`, as ruff spells it."""
    if not isinstance(value, dict):
        raise ConfigError("per-file-ignores", f"expected a table of glob = [codes], got {_describe(value)}", source)
    entries = []
    for pattern, codes in value.items():
        key = f"per-file-ignores.{pattern}"
        entries.append((pattern, validate_codes(key, _string_list(key, codes, source), source)))
    return tuple(entries)


def _read_pyproject_table(path: Path) -> dict[str, object] | None:
    """The `[tool.flake8-detach]` table of a pyproject.toml, however TOML spells it; None if absent.

    TOML writes one table many ways (`[tool.flake8-detach]`, `[tool]` + `flake8-detach = {...}`,
    dotted keys `tool.flake8-detach.ignore = [...]`), so the file is parsed, never pattern-matched.
    A file that does not mention the name at all is skipped unparsed: most pyproject.toml files
    are someone else's packaging metadata, and their TOML errors are not ours to report.
    """
    try:  # a regular file of at most 10 MB: never a FIFO's endless wait or /dev/zero's endless read
        raw = read_file_bytes(path, MAX_SOURCE_BYTES)
    except SourceError as error:
        raise ConfigError(None, str(error), str(path)) from error
    if SECTION.encode() not in raw:
        return None
    # Imported here: most runs meet no file that names the section, and parse no TOML.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib
    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(None, f"invalid TOML: {error}", str(path)) from error
    except RecursionError as error:  # tomllib recurses per nesting level: [[[[...]]]] overflows it
        raise ConfigError(None, "invalid TOML: nested too deeply to parse", str(path)) from error
    tool = document.get("tool", {})
    table = tool.get(SECTION) if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(None, f"[tool.{SECTION}] must be a table", str(path))
    return table


def load_pyproject(path: Path) -> Config:
    """Read one pyproject.toml; a file without the section gives the defaults."""
    table = _read_pyproject_table(path)
    return Config(path=path) if table is None else parse_table(table, path)


# flake8's options files, in the order flake8 looks for them in a folder, and the plugin's options
# (flake8 accepts dashes or underscores in option names read from a file).
FLAKE8_FILES: tuple[str, ...] = FLAKE8_OPTION_FILES
FLAKE8_OPTIONS: dict[str, str] = {
    "detach-no-grad-contexts": "no-grad-contexts",
    "detach-converting-functions": "converting-functions",
    "detach-fix-style": "fix-style",
}


def _read_flake8_options(path: Path) -> dict[str, object] | None:
    """The plugin's `detach-*` options in a flake8 options file, as a table; None if it sets none.

    flake8's own `select`/`ignore` are not taken over: they govern every plugin and pycodestyle,
    and flake8 applies them itself; the pyproject table is where the other fronts select rules.
    """
    import configparser  # here: most projects have no flake8 options file to read

    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as error:
        raise ConfigError(None, f"cannot parse as a flake8 options file: {_one_line(error)}", str(path)) from error
    if not parser.has_section("flake8"):
        return None
    table: dict[str, object] = {}
    for option, value in parser.items("flake8"):
        key = FLAKE8_OPTIONS.get(option.replace("_", "-"))
        if key is None:
            continue
        table[key] = value.strip() if key == "fix-style" else split_comma_list(value.replace("\n", ","))
    return table or None


def _config_in(folder: Path) -> Config | None:
    """The settings a folder defines, or None when it defines none (the search goes on upwards).

    The pyproject.toml table wins over the flake8 options file of the same folder key by key, so a
    project that names its converting functions in setup.cfg for flake8 gets them in `check` too.
    """
    pyproject = folder / "pyproject.toml"
    table = _read_pyproject_table(pyproject) if pyproject.is_file() else None
    flake8_table: dict[str, object] | None = None
    flake8_path: Path | None = None
    for name in FLAKE8_FILES:
        candidate = folder / name
        if candidate.is_file():
            flake8_table = _read_flake8_options(candidate)
            if flake8_table is not None:
                flake8_path = candidate
                break
    if table is None and flake8_table is None:
        return None
    if table is None:
        assert flake8_path is not None and flake8_table is not None
        return parse_table(flake8_table, flake8_path)
    return parse_table({**(flake8_table or {}), **table}, pyproject)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a `[tool.flake8-detach]` table.

    As ruff does, a pyproject.toml without the table does not stop the search, so a
    sub-package's packaging file does not hide the project's settings.
    """
    for folder in _folders_up(start):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _read_pyproject_table(pyproject) is not None:
            return pyproject
    return None


def _folders_up(start: Path) -> tuple[Path, ...]:
    folder = start.absolute()
    if folder.is_file() or not folder.exists():
        folder = folder.parent
    return (folder, *folder.parents)


def discover_config(start: Path, explicit: Path | None = None) -> Config:
    """The config for ``start`` (a file or folder), or from the file given with ``--config``.

    The nearest folder at or above ``start`` whose pyproject.toml has the table or whose flake8
    options file (setup.cfg, tox.ini, .flake8) sets a `detach-*` option decides, as ruff resolves
    the nearest configuration per file. Every front calls this per file, so a monorepo's
    `pkg_a/pyproject.toml` governs `pkg_a/` from `check` at the root and in the editor alike.
    """
    if explicit is not None:
        if not explicit.is_file():
            reason = "not a regular file" if explicit.exists() and not explicit.is_dir() else "no such file"
            raise ConfigError(None, reason, str(explicit))
        return load_pyproject(explicit)
    for folder in _folders_up(start):
        config = _config_in(folder)
        if config is not None:
            return config
    return Config()


class ConfigResolver:
    """Per-file configuration for a run over many files: resolved per folder, and cached.

    Each folder's answer is :func:`discover_config`'s, but a walk up stops at the first folder
    already resolved and every folder it passed keeps the answer: over a tree of hundreds of
    folders, the project's pyproject.toml is read and parsed once, not once per folder.
    """

    def __init__(self, explicit: Path | None = None, overrides: Callable[[Config], Config] | None = None) -> None:
        self.explicit = explicit
        self.overrides = overrides or (lambda config: config)
        self._by_folder: dict[Path, Config] = {}  # the overrides applied
        self._discovered: dict[Path, Config] = {}  # as discover_config answers, per folder walked
        self._explicit_config: Config | None = None

    def for_path(self, path: Path) -> Config:
        folder = path.absolute().parent
        config = self._by_folder.get(folder)
        if config is None:
            config = self._by_folder[folder] = self.overrides(self._discover(folder))
        return config

    def for_folder(self, folder: Path) -> Config:
        """The config of ``folder`` itself (the one a run starts in), from the same cache."""
        folder = folder.absolute()
        config = self._by_folder.get(folder)
        if config is None:
            config = self._by_folder[folder] = self.overrides(self._discover(folder))
        return config

    def _discover(self, folder: Path) -> Config:
        if self.explicit is not None:
            if self._explicit_config is None:
                self._explicit_config = discover_config(folder, self.explicit)
            return self._explicit_config
        walked: list[Path] = []
        found = Config()
        for current in _folders_up(folder):
            known = self._discovered.get(current)
            if known is not None:
                found = known
                break
            walked.append(current)
            config = _config_in(current)
            if config is not None:
                found = config
                break
        for current in walked:
            self._discovered[current] = found
        return found


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _describe(value: object) -> str:
    return f"{type(value).__name__} {value!r}"
