"""One entry per iteration (statements.loop_slots): within an iteration of `for i, ...`, `out[i]`
is one entry, so a write replaces what the iteration wrote there before, and what the entry
holds at the iteration's end (or where a branch leaves the loop) is what the container gets.

The thirty-third held-out set's detector (yolov4-pytorch's non_max_suppression) fills
`output[i]` with tensors, then converts it (`output[i] = output[i].cpu().numpy()` under
`if output[i] is not None:`); the join of every write made each entry "tensor or array", and
thirteen NumPy calls on its results were taken for conversions of a GPU tensor. Each case here
runs (on the CPU, `DEVICE` standing for where the predictions live) and the look-alikes that
keep a tensor in the container must still flag.
"""

from __future__ import annotations

import pytest
from running import failing_line

from flake8_detach import check_source
from flake8_detach.settings import Settings

PREVIEW = Settings(preview=True)

SUPPRESS = """
import os

import numpy as np
import torch

DEVICE = os.environ.get("DEVICE", "cpu")


def suppress(prediction):
    output = [None for _ in range(len(prediction))]
    for i, image_pred in enumerate(prediction):
        kept = image_pred[image_pred[:, 0] > 0]
        if not kept.size(0):
            continue
        for c in range(2):
            output[i] = kept if output[i] is None else torch.cat((output[i], kept))
        if output[i] is not None:
            output[i] = output[i].cpu().numpy()
    return output


results = suppress(torch.ones(2, 3, 4).to(DEVICE))
print(np.array(results[0][:, 1]))
"""


def codes(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check_source(source, PREVIEW)]


def conversion_line(source: str) -> int:
    return source.splitlines().index("print(np.array(results[0][:, 1]))") + 1


@pytest.mark.parametrize(("change", "flagged"), [
    ((), False),  # every entry the loop filled is converted before the iteration ends
    (("            output[i] = output[i].cpu().numpy()\n", "            output[i].cpu().numpy()\n"), True),
    # a tensor left behind by `continue` after it was written
    (("        if not kept.size(0):\n            continue\n",
      "        output[i] = kept\n        if kept.size(0) > 2:\n            continue\n"), True),
    # the container read whole in the iteration while its entry is still a tensor (passed on, it
    # may be kept): the entry goes into the container there, as a write would
    (("        if output[i] is not None:\n",
      "        print(len(output))\n        if output[i] is not None:\n"), True),
])
def test_an_entry_converted_before_the_iteration_ends(change: tuple[str, str], flagged: bool) -> None:
    source = SUPPRESS.replace(*change) if change else SUPPRESS
    found = codes(source)
    assert found == ([(conversion_line(source), "DET106")] if flagged else []), found
    assert failing_line(source) is None  # on the CPU it runs either way


def test_a_tensor_entry_on_the_gpu_fails_where_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin on meta (the stand-in for a GPU): the entry left a tensor makes np.array fail."""
    source = SUPPRESS.replace("            output[i] = output[i].cpu().numpy()\n", "            pass\n")
    assert codes(source) == [(conversion_line(source), "DET106")]
    monkeypatch.setenv("DEVICE", "meta")
    with pytest.raises(NotImplementedError):
        exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})  # noqa: S102


@pytest.mark.parametrize(("loop", "slots"), [
    ("for i, x in enumerate(xs):\n    out[i] = x\n", {"out[i]": "out"}),
    ("for i, x in enumerate(xs):\n    x = x[0]\n    out[i] = x\n", {"out[i]": "out"}),  # another target name
    ("for i in range(3):\n    out[i] = 1\n    out[i] = out[i] + 1\n", {"out[i]": "out"}),
    ("for i in range(3):\n    out[j] = 1\n", {}),  # not the loop's key
    ("for i in range(3):\n    out[i] = 1\n    i = 2\n", {}),  # the key rebound
    ("for i in range(3):\n    out[i] = 1\n    out = []\n", {}),  # the container rebound
    ("for i in range(3):\n    out.x[i] = 1\n", {}),  # an attribute's entry
    ("for i in range(3):\n    def f():\n        out[i] = 1\n", {}),  # in a nested function
])
def test_which_entries_are_slots(loop: str, slots: dict[str, str]) -> None:
    import libcst as cst

    from flake8_detach.analysis.syntax import loop_slots

    node = cst.parse_module(loop).body[0]
    assert isinstance(node, cst.For)
    assert loop_slots(node) == slots


NONE_TESTS = """
import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
kept = None
for step in range(2):
    if kept is None:
        kept = torch.ones(2)
    else:
        kept = kept.to(DEVICE)
print(kept.numpy())
"""


def test_where_a_name_is_none_it_holds_nothing() -> None:
    """`if kept is None:` ... `else: kept = kept.to(DEVICE)`: a test of None narrows the name in
    each branch; the value moved in the other branch still reaches the `.numpy()`."""
    assert codes(NONE_TESTS) == [(11, "DET104")]
    assert failing_line(NONE_TESTS) is None  # on the CPU it runs
