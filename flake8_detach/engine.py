"""The one engine behind every front: parse once, interpret once, run the selected rules.

Cost matters because flake8 runs every installed plugin on every file, whatever
`--select` says. So a file is first screened from its text (and flake8's free
`ast` tree when there is one); only a file that imports torch and mentions an
attribute some rule cares about is parsed with libcst.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst

from .analysis.imports import ImportTable
from .analysis.interpreter import Facts, Interpreter
from .diagnostics import Diagnostic, Finding
from .fixes import restyle
from .positions import start_positions
from .rules import Rule, selected_rules

_TORCH_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+torch\b|import[ \t]+(?:[^\n#]*[, \t])?torch\b)", re.MULTILINE)


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # Dotted names of project context managers/decorators that turn grad off.
    no_grad_contexts: frozenset[str] = frozenset()
    # Dotted names of extra functions that call .numpy() on their argument (DET106).
    converting_functions: frozenset[str] = frozenset()
    # How fixes spell the conversion: "chain" (.detach().cpu().numpy()) or "force" (.numpy(force=True)).
    fix_style: str = "chain"

    def rules(self) -> tuple[Rule, ...]:
        return selected_rules(self.select, self.ignore)


DEFAULT_SETTINGS = Settings()


class AnalysisError(Exception):
    """The file could not be analysed (libcst cannot parse it, or it is too deeply nested)."""


@dataclass
class Analysis:
    """Everything one run over a file produced; fixers need the tree and the findings."""

    module: cst.Module | None
    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    facts: Facts | None = None


def _candidate_pattern(rules: tuple[Rule, ...]) -> re.Pattern[str] | None:
    names = sorted({name for rule in rules for name in rule.candidate_attributes})
    if not names:
        return None
    # `from torch.utils.data import X` is not a use of `.data`.
    return re.compile(r"\.\s*(?:%s)\b(?![ \t]+import\b)" % "|".join(map(re.escape, names)))


_PATTERNS: dict[tuple[Rule, ...], re.Pattern[str] | None] = {}


def has_candidates(source: str, rules: tuple[Rule, ...], tree: ast.AST | None = None) -> bool:
    """Cheap screen: could any rule fire on this file at all?"""
    if "torch" not in source or not _TORCH_IMPORT.search(source):
        return False
    pattern = _PATTERNS.get(rules)
    if rules not in _PATTERNS:
        pattern = _PATTERNS[rules] = _candidate_pattern(rules)
    if pattern is None or not pattern.search(source):
        return False
    if tree is None:
        return True
    names = {name for rule in rules for name in rule.candidate_attributes}
    return any(isinstance(node, ast.Attribute) and node.attr in names for node in ast.walk(tree))


def parse(source: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise AnalysisError(f"libcst cannot parse this file: {str(error).splitlines()[0]}") from error
    except RecursionError as error:
        raise AnalysisError("the file is nested too deeply to parse") from error
    except Exception as error:  # noqa: BLE001 - the native parser can fail in other ways
        raise AnalysisError(f"libcst cannot parse this file: {type(error).__name__}: {error}") from error


def analyze_module(module: cst.Module, settings: Settings = DEFAULT_SETTINGS) -> Analysis:
    """Run the selected rules over an already parsed module."""
    rules = settings.rules()
    imports = ImportTable.from_module(module)
    if not imports.imports_torch or not rules:
        return Analysis(module)
    try:
        facts = Interpreter(module, imports, settings.no_grad_contexts).run()
        findings = [finding for rule in rules for finding in rule.check(facts)]
        if settings.fix_style != "chain":  # the rules build explicit chains; `force` rewrites them
            findings = [restyle(finding, settings.fix_style) for finding in findings]
        positions = start_positions(module, (finding.node for finding in findings))
    except RecursionError as error:
        raise AnalysisError("the file is nested too deeply to analyse") from error
    seen: set[tuple[str, int, int]] = set()
    diagnostics: list[Diagnostic] = []
    for finding in findings:
        line, column = positions[finding.node]
        key = (finding.code, line, column)
        if key in seen:
            continue
        seen.add(key)
        diagnostics.append(Diagnostic(finding.code, line, column, finding.message, finding.fix))
    diagnostics.sort(key=Diagnostic.sort_key)
    return Analysis(module, findings, diagnostics, facts)


def analyze(source: str, settings: Settings = DEFAULT_SETTINGS, tree: ast.AST | None = None) -> Analysis:
    """Screen, parse and analyse one file's text. Raises AnalysisError on files it cannot read."""
    if not has_candidates(source, settings.rules(), tree):
        return Analysis(None)
    return analyze_module(parse(source), settings)


def check_source(source: str, settings: Settings = DEFAULT_SETTINGS, tree: ast.AST | None = None) -> list[Diagnostic]:
    return analyze(source, settings, tree).diagnostics
