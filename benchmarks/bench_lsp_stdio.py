"""The language server end to end, over stdio, as an editor drives it: latency, CPU and memory.

Usage: python benchmarks/bench_lsp_stdio.py [--pythonpath CHECKOUT] [--big-mb 5] [--timeout 120]

It starts `python -m flake8_detach lsp` (from ``--pythonpath``, default this checkout, so an older
checkout can be measured beside it in the same way) and plays four scenes of issue 22, item 17:

1. a 6,015-line buffer with 300 diagnostics is opened: time to its first diagnostics, then a code
   action request at the cursor without `only` (what every cursor move sends);
2. 20 edits 0.5 s apart: the server's CPU time until it is idle again;
3. three large buffers open and 50 config-file events in 5 s: the server's CPU time;
4. a 5 MB buffer is opened: time to its first diagnostics (published, or the size-bound note),
   and the server's peak resident memory (VmHWM).

CPU time and memory come from /proc (Linux). Figures go to stdout, one line per scene.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any

HERE = Path(__file__).resolve().parent.parent


def build_source(lines: int, hazards: int) -> str:
    head = ["import torch", "model = torch.nn.Linear(4, 2)", "x = torch.ones(4)"]
    body = [f"y{i} = model(x).numpy()" for i in range(hazards)]
    filler = [f"z{i} = {i} * 2  # plain Python, nothing to report" for i in range(lines - len(head) - len(body))]
    return "\n".join(head + body + filler) + "\n"


class Client:
    """A minimal LSP client: Content-Length framing, a reader thread, notifications queued."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.messages: Queue[dict[str, Any]] = Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stream.read(1)
                if not byte:
                    return
                header += byte
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def request(self, method: str, params: Any, timeout: float) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m, timeout)

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def wait(self, wanted: Any, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.001))
            except Empty:
                raise TimeoutError from None
            if "method" in message and "id" in message:  # a request of the server: answer it
                self.send({"id": message["id"], "result": None})
            if wanted(message):
                return message

    def published(self, uri: str, timeout: float) -> dict[str, Any]:
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri, timeout)

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def idle_cpu(self, settle: float = 1.0, limit: float = 300.0) -> float:
        """The CPU time once the server has used none for ``settle`` seconds."""
        start = time.monotonic()
        last = self.cpu_seconds()
        while time.monotonic() - start < limit:
            time.sleep(settle)
            now = self.cpu_seconds()
            if now - last < 0.02:
                return now
            last = now
        return last


def open_document(client: Client, uri: str, text: str) -> None:
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pythonpath", default=str(HERE), help="the checkout whose server is measured")
    parser.add_argument("--big-mb", type=float, default=5.0)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for any one answer")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="flake8-detach-lsp-stdio-"))
    (folder / "pyproject.toml").write_text("[tool.flake8-detach]\n")
    env = {**os.environ, "PYTHONPATH": args.pythonpath, "PYTHONWARNINGS": "ignore"}
    client = Client([sys.executable, "-m", "flake8_detach", "lsp"], env, folder)
    root = folder.as_uri()
    client.request("initialize", {"processId": os.getpid(), "rootUri": root, "capabilities": {},
                                  "workspaceFolders": [{"uri": root, "name": "bench"}]}, args.timeout)
    client.notify("initialized", {})
    print(f"server from {args.pythonpath}")

    source = build_source(6015, 300)
    uri = f"{root}/train.py"
    start = time.perf_counter()
    open_document(client, uri, source)
    first = client.published(uri, args.timeout)
    opened = time.perf_counter() - start
    cursor = {"start": {"line": 50, "character": 0}, "end": {"line": 51, "character": 0}}
    start = time.perf_counter()
    answer = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": cursor,
                                                        "context": {"diagnostics": []}}, args.timeout)
    cursor_ms = (time.perf_counter() - start) * 1000
    print(f"1. 6,015 lines, {len(first['params']['diagnostics'])} diagnostics: first diagnostics after {opened:.1f} s; "
          f"code actions at the cursor (no `only`) {cursor_ms:.1f} ms ({len(answer.get('result') or [])} actions)")

    before = client.idle_cpu()
    for version in range(2, 22):
        source += f"w{version} = {version}\n"
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": source}]})
        time.sleep(0.5)
    spent = client.idle_cpu() - before
    print(f"2. 20 edits 0.5 s apart: {spent:.1f} s of server CPU until idle")

    for name in ("a.py", "b.py"):
        open_document(client, f"{root}/{name}", source)
        client.published(f"{root}/{name}", args.timeout)
    before = client.idle_cpu()
    for _ in range(50):
        client.notify("workspace/didChangeWatchedFiles",
                      {"changes": [{"uri": f"{root}/pyproject.toml", "type": 2}]})
        time.sleep(0.1)
    spent = client.idle_cpu() - before
    print(f"3. three large buffers open, 50 config events in 5 s: {spent:.1f} s of server CPU until idle")

    big = build_source(6015, 300)
    big = big * max(int(args.big_mb * 1_000_000 / len(big)), 1)
    big_uri = f"{root}/big.py"
    start = time.perf_counter()
    open_document(client, big_uri, big)
    try:
        published = client.published(big_uri, args.timeout)
        waited = f"{time.perf_counter() - start:.2f} s"
        detail = "; ".join(d["message"][:90] for d in published["params"]["diagnostics"][:1])
    except TimeoutError:
        waited, detail = f"more than {args.timeout:.0f} s (stopped waiting)", ""
    print(f"4. a {len(big.encode()) / 1e6:.1f} MB buffer: first diagnostics after {waited}; "
          f"server peak RSS {client.peak_rss_mb():.0f} MB ({detail})")
    client.process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
