"""The language server: diagnostics as you type, quick fixes and fix-all, over stdio (pygls).

It runs the same code as `flake8-detach check` on the editor's buffer (not the file on disk):
same engine, same `# noqa` handling, same `[tool.flake8-detach]` settings, found from the
document's folder. Changes are linted after a short pause (debounced) so typing stays smooth,
and a result is published only if the buffer has not changed since it was linted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..cli.check import check_text
from ..config import Config, ConfigError, discover_config
from ..diagnostics import Diagnostic
from ..files import is_path_excluded
from ..fixer import fix_source
from ..reporting import rule_url
from ..reporting.model import FileReport
from ..reporting.spans import fix_edits, minimal_edit, token_length
from .convert import position, split_lines, text_edit

LOG = logging.getLogger(__name__)
SOURCE = "flake8-detach"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.flake8-detach"
DEFAULT_DEBOUNCE_SECONDS = 0.3


@dataclass
class LintResult:
    version: int | None
    source: str
    config: Config
    report: FileReport


class DetachLanguageServer(LanguageServer):
    def __init__(self, debounce_seconds: float = DEFAULT_DEBOUNCE_SECONDS) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.debounce_seconds = debounce_seconds
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.reported_config_errors: set[str] = set()

    # -- linting -----------------------------------------------------------------------------

    def config_for(self, uri: str) -> Config:
        """The `[tool.flake8-detach]` governing this document; defaults (and a message) if broken."""
        path = to_fs_path(uri)
        start = Path(path).parent if path else Path(self.workspace.root_path or Path.cwd())
        try:
            return discover_config(start)
        except ConfigError as error:
            message = f"flake8-detach: {error} (using the default settings)"
            if message not in self.reported_config_errors:
                self.reported_config_errors.add(message)
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
            return Config()

    def project_root(self, config: Config) -> Path | None:
        """Where excluded folders are looked for: the config's folder, else the workspace root."""
        if config.root is not None:
            return config.root
        root = self.workspace.root_path
        return Path(root) if root else None

    @staticmethod
    def check(uri: str, source: str, config: Config, root: Path | None) -> FileReport:
        """Check one buffer's text (pure: safe to run in a worker thread).

        A file `check` would skip (under `.venv`, `build`, an `extend-exclude` pattern) gets no
        diagnostics either, so opening a library's source does not flood the editor.
        """
        path = to_fs_path(uri)
        if path and is_path_excluded(Path(path), config.extend_exclude, root):
            return FileReport(path)
        return check_text(source, path or uri, config.settings())

    def lint(self, uri: str) -> LintResult:
        """Check the buffer as it is now."""
        document = self.workspace.get_text_document(uri)
        config = self.config_for(uri)
        source = document.source
        report = self.check(uri, source, config, self.project_root(config))
        return LintResult(document.version, source, config, report)

    def lsp_diagnostics(self, result: LintResult) -> list[types.Diagnostic]:
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        lines = split_lines(result.source)
        return [to_lsp_diagnostic(d, lines, encoding) for d in result.report.diagnostics]

    async def publish(self, uri: str) -> None:
        """Lint off the event loop, then publish unless the buffer changed in the meantime."""
        document = self.workspace.get_text_document(uri)
        version, source = document.version, document.source
        config = self.config_for(uri)
        report = await asyncio.to_thread(self.check, uri, source, config, self.project_root(config))
        current = self.workspace.text_documents.get(uri)
        if current is None or current.version != version:
            return
        result = LintResult(version, source, config, report)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=self.lsp_diagnostics(result))
        )

    def schedule(self, uri: str, delay: float) -> None:
        """(Re)start the lint of ``uri`` after ``delay`` seconds; a newer change cancels an older one."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()

        async def later() -> None:
            try:
                if delay:
                    await asyncio.sleep(delay)
                await self.publish(uri)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                LOG.exception("flake8-detach: lint failed for %s", uri)
                self.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Error, message=f"flake8-detach: {error!r}")
                )
            finally:
                if self.pending.get(uri) is task:
                    del self.pending[uri]

        task = asyncio.get_running_loop().create_task(later())
        self.pending[uri] = task

    # -- code actions --------------------------------------------------------------------------

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        if uri not in self.workspace.text_documents:
            return []
        result = self.lint(uri)
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        lines = split_lines(result.source)
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        if _wants(wanted, types.CodeActionKind.QuickFix):
            actions.extend(self.quick_fixes(uri, result, params.range, lines, encoding))
        if _wants(wanted, FIX_ALL_KIND):
            fix_all = self.fix_all(uri, result, lines, encoding)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    def quick_fixes(
        self, uri: str, result: LintResult, wanted: types.Range, lines: list[str], encoding: str
    ) -> list[types.CodeAction]:
        module = result.report.module
        fixable = [d for d in result.report.diagnostics if d.fix is not None]
        if module is None or not fixable:
            return []
        edits = fix_edits(module, [d.fix for d in fixable if d.fix is not None])
        actions = []
        for diagnostic, edit in zip(fixable, edits):
            lsp_diagnostic = to_lsp_diagnostic(diagnostic, lines, encoding)
            if not _overlaps(lsp_diagnostic.range, wanted):
                continue
            assert diagnostic.fix is not None
            safety = "" if diagnostic.fix.safe else " (unsafe)"
            actions.append(
                types.CodeAction(
                    title=f"{diagnostic.code}: {diagnostic.fix.description}{safety}",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diagnostic],
                    is_preferred=diagnostic.fix.safe,
                    edit=types.WorkspaceEdit(changes={uri: [text_edit(lines, edit, encoding)]}),
                )
            )
        return actions

    def fix_all(self, uri: str, result: LintResult, lines: list[str], encoding: str) -> types.CodeAction | None:
        """Every safe fix at once, through the same fixer as `flake8-detach fix`."""
        if not any(d.fix is not None and d.fix.safe for d in result.report.diagnostics):
            return None
        fixed = fix_source(result.source, result.config.settings())
        if fixed.error is not None or fixed.source == result.source:
            return None
        edit = minimal_edit(result.source, fixed.source)
        return types.CodeAction(
            title="flake8-detach: fix all safely fixable hazards",
            kind=FIX_ALL_KIND,
            edit=types.WorkspaceEdit(changes={uri: [text_edit(lines, edit, encoding)]}),
        )


def to_lsp_diagnostic(diagnostic: Diagnostic, lines: list[str], encoding: str) -> types.Diagnostic:
    line_text = lines[diagnostic.line - 1] if 0 < diagnostic.line <= len(lines) else ""
    end = diagnostic.column + token_length(line_text, diagnostic.column)
    message = diagnostic.message.removeprefix(f"{diagnostic.code} ")
    return types.Diagnostic(
        range=types.Range(
            start=position(lines, diagnostic.line, diagnostic.column, encoding),
            end=position(lines, diagnostic.line, end, encoding),
        ),
        message=message,
        severity=types.DiagnosticSeverity.Error,
        code=diagnostic.code,
        code_description=types.CodeDescription(href=rule_url(diagnostic.code)),
        source=SOURCE,
    )


def _wants(only: Sequence[str] | None, kind: str) -> bool:
    """LSP: `only` filters by kind prefix (`source.fixAll` asks for `source.fixAll.flake8-detach`)."""
    if not only:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def create_server(debounce_seconds: float = DEFAULT_DEBOUNCE_SECONDS) -> DetachLanguageServer:
    server = DetachLanguageServer(debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: DetachLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: DetachLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: DetachLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)  # a saved pyproject.toml may change the settings

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: DetachLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = ls.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND],
            resolve_provider=False,
        ),
    )
    def code_action(ls: DetachLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.code_actions(params)

    return server
