"""What NumPy, OpenCV and torch do to an array's layout: the facts DET108 reads.

torch takes an ndarray over without copying (`torch.from_numpy`) or through the same code path
(`torch.tensor`, `torch.as_tensor`, `torch.Tensor`), and refuses two layouts: a negative stride
(`a[::-1]`, `np.flip`) and a byte order other than the machine's (`dtype=">f4"`). These tables say
which calls make such an array, which keep it (views) and which make a fresh one (copies).
Every entry was checked on NumPy 2.4.6 / torch 2.13.0 / opencv-python-headless 5.0.0 on a
little-endian machine: `scripts/check_sink_facts.py` prints and asserts each one.
"""

from __future__ import annotations

import re

from .values import ARRAY_LAYOUT, EMPTY, Flag, Value

# torch calls that raise ValueError on an ndarray with a negative stride or a non-native byte
# order (torch 2.13: "At least one stride in the given numpy array is negative" / "given numpy
# array has byte order different from the native byte order"); each checked with both.
TORCH_FROM_ARRAY = frozenset(
    {"torch.from_numpy", "torch.as_tensor", "torch.asarray", "torch.tensor", "torch.Tensor", "torch.FloatTensor"}
)
# Of those, the one that takes nothing but an ndarray: any negative-step slice passed to it is one.
TORCH_ARRAY_ONLY = frozenset({"torch.from_numpy"})
# Where each hand-over takes its array: (position, keywords). torch's constructors take it first
# (`torch.tensor(data=...)`, `torch.asarray(obj=...)`); `pack_padded_sequence` passes its
# `lengths` to `torch.as_tensor` and raises the same ValueError (torch 2.13: InferSent's
# `pack_padded_sequence(x, np.sort(lengths)[::-1])`).
_CONSTRUCTOR_ARRAY = (0, frozenset({"data", "obj", "ndarray"}))
# torch's DLPack import takes an ndarray through `__dlpack__`, which hands over the strides as
# they are: a negative one makes torch 2.13 abort the whole process ("Storage size calculation
# overflowed", SIGABRT), and NumPy refuses a non-native byte order (BufferError: "DLPack only
# supports native byte order"). `.copy()` makes both run.
TORCH_FROM_DLPACK = frozenset({"torch.from_dlpack", "torch.utils.dlpack.from_dlpack"})
ARRAY_ARGUMENTS: dict[str, tuple[int, frozenset[str]]] = {
    **{name: _CONSTRUCTOR_ARRAY for name in TORCH_FROM_ARRAY},
    **{name: (0, frozenset({"ext_tensor"})) for name in TORCH_FROM_DLPACK},
    "torch.nn.utils.rnn.pack_padded_sequence": (1, frozenset({"lengths"})),
}

# NumPy functions that return a view with the strides reversed (`np.rot90(a, k)` with k a
# multiple of 4 returns `a[:, :]`: no flip).
NUMPY_FLIPS = frozenset({"flip", "fliplr", "flipud", "rot90"})
# NumPy functions that return their (first) argument or a view of it: layout and byte order kept.
NUMPY_VIEWS = frozenset(
    {"asarray", "asanyarray", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
     "atleast_1d", "atleast_2d", "atleast_3d"}
)
# NumPy functions that copy into fresh C-ordered memory but keep the dtype, byte order included.
NUMPY_COPIES_KEEPING_DTYPE = frozenset({"array", "copy", "ascontiguousarray"})
# Where a NumPy factory takes `dtype` positionally (`np.fromfile(f, ">f4")`).
NUMPY_DTYPE_POSITION = {
    "fromfile": 1, "frombuffer": 1, "array": 1, "asarray": 1, "zeros": 1, "ones": 1, "empty": 1,
    "ascontiguousarray": 1, "memmap": 1, "fromstring": 1, "dtype": 0, "full": 2,
}

# ndarray methods and attributes that return a view: layout and byte order kept.
NDARRAY_VIEW_METHODS = frozenset({"transpose", "swapaxes", "squeeze", "view"})
NDARRAY_VIEW_ATTRIBUTES = frozenset({"T", "mT"})
# ndarray methods that copy into fresh memory with the same dtype (byte order kept, strides not):
# `.reshape`/`.ravel` may also return a view with the stride kept, so they clear nothing here and
# are no evidence either way: the stride is dropped (precision first), the byte order kept.
NDARRAY_COPIES_KEEPING_DTYPE = frozenset({"copy", "flatten", "ravel", "reshape", "byteswap", "repeat"})

# OpenCV functions that return a fresh, C-contiguous ndarray in native byte order (checked with a
# negative-stride input where they take one): `cv2.flip(img, 1)` is the safe way to mirror.
CV2_ARRAY_RESULTS = frozenset(
    {"imread", "imdecode", "flip", "resize", "cvtColor", "warpAffine", "warpPerspective", "GaussianBlur",
     "copyMakeBorder", "rotate", "medianBlur", "blur", "merge"}
)

# What a file must say to make such an array (the screen's text test): a slice with a negative
# step (`a[::-1]`, `a[5:0:-2]`), NumPy's flips (`np.flip(`, not a tensor's `.flip(`), a big-endian
# dtype string, or `newbyteorder`. Kept as patterns searched one by one, each starting with a
# character that `re` scans for: one alternation of them, or a flip test that starts with a
# look-behind, is tried at every position of every file (four times slower on timm).
LAYOUT_HAZARD_TEXTS = (
    re.compile(r"::\s*-\s*\d"),
    re.compile(r"[\[,][^\[\]:,\n]*:[^\[\]:,\n]*:\s*-\s*\d"),
    # `flip(`, `np.flip(`, `numpy.fliplr(`, `rot90(`; not `x.flip(` or `myflip(`.
    re.compile(r"(?:f(?:(?<=\bnp\.f)|(?<=\bnumpy\.f)|(?<![.\w]f))lip(?:lr|ud)?"
               r"|r(?:(?<=\bnp\.r)|(?<=\bnumpy\.r)|(?<![.\w]r))ot90)\s*\("),
    re.compile(r"newbyteorder"),
    re.compile(r"[\"']>[a-zA-Z]"),
)

# A dtype string with a byte order that is not this (little-endian) machine's, of an item wider
# than one byte (`>u1` has no byte order: torch takes it). `!` is not a NumPy type string.
_NON_NATIVE_TYPESTRING = re.compile(r"^>(?:[fiuc](?:2|4|8|16)|[fd]|[hHiIlLqQeg])$")
_SWAPPED_ORDER_NAMES = frozenset({">", "big", "B"})


def typestring_value(text: str) -> Value:
    """`">f4"`: a non-native dtype (on this little-endian machine); anything else: no evidence."""
    return Value(Flag.NON_NATIVE_DTYPE) if _NON_NATIVE_TYPESTRING.match(text) else EMPTY


def layout_of(value: Value) -> int:
    """The layout flags of an array value, to carry over to a view of it."""
    return value.flags & ARRAY_LAYOUT


def reversed_layout(layout: int) -> int:
    """The layout of a view that reverses an axis (`a[::-1]`, `np.flip(a)`): a negative stride,
    unless the array may have one already. Then the reversal may undo it (`np.flip(a[::-1])` and
    `a[::-1][::-1]` are `a` again, checked on NumPy 2) and which axes are reversed is not
    tracked: no evidence either way, precision first."""
    if layout & Flag.NEGATIVE_STRIDE:
        return layout & ~Flag.NEGATIVE_STRIDE
    return layout | Flag.NEGATIVE_STRIDE


def array_with(layout: int) -> Value:
    return Value(Flag.NDARRAY | layout)


def byte_order_of(dtype: Value | None, current: Value) -> int:
    """The byte-order flag after a conversion to `dtype` (None: the dtype is kept)."""
    if dtype is None:
        return current.flags & Flag.NON_NATIVE_ORDER
    return Flag.NON_NATIVE_ORDER if dtype.has(Flag.NON_NATIVE_DTYPE) else Flag.NONE


def newbyteorder(order: str | None) -> Value:
    """`dt.newbyteorder(">")`: a non-native dtype. With no order (a swap), a dtype known to be
    non-native becomes native and an unknown one is no evidence either way: no flag."""
    return Value(Flag.NON_NATIVE_DTYPE) if order in _SWAPPED_ORDER_NAMES else EMPTY


def rot90_flips(k: str | None) -> bool:
    """`np.rot90(a)` (k is "1") and `np.rot90(a, 1)` flip an axis; `np.rot90(a, 4)` does not; a
    `k` that is not a literal (None) is no evidence."""
    if k is None:
        return False
    try:
        return int(k, 0) % 4 != 0
    except ValueError:
        return False


def is_negative_step(text: str | None) -> bool:
    """`-1`, `-2`: a literal negative step (a name could hold anything)."""
    return text is not None and text.startswith("-") and text[1:].strip().isdigit() and int(text[1:]) > 0


def _dtype_argument(name: str, positional: list[Value], keywords: dict[str, Value]) -> Value | None:
    dtype = keywords.get("dtype")
    position = NUMPY_DTYPE_POSITION.get(name)
    if dtype is None and position is not None and len(positional) > position:
        dtype = positional[position]
    return dtype


def numpy_result(name: str, positional: list[Value], keywords: dict[str, Value], rot90_k: str | None) -> Value:
    """What `np.<name>(...)` returns, as far as layout and byte order go."""
    first = positional[0] if positional else EMPTY
    dtype = _dtype_argument(name, positional, keywords)
    if name == "dtype":  # `np.dtype(">f4")`: a dtype, not an array
        return Value(Flag.NON_NATIVE_DTYPE) if first.has(Flag.NON_NATIVE_DTYPE) else EMPTY
    if name in NUMPY_FLIPS:
        flips = name != "rot90" or rot90_flips(rot90_k)
        return array_with(reversed_layout(layout_of(first)) if flips else layout_of(first))
    if name in NUMPY_VIEWS:
        if dtype is not None:  # `np.asarray(a, dtype=np.float32)` converts: a fresh array
            return array_with(byte_order_of(dtype, first))
        return array_with(layout_of(first))
    if name in NUMPY_COPIES_KEEPING_DTYPE:
        return array_with(byte_order_of(dtype, first))
    if dtype is not None and dtype.has(Flag.NON_NATIVE_DTYPE):
        return array_with(Flag.NON_NATIVE_ORDER)  # `np.fromfile(f, dtype=">f4")`
    return Value(Flag.NDARRAY)


def ndarray_method(receiver: Value, method: str, positional: list[Value], keywords: dict[str, Value]) -> Value:
    """What `a.<method>(...)` of an ndarray returns, as far as layout and byte order go."""
    if method in ("tolist", "item"):
        return EMPTY
    dtype = positional[0] if positional else keywords.get("dtype")
    if method == "view":
        return array_with(receiver.flags & Flag.NEGATIVE_STRIDE | byte_order_of(dtype, receiver))
    if method in NDARRAY_VIEW_METHODS:
        return array_with(layout_of(receiver))
    if method == "astype":  # a fresh C-ordered copy in the dtype asked for
        return array_with(byte_order_of(dtype or EMPTY, receiver))
    if method in NDARRAY_COPIES_KEEPING_DTYPE:
        return array_with(receiver.flags & Flag.NON_NATIVE_ORDER)
    return Value(Flag.NDARRAY)
