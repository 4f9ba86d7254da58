"""The one engine behind every front: parse once, interpret once, run the selected rules.

Cost matters because flake8 runs every installed plugin on every file, whatever
`--select` says. So a file is first screened from its text (and flake8's free
`ast` tree when there is one); only a file that imports torch and mentions an
attribute some rule cares about is parsed with libcst.
"""

from __future__ import annotations

import ast
import functools
import gc
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

import libcst as cst
from libcst._nodes.base import CSTNode

from .analysis.facts import Facts
from .analysis.imports import ImportTable
from .analysis.interpreter import Interpreter
from .analysis.project import ProjectView
from .diagnostics import RELATED_PLACE, AnalysisError, Diagnostic, Finding, line_place
from .fixing.rewrites import restyle
from .place import Place, current_place, located
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


def nesting_depth(tree: ast.AST) -> int:
    """How many nodes deep the tree goes, counted without recursion.

    Reads the fields directly rather than through ``ast.iter_child_nodes`` and never stacks the
    field-less leaves (``Load``, ``Add``): three times faster, which matters because every file
    that passes the screen pays it.
    """
    node_type = ast.AST
    deepest, stack = 0, [(tree, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > deepest:  # noqa: PLR1730 - max() costs a call per node here
            deepest = depth
        below = depth + 1
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, node_type):
                        push((item, below))
            elif isinstance(value, node_type):
                if value._fields:
                    push((value, below))
                elif below > deepest:
                    deepest = below
    return deepest


def _refuse_deep_nesting(source: str, tree: ast.AST | None) -> None:
    """Refuse, before libcst sees it, a file nested deeper than libcst's recursive visitors go.

    libcst parses a chain of thousands of calls in minutes (the time grows faster than the
    length) and then overflows the stack in its visitors; `ast` (flake8's free tree, or a fast
    parse here) measures the depth in milliseconds. Roughly 2.5 frames per level.
    """
    if tree is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes are not ours to report
                tree = ast.parse(source)
        except RecursionError as error:
            raise AnalysisError("the file is nested too deeply for Python to compile") from error
        except (SyntaxError, ValueError, MemoryError):
            return  # newer syntax than this Python's, or broken: libcst decides
    limit = sys.getrecursionlimit() * 2 // 5
    depth = nesting_depth(tree)
    if depth > limit:
        raise AnalysisError(f"the file is nested {depth} levels deep; flake8-detach analyses up to {limit}")


# A TypeVar bound to Callable rather than ParamSpec: ParamSpec is Python 3.10+, and a plugin
# that fails to import breaks every flake8 run, whatever --select says.
_F = TypeVar("_F", bound=Callable[..., Any])


def without_cyclic_gc(function: _F) -> _F:
    """Run ``function`` with Python's cycle collector paused.

    A libcst tree is millions of small objects with no cycles; with the collector on, its
    full passes over them make a file 100 times bigger take far more than 100 times longer
    (benchmarks/bench_scale.py). Anything cyclic left behind is collected once it is back on.
    """

    @functools.wraps(function)
    def paused(*args: Any, **kwargs: Any) -> Any:
        if not gc.isenabled():  # nested, or the host turned it off: leave it as it is
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return cast(_F, paused)


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


_UNVALIDATED_LOCK = threading.Lock()
_unvalidated_parses = 0
_VALIDATING_POST_INIT = CSTNode.__post_init__


def _skip_validation(node: CSTNode) -> None:
    """Nodes the parser builds are valid by construction."""


@contextmanager
def _parser_nodes_unvalidated() -> Iterator[None]:
    """Build the parser's nodes without libcst's per-node ``_validate``: a quarter of the parse.

    libcst validates every node in ``__post_init__`` (its own comment there calls this work
    wasted on parsing); the checks guard hand-built trees against mistakes, and a tree the
    parser accepted has none. Counted, so that parses overlapping in the language server's
    threads restore validation only when the last one ends.
    """
    global _unvalidated_parses
    with _UNVALIDATED_LOCK:
        _unvalidated_parses += 1
        CSTNode.__post_init__ = _skip_validation  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        with _UNVALIDATED_LOCK:
            _unvalidated_parses -= 1
            if not _unvalidated_parses:
                CSTNode.__post_init__ = _VALIDATING_POST_INIT  # type: ignore[method-assign,assignment]


@without_cyclic_gc
def parse(source: str, tree: ast.AST | None = None) -> cst.Module:
    """libcst's tree of ``source``; :class:`AnalysisError` (one line) when there is none."""
    _refuse_deep_nesting(source, tree)
    try:
        with _parser_nodes_unvalidated():
            return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise AnalysisError(f"libcst cannot parse this file: {str(error).splitlines()[0]}") from error
    except RecursionError as error:
        raise AnalysisError("the file is nested too deeply to parse") from error
    except Exception as error:
        raise AnalysisError(f"libcst cannot parse this file: {type(error).__name__}: {error}") from error


def project_of(place: Place | None, source: str | None) -> ProjectView | None:
    """The project view of a file at ``place``; None without one (and never an exception)."""
    if place is None:
        place = current_place()
    if place is None:
        return None
    from .analysis.project import project_view

    try:
        return project_view(place.path, source, place.cache_directory)
    except (OSError, ValueError, RecursionError):
        return None


@without_cyclic_gc
def analyze_module(
    module: cst.Module, settings: Settings = DEFAULT_SETTINGS, source: str | None = None, tree: ast.AST | None = None,
    place: Place | None = None, project: ProjectView | None = None,
) -> Analysis:
    """Run the selected rules over an already parsed module.

    With the module's ``source`` and its ``ast`` ``tree`` (flake8 gives one), positions cost
    the statements that hold a diagnostic only. With its ``place`` (or the ``project`` view of
    it), imports of the project's own modules are read from their summaries.
    """
    rules = selected_rules(settings.select, settings.ignore, settings.extend_select, settings.preview)
    try:
        imports = ImportTable.from_module(module)
    except RecursionError as error:
        raise AnalysisError("the file is nested too deeply to analyse") from error
    if not imports.imports_torch or not rules:
        return Analysis(module)
    try:
        if project is None:
            project = project_of(place, source)
        facts = Interpreter(module, imports, settings.no_grad_contexts, settings.converting_functions, project).run()
        findings = [finding for rule in rules for finding in rule.check(facts)]
        if settings.fix_style != "chain":  # the rules build explicit chains; `force` rewrites them
            findings = [restyle(finding, settings.fix_style) for finding in findings]
        wanted = [finding.node for finding in findings]
        wanted += [finding.related for finding in findings if finding.related is not None]
        if source is not None and tree is not None:
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
    return Analysis(module, findings, diagnostics, facts)


def analyze(source: str, settings: Settings = DEFAULT_SETTINGS, tree: ast.AST | None = None,
            place: Place | None = None) -> Analysis:
    """Screen, parse and analyse one file's text. Raises AnalysisError on files it cannot read."""
    if not worth_analysing(source, settings, tree):
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


def witnessing(place: Place | None, source: str | None) -> ProjectView | None:
    """The project view of a file that records what the analysis asks (analysis/witness.py)."""
    project = project_of(place, source)
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
    project = witnessing(place, source)
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
    diagnostics = analyze_module(parse(source, tree), settings, source, tree, place, project).diagnostics
    return [replace(diagnostic, fix=None) for diagnostic in diagnostics]


def check_source(source: str, settings: Settings = DEFAULT_SETTINGS, tree: ast.AST | None = None) -> list[Diagnostic]:
    return analyze(source, settings, tree).diagnostics
