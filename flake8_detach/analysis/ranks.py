"""Tensors with no dimensions: which values are 0-dim on every path, and what that changes.

One thing depends on it: indexing a 0-dim tensor raises (`loss.data[0]`, torch 0.3's way to read
a loss, is an IndexError on any torch since 0.4), so nothing flows from that subscript, and a
list it would fill holds no tensor for `plt.plot` to refuse. ``Flag.ZERO_DIM`` is a must-fact
(``values.join_flags`` keeps it only where every tensor or module joined has it). It is set by a
loss that reduces (a module or a function with its default reduction) and by a full reduction
(`t.sum()`, `torch.mean(t)`); `.data`, `.grad`, moves, `.detach()` and arithmetic with numbers
or other 0-dim tensors keep it; any other operation drops it, as ``Value.tensor_part`` does.
The positions below were read from the signatures of torch 2.13.0 (``inspect.signature``).
"""

from __future__ import annotations

import libcst as cst

from .syntax import literal_bool, string_value
from .values import TENSOR_FLOW, Flag, Value

# A loss's class or function -> how many positional arguments come before its first of `reduce`
# / `reduction` (all of them where that is keyword-only): with no more than that and no keyword
# turning the reduction off, it returns a 0-dim tensor ('mean' by default; `size_average=False`
# sums). tests/test_ranks.py reads them again from the installed torch.
LOSS_MODULES = {
    "BCELoss": 2, "BCEWithLogitsLoss": 2, "CTCLoss": 1, "CosineEmbeddingLoss": 2, "CrossEntropyLoss": 3,
    "GaussianNLLLoss": 0, "HingeEmbeddingLoss": 2, "HuberLoss": 0, "KLDivLoss": 1, "L1Loss": 1,
    "LinearCrossEntropyLoss": 2, "MSELoss": 1, "MarginRankingLoss": 2, "MultiLabelMarginLoss": 1, "MultiLabelSoftMarginLoss": 2,
    "MultiMarginLoss": 4, "NLLLoss": 3, "PoissonNLLLoss": 4, "SmoothL1Loss": 1, "SoftMarginLoss": 1,
    "TripletMarginLoss": 5, "TripletMarginWithDistanceLoss": 0,
}
LOSS_FUNCTIONS = {
    "binary_cross_entropy": 4, "binary_cross_entropy_with_logits": 4, "cosine_embedding_loss": 5,
    "cross_entropy": 5, "ctc_loss": 5, "gaussian_nll_loss": 5, "hinge_embedding_loss": 4, "huber_loss": 2,
    "kl_div": 3, "l1_loss": 3, "linear_cross_entropy": 3, "margin_ranking_loss": 5, "mse_loss": 3, "multi_margin_loss": 6,
    "multilabel_margin_loss": 3, "multilabel_soft_margin_loss": 4, "nll_loss": 5, "poisson_nll_loss": 6,
    "smooth_l1_loss": 3, "soft_margin_loss": 3, "triplet_margin_loss": 8, "triplet_margin_with_distance_loss": 3,
}
_REDUCTIONS = frozenset({"mean", "sum", "elementwise_mean"})
# Reductions that give a 0-dim tensor when given no dimension (`t.sum()`, `torch.max(t)`).
FULL_REDUCTIONS = frozenset(
    "sum mean prod norm std var max min amax amin median nanmedian nansum nanmean all any count_nonzero trace".split()
)


def loss_reduces(node: cst.Call, reduce_position: int) -> bool:
    """Whether a loss built or called by `node` reduces to a scalar (its default reduction)."""
    positional = 0
    for arg in node.args:
        if arg.star:
            return False
        if arg.keyword is None:
            positional += 1
        elif arg.keyword.value == "reduction":
            if not isinstance(arg.value, cst.SimpleString) or string_value(arg.value) not in _REDUCTIONS:
                return False
        elif arg.keyword.value == "reduce" and literal_bool(arg.value) is not True:
            return False
    return positional <= reduce_position


def full_reduction(node: cst.Call, tensor_arguments: int) -> bool:
    """`t.sum()` (no argument), `torch.sum(t)` (the tensor only), `t.mean(dtype=...)`: no dimension."""
    positional = [arg for arg in node.args if arg.keyword is None]
    return len(positional) == tensor_arguments and all(
        not arg.star and (arg.keyword is None or arg.keyword.value == "dtype") for arg in node.args)


def zero_dim_of(*operands: Value) -> int:
    """ZERO_DIM for an elementwise result of `operands` (`loss / n`, `total + loss`) where every
    tensor among them is 0-dim and the others are numbers; 0 otherwise."""
    found = 0
    for operand in operands:
        flags = operand.flags
        if flags & (Flag.NDARRAY | Flag.CONTAINER | Flag.MODULE):
            return 0
        if flags & TENSOR_FLOW:
            if not flags & Flag.ZERO_DIM:
                return 0
            found = Flag.ZERO_DIM
    return found


def indexing_raises(base: Value, index: cst.BaseExpression | None) -> bool:
    """`loss[0]`, `loss[-1]` of a 0-dim tensor: an integer index raises (`t[None]` and `t[...]` work;
    a slice raises too, but is not taken for one here)."""
    if not (base.flags & Flag.ZERO_DIM and base.flags & TENSOR_FLOW) or base.items is not None or base.objs:
        return False
    if isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus):
        index = index.expression
    return isinstance(index, cst.Integer)
