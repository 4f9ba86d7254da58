"""Jupyter notebooks on the `check` and `fix` fronts: cells as one module, positions per cell."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, diagnostic_lines

from flake8_detach import check_source
from flake8_detach.cli import main
from flake8_detach.sources.files import MAX_NOTEBOOK_BYTES
from flake8_detach.sources.notebooks import NotebookSkipped, mask_ipython, parse_notebook

NOTEBOOKS = FIXTURES / "notebooks"
TRAIN = NOTEBOOKS / "train_across_cells.ipynb"
SARIF_SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"  # vendored: see its LICENSE.md


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def notebook(*sources: str, language: str = "python") -> str:
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
              "source": source.splitlines(keepends=True)} for i, source in enumerate(sources)]
    document = {"cells": cells, "metadata": {"kernelspec": {"language": language, "name": "k", "display_name": "k"}},
                "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=1) + "\n"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(TRAIN, tmp_path / "train.ipynb")
    return tmp_path


def test_check_names_the_cell_and_follows_state_across_cells(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["check", "train.ipynb"], capsys)
    assert code == 1
    assert [line.split(" .")[0].split(" plt")[0] for line in diagnostic_lines(out)] == [
        # Cells are numbered as ruff numbers them: among all cells (cell 1 is markdown).
        "train.ipynb:cell 4:3:12: DET101",  # the model was made in cell 3; %%time keeps its body
        "train.ipynb:cell 7:1:10: DET106",  # plt.plot of a model output from cell 4
        "train.ipynb:cell 7:2:24: DET103",
    ]
    # The cell that does not parse is reported in one line and left out; the %%bash cell is not Python.
    assert err == "train.ipynb:cell 5: error: cell left out: syntax error at line 1, column 12: invalid syntax\n"


def test_the_same_code_in_cells_and_in_a_py_file_gives_the_same_diagnostics() -> None:
    cells = [
        "import torch\nimport numpy as np",
        "model = torch.nn.Linear(2, 2)\nx = torch.ones(2)",
        "with torch.no_grad():\n    fine = model(x).numpy()\nout = model(x)",
        "np.asarray(out)\nout.cpu().numpy()\nmodel.weight.data.add_(1)",
    ]
    as_py = check_source("\n".join(cells) + "\n")
    module = parse_notebook(notebook(*cells))
    in_cells = check_source(module.source)
    assert [d.code for d in in_cells] == [d.code for d in as_py] == ["DET106", "DET101", "DET103"]
    starts = [1]
    for cell in cells[:-1]:
        starts.append(starts[-1] + cell.count("\n") + 1)
    for py, cell_diagnostic in zip(as_py, in_cells):
        cell, line = module.line_map[cell_diagnostic.line]
        assert starts[cell - 1] + line - 1 == py.line and cell_diagnostic.column == py.column


@pytest.mark.parametrize(
    "line",
    ["%matplotlib inline", "!pip install torch", "files = !ls -la", "x, y = %timeit -o f()", "model?",
     "model.weight??", "?model", "%load_ext autoreload", "%time f()"],
)
def test_ipython_syntax_is_masked_without_moving_anything(line: str) -> None:
    source = f"import torch\nif True:\n    {line.strip()}\n    w = torch.ones(2, requires_grad=True)\nw.numpy()\n"
    masked, originals, skip = mask_ipython(source)
    assert skip is None and len(originals) == 1
    assert masked.count("\n") == source.count("\n")
    module = parse_notebook(notebook(source))
    assert module.cell_errors == []
    (diagnostic,) = check_source(module.source)
    assert module.line_map[diagnostic.line] == (1, 5) and diagnostic.column == 2


def test_non_python_kernels_are_skipped_with_a_message(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(NOTEBOOKS / "r_kernel.ipynb", work / "r.ipynb")
    assert run(["check", "r.ipynb"], capsys) == (0, "All checks passed!\n", "r.ipynb: skipped: the kernel language is r, not Python\n")


@pytest.mark.parametrize("language", ["python3", "Python 3", "ipython", "python"])
def test_python_kernels_spelled_with_a_version_are_read(language: str) -> None:
    # Spyder's kernelspec says "python3" (acids-ircam/pytorch_flows' notebooks were skipped)
    source = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
    module = parse_notebook(notebook(source, language=language))
    assert [d.code for d in check_source(module.source)] == ["DET101"]
    with pytest.raises(NotebookSkipped):
        parse_notebook(notebook(source, language="pythonista-r"))


def test_folders_include_notebooks(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "sub").mkdir()
    shutil.move(work / "train.ipynb", work / "sub" / "train.ipynb")
    assert "sub/train.ipynb:cell 4:3:12: DET101" in run(["check", "."], capsys)[1]
    assert "train.ipynb" not in run(["check", ".", "--extend-exclude", "*.ipynb"], capsys)[1]


def test_fix_changes_only_the_fixed_cells_sources(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nbformat = pytest.importorskip("nbformat")
    before = json.loads((work / "train.ipynb").read_text(encoding="utf-8"))
    code, out, err = run(["fix", "--unsafe-fixes", "train.ipynb"], capsys)
    # 2: the cell that does not parse was not looked at, so the run is not clean.
    assert (code, out) == (2, "3 fixes applied in 1 file; 1 error\n")
    assert err == "train.ipynb:cell 5: error: cell left out: syntax error at line 1, column 12: invalid syntax\n"
    text = (work / "train.ipynb").read_text(encoding="utf-8")
    after = json.loads(text)
    nbformat.validate(nbformat.reads(text, as_version=4))
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [3, 6]
    for index in changed:  # everything but the source is the same, key order included
        assert list(before["cells"][index]) == list(after["cells"][index])
        assert {k: v for k, v in before["cells"][index].items() if k != "source"} == {
            k: v for k, v in after["cells"][index].items() if k != "source"}
    assert after["cells"][3]["source"] == ["%%time\n", "out = model(x)\n",
                                           "pred = out.detach().numpy()  # DET101: the model lives in cell 3"]
    assert "".join(after["cells"][6]["source"]) == (
        "plt.plot(out.detach().cpu().numpy())\nweights = model.weight.detach().numpy()")
    # Byte for byte elsewhere: the JSON with the two sources put back is the original file.
    for index in changed:
        after["cells"][index]["source"] = before["cells"][index]["source"]
    assert json.dumps(after, indent=1, ensure_ascii=False) + "\n" == TRAIN.read_text(encoding="utf-8")
    # Idempotent, and check is clean apart from the cell that does not parse.
    assert run(["fix", "--unsafe-fixes", "train.ipynb"], capsys)[1].startswith("0 fixes")
    assert run(["check", "train.ipynb"], capsys)[1] == "Found 1 error.\n"  # the cell left out


def test_fix_diff_is_per_cell(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["fix", "--diff", "train.ipynb"], capsys)
    assert code == 2  # the cell left out
    assert "--- a/train.ipynb:cell 4\n+++ b/train.ipynb:cell 4\n" in out
    assert "+pred = out.detach().numpy()  # DET101: the model lives in cell 3\n" in out
    assert (work / "train.ipynb").read_bytes() == TRAIN.read_bytes()


def test_a_fix_that_adds_lines_stays_in_its_cell(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = "import torch\nlayer = torch.nn.Linear(2, 2)"
    (work / "data.ipynb").write_text(notebook(first, "p = next(layer.parameters())\np.data.add_(1)", "print(p)"))
    assert run(["fix", "--unsafe-fixes", "data.ipynb"], capsys)[0] == 0  # fixed, nothing left
    cells = ["".join(cell["source"]) for cell in json.loads((work / "data.ipynb").read_text())["cells"]]
    assert cells == [first, "p = next(layer.parameters())\nwith torch.no_grad():\n    p.add_(1)", "print(p)"]
    assert run(["check", "data.ipynb"], capsys)[:2] == (0, "All checks passed!\n")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"cells": [{"cell_type": "code", "source": ["x"', "not valid JSON"),
        ('{"nbformat": 3, "worksheets": []}\n', "nbformat 3 is not supported"),
        ('{"nbformat": 4, "metadata": {}}\n', "no `cells` list"),
        ("[1, 2]\n", "not an object"),
    ],
    ids=["truncated", "nbformat3", "no-cells", "not-an-object"],
)
def test_bad_notebooks_are_one_line_and_never_written(
    work: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    bad = work / "bad.ipynb"
    bad.write_text(content)
    code, out, err = run(["check", "bad.ipynb"], capsys)
    assert (code, out) == (1, "Found 1 error.\n") and err.count("\n") == 1 and message in err, err
    code, _, err = run(["fix", "bad.ipynb"], capsys)
    assert code == 2 and message in err and "Traceback" not in err
    assert bad.read_text() == content


def test_a_huge_notebook_is_refused_in_one_line(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    huge = work / "huge.ipynb"
    blob = "A" * (MAX_NOTEBOOK_BYTES + 1)
    huge.write_text(notebook("import torch").replace('"outputs": []', f'"outputs": [{{"text": "{blob}"}}]', 1))
    code, _, err = run(["check", "huge.ipynb"], capsys)
    assert code == 1 and "huge.ipynb: error: the notebook is 25 MB" in err


HAZARD_CELL = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()"


@pytest.mark.parametrize(
    "layout",
    [{"indent": 1}, {"indent": 2}, {"indent": 4}, {"indent": 1, "ensure_ascii": True},
     {"indent": 1, "final_newline": False}, {"indent": 1, "crlf": True}],
    ids=["jupyter", "indent2", "indent4", "ascii", "no-final-newline", "crlf"],
)
def test_fix_writes_back_the_layout_it_found(work: Path, capsys: pytest.CaptureFixture[str], layout: dict) -> None:
    document = json.loads(notebook(HAZARD_CELL))
    document["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": ["Café ✓"]})
    text = json.dumps(document, indent=layout["indent"], ensure_ascii=layout.get("ensure_ascii", False))
    text += "\n" if layout.get("final_newline", True) else ""
    if layout.get("crlf"):
        text = text.replace("\n", "\r\n")
    path = work / "layout.ipynb"
    path.write_bytes(text.encode("utf-8"))
    code, out, err = run(["fix", "layout.ipynb"], capsys)
    assert (code, out, err) == (0, "1 fix applied in 1 file\n", "")  # 0: nothing left, as ruff
    expected = text.replace("w.numpy()", "w.detach().numpy()")
    assert path.read_bytes() == expected.encode("utf-8")


def test_a_layout_that_does_not_round_trip_is_refused_but_diffed(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    odd = work / "odd.ipynb"
    text = notebook(HAZARD_CELL).replace('"nbformat": 4,', '"nbformat":   4,')
    odd.write_text(text, encoding="utf-8")
    code, _, err = run(["fix", "odd.ipynb"], capsys)
    line = text.splitlines().index(' "nbformat":   4,') + 1
    assert code == 2 and f"odd.ipynb: error: not written: re-serialising its JSON would change line {line} (' \"nbformat\":   4,'" in err, err
    assert "indent" not in err.split("would change")[0]  # says what differs, not a guess
    assert odd.read_text(encoding="utf-8") == text
    # The change can still be seen, and checked for.
    code, out, err = run(["fix", "--diff", "odd.ipynb"], capsys)
    assert code == 1 and "+w.detach().numpy()" in out and "note: fix would not write it: re-serialising" in err
    assert run(["fix", "--check", "odd.ipynb"], capsys)[0] == 1
    assert "odd.ipynb:cell 1:3:3: DET101" in run(["check", "odd.ipynb"], capsys)[1]  # check reads it anyway
    assert odd.read_text(encoding="utf-8") == text


def stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_check_reads_a_notebook_from_stdin(work: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from_file = run(["check", "--no-cache", "train.ipynb"], capsys)
    stdin(monkeypatch, TRAIN.read_bytes())
    assert run(["check", "-", "--stdin-filename", "train.ipynb"], capsys) == from_file
    assert from_file[0] == 1 and len(diagnostic_lines(from_file[1])) == 3


def test_fix_stdin_writes_the_notebook_json(work: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    clean = notebook("import torch\nw = torch.ones(2)\nw.numpy()").rstrip("\n")  # no final newline either
    stdin(monkeypatch, clean.encode())
    code, out, err = run(["fix", "-", "--stdin-filename", "nb.ipynb"], capsys)
    assert (code, out, err) == (0, clean, "0 fixes applied in 0 files\n")  # byte for byte
    stdin(monkeypatch, notebook(HAZARD_CELL).encode())
    code, out, err = run(["fix", "-", "--stdin-filename", "nb.ipynb"], capsys)
    assert code == 0 and out == notebook(HAZARD_CELL).replace("w.numpy()", "w.detach().numpy()")
    assert err == "1 fix applied in 1 file\n"
    stdin(monkeypatch, notebook(HAZARD_CELL).encode())
    code, out, err = run(["fix", "-", "--stdin-filename", "nb.ipynb", "--diff"], capsys)
    assert code == 1 and out == (
        "--- a/nb.ipynb:cell 1\n+++ b/nb.ipynb:cell 1\n@@ -1,3 +1,3 @@\n import torch\n"
        " w = torch.ones(2, requires_grad=True)\n-w.numpy()\n\\ No newline at end of cell\n"
        "+w.detach().numpy()\n\\ No newline at end of cell\n")


def test_fix_stdin_diff_of_a_python_buffer_is_only_the_diff(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    stdin(monkeypatch, (HAZARD_CELL + "\n").encode())
    code, out, err = run(["fix", "-", "--stdin-filename", "x.py", "--diff"], capsys)
    assert code == 1 and out.startswith("--- a/x.py\n+++ b/x.py\n") and "+w.detach().numpy()\n" in out
    assert "import torch\n" not in out.replace(" import torch\n", "")  # context lines only, not the buffer
    assert err == "1 fix would be applied in 1 file\n"
    stdin(monkeypatch, (HAZARD_CELL + "\n").encode())
    assert run(["fix", "-", "--stdin-filename", "x.py", "--check"], capsys)[:2] == (1, "")


def test_messages_name_other_places_by_cell(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    helper = "import torch\ndef show(t):\n    return t.numpy()"
    call = "w = torch.ones(2, requires_grad=True)\nshow(w)"
    (work / "calls.ipynb").write_text(notebook(helper, call))
    code, out, _ = run(["check", "calls.ipynb"], capsys)
    [line] = diagnostic_lines(out)
    assert code == 1 and line.startswith("calls.ipynb:cell 1:3:14: DET101") and line.endswith(
        "(the value is passed by the call on cell 2, line 2)"), out
    document = json.loads(run(["check", "calls.ipynb", "--format", "json"], capsys)[1])
    assert document["diagnostics"][0]["message"].endswith("on cell 2, line 2)")
    as_py = check_source(helper + "\n" + call + "\n")
    assert as_py[0].message.endswith("(the value is passed by the call on line 5)")


def test_json_and_sarif_carry_the_cell(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(run(["check", "train.ipynb", "--format", "json"], capsys)[1])
    first = document["diagnostics"][0]
    assert (first["cell"], first["line"], first["column"], first["fix"]) == (4, 3, 12, None)
    sarif = json.loads(run(["check", "train.ipynb", "--format", "sarif"], capsys)[1])
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "DET101")
    assert result["properties"] == {"cell": 4, "line": 3, "column": 12}
    # The region is the line of the .ipynb text holding the source line, where GitHub shows it.
    json_line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert TRAIN.read_text(encoding="utf-8").splitlines()[json_line - 1].strip().startswith('"pred = out.numpy()')
    assert result["message"]["text"].startswith("cell 4, line 3, column 12: DET101")
    if SARIF_SCHEMA.is_file():
        jsonschema = pytest.importorskip("jsonschema")
        jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    github = run(["check", "train.ipynb", "--format", "github"], capsys)[1].splitlines()
    assert github[1].startswith(f"::error file=train.ipynb,line={json_line},title=DET101::cell 4, line 3, column 12: .numpy()")
    # The cell left out is an error in every format, positioned in its cell.
    bad_line = next(n for n, text in enumerate(TRAIN.read_text(encoding="utf-8").splitlines(), 1) if "def broken(:" in text)
    assert github[0] == (f"::error file=train.ipynb,line={bad_line},title=flake8-detach::"
                         "cell 5: cell left out: syntax error at line 1, column 12: invalid syntax")
    assert document["errors"] == [{"path": "train.ipynb", "cell": 5, "line": 1, "column": 12,
                                   "message": "syntax error at line 1, column 12: invalid syntax"}]
    assert document["summary"]["errors"] == 1
    (syntax,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "syntax-error"]
    assert syntax["locations"][0]["physicalLocation"]["region"] == {"startLine": bad_line}
    assert syntax["properties"] == {"cell": 5, "line": 1, "column": 12}
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_flake8_through_nbqa_reports_what_check_reports(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """flake8 does not read notebooks; `nbqa flake8` runs the plugin on them and reports the same
    places, though nbqa numbers code cells only where we (as ruff) count every cell."""
    import subprocess
    import sys

    if shutil.which("nbqa", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("nbqa is not installed (test extra)")
    nbqa = subprocess.run([str(Path(sys.executable).parent / "nbqa"), "flake8", "train.ipynb", "--select=DET"],
                          capture_output=True, text=True, cwd=work, check=False, timeout=300)
    cells = json.loads((work / "train.ipynb").read_text(encoding="utf-8"))["cells"]
    code_cells = [index + 1 for index, cell in enumerate(cells) if cell["cell_type"] == "code"]
    through_nbqa = sorted(re.sub(r":cell_(\d+):", lambda m: f":cell {code_cells[int(m[1]) - 1]}:", line)
                          for line in nbqa.stdout.splitlines())
    checked = sorted(diagnostic_lines(run(["check", "train.ipynb"], capsys)[1]))
    assert through_nbqa == checked and len(checked) == 3, nbqa.stdout + nbqa.stderr


def test_a_source_stored_as_one_string_maps_to_its_json_line(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """nbformat allows a source as one string: every line of that cell maps to the string's line."""
    document = json.loads(notebook("x = 1"))
    document["cells"].append(dict(document["cells"][0], id="one-string", source=HAZARD_CELL))
    text = json.dumps(document, indent=1) + "\n"
    (work / "string.ipynb").write_text(text)
    sarif = json.loads(run(["check", "string.ipynb", "--format", "sarif"], capsys)[1])
    (result,) = sarif["runs"][0]["results"]
    assert result["properties"] == {"cell": 2, "line": 3, "column": 3}
    json_line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert text.splitlines()[json_line - 1].startswith('   "source": "import torch\\nw = torch.ones')


@pytest.mark.parametrize("line", ["# flake8-detach:cell 3", "#flake8-detach:ipython-abc", "#flake8-detach:ipython-7"])
def test_cell_text_like_the_modules_markers_is_kept_by_fix(work: Path, capsys: pytest.CaptureFixture[str],
                                                          line: str) -> None:
    """Issue 22, item 6: the cells are cut back by a side table, not by markers a user can write."""
    first = f"{HAZARD_CELL}\n{line}\nx = 1\ny = 2"
    (work / "markers.ipynb").write_text(notebook(first, "%ls\nz = 3"))
    code, out, err = run(["fix", "markers.ipynb"], capsys)
    assert (code, out, err) == (0, "1 fix applied in 1 file\n", "")
    cells = ["".join(cell["source"]) for cell in json.loads((work / "markers.ipynb").read_text())["cells"]]
    assert cells == [first.replace("w.numpy()", "w.detach().numpy()"), "%ls\nz = 3"]


@pytest.mark.parametrize(
    "lines",
    ["total = (1\n% 2)", "total = [4\n     %2]", "total = 1 \\\n% 2", 's = """\n%not a magic\n!nor this\n"""',
     "!ls \\\n  -la", "files = !ls \\\n  -la", "%env A=\\\nB"],
    ids=["percent-in-brackets", "percent-in-list", "after-backslash", "in-a-string", "shell-continued",
         "assigned-shell-continued", "magic-continued"],
)
def test_ipythons_rules_decide_what_is_a_magic(lines: str) -> None:
    """Issue 22, item 12: an escape counts only at the start of a logical line, as in IPython's
    input transformer, and an escape line ending in a backslash takes the next line with it."""
    source = f"import torch\n{lines}\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
    module = parse_notebook(notebook(source))
    assert module.cell_errors == []
    (diagnostic,) = check_source(module.source)
    assert module.line_map[diagnostic.line] == (1, source.count("\n")) and diagnostic.code == "DET101"
    masked = set(mask_ipython(source)[1])
    escape = lines.lstrip().startswith(("!", "%")) or "= !" in lines
    assert masked == ({1, 2} if escape else set())


def test_a_continued_shell_escape_round_trips_through_fix(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cell = "!pip install \\\n    torch\ntotal = (1\n% 2)\n" + HAZARD_CELL
    (work / "shell.ipynb").write_text(notebook(cell))
    assert run(["fix", "shell.ipynb"], capsys) == (0, "1 fix applied in 1 file\n", "")
    cells = ["".join(c["source"]) for c in json.loads((work / "shell.ipynb").read_text())["cells"]]
    assert cells == [cell.replace("w.numpy()", "w.detach().numpy()")]


def test_a_fix_that_moves_an_ipython_line_is_refused_not_guessed() -> None:
    from flake8_detach.sources.notebooks import FixNotMappable, split_cells

    module = parse_notebook(notebook("import torch\nif True:\n    %ls\n    x = 1"))
    assert split_cells(module, module.source) == {0: "import torch\nif True:\n    %ls\n    x = 1"}
    moved = module.source.replace("    pass\n", "    with torch.no_grad():\n        pass\n")
    with pytest.raises(FixNotMappable, match=r"the IPython line 3 of cell 1 \('%ls'\)"):
        split_cells(module, moved)
    with pytest.raises(FixNotMappable, match="the boundary of cell 1"):
        split_cells(module, module.source.replace("# flake8-detach:cell 1\n", ""))


@pytest.mark.parametrize(
    ("cell", "message"),
    [({"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = 1\n", 3]},
      "item 2 of `source` is a number (3), not a string"),
     ({"cell_type": "code", "metadata": {}, "outputs": [], "source": 7}, "`source` is a number (7), not a string or a list"),
     ({"cell_type": 1, "metadata": {}, "source": []}, "`cell_type` is a number (1), not a string"),
     ({"metadata": {}, "source": []}, "no `cell_type` string"),
     ("code", "a cell is a JSON object, not a string")],
    ids=["int-in-source", "int-source", "int-cell-type", "no-cell-type", "not-an-object"],
)
def test_a_malformed_cell_is_reported_and_the_rest_analysed(work: Path, capsys: pytest.CaptureFixture[str],
                                                            cell: object, message: str) -> None:
    """Issue 22, item 13: a cell nbformat would refuse is one error, never a traceback."""
    document = json.loads(notebook(HAZARD_CELL))
    document["cells"].insert(0, cell)
    text = json.dumps(document, indent=1) + "\n"
    (work / "bad.ipynb").write_text(text)
    code, out, err = run(["check", "bad.ipynb"], capsys)
    assert code == 1 and diagnostic_lines(out)[0].startswith("bad.ipynb:cell 2:3:3: DET101"), out
    assert err == f"bad.ipynb:cell 1: error: cell left out: not a valid cell: {message}" + err[err.index(message) + len(message):]
    assert err.count("\n") == 1 and "Traceback" not in err
    code, out, err = run(["fix", "bad.ipynb"], capsys)
    assert code == 2 and "not a valid cell" in err and "Traceback" not in err
    fixed = json.loads((work / "bad.ipynb").read_text())
    assert fixed["cells"][0] == cell and "".join(fixed["cells"][1]["source"]).endswith("w.detach().numpy()")


def test_a_refused_fix_is_one_error_and_the_notebook_is_untouched(work: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from flake8_detach.fixing import fixer
    from flake8_detach.sources.notebooks import FixNotMappable

    def refuse(*_: object) -> None:
        raise FixNotMappable("the fix changed the IPython line 1 of cell 1 ('%ls') or the lines around it; not fixed")

    monkeypatch.setattr(fixer, "split_cells", refuse)
    text = notebook("%ls\n" + HAZARD_CELL)
    (work / "moved.ipynb").write_text(text)
    code, _, err = run(["fix", "moved.ipynb"], capsys)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert "moved.ipynb" in err and "the IPython line 1 of cell 1 ('%ls') or the lines around it; not fixed" in err
    assert (work / "moved.ipynb").read_text() == text


@pytest.mark.parametrize("ending", ["", "\n"])
def test_a_last_cell_ending_in_a_comment_with_a_backslash_is_fixed(work: Path, capsys: pytest.CaptureFixture[str],
                                                                   ending: str) -> None:
    """Found by the hostile-text property: libcst drops the newline after a final `# ... \\` line."""
    cell = HAZARD_CELL + "\n# see C:\\" + ending
    (work / "end.ipynb").write_text(notebook("x = 1", cell))
    assert run(["fix", "end.ipynb"], capsys) == (0, "1 fix applied in 1 file\n", "")
    cells = ["".join(c["source"]) for c in json.loads((work / "end.ipynb").read_text())["cells"]]
    assert cells == ["x = 1", cell.replace("w.numpy()", "w.detach().numpy()")]
