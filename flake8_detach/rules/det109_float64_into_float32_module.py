from __future__ import annotations

from collections.abc import Iterator

from ..analysis.dtypes import LAYER_ERRORS
from ..analysis.facts import DtypeClash, Facts
from ..diagnostics import Finding, Fix
from ..fixing.rewrites import chained
from .base import Invalid, Rule

# A file that changes torch's default dtype makes fresh layers and factories float64: the
# lattice's float32 defaults do not hold there.
DEFAULT_DTYPE_SETTERS = ("set_default_dtype", "set_default_tensor_type")

_ERRORS = {
    "module": "a dtype-mismatch RuntimeError",
    "matmul": "RuntimeError: expected m1 and m2 to have the same dtype",
    "loss": "RuntimeError: Found dtype Double but expected Float",
}


class Float64IntoFloat32Module(Rule):
    code = "DET109"
    name = "float64-into-float32-module"
    message = (
        "a float64 tensor meets float32 parameters or a float32 operand (module call, matmul/@, "
        "binary cross-entropy) and raises a dtype-mismatch RuntimeError; call .float() on it"
    )
    what_it_does = (
        "Flags a tensor the file shows is float64 passed to a module whose parameters are float32 "
        "(a fresh `nn.Linear`, `nn.Conv2d`, `nn.LSTM`, norm layer, ... or an `nn.Sequential` that "
        "starts with one; not after `.double()` / `.to(torch.float64)` of the layer, or of an instance "
        "of a model class of this file that holds it: the class's fields describe all its "
        "instances, so one converted instance keeps the rule quiet for the others), or combined with a known "
        "float32 tensor (such as that module's output) in `@` / `torch.matmul` / `mm` / `bmm` / "
        "`F.linear`, or in `F.binary_cross_entropy` / `nn.BCELoss` (the one loss that refuses the "
        "mix: MSE, L1, Huber, BCE-with-logits and cross-entropy promote and run). float64 comes from "
        "NumPy's defaults (`np.random.rand`, `np.zeros`, `np.linspace`, `np.loadtxt`, ...) through "
        "`torch.from_numpy` / `torch.as_tensor` / `torch.tensor`, or from `dtype=torch.float64` / "
        "`.double()`, and through a `DataLoader` with the default `collate_fn`, which keeps an "
        "item's dtype: batches of a `Dataset` of this file whose `__getitem__` returns float64 "
        "arrays (alone, in a tuple, or in a dict with constant keys), of a `TensorDataset` of float64 "
        "tensors, or of a list of float64 arrays, also through `Subset` and `random_split`. The tabular path too (`analysis/frames.py`): "
        "a pandas statistic (`df.mean()`, `std`, `median`, ... of int, float64 or bool columns), a "
        "frame built from a float64 array, and a scikit-learn scaler's or PCA's output of anything "
        "but float32 are float64, and `train_test_split` keeps each array's dtype; `.values` of a "
        "frame `read_csv` made is float64 or int64 (both raise) and is not flagged, since the rule "
        "claims float64. Nothing is flagged under `torch.autocast`, nor in a file that calls "
        "`torch.set_default_dtype`. On real code it has fired nowhere: ten review repositories and "
        "the torch package (`docs/reviews/det109-review.md`), real fixes of the crash "
        "(`docs/reviews/dtype-third-review.md`, `dtype-fourth-review.md`: the float64 came from "
        "another file or a parameter), 13 files found by searching for the idiom and 12 held-out "
        "repositories (`dtype-fifth-review.md`, `dtype-sixth-review.md`: every float64 array there "
        "is converted first). Its precision rests on the fixtures."
    )
    why_bad = (
        "NumPy's floating default is float64 and torch keeps an array's dtype when it wraps it, but "
        "`nn` layers are created in float32; the kernels do not promote, so the first forward pass "
        "raises `RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float` "
        "(one of the most asked PyTorch errors), on every device."
    )
    example = "features = np.random.rand(64, 3)\nmodel = nn.Linear(3, 1)\nmodel(torch.from_numpy(features))"
    use_instead = "features = np.random.rand(64, 3)\nmodel = nn.Linear(3, 1)\nmodel(torch.from_numpy(features).float())"
    fix_safety = (
        "Safe: `.float()` converts the tensor to the dtype the module computes in; the original "
        "line raised, so no result changes. (`.astype(np.float32)` on the array would do the same, "
        "but `.float()` works whatever the tensor came from and needs no NumPy name, so it is the "
        "one fix.)"
    )
    runtime_truth = (
        "`RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float` (nn.Linear), "
        "`Input type (double) and bias type (float) should be the same` (conv), `expected m1 and m2 to "
        "have the same dtype, but got: float != double` (matmul), `Found dtype Double but expected "
        "Float` (binary cross-entropy), on every device (torch 2.13, CPU); `ValueError: RNN input "
        "dtype ... does not match weight dtype` for LSTM/GRU/RNN."
    )
    VALID = [
        ("import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 1)\n"
        "model(torch.from_numpy(np.random.rand(4, 3)).float())\n"),
        ("import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 1)\n"
        "model(torch.from_numpy(np.random.rand(4, 3).astype(np.float32)))\n"),
        ("import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 1).double()\n"
        "model(torch.from_numpy(np.random.rand(4, 3)))\n"),
        ("import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 1)\nmodel.to(torch.float64)\n"
        "model(torch.from_numpy(np.random.rand(4, 3)))\n"),
        ("import torch\nfrom torch import nn\nloss = nn.CrossEntropyLoss()\nlogits = nn.Linear(3, 4)(torch.ones(2, 3))\n"
        "loss(logits, torch.tensor([1, 2]))\n"),
        ("import torch\nimport torch.nn.functional as F\nfrom torch import nn\nout = nn.Linear(3, 1)(torch.ones(2, 3))\n"
        "F.mse_loss(out, torch.ones(2, 1, dtype=torch.float64))\n"),
        "import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.ReLU()\nmodel(torch.from_numpy(np.random.rand(4, 3)))\n",
        ("import numpy as np\nimport torch\nfrom torch import nn\ntorch.set_default_dtype(torch.float64)\n"
        "model = nn.Linear(3, 1)\nmodel(torch.from_numpy(np.random.rand(4, 3)))\n"),
    ]
    VALID += [
        (
            "import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 1)\n"
            "with torch.autocast('cpu', dtype=torch.bfloat16):\n    model(torch.from_numpy(np.random.rand(4, 3)))\n"
        ),
        "import torch\nfrom torch import nn\nmodel = nn.Linear(3, 1).half()\nmodel(torch.ones(4, 3).half())\n",
        ("import numpy as np\nimport pandas as pd\nimport torch\nfrom torch import nn\n"
         "frame = pd.DataFrame(np.random.rand(4, 3))\nmodel = nn.Linear(3, 1)\n"
         "model(torch.from_numpy(frame.to_numpy(dtype=np.float32)))\n"),
    ]
    INVALID = [
        Invalid(
            "import numpy as np\nimport torch\nfrom torch import nn\nfeatures = np.random.rand(64, 3)\n"
            "model = nn.Linear(3, 1)\nmodel(torch.from_numpy(features))\n",
            "import numpy as np\nimport torch\nfrom torch import nn\nfeatures = np.random.rand(64, 3)\n"
            "model = nn.Linear(3, 1)\nmodel(torch.from_numpy(features).float())\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\nnet = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU())\n"
            "x = torch.zeros(1, 1, 8, 8, dtype=torch.float64)\nnet(x)\n",
            "import torch\nfrom torch import nn\nnet = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU())\n"
            "x = torch.zeros(1, 1, 8, 8, dtype=torch.float64)\nnet(x.float())\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 2)\n"
            "out = model(torch.ones(4, 3))\nw = torch.as_tensor(np.ones((2, 2)))\nout @ w\n",
            "import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 2)\n"
            "out = model(torch.ones(4, 3))\nw = torch.as_tensor(np.ones((2, 2)))\nout @ w.float()\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 1)\ncriterion = nn.BCELoss()\n"
            "probs = torch.sigmoid(model(torch.ones(4, 3)))\ncriterion(probs, torch.tensor(np.ones((4, 1))))\n",
            "import numpy as np\nimport torch\nfrom torch import nn\nmodel = nn.Linear(3, 1)\ncriterion = nn.BCELoss()\n"
            "probs = torch.sigmoid(model(torch.ones(4, 3)))\ncriterion(probs, torch.tensor(np.ones((4, 1))).float())\n",
        ),
    ]

    INVALID += [
        Invalid(
            "import pandas as pd\nimport torch\nfrom sklearn.preprocessing import StandardScaler\nfrom torch import nn\n"
            "frame = pd.read_csv('data.csv')\nfeatures = StandardScaler().fit_transform(frame.values)\n"
            "model = nn.Linear(3, 1)\nmodel(torch.from_numpy(features))\n",
            "import pandas as pd\nimport torch\nfrom sklearn.preprocessing import StandardScaler\nfrom torch import nn\n"
            "frame = pd.read_csv('data.csv')\nfeatures = StandardScaler().fit_transform(frame.values)\n"
            "model = nn.Linear(3, 1)\nmodel(torch.from_numpy(features).float())\n",
        ),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        if any(facts.attributes.get(name) for name in DEFAULT_DTYPE_SETTERS):
            return
        for clash in facts.dtype_clashes.values():
            yield self._finding(clash)

    def _finding(self, clash: DtypeClash) -> Finding:
        where = {"module": f"passed to {clash.other} (float32 parameters)",
                 "matmul": f"multiplied with {clash.other}", "loss": f"in a binary cross-entropy with {clash.other}"}[clash.kind]
        error = LAYER_ERRORS.get(clash.layer or "", _ERRORS[clash.kind])
        message = f"a float64 tensor {where} raises {error}; call .float() on it"
        fix = Fix(clash.operand, chained(clash.operand, ["float"]), True, "convert the float64 tensor with .float()")
        return self.finding(clash.operand, message, fix)
