"""Generate, prove, lint and score the conformance matrix (see matrix.py).

Every case is proven before it counts: a hazard must raise at its sink line (RuntimeError for a
grad source, TypeError for a device source, with `meta` standing in for a GPU), its twin must run.
A case whose claim does not hold at run time is `unproven` (the generator is wrong about it) and
is left out of the figures. Proven cases are linted with `flake8-detach check` in one run, each
case a project of its own: a hazard is `found` when its code is on its sink line (else `missed`),
a twin is `clean` when nothing is reported in it (else `flagged`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from matrix import SOURCES, Case, cases, runtime_text

EXPECTED_ERROR = {"grad": "RuntimeError", "device": "TypeError"}
RUNNER = Path(__file__).resolve().parent / "runner.py"


def _write(root: Path, index: int, case: Case, runtime: bool) -> Path:
    folder = root / f"c{index:04d}"
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text("[project]\nname = 'case'\n")
    for name, text in case.files.items():
        (folder / name).write_text(runtime_text(text) if runtime else text, encoding="utf-8")
    return folder


def _proven(case: Case, outcome: list[object]) -> bool:
    error, line = outcome
    if not case.hazard:
        return error is None
    return error == EXPECTED_ERROR[SOURCES[case.source].kind] and line == case.sink_line


def evaluate(workdir: Path) -> dict[str, str]:
    """Each case's outcome: found / missed (hazards), clean / flagged (twins), or unproven."""
    all_cases = cases()
    runtime_root, lint_root = workdir / "run", workdir / "lint"
    folders = [str(_write(runtime_root, index, case, runtime=True)) for index, case in enumerate(all_cases)]
    listing = workdir / "cases.json"
    listing.write_text(json.dumps([[case.name, folder] for case, folder in zip(all_cases, folders)]))
    outcomes_file = workdir / "outcomes.json"
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONWARNINGS": "ignore"}
    subprocess.run([sys.executable, str(RUNNER), str(listing), str(outcomes_file)], check=True, env=env,
                   stdout=subprocess.DEVNULL, timeout=900)
    outcomes = json.loads(outcomes_file.read_text())
    proven = {case.name for case in all_cases if _proven(case, outcomes[case.name])}
    lint_folders = {f"c{index:04d}": case for index, case in enumerate(all_cases) if case.name in proven}
    for index, case in enumerate(all_cases):
        if case.name in proven:
            _write(lint_root, index, case, runtime=False)
    report = subprocess.run([sys.executable, "-m", "flake8_detach", "check", "--no-cache", "--exit-zero",
                             "--output-format", "json", str(lint_root)], check=True, capture_output=True,
                            text=True, env=env, timeout=900)
    reported: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for diagnostic in json.loads(report.stdout)["diagnostics"]:
        path = Path(diagnostic["path"])
        if path.name == "main.py":
            reported[path.parent.name].append((diagnostic["line"], diagnostic["code"]))
        else:  # a diagnostic in the project's other file: counts against the twin, credits nothing
            reported[path.parent.name].append((0, diagnostic["code"]))
    results: dict[str, str] = {}
    for case in all_cases:
        if case.name not in proven:
            results[case.name] = "unproven"
    for folder, case in lint_folders.items():
        found = reported.get(folder, [])
        if case.hazard:
            results[case.name] = "found" if (case.sink_line, case.code) in found else "missed"
        else:
            results[case.name] = "flagged" if found else "clean"
    return dict(sorted(results.items()))


def figures(results: dict[str, str], axis: int) -> dict[str, tuple[int, int, int]]:
    """Per carrier (axis 0) or sink (axis 2): found, proven hazards, flagged twins."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for name, outcome in results.items():
        table[name.split("/")[axis]][outcome] += 1
    return {key: (count["found"], count["found"] + count["missed"], count["flagged"]) for key, count in sorted(table.items())}


def ratio(numerator: int, denominator: int) -> str:
    return f"{numerator / denominator:.2f}" if denominator else "-"
