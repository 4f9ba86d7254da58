"""The language server end to end: a real client (pytest-lsp) drives `flake8-detach lsp` over stdio."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

pytest.importorskip("pygls", reason="the language server needs the lsp extra (pygls)")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is in the test extra")

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

DEBOUNCE_MS = 200
PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
HAZARD = "import torch\nw = torch.ones(3, requires_grad=True)\nw.cpu().numpy()\n"


REGISTRATIONS: list[types.RegistrationParams] = []


def accept_registrations(client: LanguageClient) -> None:
    """Answer `client/registerCapability` as VS Code does (the server registers file watchers)."""
    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        REGISTRATIONS.append(params)


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "flake8_detach", "lsp", "--debounce-ms", str(DEBOUNCE_MS)]
    )
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    accept_registrations(lsp_client)
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual-studio-code"))
    )
    yield
    await lsp_client.shutdown_session()


async def next_publish(client: LanguageClient, action: Any = None, timeout: float = 15) -> types.PublishDiagnosticsParams:
    """Arm the wait before acting, so a fast reply cannot be missed."""
    future = client.protocol.wait_for_notification_async(PUBLISH)
    if action is not None:
        action()
    return await asyncio.wait_for(future, timeout)


def open_document(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )


def replace_text(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to ``text``, last first, as an editor does."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        before = sum(len(line) for line in lines[: position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units = 0
        for index, char in enumerate(line):
            if units >= position.character:
                return before + index
            units += 2 if ord(char) > 0xFFFF else 1
        return before + len(line)

    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
    for edit in ordered:
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
        lines = text.splitlines(keepends=True)
    return text


def whole_range(text: str) -> types.Range:
    return types.Range(start=types.Position(line=0, character=0), end=types.Position(line=len(text.splitlines()), character=0))


async def code_actions(
    client: LanguageClient, uri: str, text: str, diagnostics: list[types.Diagnostic], only: list[str] | None = None
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=whole_range(text),
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )
    return [action for action in result or [] if isinstance(action, types.CodeAction)]


@pytest.mark.asyncio
async def test_open_publishes_det101_with_code_link_and_range(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, uri, HAZARD))
    assert published.uri == uri
    (diagnostic,) = published.diagnostics
    assert diagnostic.code == "DET101"
    assert diagnostic.source == "flake8-detach"
    assert diagnostic.severity == types.DiagnosticSeverity.Warning  # as flake8's via pylsp
    assert diagnostic.code_description is not None
    # The link opens: the rule's page as a file on this machine (docs/rules/ in a checkout).
    page = Path(url2pathname(urlparse(diagnostic.code_description.href).path))
    assert diagnostic.code_description.href.startswith("file://") and page.is_file()
    assert page.read_text(encoding="utf-8").startswith("# DET101: numpy-on-grad-tensor")
    assert diagnostic.message.startswith(".numpy() on a tensor that may require grad")
    # `numpy` in `w.cpu().numpy()`: line 3, columns 8 to 13 (0-based, end exclusive).
    assert diagnostic.range == types.Range(
        start=types.Position(line=2, character=8), end=types.Position(line=2, character=13)
    )


@pytest.mark.asyncio
async def test_columns_are_utf16_code_units(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "emoji.py").as_uri()
    text = HAZARD.replace("w.cpu().numpy()", 's = "\U0001f600"; w.numpy()')
    published = await next_publish(client, lambda: open_document(client, uri, text))
    (diagnostic,) = published.diagnostics
    # `numpy` starts at code point 11; the emoji before it counts as two UTF-16 units.
    assert (diagnostic.range.start.character, diagnostic.range.end.character) == (12, 17)


@pytest.mark.asyncio
async def test_quick_fix_then_no_diagnostics(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, uri, HAZARD))
    actions = await code_actions(client, uri, HAZARD, list(published.diagnostics), only=[types.CodeActionKind.QuickFix])
    (action, suppress) = actions
    assert "noqa" in suppress.title
    assert action.kind == types.CodeActionKind.QuickFix
    assert action.title.startswith("DET101: ")
    assert action.is_preferred is True
    assert action.diagnostics and action.diagnostics[0].code == "DET101"
    assert action.edit is not None and action.edit.changes is not None
    fixed = apply_edits(HAZARD, list(action.edit.changes[uri]))
    assert fixed == HAZARD.replace("w.cpu().numpy()", "w.detach().cpu().numpy()")
    after = await next_publish(client, lambda: replace_text(client, uri, 2, fixed))
    assert after.version == 2
    assert list(after.diagnostics) == []


@pytest.mark.asyncio
async def test_fix_all_source_action(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    text = HAZARD + "w.numpy()\nw.data.numpy()  # noqa: DET103\n"
    published = await next_publish(client, lambda: open_document(client, uri, text))
    assert [d.code for d in published.diagnostics] == ["DET101", "DET101"]
    actions = await code_actions(client, uri, text, [], only=[types.CodeActionKind.SourceFixAll])
    (action,) = actions
    assert action.kind == "source.fixAll.flake8-detach"
    assert action.edit is not None and action.edit.changes is not None
    fixed = apply_edits(text, list(action.edit.changes[uri]))
    assert fixed.count(".detach()") == 2
    assert fixed.endswith("w.data.numpy()  # noqa: DET103\n")  # left alone: flake8 reports nothing there
    after = await next_publish(client, lambda: replace_text(client, uri, 2, fixed))
    assert list(after.diagnostics) == []
    # Nothing left to fix: no fix-all offered.
    assert await code_actions(client, uri, fixed, [], only=[types.CodeActionKind.SourceFixAll]) == []


@pytest.mark.asyncio
async def test_changes_are_debounced(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    await next_publish(client, lambda: open_document(client, uri, "import torch\n"))

    def burst() -> None:
        for version in range(2, 7):  # five edits typed faster than the debounce delay
            replace_text(client, uri, version, HAZARD[: 20 * version] if version < 6 else HAZARD)

    published = await next_publish(client, burst)
    assert published.version == 6
    assert [d.code for d in published.diagnostics] == ["DET101"]
    with pytest.raises(asyncio.TimeoutError):  # the earlier versions were never linted
        await next_publish(client, timeout=3 * DEBOUNCE_MS / 1000)


@pytest.mark.asyncio
async def test_pyproject_settings_and_noqa_apply(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-detach]\nignore = ["DET104"]\nno-grad-contexts = ["lib.evaluating"]\n')
    uri = (tmp_path / "pkg" / "train.py").as_uri()
    text = (
        "import torch\nfrom lib import evaluating\n"
        "w = torch.ones(3, requires_grad=True, device='cuda')\n"
        "with evaluating():\n    w.numpy()\n"  # DET101 off (config), DET104 ignored (config)
        "w.detach().numpy()\n"  # DET104 ignored (config)
        "w.numpy()  # noqa: DET101\n"
    )
    published = await next_publish(client, lambda: open_document(client, uri, text))
    assert list(published.diagnostics) == []
    closed = await next_publish(
        client, lambda: client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    )
    assert list(closed.diagnostics) == []


@pytest.mark.asyncio
async def test_broken_config_is_reported_and_defaults_are_used(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-detach]\nfix-style = "forced"\n')
    uri = (tmp_path / "train.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, uri, HAZARD))
    assert [d.code for d in published.diagnostics] == ["DET101"]
    assert any("fix-style" in message.message and "'forced'" in message.message for message in client.messages)


@pytest.mark.asyncio
async def test_syntax_error_keeps_the_last_diagnostics_and_says_where(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, uri, HAZARD))
    assert published.diagnostics
    broken = HAZARD + "x = (\n"
    after = await next_publish(client, lambda: replace_text(client, uri, 2, broken))
    # No flicker while typing: the hazard stays, plus one syntax diagnostic where Python stops.
    assert [d.code for d in after.diagnostics] == ["DET101", None]
    syntax = after.diagnostics[1]
    assert syntax.severity == types.DiagnosticSeverity.Error
    assert syntax.message.startswith("syntax error at line 4") and syntax.range.start.line == 3
    again = await next_publish(client, lambda: replace_text(client, uri, 3, HAZARD))
    assert [d.code for d in again.diagnostics] == ["DET101"]


@pytest.mark.asyncio
async def test_excluded_folders_get_no_diagnostics(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-detach]\nextend-exclude = ["generated"]\n')
    for folder in ("generated", ".venv/lib/site-packages/lib", "src"):
        uri = (tmp_path / folder / "train.py").as_uri()
        published = await next_publish(client, lambda uri=uri: open_document(client, uri, HAZARD))
        expected = ["DET101"] if folder == "src" else []
        assert [d.code for d in published.diagnostics] == expected, folder


@pytest.mark.asyncio
async def test_non_python_documents_are_not_linted(client: LanguageClient, tmp_path: Path) -> None:
    toml_uri = (tmp_path / "pyproject.toml").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=toml_uri, language_id="toml", version=1, text="[tool.flake8-detach]\nignore = []\n")))
    py_uri = (tmp_path / "train.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, py_uri, HAZARD))
    assert published.uri == py_uri  # the TOML buffer got no publish of its own (it came first)
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=toml_uri)))
    assert list(report.items) == []


@pytest.mark.asyncio
async def test_a_changed_config_file_relints_open_buffers(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, uri, HAZARD))
    assert [d.code for d in published.diagnostics] == ["DET101"]
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.flake8-detach]\nignore = ["DET101"]\n')
    changed = types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Created)])
    after = await next_publish(client, lambda: client.workspace_did_change_watched_files(changed))
    assert after.uri == uri and list(after.diagnostics) == []
    # Saving the config in the editor does the same (and the TOML itself is not linted).
    pyproject.write_text('[tool.flake8-detach]\nignore = []\n')
    saved = types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=pyproject.as_uri()))
    again = await next_publish(client, lambda: client.text_document_did_save(saved))
    assert again.uri == uri and [d.code for d in again.diagnostics] == ["DET101"]


@pytest.mark.asyncio
async def test_pull_diagnostics_match_the_published_ones(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, uri, HAZARD))
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert report.kind == "full"
    assert list(report.items) == list(published.diagnostics)


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["windows", "space", "non-ascii"])
async def test_percent_encoded_uris_get_diagnostics_pull_items_and_actions(
    client: LanguageClient, tmp_path: Path, name: str
) -> None:
    """pygls keys documents by their unquoted URI: every lookup must go through it (issue 22)."""
    uri = {
        "windows": "file:///c%3A/Users/me/train.py",  # how VS Code sends every Windows path
        "space": (tmp_path / "my dir" / "train.py").as_uri(),
        "non-ascii": (tmp_path / "caf\u00e9.py").as_uri(),
    }[name]
    assert "%" in uri
    published = await next_publish(client, lambda: open_document(client, uri, HAZARD))
    assert published.uri == uri  # the URI the client sent, not pygls' unquoted key
    assert [d.code for d in published.diagnostics] == ["DET101"]
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [d.code for d in report.items] == ["DET101"]
    actions = await code_actions(client, uri, HAZARD, list(published.diagnostics))
    actions += await code_actions(client, uri, HAZARD, [], only=[types.CodeActionKind.SourceFixAll])
    assert [a.kind for a in actions].count(types.CodeActionKind.QuickFix) == 2  # the fix, the noqa
    assert "source.fixAll.flake8-detach" in {a.kind for a in actions}
    assert all(a.edit is not None and a.edit.changes is not None and uri in a.edit.changes for a in actions)
    after = await next_publish(client, lambda: replace_text(client, uri, 2, HAZARD + "w.numpy()\n"))
    assert after.uri == uri and after.version == 2 and [d.code for d in after.diagnostics] == ["DET101", "DET101"]


@pytest.mark.asyncio
async def test_notebook_cells_with_percent_encoded_fragments(client: LanguageClient, tmp_path: Path) -> None:
    """VS Code's cell URIs carry a base64 fragment whose `=` is quoted (`#W1sZmlsZQ%3D%3D`)."""
    uri = (tmp_path / "nb.ipynb").as_uri()
    path = uri.removeprefix("file://")
    cell_uris = [f"vscode-notebook-cell:{path}#W1sZmlsZQ%3D%3D{index}" for index in range(len(NOTEBOOK_CELLS))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=uri, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=cell) for cell in cell_uris],
        ),
        cell_text_documents=[types.TextDocumentItem(uri=cell, language_id="python", version=1, text=text)
                             for cell, text in zip(cell_uris, NOTEBOOK_CELLS)],
    ))
    published = await published_for(client, cell_uris)
    assert [d.code for d in published[cell_uris[3]]] == ["DET101"]
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=cell_uris[3])))
    assert [d.code for d in report.items] == ["DET101"]
    actions = await code_actions(client, cell_uris[3], NOTEBOOK_CELLS[3], list(published[cell_uris[3]]),
                                 only=[types.CodeActionKind.QuickFix])
    fix = next(action for action in actions if "noqa" not in action.title)
    assert fix.edit is not None and fix.edit.changes is not None
    assert apply_edits(NOTEBOOK_CELLS[3], list(fix.edit.changes[cell_uris[3]])) == "pred = out.detach().cpu().numpy()"


HELPER = (
    "import torch\n"
    "def show(t):\n"
    "    return t.numpy()\n"
    "model = torch.nn.Linear(2, 2)\n"
    "show(model(torch.ones(2)))\n"
)


@pytest.mark.asyncio
async def test_the_passing_call_is_related_information(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "helper.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, uri, HELPER))
    (diagnostic,) = [d for d in published.diagnostics if d.code == "DET101"]
    assert "line 5" in diagnostic.message
    (related,) = diagnostic.related_information or []
    assert related.location.uri == uri and related.location.range.start.line == 4


@pytest.mark.asyncio
async def test_suppress_with_noqa_action(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    text = HAZARD.replace("w.cpu().numpy()", "w.cpu().numpy()  # noqa: E501")
    published = await next_publish(client, lambda: open_document(client, uri, text))
    actions = await code_actions(client, uri, text, list(published.diagnostics), only=[types.CodeActionKind.QuickFix])
    (suppress,) = [a for a in actions if "noqa" in a.title]
    assert suppress.title == "DET101: suppress with # noqa: DET101"
    assert suppress.edit is not None and suppress.edit.changes is not None
    suppressed = apply_edits(text, list(suppress.edit.changes[uri]))
    assert suppressed.endswith("w.cpu().numpy()  # noqa: E501, DET101\n")
    after = await next_publish(client, lambda: replace_text(client, uri, 2, suppressed))
    assert list(after.diagnostics) == []
    plain = await code_actions(client, uri, HAZARD, [], only=[types.CodeActionKind.QuickFix])
    assert plain == []  # the cached analysis of version 2: nothing left to suppress


def test_noqa_edit_adds_merges_or_leaves_alone() -> None:
    from pygls.workspace.position_codec import PositionCodec

    from flake8_detach.lsp.convert import noqa_edit

    codec = PositionCodec()
    added = noqa_edit(["w.numpy()"], 1, "DET101", codec)
    assert added is not None and added.new_text == "  # noqa: DET101" and added.range.start.character == 9
    merged = noqa_edit(["w.numpy()  # noqa:DET104"], 1, "DET101", codec)
    assert merged is not None and merged.new_text == "DET104, DET101"
    assert noqa_edit(["w.numpy()  # noqa"], 1, "DET101", codec) is None
    assert noqa_edit(["w.numpy()  # noqa: DET101"], 1, "DET101", codec) is None


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "flake8_detach", "lsp", "--debounce-ms", str(DEBOUNCE_MS)]
    )
)
async def error_client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    accept_registrations(lsp_client)
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), initialization_options={"severity": "error"}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_severity_from_initialization_options(error_client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    published = await next_publish(error_client, lambda: open_document(error_client, uri, HAZARD))
    assert [d.severity for d in published.diagnostics] == [types.DiagnosticSeverity.Error]


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "flake8_detach", "lsp", "--debounce-ms", str(DEBOUNCE_MS)]
    )
)
async def bounded_client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    accept_registrations(lsp_client)
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"maxFileLines": 50, "maxFileBytes": 4000}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_document_over_the_size_bound_is_skipped_with_a_note(bounded_client: LanguageClient, tmp_path: Path) -> None:
    client = bounded_client
    uri = (tmp_path / "generated.py").as_uri()
    long_text = HAZARD + "x = 1\n" * 60
    published = await next_publish(client, lambda: open_document(client, uri, long_text))
    (note,) = published.diagnostics  # not silence, and not the hazard: the file is not analysed
    assert note.severity == types.DiagnosticSeverity.Information and note.range.start == types.Position(line=0, character=0)
    assert note.message.startswith("flake8-detach does not analyse this file: 64 lines, over the 50-line bound")
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert list(report.items) == [note]
    assert await code_actions(client, uri, long_text, [note]) == []
    wide_text = HAZARD + "s = '" + "\u00e9" * 2000 + "'\n"  # 2,000 characters, 4,000 bytes of UTF-8
    after = await next_publish(client, lambda: replace_text(client, uri, 2, wide_text))
    (note,) = after.diagnostics
    assert "4,0" in note.message and "bytes, over the 4,000-byte bound (maxFileBytes)" in note.message
    small = await next_publish(client, lambda: replace_text(client, uri, 3, HAZARD))
    assert [d.code for d in small.diagnostics] == ["DET101"]  # under the bound again: analysed


def test_the_default_size_bound() -> None:
    from flake8_detach.lsp.server import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, DetachLanguageServer

    server = DetachLanguageServer()
    assert (server.max_bytes, server.max_lines) == (DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES) == (2_000_000, 50_000)
    assert server.too_large("x = 1\n" * 40_000) is None
    assert server.too_large("x = 1\n" * 50_000) == "50,001 lines, over the 50,000-line bound (maxFileLines)"
    assert server.too_large("x = '" + "a" * 2_000_001 + "'\n").endswith("bytes, over the 2,000,000-byte bound (maxFileBytes)")


@pytest.mark.asyncio
async def test_the_server_watches_the_config_files(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    await next_publish(client, lambda: open_document(client, uri, HAZARD))
    watchers = [
        watcher["globPattern"]
        for params in REGISTRATIONS for registration in params.registrations
        if registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        for watcher in registration.register_options["watchers"]
    ]
    assert {"**/pyproject.toml", "**/setup.cfg", "**/tox.ini", "**/.flake8"} <= set(watchers)


@pytest.mark.asyncio
async def test_per_file_ignores_apply_in_the_editor_as_in_check(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-detach]\nper-file-ignores = { "tests/*" = ["DET101"] }\n')
    ignored = (tmp_path / "tests" / "test_train.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, ignored, HAZARD))
    assert list(published.diagnostics) == []
    kept = (tmp_path / "src" / "train.py").as_uri()
    published = await next_publish(client, lambda: open_document(client, kept, HAZARD))
    assert [d.code for d in published.diagnostics] == ["DET101"]


def test_an_installed_package_renders_its_pages_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flake8_detach import rule_pages

    monkeypatch.setattr(rule_pages, "CHECKOUT_PAGES", tmp_path / "absent")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rule_pages.rule_page.cache_clear()
    try:
        page = rule_pages.rule_page("DET103")
        assert page.is_relative_to(tmp_path / "cache") and page.read_text(encoding="utf-8").startswith("# DET103")
        assert rule_pages.rule_page_uri("DET103") == page.as_uri()
    finally:
        rule_pages.rule_page.cache_clear()


NOTEBOOK_CELLS = [
    "import torch\nmodel = torch.nn.Linear(2, 2)",
    "%matplotlib inline\nout = model(torch.ones(2))",
    "x = 1",
    "pred = out.cpu().numpy()",
]


def open_notebook(client: LanguageClient, uri: str, cells: list[str], markdown: frozenset[int] = frozenset()) -> list[str]:
    """Open a notebook of these cells (those at the ``markdown`` indexes are markdown cells)."""
    cell_uris = [f"vscode-notebook-cell:{uri.removeprefix('file://')}#cell{index}" for index in range(len(cells))]
    kinds = [types.NotebookCellKind.Markup if index in markdown else types.NotebookCellKind.Code
             for index in range(len(cells))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=uri, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kind, document=cell) for kind, cell in zip(kinds, cell_uris)],
        ),
        cell_text_documents=[
            types.TextDocumentItem(uri=cell, language_id="markdown" if index in markdown else "python",
                                   version=1, text=text)
            for index, (cell, text) in enumerate(zip(cell_uris, cells))
        ],
    ))
    return cell_uris


async def published_for(client: LanguageClient, uris: list[str]) -> dict[str, list[types.Diagnostic]]:
    for _ in range(300):  # the cells' publishes come in one burst: read what the client holds
        if all(uri in client.diagnostics for uri in uris):
            break
        await asyncio.sleep(0.05)
    return {uri: list(client.diagnostics.get(uri, [])) for uri in uris}


@pytest.mark.asyncio
async def test_notebook_cells_name_each_other_and_a_cell_left_out_says_why(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "calls.ipynb").as_uri()
    cells = ["# Title", "import torch\ndef show(t):\n    return t.numpy()",
             "w = torch.ones(2, requires_grad=True)\nshow(w)", "def broken(:\n    pass"]
    cell_uris = open_notebook(client, uri, cells, markdown=frozenset({0}))
    published = await published_for(client, cell_uris[1:])
    (hazard,) = published[cell_uris[1]]
    # Cells are numbered among all cells (the markdown one counts), as ruff numbers them.
    assert hazard.message.endswith("(the value is passed by the call on cell 3, line 2)"), hazard.message
    (related,) = hazard.related_information or []
    assert related.location.uri == cell_uris[2] and related.location.range.start == types.Position(line=1, character=0)
    assert published[cell_uris[2]] == []
    (left_out,) = published[cell_uris[3]]
    assert left_out.severity == types.DiagnosticSeverity.Error and left_out.source == "flake8-detach"
    assert left_out.range.start == types.Position(line=0, character=11)
    assert left_out.message.startswith("syntax error at line 1, column 12: ")


@pytest.mark.asyncio
async def test_notebook_documents_get_diagnostics_and_fixes_per_cell(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "train.ipynb").as_uri()
    cell_uris = open_notebook(client, uri, NOTEBOOK_CELLS)
    for _ in range(300):  # the cells' publishes come in one burst: read what the client holds
        if all(cell in client.diagnostics for cell in cell_uris):
            break
        await asyncio.sleep(0.05)
    published = {cell: list(client.diagnostics[cell]) for cell in cell_uris}
    # The hazard crosses cells: the model of cell 1, the output of cell 2, converted in cell 4.
    assert [d.code for d in published[cell_uris[3]]] == ["DET101"]
    assert all(published[cell] == [] for cell in cell_uris[:3])
    (diagnostic,) = published[cell_uris[3]]
    assert diagnostic.range.start == types.Position(line=0, character=17)  # `numpy`, in the cell's own lines
    actions = await code_actions(client, cell_uris[3], NOTEBOOK_CELLS[3], [diagnostic],
                                 only=[types.CodeActionKind.QuickFix])
    fix = next(action for action in actions if "noqa" not in action.title)
    assert fix.edit is not None and fix.edit.changes is not None
    assert apply_edits(NOTEBOOK_CELLS[3], list(fix.edit.changes[cell_uris[3]])) == "pred = out.detach().cpu().numpy()"
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=cell_uris[3])))
    assert [d.code for d in report.items] == ["DET101"]


def test_a_new_version_with_the_same_text_reuses_the_analysis(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A save or an undone edit bumps the version, not the text: nothing is analysed again."""
    from pygls.workspace import Workspace

    from flake8_detach.lsp import server as server_module

    server = server_module.create_server(debounce_seconds=0)
    server.protocol._workspace = Workspace(None)
    uri = (tmp_path / "train.py").as_uri()
    checked: list[str] = []
    original = server_module.check_text

    def counted(source: str, *args: Any) -> Any:
        checked.append(source)
        return original(source, *args)

    monkeypatch.setattr(server_module, "check_text", counted)

    def put(version: int, text: str) -> None:
        server.workspace.put_text_document(
            types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text))

    async def lint(version: int, text: str) -> Any:
        put(version, text)
        return await server.analysis(uri)

    async def scenario() -> None:
        first = await lint(1, HAZARD)
        assert first.report.diagnostics and len(checked) == 1
        edited = await lint(2, HAZARD + "x = 1\n")
        assert len(checked) == 2
        undone = await lint(3, HAZARD)
        assert len(checked) == 3, "the text differs from the last analysis: analysed"
        saved = await lint(4, HAZARD)
        assert len(checked) == 3 and saved.version == 4
        assert saved.report is undone.report and edited.report is not undone.report

    asyncio.run(scenario())


def in_process_server(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, dict[str, int]]:
    """A server with pygls' real workspace, counting the analyses and the fixer's runs."""
    from pygls.workspace import Workspace

    from flake8_detach.lsp import server as server_module

    server = server_module.create_server(debounce_seconds=0)
    server.protocol._workspace = Workspace(None)
    counts = {"check": 0, "fix": 0}
    check_text, fix_source = server_module.check_text, server_module.fix_source

    def counted_check(*args: Any) -> Any:
        counts["check"] += 1
        return check_text(*args)

    def counted_fix(*args: Any, **kwargs: Any) -> Any:
        counts["fix"] += 1
        return fix_source(*args, **kwargs)

    monkeypatch.setattr(server_module, "check_text", counted_check)
    monkeypatch.setattr(server_module, "fix_source", counted_fix)
    return server, counts


def test_code_actions_answer_from_the_analysis_and_never_rerun_the_fixer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    server, counts = in_process_server(monkeypatch)
    uri = (tmp_path / "train.py").as_uri()
    text = HAZARD + "w.numpy()\n"
    server.workspace.put_text_document(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))

    def request(only: list[str] | None, line: int) -> types.CodeActionParams:
        return types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line + 1, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=only))

    async def scenario() -> None:
        result = await server.analysis(uri)
        assert result.report.fixes is not None  # the fixes were rendered by the lint, off the loop
        first = await server.code_actions(request(None, 2))
        # The cursor moved: the answer comes at once, fix-all once the fixer (started now) is done.
        assert [a.kind for a in first] == [types.CodeActionKind.QuickFix] * 2
        for _ in range(100):
            if result.fix_all_done:
                break
            await asyncio.sleep(0.02)
        for line in (2, 3, 2, 3, 2):
            actions = await server.code_actions(request(None, line))
            assert [a.kind for a in actions][-1] == "source.fixAll.flake8-detach"
        (fix_all,) = await server.code_actions(request(["source.fixAll"], 0))
        assert counts == {"check": 1, "fix": 1}, counts
        # Asked for by name (on save), on a version not fixed yet: the fixer runs, and is awaited.
        server.workspace.put_text_document(
            types.TextDocumentItem(uri=uri, language_id="python", version=2, text=text + "w.numpy()\n"))
        await server.analysis(uri)
        (fix_all,) = await server.code_actions(request(["source.fixAll"], 0))
        assert fix_all.edit is not None and counts == {"check": 2, "fix": 2}, counts

    asyncio.run(scenario())


def test_rapid_edits_run_one_analysis_at_a_time_and_publish_only_current_versions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """20 edits 0.1 s apart, an analysis of 0.25 s: a superseded lint's thread is not run beside
    the next one (a thread cannot be cancelled), and no outdated version is ever published."""
    import time

    from flake8_detach.lsp import server as server_module

    server, counts = in_process_server(monkeypatch)
    server.debounce_seconds = 0.05
    counted = server_module.check_text

    def slow(*args: Any) -> Any:
        time.sleep(0.25)
        return counted(*args)

    monkeypatch.setattr(server_module, "check_text", slow)
    published: list[tuple[int, int]] = []  # (published version, the buffer's version then)

    def publish(params: types.PublishDiagnosticsParams) -> None:
        published.append((params.version, server.document(params.uri).version))

    monkeypatch.setattr(server, "text_document_publish_diagnostics", publish)
    uri = (tmp_path / "train.py").as_uri()

    def put(version: int, text: str) -> None:
        server.workspace.put_text_document(
            types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text))

    async def scenario() -> None:
        put(1, HAZARD)
        server.schedule(uri, 0)
        for version in range(2, 22):
            await asyncio.sleep(0.1)
            put(version, HAZARD + f"x = {version}\n")
            server.schedule(uri, server.debounce_seconds)
        while server.pending or server.running:
            await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert counts["check"] <= 10, counts  # 15 before: a cancelled lint's thread ran on beside the next
    assert published and published[-1][0] == 21
    assert all(version == current for version, current in published), published


def test_a_storm_of_config_events_is_one_relint_per_open_document(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    server, counts = in_process_server(monkeypatch)
    server.debounce_seconds = 0.1
    published: list[types.PublishDiagnosticsParams] = []
    monkeypatch.setattr(server, "text_document_publish_diagnostics", published.append)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.flake8-detach]\nignore = []\n')
    uris = [(tmp_path / f"m{index}.py").as_uri() for index in range(3)]

    async def settle() -> None:
        await asyncio.sleep(0.01)
        while server.pending or server.running:
            await asyncio.sleep(0.02)

    async def storm(events: int) -> None:
        for _ in range(events):
            server.settings_changed()
            await asyncio.sleep(0.02)
        await settle()

    async def scenario() -> None:
        for uri in uris:
            server.workspace.put_text_document(
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=HAZARD))
            server.schedule(uri, 0)
        await settle()
        assert counts["check"] == 3 and all([d.code for d in p.diagnostics] == ["DET101"] for p in published)
        pyproject.write_text('[tool.flake8-detach]\nignore = ["DET101"]\n')
        published.clear()
        await storm(50)
        assert counts["check"] == 6, counts  # one re-lint per open document, not 50
        assert len(published) == 3 and all(list(p.diagnostics) == [] for p in published)
        await storm(10)  # events that change nothing: the settings are the same, nothing re-linted
        assert counts["check"] == 6, counts

    asyncio.run(scenario())
