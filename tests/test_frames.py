"""The tabular path to DET109 (analysis/frames.py): pandas frames, their statistics, scikit-learn's
scalers and `train_test_split`. Each program is linted and run: flagged exactly where it raises
(the scikit-learn ones run where scikit-learn is installed; the facts themselves are asserted by
scripts/check_dtype_facts.py)."""

from __future__ import annotations

import importlib.util

import pytest

from flake8_detach import check_source

torch = pytest.importorskip("torch")
pytest.importorskip("pandas")

HEAD = (
    "import io\nimport numpy as np\nimport pandas as pd\nimport torch\nfrom torch import nn\n"
    "CSV = 'a,b,c,n\\n1.5,2.5,3.5,1\\n4.5,5.5,6.5,2\\n7.5,8.5,9.5,3\\n'\nmodel = nn.Linear(3, 1)\n"
)
SKLEARN = "from sklearn.model_selection import train_test_split\nfrom sklearn.preprocessing import StandardScaler\n"

CASES = {
    # A frame of a float64 array, its columns and rows.
    "built_values": ("frame = pd.DataFrame(np.random.rand(4, 3))\nmodel(torch.from_numpy(frame.values))\n", True),
    "built_iloc": ("frame = pd.DataFrame(np.random.rand(4, 5))\nmodel(torch.from_numpy(frame.iloc[:, :3].values))\n",
                   True),
    "built_columns": (("frame = pd.DataFrame(np.random.rand(4, 3), columns=list('abc'))\n"
                      "model(torch.tensor(frame[['a', 'b', 'c']].to_numpy()))\n"), True),
    "built_dropna_head": (("frame = pd.DataFrame(np.random.rand(4, 3))\n"
                          "model(torch.as_tensor(frame.dropna().head(2).values))\n"), True),
    # A statistic of the columns read from a file: float64 whatever their numeric dtypes.
    "read_mean": ("frame = pd.read_csv(io.StringIO(CSV))\nmodel(torch.from_numpy(frame[['a', 'b', 'n']].mean().values))\n",
                  True),
    # Converted, or float32 from the start: no crash, no diagnostic.
    "astype_float32": (("frame = pd.DataFrame(np.random.rand(4, 3)).astype(np.float32)\n"
                       "model(torch.from_numpy(frame.values))\n"), False),
    "to_numpy_dtype": (("frame = pd.DataFrame(np.random.rand(4, 3))\n"
                       "model(torch.from_numpy(frame.to_numpy(dtype=np.float32)))\n"), False),
    "float32_mean": (("frame = pd.DataFrame(np.random.rand(4, 3).astype(np.float32))\n"
                     "model(torch.from_numpy(frame.mean().values))\n"), False),
    "converted_tensor": ("frame = pd.DataFrame(np.random.rand(4, 3))\nmodel(torch.from_numpy(frame.values).float())\n",
                         False),
    "float_tensor": ("frame = pd.DataFrame(np.random.rand(4, 3))\nmodel(torch.FloatTensor(frame.values))\n", False),
}
SKLEARN_CASES = {
    "scaled_read": (("frame = pd.read_csv(io.StringIO(CSV))\nX = StandardScaler().fit_transform(frame[['a', 'b', 'n']].values)\n"
                    "model(torch.from_numpy(X))\n"), True),
    "split_then_scaled": (("frame = pd.read_csv(io.StringIO(CSV))\nX_train, X_test = train_test_split(frame[['a', 'b', 'c']].values,"
                          " test_size=1)\nscaler = StandardScaler().fit(X_train)\nmodel(torch.tensor(scaler.transform(X_test)))\n"),
                          True),
    "split_keeps_float64": (("X = np.random.rand(6, 3)\nX_train, X_test, y_train, y_test = train_test_split(X, np.ones(6))\n"
                            "model(torch.from_numpy(X_train))\n"), True),
    "scaled_float32": (("X = StandardScaler().fit_transform(np.random.rand(4, 3).astype(np.float32))\n"
                       "model(torch.from_numpy(X))\n"), False),
    "split_of_float32": (("X = np.random.rand(6, 3).astype(np.float32)\nX_train, X_test = train_test_split(X)\n"
                         "model(torch.from_numpy(X_train))\n"), False),
}


def _raises(source: str) -> bool:
    try:
        exec(compile(source, "<frames>", "exec"), {"__name__": "__main__"})  # noqa: S102
    except (RuntimeError, ValueError):
        return True
    return False


def _flagged(source: str) -> bool:
    codes = [d.code for d in check_source(source)]
    assert set(codes) <= {"DET109"}, codes
    return bool(codes)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pandas_frames_carry_their_dtype_to_the_model(name: str) -> None:
    body, crashes = CASES[name]
    source = HEAD + body
    assert _raises(source) is crashes
    assert _flagged(source) is crashes


@pytest.mark.parametrize("name", sorted(SKLEARN_CASES))
def test_scikit_learn_scalers_and_splits_carry_the_dtype(name: str) -> None:
    body, crashes = SKLEARN_CASES[name]
    source = HEAD + SKLEARN + body
    assert _flagged(source) is crashes
    if importlib.util.find_spec("sklearn") is None:
        pytest.skip("scikit-learn is not installed: linted only (the facts: scripts/check_dtype_facts.py)")
    assert _raises(source) is crashes


def test_values_of_a_read_frame_are_not_claimed_float64() -> None:
    """`read_csv` gives float64 or int64 columns: `.values` into nn.Linear raises either way, but
    DET109 claims float64, and a may-set of two dtypes is no such evidence (docs/rules/DET109)."""
    source = HEAD + "frame = pd.read_csv(io.StringIO(CSV))\nmodel(torch.from_numpy(frame[['a', 'b', 'n']].values))\n"
    assert _raises(source)
    assert not _flagged(source)


def test_a_frame_is_not_a_tensor_for_the_other_rules() -> None:
    """`.data`, `.numpy()`-like names and plotting of a frame say nothing about tensors."""
    source = HEAD + (
        "frame = pd.read_csv(io.StringIO(CSV))\nprint(frame.values.sum(), frame.a.data if hasattr(frame.a, 'data') else 0)\n"
        "summary = frame.describe()\nnp.asarray(frame.mean())\n"
    )
    assert [d.code for d in check_source(source)] == []
