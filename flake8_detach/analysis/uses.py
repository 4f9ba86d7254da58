"""What a function's own code says its names are, by how it uses them (evidence by use).

A parameter nothing in the project passes is of unknown kind. Its uses can settle it: a method
only a tensor has (`labels.cpu().detach()`) makes its `.data` Tensor.data (tensor_users); a use as
a size or a count (`torch.arange(0, d_model, 2)`, `nn.Linear(d_model, n)`, `range(n)`, `x.view(b,
n)`) makes it a number, which no caller can pass with grad (scalar_users).
"""

from __future__ import annotations

import libcst as cst

from .imports import ImportTable
from .semantics import SCALAR_KEYWORDS, is_nn_module_class
from .syntax import descendants

# Methods only a torch tensor has among the objects code converts or a batch may be (NumPy
# arrays, pandas frames and series, SciPy sparse matrices, modules, PackedSequence, PyG's graph
# batches, PIL images, plain Python): calling one says the receiver is a tensor. These give a
# tensor back, so the result of `clean.unsqueeze(1)` of a batch nothing in the file describes is
# one (calls.py); checked against numpy, pandas and torch 2.13 by tests/test_uses.py.
TENSOR_ONLY_RESULTS = frozenset(
    """unsqueeze unsqueeze_ squeeze_ permute view_as expand expand_as type_as masked_fill masked_fill_
    masked_select index_select index_add_ index_fill_ index_copy_ new_zeros new_ones new_full new_empty
    new_tensor narrow log_softmax softmax bmm mm matmul clamp clamp_ clamp_min clamp_max uniform_ normal_
    fill_ zero_ copy_""".split()
)
# `requires_grad_` a module has too; before `.data` or `.grad` (what the uses decide) it still
# says a tensor: no module has those.
TENSOR_ONLY_USES = TENSOR_ONLY_RESULTS | frozenset({
    "detach", "detach_", "numpy", "requires_grad_", "backward", "retain_grad", "register_hook", "get_device",
    "ndimension", "nelement", "element_size", "is_contiguous", "is_floating_point",
})
# Tensor methods that take another tensor (an index or a mask) at this position, or by this
# keyword: an ndarray or a list there raises TypeError (torch 2.13, tests/test_uses.py), and no
# NumPy array, frame or module has these methods. `logpt.gather(1, target)` says `target` is one.
TENSOR_ARGUMENTS = {
    **dict.fromkeys(("gather", "index_select", "scatter", "scatter_", "scatter_add", "scatter_add_", "index_add",
                     "index_add_", "index_fill", "index_fill_", "index_copy", "index_copy_"), (1, "index")),
    **dict.fromkeys(("masked_fill", "masked_fill_", "masked_select", "masked_scatter", "masked_scatter_"), (0, "mask")),
}
# Methods that give back the same kind of object (a tensor for a tensor, a module for a module):
# `labels.cpu().detach()` says what `labels` is as `labels.detach()` does.
_SAME_KIND_METHODS = frozenset({"cpu", "cuda", "to", "float", "double", "half", "long", "int", "type", "contiguous"})


def tensor_users(scope: cst.FunctionDef, imports: ImportTable) -> frozenset[str]:
    """The names a function's body uses as tensors only can be used (nested functions and classes
    left out): their `.grad` is read (only tensors carry autograd's gradient), a tensor-only
    method is called on them, directly or after same-kind methods (`labels.cpu().detach()`), an
    in-place one on their `.data` (`bias.data[a:b].fill_(1.)`, `_data_owner`), they
    are the input of a function that takes only a tensor there (`F.binary_cross_entropy(p,
    y)`, `torch.ones_like(p)`, `nn.init.uniform_(w, -b, b)`: torch.nn.functional's and
    torch.nn.init's functions and torch's `*_like` factories),
    or the index or mask of a tensor method that takes only a tensor there (`x.gather(1, idx)`)."""
    found: set[str] = set()
    for node in descendants(scope.body, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is cst.Call:
            name = _tensor_input(node, imports)
            if name is not None:
                found.add(name)
            name = _tensor_argument(node)
            if name is not None:
                found.add(name)
            continue
        if type(node) is not cst.Attribute:
            continue
        attr = node.attr.value
        if attr == "grad" and type(node.value) is cst.Name:
            found.add(node.value.value)
        elif attr in TENSOR_ONLY_USES:
            receiver = node.value
            while (type(receiver) is cst.Call and type(receiver.func) is cst.Attribute
                   and receiver.func.attr.value in _SAME_KIND_METHODS):
                receiver = receiver.func.value
            if type(receiver) is cst.Name:
                found.add(receiver.value)
            elif attr.endswith("_"):
                owner = _data_owner(receiver)
                if owner is not None:
                    found.add(owner)
    return frozenset(found)


def _data_owner(receiver: cst.BaseExpression) -> str | None:
    """`bias` of `bias.data[start:end]` or `bias.data`, where a tensor's in-place method is called
    on it (`bias.data[start:end].fill_(1.)`, `weight.data.zero_()`): the legacy initialisation of
    a parameter. A dataset's or a PackedSequence's `.data` is a tensor too, but nothing fills it
    in place, so only in-place methods count."""
    if type(receiver) is cst.Subscript:
        receiver = receiver.value
    if type(receiver) is cst.Attribute and receiver.attr.value == "data" and type(receiver.value) is cst.Name:
        return receiver.value.value
    return None


def _tensor_input(call: cst.Call, imports: ImportTable) -> str | None:
    """The name passed first to a function that takes only a tensor there, if one is."""
    first = call.args[0] if call.args else None
    if first is None or first.keyword is not None or first.star or type(first.value) is not cst.Name:
        return None
    return first.value.value if _takes_a_tensor(imports.resolve(call.func)) else None


def _tensor_argument(call: cst.Call) -> str | None:
    """The name passed as the index or mask of a tensor method that takes only a tensor there."""
    if type(call.func) is not cst.Attribute:
        return None
    taken = TENSOR_ARGUMENTS.get(call.func.attr.value)
    if taken is None:
        return None
    position, keyword = taken
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    given = [arg for arg in call.args if arg.keyword is not None and arg.keyword.value == keyword]
    if len(positional) != len([arg for arg in call.args if arg.keyword is None]):
        return None  # `*args`: positions unknown
    chosen = given[0].value if given else positional[position].value if len(positional) > position else None
    return chosen.value if type(chosen) is cst.Name else None


# torch.nn.init's functions that take no tensor (a nonlinearity's name); every other one fills
# its first argument in place and refuses a list or an array (torch 2.13, tests/test_uses.py).
NN_INIT_WITHOUT_TENSOR = frozenset({"calculate_gain"})


def _takes_a_tensor(qualified: str | None) -> bool:
    """A torch function whose first argument must be a tensor (a list or an array raises)."""
    if qualified is None:
        return False
    if qualified.startswith("torch.nn.functional."):
        return True
    if qualified.startswith("torch.nn.init."):  # `nn.init.uniform_(weight, -b, b)`: a parameter
        name = qualified[len("torch.nn.init."):]
        return "." not in name and name[:1].islower() and name not in NN_INIT_WITHOUT_TENSOR
    return qualified.startswith("torch.") and qualified.count(".") == 1 and qualified.endswith("_like")


_DATA_AND_GRAD = frozenset({"data", "grad"})


def defines_data_and_grad(module: cst.Module) -> bool:
    """Whether a class of the file sets both `self.data` and `self.grad`: its own autograd value
    (micrograd's `Value`, a teaching notebook's), whose `.data` is a number. Then reading `.grad`
    tells nothing about what an object is."""
    for statement in module.body:
        if not isinstance(statement, cst.ClassDef):
            continue
        fields = {target.attr.value for node in descendants(statement.body)
                  if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign))
                  and isinstance(target := node.target, cst.Attribute) and isinstance(target.value, cst.Name)
                  and target.value.value == "self"}
        if _DATA_AND_GRAD <= fields:
            return True
    return False


# torch factories whose positional arguments are sizes, counts or bounds (torch 2.13).
SIZE_FACTORIES = frozenset(
    "zeros ones empty rand randn randint arange linspace logspace eye randperm tril_indices triu_indices".split()
)
# Tensor (and ndarray) methods whose positional arguments are sizes or dimensions.
SHAPE_METHODS = frozenset(
    """view reshape expand repeat unsqueeze squeeze size transpose permute narrow chunk flatten
    unflatten new_zeros new_ones new_empty movedim swapaxes""".split()
)


def scalar_users(scope: cst.FunctionDef, imports: ImportTable) -> frozenset[str]:
    """The names a function's body passes as sizes, counts or dimensions (nested functions and
    classes left out): positional arguments of `range`, of torch's size factories and of nn
    layers' constructors (not a loss's: `nn.CrossEntropyLoss(weights)`), arguments of shape
    methods, and torch calls' size keywords. A bare name or one in integer arithmetic
    (`2 * n`, `n // 2`) counts."""
    found: set[str] = set()
    for node in descendants(scope.body, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is cst.Call:
            for size in _size_arguments(node, imports):
                found.update(_integer_names(size))
    return frozenset(found)


def _size_arguments(call: cst.Call, imports: ImportTable) -> list[cst.BaseExpression]:
    """The arguments of a call that are sizes, counts or dimensions."""
    func = call.func
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if type(func) is cst.Attribute and func.attr.value in SHAPE_METHODS:
        return positional
    qualified = imports.resolve(func)
    if type(func) is cst.Name and func.value == "range" and qualified is None:
        return positional
    if qualified is None or not qualified.startswith("torch."):
        return []
    keyed = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in SCALAR_KEYWORDS]
    last = qualified.rsplit(".", 1)[-1]
    layer = is_nn_module_class(qualified) and not last.endswith("Loss")
    return positional + keyed if layer or last in SIZE_FACTORIES and qualified.count(".") == 1 else keyed


def _integer_names(node: cst.BaseExpression) -> list[str]:
    """`n`, `2 * n`, `n // 2 + 1`: the names an integer expression is made of; none for anything else."""
    if type(node) is cst.Name:
        return [node.value]
    if type(node) is cst.BinaryOperation and type(node.operator) in (cst.Add, cst.Subtract, cst.Multiply,
                                                                       cst.FloorDivide):
        return _integer_names(node.left) + _integer_names(node.right)
    return []
