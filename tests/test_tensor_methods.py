"""The table of torch.Tensor's methods (analysis/tensor_methods.py) against the installed torch."""

from __future__ import annotations

import pytest

from flake8_detach.analysis.tensor_methods import TENSOR_METHODS

torch = pytest.importorskip("torch")


def test_the_table_is_torch_tensors_public_methods() -> None:
    names = {name for name in dir(torch.Tensor) if not name.startswith("_") and callable(getattr(torch.Tensor, name, None))}
    assert TENSOR_METHODS <= names  # every listed name is a method of a tensor
    if not torch.__version__.startswith("2.13."):
        pytest.skip(f"the table was written on torch 2.13; this is {torch.__version__}")
    assert names == TENSOR_METHODS  # rerun scripts/write_tensor_methods.py --write after an upgrade


def test_module_only_names_are_not_tensor_methods() -> None:
    assert {"detach", "numpy", "cpu", "view", "sum"} <= TENSOR_METHODS
    assert not {"inference", "predict", "encode", "parameters", "eval"} & TENSOR_METHODS
