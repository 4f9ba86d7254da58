"""The subprocess side of `verify`: execute fixture sources and report what happened, as JSON.

Run as ``python path/to/runner.py RESULTS.json`` (by path: the package, and libcst with it, is not
imported) with a JSON object
``{"workers": N, "jobs": [...]}`` on standard input. Importing torch costs 1-2 s, so this process
imports it once and forks a fresh child per job (a small fork server): every run starts from the
same clean state, with its own globals, seeds and probes, and a job that hangs or crashes is
killed or reported without taking the others down. The parent never touches CUDA (a CUDA context
does not survive a fork); each child initialises its own.

Each child executes the source compiled under the fixture's own file name, so the traceback
frames of that file give the line an exception came from. Probes wrap four ``torch.Tensor``
methods and record calls made directly from the fixture's code: ``numpy`` (the converted arrays,
in order; with ``force_numpy`` it converts as ``.numpy(force=True)`` does, which is the reference
for value comparisons) and ``cpu`` / ``to`` / ``cuda`` (whether the result is the tensor itself
and which ``grad_fn`` it carries: how DET102 is observed).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

MAX_ITEMS = 64  # list/tuple elements kept per value
MAX_ELEMENTS = 4096  # tensor/array elements kept per value
OUTPUT_TAIL = 2000  # characters of a run's stdout/stderr kept
# Lines on stderr that count finished jobs (filtered out of any error message).
PROGRESS_MARKER = "flake8-detach-verify-progress"


def serialize(value: Any, depth: int = 0) -> dict[str, Any] | None:
    """A JSON-able picture of a value worth comparing (tensors, arrays, modules, numbers); else None."""
    import numpy
    import torch

    if depth > 3:
        return None
    if isinstance(value, torch.Tensor):
        picture: dict[str, Any] = {
            "kind": "tensor",
            "device": str(value.device),
            "dtype": str(value.dtype),
            "shape": list(value.shape),
            "requires_grad": bool(value.requires_grad),
            "grad_fn": _grad_fn_name(value),
            "data": None,
        }
        if value.device.type != "meta" and value.numel() <= MAX_ELEMENTS and not value.is_sparse:
            picture["data"] = value.detach().cpu().tolist()
        grad = value.grad if value.is_leaf else None
        if grad is not None:
            picture["grad"] = serialize(grad, depth + 1)
        return picture
    if isinstance(value, numpy.ndarray):
        if value.dtype == object or value.size > MAX_ELEMENTS:
            return {"kind": "array", "dtype": str(value.dtype), "shape": list(value.shape), "data": None}
        return {"kind": "array", "dtype": str(value.dtype), "shape": list(value.shape), "data": value.tolist()}
    if isinstance(value, numpy.generic):
        return {"kind": "scalar", "value": value.item()}
    if isinstance(value, torch.nn.Module):
        tensors = {name: serialize(tensor, depth + 1) for name, tensor in value.state_dict(keep_vars=True).items()}
        return {"kind": "module", "tensors": tensors}
    if isinstance(value, (list, tuple)):
        items = [serialize(item, depth + 1) for item in value[:MAX_ITEMS]]
        if any(item is None for item in items):
            return None
        return {"kind": "list", "items": items}
    if isinstance(value, bool) or value is None or isinstance(value, (int, float, str)):
        return {"kind": "scalar", "value": value}
    return None


def _grad_fn_name(tensor: Any) -> str | None:
    return type(tensor.grad_fn).__name__ if tensor.grad_fn is not None else None


class Probes:
    """Records the fixture's own calls to ``Tensor.numpy`` and to the device moves."""

    MOVES = ("cpu", "to", "cuda")

    def __init__(self, filename: str, force_numpy: bool) -> None:
        self.filename = filename
        self.force_numpy = force_numpy
        self.conversions: list[dict[str, Any]] = []
        self.moves: list[dict[str, Any]] = []

    def install(self) -> None:
        import torch

        tensor_class = torch.Tensor
        original_numpy = tensor_class.numpy
        probes = self

        def numpy(self: Any, *args: Any, **kwargs: Any) -> Any:
            if probes.force_numpy:
                kwargs["force"] = True
            result = original_numpy(self, *args, **kwargs)
            caller = sys._getframe(1)
            if caller.f_code.co_filename == probes.filename:
                probes.conversions.append({"line": caller.f_lineno, "value": serialize(result.copy())})
            return result

        tensor_class.numpy = numpy  # type: ignore[method-assign]
        for name in self.MOVES:
            setattr(tensor_class, name, self._move_probe(name, getattr(tensor_class, name)))

    def _move_probe(self, name: str, original: Any) -> Any:
        import torch

        probes = self

        def move(self: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            caller = sys._getframe(1)
            if caller.f_code.co_filename == probes.filename and isinstance(result, torch.Tensor):
                probes.moves.append(
                    {
                        "line": caller.f_lineno,
                        "method": name,
                        "same": result is self,
                        "input_requires_grad": bool(self.requires_grad),
                        "input_device": str(self.device),
                        "device": str(result.device),
                        "grad_fn": _grad_fn_name(result),
                    }
                )
            return result

        move.__name__ = name
        return move


def exception_line(error: BaseException, filename: str) -> int | None:
    """The line of the innermost traceback frame that belongs to the fixture file."""
    line = None
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == filename:
            line = trace.tb_lineno
        trace = trace.tb_next
    if line is None and isinstance(error, SyntaxError) and error.filename == filename:
        line = error.lineno
    return line


def execute(job: dict[str, Any]) -> dict[str, Any]:
    """Run one job in this (child) process and describe the outcome."""
    import numpy
    import torch

    filename = job["filename"]
    os.environ["DEVICE"] = job["device"]
    torch.set_num_threads(1)
    torch.manual_seed(0)
    numpy.random.seed(0)
    random.seed(0)
    probes = Probes(filename, bool(job.get("force_numpy")))
    probes.install()
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": filename, "__builtins__": __builtins__}
    sys.argv = [filename]
    sys.path.insert(0, str(Path(filename).parent))
    result: dict[str, Any] = {"outcome": "ok", "exception": None}
    executed: set[int] = set()
    started = time.perf_counter()
    sys.settrace(_line_tracer(filename, executed))
    try:
        exec(compile(job["source"], filename, "exec"), namespace)  # noqa: S102 - running the fixture is the point
    except SystemExit as error:
        if error.code not in (None, 0):
            result["outcome"] = "raised"
            result["exception"] = _describe(error, filename)
    except BaseException as error:  # noqa: BLE001 - what the fixture raised is the observation
        result["outcome"] = "raised"
        result["exception"] = _describe(error, filename)
    finally:
        sys.settrace(None)
    result["seconds"] = round(time.perf_counter() - started, 4)
    result["executed_lines"] = sorted(executed)
    result["conversions"] = probes.conversions
    result["moves"] = probes.moves
    result["values"] = _globals_picture(namespace)
    return result


def _line_tracer(filename: str, executed: set[int]) -> Any:
    """A trace function recording the lines of ``filename`` that ran (other code is not traced)."""

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            executed.add(frame.f_lineno)
        return local

    def trace(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == filename else None

    return trace


def _describe(error: BaseException, filename: str) -> dict[str, Any]:
    return {
        "type": type(error).__name__,
        "message": str(error).strip().splitlines()[0] if str(error).strip() else "",
        "line": exception_line(error, filename),
        "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__))[-OUTPUT_TAIL:],
    }


def _globals_picture(namespace: dict[str, Any]) -> dict[str, Any]:
    pictures: dict[str, Any] = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        try:
            picture = serialize(value)
        except Exception:  # noqa: BLE001 - a value that cannot be read is not compared
            picture = None
        if picture is not None:
            pictures[name] = picture
    return pictures


def _child(job: dict[str, Any], result_path: str, output_path: str) -> None:
    """Body of a forked child: capture its output, run the job, write the result file."""
    with open(output_path, "w", encoding="utf-8") as output:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(output.fileno(), 1)
        os.dup2(output.fileno(), 2)
    try:
        result = execute(job)
    except BaseException as error:  # noqa: BLE001 - a harness failure must still produce a result
        result = {"outcome": "crashed", "exception": {"type": type(error).__name__, "message": str(error), "line": None}}
    with contextlib.suppress(Exception):  # the fixture may have closed them
        sys.stdout.flush()
        sys.stderr.flush()
    with open(result_path + ".tmp", "w", encoding="utf-8") as stream:
        json.dump(result, stream)
    os.replace(result_path + ".tmp", result_path)


# Slow to import, imported by fixtures, and safe to import before a fork (no threads started):
# importing them once here saves each run about a second.
WARM_IMPORTS = ("matplotlib", "matplotlib.pyplot", "pandas")
_IMPORTED = re.compile(r"^[ \t]*(?:import|from)[ \t]+([\w.]+)", re.MULTILINE)


def _warm_up(jobs: list[dict[str, Any]]) -> None:
    """Pay the one-time costs (imports, meta kernels' registration: seconds) once, before forking.

    One thread only: an OpenMP pool started here would not survive the fork. CUDA is never
    touched here, since a CUDA context cannot be used in a forked child.
    """
    import importlib

    import numpy.random  # noqa: F401 - the children seed it
    import torch

    torch.set_num_threads(1)
    if any(job["device"] == "meta" for job in jobs):
        inputs = torch.ones(2, 3, device="meta", requires_grad=True)
        (torch.nn.functional.linear(inputs, torch.ones(1, 3, device="meta")).exp() * 2).sum()
    wanted = {name for job in jobs for name in _IMPORTED.findall(job["source"])}
    for name in WARM_IMPORTS:
        if name in wanted:
            if name == "matplotlib.pyplot":
                os.environ.setdefault("MPLBACKEND", "Agg")  # no display in a runner
            with contextlib.suppress(Exception):
                importlib.import_module(name)


def serve(jobs: list[dict[str, Any]], workers: int) -> list[dict[str, Any]]:
    """Run every job in a forked child, at most ``workers`` at a time; results in job order."""
    _warm_up(jobs)
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    scratch = tempfile.mkdtemp(prefix="flake8-detach-verify-")
    pending = list(range(len(jobs)))
    running: dict[int, tuple[int, float, float]] = {}  # pid -> (job index, start, deadline)
    while pending or running:
        while pending and len(running) < max(1, workers):
            index = pending.pop(0)
            job = jobs[index]
            result_path = os.path.join(scratch, f"{index}.json")
            output_path = os.path.join(scratch, f"{index}.out")
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                try:
                    _child(job, result_path, output_path)
                finally:
                    os._exit(0)
            started = time.monotonic()
            running[pid] = (index, started, started + float(job.get("timeout", 60)))
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for child, (index, started, deadline) in list(running.items()):
                if now > deadline:
                    os.kill(child, signal.SIGKILL)
                    os.waitpid(child, 0)
                    del running[child]
                    results[index] = {
                        "outcome": "timeout",
                        "exception": None,
                        "seconds": round(now - started, 2),
                        "output": _read_tail(os.path.join(scratch, f"{index}.out")),
                    }
            time.sleep(0.005)
            continue
        if pid not in running:
            continue
        index, started, _ = running.pop(pid)
        results[index] = _collect(scratch, index, status)
        _report_progress(results)
    shutil.rmtree(scratch, ignore_errors=True)
    return [result if result is not None else {"outcome": "crashed", "exception": None} for result in results]


def _report_progress(results: list[dict[str, Any] | None]) -> None:
    """One marker line per finished job on stderr: the parent draws its progress bar from them."""
    done = sum(result is not None for result in results)
    sys.stderr.write(f"{PROGRESS_MARKER} {done}/{len(results)}\n")
    sys.stderr.flush()


def _collect(scratch: str, index: int, status: int) -> dict[str, Any]:
    result_path = os.path.join(scratch, f"{index}.json")
    output = _read_tail(os.path.join(scratch, f"{index}.out"))
    try:
        with open(result_path, encoding="utf-8") as stream:
            result: dict[str, Any] = json.load(stream)
    except (OSError, ValueError):
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit status {os.WEXITSTATUS(status)}"
        result = {"outcome": "crashed", "exception": {"type": "crash", "message": f"the run died ({how})", "line": None}}
    result["output"] = output
    return result


def _read_tail(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read()[-OUTPUT_TAIL:]
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if len(arguments) != 1:
        print("usage: python runner.py RESULTS.json < jobs.json", file=sys.stderr)
        return 2
    # Run by path, Python put this folder first on sys.path: a fixture's `import report` must not
    # find this package's modules.
    here = Path(__file__).resolve().parent
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != here]
    request = json.load(sys.stdin)
    results = serve(request["jobs"], int(request.get("workers", 2)))
    with open(arguments[0], "w", encoding="utf-8") as stream:
        json.dump(results, stream)
    return 0


if __name__ == "__main__":
    sys.exit(main())
