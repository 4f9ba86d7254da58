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
for value comparisons, and returns a copy where the original call would have raised (the tensor
requires grad while grad is on, or is not on the CPU): `.numpy(force=True)` shares the CPU tensor's
memory, so without the copy a later write through the array would change the tensor in the
reference as well and hide a fix that forgot `.copy()`; torch's array constructors are handed a
C-contiguous copy in native byte order, as DET108's reference) and ``cpu`` / ``to`` / ``cuda`` (whether the result is the tensor itself
and which ``grad_fn`` it carries: how DET102 is observed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import faulthandler
import json
import math
import os
import random
import re
import select
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
OUTPUT_TAIL = 2000  # characters of a run's traceback kept; of its stdout/stderr, the first and last half of it
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
            data = value.detach().cpu()
            # JSON has no complex numbers: a complex tensor's data is [real, imaginary] pairs.
            picture["data"] = (torch.view_as_real(data.resolve_conj()) if data.is_complex() else data).tolist()
        grad = value.grad if value.is_leaf else None
        if grad is not None:
            picture["grad"] = serialize(grad, depth + 1)
        return picture
    if isinstance(value, numpy.ndarray):
        if value.dtype == object or value.size > MAX_ELEMENTS:
            return {"kind": "array", "dtype": str(value.dtype), "shape": list(value.shape), "data": None}
        pairs = numpy.stack([value.real, value.imag], axis=-1) if numpy.iscomplexobj(value) else value
        return {"kind": "array", "dtype": str(value.dtype), "shape": list(value.shape), "data": pairs.tolist()}
    if isinstance(value, numpy.generic):
        item = value.item()
        return {"kind": "scalar", "value": [item.real, item.imag] if isinstance(item, complex) else item}
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
            would_raise = False
            if probes.force_numpy:
                would_raise = not kwargs.get("force") and (
                    (self.requires_grad and torch.is_grad_enabled()) or self.device.type != "cpu"
                )
                kwargs["force"] = True
            result = original_numpy(self, *args, **kwargs)
            if would_raise:
                # Where the original raised, the reference must not alias the tensor: on the CPU
                # `.numpy(force=True)` shares its memory, and a later write through the array
                # would change the tensor, hiding a fix that forgot to copy.
                result = result.copy()
            caller = sys._getframe(1)
            if caller.f_code.co_filename == probes.filename:
                probes.conversions.append({"line": caller.f_lineno, "value": serialize(result.copy())})
            return result

        tensor_class.numpy = numpy  # type: ignore[method-assign]
        for name in self.MOVES:
            setattr(tensor_class, name, self._move_probe(name, getattr(tensor_class, name)))
        if self.force_numpy:
            for name in self.ARRAY_CONSTRUCTORS:
                setattr(torch, name, _takes_native_copy(getattr(torch, name)))
            import torch.utils.dlpack

            torch.utils.dlpack.from_dlpack = _takes_native_copy(torch.utils.dlpack.from_dlpack)

    ARRAY_CONSTRUCTORS = ("from_numpy", "as_tensor", "asarray", "tensor", "from_dlpack")

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


def _takes_native_copy(original: Any) -> Any:
    """`torch.from_numpy` and the like, handed an ndarray as torch can take it: C-contiguous, native order."""
    import numpy

    def constructor(data: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(data, numpy.ndarray):
            data = numpy.ascontiguousarray(data.astype(data.dtype.newbyteorder("="), copy=False))
        return original(data, *args, **kwargs)

    return constructor


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


def _child(job: dict[str, Any], result_path: str, output_fd: int, limits: dict[str, Any]) -> None:
    """Body of a forked child: send its output to the pipe, apply the limits, run the job, write the result."""
    for signum in HANDLED_SIGNALS:  # the runner's clean-up handlers are not this run's
        signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    os.close(output_fd)
    memory = apply_limits(limits, job)
    # A fatal signal (torch aborting in C++) leaves no result: the Python stack it struck goes
    # here, for the parent to name the fixture's line (_name_fatal_signal).
    fault = open(result_path + FAULT_SUFFIX, "w", encoding="utf-8")  # noqa: SIM115 - open until the process ends
    faulthandler.enable(file=fault)
    try:
        result = execute(job)
    except BaseException as error:  # noqa: BLE001 - a harness failure must still produce a result
        result = {"outcome": "crashed", "exception": {"type": type(error).__name__, "message": str(error), "line": None}}
    _name_memory_limit(result, memory)
    with contextlib.suppress(Exception):  # the fixture may have closed them
        sys.stdout.flush()
        sys.stderr.flush()
    lift_file_size_limit()
    with open(result_path + ".tmp", "w", encoding="utf-8") as stream:
        json.dump(result, stream)
    os.replace(result_path + ".tmp", result_path)


# --- the sandbox: limits, output, process groups ---------------------------------------------------

DEFAULT_MEMORY_LIMIT = 4096  # MiB of data (heap, anonymous mappings) one run may use; torch itself needs about 250
FILE_SIZE_LIMIT = 256 * 2**20  # bytes: the largest file a run may write
CPU_MARGIN = 2  # seconds of CPU time beyond the run's timeout (the wall-clock timeout normally ends it first)
HANDLED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))
# Lines on stderr naming a run's process group as it starts and as it is gone: the parent kills the
# groups still open if it has to stop the runner the hard way.
GROUP_MARKER = "flake8-detach-verify-group"

try:
    import resource
except ImportError:  # not on Windows (which has no fork: the runner does not run there anyway)
    resource = None  # type: ignore[assignment]


def apply_limits(limits: dict[str, Any], job: dict[str, Any]) -> int | None:
    """Limit this process (and what it starts): data memory, CPU time, file size. The memory limit set, in MiB.

    The memory limit is RLIMIT_DATA (the address space limit, RLIMIT_AS, would count the large
    areas torch and CUDA reserve without using). It is not applied to CUDA runs: the CUDA driver's
    own mappings were not measured against it.
    """
    if resource is None:
        return None
    memory = limits.get("memory")
    applied = None
    kind = getattr(resource, "RLIMIT_DATA", None) or getattr(resource, "RLIMIT_AS", None)
    cuda = str(job.get("device", "")).startswith("cuda")
    if memory and kind is not None and not cuda and _set_limit(kind, int(memory) * 2**20, int(memory) * 2**20):
        applied = int(memory)
    timeout = float(job.get("timeout", 60))
    cpu = math.ceil(timeout) + CPU_MARGIN
    _set_limit(getattr(resource, "RLIMIT_CPU", None), cpu, cpu + 1)
    file_size = limits.get("file_size", FILE_SIZE_LIMIT)
    if file_size and hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit raises OSError (EFBIG) instead
        _set_limit(getattr(resource, "RLIMIT_FSIZE", None), int(file_size), None)
    return applied


def lift_file_size_limit() -> None:
    """The result file is the harness's, not the run's: let it be written whatever its size."""
    kind = getattr(resource, "RLIMIT_FSIZE", None) if resource is not None else None
    if kind is not None:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(kind, (resource.getrlimit(kind)[1], resource.getrlimit(kind)[1]))


def _set_limit(kind: int | None, soft: int, hard: int | None) -> bool:
    """Lower a limit (never raise one above what this process was given)."""
    if kind is None or resource is None:
        return False
    current_hard = resource.getrlimit(kind)[1]

    def lower(value: int, current: int) -> int:
        return value if current == resource.RLIM_INFINITY else min(value, current)

    new_hard = current_hard if hard is None else lower(hard, current_hard)
    new_soft = lower(soft, current_hard if new_hard == resource.RLIM_INFINITY else new_hard)
    try:
        resource.setrlimit(kind, (new_soft, new_hard))
    except (ValueError, OSError):
        return False
    return True


def _name_memory_limit(result: dict[str, Any], memory: int | None) -> None:
    """An allocation refused under the memory limit says so, in the words the report shows first."""
    exception = result.get("exception") or {}
    message = str(exception.get("message", ""))
    if memory and (exception.get("type") == "MemoryError" or "can't allocate memory" in message):
        exception["message"] = f"out of memory under the run's limit of {memory} MiB (--memory-limit); {message}"


class BoundedOutput:
    """What a run wrote to stdout/stderr, in constant memory: its start and its end, and how much was dropped."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if len(self.head) < self.keep:
            self.head += data[: self.keep - len(self.head)]
        self.tail = (self.tail + data[-self.keep :])[-self.keep :]

    def text(self) -> str:
        if self.total <= self.keep:
            return self.head.decode("utf-8", "replace")
        half = self.keep // 2
        head, tail = bytes(self.head[:half]), bytes(self.tail[-half:])
        dropped = self.total - len(head) - len(tail)
        note = f"\n[... output truncated: {dropped} bytes]\n"
        return head.decode("utf-8", "replace") + note + tail.decode("utf-8", "replace")


def _read_available(fd: int, output: BoundedOutput) -> bool:
    """Read what the pipe holds now; False at end of file."""
    while True:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not data:
            return False
        output.feed(data)


def _kill_group(pgid: int, leader_unreaped: bool) -> None:
    """Kill the run's process group, and its leader by pid as well (should it not lead a group)."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        with contextlib.suppress(OSError):
            killpg(pgid, signal.SIGKILL)
    if leader_unreaped:
        with contextlib.suppress(OSError):
            os.kill(pgid, signal.SIGKILL)


def _report_group(event: str, pgid: int) -> None:
    sys.stderr.write(f"{GROUP_MARKER} {event} {pgid}\n")
    sys.stderr.flush()


@dataclasses.dataclass
class _Running:
    index: int
    started: float
    deadline: float
    fd: int
    output: BoundedOutput


def _raise_exit(signum: int, frame: Any) -> None:
    """The first stop signal ends the runner through its `finally` clauses; later ones cannot cut them short."""
    for handled in HANDLED_SIGNALS:
        signal.signal(handled, signal.SIG_IGN)
    raise SystemExit(128 + signum)


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


def serve(
    jobs: list[dict[str, Any]], workers: int, scratch: str | None = None, limits: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Run every job in a forked child, at most ``workers`` at a time; results in job order.

    Each child leads its own process group, which is killed when the run ends (processes it
    started and left behind included), at its timeout, and when the runner stops for any reason.
    """
    limits = {"memory": DEFAULT_MEMORY_LIMIT, "file_size": FILE_SIZE_LIMIT} if limits is None else limits
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    own_scratch = scratch is None
    scratch = tempfile.mkdtemp(prefix="flake8-detach-verify-") if scratch is None else scratch
    os.makedirs(scratch, exist_ok=True)
    pending = list(range(len(jobs)))
    running: dict[int, _Running] = {}  # pid (= process group) -> the run
    try:
        _warm_up(jobs)
        while pending or running:
            while pending and len(running) < max(1, workers):
                index = pending.pop(0)
                pid, fd = _start(jobs[index], os.path.join(scratch, f"{index}.json"), [run.fd for run in running.values()], limits)
                started = time.monotonic()
                running[pid] = _Running(index, started, started + float(jobs[index].get("timeout", 60)), fd, BoundedOutput(OUTPUT_TAIL))
            ready = select.select([run.fd for run in running.values()], [], [], 0.01)[0] if running else []
            for pid, run in running.items():
                if run.fd in ready:
                    _read_available(run.fd, run.output)
            now = time.monotonic()
            for pid, run in list(running.items()):
                finished, status = os.waitpid(pid, os.WNOHANG)
                if finished == 0 and now <= run.deadline:
                    continue
                _end(pid, run, reap=finished == 0)
                del running[pid]
                if finished == 0:
                    results[run.index] = {"outcome": "timeout", "exception": None, "seconds": round(now - run.started, 2)}
                else:
                    results[run.index] = _collect(scratch, run.index, status)
                results[run.index]["output"] = run.output.text()  # type: ignore[index]
                if finished != 0 and os.WIFSIGNALED(status):
                    _name_fatal_signal(results[run.index], jobs[run.index]["filename"],  # type: ignore[arg-type]
                                       os.path.join(scratch, f"{run.index}.json{FAULT_SUFFIX}"), os.WTERMSIG(status))
                _report_progress(results)
    finally:
        for pid, run in running.items():
            with contextlib.suppress(Exception):
                _end(pid, run, reap=True)
        if own_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            for index in range(len(jobs)):
                for suffix in (".json", ".json.tmp", f".json{FAULT_SUFFIX}"):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(scratch, f"{index}{suffix}"))
    return [result if result is not None else {"outcome": "crashed", "exception": None} for result in results]


def _start(job: dict[str, Any], result_path: str, other_fds: list[int], limits: dict[str, Any]) -> tuple[int, int]:
    """Fork the child of one job, in a process group of its own; its pid and the pipe its output comes through."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            with contextlib.suppress(OSError):
                os.setpgid(0, 0)
            os.close(read_fd)
            for fd in other_fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            _child(job, result_path, write_fd, limits)
        finally:
            os._exit(0)
    with contextlib.suppress(OSError):  # both sides set it: whichever runs first, no window without it
        os.setpgid(pid, pid)
    _report_group("start", pid)
    os.close(write_fd)
    os.set_blocking(read_fd, False)
    return pid, read_fd


def _end(pid: int, run: _Running, reap: bool) -> None:
    """Kill what is left of the run's process group, reap the child, keep the rest of its output."""
    _kill_group(pid, leader_unreaped=reap)
    if reap:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:  # the group is dead: the pipe ends once the kernel has closed its ends
        if not select.select([run.fd], [], [], 0.1)[0]:
            continue
        if not _read_available(run.fd, run.output):
            break
    with contextlib.suppress(OSError):  # already closed, if a signal cut the first _end of this run short
        os.close(run.fd)
    _report_group("end", pid)


def _report_progress(results: list[dict[str, Any] | None]) -> None:
    """One marker line per finished job on stderr: the parent draws its progress bar from them."""
    done = sum(result is not None for result in results)
    sys.stderr.write(f"{PROGRESS_MARKER} {done}/{len(results)}\n")
    sys.stderr.flush()


def _collect(scratch: str, index: int, status: int) -> dict[str, Any]:
    result_path = os.path.join(scratch, f"{index}.json")
    try:
        with open(result_path, encoding="utf-8") as stream:
            result: dict[str, Any] = json.load(stream)
    except (OSError, ValueError):
        result = {"outcome": "crashed", "exception": {"type": "crash", "message": f"the run died ({_how(status)})", "line": None}}
    return result


FAULT_SUFFIX = ".fault"
_FAULT_FRAME = re.compile(r'File "(?P<file>.*)", line (?P<line>\d+)')
_CPP_WHAT = re.compile(r"what\(\):\s*(?P<what>.+)")


def _name_fatal_signal(result: dict[str, Any], filename: str, fault_path: str, signum: int) -> None:
    """A run killed by SIGABRT (torch's C++ code gave up: `torch.from_dlpack` of a negative-stride
    array) is described as an "abort" at the fixture's innermost line that faulthandler saw on the
    stack, with the C++ error's `what()` from the run's output."""
    if signum != signal.SIGABRT or result.get("outcome") != "crashed":
        return
    try:
        with open(fault_path, encoding="utf-8", errors="replace") as stream:
            stack = stream.read()
    except OSError:
        return
    lines = [int(match["line"]) for match in _FAULT_FRAME.finditer(stack) if match["file"] == filename]
    what = _CPP_WHAT.search(result.get("output") or "")
    result["exception"] = {
        "type": "abort",
        "message": what["what"].strip() if what else f"the run died (signal {signum})",
        "line": lines[0] if lines else None,  # most recent call first
        "traceback": stack[-OUTPUT_TAIL:],
    }


def _how(status: int) -> str:
    if not os.WIFSIGNALED(status):
        return f"exit status {os.WEXITSTATUS(status)}"
    signum = os.WTERMSIG(status)
    if signum == getattr(signal, "SIGXCPU", None):
        return f"signal {signum}: over its CPU time limit"
    if signum == signal.SIGKILL:
        return f"signal {signum}: killed, maybe for lack of memory"
    return f"signal {signum}"


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if len(arguments) != 1:
        print("usage: python runner.py RESULTS.json < jobs.json", file=sys.stderr)
        return 2
    # Run by path, Python put this folder first on sys.path: a fixture's `import report` must not
    # find this package's modules.
    here = Path(__file__).resolve().parent
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != here]
    for signum in HANDLED_SIGNALS:  # stop as an exit does: `finally` kills the runs and removes the scratch
        signal.signal(signum, _raise_exit)
    request = json.load(sys.stdin)
    results = serve(request["jobs"], int(request.get("workers", 2)), request.get("scratch"), request.get("limits"))
    with open(arguments[0], "w", encoding="utf-8") as stream:
        json.dump(results, stream)
    return 0


if __name__ == "__main__":
    sys.exit(main())
