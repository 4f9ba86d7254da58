from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ..analysis.facts import Facts
from ..analysis.values import Flag
from ..diagnostics import Finding, Fix
from ..fixing.rewrites import (
    data_chain_write_statement,
    data_clone_detach,
    data_to_detach,
    data_write_statement,
    no_grad_context,
    rebinds,
    wrap_in_no_grad,
)
from .base import Invalid, Rule

# Tensor methods whose result may share the receiver's storage: views, splits into views, and
# conversions that return the tensor itself when nothing changes (`.cpu()` of a CPU tensor,
# `.float()` of a float one). Checked on torch 2.13: each result's untyped_storage().data_ptr()
# equals the receiver's. A write through one of them (`x.data.view(3).add_(1)`) writes `x`.
# `.numpy()` shares the storage too, but autograd never sees a write through an ndarray
# either way: it is a read.
ALIASING_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "permute", "transpose", "t", "adjoint", "squeeze",
    "unsqueeze", "expand", "expand_as", "narrow", "select", "flatten", "unflatten", "ravel",
    "diagonal", "as_strided", "movedim", "moveaxis", "swapaxes", "swapdims", "unfold", "split",
    "split_with_sizes", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "conj",
    "resolve_conj", "resolve_neg", "positive", "contiguous", "detach", "as_subclass", "to_dense",
    "to", "cpu", "cuda", "xpu", "mps", "type", "type_as", "float", "double", "half", "bfloat16",
    "int", "long", "short", "char", "byte", "bool", "cfloat", "cdouble", "pin_memory",
})
# Attributes that are views of the tensor (the same check).
ALIASING_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})

# How a `.data` is used, once followed through views (see `_chain_use`).
WRITE = "write"  # an in-place method, an item or augmented assignment, `out=`
READ = "read"  # reaches a method or attribute that neither writes nor aliases (`.numpy()`, `.shape`)
BARE = "bare"  # the alias itself is kept: bound to a name, returned, passed on

# `block.conv.weight.data` with `block` a parameter nothing in the file passes.
CALLER_DEPENDENT_DATA_NOTE = " (it depends on the caller: this is a parameter's .data when the caller passes a module)"
READ_MESSAGE = ".data is the legacy untracked view of a tensor and hides mistakes from autograd; use .detach()"
REBIND_MESSAGE = (
    "assignment to .data swaps the tensor's storage behind autograd's back (here for another dtype, "
    "device or a copy); assign a new tensor instead (for a parameter, a new nn.Parameter)"
)
WRITE_MESSAGE = (
    "in-place write through .data is invisible to autograd and can silently corrupt gradients; "
    "write under torch.no_grad() instead"
)


def _is_in_place_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_")


class LegacyDataAttribute(Rule):
    code = "DET103"
    name = "legacy-data-attribute"
    message = READ_MESSAGE
    what_it_does = (
        "Flags `x.data` where the file shows that `x` is a tensor (a parameter, a model output, a "
        "tensor built by torch), in reads, in-place writes and assignments. The evidence includes how "
        "the file uses an object: the parameters of a name given "
        "`.parameters()`/`.named_parameters()` (a module), the batches of a `DataLoader`, a module's "
        "buffers (`running_mean`, `running_var`: tensors that never require grad), and an "
        "`isinstance(m, nn.Conv2d)` or `isinstance(t, torch.Tensor)` test around the use, and a "
        "module's attribute built by a factory the file cannot see into (`self.conv = "
        "create_conv2d(...)`) that a method calls with a tensor (`self.conv(x)`): a submodule. "
        "`block.conv.weight.data` of a parameter nothing in the file passes is flagged with a note "
        "that it depends on the caller.\n\n"
        "The `.data` of an object the file does not show to be a tensor is never flagged, even when "
        "a tensor method follows it (`mnist.data.numpy()`, `batch.data.add_(1)`) or a tensor is "
        "assigned to it: that shows that the *field* holds a tensor, which is what a Dataset's "
        "`.data` (torchvision's MNIST), a PackedSequence's, a record's or a box's `.data` is, not "
        "that the object is one. Such an object of unknown type is far more often one of those than "
        "a legacy Variable, and `mnist.detach()` would raise AttributeError. `self.data` (a "
        "Dataset's own field) and the instance of a class (`Digits()`, `datasets.MNIST(...)`) are "
        "never tensors here.\n\n"
        "A `.data` is a write when its chain, followed through views and methods that may return "
        "the tensor itself (`view`, `reshape`, `t`, `T`, `transpose`, `squeeze`, basic indexing, "
        "`cpu`, `to`, `float`, `contiguous`, `detach`, ...), ends in an in-place method "
        "(`x.data.view(3).add_(1)`), an item or augmented assignment (`x.data.t()[0] = 1`) or an "
        "`out=` argument: each writes `x`'s storage unseen by autograd."
    )
    why_bad = (
        "`.data` is the pre-0.4 way to get the tensor behind a Variable. It shares storage like "
        "`.detach()` but hides the sharing from autograd's version counter: if an operation saved "
        "the tensor for backward (`exp`, `sigmoid`, ...) and you modify it through `.data`, "
        "`backward()` silently uses the modified values and returns wrong gradients, where the same "
        "write through `.detach()` raises an error."
    )
    example = "p.data.add_(-lr * p.grad)\nout.data.numpy()"
    use_instead = "with torch.no_grad():\n    p.add_(-lr * p.grad)\nout.detach().numpy()"
    fix_safety = (
        "Reads whose chain reaches a method or attribute that neither writes nor keeps an alias "
        "(`x.data.numpy()`, `x.data.clone()`, `x.data.t().sum()`, `x.data.tolist()`) become "
        "`x.detach()`: safe. Where the chain detaches anyway the `.data` is dropped "
        "(`x.data.cpu().detach().numpy()` -> `x.detach().cpu().numpy()`), as it is before metadata "
        "(`x.data.shape` -> `x.shape`, safe), and "
        "`x.data.clone().detach()` becomes `x.detach().clone()`, never a redundant call. A bare read, "
        "whose alias is kept (`buf = p.data`, `v = p.data.view(-1)`, `a = p.data.cpu()` on the CPU, "
        "`a = p.data.detach()`, or one passed on or returned), becomes `p.detach()` as an unsafe "
        "fix: later writes through `buf` now reach autograd.\n\n"
        "Writes are unsafe fixes: the statement is rewritten on the tensor under `torch.no_grad()` "
        "(`x.data.view(3).add_(1)` -> `x.view(3).add_(1)`, `torch.add(a, b, out=x.data)` -> "
        "`torch.add(a, b, out=x)`), "
        "where autograd sees the write, so code whose gradient was silently wrong raises instead. "
        "Adjacent writes in one block share one `with torch.no_grad():` (a blank line ends the "
        "run; an `if` whose body only writes, such as `if m.bias is not None: m.bias.data.zero_()`, "
        "joins its neighbours' block); where grad is already off (inside `with torch.no_grad():` or a `@torch.no_grad()` "
        "function) no block is added. The block is spelled with a name bound where the write runs "
        "(`torch`, the module's alias, `no_grad`): an import under `if TYPE_CHECKING:` or in another "
        "function does not count, and then `import torch` is added at the top (above the first "
        "`from torch import`); where `torch` is bound to something else (or imported later in the "
        "same function, or below a top-level write) no fix is offered. The statement is fixed whole: the `.data` of tensors in "
        "the written value goes too (`p.data = q.data` -> `p.copy_(q)`), as it changes no number "
        "under no_grad.\n\n"
        "- In-place methods and augmented assignments (`p.data.add_(g)`, `p.data -= lr * g`, "
        "`p.data[0] = 1`) write the same numbers into the same storage.\n"
        "- `p.data = v` becomes `p.copy_(v)`, which is a different operation: `.data =` rebinds "
        "`p` to `v`'s tensor (its shape, dtype and device may change, and `p` then shares `v`'s "
        "storage, so later in-place updates of one, such as a BatchNorm's running statistics, show "
        "in both), while `copy_()` writes `v`'s numbers into `p`'s own storage: it broadcasts `v` "
        "or raises when the shapes differ, casts `v`'s dtype silently and copies across devices. "
        "The fix's description says when the file shows that `v` has `p`'s shape and dtype "
        "(`p.data.clamp(-1, 1)`, `torch.zeros_like(p)`), and warns otherwise.\n"
        "- Where the value visibly changes dtype or device (`p.data = p.data.half()`, `.to(...)`, "
        "`.cuda()`) or is a copy of the tensor itself (`p.data = p.data.clone()`, which gives `p` "
        "storage of its own), the write is a rebinding: the message says so and no fix is offered, "
        "since `copy_()` would cast it back or change nothing.\n"
        "- Where a rebinding is meant (a parameter resized or given a new dtype), the idiomatic code "
        "is not `copy_()`: assign a new parameter, `module.weight = nn.Parameter(v)` (an optimizer "
        "built earlier still holds the old one), use `module.register_parameter(name, "
        "nn.Parameter(v))`, or `torch.nn.utils.parametrize.register_parametrization` for a weight "
        "computed from another. The fix never writes these for you."
    )
    runtime_truth = (
        "The `.data` write runs and yields a wrong gradient; the `.detach()` write raises autograd's "
        "in-place modification error."
    )
    VALID = [
        (
            "import torch\nclass Set(torch.utils.data.Dataset):\n    def __init__(self):\n        self.data = [1]\n"
            "    def __getitem__(self, i):\n        return self.data[i]\n"
        ),
        "import torch\nimport numpy as np\na = np.zeros(3)\nbuf = a.data\n",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = torch.utils.data.DataLoader([1])\n",
        "import torch\ndef f(batch):\n    return batch.data\n",
        # A Dataset whose `.data` field is a tensor: `mnist.detach()` would raise AttributeError.
        "import torch\nfrom torchvision import datasets\nmnist = datasets.MNIST('.')\nimages = mnist.data.numpy()\n",
        "import torch\ndef show(batch):\n    batch.data.add_(1)\n    return batch.data.numpy()\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nw = torch.ones(3, requires_grad=True)\nw.data.numpy()\n",
            "import torch\nw = torch.ones(3, requires_grad=True)\nw.detach().numpy()\n",
        ),
        Invalid(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nfor p in model.parameters():\n    p.data.add_(1)\n",
            "import torch\nmodel = torch.nn.Linear(2, 2)\nfor p in model.parameters():\n"
            "    with torch.no_grad():\n        p.add_(1)\n",
        ),
        Invalid(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.weight.data = torch.zeros(2, 2)\n",
            "import torch\nmodel = torch.nn.Linear(2, 2)\nwith torch.no_grad():\n    model.weight.copy_(torch.zeros(2, 2))\n",
        ),
        Invalid(
            "import torch\ndef init(m):\n    m.weight.data.normal_(0, 0.02)\n",
            "import torch\ndef init(m):\n    with torch.no_grad():\n        m.weight.normal_(0, 0.02)\n",
        ),
        # A write through a view of `.data` is a write.
        Invalid(
            "import torch\nw = torch.ones(3, requires_grad=True)\nw.data.view(3).add_(1)\n",
            "import torch\nw = torch.ones(3, requires_grad=True)\nwith torch.no_grad():\n    w.view(3).add_(1)\n",
        ),
        # An object whose `.grad` the same scope reads is a tensor: a hand-written SGD step.
        Invalid(
            "import torch\ndef sgd(params, lr):\n    for p in params:\n        p.data.add_(-lr * p.grad)\n",
            "import torch\ndef sgd(params, lr):\n    for p in params:\n        with torch.no_grad():\n"
            "            p.add_(-lr * p.grad)\n",
        ),
        # What an unknown field's `.parameters()` yields is a Parameter: only modules offer it.
        Invalid(
            "import torch\nclass A:\n    def sync(self):\n        for p in self.net.parameters():\n"
            "            p.data.zero_()\n",
            "import torch\nclass A:\n    def sync(self):\n        for p in self.net.parameters():\n"
            "            with torch.no_grad():\n                p.zero_()\n",
        ),
        # `torch` bound only for type checkers: the fix imports it.
        Invalid(
            "from typing import TYPE_CHECKING\nimport torch.nn as nn\nif TYPE_CHECKING:\n    import torch\n"
            "layer = nn.Linear(2, 2)\nlayer.bias.data.zero_()\n",
            "from typing import TYPE_CHECKING\nimport torch.nn as nn\nimport torch\n\nif TYPE_CHECKING:\n    import torch\n"
            "layer = nn.Linear(2, 2)\nwith torch.no_grad():\n    layer.bias.zero_()\n",
        ),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for node in facts.attributes.get("data", ()):
            if not self._is_tensor_data(facts, node):
                continue
            use, end = self._chain_use(facts, node)
            message = WRITE_MESSAGE if use == WRITE else READ_MESSAGE
            if self._caller_dependent(facts, node):
                message += CALLER_DEPENDENT_DATA_NOTE
            if use == WRITE:
                fix = self._write_fix(facts, node, end)
                if self._rebinds(facts, node):
                    message = REBIND_MESSAGE
            else:
                fix = data_clone_detach(node, facts) or data_to_detach(node, use == READ, facts)
            yield self.finding(node.attr, message, fix)

    @staticmethod
    def _chain_use(facts: Facts, data: cst.Attribute) -> tuple[str, cst.CSTNode]:
        """How the tensor `x.data` gives is used, followed through views: (WRITE, READ or BARE, the
        node where the chain ends). `x.data.view(3).add_(1)` writes `x`'s storage, unseen by
        autograd, just as `x.data.add_(1)` does; `x.data.t().numpy()` only reads; `v = x.data.t()`
        keeps an alias whose later writes autograd does not see."""
        if data in facts.stores:
            return WRITE, data  # `x.data = v`, `x.data += v`
        node: cst.CSTNode = data
        while True:
            parent = facts.parents.get(node)
            if isinstance(parent, cst.Subscript) and parent.value is node:
                if parent in facts.stores:
                    return WRITE, parent  # `x.data[0] = 1`, `x.data.t()[0] += 1`
                node = parent  # a basic index is a view (an advanced one a copy: a write to it changes nothing)
                continue
            if isinstance(parent, cst.Call) and any(
                arg.value is node and arg.keyword is not None and arg.keyword.value == "out" for arg in parent.args
            ):
                return WRITE, parent
            if not (isinstance(parent, cst.Attribute) and parent.value is node):
                return BARE, node
            name = parent.attr.value
            call = facts.parents.get(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                if name in ALIASING_ATTRIBUTES:
                    node = parent
                    continue
                return (BARE, parent) if parent in facts.stores else (READ, parent)
            if _is_in_place_method(name):
                return WRITE, call
            if name not in ALIASING_METHODS:
                return READ, call
            node = call

    @staticmethod
    def _rebinds(facts: Facts, node: cst.Attribute) -> bool:
        """`p.data = p.data.half()`, `p.data = p.data.clone()`: the write means a new tensor."""
        line = facts.statement_lines.get(node)
        small = line.body[0] if line is not None else None
        return isinstance(small, cst.Assign) and node in facts.stores and rebinds(node.value, small.value)

    @staticmethod
    def _caller_dependent(facts: Facts, node: cst.Attribute) -> bool:
        """`block.conv.weight.data` of a parameter nothing in the file passes, and nothing else says so."""
        value = facts.value_of(node.value)
        return value.has(Flag.MAYBE_PARAMETER) and not value.has(Flag.TENSOR | Flag.GRAD)

    @staticmethod
    def _is_tensor_data(facts: Facts, node: cst.Attribute) -> bool:
        """Whether the file shows that the object of this `x.data` is a tensor, so that `.data`
        is Tensor.data (not a Dataset's field, an ndarray's buffer, a box's value).

        What follows `.data` is no evidence: `mnist.data.numpy()` shows that `mnist.data` is a
        tensor, as a torchvision Dataset's, a PackedSequence's or a record's `.data` field is,
        not that `mnist` is one; `mnist.detach()` would raise AttributeError.
        """
        base = node.value
        if base in facts.self_names:
            return False
        parent = facts.parents.get(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            return False  # `obj.data()`: a method named data, not Tensor.data
        value = facts.value_of(base)
        if value.has(Flag.NOT_TENSOR) or (value.has(Flag.NDARRAY) and not value.is_tensor_like):
            return False
        return value.has(Flag.TENSOR | Flag.GRAD | Flag.MAYBE_PARAMETER)

    @staticmethod
    def _writes_directly(facts: Facts, node: cst.Attribute, end: cst.CSTNode) -> bool:
        """`x.data = v`, `x.data[i] = v`, `x.data.add_(v)`: the write is the `.data`'s own next link."""
        parent = facts.parents.get(node)
        if end is node or (isinstance(parent, cst.Subscript) and parent is end):
            return True
        return isinstance(parent, cst.Attribute) and isinstance(end, cst.Call) and end.func is parent

    @staticmethod
    def _write_fix(facts: Facts, node: cst.Attribute, end: cst.CSTNode) -> Fix | None:
        """Unsafe: the write moves under `torch.no_grad()`, where autograd sees it (and may raise)."""
        def is_tensor_data(data: cst.Attribute) -> bool:
            return LegacyDataAttribute._is_tensor_data(facts, data)

        if LegacyDataAttribute._writes_directly(facts, node, end):
            rewritten = data_write_statement(node, facts, is_tensor_data)
        else:
            rewritten = data_chain_write_statement(end, facts, is_tensor_data)
        if rewritten is None:
            return None  # not a whole statement: the message's advice is all we offer
        line, small, description = rewritten
        if not facts.grad_enabled_at(node):
            description = description.replace("under torch.no_grad()", "(grad is already off here)")
            return wrap_in_no_grad(line, small, None, description)
        context = no_grad_context(facts.imports, line)
        if context is None:
            return None
        return wrap_in_no_grad(line, small, context, description)
