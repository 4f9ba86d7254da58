"""`[tool.flake8-detach]` and the flake8 options: mapping to Settings, discovery, clear errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flake8_detach.cli import main
from flake8_detach.config import (
    Config,
    ConfigError,
    discover_config,
    find_pyproject,
    load_pyproject,
    parse_table,
)
from flake8_detach.engine import Settings

HAZARD_IN_CONTEXT = (
    "import torch\n"
    "from myproject.utils import evaluating\n"
    "w = torch.ones(3, requires_grad=True)\n"
    "with evaluating():\n"
    "    w.numpy()\n"
)


def write_pyproject(folder: Path, body: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_every_key_maps_to_settings(tmp_path: Path) -> None:
    path = write_pyproject(
        tmp_path,
        "[tool.flake8-detach]\n"
        'select = ["DET1"]\n'
        'ignore = ["DET103"]\n'
        'extend-exclude = ["generated"]\n'
        'fix-style = "force"\n'
        'no-grad-contexts = ["myproject.utils.evaluating"]\n'
        'converting-functions = ["myproject.utils.to_numpy"]\n',
    )
    config = load_pyproject(path)
    assert config.extend_exclude == ("generated",)
    assert config.root == tmp_path
    assert config.settings() == Settings(
        select=("DET1",),
        ignore=("DET103",),
        no_grad_contexts=frozenset({"myproject.utils.evaluating"}),
        converting_functions=frozenset({"myproject.utils.to_numpy"}),
        fix_style="force",
    )


def test_missing_section_and_missing_file_give_defaults(tmp_path: Path) -> None:
    assert load_pyproject(write_pyproject(tmp_path, "[project]\nname = 'x'\n")) == Config()
    assert discover_config(tmp_path) == Config()


@pytest.mark.parametrize(
    ("body", "key", "fragment"),
    [
        ("selct = ['DET101']", "selct", "did you mean 'select'"),
        ("no_grad_contexts = ['a.b']", "no_grad_contexts", "did you mean 'no-grad-contexts'"),
        ("colour = 'red'", "colour", "known keys: select"),
        ("select = 'DET101'", "select", "expected a list of strings, got str 'DET101'"),
        ("ignore = [101]", "ignore", "expected a list of strings"),
        ("select = ['det101']", "select", "'det101' is not a rule code or prefix"),
        ("ignore = ['E501']", "ignore", "'E501' matches no flake8-detach rule"),
        ("fix-style = 'forced'", "fix-style", "expected 'chain' or 'force', got 'forced'"),
        ("no-grad-contexts = ['my-project.evaluating']", "no-grad-contexts", "is not a dotted name"),
        ("converting-functions = ['to_numpy()']", "converting-functions", "is not a dotted name"),
        ("extend-exclude = 'build'", "extend-exclude", "expected a list of strings"),
    ],
)
def test_bad_keys_and_values_name_the_key(tmp_path: Path, body: str, key: str, fragment: str) -> None:
    path = write_pyproject(tmp_path, f"[tool.flake8-detach]\n{body}\n")
    with pytest.raises(ConfigError) as caught:
        load_pyproject(path)
    assert caught.value.key == key
    message = str(caught.value)
    assert message.startswith(f"{path}: [tool.flake8-detach] {key}: ")
    assert fragment in message


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    path = write_pyproject(tmp_path, "[tool.flake8-detach\nselect = [\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_pyproject(path)


def test_nearest_pyproject_with_the_section_wins(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.flake8-detach]\nignore = ['DET102']\n")
    sub = tmp_path / "packages" / "sub"
    sub.mkdir(parents=True)
    write_pyproject(sub, "[project]\nname = 'sub'\n")  # no section: the search goes on
    assert find_pyproject(sub) == tmp_path / "pyproject.toml"
    assert discover_config(sub).ignore == ("DET102",)
    write_pyproject(sub, "[tool.flake8-detach]\nignore = ['DET104']\n")
    assert discover_config(sub).ignore == ("DET104",)


def test_parse_table_accepts_an_empty_table() -> None:
    assert parse_table({}) == Config()


def test_cli_honours_no_grad_contexts(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(HAZARD_IN_CONTEXT)
    assert main(["check", "train.py"]) == 1
    assert "train.py:5:7: DET101" in capsys.readouterr().out
    write_pyproject(tmp_path, "[tool.flake8-detach]\nno-grad-contexts = ['myproject.utils.evaluating']\n")
    assert main(["check", "train.py"]) == 0
    assert capsys.readouterr().out == "All checks passed!\n"


def test_cli_select_replaces_the_files_select(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(HAZARD_IN_CONTEXT)
    write_pyproject(tmp_path, "[tool.flake8-detach]\nselect = ['DET104']\n")
    assert main(["check", "train.py"]) == 0
    assert main(["check", "train.py", "--select", "DET101"]) == 1
    other = tmp_path / "other.toml"
    other.write_text("[tool.flake8-detach]\nignore = ['DET1']\n")
    assert main(["check", "train.py", "--config", str(other)]) == 0
    capsys.readouterr()


def run_flake8(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "DET", *args, "train.py"],
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
    )


def test_flake8_config_carries_the_same_settings(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(HAZARD_IN_CONTEXT)
    assert run_flake8(tmp_path).returncode == 1
    (tmp_path / "setup.cfg").write_text(
        "[flake8]\n"
        "detach-no-grad-contexts = myproject.utils.evaluating\n"
        "detach-converting-functions = myproject.utils.to_numpy\n"
    )
    completed = run_flake8(tmp_path)
    assert (completed.returncode, completed.stdout) == (0, ""), completed.stdout + completed.stderr


def test_flake8_config_bad_value_names_the_option(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(HAZARD_IN_CONTEXT)
    (tmp_path / "tox.ini").write_text("[flake8]\ndetach-no-grad-contexts = my-project.evaluating\n")
    completed = run_flake8(tmp_path)
    assert completed.returncode != 0
    assert "--detach-no-grad-contexts: 'my-project.evaluating' is not a dotted name" in completed.stdout
    assert "Traceback" not in completed.stdout + completed.stderr


@pytest.mark.parametrize(
    "body",
    [
        "[tool.flake8-detach]\nignore = ['DET101']\n",
        "[tool]\nflake8-detach = { ignore = ['DET101'] }\n",
        "tool.flake8-detach.ignore = ['DET101']\n",
        '[tool."flake8-detach"]\nignore = ["DET101"]\n',
        "[project]\nname = 'x'\n[tool.flake8-detach]\n# a comment\nignore = [\n  'DET101',\n]\n",
    ],
    ids=["header", "inline-table", "dotted-keys", "quoted-key", "multiline"],
)
def test_every_toml_spelling_of_the_table_is_read(tmp_path: Path, body: str) -> None:
    write_pyproject(tmp_path, body)
    assert find_pyproject(tmp_path) == tmp_path / "pyproject.toml"
    assert discover_config(tmp_path).ignore == ("DET101",)


def test_a_pyproject_that_only_mentions_the_name_elsewhere_is_not_the_config(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[project]\nname = 'x'\ndependencies = ['flake8-detach']\n")
    assert find_pyproject(tmp_path) is None
    assert discover_config(tmp_path) == Config()


def test_someone_elses_broken_pyproject_is_not_our_error(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[project\nname = \n")  # no mention of flake8-detach
    assert discover_config(tmp_path) == Config()


def test_check_reads_the_flake8_options_files(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(HAZARD_IN_CONTEXT)
    assert main(["check", "train.py"]) == 1
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nname = x\n\n[flake8]\nmax-line-length = 100\n"
        "detach_no_grad_contexts =\n    myproject.utils.evaluating,\n    myproject.utils.other\n"
    )
    assert main(["check", "train.py"]) == 0  # flake8 reads it (test above): so does check
    assert discover_config(tmp_path).no_grad_contexts == {"myproject.utils.evaluating", "myproject.utils.other"}
    capsys.readouterr()


def test_the_pyproject_table_wins_key_by_key_over_the_flake8_file_of_its_folder(tmp_path: Path) -> None:
    (tmp_path / ".flake8").write_text("[flake8]\ndetach-fix-style = force\ndetach-converting-functions = a.b\n")
    write_pyproject(tmp_path, "[tool.flake8-detach]\nfix-style = 'chain'\n")
    config = discover_config(tmp_path)
    assert (config.fix_style, config.converting_functions) == ("chain", {"a.b"})


def test_a_bad_flake8_option_value_is_a_config_error_in_check(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(HAZARD_IN_CONTEXT)
    (tmp_path / "tox.ini").write_text("[flake8]\ndetach-no-grad-contexts = my-project.evaluating\n")
    assert main(["check", "train.py"]) == 2
    # Named as tox.ini spells it, not as a pyproject key the user never wrote.
    assert "tox.ini: [flake8] detach-no-grad-contexts: 'my-project.evaluating' is not a dotted name" in capsys.readouterr().err


def test_monorepo_each_file_gets_its_nearest_config(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    hazard = "import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n"
    for package in ("pkg_a", "pkg_b"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "a.py").write_text(hazard)
    write_pyproject(tmp_path / "pkg_a", "[tool.flake8-detach]\nignore = ['DET101']\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "pkg_a/a.py"]) == 0  # from the root, pkg_a's own config applies
    assert main(["check", "."]) == 1
    out = capsys.readouterr().out
    assert "pkg_b/a.py:3:3: DET101" in out and "pkg_a" not in out
    assert main(["fix", "--diff", "."]) == 1
    diff = capsys.readouterr().out
    assert "pkg_b/a.py" in diff and "pkg_a/a.py" not in diff
