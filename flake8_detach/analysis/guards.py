"""What a test or a context manager tells about the code it guards.

`if t.requires_grad:` (t does not require grad in the other branch), `isinstance(x, Box)` (x is
no tensor where it holds), `if x.dtype == torch.bfloat16:` (x is not bfloat16 in the other
branch), `with torch.no_grad():` / `@torch.inference_mode()` (grad mode).
The walk asks these questions; the answers come from syntax and the file's imports only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, Optional

import libcst as cst

from . import semantics as sem
from .dtypes import DTYPE_NAMES
from .imports import ImportTable
from .syntax import (
    descendants,
    dotted,
    is_name,
    literal_bool,
    move_argument,
    slot_name,
    string_value,
)
from .values import DTYPES, EMPTY, GRAD_FLAGS, TENSOR_FLOW, Flag, Value

# A name, and what a test makes of its value where the test holds (the value is None where the
# name is unbound; None back means the test says nothing about it there).
Narrowing = tuple[str, Callable[[Optional[Value]], Optional[Value]]]  # Optional: Python 3.9 evaluates it


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


def isinstance_refinement(test: cst.BaseExpression, imports: ImportTable) -> tuple[str, Value] | None:
    """What `isinstance(x, C)` says about `x` where it holds: ("x", what x is), or None.

    A torch.nn module class (`nn.Conv2d`, `(nn.Linear, nn.Embedding)`, `_BatchNorm`): a module. A
    tensor class: a tensor (`nn.Parameter`: one that requires grad). Any other class the test names
    (an IR box, a record): not a tensor. A mix, or a class it cannot name: nothing.
    """
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return isinstance_refinement(test.left, imports) or isinstance_refinement(test.right, imports)
    if (isinstance(test, cst.Call) and len(test.args) == 1 and isinstance(test.args[0].value, cst.Name)
            and imports.resolve(test.func) == "torch.is_tensor"):
        return test.args[0].value.value, Value(Flag.TENSOR)  # `torch.is_tensor(obj)`: as isinstance(obj, torch.Tensor)
    parts = _isinstance_parts(test)
    if parts is None:
        return None
    name, classes = parts
    candidates = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
    found = _instance_of([_class_named(c, imports) for c in candidates])
    return None if found is None else (name, found)


# Builtin types an isinstance test names (none is a tensor).
_BUILTIN_TYPES = frozenset({"list", "tuple", "dict", "set", "frozenset", "int", "float", "complex", "bool",
                            "str", "bytes", "bytearray", "range", "slice", "type", "object"})


def _class_named(node: cst.BaseExpression, imports: ImportTable) -> str:
    """The dotted name of a class an isinstance test names, "" where the file cannot tell: a bare
    name that is no import, builtin or top-level class of the file is a parameter or a variable
    (`isinstance(m, norm_layer)` with `norm_layer=nn.BatchNorm2d`)."""
    resolved = imports.resolve(node)
    if resolved is not None:
        return resolved
    if isinstance(node, cst.Name):
        return node.value if node.value in _BUILTIN_TYPES or node.value in imports.classes else ""
    return dotted(node) or ""


def _instance_of(qualified: list[str]) -> Value | None:
    """What an instance of one of these classes is: a module, a tensor, no tensor, or (a mix, a
    class the file cannot name) None."""
    if all(sem.is_nn_module_class(q, private=True) for q in qualified):
        return Value(Flag.MODULE)
    lasts = [q.rsplit(".", 1)[-1] for q in qualified]
    if all(last in sem.TENSOR_CLASSES for last in lasts):
        grad = Flag.GRAD if all(last in sem.PARAMETER_CLASSES for last in lasts) else Flag.NONE
        return Value(Flag.TENSOR | grad, origin="parameter" if grad else None)
    if any(last in sem.TENSOR_CLASSES or q in ("", "torch") or sem.is_nn_module_class(q, private=True)
           for q, last in zip(qualified, lasts)):
        return None  # a mix, or something we cannot name
    return Value(Flag.NOT_TENSOR)


def exact_type_narrowing(test: cst.BaseExpression, imports: ImportTable) -> tuple[list[Narrowing], list[Narrowing]]:
    """What an exact type test says (in the body, in the other branch): where `type(x) is C`,
    `type(x) == C` or `type(x).__name__ == "C"` holds, x is an instance of C (a NumPy array is no
    tensor); where `!=` / `is not` holds nothing is known. `not (...)` swaps the two."""
    comparison = _single_comparison(test, (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot))
    if comparison is None:
        return [], []
    left, operator, other, negated = comparison
    found = _exact_type(left, other, imports) or _exact_type(other, left, imports)
    if found is None:
        return [], []
    name, known = found
    narrowing: list[Narrowing] = [(name, partial(_become, known))]
    holds_in_body = isinstance(operator, (cst.Equal, cst.Is)) != negated
    return (narrowing, []) if holds_in_body else ([], narrowing)


def _single_comparison(test: cst.BaseExpression, operators: tuple[type[cst.BaseCompOp], ...],
                       ) -> tuple[cst.BaseExpression, cst.BaseCompOp, cst.BaseExpression, bool] | None:
    """(left, operator, right, negated) of `a OP b` under any number of `not`s, for one of
    ``operators``; None for anything else (a chain `a < b < c` included)."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, not negated
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    operator, other = test.comparisons[0].operator, test.comparisons[0].comparator
    return (test.left, operator, other, negated) if isinstance(operator, operators) else None


def _exact_type(subject: cst.BaseExpression, other: cst.BaseExpression,
                imports: ImportTable) -> tuple[str, Value] | None:
    """("x", what x is) for `type(x)` against a class, or `type(x).__name__` against its name."""
    by_name = isinstance(subject, cst.Attribute) and subject.attr.value == "__name__"
    call = subject.value if isinstance(subject, cst.Attribute) and by_name else subject
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "type"
            and len(call.args) == 1 and isinstance(call.args[0].value, cst.Name)):
        return None
    if by_name:
        class_name = string_value(other) if isinstance(other, cst.SimpleString) else None
        qualified = class_name if isinstance(class_name, str) and class_name.isidentifier() else None
    else:
        qualified = _class_named(other, imports)
    found = _instance_of([qualified]) if qualified else None
    return None if found is None else (call.args[0].value.value, found)


def isinstance_narrowing(test: cst.BaseExpression, imports: ImportTable) -> Narrowing | None:
    """`isinstance(m, nn.Conv2d)` as a narrowing of `m` where it holds (living where it lived)."""
    found = isinstance_refinement(test, imports)
    return None if found is None else (found[0], partial(_become, found[1]))


def not_tensor_narrowing(test: cst.BaseExpression, imports: ImportTable) -> tuple[list[Narrowing], list[Narrowing]]:
    """`if isinstance(x, torch.Tensor): ... else:` (or `torch.is_tensor(x)`) x is no tensor in the
    other branch (and in the body of `if not ...:`); a container keeps what its elements are.

    Only the base class counts: outside `isinstance(x, nn.Parameter)` x may still be a tensor.
    """
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    name = _tensor_test(test.expression if isinstance(test, cst.UnaryOperation) and negated else test, imports)
    if name is None:
        return [], []
    narrowing: Narrowing = (name, _not_a_tensor)
    return ([narrowing], []) if negated else ([], [narrowing])


def _tensor_test(test: cst.BaseExpression, imports: ImportTable) -> str | None:
    """The name `isinstance(x, torch.Tensor)` or `torch.is_tensor(x)` tests, else None."""
    parts = _isinstance_parts(test)
    if parts is not None:
        name, classes = parts
        return name if (imports.resolve(classes) or dotted(classes)) in ("torch.Tensor", "torch.autograd.Variable") \
            else None
    if (isinstance(test, cst.Call) and imports.resolve(test.func) == "torch.is_tensor" and len(test.args) == 1
            and isinstance(test.args[0].value, cst.Name)):
        return test.args[0].value.value
    return None


def _isinstance_parts(test: cst.BaseExpression) -> tuple[str, cst.BaseExpression] | None:
    """("x", C) for `isinstance(x, C)` of a plain name, else None."""
    if (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
        return test.args[0].value.value, test.args[1].value
    return None


def _not_a_tensor(value: Value | None) -> Value | None:
    return None if value is None else value.with_flags(remove=TENSOR_FLOW, add=Flag.NOT_TENSOR)


def type_narrowings(test: cst.BaseExpression, imports: ImportTable) -> tuple[list[Narrowing], list[Narrowing]]:
    """What a test of a name's type says (in the body, in the other branch): `isinstance(x,
    torch.Tensor)` fails, `type(x).__name__ == "ndarray"` holds."""
    body, orelse = not_tensor_narrowing(test, imports)
    exact_body, exact_orelse = exact_type_narrowing(test, imports)
    return body + exact_body, orelse + exact_orelse


def branch_narrowings(test: cst.BaseExpression, imports: ImportTable) -> tuple[list[Narrowing], list[Narrowing]]:
    """What a `requires_grad`, device or dtype test says about its name: (in the body, in the
    other branch).

    `if t.requires_grad:` ... `else:` t does not require grad; `if t.is_cuda:` ... `else:` t is on
    the CPU; `if x.dtype == torch.bfloat16:` ... `else:` x is not bfloat16 (:func:`dtype_narrowing`).
    `isinstance(x, torch.Tensor)` / `torch.is_tensor(x)`: x is no tensor where it fails
    (:func:`not_tensor_narrowing`); `isinstance(m, nn.Conv2d)`: m is a module where it holds;
    `type(x).__name__ == "ndarray"`: x is no tensor where it holds (:func:`exact_type_narrowing`).
    Shared by `if` statements and `a if test else b`.
    """
    body, orelse = dtype_narrowing(test, imports)
    typed_body, typed_orelse = type_narrowings(test, imports)
    body += typed_body
    orelse += typed_orelse
    known = isinstance_narrowing(test, imports)
    if known is not None:
        body.append(known)
    name, in_body = requires_grad_test(test)
    if name is not None:
        (body if in_body else orelse).append((name, _without_grad))
    name, in_body = device_test(test)
    if name is not None:
        (body if in_body else orelse).append((name, _on_cpu))
    name, in_body = none_test(test)
    if name is not None:
        (body if in_body else orelse).append((name, _none))
    return body, orelse


def none_test(test: cst.BaseExpression) -> tuple[str | None, bool]:
    """`x is None` -> ("x", True): x is None in the body; `x is not None` -> ("x", False): in the
    other branch. `x` a name, or a loop's slot `out[i]` (syntax.slot_name)."""
    comparison = _single_comparison(test, (cst.Is, cst.IsNot))
    if comparison is None:
        return None, False
    left, operator, right, negated = comparison
    subject = left if is_name(right, "None") else right if is_name(left, "None") else None
    name = subject.value if isinstance(subject, cst.Name) else slot_name(subject) if subject is not None else None
    return name, isinstance(operator, cst.Is) != negated


def _none(value: Value | None) -> Value | None:
    """Where a test says the name holds None: nothing the analysis knows of (None is no tensor)."""
    return None if value is None else EMPTY


# Dtype bits that stand for one dtype each (not INTEGER or COMPLEX, which stand for several):
# where `x.dtype == torch.bfloat16` fails, x is not bfloat16; where `x.dtype == torch.int64`
# fails, x may still be int32.
_SINGLE_DTYPES = Flag.FLOAT16 | Flag.BFLOAT16 | Flag.FLOAT32 | Flag.FLOAT64 | Flag.BOOL
_MATCHING = (cst.Equal, cst.Is, cst.In)
_NOT_MATCHING = (cst.NotEqual, cst.IsNot, cst.NotIn)


def dtype_narrowing(test: cst.BaseExpression, imports: ImportTable) -> tuple[list[Narrowing], list[Narrowing]]:
    """What a dtype test says (in the body, in the other branch): `if x.dtype == torch.bfloat16:`
    ... `else:` x is not bfloat16, and in the body it is bfloat16 of the dtypes it may be. The
    same for a dtype held by a name (`if dt is torch.float16:`), for `!=`, `is not`, `in (...)`,
    `not in (...)` and `not (...)`: the usual shape of a bfloat16 fix (`if x.dtype ==
    torch.bfloat16: x = x.float()`, or an early return) leaves no bfloat16 behind it."""
    comparison = _single_comparison(test, (*_MATCHING, *_NOT_MATCHING))
    if comparison is None:
        return [], []
    left, operator, other, negated = comparison
    subject, named = _dtype_subject(left), _named_dtypes(other, operator, imports)
    if subject is None and not isinstance(operator, (cst.In, cst.NotIn)):  # `torch.bfloat16 == x.dtype`
        subject, named = _dtype_subject(other), _named_dtypes(left, operator, imports)
    if subject is None or named is None:
        return [], []
    name, of_tensor = subject
    bits, complete = named
    among: list[Narrowing] = [(name, partial(_dtype_among, bits, of_tensor))] if complete else []
    excluded = bits & _SINGLE_DTYPES
    other_than: list[Narrowing] = [(name, partial(_dtype_other_than, excluded, of_tensor))] if excluded else []
    matches_in_body = isinstance(operator, _MATCHING) != negated
    return (among, other_than) if matches_in_body else (other_than, among)


def _dtype_subject(node: cst.BaseExpression) -> tuple[str, bool] | None:
    """("x", True) for `x.dtype` (a tensor's or an array's dtype), ("dt", False) for a name."""
    if isinstance(node, cst.Attribute) and node.attr.value == "dtype" and isinstance(node.value, cst.Name):
        return node.value.value, True
    if isinstance(node, cst.Name):
        return node.value, False
    return None


def _named_dtypes(node: cst.BaseExpression, operator: cst.BaseCompOp, imports: ImportTable) -> tuple[int, bool] | None:
    """The bits of the dtypes a test compares with, and whether it names only dtypes (a tuple of
    `torch.float16` and a variable: some bits, not complete); None when it names none."""
    if isinstance(operator, (cst.In, cst.NotIn)):
        if not isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            return None
        elements = [element.value for element in node.elements]
    else:
        elements = [node]
    found = [DTYPE_NAMES.get(imports.resolve(element) or "", 0) for element in elements]
    bits = 0
    for bit in found:
        bits |= bit
    return (bits, all(found)) if bits else None


def _dtype_of_kind(value: Value, of_tensor: bool) -> int:
    """The value's dtype bits where the test is about them: a tensor's or an array's for
    `x.dtype`, a dtype object's (a value with nothing but dtype bits) for a plain name."""
    holder = bool(value.flags & (TENSOR_FLOW | Flag.NDARRAY))
    if holder != of_tensor or (not of_tensor and value.flags & ~DTYPES):
        return 0
    return value.flags & DTYPES


def _dtype_among(bits: int, of_tensor: bool, value: Value | None) -> Value | None:
    current = _dtype_of_kind(value, of_tensor) if value is not None else 0
    if value is None or not current & bits:  # unknown, or a test the walk thinks cannot hold
        return None
    return value.with_flags(remove=current & ~bits)


def _dtype_other_than(bits: int, of_tensor: bool, value: Value | None) -> Value | None:
    if value is None or not _dtype_of_kind(value, of_tensor) & bits:
        return None
    return value.with_flags(remove=bits)


def _without_grad(value: Value | None) -> Value | None:
    return None if value is None else value.with_flags(remove=GRAD_FLAGS)


def _on_cpu(value: Value | None) -> Value | None:
    return None if value is None else value.with_flags(remove=Flag.DEVICE)


def _become(known: Value, value: Value | None) -> Value:
    if value is not None and known.has(Flag.TENSOR) and not known.has(Flag.MODULE) and value.has(TENSOR_FLOW):
        # `if isinstance(out, torch.Tensor): out.numpy()`: the tensor it was, grad and device kept
        return value.tensor_part().with_flags(add=known.flags & (Flag.TENSOR | Flag.GRAD))
    if value is not None and known.has(Flag.MODULE | Flag.TENSOR):
        return known.with_device_of(value)
    if value is not None and known.flags == Flag.NOT_TENSOR and value.has(Flag.MODULE):
        # `for m in self.modules(): if isinstance(m, SynchronizedBatchNorm2d):` a module that is an
        # instance of a class the file cannot tell a module class is one of a module class.
        return value
    return known


class GradOffNames:
    """The names besides torch's that turn grad off where a with-item or a decorator names them:
    the configured ones and the file's own functions that do (``fixed``), and the project
    functions an import names, asked one by one as the walk meets them (``ask``): a file imports
    far more names than its with-items and decorators use, and each asking reads a summary."""

    def __init__(self, fixed: frozenset[str], ask: Callable[[str], bool] | None = None) -> None:
        self.fixed = fixed
        self.ask = ask
        self.answers: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        """``name``, as the file's imports resolve it (or as written, for the file's own)."""
        if name in self.fixed:
            return True
        if self.ask is None or not isinstance(name, str) or name.startswith("torch"):
            return False
        if name not in self.answers:
            self.answers[name] = self.ask(name)
        return self.answers[name]


def grad_mode_of(expr: cst.BaseExpression, imports: ImportTable, extra_no_grad: GradOffNames) -> bool | None:
    """False if the context/decorator turns grad off, True if it turns it on."""
    call_args: list[cst.Arg] | None = None
    target = expr
    if isinstance(expr, cst.Call):
        call_args = list(expr.args)
        target = expr.func
    qualified = imports.resolve(target)
    if qualified is None:
        name = dotted(target)
        if name is not None and name in extra_no_grad.fixed:  # not imported: never the project's to ask
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


# `use_gpu`, `train_on_gpu`, `args.cuda`, `cuda_available`: names that by convention say whether a
# GPU is used. A name bound in the file to `torch.cuda.is_available()` (or `DEVICE != "cpu"`) is a
# device flag by its value, whatever it is called.
_FLAG_NAME = re.compile(
    r"^(?:(?:use|on|train_on|run_on|with|enable|has|is)_)?(?:cuda|gpu|mps)(?:_available|_enabled)?$",
    re.IGNORECASE,
)
Assumptions = tuple[tuple[str, bool], ...]


def is_flag_name(name: str) -> bool:
    return bool(_FLAG_NAME.match(name.rsplit(".", 1)[-1]))


def flags_guarding_gpu_moves(module: cst.Module) -> frozenset[str]:
    """The tests that a GPU move is made under, by use: `self.gpu_mode` of `if self.gpu_mode:
    self.G.cuda()` (or `if not args.no_cuda: x = x.cuda()`, `net = net.cuda() if use_gpu else
    net`), whatever they are called. A value moved there lives on the GPU only where the test
    holds, so `else: samples.numpy()` of the same test is the CPU path. Only a name or an
    attribute chain counts (the `dotted` text, the key `Interpreter.device_flag` gives). The walk
    reads statements and the value of each assignment, not every expression (it runs per file)."""
    found: set[str] = set()
    for test, branches in _branchings(module.body):
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test = test.expression
        key = dotted(test) if isinstance(test, (cst.Name, cst.Attribute)) else None
        if key is not None and key not in found and any(_moves_to_a_gpu(branch) for branch in branches):
            found.add(key)
    return frozenset(found)


def _branchings(statements: Sequence[cst.CSTNode]) -> Iterator[tuple[cst.BaseExpression, list[cst.CSTNode]]]:
    """Each `if` statement's test and branches (an `elif` is a test of its own), and each `x = a
    if test else b`, in these statements and the blocks nested in them."""
    stack = list(statements)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.SimpleStatementLine:
            for small in node.body:  # type: ignore[attr-defined]
                if type(small) is cst.Assign and type(small.value) is cst.IfExp:
                    yield small.value.test, [small.value.body, small.value.orelse]
            continue
        if isinstance(node, cst.If):
            branches: list[cst.CSTNode] = [node.body]
            if isinstance(node.orelse, cst.Else):
                branches.append(node.orelse.body)
            elif isinstance(node.orelse, cst.If):
                stack.append(node.orelse)
            yield node.test, branches
        for block in _blocks(node):
            stack.extend(block.body)


def _blocks(node: cst.CSTNode) -> list[Any]:
    """The indented blocks of a compound statement (its body, `else`, `finally`, handlers)."""
    found = []
    for name in ("body", "orelse", "finalbody"):
        part = getattr(node, name, None)
        if isinstance(part, cst.IndentedBlock):
            found.append(part)
        elif isinstance(part, (cst.Else, cst.Finally)) and isinstance(part.body, cst.IndentedBlock):
            found.append(part.body)
    for handler in getattr(node, "handlers", ()) or ():
        if isinstance(handler.body, cst.IndentedBlock):
            found.append(handler.body)
    return found


def _moves_to_a_gpu(branch: cst.CSTNode) -> bool:
    """`.cuda(...)`, `.to("cuda...")` or `.to(device)` (a conventional device name: `DEVICE`,
    `args.device`) called in ``branch`` (not in a function defined there)."""
    for node in descendants(branch, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is not cst.Call or not isinstance(node.func, cst.Attribute):
            continue
        method = node.func.attr.value
        if method == "cuda":
            return True
        argument = move_argument(node) if method == "to" else None
        if argument is None:
            continue
        target = argument.value
        if isinstance(target, cst.SimpleString) and str(string_value(target)).startswith("cuda"):
            return True
        named = target.attr.value if isinstance(target, cst.Attribute) else target.value if isinstance(
            target, cst.Name) else None
        if named is not None and sem.is_device_name(named):
            return True
    return False


def flag_key(key: str, truth: bool) -> str:
    """What a value's `device_if` says of a device flag: DEVICE where `key` is true ("use_gpu"),
    or where it is false ("not args.no_cuda", moved under `if not args.no_cuda:`)."""
    return key if truth else f"not {key}"


def fails_here(device_if: str, assumed: dict[str, bool]) -> bool:
    """Whether the flag a DEVICE needs (`flag_key`) is known not to hold where the walk is."""
    if device_if.startswith("not "):
        return assumed.get(device_if[4:]) is True
    return assumed.get(device_if) is False


def device_flag_assumptions(test: cst.BaseExpression, is_flag: Callable[[cst.BaseExpression], str | None],
                            ) -> tuple[Assumptions, Assumptions]:
    """What a test says about device flags: (true in the body, true in the other branch).

    `if use_gpu:` -> ((("use_gpu", True),), (("use_gpu", False),)); `not` swaps; `and` informs
    only the body, `or` only the other branch. `is_flag` names the flag a test reads, if any.
    """
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        body, orelse = device_flag_assumptions(test.expression, is_flag)
        return orelse, body
    if isinstance(test, cst.BooleanOperation):
        left_body, left_else = device_flag_assumptions(test.left, is_flag)
        right_body, right_else = device_flag_assumptions(test.right, is_flag)
        if isinstance(test.operator, cst.And):
            return left_body + right_body, ()
        return (), left_else + right_else
    key = is_flag(test)
    if key is None:
        return (), ()
    return ((key, True),), ((key, False),)


def device_test(test: cst.BaseExpression) -> tuple[str | None, bool]:
    """`if t.is_cuda:` -> ("t", False): t is on the CPU in the other branch.

    Also `t.device.type == "cpu"` (("t", True): on the CPU in the body) and `!= "cpu"`,
    `== "cuda"`; `not` swaps. Returns (None, False) for any other test.
    """
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        name, in_body = device_test(test.expression)
        return name, not in_body if name is not None else False
    if isinstance(test, cst.BooleanOperation):  # `t.is_cuda or t.device.type != "cpu"`: both say "GPU"
        first, second = device_test(test.left), device_test(test.right)
        on_cpu_in_body = isinstance(test.operator, cst.And)
        if first[0] is not None and first == second and first[1] == on_cpu_in_body:
            return first
        return None, False
    if isinstance(test, cst.Attribute) and test.attr.value == "is_cuda" and isinstance(test.value, cst.Name):
        return test.value.value, False
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        left, target = test.left, test.comparisons[0]
        device = _tensor_device_type(left)
        if device is None or not isinstance(target.comparator, cst.SimpleString):
            return None, False
        text = string_value(target.comparator)
        equal = isinstance(target.operator, cst.Equal)
        if not equal and not isinstance(target.operator, cst.NotEqual):
            return None, False
        if text == "cpu":
            return device, equal
        if text in ("cuda", "mps", "xpu"):
            return device, not equal
    return None, False


def _tensor_device_type(node: cst.BaseExpression) -> str | None:
    """`t.device.type` -> "t"."""
    if (isinstance(node, cst.Attribute) and node.attr.value == "type" and isinstance(node.value, cst.Attribute)
            and node.value.attr.value == "device" and isinstance(node.value.value, cst.Name)):
        return node.value.value.value
    return None
