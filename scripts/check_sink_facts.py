"""Re-check the library facts behind DET108 and the DET106 sinks of scikit-learn and seaborn.

The tables in ``flake8_detach/analysis/array_facts.py`` (what makes, keeps and clears a negative
stride or a non-native byte order) and the sink tables in ``flake8_detach/analysis/semantics.py``
(``SKLEARN_METRICS``, ``SKLEARN_CONVERTING_METHODS``, ``SEABORN_PLOTTING``) are checked here entry
by entry: each fact is printed and asserted, so a new library version that changes one fails loudly.

scikit-learn, seaborn and OpenCV are not dependencies of the project: run this from a scratch
virtual environment outside the repository, with the package on the path::

    python3 -m venv /tmp/libcheck && /tmp/libcheck/bin/pip install numpy torch scikit-learn \
        seaborn opencv-python-headless pillow matplotlib
    PYTHONPATH=$PWD /tmp/libcheck/bin/python scripts/check_sink_facts.py

Last run: torch 2.13.0, NumPy 2.4.6, scikit-learn 1.9.1, seaborn 0.13.2, pandas 3.1.1,
opencv-python-headless 5.0.0, Pillow 13.0.0 (little-endian x86-64). A CUDA tensor cannot be
checked on a CPU-only machine: every sink below reaches the tensor through `Tensor.__array__`,
that is `Tensor.numpy()`, which raises the device TypeError for a CUDA tensor just as DET104 shows.
"""

from __future__ import annotations

import signal
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.utils.dlpack

from flake8_detach.analysis import array_facts as af
from flake8_detach.analysis import semantics as sem

warnings.filterwarnings("ignore")
REQUIRES_GRAD = "requires grad"
NEGATIVE = "stride in the given numpy array is negative"
BYTE_ORDER = "byte order different from the native byte order"
failures: list[str] = []


def fact(name: str, holds: bool, observed: str = "") -> None:
    print(f"{'ok  ' if holds else 'FAIL'} {name}{': ' + observed if observed else ''}")
    if not holds:
        failures.append(name)


def raised(call: Callable[[], Any]) -> str:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the failure is the observation
        return f"{type(error).__name__}: {str(error).splitlines()[0][:100]}"
    return "ran"


def negative(array: np.ndarray) -> bool:
    return any(stride < 0 for stride in array.strides)


def check_torch_constructors() -> None:
    flipped = np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::-1]
    big = np.arange(4, dtype=">f4")
    for qualified in sorted(af.TORCH_FROM_ARRAY):
        function = getattr(torch, qualified.split(".", 1)[1])
        fact(f"{qualified}(a[:, ::-1]) raises the negative-stride ValueError", NEGATIVE in raised(lambda f=function: f(flipped)), raised(lambda f=function: f(flipped)))
        fact(f"{qualified}(big-endian) raises the byte-order ValueError", BYTE_ORDER in raised(lambda f=function: f(big)))
        fact(f"{qualified}(a[:, ::-1].copy()) runs", raised(lambda f=function: f(flipped.copy())) == "ran")
        fact(f"{qualified}(one-byte '>u1') runs", raised(lambda f=function: f(np.arange(3, dtype=">u1"))) == "ran")
    fact("torch.tensor([1, 2, 3][::-1]) of a list runs", raised(lambda: torch.tensor([1, 2, 3][::-1])) == "ran")
    for qualified in sorted(af.TORCH_FROM_DLPACK):
        function = torch.from_dlpack if qualified == "torch.from_dlpack" else torch.utils.dlpack.from_dlpack
        fact(f"{qualified}(a[:, ::-1]) aborts the process (SIGABRT)", *_aborts(qualified))
        fact(f"{qualified}(big-endian) raises BufferError", "DLPack only supports native byte order" in raised(
            lambda f=function: f(big)), raised(lambda f=function: f(big)))
        fact(f"{qualified}(a[:, ::-1].copy()) runs", raised(lambda f=function: f(flipped.copy())) == "ran")


def _aborts(qualified: str) -> tuple[bool, str]:
    """In a process of its own: the abort would end this one."""
    import subprocess

    code = ("import numpy as np, torch, torch.utils.dlpack\n"
            f"{qualified}(np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::-1])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    return done.returncode == -signal.SIGABRT and "Storage size calculation overflowed" in done.stderr, f"exit {done.returncode}"


def check_numpy_layout() -> None:
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    n = a[:, :, ::-1]
    fact("a[:, :, ::-1] has a negative stride", negative(n))
    fact("a[::-2] has a negative stride", negative(a[::-2]))
    fact("a[::2] has none", not negative(a[::2]))
    for name in sorted(af.NUMPY_FLIPS):
        fact(f"np.{name}(a) has a negative stride", negative(getattr(np, name)(a[0])))
    fact("np.rot90(a, 4) has none", not negative(np.rot90(a[0], 4)))
    for name in sorted(af.NUMPY_VIEWS):
        function = getattr(np, name)
        result = function(n, 0) if name in ("expand_dims",) else function(n, 0, 1) if name in ("swapaxes", "moveaxis") else function(n)
        fact(f"np.{name} keeps the negative stride (a view)", negative(result))
    for name in sorted(af.NUMPY_COPIES_KEEPING_DTYPE):
        big = np.arange(4, dtype=">f4")[::-1]
        result = getattr(np, name)(big)
        fact(f"np.{name} copies (no negative stride) and keeps the byte order", not negative(result) and not result.dtype.isnative)
    for method in sorted(af.NDARRAY_VIEW_METHODS):
        result = getattr(n, method)(*((0, 1) if method == "swapaxes" else ()))
        fact(f"a.{method}() keeps the negative stride", negative(result))
    fact("a.T keeps the negative stride", negative(n.T))
    for method in sorted(af.NDARRAY_COPIES_KEEPING_DTYPE):
        big = np.arange(4, dtype=">f4")
        result = getattr(big, method)(*((2,) if method == "repeat" else (-1,) if method == "reshape" else ()))
        fact(f"a.{method}() keeps the byte order", not result.dtype.isnative)
    for method in ("copy", "flatten"):
        fact(f"a.{method}() has no negative stride", not negative(getattr(n, method)()))
    fact("a.astype(np.float32) has no negative stride", not negative(n.astype(np.float32)))
    big = np.arange(4, dtype=">f4")
    fact("big.astype(np.float32) is native", big.astype(np.float32).dtype.isnative)
    fact('big.astype(big.dtype.newbyteorder("=")) is native, same values',
         big.astype(big.dtype.newbyteorder("=")).dtype.isnative and (big.astype(big.dtype.newbyteorder("=")) == big).all())
    fact("big.byteswap().view(big.dtype.newbyteorder()) is native", big.byteswap().view(big.dtype.newbyteorder()).dtype.isnative)
    fact("arithmetic (a * 1, a / 255.0) clears both", not negative(n * 1) and not negative(n / 255.0) and (big * 1).dtype.isnative)
    fact("np.ndarray has no newbyteorder method (NumPy 2)", not hasattr(np.ndarray, "newbyteorder"))
    for text in (">f4", ">f8", ">i4", ">u2", ">c8", ">f2", ">i8"):
        fact(f"'{text}' is recognised as non-native", af.typestring_value(text).flags != 0 and not np.dtype(text).isnative)
    for text in (">u1", ">i1", "<f4", "=f4", "float32"):
        fact(f"'{text}' is not flagged", af.typestring_value(text).flags == 0)
    fact("np.dtype('>f4').newbyteorder('>') is non-native", not np.dtype("f4").newbyteorder(">").isnative)


def check_cv2() -> None:
    import cv2

    img = (np.random.rand(8, 8, 3) * 255).astype(np.uint8)
    n = img[:, :, ::-1]
    cv2.imwrite("/tmp/check_sink_facts.png", img)
    calls: dict[str, Callable[[], Any]] = {
        "imread": lambda: cv2.imread("/tmp/check_sink_facts.png"),
        "imdecode": lambda: cv2.imdecode(cv2.imencode(".png", img)[1], 1),
        "flip": lambda: cv2.flip(n, 1), "resize": lambda: cv2.resize(n, (4, 4)),
        "cvtColor": lambda: cv2.cvtColor(n, cv2.COLOR_RGB2BGR), "warpAffine": lambda: cv2.warpAffine(n, np.eye(2, 3), (8, 8)),
        "warpPerspective": lambda: cv2.warpPerspective(n, np.eye(3), (8, 8)), "GaussianBlur": lambda: cv2.GaussianBlur(n, (3, 3), 0),
        "copyMakeBorder": lambda: cv2.copyMakeBorder(n, 1, 1, 1, 1, cv2.BORDER_CONSTANT), "rotate": lambda: cv2.rotate(n, cv2.ROTATE_90_CLOCKWISE),
        "medianBlur": lambda: cv2.medianBlur(n, 3), "blur": lambda: cv2.blur(n, (3, 3)), "merge": lambda: cv2.merge([n[..., 0], n[..., 1]]),
    }
    fact("CV2_ARRAY_RESULTS are all checked here", set(calls) == set(af.CV2_ARRAY_RESULTS))
    for name, call in sorted(calls.items()):
        result = call()
        fact(f"cv2.{name} returns a fresh contiguous native ndarray", isinstance(result, np.ndarray) and not negative(result) and result.dtype.isnative)
    grad = torch.rand(8, 8, 3, requires_grad=True) * 1
    for name, call in (("imwrite", lambda t: cv2.imwrite("/tmp/check_sink_facts.png", t)), ("resize", lambda t: cv2.resize(t, (4, 4))),
                       ("cvtColor", lambda t: cv2.cvtColor(t, cv2.COLOR_RGB2BGR))):
        observed = raised(lambda c=call: c(grad))
        fact(f"cv2.{name}(tensor) is no DET106 sink: it rejects any tensor, not through .numpy()",
             REQUIRES_GRAD not in observed and "error" in observed and "error" in raised(lambda c=call: c(grad.detach())), observed)


def check_pillow() -> None:
    import PIL.Image

    grad = torch.rand(8, 8, 3, requires_grad=True) * 1
    observed = raised(lambda: PIL.Image.fromarray(grad))
    fact("PIL.Image.fromarray(tensor) is no DET106 sink: AttributeError for any tensor", "AttributeError" in observed
         and "AttributeError" in raised(lambda: PIL.Image.fromarray(grad.detach())), observed)


def check_sklearn() -> None:
    from sklearn import metrics
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.manifold import TSNE
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    labels = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1])
    scores = torch.rand(8, requires_grad=True) * 1
    ones = torch.ones(8, requires_grad=True) * 1
    features = torch.rand(8, 3, requires_grad=True) * 1
    regression = {"mean_squared_error", "mean_absolute_error", "r2_score", "explained_variance_score"}
    with_scores = {"roc_auc_score", "average_precision_score", "log_loss", "brier_score_loss", "precision_recall_curve", "roc_curve"}
    for name in sorted(sem.SKLEARN_METRICS):
        function = getattr(metrics, name)
        if name == "silhouette_score":
            observed = raised(lambda f=function: f(features, labels))
        elif name in regression:
            observed = raised(lambda f=function: f(labels.float(), scores))
        elif name in with_scores:
            observed = raised(lambda f=function: f(labels, scores))
        else:
            observed = raised(lambda f=function: f(labels, ones))
        fact(f"sklearn.metrics.{name}(..., grad tensor) raises the requires-grad RuntimeError", REQUIRES_GRAD in observed, observed)
    fitted = LogisticRegression().fit(features.detach().numpy(), labels.numpy())
    scaler = StandardScaler().fit(features.detach().numpy())
    method_checks = {
        "fit": lambda: LogisticRegression().fit(features, labels), "predict": lambda: fitted.predict(features),
        "predict_proba": lambda: fitted.predict_proba(features), "score": lambda: fitted.score(features, labels),
        "fit_predict": lambda: KMeans(2, n_init=1).fit_predict(features), "fit_transform": lambda: PCA(2).fit_transform(features),
        "transform": lambda: scaler.transform(features),
    }
    fact("SKLEARN_CONVERTING_METHODS are all checked here", set(method_checks) == set(sem.SKLEARN_CONVERTING_METHODS))
    for name, call in sorted(method_checks.items()):
        observed = raised(call)
        fact(f"estimator.{name}(grad tensor) raises the requires-grad RuntimeError", REQUIRES_GRAD in observed, observed)
    for label, call in (("LinearRegression().fit(X, grad y)", lambda: LinearRegression().fit(features.detach(), scores)),
                        ("KMeans().fit(grad X)", lambda: KMeans(2, n_init=1).fit(features)),
                        ("TSNE().fit_transform(grad X)", lambda: TSNE(2, perplexity=2).fit_transform(features))):
        observed = raised(call)
        fact(f"{label} raises the requires-grad RuntimeError", REQUIRES_GRAD in observed, observed)
    fact("train_test_split(grad X) runs: not a sink", raised(lambda: train_test_split(features, labels)) == "ran")


def check_seaborn() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import seaborn as sns

    grad = torch.rand(8, requires_grad=True) * 1
    grid = torch.rand(4, 3, requires_grad=True) * 1
    labels = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1])
    keyword_calls: dict[str, dict[str, Any]] = {
        "lineplot": {"x": torch.arange(8), "y": grad}, "scatterplot": {"x": grad, "y": grad},
        "barplot": {"x": labels, "y": grad}, "relplot": {"x": grad, "y": grad},
    }
    for name in sorted(sem.SEABORN_PLOTTING):
        function = getattr(sns, name)
        if name in ("heatmap", "clustermap"):
            observed = raised(lambda f=function: f(grid))
        elif name in keyword_calls:
            observed = raised(lambda f=function, k=keyword_calls[name]: f(**k))
        else:
            observed = raised(lambda f=function: f(x=grad))
        fact(f"seaborn.{name}(grad tensor) raises the requires-grad RuntimeError", REQUIRES_GRAD in observed, observed)
    observed = raised(lambda: sns.regplot(x=grad, y=grad))
    fact("seaborn.regplot fails otherwise: not listed", REQUIRES_GRAD not in observed and "regplot" not in sem.SEABORN_PLOTTING, observed)


def main() -> int:
    import sklearn

    print(f"torch {torch.__version__}, NumPy {np.__version__}, scikit-learn {sklearn.__version__}, {sys.byteorder}-endian")
    for check in (check_torch_constructors, check_numpy_layout, check_cv2, check_pillow, check_sklearn, check_seaborn):
        print(f"\n== {check.__name__}")
        check()
    print(f"\n{len(failures)} fact(s) failed" if failures else "\nevery fact holds")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
