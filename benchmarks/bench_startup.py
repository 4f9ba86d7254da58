"""Start-up costs: the flake8 plugin's fixed cost, or (``--cli``) the command line's and the
language server's against ``python -c pass``.

Usage: python benchmarks/bench_startup.py [--rounds 15] [--bare-venv DIR] [--lean-venv DIR]
       python benchmarks/bench_startup.py --cli [--rounds 15] [--compare CHECKOUT]

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

``--cli`` (this environment, the checkout on ``PYTHONPATH``; see :func:`cli_main`): `python -c
pass`, `flake8-detach --version`, `check --no-cache` of an empty file, a warm `check` of the
torch file, and the language server's `initialize` round trip (from starting the console script
to reading the answer; also with ``FLAKE8_DETACH_LSP_FAST_START=0``, pygls answering, as before
lsp/fast_start.py), each the median of rounds whose order rotates. Targets: within +0.10 s of `python -c pass`; `initialize` answered within 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import IO, Any

from bench_flake8 import (
    DEFAULT_BARE_VENV,
    Run,
    bare_python,
    children_cpu,
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


CLI_BOUND = 0.10  # seconds over `python -c pass`
INITIALIZE_BOUND = 0.30  # seconds from the server's start to its answer to `initialize`


def tool_command() -> list[str]:
    """The console script beside this Python (what pre-commit and editors start), else -m."""
    script = shutil.which("flake8-detach", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "flake8_detach"]


def child_environment(checkout: Path, cache: Path) -> dict[str, str]:
    """Only ``checkout`` on the path; bytecode written and read as an installed package has it."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env.update(PYTHONPATH=str(checkout), FLAKE8_DETACH_CACHE_DIR=str(cache))
    return env


def timed_run(command: list[str], cwd: Path, env: dict[str, str]) -> Run:
    cpu_before = children_cpu()
    start = time.perf_counter()
    out = subprocess.run(command, check=False, capture_output=True, text=True, cwd=cwd, env=env)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return Run(wall, children_cpu() - cpu_before, out.stdout.splitlines())


def _send(stream: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    stream.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    stream.flush()


def _receive(stream: IO[bytes], wanted_id: int) -> dict[str, Any]:
    """The server's reply to request ``wanted_id`` (notifications before it are skipped)."""
    while True:
        length = 0
        while (line := stream.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        if not line:
            raise SystemExit("the language server closed its output before answering")
        message: dict[str, Any] = json.loads(stream.read(length))
        if message.get("id") == wanted_id:
            return message


def time_initialize(command: list[str], cwd: Path, env: dict[str, str]) -> Run:
    """From starting `flake8-detach lsp` to reading its answer to `initialize`; then shut down."""
    start = time.perf_counter()
    server = subprocess.Popen([*command, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    assert server.stdin is not None and server.stdout is not None
    try:
        _send(server.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": os.getpid(), "rootUri": cwd.as_uri(), "capabilities": {}}})
        reply = _receive(server.stdout, 1)
        wall = time.perf_counter() - start
        if "result" not in reply:
            raise SystemExit(f"initialize failed: {reply}")
        _send(server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        _receive(server.stdout, 2)
        _send(server.stdin, {"jsonrpc": "2.0", "method": "exit"})
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return Run(wall, float("nan"), [])


def cli_main(rounds: int, compare: list[Path]) -> int:
    """`--cli`: each case against `python -c pass`, for this checkout and each ``compare`` one.

    Every case runs once untimed first (it writes the bytecode caches, as installing does, and
    fills the results cache the warm `check` reads), then ``rounds`` rounds, the order of the
    cases rotating each round so that no case always runs after the same neighbour.
    """
    checkouts = {"this checkout": REPO, **{f"compare: {path}": path.resolve() for path in compare}}
    with tempfile.TemporaryDirectory(prefix="flake8-detach-startup-") as scratch:
        workdir = Path(scratch)
        (workdir / "empty.py").write_text("")
        (workdir / "model.py").write_text(NO_CANDIDATE)
        plain = child_environment(REPO, workdir / "cache-plain")
        cases: dict[str, Callable[[], Run]] = {
            "python -c pass": partial(timed_run, [sys.executable, "-c", "pass"], workdir, plain),
            "import pygls + lsprotocol": partial(timed_run, [sys.executable, "-c", "import pygls.lsp.server"],
                                                 workdir, plain),
        }
        for name, checkout in checkouts.items():
            env = child_environment(checkout, workdir / f"cache-{len(cases)}")
            tool = tool_command()
            cases[f"{name}: --version"] = partial(timed_run, [*tool, "--version"], workdir, env)
            cases[f"{name}: check --no-cache empty.py"] = partial(
                timed_run, [*tool, "check", "--no-cache", "empty.py"], workdir, env)
            cases[f"{name}: check model.py (warm cache)"] = partial(timed_run, [*tool, "check", "model.py"], workdir, env)
            cases[f"{name}: lsp initialize"] = partial(time_initialize, tool, workdir, env)
            if checkout == REPO:  # the same, pygls answering (as before lsp/fast_start.py)
                plain_pygls = {**env, "FLAKE8_DETACH_LSP_FAST_START": "0"}
                cases[f"{name}: lsp initialize, fast start off"] = partial(time_initialize, tool, workdir,
                                                                          plain_pygls)
        for case in cases.values():
            case()
        runs: dict[str, list[Run]] = {label: [] for label in cases}
        labels = list(cases)
        for round_number in range(rounds):
            shift = round_number % len(labels)
            for label in labels[shift:] + labels[:shift]:
                runs[label].append(cases[label]())
    print(f"Python {platform.python_version()} on {platform.system()}, {os.cpu_count()} CPUs; "
          f"{' '.join(tool_command())}; rounds: {rounds}; medians of wall-clock seconds "
          "(and of CPU seconds, user + sys, steadier on a shared machine)")
    base = statistics.median(run.wall for run in runs["python -c pass"])
    base_cpu = statistics.median(run.cpu for run in runs["python -c pass"])
    for label, measured in runs.items():
        wall = statistics.median(run.wall for run in measured)
        line = f"{label:52} {wall:6.3f}s  {wall - base:+.3f}s vs python -c pass"
        if "lsp initialize" not in label:
            cpu = statistics.median(run.cpu for run in measured)
            line += f"  (cpu {cpu:.3f}s, {cpu - base_cpu:+.3f}s)"
        if "lsp initialize" in label:
            line += f"  ({'meets' if wall <= INITIALIZE_BOUND else 'MISSES'} the {INITIALIZE_BOUND} s bound)"
        elif ": " in label:
            line += f"  ({'meets' if wall - base <= CLI_BOUND else 'MISSES'} the +{CLI_BOUND:.2f} s bound)"
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--bare-venv", type=Path, default=DEFAULT_BARE_VENV)
    parser.add_argument("--lean-venv", type=Path, default=DEFAULT_LEAN_VENV)
    parser.add_argument("--cli", action="store_true",
                        help="time the command line and the language server instead of the flake8 plugin")
    parser.add_argument("--compare", type=Path, action="append", default=[], metavar="CHECKOUT",
                        help="with --cli: also time another checkout (e.g. an older commit's), side by side")
    args = parser.parse_args(argv)
    if args.cli:
        return cli_main(args.rounds, args.compare)
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
