"""Dump an engine's diagnostics over a corpus, for the recall review (`recall_sites.py`).

Usage: PYTHONPATH=CHECKOUT python benchmarks/review/flagged.py CORPUS OUT.json [--preview]

Each file is analysed with its place (its project, analysis/project.py) where the engine knows
places; `--preview` adds the opt-in rules (DET111). Engines before either simply run without them.

Reads `.py` files and notebooks (through the notebook front, so line numbers are those of the
assembled source) and writes {path: [[line, column, code], ...]}. Run it once per engine (a
checkout on PYTHONPATH) to compare before and after on the same files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from flake8_detach.engine import AnalysisError, analyze
from flake8_detach.sources.notebooks import NotebookError, NotebookSkipped, read_notebook

try:  # engines with a project index (issue 21) and opt-in rules
    from flake8_detach.place import Place
    from flake8_detach.settings import Settings
except ImportError:  # an engine from before: the file alone, default rules
    Place = None  # type: ignore[assignment,misc]
    Settings = None  # type: ignore[assignment,misc]


def _analyse(source: str, path: Path, preview: bool) -> list[tuple[int, int, str]]:
    if Place is None:
        diagnostics = analyze(source).diagnostics
    else:
        settings = Settings(preview=preview)
        diagnostics = analyze(source, settings, place=Place.of(path.resolve())).diagnostics
    return [(d.line, d.column, d.code) for d in diagnostics]


def main(corpus: str, out: str, preview: bool = False) -> None:
    found: dict[str, list[tuple[int, int, str]]] = {}
    for path in sorted(Path(corpus).rglob("*")):
        if path.suffix not in (".py", ".ipynb"):
            continue
        try:
            source = read_notebook(path).source if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
            diagnostics = _analyse(source, path, preview)
        except (AnalysisError, NotebookError, NotebookSkipped, UnicodeDecodeError, SyntaxError, ValueError):
            continue  # what a user's flake8 run would report as an error or skip
        found[str(path)] = diagnostics
    Path(out).write_text(json.dumps(found))
    print(f"{len(found)} files, {sum(len(v) for v in found.values())} diagnostics")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--preview" in sys.argv[3:])
