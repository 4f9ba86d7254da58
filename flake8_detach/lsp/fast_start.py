"""Answer `initialize` before pygls has loaded, then hand the session to pygls unchanged.

Importing pygls and lsprotocol (~550 attrs classes) takes most of a second, and editors wait for
the answer to `initialize` before they show anything. So `flake8-detach lsp` loads pygls and
builds the server in a thread while the main thread reads the client's first message with the
LSP base protocol's framing, read exactly as pygls reads it. If it is an `initialize` request this
module can answer exactly, it writes the `InitializeResult` pygls would write, computed from a
static description of the server's capabilities (:data:`CAPABILITIES`; tests compare it with the
real server's answer for realistic clients). Then pygls starts on a reader that first replays the
bytes of that message and a writer that drops pygls's own answer to it, so its state (client
capabilities, workspace, position encoding) is set exactly as if it had answered.

Anything else is replayed to pygls untouched, and pygls answers: another first message, a
malformed one, params lsprotocol might not read (they are checked against
initialize_schema.py, generated from lsprotocol's classes, more strictly than lsprotocol reads
them: pygls sends no answer at all to params it cannot read), a pygls or lsprotocol of another
release series than the one the tests checked (:data:`TESTED_SERIES`), or
``FLAKE8_DETACH_LSP_FAST_START=0``.

This module (and initialize_schema.py, plain data) imports only the standard library (json, os,
re, sys, threading, logging, typing): it must not load pygls, lsprotocol or libcst.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
from typing import IO, Any, Callable

from .. import __version__
from .initialize_schema import ROOT, STRUCTURES

LOG = logging.getLogger(__name__)
ENABLE_VARIABLE = "FLAKE8_DETACH_LSP_FAST_START"
SOURCE = "flake8-detach"
# pygls's framing (pygls.io_.run_async): the first header line that is exactly this gives the
# length; the headers end at the first blank line after it.
_CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")
_MAX_HEADER_LINES = 64  # past this, stop looking and let pygls read the stream
CONTENT_TYPE = "application/vscode-jsonrpc; charset=utf-8"  # pygls's JsonRPCProtocol header

# What pygls's ServerCapabilitiesBuilder builds for the features flake8_detach/lsp/server.py
# registers (and its text document and notebook sync options), in pygls's key order. The parts
# that depend on the client are filled in by `capabilities_for`: ``positionEncoding``,
# ``textDocumentSync.willSave``/``willSaveWaitUntil`` and ``notebookDocumentSync``.
TEXT_DOCUMENT_SYNC: dict[str, Any] = {"openClose": True, "change": 2, "save": True}  # 2: incremental
NOTEBOOK_DOCUMENT_SYNC: dict[str, Any] = {
    "notebookSelector": [{"cells": [{"language": "python"}], "notebook": "*"}],
}
CAPABILITIES: dict[str, Any] = {
    "codeActionProvider": {"codeActionKinds": ["quickfix", "source.fixAll.flake8-detach"], "resolveProvider": False},
    "executeCommandProvider": {"commands": []},
    "diagnosticProvider": {"interFileDependencies": False, "workspaceDiagnostics": False, "identifier": SOURCE},
    "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
}
SERVER_INFO: dict[str, Any] = {"name": SOURCE, "version": __version__}
POSITION_ENCODINGS = ("utf-8", "utf-16", "utf-32")  # what pygls supports
# The release series this description (and initialize_schema.py) was checked against by
# tests/test_lsp_fast_start.py; with any other installed, pygls answers.
TESTED_SERIES = {"pygls": "2.1", "lsprotocol": "2025.0"}


def enabled() -> bool:
    return os.environ.get(ENABLE_VARIABLE, "1").strip().lower() not in ("0", "false", "no", "off")


# -- the answer ------------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


INT_RANGE = (0, 2**31 - 1)  # LSP's integer and uinteger ranges (lsprotocol checks them): both


def _valid(value: object, kind: Any) -> bool:
    """Whether ``value`` has the shape ``kind`` (initialize_schema.py's notation), strictly: where
    this says yes, lsprotocol reads the value (exact JSON types, known enum values only)."""
    if isinstance(kind, str):
        if kind == "any":
            return True
        if kind == "null":
            return value is None
        if kind == "bool":
            return isinstance(value, bool)
        if kind == "int":
            return _is_int(value) and INT_RANGE[0] <= value <= INT_RANGE[1]  # type: ignore[operator]
        if kind == "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind == "str":
            return isinstance(value, str)
        return False
    if "enum" in kind:
        return any(type(value) is type(member) and value == member for member in kind["enum"])
    if "array" in kind:
        return isinstance(value, list) and all(_valid(item, kind["array"]) for item in value)
    if "map" in kind:
        return isinstance(value, dict) and all(_valid(item, kind["map"]) for item in value.values())
    if "ref" in kind:
        if not isinstance(value, dict):
            return False
        fields = STRUCTURES[kind["ref"]]
        return all(_valid(value[name], field) if name in value else not required
                   for name, (field, required) in fields.items())
    if "union" in kind:
        if isinstance(value, dict):
            # lsprotocol picks one of the members an object may be: it must fit all of them.
            members = [member for member in kind["union"] if _takes_objects(member)]
            return bool(members) and all(_valid(value, member) for member in members)
        return any(_valid(value, member) for member in kind["union"])
    return False


def _takes_objects(kind: Any) -> bool:
    if isinstance(kind, str):
        return kind == "any"
    if "union" in kind:
        return any(_takes_objects(member) for member in kind["union"])
    return "ref" in kind or "map" in kind


def _understood_params(params: object) -> bool:
    """Whether lsprotocol will read these `InitializeParams` (else: fall back to pygls)."""
    return _valid(params, {"ref": ROOT})


def position_encoding(capabilities: dict[str, Any]) -> str:
    """pygls's choice: the client's first encoding that pygls supports, else UTF-16."""
    encodings = (capabilities.get("general") or {}).get("positionEncodings") or []
    return next((encoding for encoding in encodings if encoding in POSITION_ENCODINGS), "utf-16")


def capabilities_for(capabilities: dict[str, Any]) -> dict[str, Any]:
    """The server's capabilities, as pygls computes them for a client with ``capabilities``."""
    synchronization = ((capabilities.get("textDocument") or {}).get("synchronization") or {})
    text_document_sync = dict(TEXT_DOCUMENT_SYNC)
    # pygls: `client_capability and feature_registered`: False where the client says anything
    # (this server registers neither willSave feature), omitted where it says nothing.
    for key in ("willSave", "willSaveWaitUntil"):
        if synchronization.get(key) is not None:
            text_document_sync[key] = False
    # In pygls's key order: willSave and willSaveWaitUntil come before save.
    ordered_sync = {k: text_document_sync[k] for k in ("openClose", "change", "willSave", "willSaveWaitUntil", "save")
                    if k in text_document_sync}
    result: dict[str, Any] = {"positionEncoding": position_encoding(capabilities), "textDocumentSync": ordered_sync}
    if capabilities.get("notebookDocument") is not None:
        result["notebookDocumentSync"] = NOTEBOOK_DOCUMENT_SYNC
    result.update(CAPABILITIES)
    return result


def initialize_response(message: object) -> dict[str, Any] | None:
    """The response pygls would send to ``message``, if it is an `initialize` request this module
    understands; None otherwise (pygls is to answer)."""
    if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0" and message.get("method") == "initialize"):
        return None
    msg_id = message.get("id")
    if not (_valid(msg_id, "int") or isinstance(msg_id, str)):
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not _understood_params(params):
        return None
    result = {"capabilities": capabilities_for(params["capabilities"]), "serverInfo": SERVER_INFO}
    return {"id": msg_id, "jsonrpc": "2.0", "result": result}


def frame(message: dict[str, Any]) -> bytes:
    """``message`` framed as pygls frames what it sends."""
    body = json.dumps(message)
    return f"Content-Length: {len(body)}\r\nContent-Type: {CONTENT_TYPE}\r\n\r\n{body}".encode()


# -- reading the first message ----------------------------------------------------------------


def read_first_message(stream: IO[bytes]) -> tuple[bytes, object]:
    """Read the client's first message as pygls would: (the bytes read, the decoded message, or
    None if it did not frame or decode)."""
    raw = bytearray()
    content_length = 0
    for _ in range(_MAX_HEADER_LINES):
        header = stream.readline()
        raw += header
        if not header:
            return bytes(raw), None  # end of input
        if not content_length:
            match = _CONTENT_LENGTH.fullmatch(header)
            if match:
                content_length = int(match.group(1))
        if content_length and not header.strip():
            body = stream.read(content_length)
            raw += body
            if len(body) != content_length:
                return bytes(raw), None
            try:
                return bytes(raw), json.loads(body)
            except ValueError:
                return bytes(raw), None
    return bytes(raw), None


class ReplayReader:
    """A binary stream that yields ``prefix`` first, then what ``stream`` has (pygls's stdin)."""

    def __init__(self, prefix: bytes, stream: IO[bytes]) -> None:
        self.prefix = prefix
        self.stream = stream

    def readline(self) -> bytes:
        if not self.prefix:
            return self.stream.readline()
        end = self.prefix.find(b"\n")
        if end < 0:
            line, self.prefix = self.prefix, b""
            return line + self.stream.readline()
        line, self.prefix = self.prefix[: end + 1], self.prefix[end + 1 :]
        return line

    def read(self, size: int = -1) -> bytes:
        if not self.prefix:
            return self.stream.read(size)
        if size < 0:
            data, self.prefix = self.prefix, b""
            return data + self.stream.read()
        data, self.prefix = self.prefix[:size], self.prefix[size:]
        if len(data) < size:
            data += self.stream.read(size - len(data))
        return data

    def close(self) -> None:
        self.stream.close()


class AnsweredWriter:
    """pygls's stdout, less pygls's own response to the request already answered (``answered``).

    pygls writes one whole framed message per call. Its dropped answer is compared with the one
    sent: a difference (which the tests rule out for the clients they model) is logged.
    """

    def __init__(self, stream: IO[bytes], answered: dict[str, Any]) -> None:
        self.stream = stream
        self.answered: dict[str, Any] | None = answered
        self.lock = threading.Lock()

    def write(self, data: bytes) -> int:
        with self.lock:
            if self.answered is not None and self._is_answer(data):
                return len(data)
        return self.stream.write(data)

    def _is_answer(self, data: bytes) -> bool:
        assert self.answered is not None
        _, separator, body = bytes(data).partition(b"\r\n\r\n")
        try:
            message = json.loads(body) if separator else None
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message or message.get("id") != self.answered["id"]:
            return False
        if message != self.answered:
            LOG.error("flake8-detach: the early answer to initialize was %s; pygls answered %s",
                      json.dumps(self.answered), json.dumps(message))
        self.answered = None
        return True

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.stream.close()


# -- the session ------------------------------------------------------------------------------


class ServerLoader:
    """Runs ``load`` (import pygls, build the server) in a thread, started at once."""

    def __init__(self, load: Callable[[], Any]) -> None:
        self.load = load
        self.server: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="flake8-detach-load-server", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.server = self.load()
        except BaseException as error:  # noqa: BLE001 - re-raised on the main thread by result()
            self.error = error

    def result(self) -> Any:
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.server


def write_answer(stream: IO[bytes], response: dict[str, Any]) -> None:
    stream.write(frame(response))
    stream.flush()


def serve(load: Callable[[], Any], stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Serve a session over stdio: answer `initialize` early where possible, then run pygls.

    ``load`` imports pygls and returns the server (a pygls ``LanguageServer``); it runs in a
    thread while the first message is read and answered.
    """
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    answer_early = tested_versions()
    loader = ServerLoader(load)
    raw, message = read_first_message(stdin)
    response = initialize_response(message) if answer_early else None
    if response is not None:
        write_answer(stdout, response)
    server = loader.result()
    writer: Any = AnsweredWriter(stdout, response) if response is not None else stdout
    server.start_io(stdin=ReplayReader(raw, stdin), stdout=writer)


def missing_requirement() -> str | None:
    """The first of pygls and lsprotocol that is not installed (found without importing it)."""
    from importlib.util import find_spec

    return next((name for name in ("pygls", "lsprotocol") if find_spec(name) is None), None)


def installed_version(name: str) -> str | None:
    """The version of the distribution ``name`` from its ``.dist-info`` folder beside the package
    (importlib.metadata would cost more than the rest of this module); None if not found."""
    from importlib.util import find_spec

    try:
        spec = find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        return None
    folder = os.path.dirname(locations[0])
    prefix, suffix = f"{name}-", ".dist-info"
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    versions = [entry[len(prefix):-len(suffix)] for entry in entries
                if entry.lower().startswith(prefix) and entry.endswith(suffix)]
    return versions[0] if len(versions) == 1 else None


def tested_versions() -> bool:
    """Whether the installed pygls and lsprotocol are of the release series the early answer
    was checked against."""
    for name, series in TESTED_SERIES.items():
        version = installed_version(name)
        if version is None or not (version == series or version.startswith(f"{series}.")):
            return False
    return True
