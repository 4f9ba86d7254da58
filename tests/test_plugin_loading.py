"""flake8 imports the plugin on every run: what that import costs and what it can never break."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from conftest import REPO

from flake8_detach.catalog import RULE_CODES, SCREENS
from flake8_detach.rules import ALL_RULES


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=REPO, check=False, timeout=120)


def test_files_with_nothing_to_report_never_import_libcst() -> None:
    result = _run_python("""
        import ast, json, sys
        from flake8_detach.plugin import DetachPlugin
        sources = ["", "x = 1\\n", "import torch\\nx = torch.ones(2)\\nprint(x.sum())\\n",
                   "import numpy as np\\nnp.asarray([1]).data\\n"]
        out = [list(DetachPlugin(ast.parse(s), s.splitlines(True)).run()) for s in sources]
        print(json.dumps({"out": out, "libcst": "libcst" in sys.modules,
                          "engine": "flake8_detach.engine" in sys.modules}))
    """)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report == {"out": [[], [], [], []], "libcst": False, "engine": False}


def test_a_candidate_file_loads_the_engine_and_reports() -> None:
    result = _run_python("""
        import ast, sys
        from flake8_detach.plugin import DetachPlugin
        s = "import torch\\nw = torch.ones(2, requires_grad=True)\\nw.numpy()\\n"
        print([m for _, _, m, _ in DetachPlugin(ast.parse(s), s.splitlines(True)).run()], "libcst" in sys.modules)
    """)
    assert result.returncode == 0, result.stderr
    assert "DET101" in result.stdout and result.stdout.strip().endswith("True")


def test_the_engine_loaded_once_is_kept_out_of_the_cycle_collectors_passes() -> None:
    """flake8's full collections walk every object alive; libcst's tens of thousands of module
    objects, loaded with the engine, are frozen once (`gc.freeze`) so they are not walked again
    for every file. A run that loads no engine freezes nothing; the reports are the same."""
    result = _run_python("""
        import ast, gc, json
        from flake8_detach.plugin import DetachPlugin
        quiet = "import torch\\nx = torch.ones(2)\\n"
        list(DetachPlugin(ast.parse(quiet), quiet.splitlines(True)).run())
        before = gc.get_freeze_count()
        s = "import torch\\nw = torch.ones(2, requires_grad=True)\\nw.numpy()\\n"
        first = [m[:6] for _, _, m, _ in DetachPlugin(ast.parse(s), s.splitlines(True)).run()]
        frozen = gc.get_freeze_count()
        second = [m[:6] for _, _, m, _ in DetachPlugin(ast.parse(s), s.splitlines(True)).run()]
        print(json.dumps([before, frozen > 10000, gc.get_freeze_count() == frozen, first, second]))
    """)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [0, True, True, ["DET101"], ["DET101"]]


def test_an_engine_that_cannot_load_is_a_det000_line_not_a_broken_flake8() -> None:
    # Simulate a broken install (libcst missing): flake8 still runs and reports other plugins.
    result = _run_python("""
        import sys
        sys.modules["libcst"] = None  # import libcst now raises ImportError
        from flake8.main.cli import main
        sys.argv = ["flake8", "--isolated", "--select", "DET,F", "fixtures/det101/flag_requires_grad_leaf.py"]
        raise SystemExit(main())
    """)
    assert "Traceback" not in result.stderr, result.stderr
    assert "DET000 flake8-detach cannot load its engine" in result.stdout
    assert result.returncode == 1


def test_the_screen_catalog_and_the_rules_list_the_same_codes() -> None:
    assert RULE_CODES == tuple(rule.code for rule in ALL_RULES)
    assert all(screen.candidate_attributes for screen in SCREENS)
