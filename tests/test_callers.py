"""The lazy reverse index of the project's calls (analysis/callers.py).

Two things must hold: it reads only the files that name a unit, and it answers what the fixpoint
over the whole project answers (test_project.py holds the answers themselves to runtime).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from test_project import write

from flake8_detach.analysis import callers as callers_module
from flake8_detach.analysis import project as project_module
from flake8_detach.analysis.callers import CallerIndex, Site, aliases_in
from flake8_detach.analysis.project import Project, SummaryStore, forget_projects
from flake8_detach.engine import Place, analyze
from flake8_detach.settings import Settings


@pytest.fixture(autouse=True)
def _fresh_projects() -> None:
    forget_projects()
    project_module.use_summary_directory(None)


HELPER = """
    import torch


    def to_array(t):
        return t.numpy()
"""


def test_only_the_files_that_name_a_unit_are_summarised(tmp_path: Path) -> None:
    unrelated = {f"other_{index}.py": f"import torch\n\ndef f{index}(x):\n    return x + {index}\n"
                 for index in range(5)}
    write(tmp_path, {"setup.py": "", "helpers.py": HELPER, **unrelated, "main.py": """
        import torch
        from helpers import to_array

        with torch.no_grad():
            print(to_array(torch.ones(2, requires_grad=True)))
    """})
    project = Project(tmp_path, SummaryStore(None))
    assert project.callers_without_grad((tmp_path / "helpers.py", "to_array")) == (True, frozenset({"t"}))
    assert sorted(path.name for path in project.summaries) == ["helpers.py", "main.py"]


def test_a_call_through_an_alias_of_a_re_export_is_found(tmp_path: Path) -> None:
    """`from .helpers import to_array as as_numpy` in a package, then `from pkg import as_numpy`:
    the caller's file never spells `to_array`."""
    write(tmp_path, {"setup.py": "", "pkg/__init__.py": "from .helpers import to_array as as_numpy\n",
                     "pkg/helpers.py": HELPER, "main.py": """
        import torch
        from pkg import as_numpy

        with torch.no_grad():
            print(as_numpy(torch.ones(2, requires_grad=True)))
    """})
    place = Place(tmp_path / "pkg" / "helpers.py", None)
    found = analyze((tmp_path / "pkg" / "helpers.py").read_text(), Settings(preview=True), place=place)
    assert found.diagnostics == []
    forget_projects()
    write(tmp_path, {"main.py": """
        import torch
        from pkg import as_numpy

        print(as_numpy(torch.ones(2, requires_grad=True)))
    """})
    found = analyze((tmp_path / "pkg" / "helpers.py").read_text(), Settings(preview=True), place=place)
    assert [d.code for d in found.diagnostics] == ["DET101"]


def test_a_method_called_through_an_instance_in_another_file_is_found(tmp_path: Path) -> None:
    write(tmp_path, {"setup.py": "", "probe.py": """
        import torch


        class Probe:
            def read(self, t):
                return t.numpy()
    """, "main.py": """
        import torch
        from probe import Probe

        probe = Probe()
        with torch.no_grad():
            probe.read(torch.ones(2, requires_grad=True))
    """})
    project = Project(tmp_path, SummaryStore(None))
    assert project.callers_without_grad((tmp_path / "probe.py", "Probe.read")) == (True, frozenset({"self", "t"}))


Unit = tuple[Path, str]
FileCalls = list[tuple[Path, list[Site], bool]]


def _random_graph(rng: random.Random, size: int) -> dict[Unit, FileCalls]:
    """Each unit's calls spread over up to three files (the index reads them one by one)."""
    units = [(Path(f"m{index % 3}.py"), f"f{index}") for index in range(size)]
    graph: dict[Unit, FileCalls] = {}
    for unit in units:
        graph[unit] = [(Path(f"m{part}.py"),
                        [Site(rng.choice([None, *units]) if rng.random() < 0.9 else None, rng.random() < 0.4,
                              frozenset()) for _ in range(rng.randrange(0, 3))],
                        rng.random() < 0.03) for part in range(rng.randrange(1, 4))]
    return graph


def _use_graph(monkeypatch: pytest.MonkeyPatch, graph: dict[Unit, FileCalls]) -> None:
    monkeypatch.setattr(CallerIndex, "_calls_by_file", lambda self, unit: iter(graph[unit]))


@pytest.mark.parametrize("seed", range(40))
def test_the_depth_first_check_agrees_with_the_whole_fixpoint(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random call graphs (cycles, module-level calls, calls with grad off, escapes), units asked
    in a random order: each answer equals the greatest fixpoint over the whole graph."""
    rng = random.Random(seed)
    graph = _random_graph(rng, rng.randrange(2, 30))
    _use_graph(monkeypatch, graph)
    expected = {unit: CallerIndex(Project(Path("."), SummaryStore(None)))._quiet_by_fixpoint(unit)
                for unit in graph}
    lazy = CallerIndex(Project(Path("."), SummaryStore(None)))
    order = list(graph)
    rng.shuffle(order)
    assert {unit: lazy.quiet(unit) for unit in order} == expected


def test_past_its_bounds_the_check_gives_way_to_the_whole_fixpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain of callers deeper than the depth-first bound, all with grad off at the top."""
    depth = callers_module.MAX_QUIET_DEPTH * 3
    units = [(Path("m.py"), f"f{index}") for index in range(depth)]
    graph: dict[Unit, FileCalls] = {unit: [(Path("m.py"), [Site(units[index + 1], False, frozenset())], False)]
                                     for index, unit in enumerate(units[:-1])}
    graph[units[-1]] = [(Path("m.py"), [Site(None, True, frozenset())], False)]
    _use_graph(monkeypatch, graph)
    index = CallerIndex(Project(Path("."), SummaryStore(None)))
    assert index.quiet(units[0]) is True
    graph[units[-1]] = [(Path("m.py"), [Site(None, False, frozenset())], False)]
    assert CallerIndex(Project(Path("."), SummaryStore(None))).quiet(units[0]) is False


def test_a_caller_that_its_own_file_runs_with_grad_on_reads_no_other_file(tmp_path: Path) -> None:
    """`to_array`'s caller is `main`, which its own file calls at module level with grad on: that
    call answers, so the other files that define a `main` of their own are never read."""
    others = {f"tool_{index}.py": "def main():\n    pass\n\n\nmain()\n" for index in range(5)}
    write(tmp_path, {"setup.py": "", "helpers.py": HELPER, **others, "cli.py": """
        import torch
        from helpers import to_array


        def main():
            print(to_array(torch.ones(2)))


        main()
    """})
    project = Project(tmp_path, SummaryStore(None))
    assert project.callers_without_grad((tmp_path / "helpers.py", "to_array")) == (False, frozenset())
    assert sorted(path.name for path in project.summaries) == ["cli.py", "helpers.py"]


# What `aliases_in` must find: every pair of this pattern, which it finds from the ` as ` words.
ALIAS_PATTERN = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\s+as\s+([A-Za-z_][A-Za-z0-9_]*)")
ALIAS_CASES = [
    b"import numpy as np", b"a as as as b", b"x  as\n y", b"with open(f) as fh", b"__as as _b", b"as as x",
    b"from .a import (Net as Model, Foo as Bar)", b"1a as b", b"except E as e:", b"x as", b"as", b"",
]


@pytest.mark.parametrize("data", ALIAS_CASES)
def test_aliases_are_the_pairs_of_the_name_as_alias_pattern(data: bytes) -> None:
    assert list(aliases_in(data)) == ALIAS_PATTERN.findall(data)


def test_aliases_equal_the_patterns_pairs_on_this_projects_files() -> None:
    root = Path(__file__).resolve().parent.parent
    files = [path for folder in ("flake8_detach", "tests", "fixtures") for path in (root / folder).rglob("*.py")]
    assert len(files) > 100
    for path in files:
        data = path.read_bytes()
        assert list(aliases_in(data)) == ALIAS_PATTERN.findall(data), path
