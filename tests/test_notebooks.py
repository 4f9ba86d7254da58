"""Jupyter notebooks on the `check` and `fix` fronts: cells as one module, positions per cell."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, diagnostic_lines

from flake8_detach import check_source
from flake8_detach.cli import main
from flake8_detach.notebooks import MAX_NOTEBOOK_BYTES, mask_ipython, parse_notebook

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
        "train.ipynb:cell 3:3:12: DET101",  # the model was made in cell 2; %%time keeps its body
        "train.ipynb:cell 6:1:10: DET106",  # plt.plot of a model output from cell 3
        "train.ipynb:cell 6:2:24: DET103",
    ]
    # The cell that does not parse is reported in one line and left out; the %%bash cell is not Python.
    assert err == "train.ipynb: cell 4: left out, syntax error at line 1: invalid syntax\n"


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
    masked, originals, skip = mask_ipython(source, 0)
    assert skip is None and len(originals) == 1
    assert masked.count("\n") == source.count("\n")
    module = parse_notebook(notebook(source))
    assert module.problems == []
    (diagnostic,) = check_source(module.source)
    assert module.line_map[diagnostic.line] == (1, 5) and diagnostic.column == 2


def test_non_python_kernels_are_skipped_with_a_message(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(NOTEBOOKS / "r_kernel.ipynb", work / "r.ipynb")
    assert run(["check", "r.ipynb"], capsys) == (0, "All checks passed!\n", "r.ipynb: skipped: the kernel language is r, not Python\n")


def test_folders_include_notebooks(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "sub").mkdir()
    shutil.move(work / "train.ipynb", work / "sub" / "train.ipynb")
    assert "sub/train.ipynb:cell 3:3:12: DET101" in run(["check", "."], capsys)[1]
    assert "train.ipynb" not in run(["check", ".", "--extend-exclude", "*.ipynb"], capsys)[1]


def test_fix_changes_only_the_fixed_cells_sources(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nbformat = pytest.importorskip("nbformat")
    before = json.loads((work / "train.ipynb").read_text(encoding="utf-8"))
    code, out, _ = run(["fix", "--unsafe-fixes", "train.ipynb"], capsys)
    assert (code, out) == (1, "3 fixes applied in 1 file\n")  # 1: a cell was left out (it does not parse)
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
                                           "pred = out.detach().numpy()  # DET101: the model lives in cell 2"]
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
    assert code == 1
    assert "--- a/train.ipynb:cell 3\n+++ b/train.ipynb:cell 3\n" in out
    assert "+pred = out.detach().numpy()  # DET101: the model lives in cell 2\n" in out
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


def test_a_notebook_not_formatted_as_jupyter_writes_it_is_not_rewritten(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = json.loads(notebook("import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()"))
    odd = work / "odd.ipynb"
    odd.write_text(json.dumps(source, indent=4))
    before = odd.read_bytes()
    code, _, err = run(["fix", "odd.ipynb"], capsys)
    assert code == 2 and "not formatted as Jupyter writes it" in err
    assert odd.read_bytes() == before
    assert "odd.ipynb:cell 1:3:3: DET101" in run(["check", "odd.ipynb"], capsys)[1]  # check reads it anyway


def test_json_and_sarif_carry_the_cell(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(run(["check", "train.ipynb", "--format", "json"], capsys)[1])
    first = document["diagnostics"][0]
    assert (first["cell"], first["line"], first["column"], first["fix"]) == (3, 3, 12, None)
    sarif = json.loads(run(["check", "train.ipynb", "--format", "sarif"], capsys)[1])
    result = sarif["runs"][0]["results"][0]
    assert result["properties"] == {"cell": 3}
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    assert result["message"]["text"].startswith("cell 3: DET101")
    if SARIF_SCHEMA.is_file():
        jsonschema = pytest.importorskip("jsonschema")
        jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    github = run(["check", "train.ipynb", "--format", "github"], capsys)[1].splitlines()[0]
    assert github.startswith("::error file=train.ipynb,title=DET101::cell 3, line 3, column 12: .numpy()")


def test_flake8_through_nbqa_reports_what_check_reports(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """flake8 does not read notebooks; `nbqa flake8` runs the plugin on them, cells numbered alike."""
    import subprocess
    import sys

    if shutil.which("nbqa", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("nbqa is not installed (test extra)")
    nbqa = subprocess.run([str(Path(sys.executable).parent / "nbqa"), "flake8", "train.ipynb", "--select=DET"],
                          capture_output=True, text=True, cwd=work, check=False, timeout=300)
    through_nbqa = sorted(line.replace(":cell_", ":cell ") for line in nbqa.stdout.splitlines())
    checked = sorted(diagnostic_lines(run(["check", "train.ipynb"], capsys)[1]))
    assert through_nbqa == checked and len(checked) == 3, nbqa.stdout + nbqa.stderr
