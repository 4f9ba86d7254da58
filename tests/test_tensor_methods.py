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


def test_mapping_methods_are_no_tensor_module_or_array_method() -> None:
    """`batch.items()` of an object of unknown kind makes it a mapping (analysis/calls.py): none of
    a tensor, a module or an array has these methods."""
    np = pytest.importorskip("numpy")
    from flake8_detach.analysis.calls import MAPPING_METHODS

    for kind in (torch.Tensor, torch.nn.Module, torch.nn.Linear, np.ndarray):
        assert not {name for name in MAPPING_METHODS if hasattr(kind, name)}, kind
    assert all(hasattr(dict, name) for name in MAPPING_METHODS)
