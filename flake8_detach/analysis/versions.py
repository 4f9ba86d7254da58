"""Tests of torch's version (and of its features): which branch runs on the torch the rules speak of.

`if int(version[0]) > 0 or int(version[2]) > 3: loss.item() else: loss.data[0]` (code written for
torch 0.3 and later): the rules' claims are about a current torch (checked on 2.13), on which only
the first branch runs; the second is dead and what it would put in `running_loss` is not there.
A test that reads `torch.__version__` (directly or through a top-level alias) and only constants,
`int`/`float`/`str`/`tuple`, string methods, indexing, comparisons, `packaging.version.parse` or
`LooseVersion` is evaluated as Python would on that torch; anything else is not judged (None).

`torch.__version__` is a `TorchVersion`: a `str` that compares with strings and tuples as a
version (`torch.__version__ >= "1.10"` is True on 2.13), while its slices and `split` parts are
plain strings (checked on torch 2.13.0).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from functools import total_ordering
from typing import Any

import libcst as cst

from .imports import ImportTable
from .syntax import constant_truth

TORCH_VERSION = "2.13.0"
# Attributes of the torch module that code tests for with `hasattr(torch, ...)`, all present in
# torch 2.13 (tests/test_versions.py checks each on the installed torch): `if hasattr(torch,
# "no_grad"): ... else:` (code for torch 0.3) runs its first branch. A name outside the table is
# not judged: the table does not say which attributes are missing.
TORCH_ATTRIBUTES = frozenset(
    """no_grad enable_grad inference_mode set_grad_enabled is_grad_enabled compile autocast amp
    is_tensor from_numpy as_tensor tensor bfloat16 float16 float32 float64 cuda backends fft linalg
    special distributions jit sparse nn optim utils mps xpu vmap func einsum meshgrid nan_to_num
    square flip topk device Generator use_deterministic_algorithms testing hub onnx
    is_floating_point is_complex clamp clip""".split()
)
VERSION_NAME = "torch.__version__"
VERSION_PARSERS = frozenset({"packaging.version.parse", "packaging.version.Version", "distutils.version.LooseVersion",
                             "distutils.version.StrictVersion", "pkg_resources.parse_version"})
STRING_METHODS = frozenset({"split", "startswith", "endswith", "strip", "replace", "lower", "partition"})
COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    cst.LessThan: operator.lt, cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge, cst.Equal: operator.eq, cst.NotEqual: operator.ne,
    cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
}
BUILTINS: dict[str, Callable[[Any], Any]] = {"int": int, "float": float, "str": str, "tuple": tuple, "len": len}
_NUMBERS = re.compile(r"\d+")


class _NotJudged(Exception):
    """The test reads something other than the version and constants."""


def _release(text: str) -> tuple[int, ...]:
    """The numeric release of a version string: "1.10.0a0+git" -> (1, 10, 0)."""
    parts: list[int] = []
    for part in text.split("+", 1)[0].split("."):
        digits = _NUMBERS.match(part)
        if digits is None:
            break
        parts.append(int(digits.group()))
        if digits.end() != len(part):
            break
    if not parts:
        raise _NotJudged
    return tuple(parts)


@total_ordering
class _Version:
    """A parsed version (`packaging.version.parse(...)`, torch's own string): compares by release."""

    def __init__(self, text: str) -> None:
        self.release = _release(text)

    def _other(self, other: object) -> tuple[int, ...]:
        if isinstance(other, _Version):
            return other.release
        if isinstance(other, tuple) and all(isinstance(part, int) for part in other):
            return other
        if isinstance(other, str):
            return _release(other)
        raise _NotJudged

    def __eq__(self, other: object) -> bool:
        mine, theirs = self.release, self._other(other)
        width = max(len(mine), len(theirs))
        return mine + (0,) * (width - len(mine)) == theirs + (0,) * (width - len(theirs))

    def __lt__(self, other: object) -> bool:
        mine, theirs = self.release, self._other(other)
        width = max(len(mine), len(theirs))
        return mine + (0,) * (width - len(mine)) < theirs + (0,) * (width - len(theirs))

    def __hash__(self) -> int:
        return hash(self.release)


class _TorchVersion(_Version, str):
    """torch.__version__: a string that compares as a version."""

    def __init__(self, text: str) -> None:
        _Version.__init__(self, text)

    __hash__ = _Version.__hash__


def version_branch(test: cst.BaseExpression, imports: ImportTable) -> bool | None:
    """The truth of an `if` test of torch's version on the torch the rules speak of; None where
    the test is not only that."""
    if not _reads_version(test, imports):
        return None
    try:
        return bool(_Evaluator(imports).eval(test))
    except (_NotJudged, TypeError, ValueError, IndexError, KeyError, AttributeError, RecursionError):
        return None


def known_branch(test: cst.BaseExpression, imports: ImportTable) -> bool | None:
    """Which branch a test always takes: a test of torch's version on the torch the rules speak of
    (`torch.__version__ < "0.4"`) or a constant (`if True:`, `if 0:`, code switched off by hand);
    None for a test that depends on the run. The other branch makes no claim about runtime."""
    verdict = version_branch(test, imports)
    return constant_truth(test) if verdict is None else verdict


def _reads_version(node: cst.BaseExpression, imports: ImportTable) -> bool:
    """Whether a test reads torch's version or tests a torch attribute: a walk of the expressions
    such a test is made of (every `if` asks, so no generic walk and no resolving of every name)."""
    if isinstance(node, cst.Name):
        return imports.aliases.get(node.value) == VERSION_NAME
    if isinstance(node, cst.Attribute):
        if node.attr.value == "__version__":
            return imports.resolve(node) == VERSION_NAME
        return _reads_version(node.value, imports)
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Name) and node.func.value == "hasattr" and node.args:
            return imports.resolve(node.args[0].value) == "torch"  # `hasattr(torch, "no_grad")`
        return _reads_version(node.func, imports) or any(_reads_version(arg.value, imports) for arg in node.args)
    if isinstance(node, cst.Comparison):
        return _reads_version(node.left, imports) or any(
            _reads_version(target.comparator, imports) for target in node.comparisons)
    if isinstance(node, cst.BooleanOperation):
        return _reads_version(node.left, imports) or _reads_version(node.right, imports)
    if isinstance(node, cst.UnaryOperation):
        return _reads_version(node.expression, imports)
    if isinstance(node, cst.Subscript):
        return _reads_version(node.value, imports)
    return False


class _Evaluator:
    def __init__(self, imports: ImportTable) -> None:
        self.imports = imports

    def eval(self, node: cst.BaseExpression) -> Any:
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is None:
            raise _NotJudged
        return handler(node)

    def _Name(self, node: cst.Name) -> Any:
        if self.imports.resolve(node) == VERSION_NAME:
            return _TorchVersion(TORCH_VERSION)
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        raise _NotJudged

    def _Attribute(self, node: cst.Attribute) -> Any:
        if self.imports.resolve(node) == VERSION_NAME:
            return _TorchVersion(TORCH_VERSION)
        raise _NotJudged

    def _Integer(self, node: cst.Integer) -> Any:
        return node.evaluated_value

    def _Float(self, node: cst.Float) -> Any:
        return node.evaluated_value

    def _SimpleString(self, node: cst.SimpleString) -> Any:
        value = node.evaluated_value
        if not isinstance(value, str):
            raise _NotJudged
        return value

    def _Tuple(self, node: cst.Tuple) -> Any:
        return tuple(self.eval(element.value) for element in node.elements if not isinstance(element, cst.StarredElement))

    def _List(self, node: cst.List) -> Any:
        return [self.eval(element.value) for element in node.elements if not isinstance(element, cst.StarredElement)]

    def _UnaryOperation(self, node: cst.UnaryOperation) -> Any:
        if isinstance(node.operator, cst.Not):
            return not self.eval(node.expression)
        if isinstance(node.operator, cst.Minus):
            return -self.eval(node.expression)
        raise _NotJudged

    def _BooleanOperation(self, node: cst.BooleanOperation) -> Any:
        left = self.eval(node.left)
        if isinstance(node.operator, cst.And):
            return left and self.eval(node.right)
        return left or self.eval(node.right)

    def _Comparison(self, node: cst.Comparison) -> Any:
        left = self.eval(node.left)
        for target in node.comparisons:
            compare = COMPARISONS.get(type(target.operator))
            if compare is None:
                raise _NotJudged
            right = self.eval(target.comparator)
            if not compare(left, right):
                return False
            left = right
        return True

    def _Subscript(self, node: cst.Subscript) -> Any:
        value = self.eval(node.value)
        if not isinstance(value, (str, list, tuple)) or len(node.slice) != 1:
            raise _NotJudged
        index = node.slice[0].slice
        if isinstance(index, cst.Index):
            return value[self.eval(index.value)]
        if isinstance(index, cst.Slice):
            parts = [None if part is None else self.eval(part) for part in (index.lower, index.upper, index.step)]
            picked = value[slice(*parts)]
            return str(picked) if isinstance(picked, str) else picked  # a slice of TorchVersion is a str
        raise _NotJudged

    def _Call(self, node: cst.Call) -> Any:
        if any(arg.keyword is not None or arg.star for arg in node.args):
            raise _NotJudged
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in STRING_METHODS:
            receiver = self.eval(func.value)
            if not isinstance(receiver, str):
                raise _NotJudged
            result = getattr(str(receiver), func.attr.value)(*(self.eval(arg.value) for arg in node.args))
            return result
        if (isinstance(func, cst.Name) and func.value == "hasattr" and self.imports.resolve(func) is None
                and len(node.args) == 2 and self.imports.resolve(node.args[0].value) == "torch"):
            name = self.eval(node.args[1].value)
            if isinstance(name, str) and name in TORCH_ATTRIBUTES:
                return True
            raise _NotJudged
        arguments = [self.eval(arg.value) for arg in node.args]
        qualified = self.imports.resolve(func)
        if qualified in VERSION_PARSERS and len(arguments) == 1 and isinstance(arguments[0], str):
            return _Version(arguments[0])
        if isinstance(func, cst.Name) and qualified is None:
            builtin: Callable[[Any], Any] | None = BUILTINS.get(func.value)
            if builtin is not None and len(arguments) == 1:
                argument = arguments[0]
                return builtin(str(argument) if isinstance(argument, _TorchVersion) else argument)
        raise _NotJudged
