"""What dtype and layout torch and NumPy calls give: the tables of the dtype lattice.

A value's dtype is a may-set of bits (:data:`~.values.DTYPES`): a union where paths join, empty
where the file does not tell. Every entry below was checked on torch 2.13.0 (CPU) and NumPy 2.4.6
by ``scripts/check_dtype_facts.py``, which prints and asserts each fact so the tables can be
re-checked on a new version. Rules use the bits only as evidence: an unknown dtype never flags.
"""

from __future__ import annotations

import libcst as cst

from .values import DTYPES, TENSOR_FLOW, Flag, Value

F16, BF16, F32, F64 = Flag.FLOAT16, Flag.BFLOAT16, Flag.FLOAT32, Flag.FLOAT64
INT, BOOL, COMPLEX = Flag.INTEGER, Flag.BOOL, Flag.COMPLEX

_TORCH_DTYPES = {
    "float16": F16, "half": F16, "bfloat16": BF16, "float32": F32, "float": F32,
    "float64": F64, "double": F64, "bool": BOOL, "complex64": COMPLEX, "complex128": COMPLEX,
    "cfloat": COMPLEX, "cdouble": COMPLEX, "chalf": COMPLEX, "complex32": COMPLEX,
    **{name: INT for name in "int8 int16 int32 int64 uint8 uint16 uint32 uint64 int long short".split()},
}
_NUMPY_DTYPES = {
    "float16": F16, "half": F16, "float32": F32, "single": F32, "float64": F64, "double": F64,
    "float_": F64, "bool_": BOOL, "bool": BOOL, "complex64": COMPLEX, "complex128": COMPLEX,
    **{name: INT for name in "int8 int16 int32 int64 uint8 uint16 uint32 uint64 intp int_ longlong".split()},
}
# Qualified name of a dtype object -> its bit (`torch.bfloat16`, `numpy.float32`).
DTYPE_NAMES: dict[str, int] = {
    **{f"torch.{name}": bit for name, bit in _TORCH_DTYPES.items()},
    **{f"numpy.{name}": bit for name, bit in _NUMPY_DTYPES.items()},
}

# Tensor methods that convert to a fixed dtype (`x.float()`: float32).
CAST_METHODS = {"float": F32, "double": F64, "half": F16, "bfloat16": BF16, "bool": BOOL,
                "long": INT, "int": INT, "short": INT, "byte": INT, "char": INT,
                "cfloat": COMPLEX, "cdouble": COMPLEX}
# Module methods that convert every floating parameter (`model.double()`), checked on nn.Linear.
MODULE_CAST_METHODS = {"float": F32, "double": F64, "half": F16, "bfloat16": BF16}

# torch factories whose result is float32 by default (the default dtype), unless `dtype=`.
TORCH_FLOAT_FACTORIES = frozenset(
    """zeros ones empty full rand randn linspace logspace eye normal FloatTensor Tensor
    empty_strided""".split()
)
TORCH_FACTORY_DTYPES = {"DoubleTensor": F64, "HalfTensor": F16, "BFloat16Tensor": BF16, "LongTensor": INT,
                        "IntTensor": INT, "ByteTensor": INT, "BoolTensor": BOOL, "randint": INT,
                        "randperm": INT, "tril_indices": INT, "triu_indices": INT, "complex": COMPLEX,
                        "polar": COMPLEX, "view_as_complex": COMPLEX}
# Factories that copy the dtype of their first argument (`torch.zeros_like(x)`).
TORCH_LIKE_FACTORIES = frozenset("zeros_like ones_like empty_like full_like rand_like randn_like".split())
# torch.fft functions that return a complex tensor.
COMPLEX_RESULTS = frozenset("fft fft2 fftn ifft ifft2 ifftn rfft rfft2 rfftn".split())

# NumPy functions that return float64 by default (no `dtype=`): np.random's legacy samplers and
# the float factories; `np.arange` and `np.full` depend on their arguments (see below).
NUMPY_FLOAT64_FACTORIES = frozenset(
    """random.rand random.randn random.uniform random.normal random.random random.random_sample
    random.standard_normal random.sample random.ranf zeros ones empty linspace logspace loadtxt
    genfromtxt eye identity""".split()
)
NUMPY_LIKE_FACTORIES = frozenset("zeros_like ones_like empty_like full_like copy ascontiguousarray".split())
# ndarray methods whose result keeps the array's dtype.
NDARRAY_DTYPE_KEEPING = frozenset(
    "reshape transpose copy squeeze flatten ravel swapaxes clip round cumsum __getitem__ view".split()
)

# Tensor methods that keep a sparse layout (checked: `.numpy()` after each still refuses it).
SPARSE_KEEPING = frozenset({"detach", "detach_", "cpu", "cuda", "to", "coalesce", "requires_grad_"})
# Tensor methods that keep the conjugate bit (views; `clone()` and arithmetic resolve it).
CONJ_KEEPING = frozenset({"detach", "detach_", "cpu", "cuda", "to", "view", "reshape", "contiguous", "t",
                          "transpose", "permute", "squeeze", "unsqueeze", "flatten", "requires_grad_"})
SPARSE_FACTORIES = frozenset({"sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
                              "sparse_bsr_tensor", "sparse_bsc_tensor", "sparse_compressed_tensor"})
TO_SPARSE_METHODS = frozenset({"to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc",
                               "to_sparse_bsr", "to_sparse_bsc"})

# Operations autocast runs in its lower precision on the CPU (torch 2.13's autocast op list for
# CPU, `lower_precision_fp`; each checked to return bfloat16 under `torch.autocast("cpu",
# dtype=torch.bfloat16)`). Others (add, relu, softmax, layer_norm, losses) keep float32.
AUTOCAST_LOWER_FUNCTIONS = frozenset(
    """matmul mm bmm addmm addbmm baddbmm linear conv1d conv2d conv3d conv_transpose1d conv_transpose2d
    conv_transpose3d einsum prelu scaled_dot_product_attention""".split()
)
AUTOCAST_LOWER_LAYERS = frozenset(
    """Linear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d PReLU
    MultiheadAttention""".split()
)
# torch.nn layers whose float32 parameters meet the input in a kernel that refuses a float64
# input (each raised on torch 2.13: RuntimeError, ValueError for the RNNs). Layers with no
# parameters (ReLU, Dropout, InstanceNorm without affine) run in float64 and are not listed.
FLOAT32_PARAMETER_LAYERS = frozenset(
    """Linear Bilinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LSTM GRU RNN
    BatchNorm1d BatchNorm2d BatchNorm3d LayerNorm GroupNorm MultiheadAttention PReLU""".split()
)
# Normalisation layers whose parameters a keyword switches off, with its default: without them
# (`nn.BatchNorm1d(n, affine=False)`, `nn.InstanceNorm2d(n)`) the layer holds no parameter, and its
# output requires grad only through its input. The batch norms keep float32 running statistics,
# which still refuse a float64 input unless `track_running_stats=False`; the others then keep
# the input's dtype. Each checked on torch 2.13 by scripts/check_dtype_facts.py.
AFFINE_SWITCHES = {
    **dict.fromkeys(("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"), ("affine", True)),
    **dict.fromkeys(("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"), ("affine", False)),
    "GroupNorm": ("affine", True),
    **dict.fromkeys(("LayerNorm", "RMSNorm"), ("elementwise_affine", True)),
}
RUNNING_STATISTICS_LAYERS = frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"})
# The exception a float64 input into each layer raises (torch 2.13, CPU); others: the kind's.
LAYER_ERRORS = {
    **dict.fromkeys(("Linear", "MultiheadAttention"),
                    "RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float"),
    **dict.fromkeys(("Conv1d", "Conv2d", "Conv3d"), "RuntimeError: Input type (double) and bias type (float) should be the same"),
    **dict.fromkeys(("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"), "RuntimeError: expected scalar type Double but found Float"),
    **dict.fromkeys(("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm"),
                    "RuntimeError: mixed dtype (CPU): all inputs must share same datatype."),
    **dict.fromkeys(("LSTM", "GRU", "RNN"), "ValueError: RNN input dtype (torch.float64) does not match weight dtype (torch.float32)"),
}
# Functions and methods that multiply matrices: a float32 and a float64 operand raise.
MATMUL_FUNCTIONS = frozenset({"matmul", "mm", "bmm", "dot", "mv", "linear"})
# Losses that refuse a target of another dtype (MSE, L1, SmoothL1, Huber, KLDiv, CrossEntropy
# with probabilities and BCEWithLogits promote and run).
DTYPE_STRICT_LOSSES = frozenset({"binary_cross_entropy", "BCELoss"})
# torch.autocast and its older spellings, with the dtype each uses when given none.
AUTOCAST_CONTEXTS = {"torch.autocast": None, "torch.amp.autocast": None,
                     "torch.cpu.amp.autocast": BF16, "torch.cuda.amp.autocast": F16,
                     "torch.amp.autocast_mode.autocast": None}
DTYPE_NAMES_FOR_MESSAGES = {F16: "float16", BF16: "bfloat16", F32: "float32", F64: "float64",
                            INT: "integer", BOOL: "bool", COMPLEX: "complex"}

# The order of promotion between categories (bool < integer < 16-bit floats < float32 < float64 <
# complex); float16 with bfloat16 gives float32 (checked).
_RANK = ((BOOL, 0), (INT, 1), (F16, 2), (BF16, 2), (F32, 3), (F64, 4), (COMPLEX, 5))


def _promote_pair(a: int, b: int) -> int:
    if a == b:
        return a
    if {a, b} == {F16, BF16}:
        return F32
    rank_a = next(rank for bit, rank in _RANK if bit == a)
    rank_b = next(rank for bit, rank in _RANK if bit == b)
    return a if rank_a >= rank_b else b


def _bits(dtype: int) -> list[int]:
    return [bit for bit, _ in _RANK if dtype & bit]


def promote(a: int, b: int) -> int:
    """The dtypes of an operation on two tensors of dtypes `a` and `b` (0: unknown -> unknown)."""
    if a == b or not a or not b:
        return a if a == b else 0
    out = 0
    for x in _bits(a):
        for y in _bits(b):
            out |= _promote_pair(x, y)
    return out


def with_scalar(dtype: int) -> int:
    """A tensor of `dtype` with a Python number (or a 0-dim tensor): floats keep their dtype;
    an integer tensor may become float32 (`ints * 0.5`), so its dtype is no longer known."""
    return 0 if dtype & (INT | BOOL) else dtype


def combine(values: list[Value]) -> int:
    """The dtype of a torch function of several arguments: its tensor operands promote; the
    others (sizes, dims, flags) are taken for what they mostly are, not tensors."""
    dtype = -1
    for value in values:
        if not value.flags & TENSOR_FLOW:
            continue
        dtype = value.flags & DTYPES if dtype == -1 else promote(dtype, value.flags & DTYPES)
        if not dtype:
            return 0
    return 0 if dtype == -1 else dtype


# What survives a binary operation with an operand the file knows nothing of (it may be a
# tensor of any dtype): float64 stays float64 unless the other is complex; lower ones may rise.
_SURVIVES_UNKNOWN = F64 | COMPLEX


def binary(left: Value, right: Value, left_literal: bool, right_literal: bool) -> int:
    """The dtype of `left <op> right` for tensors: two tensors promote; a number literal leaves
    a float dtype as it is (torch's scalar rule); an operand of unknown kind may be a tensor."""
    left_tensor = bool(left.flags & TENSOR_FLOW)
    right_tensor = bool(right.flags & TENSOR_FLOW)
    if left_tensor and right_tensor:
        return promote(left.flags & DTYPES, right.flags & DTYPES)
    tensor, literal = (left, right_literal) if left_tensor else (right, left_literal)
    dtype = tensor.flags & DTYPES
    if literal:
        return with_scalar(dtype)
    return dtype & _SURVIVES_UNKNOWN


def is_number_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def dtype_named(value: Value) -> int:
    """The dtype a `dtype=` argument or `.to(...)` target names (0: not a known dtype object)."""
    flags = value.flags
    if flags & DTYPES and not flags & ~DTYPES:
        return flags
    return 0


def literal_dtype(node: cst.BaseExpression) -> int:
    """`torch.tensor([1.0, 2.0])`: float32; `[1, 2]`: integer; `[1 + 2j]` or `[2j]`: complex
    (complex64, checked on torch 2.13); anything else: unknown."""
    if isinstance(node, cst.Float):
        return F32
    if isinstance(node, cst.Integer):
        return INT
    if isinstance(node, cst.Imaginary):
        return COMPLEX
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return literal_dtype(node.expression)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        return _widest({literal_dtype(node.left), literal_dtype(node.right)})
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        return _widest({literal_dtype(element.value) for element in node.elements})
    return 0


def _widest(found: set[int]) -> int:
    """The dtype of numbers written together: complex over float over integer; unknown if any is."""
    if 0 in found:
        return 0
    return COMPLEX if COMPLEX in found else F32 if F32 in found else INT


def is_imaginary_literal(node: cst.BaseExpression) -> bool:
    """`1j`, `-2j`: a tensor combined with one is complex, whatever its own dtype (torch 2.13)."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, cst.Imaginary)


def arange_dtype(args: list[cst.BaseExpression]) -> int:
    """`arange(0.0, 1.0)` is floating, `arange(10)` integer; a name could be either."""
    found = {literal_dtype(arg) for arg in args}
    if not found or 0 in found:
        return 0
    return F32 if F32 in found else INT


def describe(dtype: int) -> str:
    return " or ".join(name for bit, name in DTYPE_NAMES_FOR_MESSAGES.items() if dtype & bit)
