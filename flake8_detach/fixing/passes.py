"""Apply the rules' fixes to a parsed libcst module, in passes, as ruff does.

Each pass analyses the current code, applies every selected fix whose node does not overlap
another's, and re-analyses; it stops when a pass changes nothing (at most :data:`MAX_PASSES`).
That is how DET101 (`.detach()`) and DET104 (`.cpu()`) on one `.numpy()` combine into
`.detach().cpu().numpy()`. The text and file fronts are in :mod:`flake8_detach.fixing.fixer`; the
libcst codemods drive :func:`fix_module` with their own node swapper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import libcst as cst

from ..diagnostics import AnalysisError, Diagnostic
from ..engine import analyze_module, parse
from ..settings import DEFAULT_SETTINGS, Settings
from ..suppression import unsuppressed
from .no_grad_blocks import Replacement, replacements, with_imports

MAX_PASSES = 10

Replacements = Mapping[cst.CSTNode, Replacement]
# Applies one pass of replacements to a module; the codemods pass their own visitor.
Applier = Callable[[cst.Module, Replacements], cst.Module]


@dataclass
class ModuleFixResult:
    module: cst.Module
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)


class _ReplaceNodes(cst.CSTTransformer):
    """Swap nodes (by identity) for their replacements; fixes in one pass never nest."""

    def __init__(self, replacements: Replacements) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        return self.replacements.get(original_node, updated_node)


def replace_nodes(module: cst.Module, replacements: Replacements) -> cst.Module:
    return module.visit(_ReplaceNodes(replacements))


def _subtree(node: cst.CSTNode) -> set[int]:
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        seen.add(id(current))
        stack.extend(current.children)
    return seen


def choose_fixes(diagnostics: Iterable[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    """Diagnostics whose fixes can be applied together: allowed, and on disjoint nodes.

    A fix that touches (contains, or lies inside) a node another chosen fix replaces waits for
    the next pass, where it is recomputed on the rewritten code.
    """
    chosen: list[Diagnostic] = []
    taken: set[int] = set()  # every node inside a chosen fix's node
    roots: set[int] = set()  # the chosen fixes' nodes
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        if fix is None or not (fix.safe or unsafe):
            continue
        inside = _subtree(fix.node)
        if id(fix.node) in taken or inside & roots:
            continue
        chosen.append(diagnostic)
        taken |= inside
        roots.add(id(fix.node))
    return chosen


def fix_module(
    module: cst.Module,
    settings: Settings = DEFAULT_SETTINGS,
    *,
    unsafe: bool = False,
    apply: Applier = replace_nodes,
) -> ModuleFixResult:
    """Fix a parsed module in passes; raises :class:`AnalysisError` if it cannot be analysed."""
    applied: list[Diagnostic] = []
    for pass_number in range(MAX_PASSES + 1):
        source = module.code
        # What flake8 would not report (a noqa comment silences it) is not fixed either.
        diagnostics = unsuppressed(source, analyze_module(module, settings).diagnostics)
        chosen = choose_fixes(diagnostics, unsafe) if pass_number < MAX_PASSES else []
        if not chosen:
            break
        fixes = [d.fix for d in chosen if d.fix is not None]
        fixed = with_imports(apply(module, replacements(module, fixes)), fixes)
        code = fixed.code
        if code == source:
            break
        try:
            module = parse(code)  # fresh nodes, and the proof that the fixed text parses
        except AnalysisError:
            break
        applied.extend(chosen)
    return ModuleFixResult(module, applied, diagnostics)
