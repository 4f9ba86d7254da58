"""The libcst codemods: the documented `python -m libcst.tool codemod` commands really work,
and they write exactly what the fixer writes (they reuse its passes, not a copy of them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from libcst.codemod import CodemodContext, TransformSuccess, transform_module

from flake8_detach import codemods
from flake8_detach.engine import Settings
from flake8_detach.fixing.fixer import fix_source

GRAD_ON_DEVICE = "import torch\nw = torch.ones(3, requires_grad=True).cuda()\n"
SOURCE = GRAD_ON_DEVICE + "a = w.numpy()\nb = w.cpu().detach()\nc = w.data.clone()\nw.data.zero_()\n"
REPO = Path(__file__).resolve().parent.parent


def codemod(command: type[codemods.FixDetachHazards], source: str, **kwargs) -> str:
    result = transform_module(command(CodemodContext(), **kwargs), source)
    assert isinstance(result, TransformSuccess)
    return result.code


def test_all_hazards_codemod_equals_the_fixer():
    assert codemod(codemods.FixDetachHazards, SOURCE) == fix_source(SOURCE).source
    assert codemod(codemods.FixDetachHazards, SOURCE, unsafe_fixes=True) == fix_source(SOURCE, unsafe=True).source
    assert codemod(codemods.FixDetachHazards, SOURCE, style="force") == fix_source(
        SOURCE, Settings(fix_style="force")
    ).source


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (codemods.FixNumpyOnGradTensor, "DET101"),
        (codemods.FixCpuBeforeDetach, "DET102"),
        (codemods.FixLegacyDataAttribute, "DET103"),
        (codemods.FixNumpyOnDeviceTensor, "DET104"),
    ],
)
def test_one_rule_codemods_fix_only_their_rule(command, code):
    assert command.CODES == (code,)
    expected = fix_source(SOURCE, Settings(select=(code,)), unsafe=True)
    assert {d.code for d in expected.applied} == {code}
    assert codemod(command, SOURCE, unsafe_fixes=True) == expected.source


def test_codemod_warns_about_what_it_left(capsys):
    context = CodemodContext()
    transform_module(codemods.FixDetachHazards(context), SOURCE)
    assert any("DET103" in warning and "not fixed" in warning for warning in context.warnings)


def _tool(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", *args], check=False, capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_documented_command_runs_in_a_subprocess(tmp_path):
    (tmp_path / "src").mkdir()
    script = tmp_path / "src" / "train.py"
    script.write_text(SOURCE)
    untouched = tmp_path / "src" / "other.py"
    untouched.write_text("x = 1\n")
    completed = _tool(
        ["-x", "--no-format", "flake8_detach.codemods.FixDetachHazards", "--unsafe-fixes", "src"], tmp_path
    )
    assert completed.returncode == 0, completed.stderr
    assert script.read_text() == fix_source(SOURCE, unsafe=True).source
    assert untouched.read_text() == "x = 1\n"


def test_codemod_found_through_a_libcst_config_modules_entry(tmp_path):
    """With `modules: [flake8_detach]` in .libcst.codemod.yaml the command is `codemods.<Name>`."""
    (tmp_path / ".libcst.codemod.yaml").write_text("modules:\n  - 'flake8_detach'\n")
    script = tmp_path / "train.py"
    script.write_text(SOURCE)
    completed = _tool(["--no-format", "codemods.FixCpuBeforeDetach", "train.py"], tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert script.read_text() == SOURCE.replace("w.cpu().detach()", "w.detach().cpu()")
