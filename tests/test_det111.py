"""DET111, DET101's caller-dependent form: its own code, off by default on every front.

A site gets one code: DET101 where the file proves the hazard, DET111 where only an unseen caller
would make it raise. flake8 default-ignores DET111 (as flake8-bugbear does its B9xx); `check`,
`fix` and the language server leave it out of the default selection unless `--preview`,
`preview = true` or a select names it. Its fix is DET101's, always unsafe.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from expectations import expected_diagnostics

from flake8_detach import check_source
from flake8_detach.catalog import OPT_IN_CODES, selected_codes
from flake8_detach.cli import main
from flake8_detach.config import load_pyproject
from flake8_detach.fixing.fixer import fix_source
from flake8_detach.settings import ConfigError, Settings

PREVIEW = Settings(preview=True)
# A helper nothing in the file calls (caller-dependent), and a grad leaf the file proves.
HELPER = "import torch\n\n\ndef to_numpy(t):\n    return t.cpu().numpy()\n"
PROVEN = "w = torch.ones(2, requires_grad=True)\nw.numpy()\n"
BOTH = HELPER + "\n\n" + PROVEN  # DET111 on line 5, DET101 on line 9


def codes(source: str, settings: Settings = PREVIEW) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check_source(source, settings)]


# ------------------------------------------------------------------ one code per site
def test_the_caller_dependent_form_is_det111_and_the_proven_form_det101() -> None:
    assert codes(BOTH) == [(5, "DET111"), (9, "DET101")]
    called = HELPER + "\n\nto_numpy(torch.nn.Linear(2, 2)(torch.ones(2)))\n"
    (diagnostic,) = check_source(called, PREVIEW)
    assert (diagnostic.line, diagnostic.code) == (5, "DET101")
    assert "the value is passed by the call on line 8" in diagnostic.message


def test_no_site_has_both_codes_in_any_fixture() -> None:
    for folder in ("det101", "det111"):
        for path in sorted((REPO / "fixtures" / folder).glob("*.py")):
            if path.name.endswith(".fixed.py"):
                continue
            found = codes(path.read_text(encoding="utf-8"))
            lines_101 = {line for line, code in found if code == "DET101"}
            lines_111 = {line for line, code in found if code == "DET111"}
            assert not lines_101 & lines_111, path
            # And the fixtures' annotations say which one (so a move between them is seen).
            assert {(line, code) for line, code in found if code in ("DET101", "DET111")} == {
                (line, code) for line, code in expected_diagnostics(path) if code in ("DET101", "DET111")}, path


def test_det111_message_says_it_depends_on_the_caller() -> None:
    (diagnostic,) = check_source(HELPER, PREVIEW)
    assert diagnostic.message.startswith("DET111 ") and "it depends on the caller" in diagnostic.message


# ------------------------------------------------------------------ default selection
def test_the_default_selection_leaves_out_the_opt_in_codes() -> None:
    assert OPT_IN_CODES == {"DET111"}
    assert "DET111" not in selected_codes()
    assert "DET111" in selected_codes(preview=True)
    assert "DET111" in selected_codes(extend_select=("DET111",))
    assert "DET111" in selected_codes(select=("DET1",))  # a prefix names it, as flake8's explicit --select
    assert "DET111" not in selected_codes(select=("DET101",))
    assert "DET111" not in selected_codes(extend_select=("DET111",), ignore=("DET11",))
    assert selected_codes(select=("DET101",), extend_select=("DET104",)) == ("DET101", "DET104")
    assert codes(BOTH, Settings()) == [(9, "DET101")]


def run_flake8(source: str, *options: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *options, "-"],
        input=source, capture_output=True, text=True, cwd=REPO, check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return [line.split(": ", 1)[1].split()[0] for line in result.stdout.splitlines() if ": DET" in line]


def test_flake8_default_ignores_det111_as_bugbear_does_b9() -> None:
    source = BOTH + "\n"
    assert run_flake8(source) == ["DET101"]
    assert run_flake8(source, "--extend-select", "DET111") == ["DET111", "DET101"]
    assert run_flake8(source, "--select", "DET") == ["DET111", "DET101"]
    assert run_flake8(source, "--select", "DET101") == ["DET101"]
    assert run_flake8(source, "--extend-select", "DET111", "--extend-ignore", "DET111") == ["DET101"]


def test_flake8_noqa_by_det111() -> None:
    silenced = BOTH.replace("t.cpu().numpy()\n", "t.cpu().numpy()  # noqa: DET111\n") + "\n"
    assert run_flake8(silenced, "--extend-select", "DET111") == ["DET101"]
    other = BOTH.replace("t.cpu().numpy()\n", "t.cpu().numpy()  # noqa: DET101\n") + "\n"
    assert run_flake8(other, "--extend-select", "DET111") == ["DET111", "DET101"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helpers.py").write_text(BOTH)
    return tmp_path


def check_codes(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    main(["check", "--no-cache", *args])
    out = capsys.readouterr().out
    return [line.split(": ", 1)[1].split()[0] for line in out.splitlines() if ": DET" in line]


def test_check_default_preview_and_explicit_selection(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check_codes(["helpers.py"], capsys) == ["DET101"]
    assert check_codes(["helpers.py", "--preview"], capsys) == ["DET111", "DET101"]
    assert check_codes(["helpers.py", "--extend-select", "DET111"], capsys) == ["DET111", "DET101"]
    assert check_codes(["helpers.py", "--select", "DET111"], capsys) == ["DET111"]
    assert check_codes(["helpers.py", "--preview", "--ignore", "DET111"], capsys) == ["DET101"]
    assert check_codes(["helpers.py", "--select", "DET101", "--preview"], capsys) == ["DET101"]


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("", ["DET101"]),
        ("preview = true\n", ["DET111", "DET101"]),
        ("preview = false\n", ["DET101"]),
        ('select = ["DET111"]\n', ["DET111"]),
        ('extend-select = ["DET111"]\n', ["DET111", "DET101"]),
        ('select = ["DET101"]\nextend-select = ["DET111"]\n', ["DET111", "DET101"]),
        ('preview = true\nper-file-ignores = { "helpers.py" = ["DET111"] }\n', ["DET101"]),
    ],
)
def test_check_reads_preview_and_selection_from_pyproject(
    project: Path, capsys: pytest.CaptureFixture[str], table: str, expected: list[str]
) -> None:
    (project / "pyproject.toml").write_text("[tool.flake8-detach]\n" + table)
    assert check_codes(["helpers.py"], capsys) == expected


def test_command_line_select_replaces_the_configs_extend_select(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.flake8-detach]\nextend-select = ["DET111"]\n')
    assert check_codes(["helpers.py", "--select", "DET101"], capsys) == ["DET101"]


def test_preview_must_be_a_boolean(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-detach]\npreview = 1\n")
    with pytest.raises(ConfigError, match="preview: expected true or false, got int"):
        load_pyproject(tmp_path / "pyproject.toml")


def test_the_language_servers_settings_come_from_the_same_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-detach]\npreview = true\n")
    settings = load_pyproject(tmp_path / "pyproject.toml").settings_for(tmp_path / "helpers.py")
    assert settings.preview and codes(BOTH, settings) == [(5, "DET111"), (9, "DET101")]


# ------------------------------------------------------------------ the fix
def test_det111_fix_is_det101s_rewrite_but_unsafe() -> None:
    safe_only = fix_source(BOTH, PREVIEW)
    assert [d.code for d in safe_only.applied] == ["DET101"]
    assert [d.code for d in safe_only.remaining] == ["DET111"]
    unsafe = fix_source(BOTH, PREVIEW, unsafe=True)
    assert sorted(d.code for d in unsafe.applied) == ["DET101", "DET111"]
    assert "return t.detach().cpu().numpy()\n" in unsafe.source


def test_det111_fix_is_unsafe_even_where_det101s_would_be_safe() -> None:
    # The array is written in the helper only: DET101's rewrite (with .copy()) would be safe.
    source = "import torch\n\n\ndef first(m):\n    w = m.weight.numpy()\n    w[0] = 0.0\n    return float(w[0])\n"
    (diagnostic,) = [d for d in check_source(source, PREVIEW) if d.code == "DET111"]
    assert diagnostic.fix is not None and not diagnostic.fix.safe
    assert "it depends on the caller" in diagnostic.fix.description
    assert "w = m.weight.detach().numpy().copy()\n" in fix_source(source, PREVIEW, unsafe=True).source
    force = Settings(preview=True, fix_style="force")
    assert fix_source(source, force).source == source  # unsafe in the force style too
    assert "w = m.weight.numpy(force=True).copy()\n" in fix_source(source, force, unsafe=True).source


def test_fix_command_leaves_det111_alone_by_default(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["fix", "--no-cache", "--unsafe-fixes", "helpers.py"])
    capsys.readouterr()
    text = (project / "helpers.py").read_text()
    assert "return t.cpu().numpy()\n" in text and "w.detach().numpy()\n" in text
    main(["fix", "--no-cache", "--unsafe-fixes", "--preview", "helpers.py"])
    assert "return t.detach().cpu().numpy()\n" in (project / "helpers.py").read_text()


# ------------------------------------------------------------------ the other fronts
def test_the_results_cache_tells_preview_runs_apart(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, expected in ((["helpers.py"], ["DET101"]), (["helpers.py", "--preview"], ["DET111", "DET101"]),
                           (["helpers.py"], ["DET101"])):
        main(["check", *args])  # cached: a run with other settings must not reuse the answer
        out = capsys.readouterr().out
        assert [line.split(": ", 1)[1].split()[0] for line in out.splitlines() if ": DET" in line] == expected


def test_sarif_describes_det111_and_reports_it(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    main(["check", "--no-cache", "--preview", "--format", "sarif", "helpers.py"])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert "DET111" in [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert [result["ruleId"] for result in run["results"]] == ["DET111", "DET101"]


try:  # the language server's end-to-end client, when the lsp and test extras are installed
    from test_lsp import client, next_publish, open_document  # noqa: F401 - `client` is a fixture
    HAVE_LSP = True
except pytest.skip.Exception:
    HAVE_LSP = False


@pytest.mark.skipif(not HAVE_LSP, reason="the language server needs pygls and pytest-lsp")
@pytest.mark.asyncio
async def test_language_server_reports_det111_only_with_preview(client, tmp_path: Path) -> None:
    plain = await next_publish(client, lambda: open_document(client, (tmp_path / "a" / "helpers.py").as_uri(), BOTH))
    assert [diagnostic.code for diagnostic in plain.diagnostics] == ["DET101"]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "pyproject.toml").write_text("[tool.flake8-detach]\npreview = true\n")
    preview = await next_publish(client, lambda: open_document(client, (tmp_path / "b" / "helpers.py").as_uri(), BOTH))
    assert [diagnostic.code for diagnostic in preview.diagnostics] == ["DET111", "DET101"]
