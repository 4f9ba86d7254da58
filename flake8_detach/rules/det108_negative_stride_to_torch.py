from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ..analysis.facts import ArrayHandover, Facts
from ..analysis.values import Flag
from ..diagnostics import Finding, Fix
from ..fixing.rewrites import method_call
from .base import Invalid, Rule

_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def _array_argument(handover: ArrayHandover) -> cst.BaseExpression | None:
    """The argument the call hands to torch (`torch.tensor(data=a)`, `lengths` of
    `pack_padded_sequence`), or None where a `*args` hides it."""
    for index, arg in enumerate(handover.call.args):
        if arg.star:
            return None
        if arg.keyword is None and index == handover.position or (
                arg.keyword is not None and arg.keyword.value in handover.keywords):
            return arg.value
    return None


def _atomic(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, _ATOMIC) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _is_plain_reference(expr: cst.BaseExpression) -> bool:
    """`img`, `self.img`: reading it twice reads the same array (a call could read a file twice)."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)


def native_order_copy(expr: cst.BaseExpression) -> cst.Call:
    """`a.astype(a.dtype.newbyteorder("="))`: the same values, in the machine's byte order."""
    dtype = cst.Attribute(value=expr.deep_clone(), attr=cst.Name("dtype"))
    native = method_call(dtype, "newbyteorder", (cst.Arg(cst.SimpleString('"="')),))
    return method_call(expr, "astype", (cst.Arg(native),))


class NegativeStrideToTorch(Rule):
    code = "DET108"
    name = "negative-stride-to-torch"
    message = (
        "torch.from_numpy / torch.tensor / torch.as_tensor of an ndarray with a negative stride or a "
        "non-native byte order raises ValueError; pass .copy() (or .astype(a.dtype.newbyteorder('=')))"
    )
    what_it_does = (
        "Flags an ndarray handed to `torch.from_numpy`, `torch.as_tensor`, `torch.asarray`, "
        "`torch.tensor`, `torch.Tensor` or `torch.FloatTensor` (or as the `lengths` of "
        "`nn.utils.rnn.pack_padded_sequence`, which passes them to `torch.as_tensor`), or to "
        "`torch.from_dlpack` / `torch.utils.dlpack.from_dlpack`, when the file shows it has a "
        "negative stride (a slice with a literal negative step such as `img[:, :, ::-1]`, "
        "`np.flip`, `np.fliplr`, `np.flipud`, `np.rot90`, and views of those: `.T`, "
        "`.transpose()`, `np.transpose`, basic slices, `np.asarray`) or a byte order other than "
        "the machine's (`dtype=\">f4\"` in `np.fromfile` / `np.frombuffer` / `np.array`, "
        "`np.dtype(\">f4\")`, `dt.newbyteorder(\">\")`, and copies of such arrays, which keep the "
        "dtype). Copies clear the stride: `.copy()`, `np.ascontiguousarray`, `np.array`, "
        "`.astype(...)`, arithmetic (`a / 255.0`) and OpenCV results (`cv2.flip`); `.astype` to a "
        "native dtype and arithmetic clear the byte order. A second reversal of an array that may be "
        "reversed already (`np.flip(a[::-1])`, `a[::-1][::-1]`) is no evidence: it may undo the first, "
        "and which axes are reversed is not tracked. Values are followed through names, "
        "helpers and the fields of the file's classes. `torch.from_numpy` takes nothing but an "
        "ndarray, so any negative-step slice passed to it counts; the others take lists too, so "
        "there the value must be known to be an array. A little-endian machine (x86, ARM) is assumed. "
        "On real code (docs/reviews/det108-review.md): no diagnostic on ten repositories, whose 189 "
        "flips all copy before torch; with those copies taken out of diffusers, 24 of 24 diagnostics "
        "true and 23 of 23 hazards found; on the pre- and post-fix versions of real negative-stride "
        "fixes (docs/reviews/dtype-third-review.md), 51 of 51 true (9 distinct sites) and 9 of 18 hazards "
        "found (the others cross a parameter, a class or a file); on 45 files found by searching "
        "for the idiom (dtype-fifth-review.md), 4 of 5 true (the false one, a double reversal, "
        "since fixed) and 4 of 4 crash sites found; on 12 held-out repositories "
        "(dtype-sixth-review.md), no diagnostic and no crash site (every flip copied first); on "
        "files found by searching for other spellings of the idiom (dtype-seventh-review.md), 2 of "
        "2 true and 2 of 2 crash sites found."
    )
    why_bad = (
        "A tensor's strides cannot be negative and torch does not convert byte orders, so torch "
        "refuses to take the array over: `ValueError: At least one stride in the given numpy array "
        "is negative, and tensors with negative strides are not currently supported` or `ValueError: "
        "given numpy array has byte order different from the native byte order`. The BGR-to-RGB "
        "idiom `cv2.imread(p)[:, :, ::-1]` and flip augmentations hit it on every device."
    )
    example = "img = img[:, :, ::-1]  # BGR -> RGB\nx = torch.from_numpy(img)"
    use_instead = "img = img[:, :, ::-1]  # BGR -> RGB\nx = torch.from_numpy(img.copy())"
    fix_safety = (
        "Safe: `.copy()` is a C-contiguous copy with the same values (and `torch.from_numpy` of it "
        "shares no memory with the flipped view, which it could not anyway). For a byte order it is "
        "`a.astype(a.dtype.newbyteorder(\"=\"))`: the same values in the native byte order, offered "
        "only where `a` is a name or attribute (a call would run twice); a `.copy()` would keep the "
        "byte order and not help."
    )
    runtime_truth = (
        "The flagged call raises ValueError \"At least one stride in the given numpy array is "
        "negative\" (or \"given numpy array has byte order different from the native byte order\") "
        "on every device, torch 2.13; the fixed version runs with the same values. "
        "`torch.from_dlpack` takes the strides as they are: a negative one aborts the process "
        "(SIGABRT, C++ \"Storage size calculation overflowed\"; nothing to catch, a notebook's "
        "kernel dies), and NumPy refuses a non-native byte order with BufferError \"DLPack only "
        "supports native byte order\"."
    )
    VALID = [
        "import numpy as np\nimport torch\nimg = np.zeros((4, 4, 3))\ntorch.from_numpy(img[:, :, ::-1].copy())\n",
        "import numpy as np\nimport torch\na = np.arange(6.0)\ntorch.tensor(a[::-1].copy())\n",
        "import numpy as np\nimport torch\na = np.arange(6.0)\ntorch.from_numpy(a[::2])\n",
        "import numpy as np\nimport torch\nframes = np.arange(12.0).reshape(3, 4)\ntorch.from_dlpack(frames[:, ::-1].copy())\n",
        "import numpy as np\nimport torch\na = np.arange(6.0)\ntorch.as_tensor(np.ascontiguousarray(np.flip(a)))\n",
        "import numpy as np\nimport torch\na = np.arange(6.0)\ntorch.from_numpy(np.flip(a) / 2.0)\n",
        "import torch\ntokens = [1, 2, 3]\ntorch.tensor(tokens[::-1])\n",
        "import torch\nt = torch.arange(6)\ntorch.flip(t, [0])\n",
        "import numpy as np\nimport torch\na = np.rot90(np.ones((2, 2)), 4)\ntorch.from_numpy(a)\n",
        "import numpy as np\nimport torch\nb = np.fromfile('x.bin', dtype='>f4')\ntorch.from_numpy(b.astype(np.float32))\n",
        "import numpy as np\nimport torch\nb = np.zeros(3, dtype='>u1')\ntorch.from_numpy(b)\n",
        "import cv2\nimport torch\nimg = cv2.flip(cv2.imread('x.png'), 1)\ntorch.from_numpy(img)\n",
        ("import numpy as np\nimport torch\nfrom torch import nn\nlengths = np.sort(np.array([1, 3, 2]))[::-1]\n"
         "nn.utils.rnn.pack_padded_sequence(torch.ones(3, 4, 2), lengths.copy(), batch_first=True)\n"),
    ]
    INVALID = [
        Invalid(
            "import numpy as np\nimport torch\nframes = np.arange(12.0).reshape(3, 4)\ntorch.from_dlpack(frames[:, ::-1])\n",
            "import numpy as np\nimport torch\nframes = np.arange(12.0).reshape(3, 4)\ntorch.from_dlpack(frames[:, ::-1].copy())\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\nimg = np.zeros((4, 4, 3))\ntorch.from_numpy(img[:, :, ::-1])\n",
            "import numpy as np\nimport torch\nimg = np.zeros((4, 4, 3))\ntorch.from_numpy(img[:, :, ::-1].copy())\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\na = np.ones((2, 3))\ntorch.as_tensor(np.flip(a, 0))\n",
            "import numpy as np\nimport torch\na = np.ones((2, 3))\ntorch.as_tensor(np.flip(a, 0).copy())\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\na = np.fliplr(np.ones((2, 3))).T\ntorch.tensor(a)\n",
            "import numpy as np\nimport torch\na = np.fliplr(np.ones((2, 3))).T\ntorch.tensor(a.copy())\n",
        ),
        Invalid(
            "import cv2\nimport torch\nimg = cv2.imread('x.png')[:, :, ::-1]\nx = torch.from_numpy(img)\n",
            "import cv2\nimport torch\nimg = cv2.imread('x.png')[:, :, ::-1]\nx = torch.from_numpy(img.copy())\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\ndef load(path):\n    return np.load(path)[::-1]\nx = torch.from_numpy(load('a.npy'))\n",
            "import numpy as np\nimport torch\ndef load(path):\n    return np.load(path)[::-1]\nx = torch.from_numpy(load('a.npy').copy())\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\nb = np.fromfile('x.bin', dtype='>f4')\ntorch.from_numpy(b)\n",
            "import numpy as np\nimport torch\nb = np.fromfile('x.bin', dtype='>f4')\ntorch.from_numpy(b.astype(b.dtype.newbyteorder(\"=\")))\n",
        ),
        Invalid("import numpy as np\nimport torch\ntorch.from_numpy(np.frombuffer(b'\\0' * 8, dtype=np.dtype('>f4')))\n"),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for handover in facts.array_handovers:
            expr = _array_argument(handover)
            if expr is None:
                continue
            finding = self._check_argument(facts, handover, expr)
            if finding is not None:
                yield finding

    def _check_argument(self, facts: Facts, handover: ArrayHandover, expr: cst.BaseExpression) -> Finding | None:
        value = facts.value_of(expr)
        if value.is_tensor_like or handover.kind != "array" and not value.has(Flag.NDARRAY):
            return None  # torch.tensor(xs[::-1]) of a list, say: a fine reversed list
        dlpack = handover.kind == "dlpack"
        if value.has(Flag.NON_NATIVE_ORDER):
            error = "raises BufferError (DLPack byte order)" if dlpack else "raises ValueError (byte order)"
            message = (
                f"{handover.function}() of an ndarray in non-native byte order {error}; "
                "convert it first: .astype(a.dtype.newbyteorder(\"=\")), not .copy()"
            )
            fix = None
            if _is_plain_reference(expr):
                fix = Fix(expr, native_order_copy(expr), True, "convert to the native byte order with .astype()")
            return self.finding(expr, message, fix)
        if value.has(Flag.NEGATIVE_STRIDE):
            error = ("aborts the process (storage size overflowed: no exception to catch)" if dlpack
                     else "raises ValueError (negative stride)")
            message = f"{handover.function}() of an ndarray with a negative stride {error}; pass a contiguous copy: .copy()"
            fix = Fix(expr, method_call(_atomic(expr), "copy"), True, "pass a contiguous copy with .copy()")
            return self.finding(expr, message, fix)
        return None
