"""DET105 through attribute chains: `lin.weight.detach().numpy()` and `torch.from_numpy(self.buffer)`.

The array (or tensor) shares memory with an attribute of an object; a write through it is seen by
whoever uses the object afterwards: a later read of the chain's root in the same scope, or at once
when the root outlives the function (`self`, a parameter, a global). Each case that must flag is
paired with the look-alike that must not.
"""

from __future__ import annotations

import pytest

from flake8_detach import check_source
from flake8_detach.fixing.fixer import fix_source

LAYER = "import numpy as np\nimport torch\n\nlin = torch.nn.Linear(2, 2)\n"  # 4 lines


def codes(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check_source(source) if d.code == "DET105"]


def test_layer_weight_written_through_its_array_then_the_layer_used() -> None:
    source = LAYER + "w = lin.weight.detach().numpy()\nw[0, 0] = 5\nprint(lin(torch.ones(2)))\n"
    (diagnostic,) = [d for d in check_source(source) if d.code == "DET105"]
    assert diagnostic.line == 6
    assert "writing 'w' in place also changes the tensor 'lin.weight'" in diagnostic.message
    assert "use .copy() where 'w' is created" in diagnostic.message


def test_layer_never_used_after_the_write_is_not_flagged_at_module_level() -> None:
    assert codes(LAYER + "w = lin.weight.detach().numpy()\nw[0, 0] = 5\nprint(w)\n") == []


@pytest.mark.parametrize("chain", [
    "lin.weight.data.numpy()",
    "lin.weight.detach().cpu().numpy()",
    "lin.weight.detach().numpy().T",
    "lin.weight.detach().numpy()[0]",
    "lin.weight.detach().numpy().reshape(-1)",
    "lin.weight.detach().view(-1).numpy()",
    "lin.weight.T.detach().numpy()",
])
def test_sharing_steps_and_views_keep_the_alias(chain: str) -> None:
    assert codes(LAYER + f"w = {chain}\nw += 1\nprint(lin)\n") == [(6, "DET105")]


@pytest.mark.parametrize("chain", [
    "lin.weight.detach().numpy().copy()",
    "np.array(lin.weight.detach())",
    "lin.weight.detach().numpy()[[0]]",  # fancy indexing copies
    "lin.weight.detach().numpy().T.reshape(-1)",  # reshape of a transpose copies
    "lin.weight.T.detach().numpy().reshape(-1)",
    "lin.weight.detach().numpy().astype(np.float64)",
])
def test_copies_are_no_alias(chain: str) -> None:
    assert codes(LAYER + f"w = {chain}\nw += 1\nprint(lin)\n") == []


def test_nested_attribute_chain_through_data_names_the_weight() -> None:
    source = (
        "import torch\n\n\nclass Encoder(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.encoder = torch.nn.Linear(2, 2)\n\n\nmodel = Encoder()\n"
        "w = model.encoder.weight.data.numpy()\nw[0] = 0\nmodel(torch.ones(2))\n"
    )
    (diagnostic,) = [d for d in check_source(source) if d.code == "DET105"]  # DET103 reports the `.data`
    assert (diagnostic.line, diagnostic.code) == (12, "DET105")
    assert "the tensor 'model.encoder.weight'" in diagnostic.message


METHOD = (
    "import numpy as np\nimport torch\n\n\nclass Model(torch.nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(2, 2)\n"
    "        self.buffer = np.zeros(3)\n\n"
)  # 10 lines


def test_method_writing_an_array_of_its_own_weight_is_flagged_at_once() -> None:
    source = METHOD + "    def reset(self):\n        w = self.fc.weight.detach().cpu().numpy()\n        w *= 0\n"
    (diagnostic,) = check_source(source)
    assert (diagnostic.line, diagnostic.code) == (13, "DET105")
    assert "the tensor 'self.fc.weight'" in diagnostic.message


def test_method_writing_a_tensor_of_its_own_array_is_flagged_at_once() -> None:
    source = METHOD + "    def bump(self):\n        t = torch.from_numpy(self.buffer)\n        t.add_(1)\n        return t\n"
    (diagnostic,) = check_source(source)
    assert (diagnostic.line, diagnostic.code) == (13, "DET105")
    assert "writing 't' in place also changes the array 'self.buffer'" in diagnostic.message
    assert "use .clone() where 't' is created" in diagnostic.message


def test_tensor_side_views_of_an_attribute_array_keep_the_alias() -> None:
    body = "    def bump(self):\n        t = torch.from_numpy(self.buffer).view(1, 3).permute(1, 0)\n        t.add_(1)\n"
    assert codes(METHOD + body) == [(13, "DET105")]
    copied = "    def bump(self):\n        t = torch.from_numpy(self.buffer).clone()\n        t.add_(1)\n"
    assert codes(METHOD + copied) == []


def test_parameter_and_global_roots_outlive_the_function() -> None:
    parameter = "import torch\n\n\ndef reset(model):\n    w = model.fc.weight.detach().numpy()\n    w[:] = 0\n"
    assert codes(parameter) == [(6, "DET105")]
    global_root = LAYER + "\n\ndef reset():\n    w = lin.weight.detach().numpy()\n    w[:] = 0\n"
    assert codes(global_root) == [(9, "DET105")]


def test_parameter_rebound_to_a_local_object_needs_a_later_read() -> None:
    source = (
        "import copy\n\nimport torch\n\n\ndef zeroed(model):\n    model = copy.deepcopy(model)\n"
        "    w = model.fc.weight.detach().numpy()\n    w[:] = 0\n    return w\n"
    )
    assert codes(source) == []
    assert codes(source.replace("    return w\n", "    return model\n")) == [(9, "DET105")]


def test_local_object_in_a_function_needs_a_later_read() -> None:
    unused = (
        "import torch\n\n\ndef scratch():\n    layer = torch.nn.Linear(2, 2)\n"
        "    w = layer.weight.detach().numpy()\n    w *= 0\n    return w\n"
    )
    assert codes(unused) == []
    used = unused.replace("    return w\n", "    return layer\n")
    assert codes(used) == [(7, "DET105")]


def test_rebinding_the_attribute_or_the_root_forgets_the_alias() -> None:
    write_then_read = "w[0, 0] = 5\nprint(lin)\n"
    shared = LAYER + "w = lin.weight.detach().numpy()\n"
    assert codes(shared + "lin.weight = torch.nn.Parameter(torch.zeros(2, 2))\n" + write_then_read) == []
    assert codes(shared + "lin.weight.data = torch.zeros(2, 2)\n" + write_then_read) == []
    assert codes(shared + "lin = torch.nn.Linear(2, 2)\n" + write_then_read) == []
    assert codes(shared + "w = w * 2\n" + write_then_read) == []
    # Another attribute of the same object leaves the alias of the weight alone.
    assert codes(shared + "lin.bias = torch.nn.Parameter(torch.zeros(2))\n" + write_then_read) == [(7, "DET105")]


def test_attribute_rebound_after_the_write_drops_the_pending_write() -> None:
    source = LAYER + "w = lin.weight.detach().numpy()\nw[0, 0] = 5\nlin.weight = torch.nn.Parameter(torch.zeros(2, 2))\nprint(lin)\n"
    assert codes(source) == []


def test_the_unsafe_fix_copies_where_the_attribute_alias_is_made() -> None:
    source = METHOD + "    def reset(self):\n        w = self.fc.weight.detach().numpy().T\n        w *= 0\n"
    fixed = fix_source(source, unsafe=True).source
    assert "w = self.fc.weight.detach().numpy().copy().T\n" in fixed
    assert codes(fixed) == []
    tensor = METHOD + "    def bump(self):\n        t = torch.from_numpy(self.buffer)\n        t.add_(1)\n"
    assert "t = torch.from_numpy(self.buffer).clone()\n" in fix_source(tensor, unsafe=True).source
