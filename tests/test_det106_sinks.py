"""DET106's sinks in scikit-learn and seaborn (issue 23), lint only.

These libraries are not installed in CI; what each call does with a tensor was checked on their
current versions by `scripts/check_sink_facts.py` (the tables in `analysis/semantics.py` say which).
The matrix: every sink flags a tensor that requires grad, and the look-alikes stay clean.
"""

from __future__ import annotations

import pytest

from flake8_detach import check_source
from flake8_detach.analysis import semantics as sem
from flake8_detach.catalog import SCREENS
from flake8_detach.screening import has_candidates

HEADER = (
    "import torch\n"
    "import seaborn as sns\n"
    "from sklearn import metrics\n"
    "from sklearn.linear_model import LogisticRegression\n"
    "model = torch.nn.Linear(3, 1)\n"
    "x = torch.randn(8, 3)\n"
    "y = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1])\n"
    "out = model(x).squeeze()\n"
    "clf = LogisticRegression()\n"
)

# (call with the grad tensor `out` in it, the function named in the message)
SINKS = [
    *[(f"metrics.{name}(y, ARG)", f"metrics.{name}") for name in sorted(sem.SKLEARN_METRICS - {"silhouette_score"})],
    ("metrics.silhouette_score(ARG, y)", "metrics.silhouette_score"),
    *[(f"sns.{name}(x=ARG)", f"sns.{name}") for name in sorted(sem.SEABORN_PLOTTING - {"heatmap", "clustermap"})],
    ("sns.heatmap(ARG)", "sns.heatmap"),
    ("sns.clustermap(ARG)", "sns.clustermap"),
    ("sns.lineplot(x=y, y=ARG)", "sns.lineplot"),
    *[(f"clf.{name}(ARG, y)", f"clf.{name}") for name in sorted(sem.SKLEARN_CONVERTING_METHODS)],
    ("LogisticRegression().fit(ARG, y)", ".fit"),
    ("LogisticRegression().fit(x, y).predict(ARG)", ".predict"),
]
# What is passed instead of a tensor that requires grad: each converts fine.
LOOK_ALIKES = ["out.detach().cpu().numpy()", "out.sum().item()", "[0.1, 0.9]", "y"]


@pytest.mark.parametrize(("call", "function"), SINKS, ids=[call for call, _ in SINKS])
def test_sink_flags_a_tensor_that_requires_grad(call: str, function: str) -> None:
    source = HEADER + call.replace("ARG", "out") + "\n"
    found = [d for d in check_source(source) if d.code == "DET106"]
    assert len(found) == 1, source
    assert found[0].message.startswith(f"DET106 {function}() calls .numpy() on a tensor that may require grad")
    assert has_candidates(source, SCREENS), "the screen must let the file through"


@pytest.mark.parametrize("argument", LOOK_ALIKES)
@pytest.mark.parametrize(("call", "function"), SINKS, ids=[call for call, _ in SINKS])
def test_sink_does_not_flag_a_converted_value(call: str, function: str, argument: str) -> None:
    source = HEADER + call.replace("ARG", argument) + "\n"
    assert [d for d in check_source(source) if d.code == "DET106"] == [], source


def test_fix_detaches_the_argument() -> None:
    from flake8_detach.fixing.fixer import fix_source
    from flake8_detach.settings import Settings

    source = HEADER + "metrics.roc_auc_score(y, out)\n"
    fixed = fix_source(source, Settings(), unsafe=False)
    assert fixed.source.endswith("metrics.roc_auc_score(y, out.detach().cpu().numpy())\n")


@pytest.mark.parametrize(
    "source",
    [
        # Not sinks: they fail for every tensor, not through `.numpy()` (see semantics.py).
        "import torch\nimport PIL.Image\nw = torch.ones(3, 3, requires_grad=True)\nPIL.Image.fromarray(w)\n",
        "import torch\nimport cv2\nw = torch.ones(3, 3, requires_grad=True)\ncv2.imwrite('x.png', w)\n",
        # `train_test_split` indexes without converting.
        ("import torch\nfrom sklearn.model_selection import train_test_split\nw = torch.ones(3, 3, requires_grad=True)\n"
         "train_test_split(w)\n"),
        # `.fit` of something that is not a scikit-learn estimator (a trainer, say).
        "import torch\nimport numpy as np\nfrom trainer import Trainer\nw = torch.ones(3, requires_grad=True)\nTrainer().fit(w)\n",
        # Estimator methods that take no data.
        "import torch\nfrom sklearn.svm import SVC\nclf = SVC()\nclf.get_params()\n",
    ],
)
def test_not_a_sink(source: str) -> None:
    assert [d for d in check_source(source) if d.code == "DET106"] == []


def test_screen_skips_files_without_the_libraries() -> None:
    source = "import torch\nclass T:\n    def fit(self, x):\n        return x\nT().fit(torch.ones(2, requires_grad=True))\n"
    assert not has_candidates(source, tuple(s for s in SCREENS if s.code == "DET106"))


@pytest.mark.parametrize(
    ("bounds", "flagged"),
    [
        ("out.min() - 1, out.max() + 1", 2),  # full reductions: 0-dim tensors that require grad
        ("out.min().item() - 1, out.max().item() + 1", 0),
        ("0, out.size(0)", 0),
        ("0, len(out)", 0),
    ],
)
def test_arange_converts_a_0_dim_bound(bounds: str, flagged: int) -> None:
    source = "import numpy as np\n" + HEADER + f"grid = np.arange({bounds}, 0.1)\n"
    found = [d for d in check_source(source) if d.code == "DET106"]
    assert len(found) == flagged, source
    assert all("np.arange() calls .numpy() on a tensor that may require grad" in d.message for d in found)
    assert all(d.fix is not None and d.fix.safe for d in found)
    if flagged:
        from flake8_detach.fixing.fixer import fix_source
        from flake8_detach.settings import Settings

        fixed = fix_source(source, Settings(), unsafe=False).source
        assert fixed.endswith("grid = np.arange((out.min() - 1).item(), (out.max() + 1).item(), 0.1)\n"), fixed


@pytest.mark.parametrize(
    "call",
    ["plt.scatter(x[:, 0], x[:, 1], c=ARG)", "plt.hist(y, weights=ARG)", "plt.errorbar(y, y, yerr=ARG)",
     "plt.fill_between(y, 0, y2=ARG)"],
)
def test_keyword_data_of_plots_is_converted(call: str) -> None:
    """matplotlib converts these keywords' values with np.asanyarray (checked on matplotlib 3.11.2
    with a tensor that requires grad: the RuntimeError of `.numpy()`); a colour name is no tensor."""
    source = "import matplotlib.pyplot as plt\n" + HEADER + call.replace("ARG", "out") + "\n"
    assert [d.code for d in check_source(source)] == ["DET106"], source
    clean = "import matplotlib.pyplot as plt\n" + HEADER + call.replace("ARG", "out.detach()") + "\n"
    assert check_source(clean) == []
    assert check_source("import matplotlib.pyplot as plt\n" + HEADER + "plt.plot(y, y, c='red')\n") == []
