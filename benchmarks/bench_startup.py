"""The fixed cost of the plugin: flake8 on a file with nothing to report, with and without it.

Usage: python benchmarks/bench_startup.py [--rounds 15] [--bare-venv DIR] [--lean-venv DIR]

pre-commit and editors lint one or a few files per run, so what most runs pay is the cost of
loading the plugin, not of analysing. Both sides are lean environments so that nothing but the
plugin differs (flake8 scans every installed distribution's entry points, so a project venv full
of torch, numpy and test tools would be slower for reasons that are not the plugin's):

* WITH: ``--lean-venv`` (default ``/tmp/flake8-detach-bench/lean``): flake8 at the same versions
  plus this checkout installed without extras (libcst, flake8), rebuilt on every run;
* WITHOUT: ``--bare-venv``: flake8 alone (shared with ``bench_flake8.py``).

Files: an empty file, and a torch file with no candidate (imports torch, no `.numpy()`,
`.data`, `.detach()` or NumPy call). Alternating rounds, medians of wall-clock and CPU time,
and the difference in seconds (the target: at most +0.03 s).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_flake8 import (
    DEFAULT_BARE_VENV,
    Run,
    bare_python,
    ensure_bare_venv,
    flake8_command,
    pinned_requirements,
    plugin_listed,
    time_flake8,
)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_LEAN_VENV = DEFAULT_BARE_VENV.parent / "lean"
NO_CANDIDATE = "import torch\nfrom torch import nn\n\nlayer = nn.Linear(2, 2)\nprint(layer(torch.ones(2)).sum())\n"


def build_lean_venv(venv: Path) -> Path:
    python = bare_python(venv)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    *pinned_requirements(), str(REPO)], check=True, cwd=tempfile.gettempdir())
    return python


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--bare-venv", type=Path, default=DEFAULT_BARE_VENV)
    parser.add_argument("--lean-venv", type=Path, default=DEFAULT_LEAN_VENV)
    args = parser.parse_args(argv)
    without_python = ensure_bare_venv(args.bare_venv)
    print(f"building {args.lean_venv} (flake8 + this checkout, no extras) ...", flush=True)
    with_python = build_lean_venv(args.lean_venv)
    with tempfile.TemporaryDirectory(prefix="flake8-detach-startup-") as scratch:
        workdir = Path(scratch)
        files = {"empty file": workdir / "empty.py", "torch file, no candidate": workdir / "model.py"}
        files["empty file"].write_text("")
        files["torch file, no candidate"].write_text(NO_CANDIDATE)
        if not plugin_listed(with_python, workdir) or plugin_listed(without_python, workdir):
            raise SystemExit("the lean venv must list flake8-detach and the bare venv must not")
        print(f"flake8: {' '.join(pinned_requirements())}; rounds: {args.rounds}")
        for label, path in files.items():
            runs: dict[str, list[Run]] = {"with": [], "without": []}
            for round_number in range(args.rounds):
                order = ("with", "without") if round_number % 2 == 0 else ("without", "with")
                for side in order:
                    python = with_python if side == "with" else without_python
                    runs[side].append(time_flake8(flake8_command(python, [path]), workdir))
            for measure in ("wall", "cpu"):
                with_s = statistics.median(getattr(run, measure) for run in runs["with"])
                without_s = statistics.median(getattr(run, measure) for run in runs["without"])
                verdict = "meets" if with_s - without_s <= 0.03 else "MISSES"
                print(f"{label:26} {measure:4}: with {with_s:.3f}s  without {without_s:.3f}s  "
                      f"difference {with_s - without_s:+.3f}s ({verdict} the +0.03 s target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
