"""The flake8 front: a thin adapter from flake8's (tree, lines) to the engine.

flake8 imports this module on every run, for every project, whatever `--select` says, so it
imports neither libcst nor the engine: the screen (text, then flake8's free `ast` tree) decides
first, and only a file that passes it loads the engine. If the engine cannot be loaded at all
(a broken install), each file that needs it gets one DET000 line; flake8 itself keeps working.
"""

from __future__ import annotations

import argparse
import ast
import functools
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flake8.exceptions import ExecutionError

from . import __version__
from .catalog import OPT_IN_CODES
from .screening import worth_analysing
from .settings import ConfigError, Settings, validate_dotted_names, validate_fix_style

LOG = logging.getLogger("flake8_detach")


def _comma_list(value: str | list[str] | None) -> list[str]:
    if not value:
        return []
    items = value if isinstance(value, list) else value.split(",")
    return [item.strip() for item in items if item.strip()]


@functools.lru_cache(maxsize=1)
def _results_cache() -> Any:
    """The results cache (``.flake8_detach_cache``, or $FLAKE8_DETACH_CACHE_DIR), opened once per
    process when the first file passes the screen; its folder also stores the project index's
    summaries, as `check`'s does, so that flake8's workers and later runs share them. None when
    the folder cannot be made (summaries then stay in memory) or caching is off."""
    from .analysis.project import use_summary_directory
    from .sources.cache import ResultsCache, default_directory

    cache = ResultsCache.open(default_directory())
    use_summary_directory(cache.directory if cache is not None else None)
    return cache if DetachPlugin.use_cache else None


def _on_disk(filename: str) -> bool:
    """Whether flake8 names a file on disk (not standard input): one with a project around it."""
    return filename not in ("stdin", "-") and os.path.isfile(filename)


def _place(filename: str, on_disk: bool) -> Any:
    """The engine's Place of the file flake8 names (``on_disk``: `_on_disk(filename)`), or None
    for standard input."""
    if not on_disk:
        return None
    from .place import Place

    _results_cache()
    return Place.of(filename)


def _cache_entry(data: bytes, place: Any, settings: Settings) -> tuple[Any, str, str] | None:
    """The results cache and two keys of this file's flake8 result, or None (no file on disk, or
    caching off). Both hold the file's text (``data``, encoded), the settings and the engine's
    code. The first also holds its project's fingerprint: a hit needs no engine at all. The
    second does not: its entry keeps the witness of what the analysis asked the project, and is
    the result while the witness holds (analysis/witness.py), after edits elsewhere."""
    cache = _results_cache() if place is not None else None
    if cache is None:
        return None
    from .analysis.project import project_fingerprint
    from .sources.cache import MODE_FLAKE8

    try:
        kind = f".py\0{project_fingerprint(Path(place.path))}"
    except (OSError, ValueError, RecursionError):
        return None
    return cache, cache.key(data, kind, settings, MODE_FLAKE8), cache.witnessed_key(data, ".py", settings, MODE_FLAKE8)


def _witnessed_hit(cache: Any, key: str, place: Any, source: str, data: bytes) -> Any:
    """The report stored with a witness under ``key`` when the witness holds in the project now."""
    from .analysis.project import witness_holds

    return cache.get_if_witnessed(key, str(place.path), data,
                                  lambda witness: witness_holds(place.path, source, place.cache_directory, witness))


class DetachPlugin:
    name = "flake8-detach"
    version = __version__
    # Every code is computed (DET111 included) and flake8's own selection decides what is shown:
    # the opt-in codes are default-ignored (add_options), as flake8-bugbear's B9xx are.
    settings = Settings(preview=True)
    use_cache = True  # --detach-no-cache turns the results cache off (summaries still go to its folder)

    def __init__(self, tree: ast.AST, lines: list[str], filename: str = "stdin") -> None:
        self.tree = tree
        self.lines = lines
        # Where the file lives, for the project index; flake8 names standard input "stdin" (or
        # `--stdin-display-name`, which may be any text: only a name of an existing file counts).
        self.filename = filename

    @classmethod
    def add_options(cls, parser: Any) -> None:
        # Off unless `--select`/`--extend-select` names them (flake8-bugbear's B9xx mechanism).
        parser.extend_default_ignore(sorted(OPT_IN_CODES))
        parser.add_option(
            "--detach-no-grad-contexts",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="Dotted names of project context managers or decorators that disable grad "
            "(e.g. myproject.utils.evaluating).",
        )
        parser.add_option(
            "--detach-converting-functions",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="Dotted names of project functions that call .numpy() on their argument "
            "(e.g. myproject.utils.to_numpy).",
        )
        parser.add_option(
            "--detach-no-cache",
            default=False,
            action="store_true",
            parse_from_config=True,
            help="Neither read nor write flake8-detach's results cache (.flake8_detach_cache, or "
            "$FLAKE8_DETACH_CACHE_DIR): every file that passes the screen is analysed again.",
        )
        parser.add_option(
            "--detach-fix-style",
            default="chain",
            parse_from_config=True,
            help="How fixes write the conversion: chain (.detach().cpu().numpy(), the default) or "
            "force (.numpy(force=True), torch >= 1.13).",
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        try:
            contexts = validate_dotted_names(
                "detach-no-grad-contexts", _comma_list(getattr(options, "detach_no_grad_contexts", None)), "flake8"
            )
            converting = validate_dotted_names(
                "detach-converting-functions",
                _comma_list(getattr(options, "detach_converting_functions", None)),
                "flake8",
            )
            fix_style = validate_fix_style(
                "detach-fix-style", getattr(options, "detach_fix_style", None) or "chain", "flake8"
            )
        except ConfigError as error:
            raise ExecutionError(f"flake8-detach: --{error.key}: {error.message}") from error
        cls.settings = Settings(no_grad_contexts=contexts, converting_functions=converting, fix_style=fix_style,
                                preview=True)
        cls.use_cache = not getattr(options, "detach_no_cache", False)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        # flake8 has already decoded the file (BOM, coding cookie) into `lines`; reading
        # from them, never from disk, is what makes `flake8 -` and editors' buffers work.
        source = "".join(self.lines)
        try:
            on_disk = _on_disk(self.filename)
            if not worth_analysing(source, self.settings, self.tree, in_project=on_disk):
                return
            place = _place(self.filename, on_disk)
            data = source.encode("utf-8", "surrogatepass") if place is not None else b""
            entry = _cache_entry(data, place, self.settings)
            if entry is not None:
                cache, key, witnessed_key = entry
                hit = cache.get(key, str(place.path), data)
                if hit is None:  # the project changed: the result stands if nothing it asked did
                    hit = _witnessed_hit(cache, witnessed_key, place, source, data)
                    if hit is not None:
                        cache.put(key, hit)
                if hit is not None:  # the engine (and libcst) is not even imported
                    for diagnostic in hit.diagnostics:
                        yield diagnostic.line, diagnostic.column, diagnostic.message, type(self)
                    return
            from .engine import AnalysisError, report_diagnostics, settle_imports, witnessed_report

            settle_imports()
        except Exception as error:  # noqa: BLE001 - a broken install must not break flake8
            LOG.warning("flake8-detach: cannot load the engine: %r", error)
            yield 1, 0, f"DET000 flake8-detach cannot load its engine, file skipped: {error!r}", type(self)
            return
        witness = None
        try:
            if entry is None:
                found = report_diagnostics(source, self.settings, self.tree, place)
            else:
                found, witness = witnessed_report(source, self.settings, self.tree, place)
        except AnalysisError as error:
            yield 1, 0, f"DET000 flake8-detach skipped this file: {error}", type(self)
            return
        except Exception as error:  # noqa: BLE001 - never a traceback inside flake8
            LOG.warning("flake8-detach: internal error, file skipped: %r", error)
            yield 1, 0, f"DET000 flake8-detach skipped this file after an internal error: {error!r}", type(self)
            return
        if entry is not None:
            from .reporting.model import FileReport

            report = FileReport(str(place.path), found)
            cache.put(key, report)
            if witness is not None:
                cache.put(witnessed_key, report, witness)
        for diagnostic in found:
            yield diagnostic.line, diagnostic.column, diagnostic.message, type(self)
