"""Decide cheaply whether a file is worth parsing with libcst at all.

flake8 runs every installed plugin on every file, so most files must cost next to nothing:
first the text (does it import torch, does it mention an attribute some rule cares about),
then flake8's free `ast` tree, where each rule looks at its candidate attribute nodes with
what the file imports (`ScreenContext`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .screen_context import ScreenContext

if TYPE_CHECKING:
    from .catalog import RuleScreen
    from .settings import Settings

TORCH_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+torch\b|import[ \t]+(?:[^\n#]*[, \t])?torch\b)", re.MULTILINE)
# `from models import *`: torch may come in with the names of a project module (the engine asks
# the project, Project.star_names).
STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\*", re.MULTILINE)


def may_import_torch(source: str) -> bool:
    """Whether the file imports torch, or may through a star import (it names torch then)."""
    return "torch" in source and bool(TORCH_IMPORT.search(source) or STAR_IMPORT.search(source))


def _import_pattern(modules: frozenset[str]) -> re.Pattern[str]:
    names = "|".join(sorted(map(re.escape, modules)))
    return re.compile(
        rf"^[ \t]*(?:from[ \t]+(?:{names})\b|import[ \t]+(?:[^\n#]*[, \t])?(?:{names})\b)", re.MULTILINE
    )


def _attribute_pattern(names: frozenset[str]) -> re.Pattern[str]:
    # `from torch.utils.data import X` is not a use of `.data`.
    alternatives = "|".join(sorted(map(re.escape, names)))
    return re.compile(rf"\.\s*(?:{alternatives})\b(?![ \t]+import\b)")


_IMPORT_PATTERNS: dict[frozenset[str], re.Pattern[str]] = {}
_ATTRIBUTE_PATTERNS: dict[frozenset[str], re.Pattern[str]] = {}


def _cached(cache: dict[frozenset[str], re.Pattern[str]], key: frozenset[str],
            build: Callable[[frozenset[str]], re.Pattern[str]]) -> re.Pattern[str]:
    pattern = cache.get(key)
    if pattern is None:
        pattern = cache[key] = build(key)
    return pattern


def active_rules(source: str, rules: tuple[RuleScreen, ...]) -> tuple[RuleScreen, ...]:
    """The rules that can apply: one with `required_modules` needs the file to import one, and
    one with `required_text` needs its pattern somewhere in the text."""
    return tuple(
        rule for rule in rules
        if (not rule.required_modules
            or _cached(_IMPORT_PATTERNS, rule.required_modules, _import_pattern).search(source))
        and (rule.required_text is None or rule.required_text.search(source))
    )


def has_candidates(source: str, rules: tuple[RuleScreen, ...], tree: ast.AST | None = None,
                   extra: frozenset[str] = frozenset(), in_project: bool = False) -> bool:
    """Could any rule fire on this file? ``extra``: names of configured converting functions.
    ``in_project``: the file lives in a project, whose other files may pass its functions tensors
    (then it is screened by its candidates even where it never imports torch)."""
    if not in_project and not may_import_torch(source):
        return False
    if extra and any(re.search(rf"\b{re.escape(name)}\b", source) for name in extra):
        return True
    active = active_rules(source, rules)
    screen = _Screen(source, tree)
    if screen.any_candidate(tuple(rule for rule in active if not rule.sinks_of)):
        return True
    gated = tuple(rule for rule in active if rule.sinks_of)
    if not gated or not screen.any_candidate(gated):
        return False
    sinks = tuple({id(sink): sink for rule in gated for sink in rule.sinks_of}.values())
    return screen.any_candidate(active_rules(source, sinks))


class _Screen:
    """One file's text and (parsed at most once, only if a rule needs it) its `ast` tree."""

    def __init__(self, source: str, tree: ast.AST | None) -> None:
        self.source = source
        self.tree = tree
        self._context: ScreenContext | None = None

    def any_candidate(self, rules: tuple[RuleScreen, ...]) -> bool:
        """Whether one of ``rules`` has a candidate attribute node, or (for a rule that asks
        for them) imports that make the file a candidate."""
        if not rules:
            return False
        names = frozenset().union(*(rule.candidate_attributes for rule in rules))
        text_hit = bool(names) and bool(_cached(_ATTRIBUTE_PATTERNS, names, _attribute_pattern).search(self.source))
        # `from numpy import asarray` has no `.asarray` in the text: only the imports can tell.
        if not text_hit and not any(rule.reads_imports for rule in rules):
            return False
        if self.tree is None:
            if text_hit:
                return True
            try:
                self.tree = ast.parse(self.source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return True  # let libcst decide (newer syntax than this Python's, say)
        if self._context is None:
            self._context = ScreenContext(self.tree)
        context = self._context
        if text_hit:
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Attribute) and node.attr in names and any(
                    node.attr in rule.candidate_attributes and rule.attribute(node, context) for rule in rules
                ):
                    return True
        return any(rule.imports(context) for rule in rules)


def worth_analysing(source: str, settings: Settings, tree: ast.AST | None = None, in_project: bool = False) -> bool:
    """The screen every front uses: could a selected rule (or a configured converter) fire here?"""
    extra = frozenset(name.rsplit(".", 1)[-1] for name in settings.converting_functions)
    return has_candidates(source, settings.screens(), tree, extra, in_project)
