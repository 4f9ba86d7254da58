"""Compare what two runs produced: the arrays the fixture converted, and its module-level values.

The runner sends JSON pictures of values (see :func:`flake8_detach.verify.runner.serialize`);
numbers are compared with ``numpy.allclose`` (CUDA kernels may round differently), everything else
exactly. ``grad_fn`` and ``requires_grad`` are not compared: a fix is meant to change them.
"""

from __future__ import annotations

from typing import Any


def differences(expected: Any, observed: Any, where: str) -> list[str]:
    """Human-readable differences between two value pictures (empty when they agree)."""
    if expected is None or observed is None:
        return [] if expected is observed else [f"{where}: present in one run only"]
    kind = expected.get("kind")
    numeric = {"tensor", "array"}
    if kind != observed.get("kind") and not {kind, observed.get("kind")} <= numeric:
        return [f"{where}: {kind} vs {observed.get('kind')}"]
    if kind in numeric:  # a tensor and an array holding the same numbers agree
        found = []
        if expected.get("shape") != observed.get("shape"):
            return [f"{where}: shape {expected.get('shape')} vs {observed.get('shape')}"]
        both = expected.get("data") is not None and observed.get("data") is not None
        if both and not numbers_agree(expected["data"], observed["data"]):
            found.append(f"{where}: {preview(expected['data'])} vs {preview(observed['data'])}")
        found.extend(differences(expected.get("grad"), observed.get("grad"), f"{where}.grad"))
        return found
    if kind == "module":
        return mapping_differences(expected["tensors"], observed["tensors"], where)
    if kind == "list":
        if len(expected["items"]) != len(observed["items"]):
            return [f"{where}: {len(expected['items'])} items vs {len(observed['items'])}"]
        return [
            difference
            for index, (left, right) in enumerate(zip(expected["items"], observed["items"]))
            for difference in differences(left, right, f"{where}[{index}]")
        ]
    left, right = expected.get("value"), observed.get("value")
    if isinstance(left, (int, float)) and isinstance(right, (int, float)) and not isinstance(left, bool):
        return [] if numbers_agree(left, right) else [f"{where}: {left!r} vs {right!r}"]
    return [] if left == right else [f"{where}: {left!r} vs {right!r}"]


def mapping_differences(expected: dict[str, Any], observed: dict[str, Any], prefix: str = "") -> list[str]:
    found = []
    for name in sorted(set(expected) | set(observed)):
        where = f"{prefix}.{name}" if prefix else name
        found.extend(differences(expected.get(name), observed.get(name), where))
    return found


def conversion_differences(expected: list[dict[str, Any]], observed: list[dict[str, Any]]) -> list[str]:
    """The arrays each run's `.numpy()` calls returned, compared in the order they were made."""
    if len(expected) != len(observed):
        return [f".numpy() returned {len(expected)} arrays vs {len(observed)}"]
    return [
        difference
        for index, (left, right) in enumerate(zip(expected, observed))
        for difference in differences(left["value"], right["value"], f".numpy() call {index + 1} (line {right['line']})")
    ]


def gradients(values: dict[str, Any]) -> dict[str, Any]:
    """Every gradient held by a module-level tensor or module parameter: name -> picture."""
    found: dict[str, Any] = {}

    def visit(picture: Any, where: str) -> None:
        if not isinstance(picture, dict):
            return
        if picture.get("kind") == "tensor" and picture.get("grad") is not None:
            found[f"{where}.grad"] = picture["grad"]
        elif picture.get("kind") == "module":
            for name, tensor in picture["tensors"].items():
                visit(tensor, f"{where}.{name}")
        elif picture.get("kind") == "list":
            for index, item in enumerate(picture["items"]):
                visit(item, f"{where}[{index}]")

    for name, picture in values.items():
        visit(picture, name)
    return found


def numbers_agree(left: Any, right: Any) -> bool:
    import numpy

    try:
        first, second = numpy.asarray(left), numpy.asarray(right)
        if first.shape != second.shape:
            return False
        if first.dtype.kind in "fciub" and second.dtype.kind in "fciub":
            return bool(numpy.allclose(first, second, rtol=1e-5, atol=1e-6, equal_nan=True))
        return bool((first == second).all())
    except (TypeError, ValueError):
        return bool(left == right)


def preview(data: Any, limit: int = 4) -> str:
    """A short rendering of (nested) numbers: `[0.5, 1.2, ...]`."""
    import numpy

    try:
        flat = numpy.asarray(data, dtype=float).ravel()
    except (TypeError, ValueError):
        return repr(data)[:40]
    shown = ", ".join(f"{value:.4g}" for value in flat[:limit])
    return f"[{shown}{', ...' if flat.size > limit else ''}]"
