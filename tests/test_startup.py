"""Start-up: what the command line and the language server import before they need the analysis.

pre-commit runs `flake8-detach check` on every commit and editors start the language server with
every window, so what has nothing to analyse must not import libcst, the engine, pygls or torch:
they cost most of a second. Each case runs in a fresh interpreter and reads its ``sys.modules``.
No time is asserted (machines are shared and noisy): `benchmarks/bench_startup.py --cli` measures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ANALYSIS = ("libcst", "flake8_detach.engine", "flake8_detach.fixing.passes", "flake8_detach.rules")
NEVER = ("torch", "numpy")
LSP = ("pygls", "lsprotocol")
# Imports torch, uses it, and gives no rule a candidate: the screen passes over it.
NO_CANDIDATE = "import torch\nfrom torch import nn\n\nlayer = nn.Linear(2, 2)\nprint(layer(torch.ones(2)).sum())\n"
HAZARD = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"


@dataclass
class Probe:
    status: object  # what main() returned, or SystemExit's code
    modules: set[str]
    output: str  # stdout
    errors: str  # stderr

    def loaded(self, packages: tuple[str, ...]) -> list[str]:
        return sorted(name for name in self.modules if any(name == p or name.startswith(f"{p}.") for p in packages))


def probe(statements: str, cwd: Path) -> Probe:
    """Run ``statements`` in a fresh Python (this checkout first on the path); report sys.modules."""
    program = (
        "import json, sys\nstatus = None\ntry:\n"
        + textwrap.indent(textwrap.dedent(statements).strip() + "\n", "    ")
        + "except SystemExit as exit:\n    status = exit.code\n"
        + "sys.stdout.flush()\nprint('\\n' + json.dumps({'status': status, 'modules': sorted(sys.modules)}))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    completed = subprocess.run([sys.executable, "-c", program], cwd=cwd, env=env, capture_output=True, text=True,
                               check=False, timeout=120)
    assert completed.returncode == 0, completed.stderr
    *output, last = completed.stdout.rstrip("\n").split("\n")
    result = json.loads(last)
    return Probe(result["status"], set(result["modules"]), "\n".join(output), completed.stderr)


def test_importing_the_cli_loads_no_analysis(tmp_path: Path) -> None:
    found = probe("import flake8_detach.cli", tmp_path)
    assert found.loaded(ANALYSIS + NEVER + LSP) == []


@pytest.mark.parametrize("command", [None, "check", "fix", "explain", "lsp", "verify"])
def test_building_the_parser_loads_no_analysis(tmp_path: Path, command: str | None) -> None:
    found = probe(f"from flake8_detach.cli import build_parser\nbuild_parser({command!r}).format_help()", tmp_path)
    assert found.loaded(ANALYSIS + NEVER + LSP) == []


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["check", "--help"], ["fix", "--help"]])
def test_version_and_help_load_no_analysis(tmp_path: Path, argv: list[str]) -> None:
    found = probe(f"from flake8_detach.cli import main\nstatus = main({argv!r})", tmp_path)
    assert found.status == 0
    assert found.loaded(ANALYSIS + NEVER + LSP) == []
    if argv == ["--version"]:
        assert found.output.startswith("flake8-detach ")


@pytest.mark.parametrize("cache", [["--no-cache"], []], ids=["no-cache", "cache"])
def test_check_of_a_file_with_no_candidate_loads_no_analysis(tmp_path: Path, cache: list[str]) -> None:
    (tmp_path / "model.py").write_text(NO_CANDIDATE)
    (tmp_path / "empty.py").write_text("")
    argv = ["check", *cache, "model.py", "empty.py"]
    for _ in range(2):  # with the cache: a miss, then a hit
        found = probe(f"from flake8_detach.cli import main\nstatus = main({argv!r})", tmp_path)
        assert (found.status, found.output) == (0, "All checks passed!\n")
        assert found.loaded(ANALYSIS + NEVER + LSP) == []
        assert found.loaded(["flake8_detach.sources.notebooks"]) == []  # a .py run reads no notebook


def test_check_of_a_hazard_loads_the_analysis(tmp_path: Path) -> None:
    """The control: the probe does see the engine when a file needs it."""
    (tmp_path / "model.py").write_text(HAZARD)
    found = probe("from flake8_detach.cli import main\nstatus = main(['check', '--no-cache', 'model.py'])", tmp_path)
    assert found.status == 1 and "DET101" in found.output
    assert "libcst" in found.modules and "flake8_detach.engine" in found.modules


def test_a_syntax_error_is_reported_where_no_rule_would_look(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("x = (\n")
    found = probe("from flake8_detach.cli import main\nstatus = main(['check', '--no-cache', 'broken.py'])", tmp_path)
    assert found.status == 1
    assert found.errors.startswith("broken.py: error: syntax error at line 1")


def test_fix_of_a_file_with_no_candidate_loads_no_analysis(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(NO_CANDIDATE)
    found = probe("from flake8_detach.cli import main\nstatus = main(['fix', 'model.py'])", tmp_path)
    assert found.status == 0 and "0 fixes applied" in found.output
    assert found.loaded(ANALYSIS + NEVER + LSP) == []
    assert (tmp_path / "model.py").read_text() == NO_CANDIDATE


def test_the_language_server_starts_without_the_analysis(tmp_path: Path) -> None:
    pytest.importorskip("pygls", reason="pygls is in the lsp extra")
    found = probe("from flake8_detach.lsp.server import create_server\ncreate_server()", tmp_path)
    assert found.loaded(ANALYSIS + NEVER) == []
    assert found.loaded(("pygls",))  # the control: the server itself was built


def test_the_language_server_loads_the_analysis_on_demand(tmp_path: Path) -> None:
    pytest.importorskip("pygls", reason="pygls is in the lsp extra")
    found = probe("from flake8_detach.lsp.server import load_analysis\nload_analysis()", tmp_path)
    assert {"libcst", "flake8_detach.engine", "flake8_detach.fixing.passes"} <= found.modules


def test_config_resolution_walks_each_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run over a tree reads each folder's config files once, and resolves as discover_config."""
    from flake8_detach import config as config_module

    (tmp_path / "pyproject.toml").write_text('[tool.flake8-detach]\nignore = ["DET103"]\n')
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text('[tool.flake8-detach]\nselect = ["DET101"]\n')
    (tmp_path / "other" / "deep").mkdir(parents=True)
    folders = [tmp_path / "pkg" / "sub", tmp_path / "other" / "deep", tmp_path / "pkg", tmp_path / "other", tmp_path]
    expected = {folder: config_module.discover_config(folder) for folder in folders}
    read: list[Path] = []
    real_config_in = config_module._config_in

    def counted(folder: Path) -> config_module.Config | None:
        read.append(folder)
        return real_config_in(folder)

    monkeypatch.setattr(config_module, "_config_in", counted)
    resolver = config_module.ConfigResolver()
    for folder in folders * 2:
        assert resolver.for_path(folder / "module.py") == expected[folder]
    assert len(read) == len(set(read)) == len(folders)
    assert expected[tmp_path / "pkg" / "sub"].select == ("DET101",)
    assert expected[tmp_path / "other" / "deep"].ignore == ("DET103",)
