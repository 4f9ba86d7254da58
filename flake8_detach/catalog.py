"""What the screen knows of each rule: its code, the attributes that make a file a candidate, the
modules it needs, and its cheap look at flake8's `ast` tree.

Kept apart from the rule classes (which import libcst) so that a file with nothing to report
costs flake8 no libcst import at all. The rule classes find their entry here by code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from .analysis import array_facts
from .analysis import semantics as sem
from .analysis.semantics import (
    AXES_FACTORIES,
    DEVICE_MOVES,
    NUMPY_CONVERTING,
    NUMPY_REDUCTIONS,
    NUMPY_SCALAR_CONVERTING,
    PLOTTING,
    SEABORN_PLOTTING,
    SKLEARN_CONVERTING_METHODS,
    SKLEARN_METRICS,
)
from .screen_context import ScreenContext


def _any_attribute(node: ast.Attribute, context: ScreenContext) -> bool:
    return True


def _no_import(context: ScreenContext) -> bool:
    return False


@dataclass(frozen=True)
class AnyOf:
    """A text test of several patterns, searched one by one (each fast on its own; see
    ``array_facts.LAYOUT_HAZARD_TEXTS``)."""

    patterns: tuple[re.Pattern[str], ...]

    def search(self, text: str) -> bool:
        return any(pattern.search(text) for pattern in self.patterns)


@dataclass(frozen=True)
class RuleScreen:
    code: str
    # Attribute names whose presence in a file makes it worth analysing for this rule.
    candidate_attributes: frozenset[str]
    # The rule can only fire in files importing one of these (empty: torch is enough).
    required_modules: frozenset[str] = frozenset()
    # A candidate attribute node of flake8's `ast` tree: could the rule fire on it?
    attribute: Callable[[ast.Attribute, ScreenContext], bool] = _any_attribute
    # Whether the file's imports alone make it a candidate (`from numpy import asarray`).
    imports: Callable[[ScreenContext], bool] = _no_import
    # Text the file must hold for the rule to fire at all (None: no such condition).
    required_text: re.Pattern[str] | AnyOf | None = None
    # Rules whose sinks this rule reports at: the file must hold a candidate of one of them too
    # (checked whether or not they are selected). DET107 reports a conversion, so a file with a
    # bfloat16 tensor and no `.numpy()` or implicit conversion has nothing for it.
    sinks_of: tuple[RuleScreen, ...] = ()

    @property
    def reads_imports(self) -> bool:
        """Whether the file's imports alone can make it a candidate (no attribute in the text)."""
        return bool(self.required_modules) or self.imports is not _no_import


def _after_device_move(node: ast.Attribute, context: ScreenContext) -> bool:
    move = node.value  # `.detach` right after a call to `.cpu()` / `.to()` / `.cuda()`
    return isinstance(move, ast.Call) and isinstance(move.func, ast.Attribute) and move.func.attr in DEVICE_MOVES


def _data_of_something_else(node: ast.Attribute, context: ScreenContext) -> bool:
    base = node.value  # not `self.data`, not a package's `data` (`torch.utils.data`, `tf.data`)
    if isinstance(base, ast.Name):
        return base.id not in ("self", "cls") and base.id not in context.modules
    return not (isinstance(base, ast.Attribute) and base.attr == "utils")


def _converting_attribute(node: ast.Attribute, context: ScreenContext) -> bool:
    if node.attr in PLOTTING or node.attr in AXES_FACTORIES or node.attr == "subplots":
        return context.imports("matplotlib")
    if node.attr in SKLEARN_CONVERTING_METHODS:  # `clf.fit(X, y)` of a scikit-learn estimator
        return context.imports("sklearn")
    qualified = context.resolve(node)
    return qualified is not None and sem.converting_kind(qualified) is not None


def _imports_converting_function(context: ScreenContext) -> bool:
    return any(sem.converting_kind(qualified) is not None for qualified in context.aliases.values())


# Where a float64 tensor comes from (DET109): float64 spelled out, or a NumPy array handed to
# torch (every such path goes through one of these calls) in a file that imports NumPy.
_FLOAT64_SPELLED = frozenset({"double", "float64", "DoubleTensor"})
_FLOAT64_FROM_NUMPY = frozenset({"from_numpy", "as_tensor", "asarray", "tensor"})
# `n(?<!\wn)` is `\bn`, written so that `re` can scan for the first letters (five times faster).
_FLOAT64_TEXT = re.compile(r"float64|double|DoubleTensor|n(?<!\wn)umpy\b")
# Where a tensor NumPy refuses comes from (DET107): bfloat16, autocast, sparse layouts, conjugation.
_UNSUPPORTED_SOURCES = frozenset(
    {"bfloat16", "BFloat16Tensor", "autocast", "conj", "mH", "to_sparse", "to_sparse_coo", "to_sparse_csr",
     "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc", "sparse_coo_tensor", "sparse_csr_tensor",
     "sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor", "sparse_compressed_tensor"}
)


def _float64_source(node: ast.Attribute, context: ScreenContext) -> bool:
    return node.attr in _FLOAT64_SPELLED or context.imports("numpy")


def _loads_numpy_batches(context: ScreenContext) -> bool:
    """`from torch.utils.data import DataLoader` in a file that imports NumPy: a dataset's
    float64 arrays become float64 batches with no torch call in the text."""
    return context.imports("numpy") and any(qualified in sem.DATA_LOADERS for qualified in context.aliases.values())


_CONVERTING_ATTRIBUTES = frozenset(
    {name.rsplit(".", 1)[-1] for name in NUMPY_CONVERTING | NUMPY_REDUCTIONS | NUMPY_SCALAR_CONVERTING}
    | PLOTTING | AXES_FACTORIES | {"subplots", "DataFrame", "Series"}
    | SKLEARN_METRICS | SKLEARN_CONVERTING_METHODS | SEABORN_PLOTTING
)


_HANDOVER_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in array_facts.ARRAY_ARGUMENTS)


def _array_handover(node: ast.Attribute, context: ScreenContext) -> bool:
    return context.resolve(node) in array_facts.ARRAY_ARGUMENTS


def _imports_array_handover(context: ScreenContext) -> bool:
    return any(qualified in array_facts.ARRAY_ARGUMENTS for qualified in context.aliases.values())


_NUMPY_CALL = RuleScreen("DET101", frozenset({"numpy"}))
_IMPLICIT_CONVERSION = RuleScreen(
    "DET106",
    _CONVERTING_ATTRIBUTES,
    required_modules=frozenset({"numpy", "matplotlib", "pandas", "sklearn", "seaborn"}),
    attribute=_converting_attribute,
    imports=_imports_converting_function,
)

SCREENS: tuple[RuleScreen, ...] = (
    _NUMPY_CALL,
    RuleScreen("DET102", frozenset({"detach"}), attribute=_after_device_move),
    RuleScreen("DET103", frozenset({"data"}), attribute=_data_of_something_else),
    RuleScreen("DET104", frozenset({"numpy"})),
    RuleScreen("DET105", frozenset({"numpy", "from_numpy"})),
    _IMPLICIT_CONVERSION,
    # Only a file that makes a bfloat16, sparse or conjugate tensor, and converts something
    # (`.numpy()` or one of DET106's conversions), can convert one.
    RuleScreen("DET107", _UNSUPPORTED_SOURCES, sinks_of=(_NUMPY_CALL, _IMPLICIT_CONVERSION)),
    # An ndarray with a negative stride or a foreign byte order needs the file itself to make it:
    # a negative step, a flip, a `">f4"` dtype, `newbyteorder`. Not NumPy's import: a tensor's
    # `.numpy()[:, ::-1]` is one too.
    RuleScreen("DET108", _HANDOVER_NAMES, attribute=_array_handover, imports=_imports_array_handover,
               required_text=AnyOf(array_facts.LAYOUT_HAZARD_TEXTS)),
    # A float64 tensor needs float64 spelled out or NumPy's float64 defaults: `torch.tensor(...)` alone
    # (in most torch files) must not send a file to libcst where no tree is at hand (`check`).
    RuleScreen("DET109", _FLOAT64_SPELLED | _FLOAT64_FROM_NUMPY | {"DataLoader"}, attribute=_float64_source,
               imports=_loads_numpy_batches, required_text=_FLOAT64_TEXT),
    # DET101's caller-dependent form: the same `.numpy()` calls.
    RuleScreen("DET111", frozenset({"numpy"})),
)
SCREENS_BY_CODE: dict[str, RuleScreen] = {screen.code: screen for screen in SCREENS}
RULE_CODES: tuple[str, ...] = tuple(screen.code for screen in SCREENS)
# Codes off by default, as flake8-bugbear's opinionated B9xx are: a claim that holds only if a
# caller outside the file passes a grad tensor. On when a select names them (a prefix counts, as
# flake8's explicit --select does) or with preview; the plugin registers them as default-ignored.
OPT_IN_CODES: frozenset[str] = frozenset({"DET111"})


def selected_codes(select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                   extend_select: tuple[str, ...] = (), preview: bool = False) -> tuple[str, ...]:
    """Codes that start with a selected prefix and with no ignored prefix (flake8 semantics).

    An empty ``select`` is the default selection: every code but the opt-in ones (all of them
    with ``preview``). ``extend_select`` adds to either, and names opt-in codes explicitly.
    """
    def chosen(code: str) -> bool:
        explicit = any(code.startswith(prefix) for prefix in (*select, *extend_select))
        by_default = not select and (preview or code not in OPT_IN_CODES)
        if not (explicit or by_default):
            return False
        return not any(code.startswith(prefix) for prefix in ignore)

    return tuple(code for code in RULE_CODES if chosen(code))


def selected_screens(select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                     extend_select: tuple[str, ...] = (), preview: bool = False) -> tuple[RuleScreen, ...]:
    return tuple(SCREENS_BY_CODE[code] for code in selected_codes(select, ignore, extend_select, preview))
