"""Property tests: `fix` on a notebook changes the fixed cells' sources and not one other byte.

Notebooks are generated with every JSON layout `fix` claims to write back (indentation 1, 2 or 4,
ASCII escapes or not, CRLF, with or without a final newline) and sources stored as line lists or
as one string, mixing markdown cells, clean code, IPython syntax and cells with fixable hazards.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_detach.fixing.fixer import fix_file, fix_notebook_data
from flake8_detach.sources.notebook_json import JsonLayout

CLEAN = [
    "import torch",
    "x = 1\nprint('café ✓')",
    "%matplotlib inline\nt = torch.ones(2)\nt.numpy()",
    "!pip install torch",
    "def broken(:\n    pass",
    "%%bash\necho hi",
]
HAZARDS = [
    "w = torch.ones(2, requires_grad=True)\nw.numpy()",
    "model = torch.nn.Linear(2, 2)\nout = model(torch.ones(2))\nout.cpu().numpy()",
    "p = torch.nn.Parameter(torch.ones(2))\np.data.numpy()",
]

code_cell = st.fixed_dictionaries({
    "text": st.sampled_from(CLEAN + HAZARDS),
    "as_list": st.booleans(),
    "final_newline": st.booleans(),
})
markdown_cell = st.fixed_dictionaries({"markdown": st.text(max_size=20)})


def build(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """The notebook of ``cells``, after a first cell importing torch (so every hazard is found)."""
    built: list[dict[str, Any]] = [{"cell_type": "code", "execution_count": None, "id": "imports",
                                    "metadata": {}, "outputs": [], "source": ["import torch"]}]
    for number, cell in enumerate(cells, start=1):
        if "markdown" in cell:
            built.append({"cell_type": "markdown", "metadata": {}, "source": cell["markdown"]})
            continue
        text = cell["text"] + ("\n" if cell["final_newline"] else "")
        source: Any = text.splitlines(keepends=True) if cell["as_list"] else text
        built.append({"cell_type": "code", "execution_count": number or None, "id": f"c{number}",
                      "metadata": {"tags": ["é"]}, "outputs": [], "source": source})
    return {"cells": built, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def serialise(document: dict[str, Any], layout: JsonLayout) -> str:
    return layout.dump(document)


layouts = st.builds(JsonLayout, indent=st.sampled_from([1, 2, 4]), ensure_ascii=st.booleans(),
                    newline=st.sampled_from(["\n", "\r\n"]), final_newline=st.booleans())
notebooks = st.lists(st.one_of(code_cell, markdown_cell), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells=notebooks, layout=layouts)
def test_fix_changes_only_the_fixed_cells_sources(cells: list[dict[str, Any]], layout: JsonLayout) -> None:
    document = build(cells)
    raw = serialise(document, layout)
    assert JsonLayout.of(raw).dump(document) == raw  # the layout read off the text reproduces it
    result = fix_notebook_data(raw.encode("utf-8"), "t.ipynb", unsafe=True)
    if not result.changed:
        assert result.notebook_text is None and result.cell_changes is None
        return
    assert result.unwritable is None and result.notebook_text is not None and result.cell_changes
    fixed = json.loads(result.notebook_text)
    changed = {number - 1 for number in result.cell_changes}
    for index, (before, after) in enumerate(zip(document["cells"], fixed["cells"])):
        if index not in changed:
            assert after == before
            continue
        assert {k: v for k, v in after.items() if k != "source"} == {k: v for k, v in before.items() if k != "source"}
        assert type(after["source"]) is type(before["source"])  # a list stays a list, a string a string
        new = "".join(after["source"]) if isinstance(after["source"], list) else after["source"]
        assert new == result.cell_changes[index + 1][1]
        fixed["cells"][index]["source"] = before["source"]
    # With the old sources put back, the text is the original byte for byte.
    assert serialise(fixed, layout) == raw
    assert JsonLayout.of(result.notebook_text).dump(fixed) == serialise(fixed, layout)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells=st.lists(st.one_of(st.fixed_dictionaries({"text": st.sampled_from(CLEAN), "as_list": st.booleans(),
                                                       "final_newline": st.booleans()}), markdown_cell),
                      min_size=1, max_size=5),
       layout=layouts)
def test_a_notebook_with_nothing_to_fix_is_never_touched(cells: list[dict[str, Any]], layout: JsonLayout) -> None:
    data = serialise(build(cells), layout).encode("utf-8")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "clean.ipynb"
        path.write_bytes(data)
        before = path.stat().st_mtime_ns
        result = fix_file(path, unsafe=True)
        assert not result.changed
        assert path.read_bytes() == data and path.stat().st_mtime_ns == before


# Cell text that must not fool the round trip: lines that look like the module's separators or
# the masks of old, `%` and `!` where IPython does and does not take them as escapes, strings.
HOSTILE_LINES = [
    "# flake8-detach:cell 3", "#flake8-detach:ipython-abc", "#flake8-detach:ipython-7",
    "# flake8-detach:cell~ 1", "# flake8-detach:cell 1", "%matplotlib inline", "!ls \\\n  -la",
    "files = !ls", "total = (1\n% 2)", 's = """\n%not a magic\n# flake8-detach:cell 2\n"""', "pass", "",
    "y = 2", "model?", "x = None",
]
# Control characters and line separators aside: a generated line stays one line.
one_line = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=12)
# A line of escapes, operators and words (no bracket, quote or backslash: it cannot swallow the
# next lines), which may or may not be valid Python or IPython: a cell that does not parse is
# left out and must come back unchanged.
loose_line = st.text(st.sampled_from("%!?,;/=.#:~- \taxw1"), max_size=10)
hostile_chunk = st.one_of(
    st.sampled_from(HOSTILE_LINES),
    one_line.map(lambda text: f"# {text}"),
    one_line.map(lambda text: "%" + text.rstrip("\\")),
    loose_line,
    st.just("w = torch.ones(2, requires_grad=True)\nw.numpy()"),
)
hostile_cell = st.fixed_dictionaries({
    "text": st.tuples(st.lists(hostile_chunk, min_size=1, max_size=6), st.sampled_from(["\n", "\r\n"])).map(
        lambda chunks: "\n".join(chunks[0]).replace("\n", chunks[1])),  # LF or CRLF cells
    "as_list": st.booleans(),
    "final_newline": st.booleans(),
})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells=st.lists(st.one_of(hostile_cell, markdown_cell), min_size=1, max_size=5), layout=layouts)
def test_hostile_cell_text_changes_only_the_hazard_lines(cells: list[dict[str, Any]], layout: JsonLayout) -> None:
    document = build(cells)
    raw = serialise(document, layout)
    result = fix_notebook_data(raw.encode("utf-8"), "t.ipynb", unsafe=True)
    assert result.error is None
    fixed = json.loads(result.notebook_text) if result.notebook_text is not None else document
    left_out = {error.cell for error in result.cell_errors}
    for number, (before, after) in enumerate(zip(document["cells"], fixed["cells"]), start=1):
        old = "".join(before["source"]) if isinstance(before["source"], list) else before["source"]
        new = "".join(after["source"]) if isinstance(after["source"], list) else after["source"]
        old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
        assert len(new_lines) == len(old_lines), (old, new)  # not a line lost or added
        for was, now in zip(old_lines, new_lines):
            assert now == was or (was.rstrip("\r\n"), now.rstrip("\r\n")) == ("w.numpy()", "w.detach().numpy()")
            assert was[len(was.rstrip("\r\n")):] == now[len(now.rstrip("\r\n")):]  # the same line ending
        cell_magic = old.splitlines()[0].strip().startswith("%%") if old else False  # `%%foo`: not Python
        if before["cell_type"] == "code" and not cell_magic and number not in left_out:
            assert "w.numpy()" not in new.splitlines()  # every hazard of an analysed cell was fixed
        elif number in left_out or cell_magic:
            assert new == old
