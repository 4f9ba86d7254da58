"""Check the dtype/layout tables of flake8_detach.analysis.dtypes against the installed libraries.

Usage: python scripts/check_dtype_facts.py

Prints each fact with what the library does and asserts it, so the tables (and DET107/DET109's
runtime truth) can be re-checked on a new torch or NumPy. Written against torch 2.13.0 (CPU)
and NumPy 2.4.6; needs matplotlib and pandas for the implicit conversions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from flake8_detach.analysis import dtypes as dt
from flake8_detach.analysis import semantics as sem


def raised(action: Callable[[], object]) -> str:
    try:
        action()
    except Exception as error:  # noqa: BLE001 - the exception is the fact being checked
        return f"{type(error).__name__}: {error}"
    return "ok"


def fact(what: str, observed: object, expected: object) -> None:
    print(f"{'ok ' if observed == expected else 'BAD'} {what}: {observed}")
    assert observed == expected, f"{what}: expected {expected}, got {observed}"


def starts(what: str, observed: str, prefix: str) -> None:
    fact(what, observed[: len(prefix)], prefix)


BF16_TEXT = "TypeError: Got unsupported ScalarType BFloat16"
SPARSE_TEXT = "TypeError: can't convert Sparse layout tensor to numpy"
CONJ_TEXT = "RuntimeError: Can't call numpy() on Tensor that has conjugate bit set"
MISMATCH_TEXT = "RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float"


def check_det107() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    bf16 = torch.ones(2, dtype=torch.bfloat16)
    starts("bfloat16 .numpy()", raised(bf16.numpy), BF16_TEXT)
    for name, convert in (("np.asarray", np.asarray), ("np.array", np.array), ("plt.plot", plt.plot),
                          ("pd.Series", pd.Series)):
        starts(f"{name}(bfloat16 tensor)", raised(lambda convert=convert: convert(bf16)), BF16_TEXT)
    starts("np.mean([bfloat16 tensors])", raised(lambda: np.mean([bf16[0], bf16[1]])), BF16_TEXT)
    fact("float16 .numpy()", raised(torch.ones(2, dtype=torch.float16).numpy), "ok")
    fact("bfloat16 .float() is exact", torch.equal(bf16.float().bfloat16(), bf16), True)
    sparse = torch.ones(2, 2).to_sparse()
    starts("sparse .numpy()", raised(sparse.numpy), SPARSE_TEXT)
    starts("np.asarray(sparse)", raised(lambda: np.asarray(sparse)), SPARSE_TEXT)
    starts("sparse_coo_tensor .numpy()", raised(torch.sparse_coo_tensor([[0], [1]], [1.0], (2, 2)).numpy), SPARSE_TEXT)
    starts("to_sparse_csr .numpy()", raised(torch.ones(2, 2).to_sparse_csr().numpy), "TypeError: can't convert SparseCsr layout")
    for method in sorted(dt.SPARSE_KEEPING - {"cuda", "to", "requires_grad_", "detach_"}):
        starts(f"sparse.{method}() stays sparse", raised(getattr(sparse, method)().numpy), SPARSE_TEXT)
    fact("sparse.to_dense() converts", raised(sparse.to_dense().numpy), "ok")
    conj = torch.fft.fft(torch.ones(4)).conj()
    starts("fft(...).conj() .numpy()", raised(conj.numpy), CONJ_TEXT)
    starts("np.asarray(conj view)", raised(lambda: np.asarray(conj)), CONJ_TEXT)
    for method in ("detach", "cpu", "contiguous", "t", "flatten"):
        starts(f"conj.{method}() keeps the bit", raised(getattr(conj.reshape(2, 2), method)().numpy), CONJ_TEXT)
    fact("conj.clone() resolves", raised(conj.clone().numpy), "ok")
    fact("conj * 2 resolves", raised((conj * 2).numpy), "ok")
    fact("conj.resolve_conj() converts", raised(conj.resolve_conj().numpy), "ok")
    fact("real tensor .conj() converts", raised(torch.ones(2).conj().numpy), "ok")


def check_factories_and_promotion() -> None:
    fact("torch.tensor(python floats)", torch.tensor([1.0, 2.0]).dtype, torch.float32)
    fact("torch.tensor(python ints)", torch.tensor([1, 2]).dtype, torch.int64)
    for name in sorted(dt.TORCH_FLOAT_FACTORIES - {"Tensor", "FloatTensor", "empty_strided", "normal", "full", "eye"}):
        args = (0.0, 1.0, 3) if name in ("linspace", "logspace") else (2,)
        fact(f"torch.{name} default", getattr(torch, name)(*args).dtype, torch.float32)
    fact("np.random.rand default", np.random.rand(2).dtype, np.float64)
    fact("np.random.randn default", np.random.randn(2).dtype, np.float64)
    for name in ("uniform", "normal", "random", "random_sample", "standard_normal"):
        fact(f"np.random.{name} default", getattr(np.random, name)(size=2).dtype, np.float64)
    fact("np.loadtxt default", np.loadtxt(["1 2", "3 4"]).dtype, np.float64)
    fact("np.genfromtxt default", np.genfromtxt(["1 2", "3 4"]).dtype, np.float64)
    for name in ("zeros", "ones", "empty"):
        fact(f"np.{name} default", getattr(np, name)(2).dtype, np.float64)
    fact("np.linspace default", np.linspace(0, 1, 3).dtype, np.float64)
    fact("np.eye default", np.eye(2).dtype, np.float64)
    fact("np.identity default", np.identity(2).dtype, np.float64)
    fact("np.arange(float)", np.arange(0.0, 1.0).dtype, np.float64)
    fact("np.arange(int)", np.arange(3).dtype, np.int64)
    fact(".astype(np.float32)", np.random.rand(2).astype(np.float32).dtype, np.float32)
    array = np.random.rand(2, 3)
    fact("torch.from_numpy keeps float64", torch.from_numpy(array).dtype, torch.float64)
    fact("torch.as_tensor keeps float64", torch.as_tensor(array).dtype, torch.float64)
    fact("torch.tensor keeps float64", torch.tensor(array).dtype, torch.float64)
    fact("float32 + float64 tensors", (torch.ones(2) + torch.ones(2, dtype=torch.float64)).dtype, torch.float64)
    fact("float32 + 0-dim float64 (scalar rule)", (torch.ones(2) + torch.tensor(1.0, dtype=torch.float64)).dtype, torch.float32)
    fact("bfloat16 * 2.0", (torch.ones(2, dtype=torch.bfloat16) * 2.0).dtype, torch.bfloat16)
    fact("bfloat16 + float32", (torch.ones(2, dtype=torch.bfloat16) + torch.ones(2)).dtype, torch.float32)
    fact("float16 + bfloat16", (torch.ones(2, dtype=torch.float16) + torch.ones(2, dtype=torch.bfloat16)).dtype, torch.float32)
    fact("int64 * 0.5", (torch.ones(2, dtype=torch.long) * 0.5).dtype, torch.float32)
    fact("nn.Linear(...).bfloat16() output", nn.Linear(3, 1).bfloat16()(torch.ones(1, 3, dtype=torch.bfloat16)).dtype, torch.bfloat16)
    fact("nn.Linear(...).double() output", nn.Linear(3, 1).double()(torch.ones(1, 3, dtype=torch.float64)).dtype, torch.float64)


def check_autocast() -> None:
    a = torch.ones(2, 3)
    lower = {
        "matmul": lambda: torch.matmul(a, a.T), "mm": lambda: torch.mm(a, a.T), "bmm": lambda: torch.bmm(a[None], a.T[None]),
        "addmm": lambda: torch.addmm(torch.ones(2, 2), a, a.T), "baddbmm": lambda: torch.baddbmm(torch.ones(1, 2, 2), a[None], a.T[None]),
        "addbmm": lambda: torch.addbmm(torch.ones(2, 2), a[None], a.T[None]), "linear": lambda: F.linear(a, a),
        "conv1d": lambda: F.conv1d(torch.ones(1, 1, 5), torch.ones(1, 1, 3)),
        "conv2d": lambda: F.conv2d(torch.ones(1, 1, 5, 5), torch.ones(1, 1, 3, 3)),
        "conv3d": lambda: F.conv3d(torch.ones(1, 1, 5, 5, 5), torch.ones(1, 1, 3, 3, 3)),
        "conv_transpose1d": lambda: F.conv_transpose1d(torch.ones(1, 1, 5), torch.ones(1, 1, 3)),
        "conv_transpose2d": lambda: F.conv_transpose2d(torch.ones(1, 1, 5, 5), torch.ones(1, 1, 3, 3)),
        "conv_transpose3d": lambda: F.conv_transpose3d(torch.ones(1, 1, 5, 5, 5), torch.ones(1, 1, 3, 3, 3)),
        "einsum": lambda: torch.einsum("ij,kj->ik", a, a), "prelu": lambda: F.prelu(a, torch.ones(1)),
        "scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(a[None], a[None], a[None]),
    }
    fact("autocast list covers the table", sorted(lower), sorted(dt.AUTOCAST_LOWER_FUNCTIONS))
    layers = {"Linear": (nn.Linear(3, 2), a), "Conv1d": (nn.Conv1d(1, 1, 3), torch.ones(1, 1, 5)),
              "Conv2d": (nn.Conv2d(1, 1, 3), torch.ones(1, 1, 5, 5)), "Conv3d": (nn.Conv3d(1, 1, 3), torch.ones(1, 1, 5, 5, 5)),
              "ConvTranspose1d": (nn.ConvTranspose1d(1, 1, 3), torch.ones(1, 1, 5)),
              "ConvTranspose2d": (nn.ConvTranspose2d(1, 1, 3), torch.ones(1, 1, 5, 5)),
              "ConvTranspose3d": (nn.ConvTranspose3d(1, 1, 3), torch.ones(1, 1, 5, 5, 5)), "PReLU": (nn.PReLU(), a)}
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for name, run in lower.items():
            fact(f"autocast(cpu, bfloat16) {name}", run().dtype, torch.bfloat16)
        for name, (layer, x) in layers.items():
            fact(f"autocast(cpu, bfloat16) nn.{name}", layer(x).dtype, torch.bfloat16)
        attention = nn.MultiheadAttention(4, 1)
        q = torch.ones(2, 1, 4)
        fact("autocast(cpu, bfloat16) nn.MultiheadAttention", attention(q, q, q)[0].dtype, torch.bfloat16)
        for name, run in {"add": lambda: a + a, "relu": lambda: torch.relu(a), "softmax": lambda: torch.softmax(a, 1),
                          "layer_norm": lambda: F.layer_norm(a, (3,)), "sum": lambda: a.sum()}.items():
            fact(f"autocast(cpu, bfloat16) {name} stays float32", run().dtype, torch.float32)


def check_det109() -> None:
    x64 = torch.ones(2, 3, dtype=torch.float64)
    inputs = {"Linear": x64, "Bilinear": None, "Conv1d": torch.ones(1, 1, 5, dtype=torch.float64),
              "Conv2d": torch.ones(1, 1, 5, 5, dtype=torch.float64), "Conv3d": torch.ones(1, 1, 5, 5, 5, dtype=torch.float64),
              "ConvTranspose1d": torch.ones(1, 1, 5, dtype=torch.float64),
              "ConvTranspose2d": torch.ones(1, 1, 5, 5, dtype=torch.float64),
              "ConvTranspose3d": torch.ones(1, 1, 5, 5, 5, dtype=torch.float64),
              "LSTM": torch.ones(4, 1, 3, dtype=torch.float64), "GRU": torch.ones(4, 1, 3, dtype=torch.float64),
              "RNN": torch.ones(4, 1, 3, dtype=torch.float64), "BatchNorm1d": x64,
              "BatchNorm2d": torch.ones(2, 3, 2, 2, dtype=torch.float64), "BatchNorm3d": torch.ones(2, 3, 2, 2, 2, dtype=torch.float64),
              "LayerNorm": x64, "GroupNorm": x64, "MultiheadAttention": None, "PReLU": x64}
    fact("layer list covers the table", sorted(inputs), sorted(dt.FLOAT32_PARAMETER_LAYERS))
    builders: dict[str, Callable[[], nn.Module]] = {
        "Linear": lambda: nn.Linear(3, 2), "Bilinear": lambda: nn.Bilinear(3, 3, 2), "Conv1d": lambda: nn.Conv1d(1, 1, 3),
        "Conv2d": lambda: nn.Conv2d(1, 1, 3), "Conv3d": lambda: nn.Conv3d(1, 1, 3),
        "ConvTranspose1d": lambda: nn.ConvTranspose1d(1, 1, 3), "ConvTranspose2d": lambda: nn.ConvTranspose2d(1, 1, 3),
        "ConvTranspose3d": lambda: nn.ConvTranspose3d(1, 1, 3), "LSTM": lambda: nn.LSTM(3, 2), "GRU": lambda: nn.GRU(3, 2),
        "RNN": lambda: nn.RNN(3, 2), "BatchNorm1d": lambda: nn.BatchNorm1d(3), "BatchNorm2d": lambda: nn.BatchNorm2d(3),
        "BatchNorm3d": lambda: nn.BatchNorm3d(3), "LayerNorm": lambda: nn.LayerNorm(3), "GroupNorm": lambda: nn.GroupNorm(1, 3),
        "MultiheadAttention": lambda: nn.MultiheadAttention(3, 1), "PReLU": lambda: nn.PReLU(),
    }
    for name, build in builders.items():
        layer = build()
        x = inputs[name]
        if name == "Bilinear":
            outcome = raised(lambda layer=layer: layer(x64, x64))
        elif name == "MultiheadAttention":
            q = torch.ones(2, 1, 3, dtype=torch.float64)
            outcome = raised(lambda layer=layer, q=q: layer(q, q, q))
        else:
            outcome = raised(lambda layer=layer, x=x: layer(x))
        fact(f"float64 into nn.{name} raises", outcome.split(":")[0] in ("RuntimeError", "ValueError"), True)
        fact(f"float64 into nn.{name}.double() runs", raised(lambda build=build, name=name, x=x: _double_run(build(), name, x)), "ok")
    fact("float64 into nn.Linear: the text", raised(lambda: nn.Linear(3, 2)(x64)), MISMATCH_TEXT)
    for name, error in dt.LAYER_ERRORS.items():
        layer, x = builders[name](), inputs[name]
        if name == "MultiheadAttention":
            q = torch.ones(2, 1, 3, dtype=torch.float64)
            outcome = raised(lambda layer=layer, q=q: layer(q, q, q))
        else:
            outcome = raised(lambda layer=layer, x=x: layer(x))
        starts(f"float64 into nn.{name}: the text", outcome, error)
    fact("float64 into nn.ReLU runs", raised(lambda: nn.ReLU()(x64)), "ok")
    fact("float32 @ float64", raised(lambda: torch.ones(2, 3) @ x64.T).split(":")[0], "RuntimeError")
    for name in sorted(dt.MATMUL_FUNCTIONS - {"linear", "dot", "mv"}):
        fact(f"torch.{name}(float32, float64) raises", raised(lambda name=name: getattr(torch, name)(torch.ones(2, 3), x64.T)).split(":")[0], "RuntimeError")
    probability, target = torch.ones(4).sigmoid(), torch.ones(4, dtype=torch.float64)
    fact("F.binary_cross_entropy(float32, float64)", raised(lambda: F.binary_cross_entropy(probability, target)),
         "RuntimeError: Found dtype Double but expected Float")
    fact("nn.BCELoss()(float32, float64) raises", raised(lambda: nn.BCELoss()(probability, target)).split(":")[0], "RuntimeError")
    for name, loss in (("mse_loss", F.mse_loss), ("l1_loss", F.l1_loss), ("smooth_l1_loss", F.smooth_l1_loss),
                       ("huber_loss", F.huber_loss), ("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits)):
        fact(f"F.{name}(float32, float64) promotes and runs", raised(lambda loss=loss: loss(probability, target)), "ok")
    fact("F.cross_entropy(float32, int64 targets) runs",
         raised(lambda: F.cross_entropy(torch.ones(4, 3), torch.zeros(4, dtype=torch.long))), "ok")


def check_tabular() -> None:
    """analysis/frames.py: pandas readers, selections and statistics; scikit-learn's scalers and
    splitter (skipped, and said so, where scikit-learn is not installed)."""
    import io

    import pandas as pd

    from flake8_detach.analysis import frames

    csv = "a,b,flag,n\n1.5,2.5,true,1\n3.5,4.5,false,2\n"
    frame = pd.read_csv(io.StringIO(csv))
    read_kinds = {str(dtype) for dtype in frame.dtypes}
    fact("read_csv: float64, int64 and bool columns", read_kinds, {"float64", "bool", "int64"})
    for name in sorted(frames.FLOAT_STATISTICS):
        numeric = frame[["a", "b", "n"]]
        result = getattr(numeric, name)()
        fact(f"DataFrame.{name}() of float64 and int64 columns is float64", str(np.asarray(result).dtype), "float64")
        single = getattr(numeric[["n"]], name)()
        fact(f"DataFrame.{name}() of an int64 column is float64", str(np.asarray(single).dtype), "float64")
    # Of float32 columns the statistics give float32 (mean) or float64 (corr): frames.py claims nothing.
    fact("DataFrame.mean() of float32 columns is float32",
         str(pd.DataFrame(np.ones((3, 2), dtype=np.float32)).mean().values.dtype), "float32")
    fact("DataFrame.mean() of a bool column is float64", str(frame[["flag"]].mean().values.dtype), "float64")
    built = pd.DataFrame(np.random.rand(4, 3))
    fact("DataFrame(float64 array).values", str(built.values.dtype), "float64")
    for name in sorted(frames.SELECTING_METHODS):
        arguments = {"drop": (0,), "sort_values": (0,), "query": ("index >= 0",), "filter": ([0, 1],),
                     "take": ([0, 1],), "nlargest": (2, 0), "nsmallest": (2, 0)}.get(name, ())
        selected = getattr(built, name)(*arguments)
        fact(f"DataFrame.{name}() keeps float64", str(selected.values.dtype), "float64")
    fact("iloc, loc, [cols], .T keep float64", {str(part.values.dtype) for part in (
        built.iloc[:, :2], built.loc[:, [0, 1]], built[[0, 1]], built[0], built.T)}, {"float64"})
    fact("to_numpy(dtype=np.float32)", str(built.to_numpy(dtype=np.float32).dtype), "float32")
    fact("astype(np.float32).values", str(built.astype(np.float32).values.dtype), "float32")
    fact("float64 frame values into nn.Linear raise", raised(lambda: nn.Linear(3, 1)(torch.from_numpy(built.values))),
         MISMATCH_TEXT)
    try:
        from sklearn import decomposition, preprocessing
        from sklearn.model_selection import train_test_split
    except ImportError:
        print("SKIPPED scikit-learn facts: scikit-learn is not installed")
        return
    integers = np.arange(30).reshape(10, 3)
    for name in sorted(frames.FLOAT_TRANSFORMERS):
        cls = getattr(preprocessing, name, None) or getattr(decomposition, name)
        for data, expected in ((integers, "float64"), (integers.astype(np.float64), "float64"),
                               (pd.DataFrame(integers), "float64"), (integers > 5, "float64"),
                               (integers.astype(np.float32), "float32")):
            made = cls(n_quantiles=10) if name == "QuantileTransformer" else cls()
            fact(f"{name}().fit_transform({data.dtypes.iloc[0] if hasattr(data, 'dtypes') else data.dtype})",
                 str(made.fit_transform(data).dtype), expected)
    fitted = preprocessing.StandardScaler().fit(integers)
    fact("StandardScaler().fit(...).transform(int64)", str(fitted.transform(integers).dtype), "float64")
    parts = train_test_split(integers.astype(np.float64), pd.DataFrame(integers.astype(np.float32)), test_size=0.5)
    fact("train_test_split: each array's rows, in order, of its type and dtype",
         [(type(part).__name__, str(np.asarray(part).dtype)) for part in parts],
         [("ndarray", "float64")] * 2 + [("DataFrame", "float32")] * 2)
    fact("train_test_split of a reversed view gives a positive stride",
         train_test_split(integers[::-1], test_size=0.5)[0].strides[0] > 0, True)


# How each parameter-free module is built and how many dimensions its input has, where the
# default (no argument, or a kernel size of 2 for a pool; a 4-D input) does not fit.
_CONSTRUCTION: dict[str, tuple[tuple[object, ...], int]] = {
    **{f"{kind}{dims - 2}d": ((1,), dims) for kind in ("ZeroPad", "ReflectionPad", "ReplicationPad", "CircularPad")
       for dims in (3, 4, 5)},
    **{f"ConstantPad{dims - 2}d": ((1, 0.0), dims) for dims in (3, 4, 5)},
    **{name: ((2,), 3) for name in ("MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d", "AdaptiveMaxPool1d")},
    **{name: ((2,), 5) for name in ("MaxPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d")},
    "LPPool1d": ((2, 2), 3), "LPPool2d": ((2, 2), 4), "Threshold": ((0.1, 0.0), 4),
    "Upsample": ((None, 2), 4), "UpsamplingNearest2d": ((None, 2), 4), "UpsamplingBilinear2d": ((None, 2), 4),
    "PixelShuffle": ((2,), 4), "PixelUnshuffle": ((2,), 4), "ChannelShuffle": ((2,), 4),
    "Dropout1d": ((), 3), "Dropout3d": ((), 5),
}


def check_dtype_keeping() -> None:
    """The modules with no parameters: their output keeps the input's dtype and requires grad
    only through it; and torch.where's promotion."""
    for name in sorted(sem.PARAMETER_FREE_MODULES):
        arguments, dims = _CONSTRUCTION.get(name, ((2,) if "Pool" in name else (), 4))
        module = getattr(nn, name)(*arguments)
        fact(f"nn.{name}() has no parameters", list(module.parameters()), [])
        for dtype, grad in ((torch.bfloat16, False), (torch.float64, True)):
            first = torch.rand(2, 3, dtype=dtype) if name.endswith("Loss") else torch.rand(2, 4, *[4] * (dims - 2), dtype=dtype)
            first.requires_grad_(grad)
            if name in ("CrossEntropyLoss", "NLLLoss"):
                out = module(first, torch.tensor([0, 2]))
            elif name.endswith("Loss"):
                out = module(first, torch.rand(2, 3, dtype=dtype))
            else:
                out = module(first)
            fact(f"nn.{name}() of a {dtype} input (requires_grad={grad})", (out.dtype, out.requires_grad), (dtype, grad))
    t = torch.rand(3)
    fact("torch.where(c, float64, float64)", torch.where(t > 0.5, t.double(), t.double()).dtype, torch.float64)
    fact("torch.where(c, float32, float64)", torch.where(t > 0.5, t, t.double()).dtype, torch.float64)
    fact("torch.where(c, bfloat16, 0.0)", torch.where(t > 0.5, t.bfloat16(), 0.0).dtype, torch.bfloat16)


def _double_run(layer: nn.Module, name: str, x: torch.Tensor | None) -> object:
    layer = layer.double()
    x64 = torch.ones(2, 3, dtype=torch.float64)
    if name == "Bilinear":
        return layer(x64, x64)
    if name == "MultiheadAttention":
        q = torch.ones(2, 1, 3, dtype=torch.float64)
        return layer(q, q, q)
    return layer(x)


def check_affine_switches() -> None:
    """Normalisation layers with their parameters switched off: none left, an output that requires
    grad only through the input, and (batch norms' running statistics apart) the input's dtype."""
    for name, (keyword, default) in sorted(dt.AFFINE_SWITCHES.items()):
        if name == "SyncBatchNorm":
            continue  # its forward needs a process group; its parameters are BatchNorm's
        cls = getattr(nn, name)
        arguments = (2, 4) if name == "GroupNorm" else (4,)
        fact(f"nn.{name}() keeps its parameters by default", bool(list(cls(*arguments).parameters())), default)
        layer = cls(*arguments, **{keyword: False})
        fact(f"nn.{name}({keyword}=False) has no parameters", list(layer.parameters()), [])
        spatial = int(name[-2]) if name[-2].isdigit() else 0  # BatchNorm2d: two spatial dimensions
        x = torch.rand(3, 4, *[4] * (max(spatial, 1) if name.startswith("InstanceNorm") else spatial))
        fact(f"nn.{name}({keyword}=False) of an input without grad", layer(x).requires_grad, False)
        outcome = _raises(lambda layer=layer, x=x: layer(x.double()))
        expected = "RuntimeError" if name in dt.RUNNING_STATISTICS_LAYERS else None
        fact(f"nn.{name}({keyword}=False) of a float64 input raises", outcome, expected)
        if name in dt.RUNNING_STATISTICS_LAYERS:
            untracked = cls(*arguments, **{keyword: False, "track_running_stats": False})
            fact(f"nn.{name}({keyword}=False, track_running_stats=False) of float64",
                 untracked(x.double()).dtype, torch.float64)


def _raises(run: Callable[[], object]) -> str | None:
    try:
        run()
    except Exception as error:  # noqa: BLE001 - the kind is the fact
        return type(error).__name__
    return None


def main() -> None:
    print(f"torch {torch.__version__}, NumPy {np.__version__}")
    check_det107()
    check_factories_and_promotion()
    check_autocast()
    check_det109()
    check_tabular()
    check_dtype_keeping()
    check_affine_switches()
    print("all facts hold")


if __name__ == "__main__":
    main()
