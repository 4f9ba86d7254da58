"""The runtime harness: `flake8-detach verify` executes the fixtures and checks each claim.

The repository's fixtures run on the CPU leg and the meta stand-in here; the CUDA leg runs for
real where torch sees a GPU and is skipped, with the reason, where it does not.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the verify extra (torch) is not installed")
pytest.importorskip("numpy", reason="the verify extra (numpy) is not installed")

from conftest import FIXTURES

from flake8_detach.cli import main
from flake8_detach.verify.checks import FAILED, LINT, PASSED, SKIPPED, Row, skip_statements
from flake8_detach.verify.devices import META_LABEL, CudaStatus, plan_devices
from flake8_detach.verify.fixtures import load_fixture, parse_claims, parse_requires
from flake8_detach.verify.harness import VerifyReport, verify
from flake8_detach.verify.values import differences, gradients

HAS_CUDA = torch.cuda.is_available()
NO_GPU_REASON = "no CUDA device: torch.cuda.is_available() is False"


@pytest.fixture(scope="module")
def repo_report() -> VerifyReport:
    """One run over every fixture in the repository, on cpu and the meta stand-in."""
    return verify([FIXTURES], ["cpu", "meta"])


def rows_for(report: VerifyReport, folder: str, prefix: str, device: str) -> list:
    return [row for row in report.rows if row.fixture.startswith(f"{folder}/{prefix}") and row.device == device]


def write_fixture(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


# --- the repository's fixtures -------------------------------------------------------------------


def test_every_claim_of_the_repository_fixtures_holds(repo_report: VerifyReport) -> None:
    assert [row.message for row in repo_report.failures] == []
    assert repo_report.count(PASSED) > 0
    assert repo_report.exit_code == 0


def test_every_fixture_is_linted_to_its_annotations(repo_report: VerifyReport) -> None:
    lint_rows = [row for row in repo_report.rows if row.device == LINT]
    assert len(lint_rows) == repo_report.fixtures
    assert all(row.status == PASSED for row in lint_rows)


def test_det101_flagged_lines_raise_requires_grad_and_fixes_match_the_reference(repo_report: VerifyReport) -> None:
    rows = rows_for(repo_report, "det101", "flag_", "cpu")
    assert len(rows) >= 4
    for row in rows:
        assert row.status == PASSED, row.message
        assert row.observed.startswith("RuntimeError: Can't call numpy() on Tensor that requires grad at line")
        assert row.line is not None and f"at line {row.line}" in row.claimed
        assert "same values as the reference" in row.fixed


def test_det104_flagged_lines_raise_the_device_type_error_on_meta_and_run_on_cpu(repo_report: VerifyReport) -> None:
    meta_rows = rows_for(repo_report, "det104", "flag_", META_LABEL)
    assert len(meta_rows) >= 4
    for row in meta_rows:
        assert row.status == PASSED, row.message
        assert row.observed.startswith("TypeError: can't convert meta device type tensor to numpy")
        assert "meta tensors hold no data" in row.fixed  # no values compared on meta
    for row in rows_for(repo_report, "det104", "flag_", "cpu"):
        assert row.status == PASSED, row.message
        assert "ran on cpu" in row.observed or row.observed.startswith("RuntimeError")  # DET101 on the same line


def test_det102_reports_no_effect_on_cpu_and_is_skipped_on_meta(repo_report: VerifyReport) -> None:
    for row in rows_for(repo_report, "det102", "flag_", "cpu"):
        assert row.status == PASSED, row.message
        assert "no effect on cpu" in row.observed
    for row in rows_for(repo_report, "det102", "flag_", META_LABEL):
        assert row.status == SKIPPED
        assert "meta cannot show DET102" in row.observed


def test_det103_data_write_gives_a_wrong_gradient_where_the_fix_raises(repo_report: VerifyReport) -> None:
    [row] = [row for row in repo_report.rows if row.fixture == "det103/flag_inplace_on_saved_output.py" and row.device == "cpu"]
    assert row.status == PASSED, row.message
    assert "inputs.grad = " in row.observed and "the graph autograd recorded gives" in row.observed
    assert row.fixed.startswith("raises autograd's in-place error")


def test_det105_alias_write_reaches_the_other_side_on_cpu(repo_report: VerifyReport) -> None:
    rows = rows_for(repo_report, "det105", "flag_", "cpu")
    assert len(rows) >= 3
    for row in rows:
        assert row.status == PASSED, row.message
        assert "the write reached the other side" in row.observed and "with the copying fix" in row.observed


def test_det106_library_call_raises_at_the_flagged_line(repo_report: VerifyReport) -> None:
    rows = [row for row in rows_for(repo_report, "det106", "flag_", "cpu") if row.status != SKIPPED]
    assert len(rows) >= 3
    raising = [row for row in rows if row.observed.startswith("RuntimeError: Can't call numpy()")]
    assert raising and all(row.status == PASSED and "(inside the library call)" in row.claimed for row in raising)


def test_must_not_flag_fixtures_run_cleanly_or_say_why_not(repo_report: VerifyReport) -> None:
    for row in repo_report.rows:
        if "/ok_" in f"/{row.fixture.split('/')[-1]}" and row.device == "cpu":
            assert row.status in (PASSED, SKIPPED), row.message
            if row.status == SKIPPED:
                assert row.observed.startswith("requires ")


def test_meta_never_passes_a_run_that_stopped_for_lack_of_data(repo_report: VerifyReport) -> None:
    stopped = [row for row in repo_report.rows if row.device == META_LABEL and "meta holds no data" in row.observed]
    assert stopped, "expected some must-not-flag fixtures to stop at a .cpu() of a meta tensor"
    assert all(row.status == SKIPPED for row in stopped)


# --- devices --------------------------------------------------------------------------------------


def test_without_a_gpu_the_cuda_leg_is_skipped_and_meta_stands_in() -> None:
    legs = plan_devices(None, CudaStatus(False, NO_GPU_REASON))
    assert [leg.name for leg in legs] == ["cpu", "cuda", "meta"]
    assert legs[1].skip_reason == NO_GPU_REASON
    assert legs[2].label == "meta (stand-in for cuda)" and not legs[2].has_data
    with_gpu = plan_devices(None, CudaStatus(True, "NVIDIA H100"))
    assert [(leg.name, leg.skip_reason) for leg in with_gpu] == [("cpu", None), ("cuda", None)]


@pytest.mark.skipif(HAS_CUDA, reason="a GPU is present: the CUDA leg runs for real (test_cuda_leg_on_a_real_gpu)")
def test_cuda_leg_is_reported_skipped_with_the_reason_where_there_is_no_gpu() -> None:
    report = verify([FIXTURES / "det104"], ["cuda"])
    cuda_rows = [row for row in report.rows if row.device == "cuda"]
    assert cuda_rows and all(row.status == SKIPPED for row in cuda_rows)
    assert all(NO_GPU_REASON in row.observed or row.observed.startswith("requires ") for row in cuda_rows)
    assert report.exit_code == 0


@pytest.mark.skipif(not HAS_CUDA, reason=NO_GPU_REASON)
def test_cuda_leg_on_a_real_gpu() -> None:
    report = verify([FIXTURES], ["cuda"])
    assert [row.message for row in report.failures] == []
    device_rows = [row for row in report.rows if row.device == "cuda" and row.status == PASSED]
    det104 = [row for row in device_rows if row.fixture.startswith("det104/flag_")]
    assert det104 and all(row.observed.startswith("TypeError: can't convert cuda") for row in det104)
    det102 = [row for row in device_rows if row.fixture.startswith("det102/flag_")]
    assert det102 and all("recorded (ToCopyBackward0)" in row.observed for row in det102)
    assert all("no copy recorded" in row.fixed for row in det102)


# --- claims that do not hold ----------------------------------------------------------------------


def test_a_claim_that_does_not_hold_fails_naming_fixture_line_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_fixture(
        tmp_path,
        "flag_wrong.py",
        """
        import torch

        readings = torch.ones(2)
        array = readings.numpy()  # expect: DET101
        """,
    )
    exit_code = main(["verify", str(path), "--device", "cpu"])
    output = capsys.readouterr().out
    assert exit_code == 1
    assert f"{path}:4 [cpu] claimed RuntimeError (requires grad) at line 4; observed ran to the end without an error" in output
    assert f"{path}:4 [lint] claimed DET101 at line 4" in output
    assert output.rstrip().splitlines()[-1] == "0 passed, 2 failed, 0 skipped"


BROKEN_FIXTURES = {
    "ok_but_crashes.py": """
        import torch

        values = torch.ones(2)
        values.requires_grad_()
        print(values.sum().item(), values.tolist())
        raise ValueError("not a tensor hazard, still a broken fixture")
        """,
    "flag_elsewhere.py": """
        import torch

        weights = torch.ones(2, requires_grad=True)
        first = weights.numpy(force=True)[5]
        array = weights.numpy()  # expect: DET101
        """,
    "flag_never_called.py": """
        import torch


        def to_host(tensor):
            return tensor.cpu().detach()  # expect: DET102
        """,
    "ok_hangs.py": "import torch\n\nwhile True:\n    pass\n",
    "ok_needs.py": "# requires: surely_not_installed_module\nimport surely_not_installed_module\n",
}


@pytest.fixture(scope="module")
def broken_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """Fixtures whose claims do not hold, verified in one run (one runner start)."""
    folder = tmp_path_factory.mktemp("broken")
    for name, body in BROKEN_FIXTURES.items():
        write_fixture(folder, name, body)
    report = verify([folder], ["cpu"], timeout=6)
    return folder, {row.fixture.split("/")[-1]: row for row in report.rows if row.device == "cpu"}


def test_a_must_not_flag_fixture_that_fails_at_run_time_fails(broken_report: tuple[Path, dict]) -> None:
    folder, rows = broken_report
    row = rows["ok_but_crashes.py"]
    assert row.status == FAILED and row.line == 6
    path = folder / "ok_but_crashes.py"
    assert row.message == f"{path}:6 [cpu] claimed runs cleanly; observed ValueError: not a tensor hazard, still a broken fixture at line 6"


def test_an_exception_on_an_unflagged_line_of_a_flag_fixture_fails(broken_report: tuple[Path, dict]) -> None:
    row = broken_report[1]["flag_elsewhere.py"]
    assert row.status == FAILED
    assert "observed IndexError" in (row.message or "") and "at line 4" in (row.message or "")


def test_a_claim_on_a_line_that_never_ran_fails(broken_report: tuple[Path, dict]) -> None:
    row = broken_report[1]["flag_never_called.py"]
    assert (row.status, row.line) == (FAILED, 5)
    assert row.observed == "line 5 never ran, so its claim was not exercised"


def test_a_run_that_hangs_is_killed_and_reported(broken_report: tuple[Path, dict]) -> None:
    row = broken_report[1]["ok_hangs.py"]
    assert row.status == FAILED and row.observed.startswith("timed out after")


def test_a_missing_requirement_is_a_skip_with_its_reason(broken_report: tuple[Path, dict]) -> None:
    row = broken_report[1]["ok_needs.py"]
    assert (row.status, row.observed) == (SKIPPED, "requires surely_not_installed_module (not installed)")


# --- output ---------------------------------------------------------------------------------------


def test_json_report_for_ci(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exit_code = main(["verify", str(FIXTURES / "det101" / "flag_requires_grad_leaf.py"), "--device", "cpu", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert exit_code == 0
    assert data["summary"] == {"passed": 2, "failed": 0, "skipped": 0, "fixtures": 1}
    cpu = next(row for row in data["rows"] if row["device"] == "cpu")
    assert cpu["status"] == "passed" and cpu["line"] == 4 and cpu["message"] is None
    assert data["environment"]["torch"] == torch.__version__


def test_without_torch_verify_says_how_to_install_it() -> None:
    code = "import sys; sys.modules['torch'] = None; from flake8_detach.cli import main; sys.exit(main(['verify']))"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert completed.returncode == 2
    assert "pip install 'flake8-detach[verify]'" in completed.stderr


# --- the pieces -----------------------------------------------------------------------------------


def test_fixture_format_is_read_from_comments() -> None:
    assert parse_claims("a = 1\nb.numpy()  # expect: DET101, DET104\n") == {2: ("DET101", "DET104")}
    assert parse_requires("# requires: tensorflow\n# requires: python>=3.12\nimport torch\n# requires: late\n") == (
        "tensorflow",
        "python>=3.12",
    )
    fixture = load_fixture(FIXTURES / "det104" / "flag_to_device.py")
    assert fixture.reads_device and fixture.claims == {7: ("DET104",)}
    assert not load_fixture(FIXTURES / "det101" / "flag_requires_grad_leaf.py").reads_device


def test_skip_statements_replaces_the_flagged_statement_with_pass() -> None:
    source = "x = 1\nfor i in range(2):\n    x.data.add_(1)  # expect: DET103\n"
    assert skip_statements(source, [3]) == "x = 1\nfor i in range(2):\n    pass\n"
    assert skip_statements("y = (\n    1 +\n    2)\n", [2]) is None  # not a whole statement


def test_value_comparison_ignores_grad_fn_but_not_values() -> None:
    left = {"kind": "tensor", "shape": [2], "data": [1.0, 2.0], "grad_fn": "AddBackward0", "grad": None}
    right = dict(left, grad_fn=None)
    assert differences(left, right, "x") == []
    assert differences(left, dict(left, data=[1.0, 2.5]), "x") == ["x: [1, 2] vs [1, 2.5]"]
    module = {"kind": "module", "tensors": {"weight": dict(left, grad={"kind": "tensor", "shape": [2], "data": [0.5, 0.5]})}}
    assert list(gradients({"model": module})) == ["model.weight.grad"]


def test_readme_proof_table_lists_every_fixture() -> None:
    """docs/proof.md's table is generated; a fixture missing from it means it was not regenerated."""
    readme = (FIXTURES.parent / "docs" / "proof.md").read_text(encoding="utf-8")
    start = readme.index("<!-- proof:start")
    table = readme[start : readme.index("<!-- proof:end -->", start)]
    listed = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    fixtures = {f"{path.parent.name}/{path.name}" for path in FIXTURES.rglob("*.py") if not path.name.endswith(".fixed.py")}
    assert fixtures - listed == set(), "run: python scripts/update_proof.py"
    assert "0 failed" in table


def test_verify_dot_names_fixtures_by_their_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    fixture = FIXTURES / "det101" / "flag_requires_grad_leaf.py"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / fixture.name).write_text(fixture.read_text())
    (tmp_path / fixture.name).write_text(fixture.read_text())
    monkeypatch.chdir(tmp_path)
    assert main(["verify", ".", "--device", "cpu", "--no-progress"]) == 0
    names = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.endswith(" pass") or " pass " in line}
    assert names == {fixture.name, f"sub/{fixture.name}"}  # never `/flag_...py`


def test_the_text_table_fits_its_width_and_wraps_the_claim_whole() -> None:
    from flake8_detach.verify.report import render_text

    claim = "RuntimeError (requires grad) at line 5, and a much longer explanation that goes on " * 2
    rows = [Row("det101/flag_x.py", "/x/det101/flag_x.py", "cpu", PASSED, claim.strip(), "RuntimeError at line 5",
                "runs, same values as the reference")]
    report = VerifyReport(rows, [], CudaStatus(False, "no GPU"), 1.0, 1)
    for width in (80, 100, 160):
        table = render_text(report, width=width).split("\n\n")[0].splitlines()
        assert max(len(line) for line in table) <= width, (width, table)
        claimed = table[0].index("claimed")
        observed = table[0].index("observed")
        body = table[next(i for i, line in enumerate(table) if line.startswith("---")) + 1:]
        wrapped = " ".join(line[claimed:observed].strip() for line in body).split()
        assert wrapped == claim.split()  # every word of the claim, in order: wrapped, not cut


@pytest.mark.parametrize(("requires_grad", "shares"), [(True, False), (False, True)])
def test_reference_conversion_copies_where_the_original_raised(requires_grad: bool, shares: bool) -> None:
    """With force_numpy, `.numpy()` returns a copy where the original call raised (so a write
    through the array cannot reach the tensor and hide a fix that forgot `.copy()`), and the
    array sharing the tensor's memory where it ran, as the original did."""
    import numpy as np
    import torch
    import torch.utils.dlpack

    from flake8_detach.verify.runner import Probes

    saved = {name: torch.Tensor.__dict__.get(name) for name in ("numpy", *Probes.MOVES)}
    # With force_numpy the probes also wrap torch's array constructors: put them back too, or
    # later tests in this process would see `torch.from_numpy` take any array.
    constructors = {name: getattr(torch, name) for name in Probes.ARRAY_CONSTRUCTORS}
    dlpack = torch.utils.dlpack.from_dlpack
    try:
        Probes("<no fixture>", force_numpy=True).install()
        tensor = torch.ones(3, requires_grad=requires_grad)
        array = tensor.numpy()
    finally:
        for name, method in saved.items():  # the probes set them on torch.Tensor itself
            if method is None:
                delattr(torch.Tensor, name)
            else:
                setattr(torch.Tensor, name, method)
        for name, function in constructors.items():
            setattr(torch, name, function)
        torch.utils.dlpack.from_dlpack = dlpack
    array[0] = 5.0
    assert np.shares_memory(array, tensor.detach().numpy()) is shares
    assert tensor[0].item() == (5.0 if shares else 1.0)


def test_complex_values_are_pictured_as_real_and_imaginary_pairs() -> None:
    """JSON has no complex numbers: a fixture that leaves a complex tensor or array at module
    level (or converts one) must still report, and the two runs' pictures compare by value."""
    import numpy
    import torch

    from flake8_detach.verify.runner import serialize

    conjugate = serialize(torch.tensor([1 + 2j]).conj())
    array = serialize(numpy.array([1 - 2j]))
    scalar = serialize(numpy.complex64(3 + 4j))
    assert conjugate is not None and conjugate["data"] == [[1.0, -2.0]]
    assert array is not None and array["data"] == [[1.0, -2.0]]
    assert scalar == {"kind": "scalar", "value": [3.0, 4.0]}
    json.dumps([conjugate, array, scalar])
    assert differences(conjugate, array, "z") == []
    assert differences(conjugate, serialize(torch.tensor([1 + 2j])), "z") != []
