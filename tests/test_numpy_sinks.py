"""The NumPy sink table (analysis/numpy_sinks.py) against the installed NumPy and torch.

scripts/check_numpy_sinks.py measures which NumPy functions convert a tensor argument and writes
the table. Here the table's claims are measured again: every function it lists still converts
(DET106's diagnostics are true), every result it says is a tensor still is one, and every
function whose result shares memory is listed as sharing (a fix never forgets a copy).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from flake8_detach.analysis import numpy_sinks

pytest.importorskip("torch")
pytest.importorskip("numpy")

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "check_numpy_sinks.py"


def _script() -> ModuleType:
    if "check_numpy_sinks" in sys.modules:
        return sys.modules["check_numpy_sinks"]
    spec = importlib.util.spec_from_file_location("check_numpy_sinks", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def measured() -> object:
    return _script().measure()


def test_every_listed_converter_converts(measured: object) -> None:
    assert numpy_sinks.CONVERTING <= measured.converting  # type: ignore[attr-defined]


def test_every_listed_tensor_result_is_a_tensor(measured: object) -> None:
    assert numpy_sinks.TENSOR_RESULTS <= measured.tensor_results  # type: ignore[attr-defined]
    assert numpy_sinks.TENSOR_RESULTS <= numpy_sinks.CONVERTING


def test_every_sharing_result_is_listed(measured: object) -> None:
    assert measured.sharing <= numpy_sinks.SHARING  # type: ignore[attr-defined]


def test_list_only_converters_convert_a_list(measured: object) -> None:
    assert numpy_sinks.REDUCTIONS <= measured.reductions  # type: ignore[attr-defined]
    assert {"sum", "mean", "max"} <= numpy_sinks.REDUCTIONS


def test_a_probe_tells_a_converter_from_a_function_that_is_not() -> None:
    import numpy as np

    script = _script()
    assert script.probe("log10", np.log10).converts
    assert script.probe("power", np.power).converts
    assert not script.probe("shape", np.shape).converts  # reads `.shape`, converts nothing
    assert script.probe("sum", np.sum).list_converts and not script.probe("sum", np.sum).converts


def test_scalar_only_converters_convert_a_0_dim_tensor(measured: object) -> None:
    import numpy as np
    import torch

    assert numpy_sinks.SCALAR_CONVERTING <= measured.scalar_converting  # type: ignore[attr-defined]
    assert "arange" in numpy_sinks.SCALAR_CONVERTING
    assert not numpy_sinks.SCALAR_CONVERTING & (numpy_sinks.CONVERTING | numpy_sinks.REDUCTIONS)
    bound = torch.ones(3, requires_grad=True).sum()
    with pytest.raises(RuntimeError, match="requires grad"):
        np.arange(bound - 1, bound + 1)
    assert np.arange(bound.item() - 1, bound.item() + 1).tolist() == [2.0, 3.0]
