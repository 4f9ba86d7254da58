"""The early answer to `initialize` (flake8_detach/lsp/fast_start.py): exactly pygls's answer.

`flake8-detach lsp` answers `initialize` from a static description of its capabilities while
pygls loads in a thread, then replays that message to pygls and drops pygls's own answer. These
tests hold the early answer to what the real server (create_server) answers for realistic
clients' `initialize` requests, check that whatever the fast path declines reaches pygls byte for
byte, run a whole session over stdio, and check that the answer is written before pygls,
lsprotocol or libcst is imported. No time is asserted: benchmarks/bench_startup.py --cli measures.
"""

from __future__ import annotations

import copy
import importlib.util
import io
import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import IO, Any

import pytest

from flake8_detach.lsp import fast_start

# The recorded editors' capabilities come with pytest-lsp (the test extra; it needs pygls).
pytest.importorskip("pytest_lsp", reason="pytest-lsp is in the test extra")

REPO = Path(__file__).resolve().parent.parent
HAZARD = "import torch\nw = torch.ones(3, requires_grad=True)\nw.cpu().numpy()\n"
HEAVY = ("pygls", "lsprotocol", "cattrs", "attrs", "libcst", "flake8_detach.engine", "flake8_detach.lsp.server")


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def parse_stream(data: bytes) -> list[dict[str, Any]]:
    """The messages in a server's output (framed as pygls frames them)."""
    messages: list[dict[str, Any]] = []
    stream = io.BytesIO(data)
    while True:
        length = None
        while (line := stream.readline()) not in (b"\r\n", b""):
            if line.startswith(b"Content-Length:"):
                length = int(line.split(b":", 1)[1])
        if not line or length is None:
            return messages
        messages.append(json.loads(stream.read(length)))


class Output(io.BytesIO):
    def close(self) -> None:  # pygls closes stdout on `exit`; keep what it wrote readable
        pass


def run_pygls(data: bytes) -> bytes:
    """The real server (no fast path) fed ``data`` on stdin until its end: what it writes."""
    pytest.importorskip("pygls", reason="the language server needs the lsp extra (pygls)")
    from flake8_detach.lsp.server import create_server

    out = Output()
    create_server().start_io(stdin=io.BytesIO(data), stdout=out)
    return out.getvalue()


def run_fast(data: bytes) -> bytes:
    """The same through fast_start.serve (pygls loading in its thread, as `flake8-detach lsp`)."""
    pytest.importorskip("pygls", reason="the language server needs the lsp extra (pygls)")

    def load() -> Any:
        from flake8_detach.lsp.server import create_server

        return create_server()

    out = Output()
    fast_start.serve(load, stdin=io.BytesIO(data), stdout=out)
    return out.getvalue()


SHUTDOWN = frame({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})


def initialize(params: dict[str, Any], msg_id: object = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


def recorded_clients() -> dict[str, dict[str, Any]]:
    """The `initialize` params (clientInfo, capabilities) pytest-lsp recorded from real editors."""
    folder = resources.files("pytest_lsp.clients")
    return {entry.name[:-5]: json.loads(entry.read_text()) for entry in folder.iterdir() if entry.name.endswith(".json")}


def vscode() -> dict[str, Any]:
    return recorded_clients()["visual_studio_code_v1.65.2"]


def with_capabilities(params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    params = copy.deepcopy(params)
    for path, value in extra.items():
        target = params["capabilities"]
        *parents, leaf = path.split("__")
        for key in parents:
            target = target.setdefault(key, {})
        target[leaf] = value
    return params


WORKSPACE = {
    "processId": 4242,
    "rootUri": "file:///home/user/project",
    "rootPath": "/home/user/project",
    "workspaceFolders": [
        {"uri": "file:///home/user/project", "name": "project"},
        {"uri": "file:///home/user/lib", "name": "lib"},
    ],
    "locale": "en",
    "trace": "off",
    "initializationOptions": {"severity": "error"},
}


def synthetic_payloads() -> dict[str, dict[str, Any]]:
    code = vscode()
    notebook_sync = {"synchronization": {"dynamicRegistration": True, "executionSummarySupport": True}}
    return {
        "vscode utf-16": with_capabilities(code, general__positionEncodings=["utf-16"]),
        "vscode utf-8 first": with_capabilities(code, general__positionEncodings=["utf-8", "utf-16"]),
        "utf-32 first": {"capabilities": {"general": {"positionEncodings": ["utf-32", "utf-8"]}}},
        "unknown encodings first": {"capabilities": {"general": {"positionEncodings": ["utf-7", "utf-8"]}}},
        "only unknown encodings": {"capabilities": {"general": {"positionEncodings": ["latin-1"]}}},
        "no encodings": {"capabilities": {"general": {"positionEncodings": []}}},
        "minimal": {"capabilities": {}},
        "minimal with nulls": {"processId": None, "rootUri": None, "capabilities": {"general": None}},
        "workspace folders and notebooks": {
            **WORKSPACE,
            **with_capabilities(code, notebookDocument=notebook_sync, general__positionEncodings=["utf-16"]),
        },
        "notebooks, minimal": {"capabilities": {"notebookDocument": {"synchronization": {}}}},
        "will save": {"capabilities": {"textDocument": {"synchronization": {"willSave": True}}}},
        "will save wait until false": {
            "capabilities": {"textDocument": {"synchronization": {"willSave": False, "willSaveWaitUntil": False}}}
        },
        "an unknown severity (pygls sends a message first)": {
            "initializationOptions": {"severity": "loud"}, "capabilities": {}
        },
        "work done token": {"workDoneToken": "t-1", "clientInfo": {"name": "client"}, "capabilities": {}},
    }


def payloads() -> list[Any]:
    return list(_payloads())


def _payloads() -> Iterator[Any]:
    for name, params in recorded_clients().items():
        if name not in DECLINED_RECORDED:
            yield pytest.param(params, 1, id=f"recorded {name}")
    for name, params in synthetic_payloads().items():
        yield pytest.param(params, 1, id=name)
    yield pytest.param({"capabilities": {}}, "init-1", id="a string id")
    yield pytest.param({"capabilities": {}}, 0, id="id 0")


# Recorded clients whose params the fast path declines (stricter than lsprotocol): pygls answers.
DECLINED_RECORDED = {
    "neovim_v0.9.1": "sends textDocument.callHierarchy as a list, which lsprotocol reads as {}",
}


@pytest.mark.parametrize("name", sorted(DECLINED_RECORDED))
def test_a_recorded_client_the_fast_path_declines_gets_pyglss_session(name: str) -> None:
    message = initialize(recorded_clients()[name])
    assert fast_start.initialize_response(message) is None
    data = frame(message) + SHUTDOWN
    assert run_fast(data) == run_pygls(data)
    assert pygls_answer(message) is not None  # pygls does answer it


def pygls_answer(message: dict[str, Any]) -> dict[str, Any] | None:
    replies = [m for m in parse_stream(run_pygls(frame(message))) if "method" not in m]
    assert len(replies) <= 1
    return replies[0] if replies else None


@pytest.mark.parametrize(("params", "msg_id"), payloads())
def test_the_early_answer_is_pyglss_answer(params: dict[str, Any], msg_id: object) -> None:
    message = initialize(params, msg_id)
    early = fast_start.initialize_response(message)
    assert early is not None, "the fast path should answer this client"
    assert early == pygls_answer(message)


def test_the_recorded_clients_are_there() -> None:
    """The control: the parametrisation above does cover real editors' capabilities."""
    assert {"visual_studio_code_v1.65.2", "emacs_v29.1", "neovim_v0.11.0"} <= set(recorded_clients())
    assert len(set(recorded_clients()) - set(DECLINED_RECORDED)) >= 7


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(initialize({}), id="no capabilities"),
        pytest.param(initialize({"capabilities": []}), id="capabilities not an object"),
        pytest.param(initialize({"capabilities": {"general": {"positionEncodings": "utf-8"}}}), id="encodings a string"),
        pytest.param(initialize({"capabilities": {"general": {"positionEncodings": [8]}}}), id="encodings numbers"),
        pytest.param(initialize({"capabilities": {"notebookDocument": {}}}), id="notebook capabilities incomplete"),
        pytest.param(initialize({"capabilities": {"textDocument": {"synchronization": {"willSave": "yes"}}}}),
                     id="willSave not a bool"),
        pytest.param(initialize({"processId": "12", "capabilities": {}}), id="processId a string"),
        pytest.param(initialize({"trace": "loud", "capabilities": {}}), id="unknown trace"),
        pytest.param(initialize({"workspaceFolders": [{"uri": "file:///x"}], "capabilities": {}}),
                     id="a workspace folder with no name"),
        pytest.param(initialize({"capabilities": {"textDocument": {"documentSymbol": {"symbolKind": {
            "valueSet": [1, 999]}}}}}), id="an unknown symbol kind"),
        pytest.param(initialize({"capabilities": {"textDocument": {"hover": {"contentFormat": ["rtf"]}}}}),
                     id="an unknown markup kind"),
        pytest.param(initialize({"capabilities": {"textDocument": {"hover": 5}}}), id="hover capabilities a number"),
        pytest.param(initialize({"capabilities": {"workspace": {"applyEdit": "yes"}}}), id="applyEdit a string"),
        pytest.param(initialize({"processId": -1, "capabilities": {}}), id="a negative processId"),
        pytest.param(initialize({"processId": 2**40, "capabilities": {}}), id="a processId out of range"),
        pytest.param(initialize({"capabilities": {}}, msg_id=2**40), id="an id out of range"),
        pytest.param(initialize({"capabilities": {}}, msg_id=True), id="id a bool"),
        pytest.param(initialize({"capabilities": {}}, msg_id=None), id="id null"),
        pytest.param({"jsonrpc": "2.0", "method": "initialize", "params": {"capabilities": {}}}, id="a notification"),
        pytest.param({"id": 1, "method": "initialize", "params": {"capabilities": {}}}, id="no jsonrpc"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}, id="another request"),
        pytest.param([initialize({"capabilities": {}})], id="a batch"),
    ],
)
def test_what_the_fast_path_declines(message: Any) -> None:
    assert fast_start.initialize_response(message) is None


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(frame(initialize({"capabilities": {"general": {"positionEncodings": "utf-8"}}})) + SHUTDOWN,
                     id="an initialize pygls rejects"),
        pytest.param(frame(initialize({"processId": "12", "capabilities": {}})) + SHUTDOWN,
                     id="an initialize the fast path does not model"),
        pytest.param(frame(initialize({"capabilities": {"textDocument": {"hover": {"contentFormat": ["rtf"]}}}}))
                     + SHUTDOWN, id="an initialize lsprotocol rejects deep in the capabilities"),
        pytest.param(SHUTDOWN + frame(initialize({"capabilities": {}})), id="shutdown first"),
        pytest.param(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
                     + frame(initialize({"capabilities": {}, "processId": "7"})), id="a header before the length"),
        pytest.param(b"Content-Length: 12\r\n\r\n{not json!!}" + frame(initialize({"capabilities": {}})),
                     id="a body that is not JSON"),
        pytest.param(b"content-length: 30\r\n\r\n" + frame(initialize({"capabilities": {}})),
                     id="a header pygls does not read"),
        pytest.param(b"Content-Length: 400\r\n\r\n{\"jsonrpc\": \"2.0\"", id="cut short"),
        pytest.param(b"", id="no input"),
    ],
)
def test_a_declined_first_message_reaches_pygls_unchanged(data: bytes) -> None:
    """Falling back, the session is exactly pygls's: same input bytes, same output bytes."""
    assert run_fast(data) == run_pygls(data)


def without_request_ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The server's own requests (client/registerCapability) have random ids."""
    return [{**m, "id": "(request)"} if "method" in m and "id" in m else m for m in messages]


def test_another_pygls_release_is_left_to_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(fast_start.TESTED_SERIES, "pygls", "1.3")
    assert not fast_start.tested_versions()
    data = frame(initialize(vscode())) + SHUTDOWN
    assert run_fast(data) == run_pygls(data)


def test_the_installed_pygls_and_lsprotocol_are_the_tested_series() -> None:
    """If this fails, pygls or lsprotocol moved on: run these tests against the new release,
    regenerate initialize_schema.py (scripts/gen_lsp_params_schema.py) and update TESTED_SERIES."""
    assert fast_start.tested_versions()


def test_the_params_schema_is_lsprotocols() -> None:
    """flake8_detach/lsp/initialize_schema.py is what the script writes for this lsprotocol."""
    spec = importlib.util.spec_from_file_location("gen_lsp_params_schema", REPO / "scripts" / "gen_lsp_params_schema.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert (REPO / "flake8_detach" / "lsp" / "initialize_schema.py").read_text() == generator.render()


def test_a_fast_session_is_pyglss_session() -> None:
    """Answered early, the rest of the session is pygls's (and pygls's own answer is dropped)."""
    params = synthetic_payloads()["workspace folders and notebooks"]
    data = (
        frame(initialize(params))
        + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    )
    fast = without_request_ids(parse_stream(run_fast(data)))
    assert fast == without_request_ids(parse_stream(run_pygls(data)))
    assert [m.get("id") for m in fast if "method" not in m] == [1, 2]  # one answer to initialize


def test_the_early_answer_is_framed_as_pygls_frames_it() -> None:
    message = initialize(vscode())
    early = fast_start.initialize_response(message)
    assert early is not None
    assert fast_start.frame(early) == run_pygls(frame(message))


def test_a_different_answer_from_pygls_is_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    out = io.BytesIO()
    answered = {"id": 1, "jsonrpc": "2.0", "result": {"capabilities": {}}}
    writer = fast_start.AnsweredWriter(out, answered)
    other = {"id": 1, "jsonrpc": "2.0", "result": {"capabilities": {"hoverProvider": True}}}
    notification = {"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": "hi"}}
    writer.write(fast_start.frame(notification))
    writer.write(fast_start.frame(other))
    writer.write(fast_start.frame(other))  # only the first answer to that id is pygls's to initialize
    assert parse_stream(out.getvalue()) == [notification, other]
    assert "the early answer to initialize" in caplog.text


def test_the_replay_reader_gives_the_prefix_then_the_stream() -> None:
    reader = fast_start.ReplayReader(b"Header: 1\r\n\r\nbo", io.BytesIO(b"dy\r\nnext line\nrest"))
    assert reader.readline() == b"Header: 1\r\n"
    assert reader.readline() == b"\r\n"
    assert reader.read(4) == b"body"
    assert reader.readline() == b"\r\n"
    assert reader.readline() == b"next line\n"
    assert reader.read(10) == b"rest"
    assert reader.readline() == b""
    partial = fast_start.ReplayReader(b"a li", io.BytesIO(b"ne\nmore"))
    assert partial.readline() == b"a line\n"


# -- the real command, over stdio ------------------------------------------------------------


def child_environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    env.update(extra)
    return env


class Client:
    """A minimal LSP client over a subprocess's stdio; answers the server's requests with null."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin: IO[bytes] = process.stdin
        self.received: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = None
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if not line or length is None:
                self.received.put(None)
                return
            self.received.put(json.loads(stream.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(frame(message))
        self.stdin.flush()

    def wait_for(self, predicate: Any, timeout: float = 60) -> dict[str, Any]:
        while True:
            message = self.received.get(timeout=timeout)
            assert message is not None, "the server closed its output"
            if "method" in message and "id" in message:  # a request from the server
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            if predicate(message):
                return message


@pytest.mark.parametrize("fast", ["1", "0"], ids=["fast start", "plain pygls"])
def test_a_session_over_stdio(tmp_path: Path, fast: str) -> None:
    pytest.importorskip("pygls", reason="the language server needs the lsp extra (pygls)")
    params = {**with_capabilities(vscode(), general__positionEncodings=["utf-16"]),
              "processId": os.getpid(), "rootUri": tmp_path.as_uri()}
    process = subprocess.Popen(
        [sys.executable, "-m", "flake8_detach", "lsp", "--debounce-ms", "0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        env=child_environment(**{fast_start.ENABLE_VARIABLE: fast}),
    )
    try:
        client = Client(process)
        client.send(initialize(params))
        reply = client.wait_for(lambda m: m.get("id") == 1 and "method" not in m)
        assert reply == fast_start.initialize_response(initialize(params))
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uri = (tmp_path / "train.py").as_uri()
        client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": HAZARD}}})
        published = client.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        assert published["params"]["uri"] == uri
        assert [d["code"] for d in published["params"]["diagnostics"]] == ["DET101"]
        client.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        assert client.wait_for(lambda m: m.get("id") == 2 and "method" not in m)["result"] is None
        client.send({"jsonrpc": "2.0", "method": "exit"})
        assert process.wait(timeout=60) == 0
        answers = [m for m in iter(client.received.get, None) if m.get("id") == 1 and "method" not in m]
        assert answers == []  # pygls's own answer to initialize was dropped
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        assert process.stderr is not None
        process.stderr.close()
        assert process.stdin is not None
        process.stdin.close()
        assert process.stdout is not None
        process.stdout.close()


def test_the_responder_imports_only_the_standard_library(tmp_path: Path) -> None:
    program = textwrap.dedent("""
        import json, sys
        from flake8_detach.lsp import fast_start
        message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        assert fast_start.initialize_response(message) is not None
        print(json.dumps(sorted(sys.modules)))
    """)
    out = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=child_environment(),
                         capture_output=True, text=True, check=True, timeout=120)
    modules = json.loads(out.stdout)
    assert [m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY] == []


def test_flake8_detach_lsp_answers_before_loading_pygls(tmp_path: Path) -> None:
    """`flake8-detach lsp` writes the answer while pygls has not been imported: the thread that
    loads it is held until the answer is out, and sys.modules is recorded as it is written."""
    pytest.importorskip("pygls", reason="the language server needs the lsp extra (pygls)")
    record = tmp_path / "modules.json"
    program = textwrap.dedent(f"""
        import json, sys, threading
        from flake8_detach.lsp import fast_start
        answered = threading.Event()
        real_write, real_serve = fast_start.write_answer, fast_start.serve

        def write_answer(stream, response):
            with open({str(record)!r}, "w") as file:
                json.dump(sorted(sys.modules), file)
            real_write(stream, response)
            answered.set()

        def serve(load, *args, **kwargs):
            def held():
                answered.wait(60)
                return load()
            return real_serve(held, *args, **kwargs)

        fast_start.write_answer, fast_start.serve = write_answer, serve
        from flake8_detach.cli import main
        sys.exit(main(["lsp"]))
    """)
    process = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, cwd=tmp_path, env=child_environment())
    try:
        client = Client(process)
        client.send(initialize({"processId": None, "capabilities": {}}))
        reply = client.wait_for(lambda m: m.get("id") == 1)
        assert "capabilities" in reply["result"]
        client.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        client.wait_for(lambda m: m.get("id") == 2)
        client.send({"jsonrpc": "2.0", "method": "exit"})
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            assert stream is not None
            stream.close()
    modules = json.loads(record.read_text())
    assert "flake8_detach.lsp.fast_start" in modules  # the control: recorded by the fast path
    assert [m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY] == []
