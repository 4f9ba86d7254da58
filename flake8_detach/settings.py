"""The engine's settings, in a module that does not import libcst.

flake8 imports the plugin on every run, whatever `--select` says; the plugin needs the settings
and the screen to decide that a file has nothing to report, and only then pays for libcst.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .catalog import RuleScreen, selected_codes, selected_screens

# How fixes spell the conversion: "chain" (.detach().cpu().numpy()) or "force" (.numpy(force=True)).
FIX_STYLES: tuple[str, ...] = ("chain", "force")
SECTION = "flake8-detach"
# flake8's options files, in the order flake8 looks for them in a folder (config.py reads them).
FLAKE8_OPTION_FILES: tuple[str, ...] = ("setup.cfg", "tox.ini", ".flake8")
_DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$", re.ASCII)


class ConfigError(Exception):
    """A configuration problem, worded for the user: where, which key, what is wrong."""

    def __init__(self, key: str | None, message: str, source: str | None = None) -> None:
        self.key = key
        self.message = message
        self.source = source
        where = f"{source}: " if source else ""
        # An option is named as the place it was written spells it: on the command line, in a
        # flake8 options file (`[flake8] detach-no-grad-contexts`), or in the pyproject table.
        what = ""
        if key and source == "command line":
            what = f"--{key}: "
        elif key and source is not None and os.path.basename(source) in FLAKE8_OPTION_FILES:
            what = f"[flake8] detach-{key}: "
        elif key:
            what = f"[tool.{SECTION}] {key}: "
        super().__init__(f"{where}{what}{message}")


def validate_dotted_names(key: str, names: list[str], source: str | None = None) -> frozenset[str]:
    for name in names:
        if not _DOTTED_NAME.match(name):
            raise ConfigError(key, f"{name!r} is not a dotted name (like myproject.utils.evaluating)", source)
    return frozenset(names)


def validate_fix_style(key: str, value: object, source: str | None = None) -> str:
    if value not in FIX_STYLES:
        choices = " or ".join(repr(style) for style in FIX_STYLES)
        raise ConfigError(key, f"expected {choices}, got {value!r}", source)
    assert isinstance(value, str)
    return value


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()  # empty: the default selection (no opt-in code such as DET111)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()  # added to select, or to the default selection
    # Opt-in codes (DET111) in the default selection too: `--preview`, `preview = true`, and the
    # flake8 plugin, which computes every code and leaves the choice to flake8's own selection.
    preview: bool = False
    # Dotted names of project context managers/decorators that turn grad off.
    no_grad_contexts: frozenset[str] = frozenset()
    # Dotted names of extra functions that call .numpy() on their argument (DET106).
    converting_functions: frozenset[str] = frozenset()
    # How fixes spell the conversion: "chain" (.detach().cpu().numpy()) or "force" (.numpy(force=True)).
    fix_style: str = "chain"

    def screens(self) -> tuple[RuleScreen, ...]:
        return selected_screens(self.select, self.ignore, self.extend_select, self.preview)

    def codes(self) -> tuple[str, ...]:
        """The rule codes these settings run."""
        return selected_codes(self.select, self.ignore, self.extend_select, self.preview)


DEFAULT_SETTINGS = Settings()
