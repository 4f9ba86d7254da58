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


def test_results_listed_without_grad_never_require_it() -> None:
    """semantics.NO_GRAD_RESULTS, as a method and as a torch function, on a float tensor that
    requires grad (the listed names that are casts have no function form)."""
    from flake8_detach.analysis.semantics import NO_GRAD_RESULTS

    x = torch.rand(4, requires_grad=True)
    extra = {"bincount": lambda: ((x * 3).long(),), "searchsorted": lambda: (torch.sort(x)[0].detach(), x),
             "bucketize": lambda: (x, torch.tensor([0.5])), "histc": lambda: (x,)}
    binary = {"eq", "ne", "gt", "lt", "ge", "le", "greater", "less", "equal", "not_equal", "isclose",
              "logical_and", "logical_or", "logical_xor"}
    checked = 0
    for name in sorted(NO_GRAD_RESULTS):
        arguments = extra[name]() if name in extra else (x, x) if name in binary else (x,)
        for call in (getattr(torch, name, None), getattr(torch.Tensor, name, None)):
            if not callable(call) or isinstance(call, torch.dtype) or name == "bincount" and call is getattr(torch.Tensor, name):
                continue
            result = call(*arguments)
            results = result if isinstance(result, tuple) else (result,)
            assert not any(isinstance(r, torch.Tensor) and r.requires_grad for r in results), name
            checked += 1
    assert checked >= len(NO_GRAD_RESULTS)
    assert torch.unique(x).requires_grad  # why `unique` is not listed: `x.unique().numpy()` raises
