"""DET108 negative-stride-to-torch: what the array facts make of each shape, and what is flagged.

The runtime side (each flagged shape raises ValueError on torch 2.13, each clean one runs) is in
`fixtures/det108/` (proven by `verify`) and in `scripts/check_sink_facts.py` for the tables.
"""

from __future__ import annotations

import pytest

from flake8_detach import check_source
from flake8_detach.catalog import SCREENS
from flake8_detach.fixing.fixer import fix_source
from flake8_detach.screening import has_candidates
from flake8_detach.verify.checks import RAISES_ARRAY_LAYOUT, expected_raise, skip_reason
from flake8_detach.verify.devices import META_LABEL, DeviceLeg
from flake8_detach.verify.fixtures import Fixture

HEADER = "import numpy as np\nimport torch\na = np.arange(12.0).reshape(3, 4)\n"

FLAGGED = {
    "slice": "torch.from_numpy(a[::-1])",
    "slice_last_axis": "torch.from_numpy(a[:, ::-1])",
    "negative_step_2": "torch.from_numpy(a[::-2])",
    "ellipsis": "torch.tensor(a[..., ::-1])",
    "flip": "torch.as_tensor(np.flip(a, 0))",
    "fliplr": "torch.from_numpy(np.fliplr(a))",
    "flipud": "torch.asarray(np.flipud(a))",
    "rot90": "torch.Tensor(np.rot90(a))",
    "rot90_k1": "torch.FloatTensor(np.rot90(a, 1))",
    "transpose_of_flip": "torch.from_numpy(np.flip(a).transpose(1, 0))",
    "T_of_flip": "torch.from_numpy(np.flip(a).T)",
    "np_transpose": "torch.from_numpy(np.transpose(a[::-1]))",
    "asarray_keeps": "torch.from_numpy(np.asarray(a[::-1]))",
    "row_of_flip": "torch.from_numpy(a[:, ::-1][0])",
    "flip_of_positive_step": "torch.from_numpy(np.flip(a[::2]))",
    "name": "b = a[::-1]\ntorch.from_numpy(b)",
    "unknown_base_from_numpy": "def f(img):\n    return torch.from_numpy(img[:, ::-1])\n",
    # A sixth review's near miss (an image transform): `.transpose` of a reversed parameter is an
    # ndarray's (a tensor refuses the negative step, a list has no `.transpose`).
    "transpose_of_reversed_parameter": ("def f(img):\n    img = img[..., ::-1]\n"
                                        "    return torch.from_numpy(img.transpose((2, 0, 1)))\n"),
    "tensor_of_transposed_reversed_parameter": "def f(img):\n    return torch.tensor(img[..., ::-1].transpose(2, 0, 1))\n",
    "big_endian_fromfile": "torch.from_numpy(np.fromfile('x', dtype='>f4'))",
    "big_endian_positional": "torch.from_numpy(np.frombuffer(b'0000', '>f4'))",
    "big_endian_dtype_object": "torch.tensor(np.zeros(2, dtype=np.dtype('>f8')))",
    "big_endian_copy_keeps": "torch.from_numpy(np.fromfile('x', dtype='>i4').copy())",
    "big_endian_astype": "torch.from_numpy(a.astype('>f4'))",
    "newbyteorder_big": "torch.from_numpy(a.astype(np.dtype('f4').newbyteorder('>')))",
}
CLEAN = {
    "copy": "torch.from_numpy(a[::-1].copy())",
    "tensor_copy": "torch.tensor(a[::-1].copy())",
    "positive_step": "torch.from_numpy(a[::2])",
    "ascontiguousarray": "torch.from_numpy(np.ascontiguousarray(np.flip(a)))",
    "np_array": "torch.from_numpy(np.array(a[::-1]))",
    "np_copy": "torch.from_numpy(np.copy(np.fliplr(a)))",
    "arithmetic": "torch.from_numpy(a[::-1] * 1)",
    "division": "torch.from_numpy(np.flip(a) / 255.0)",
    "astype": "torch.from_numpy(a[::-1].astype(np.float32))",
    "reshape_may_copy": "torch.from_numpy(a[::-1].reshape(-1))",
    "fancy_index": "i = [0, 1]\ntorch.from_numpy(a[::-1][i])",
    "rot90_k4": "torch.from_numpy(np.rot90(a, 4))",
    "rot90_unknown_k": "k = 3\ntorch.from_numpy(np.rot90(a, k))",
    "list_reversed": "xs = [1, 2, 3]\ntorch.tensor(xs[::-1])",
    "unknown_reversed_tensor": "def f(xs):\n    return torch.tensor(xs[::-1])\n",
    "transpose_of_reversed_parameter_copied": (
        "def f(img):\n    return torch.from_numpy(img[..., ::-1].transpose((2, 0, 1)).copy())\n"),
    "list_reversed_copied": "def f(xs):\n    return torch.tensor(xs[::-1].copy())\n",
    "string_reversed": "torch.tensor([ord(c) for c in 'abc'[::-1]])",
    "torch_flip": "torch.flip(torch.arange(3), [0])",
    "one_byte_big": "torch.from_numpy(np.zeros(3, dtype='>u1'))",
    "little_endian": "torch.from_numpy(np.fromfile('x', dtype='<f4'))",
    "big_astype_native": "b = np.fromfile('x', dtype='>f4')\ntorch.from_numpy(b.astype(b.dtype.newbyteorder('=')))",
    "big_byteswap_view": "b = np.fromfile('x', dtype='>f4')\ntorch.from_numpy(b.byteswap().view(b.dtype.newbyteorder()))",
    "big_arithmetic": "torch.from_numpy(np.fromfile('x', dtype='>f4') * 2)",
    "variable_step": "s = -1\ntorch.from_numpy(a[::s])",
    # Reversed twice: the array is itself again (a fifth review's false positive). Which axes a
    # reversal touches is not tracked, so a second one is no evidence either way.
    "flip_of_reversed": "torch.tensor(np.flip(np.arange(5)[::-1]))",
    "reversed_twice": "torch.from_numpy(a[::-1][::-1])",
    "fliplr_of_fliplr": "torch.from_numpy(np.fliplr(np.fliplr(a)))",
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_flagged(name: str) -> None:
    source = HEADER + FLAGGED[name] + "\n"
    found = [d for d in check_source(source) if d.code == "DET108"]
    assert len(found) == 1, source
    assert has_candidates(source, SCREENS)


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_not_flagged(name: str) -> None:
    source = HEADER + CLEAN[name] + "\n"
    assert [d for d in check_source(source) if d.code == "DET108"] == [], source


def test_message_names_the_cause() -> None:
    stride = check_source(HEADER + "torch.from_numpy(a[::-1])\n")[0].message
    order = check_source(HEADER + "torch.from_numpy(np.fromfile('x', dtype='>f4'))\n")[0].message
    assert "(negative stride)" in stride and ".copy()" in stride
    assert "(byte order)" in order and "not .copy()" in order


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        ("torch.from_numpy(a[::-1])", "torch.from_numpy(a[::-1].copy())"),
        ("torch.as_tensor(np.flip(a, 0))", "torch.as_tensor(np.flip(a, 0).copy())"),
        ("b = np.fromfile('x', dtype='>f4')\ntorch.from_numpy(b)",
         "b = np.fromfile('x', dtype='>f4')\ntorch.from_numpy(b.astype(b.dtype.newbyteorder(\"=\")))"),
    ],
)
def test_fix(line: str, fixed: str) -> None:
    result = fix_source(HEADER + line + "\n")
    assert result.source == HEADER + fixed + "\n"


def test_byte_order_of_a_call_gets_advice_only() -> None:
    """`.astype(x.dtype...)` would read the file twice: no automatic fix."""
    source = HEADER + "torch.from_numpy(np.fromfile('x', dtype='>f4'))\n"
    (found,) = [d for d in check_source(source) if d.code == "DET108"]
    assert found.fix is None


def test_helper_and_class_field() -> None:
    source = HEADER + (
        "def mirror(img):\n    return img[:, ::-1]\n"
        "class Item:\n    def __init__(self, img):\n        self.img = mirror(img)\n"
        "    def tensor(self):\n        return torch.from_numpy(self.img)\n"
        "Item(a).tensor()\n"
    )
    assert [d.line for d in check_source(source) if d.code == "DET108"] == [10]


def test_branch_that_may_flip() -> None:
    source = HEADER + "import random\nif random.random() < 0.5:\n    a = a[:, ::-1]\nx = torch.from_numpy(a)\n"
    assert [d.line for d in check_source(source) if d.code == "DET108"] == [7]


def test_screen_needs_a_flip_in_the_file_not_numpy() -> None:
    """DET108's own screen: a file with no negative step, flip or byte order is skipped; one that
    flips a tensor's `.numpy()` needs no NumPy import to raise (a held-out review's miss)."""
    (screen,) = [screen for screen in SCREENS if screen.code == "DET108"]
    assert not has_candidates("import torch\nx = torch.from_numpy(t.numpy()[1:])\n", (screen,))
    source = ("import torch\n\n\ndef embed(image):\n"
              "    array = (255 * image).detach().cpu().numpy()[:, :, ::-1]\n"
              "    return torch.from_numpy(array)\n\n\nembed(torch.ones(2, 2, 3))\n")
    assert has_candidates(source, (screen,))
    assert [(d.line, d.code) for d in check_source(source)] == [(6, "DET108")]
    with pytest.raises(ValueError, match="negative"):
        exec(compile(source, "<det108>", "exec"), {})  # noqa: S102


def test_verify_claims_the_value_error_on_every_device() -> None:
    kinds = frozenset({"stride"})
    assert expected_raise(kinds, DeviceLeg("cpu", "cpu")) is RAISES_ARRAY_LAYOUT
    assert expected_raise(kinds, DeviceLeg("meta", META_LABEL)) is RAISES_ARRAY_LAYOUT
    fixture = Fixture(path=__import__("pathlib").Path("f.py"), source="", claims={3: ("DET108",)}, reads_device=True,
                      kinds={3: kinds})
    assert skip_reason(fixture, DeviceLeg("meta", META_LABEL)) is None


@pytest.mark.parametrize("name, flagged", [("flip_of_reversed", False), ("reversed_twice", False),
                                           ("fliplr_of_fliplr", False), ("flip_of_positive_step", True),
                                           ("slice", True), ("flip", True)])
def test_reversals_run_as_claimed(name: str, flagged: bool) -> None:
    """The cases about reversals, run: flagged ones raise torch's ValueError, the others run."""
    pytest.importorskip("torch")
    source = HEADER + (FLAGGED if flagged else CLEAN)[name] + "\n"
    if flagged:
        with pytest.raises(ValueError, match="negative"):
            exec(compile(source, name, "exec"), {})  # noqa: S102 - the claim is about run time
    else:
        exec(compile(source, name, "exec"), {})  # noqa: S102


@pytest.mark.parametrize("name, flagged", [("transpose_of_reversed_parameter", True),
                                           ("tensor_of_transposed_reversed_parameter", True),
                                           ("transpose_of_reversed_parameter_copied", False)])
def test_transposed_reversed_parameter_runs_as_claimed(name: str, flagged: bool) -> None:
    """Called with an image array, as the transform is: flagged ones raise, the copy runs."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("torch")
    namespace: dict[str, object] = {}
    exec(compile(HEADER + (FLAGGED if flagged else CLEAN)[name], name, "exec"), namespace)  # noqa: S102
    image = np.zeros((4, 5, 3), dtype=np.uint8)
    if flagged:
        with pytest.raises(ValueError, match="negative"):
            namespace["f"](image)  # type: ignore[operator]
    else:
        assert tuple(namespace["f"](image).shape) == (3, 4, 5)  # type: ignore[operator,attr-defined]
