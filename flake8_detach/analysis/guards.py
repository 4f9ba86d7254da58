"""What a test or a context manager tells about the code it guards.

`if t.requires_grad:` (t does not require grad in the other branch), `isinstance(x, Box)` (x is
no tensor where it holds), `with torch.no_grad():` / `@torch.inference_mode()` (grad mode).
The walk asks these questions; the answers come from syntax and the file's imports only.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from . import semantics as sem
from .imports import ImportTable
from .syntax import dotted, literal_bool


def requires_grad_test(test: cst.BaseExpression) -> tuple[str | None, bool]:
    """For `if t.requires_grad:` -> ("t", False): the branch where t does not require grad.

    Returns (name, True) when that branch is the body (`if not t.requires_grad:`).
    """
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    inner = test.expression if isinstance(test, cst.UnaryOperation) and negated else test
    if (isinstance(inner, cst.Attribute) and inner.attr.value == "requires_grad"
            and isinstance(inner.value, cst.Name)):
        return inner.value.value, negated
    return None, False


def non_tensor_isinstance(test: cst.BaseExpression, imports: ImportTable) -> str | None:
    """`isinstance(x, TensorBox)` with a class that is not a tensor class: returns "x"."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return non_tensor_isinstance(test.left, imports) or non_tensor_isinstance(test.right, imports)
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
        return None
    classes = test.args[1].value
    candidates = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
    for candidate in candidates:
        qualified = imports.resolve(candidate) or dotted(candidate) or ""
        if qualified.rsplit(".", 1)[-1] in sem.TENSOR_CLASSES or qualified in ("", "torch"):
            return None  # a tensor class, or something we cannot name
    return test.args[0].value.value


def grad_mode_of(expr: cst.BaseExpression, imports: ImportTable, extra_no_grad: frozenset[str]) -> bool | None:
    """False if the context/decorator turns grad off, True if it turns it on."""
    call_args: list[cst.Arg] | None = None
    target = expr
    if isinstance(expr, cst.Call):
        call_args = list(expr.args)
        target = expr.func
    qualified = imports.resolve(target)
    if qualified is None:
        name = dotted(target)
        if name is not None and name in extra_no_grad:
            return False
        return None
    if qualified in sem.GRAD_CONTEXT_DISABLE or qualified in extra_no_grad:
        return False
    if qualified in sem.ENABLE_GRAD:
        return True
    if qualified in sem.INFERENCE_MODE:
        flag = literal_bool(call_args[0].value) if call_args else True
        return not flag if flag is not None else True
    if qualified in sem.SET_GRAD_ENABLED and call_args:
        flag = literal_bool(call_args[0].value)
        return True if flag is None else flag
    return None


def then(first: Callable[[], object], second: Callable[[], object]) -> Callable[[], None]:
    """Run `first`, then `second` (a refinement before a branch)."""
    def both() -> None:
        first()
        second()
    return both
