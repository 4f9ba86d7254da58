from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ..analysis.facts import Facts
from ..analysis.values import Flag
from ..diagnostics import Finding, Fix
from ..fixing.rewrites import (
    data_clone_detach,
    data_to_detach,
    data_write_statement,
    no_grad_context,
    rebinds,
    wrap_in_no_grad,
)
from .base import Invalid, Rule

# Methods that only a torch.Tensor has: `.data` followed by one of them is a tensor's `.data`.
# Methods after `.data` that only a tensor has (besides the in-place `*_` ones, see
# `_is_in_place_method`): evidence that the `.data` is Tensor.data.
TENSOR_METHODS = frozenset({"numpy", "cpu", "cuda", "clone", "detach"})

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
        "Flags `.data` on a value the file shows is a tensor (a parameter, a model output, a "
        "tensor-only method right after it such as `.numpy()`, `.cpu()`, `.add_()`), in reads, "
        "in-place writes and assignments. `self.data` of a Dataset is not a tensor and is never flagged. "
        "The evidence includes how the file uses an object: the parameters of a name given "
        "`.parameters()`/`.named_parameters()` (a module), the batches of a `DataLoader`, a module's "
        "buffers (`running_mean`, `running_var`: tensors that never require grad), and an "
        "`isinstance(m, nn.Conv2d)` or `isinstance(t, torch.Tensor)` test around the use, and a "
        "module's attribute built by a factory the file cannot see into (`self.conv = "
        "create_conv2d(...)`) that a method calls with a tensor (`self.conv(x)`): a submodule. "
        "`block.conv.weight.data` of a parameter nothing in the file passes is flagged with a note "
        "that it depends on the caller."
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
        "Reads followed by a tensor method (`x.data.numpy()`, `x.data.clone()`) become `x.detach()`: "
        "safe. Where the chain detaches anyway the `.data` is dropped (`x.data.detach()`, "
        "`x.data.cpu().detach()`), as it is before metadata (`x.data.shape` -> `x.shape`), and "
        "`x.data.clone().detach()` becomes `x.detach().clone()`, never a redundant call. A bare read "
        "(`buf = p.data`) becomes `p.detach()` as an unsafe fix: later writes through `buf` now "
        "reach autograd.\n\n"
        "Writes are unsafe fixes: the statement is rewritten on the tensor under `torch.no_grad()`, "
        "where autograd sees the write, so code whose gradient was silently wrong raises instead. "
        "Adjacent writes in one block share one `with torch.no_grad():` (a blank line ends the "
        "run; an `if` whose body only writes, such as `if m.bias is not None: m.bias.data.zero_()`, "
        "joins its neighbours' block); where grad is already off (inside `with torch.no_grad():` or a `@torch.no_grad()` "
        "function) no block is added; `import torch` is added above the first `from torch import` "
        "when the file has no `torch` name. The statement is fixed whole: the `.data` of tensors in "
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
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for node in facts.attributes.get("data", ()):
            if not self._is_tensor_data(facts, node):
                continue
            parent = facts.parents.get(node)
            followed_by = self._method_after(facts, node)
            writes = node in facts.stores or (followed_by is not None and _is_in_place_method(followed_by))
            if isinstance(parent, cst.Subscript) and parent in facts.stores:
                writes = True
            message = WRITE_MESSAGE if writes else READ_MESSAGE
            if self._caller_dependent(facts, node):
                message += CALLER_DEPENDENT_DATA_NOTE
            if writes:
                fix = self._write_fix(facts, node)
                if self._rebinds(facts, node):
                    message = REBIND_MESSAGE
            else:
                fix = data_clone_detach(node, facts) or data_to_detach(node, followed_by is not None, facts)
            yield self.finding(node.attr, message, fix)

    @staticmethod
    def _rebinds(facts: Facts, node: cst.Attribute) -> bool:
        """`p.data = p.data.half()`, `p.data = p.data.clone()`: the write means a new tensor."""
        line = facts.statement_lines.get(node)
        small = line.body[0] if line is not None else None
        return isinstance(small, cst.Assign) and node in facts.stores and rebinds(node.value, small.value)

    @classmethod
    def _caller_dependent(cls, facts: Facts, node: cst.Attribute) -> bool:
        """`block.conv.weight.data` of a parameter nothing in the file passes, and nothing else says so."""
        value = facts.value_of(node.value)
        return value.has(Flag.MAYBE_PARAMETER) and not value.has(Flag.TENSOR | Flag.GRAD) and (
            not cls._followed_by_tensor_method(facts, node))

    @classmethod
    def _is_tensor_data(cls, facts: Facts, node: cst.Attribute) -> bool:
        """Whether the file shows that this `x.data` is a tensor's `.data` (not a Dataset's, an ndarray's)."""
        base = node.value
        if base in facts.self_names:
            return False
        parent = facts.parents.get(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            return False  # `obj.data()`: a method named data, not Tensor.data
        value = facts.value_of(base)
        if value.has(Flag.NOT_TENSOR) or (value.has(Flag.NDARRAY) and not value.is_tensor_like):
            return False
        # `.to(device)` on an unknown object (a PackedSequence, a module) is no tensor evidence.
        if value.has(Flag.TENSOR | Flag.GRAD | Flag.MAYBE_PARAMETER) or cls._followed_by_tensor_method(facts, node):
            return True
        return cls._assigned_a_tensor(facts, node)

    @classmethod
    def _followed_by_tensor_method(cls, facts: Facts, node: cst.Attribute) -> bool:
        """`x.data.numpy()`, `p.data.addcdiv_(...)`: torch spells its in-place methods with a `_`."""
        after = cls._method_after(facts, node)
        return after is not None and (after in TENSOR_METHODS or _is_in_place_method(after))

    @classmethod
    def _assigned_a_tensor(cls, facts: Facts, node: cst.Attribute) -> bool:
        """`p.data = q.data.clone()`, `p.data = q.detach()`: a tensor assigned to `p.data` makes `p` a tensor."""
        if node not in facts.stores:
            return False
        line = facts.statement_lines.get(node)
        small = line.body[0] if line is not None else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and small.targets[0].target is node):
            return False
        value = small.value
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args:
            if value.func.attr.value == "detach":
                return True  # only a tensor has .detach()
            if value.func.attr.value != "clone":
                return False
            value = value.func.value
        return isinstance(value, cst.Attribute) and value.attr.value == "data" and cls._is_tensor_data(facts, value)

    @staticmethod
    def _write_fix(facts: Facts, node: cst.Attribute) -> Fix | None:
        """Unsafe: the write moves under `torch.no_grad()`, where autograd sees it (and may raise)."""
        rewritten = data_write_statement(node, facts, lambda data: LegacyDataAttribute._is_tensor_data(facts, data))
        if rewritten is None:
            return None  # not a whole statement: the message's advice is all we offer
        line, small, description = rewritten
        if not facts.grad_enabled_at(node):
            description = description.replace("under torch.no_grad()", "(grad is already off here)")
            return wrap_in_no_grad(line, small, None, description)
        context = no_grad_context(facts.imports)
        if context is None:
            return None
        return wrap_in_no_grad(line, small, context, description)

    @staticmethod
    def _method_after(facts: Facts, node: cst.Attribute) -> str | None:
        """`add_` for `x.data.add_(...)`: the method called right on the `.data` result."""
        parent = facts.parents.get(node)
        if isinstance(parent, cst.Attribute) and isinstance(facts.parents.get(parent), cst.Call):
            return parent.attr.value
        return None
