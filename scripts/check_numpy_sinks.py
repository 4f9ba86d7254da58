"""Probe every public NumPy function with tensors, and write or check the table DET106 reads.

DET106 says a NumPy function "calls .numpy() on a tensor passed to it". Which functions do is a
fact of the installed NumPy and torch, so it is measured here, not written by hand: each public
callable of ``numpy`` and ``numpy.linalg`` is called with small tensors in a few argument shapes
until one call runs on a plain CPU tensor; then the same call with a tensor that requires grad
must raise torch's requires-grad RuntimeError, and with a ``meta`` tensor (standing in for a
GPU, as the fixtures do) the device TypeError. Both come from ``Tensor.__array__``, that is
``Tensor.numpy()``. The probe also records whether the plain call gives a tensor back (NumPy's
``__array_wrap__``: the fix keeps a tensor), whether its result shares the argument's memory
(the fix must copy), and which functions fail only for a list of tensors (``np.sum(t)`` calls
``Tensor.sum(axis=...)`` and fails otherwise on any tensor; ``np.sum([t, t])`` converts), and
which convert a 0-dim tensor only (``np.arange(x.min() - 1, x.max() + 1)``: a bound is a scalar).

    python scripts/check_numpy_sinks.py           # check the table against this NumPy and torch
    python scripts/check_numpy_sinks.py --write   # rewrite flake8_detach/analysis/numpy_sinks.py

Needs the verify extra (torch, numpy); linting never imports either.
"""

from __future__ import annotations

import contextlib
import io
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

TABLE = Path(__file__).resolve().parent.parent / "flake8_detach" / "analysis" / "numpy_sinks.py"
REQUIRES_GRAD = "Can't call numpy() on Tensor that requires grad"
ON_META = "can't convert meta device type tensor to numpy"
# Not probed: they configure NumPy, print, test, build objects from Python functions, or read
# files (what they would read is no tensor).
SKIPPED = frozenset(
    """frompyfunc vectorize piecewise info show_config show_runtime test get_include setbufsize seterr
    seterrcall set_printoptions printoptions errstate memmap load loadtxt genfromtxt fromfile fromregex
    getbufsize geterr geterrcall get_printoptions from_dlpack""".split()
)
# Functions whose first argument is a file: the tensor goes second.
FILE_FIRST = frozenset({"save", "savez", "savez_compressed", "savetxt"})


def _matrix() -> torch.Tensor:
    return torch.arange(6, dtype=torch.float32).reshape(2, 3) + 1


def _square() -> torch.Tensor:
    return torch.arange(9, dtype=torch.float32).reshape(3, 3) + 10 * torch.eye(3)


def _vector() -> torch.Tensor:
    return torch.arange(4, dtype=torch.float32) + 1


def _counts() -> torch.Tensor:
    return torch.tensor([0, 1, 1, 3])


def _scalar() -> torch.Tensor:
    """A 0-dim tensor: what `np.arange(x.min() - 1, x.max() + 1)` is given (a bound, a step)."""
    return torch.tensor(2.5)


# The scalar comes last: a function converting an array is described by the first call that ran.
BASES: tuple[Callable[[], torch.Tensor], ...] = (_matrix, _square, _vector, _counts, _scalar)
SHAPES: tuple[Callable[[Any], tuple[Any, ...]], ...] = (
    lambda t: (t,), lambda t: (t, t), lambda t: (t, 1), lambda t: (t, 0), lambda t: (t, (-1,)),
    lambda t: (t, 2, 1), lambda t: (t, [0, 1]), lambda t: (t, t, t), lambda t: (t, (4, 4)),
)


@dataclass
class Probe:
    """What the calls of one NumPy function showed."""

    converts: bool = False  # one tensor argument goes through Tensor.numpy()
    scalar_only: bool = False  # ... only when it is 0-dim (`np.arange(lo, hi)`)
    item_same: bool = False  # ... and its `.item()` gives the same result (the fix DET106 offers)
    tensor_result: bool = False  # a tensor without grad gives a tensor back
    shares: bool = False  # the result may share the argument's memory
    list_converts: bool = False  # a list of tensors goes through Tensor.numpy()
    call: str = ""


@dataclass
class Table:
    converting: set[str] = field(default_factory=set)
    tensor_results: set[str] = field(default_factory=set)
    sharing: set[str] = field(default_factory=set)
    reductions: set[str] = field(default_factory=set)
    scalar_converting: set[str] = field(default_factory=set)
    item_same: set[str] = field(default_factory=set)


def _outcome(function: Callable[..., Any], arguments: tuple[Any, ...]) -> tuple[bool, Any]:
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return True, function(*arguments)
    except Exception as error:  # noqa: BLE001 - the failure is the observation
        return False, f"{type(error).__name__}: {error}"


def _with_file(name: str, arguments: tuple[Any, ...]) -> tuple[Any, ...]:
    return (io.BytesIO(), *arguments) if name in FILE_FIRST else arguments


def _shares(result: Any, argument: torch.Tensor) -> bool:
    if isinstance(result, torch.Tensor):
        return result.untyped_storage().data_ptr() == argument.untyped_storage().data_ptr()
    if isinstance(result, np.ndarray):
        return bool(np.shares_memory(result, argument.numpy()))
    if isinstance(result, (tuple, list)):
        return any(_shares(part, argument) for part in result)
    return False


def probe(name: str, function: Callable[..., Any]) -> Probe:
    found = Probe()
    for base in BASES:
        for shape in SHAPES:
            plain = base()
            ran, result = _outcome(function, _with_file(name, shape(plain)))
            if not ran:
                continue
            meta = base().to("meta")
            ran_meta, meta_error = _outcome(function, _with_file(name, shape(meta)))
            if ran_meta or ON_META not in str(meta_error):
                continue
            if plain.is_floating_point():
                ran_grad, grad_error = _outcome(function, _with_file(name, shape(base().requires_grad_() * 1)))
                if ran_grad or REQUIRES_GRAD not in str(grad_error):
                    continue
            found.converts = True
            found.scalar_only = base is _scalar
            if found.scalar_only:
                numbers = tuple(part.item() if isinstance(part, torch.Tensor) else part for part in shape(base()))
                ran_item, item_result = _outcome(function, _with_file(name, numbers))
                found.item_same = ran_item and repr(item_result) == repr(result)
            found.tensor_result = isinstance(result, torch.Tensor)
            found.shares = _shares(result, plain)
            found.call = f"{name}{shape('t')}".replace("'t'", "t")
            break
        if found.converts:
            break
    ran, _ = _outcome(function, _with_file(name, ([_matrix(), _matrix()],)))
    if ran:
        _, error = _outcome(function, _with_file(name, ([_matrix().requires_grad_() * 1, _matrix().requires_grad_() * 1],)))
        found.list_converts = REQUIRES_GRAD in str(error)
    return found


def public_functions() -> Iterator[tuple[str, Callable[..., Any]]]:
    for prefix, module in (("", np), ("linalg.", np.linalg)):
        for name in sorted(dir(module)):
            member = getattr(module, name)
            if name.startswith("_") or isinstance(member, type) or not callable(member) or name in SKIPPED:
                continue
            yield prefix + name, member


def measure() -> Table:
    table = Table()
    for name, function in public_functions():
        found = probe(name, function)
        if found.converts and found.scalar_only:
            if found.list_converts:  # `np.argwhere`: a list's conversion is the one DET106 reads
                table.reductions.add(name)
            else:
                table.scalar_converting.add(name)
                if found.item_same:
                    table.item_same.add(name)
        elif found.converts:
            table.converting.add(name)
            if found.tensor_result:
                table.tensor_results.add(name)
            if found.shares:
                table.sharing.add(name)
        elif found.list_converts:
            table.reductions.add(name)
    return table


def frozenset_source(name: str, values: set[str] | list[str], comment: str | None = None) -> str:
    """A generated table: `NAME = frozenset(...split())` of sorted words, wrapped at 96 columns."""
    lines, line = [], "   "
    for word in sorted(values):
        if len(line) + len(word) + 1 > 96:
            lines.append(line)
            line = "   "
        line += " " + word
    lines.append(line)
    body = "\n".join(lines)
    quote = '"' * 3
    heading = f"# {comment}\n" if comment else ""
    return f"{heading}{name} = frozenset(\n    {quote}\n{body}\n    {quote}.split()\n)\n"


def render(table: Table) -> str:
    header = (
        '"""Which NumPy functions call ``Tensor.numpy()`` on a tensor argument (DET106\'s sinks).\n\n'
        f"Generated by ``scripts/check_numpy_sinks.py --write`` on torch {torch.__version__.split('+')[0]}, "
        f"NumPy {np.__version__}: do not\nedit; rerun the script. Each name was called with small tensors: "
        "the call that ran on a CPU\ntensor raised the requires-grad RuntimeError for a tensor that requires "
        'grad and the device\nTypeError for a ``meta`` tensor (a GPU\'s stand-in).\n"""\n\n'
    )
    return header + "\n".join((
        frozenset_source("CONVERTING", table.converting, "One tensor argument is converted."),
        frozenset_source("TENSOR_RESULTS", table.tensor_results,
                   "Of CONVERTING: a tensor without grad gives a tensor back (NumPy's __array_wrap__)."),
        frozenset_source("SHARING", table.sharing, "Of CONVERTING: the result may share the argument's memory."),
        frozenset_source("REDUCTIONS", table.reductions,
                   "Only a list of tensors is converted; one tensor fails otherwise (`np.sum(t)` calls `Tensor.sum`)."),
        frozenset_source("SCALAR_CONVERTING", table.scalar_converting,
                   "A 0-dim tensor is converted (`np.arange(x.min(), x.max())`); no call converted one of another shape."),
        frozenset_source("SCALAR_ITEM_SAME", table.item_same,
                   "Of SCALAR_CONVERTING: the tensors' `.item()` numbers give the same result (DET106's fix)."),
    ))


def main() -> int:
    table = measure()
    text = render(table)
    if "--write" in sys.argv:
        TABLE.write_text(text, encoding="utf-8")
        print(f"wrote {TABLE}: {len(table.converting)} converting, {len(table.reductions)} list-only, "
              f"{len(table.scalar_converting)} 0-dim only")
        return 0
    current = TABLE.read_text(encoding="utf-8") if TABLE.exists() else ""
    if current.split('"""', 2)[-1] == text.split('"""', 2)[-1]:
        print(f"{TABLE.name} holds on torch {torch.__version__}, NumPy {np.__version__}")
        return 0
    print(f"{TABLE.name} differs from what torch {torch.__version__}, NumPy {np.__version__} show: rerun with --write")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
