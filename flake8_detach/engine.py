"""The one engine behind every front: parse once, interpret once, run the selected rules.

Cost matters because flake8 runs every installed plugin on every file, whatever
`--select` says. So a file is first screened from its text (and flake8's free
`ast` tree when there is one); only a file that imports torch and mentions an
attribute some rule cares about is analysed. On the flake8 path its libcst tree is
built from that `ast` tree (ast_bridge.py); the fronts that write code parse with libcst.
"""

from __future__ import annotations

import ast
import functools
import gc
from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst

from .analysis.facts import Facts
from .analysis.imports import ImportTable
from .analysis.interpreter import Interpreter
from .analysis.project import ProjectView
from .ast_bridge import BridgedModule, Unbridgeable
from .diagnostics import RELATED_PLACE, AnalysisError, Diagnostic, Finding, line_place
from .fixing.rewrites import restyle
from .parsing import bridged, parse, without_cyclic_gc
from .place import Place, current_place, located, located_path
from .positions import start_positions, statement_start_positions
from .rules import selected_rules
from .screening import worth_analysing
from .settings import DEFAULT_SETTINGS, Settings

__all__ = [
    "DEFAULT_SETTINGS",
    "Analysis",
    "AnalysisError",
    "Place",
    "Settings",
    "analyze",
    "analyze_module",
    "check_source",
    "located",
    "parse",
    "report_lines",
    "worth_analysing",
]


@dataclass
class Analysis:
    """Everything one run over a file produced; fixers need the tree and the findings."""

    module: cst.Module | None
    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    facts: Facts | None = None


@functools.lru_cache(maxsize=1)
def settle_imports() -> None:
    """Once per process, when a front that lints many files first loads the engine (flake8's
    plugin, `check`, and the language server through `check`'s functions): move what is alive
    now (libcst's and the host's modules, classes and functions, tens of thousands of objects
    that live until the process ends) out of reach of the cycle collector (`gc.freeze`), so that
    its full passes do not walk them again for every file. Frozen objects are still freed by
    their reference counts; only a cycle alive now and dropped later would stay."""
    gc.collect()  # nothing cyclic that is already garbage is kept
    gc.freeze()


def project_of(place: Place | None, source: str | None, tree: ast.AST | None = None) -> ProjectView | None:
    """The project view of a file at ``place``; None without one (and never an exception).
    ``tree``: ``source``'s `ast` tree, where the front has it."""
    if place is None:
        place = current_place()
    if place is None:
        return None
    from .analysis.project import project_view

    try:
        return project_view(place.path, source, place.cache_directory,
                            tree if isinstance(tree, ast.Module) else None)
    except (OSError, ValueError, RecursionError):
        return None


@without_cyclic_gc
def analyze_module(
    module: cst.Module, settings: Settings = DEFAULT_SETTINGS, source: str | None = None, tree: ast.AST | None = None,
    place: Place | None = None, project: ProjectView | None = None, built: BridgedModule | None = None,
    plain: bool = False,
) -> Analysis:
    """Run the selected rules over an already parsed module.

    With the module's ``source`` and its ``ast`` ``tree`` (flake8 gives one), positions cost
    the statements that hold a diagnostic only. With its ``place`` (or the ``project`` view of
    it), imports of the project's own modules are read from their summaries. A module built from
    the `ast` tree (``built``, ast_bridge.py) gives its positions itself, or raises :class:`Unbridgeable`.
    With ``plain``, only the diagnostics are read afterwards: the interpreter's records are
    released as soon as the rules ran (Interpreter.release), and the facts are not returned.
    """
    rules = selected_rules(settings.select, settings.ignore, settings.extend_select, settings.preview)
    try:
        imports = ImportTable.from_module(module)
    except RecursionError as error:
        raise AnalysisError("the file is nested too deeply to analyse") from error
    if imports.star and rules:  # `from models import *`: torch and the project's names may come in
        if project is None:
            project = project_of(place, source)
        if project is not None:
            imports.add_star_names(project.star_names())
    if not rules:
        return Analysis(module)
    try:
        if project is None:
            project = project_of(place, source)
        if not imports.imports_torch and project is None:  # a file alone: nothing can pass it tensors
            return Analysis(module)
        interpreter = Interpreter(module, imports, settings.no_grad_contexts, settings.converting_functions, project,
                                  source=source)
        facts = interpreter.run()
        findings = [finding for rule in rules for finding in rule.check(facts)]
        if plain:
            interpreter.release()
        if settings.fix_style != "chain":  # the rules build explicit chains; `force` rewrites them
            findings = [restyle(finding, settings.fix_style) for finding in findings]
        wanted = [finding.node for finding in findings]
        wanted += [finding.related for finding in findings if finding.related is not None]
        if built is not None:
            positions = _bridged_positions(built, wanted)
        elif source is not None and tree is not None:
            positions = statement_start_positions(module, wanted, facts.top_statements, source, tree)
        else:
            positions = start_positions(module, wanted)
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
        related = positions[finding.related] if finding.related is not None else None
        template = finding.message if related is not None and RELATED_PLACE in finding.message else None
        message = finding.message if template is None or related is None else template.replace(
            RELATED_PLACE, line_place(related[0]))
        diagnostics.append(Diagnostic(finding.code, line, column, message, finding.fix, related, template))
    diagnostics.sort(key=Diagnostic.sort_key)
    return Analysis(module, findings, diagnostics, None if plain else facts)


def analyze(source: str, settings: Settings = DEFAULT_SETTINGS, tree: ast.AST | None = None,
            place: Place | None = None) -> Analysis:
    """Screen, parse and analyse one file's text. Raises AnalysisError on files it cannot read."""
    if not worth_analysing(source, settings, tree, in_project=place is not None or located_path() is not None):
        return Analysis(None)
    return analyze_module(parse(source, tree), settings, source, tree, place)


@without_cyclic_gc
def report_diagnostics(source: str, settings: Settings = DEFAULT_SETTINGS, tree: ast.AST | None = None,
                       place: Place | None = None, project: ProjectView | None = None) -> list[Diagnostic]:
    """The diagnostics of a file that passed the screen, without their fixes: the flake8 front.

    Only plain values come back, so the libcst tree dies here, while the cycle collector is
    still paused, and what the analysis left in reference cycles is collected at once, while
    it is all that is young. Handed back alive, the tree's nodes would be traversed by the
    collector's passes over flake8's large heap, which cost more than the analysis.
    """
    found = _plain_report(source, settings, tree, place, project)  # the tree and the facts die with its frame
    gc.collect(0)  # what they left in cycles (the interpreter's scopes): young, few, cheap to find now
    return found


def witnessing(place: Place | None, source: str | None, tree: ast.AST | None = None) -> ProjectView | None:
    """The project view of a file that records what the analysis asks (analysis/witness.py)."""
    project = project_of(place, source, tree)
    if project is not None:
        project.witness = {}
    return project


def witness_of(project: ProjectView | None) -> list[Any] | None:
    """What a recording view was asked, as the results cache keeps it; recording stops."""
    from .analysis.witness import to_data

    if project is None or project.witness is None:
        return None
    questions, project.witness = project.witness, None
    return to_data(questions)


def witnessed_report(source: str, settings: Settings, tree: ast.AST | None,
                     place: Place) -> tuple[list[Diagnostic], list[Any] | None]:
    """:func:`report_diagnostics`, with the witness of what the analysis asked its project; None
    when there was no project to ask, or too much was asked."""
    project = witnessing(place, source, tree)
    try:
        found = report_diagnostics(source, settings, tree, place, project)
    finally:
        witness = witness_of(project)
    return found, witness


def report_lines(source: str, settings: Settings = DEFAULT_SETTINGS, tree: ast.AST | None = None,
                 place: Place | None = None) -> list[tuple[int, int, str]]:
    """(line, column, message) of each diagnostic of a file that passed the screen."""
    return [(d.line, d.column, d.message) for d in report_diagnostics(source, settings, tree, place)]


def _plain_report(source: str, settings: Settings, tree: ast.AST | None,
                  place: Place | None = None, project: ProjectView | None = None) -> list[Diagnostic]:
    """The diagnostics of the tree built from flake8's `ast` tree (ast_bridge.py: no libcst parse),
    or of libcst's own tree where the bridge cannot say something (a construct it does not
    build, a position `ast` does not give)."""
    diagnostics: list[Diagnostic] | None = None
    built = bridged(source, tree)
    if built is not None:
        try:  # a fall-back run asks the project the same questions: the witness stays what it needs
            diagnostics = analyze_module(built.module, settings, source, tree, place, project, built,
                                         plain=True).diagnostics
        except Unbridgeable:
            pass
    if diagnostics is None:
        diagnostics = analyze_module(parse(source, tree), settings, source, tree, place, project,
                                     plain=True).diagnostics
    return [replace(diagnostic, fix=None) for diagnostic in diagnostics]


def _bridged_positions(built: BridgedModule, nodes: list[cst.CSTNode]) -> dict[cst.CSTNode, tuple[int, int]]:
    positions = {}
    for node in nodes:
        start = built.start(node)
        if start is None:
            raise Unbridgeable(f"no position for a {type(node).__name__}")
        positions[node] = start
    return positions


def check_source(source: str, settings: Settings = DEFAULT_SETTINGS, tree: ast.AST | None = None) -> list[Diagnostic]:
    return analyze(source, settings, tree).diagnostics
