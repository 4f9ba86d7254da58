"""libcst's parse of a file, as every analysis wants it: refused before libcst sees a file nested
deeper than its recursive visitors go, built without the per-node validation a parser's nodes do
not need, and with the cycle collector paused.

The engine parses the files it lints with :func:`parse`; the project index (analysis/exports.py)
parses the files whose exports it computes with :func:`parse_unvalidated`, the same tree at the
same cost (it has no `ast` tree to measure the nesting with, and catches RecursionError itself).
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
from typing import Any, TypeVar, cast

import libcst as cst
from libcst._nodes.base import CSTNode

from .ast_bridge import BridgedModule, Unbridgeable, bridge
from .diagnostics import AnalysisError


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
            tree = quiet_ast_parse(source)
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


def parse_unvalidated(source: str) -> cst.Module:
    """libcst's own parse, its nodes built unvalidated; its exceptions pass through (a caller that
    has no `ast` tree to measure the nesting with catches RecursionError)."""
    with _parser_nodes_unvalidated():
        return cst.parse_module(source)


@without_cyclic_gc
def parse(source: str, tree: ast.AST | None = None) -> cst.Module:
    """libcst's tree of ``source``; :class:`AnalysisError` (one line) when there is none."""
    _refuse_deep_nesting(source, tree)
    try:
        return parse_unvalidated(source)
    except cst.ParserSyntaxError as error:
        raise AnalysisError(f"libcst cannot parse this file: {str(error).splitlines()[0]}") from error
    except RecursionError as error:
        raise AnalysisError("the file is nested too deeply to parse") from error
    except Exception as error:
        raise AnalysisError(f"libcst cannot parse this file: {type(error).__name__}: {error}") from error


def quiet_ast_parse(source: str) -> ast.Module:
    """``ast.parse``, its SyntaxWarnings (invalid escapes) silenced: not ours to report."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


def bridged(source: str, tree: ast.AST | None = None) -> BridgedModule | None:
    """libcst's tree of ``source`` built from its `ast` tree (ast_bridge.py), None where the bridge
    cannot build it (then :func:`parse` does); refused, as :func:`parse` refuses it, when nested
    too deeply."""
    try:
        module_tree = tree if isinstance(tree, ast.Module) else quiet_ast_parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    _refuse_deep_nesting(source, module_tree)
    try:
        return bridge(module_tree, source)
    except Unbridgeable:
        return None
