"""The language server: diagnostics as you type, quick fixes and fix-all, over stdio (pygls).

It runs the same code as `flake8-detach check` on the editor's buffer (not the file on disk):
same engine, same `# noqa` handling, same settings (`[tool.flake8-detach]`, or the flake8
options files), resolved per document. Changes are linted after a short pause (debounced), off
the event loop, one analysis per buffer at a time (a newer lint waits for the thread of a
superseded one rather than run beside it), and a result is published only if the buffer has not
changed since. A storm of config-file events is one re-lint per open buffer, after the same pause.
A buffer over the size bound (2 MB or 50,000 lines) is not analysed: one note says so.

Each document's latest analysis is kept per version: code actions (sent on every cursor move)
and pull diagnostics answer from it instead of re-linting. While a buffer does not parse, the
last good diagnostics stay and one syntax diagnostic is added, so hazards do not flicker away
while the user types.

`initialize` is answered before the analysis is loaded: this module imports neither the engine
nor libcst (a clean buffer never needs them), and a thread loads them once the client says
`initialized`, while it opens its first files. `flake8-detach lsp` answers it even before this
module (and pygls) is imported, while they load (fast_start.py): a feature or option registered
here changes the answer, and tests/test_lsp_fast_start.py then asks for fast_start's
description to be updated.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec
from pygls.workspace.text_document import TextDocument

from .. import __version__
from ..cli.check import check_text
from ..config import FLAKE8_FILES, Config, ConfigError, discover_config
from ..fixing.fixer import fix_source
from ..reporting.model import FileReport, RenderedFix
from ..reporting.spans import minimal_edit
from ..sources.files import is_path_excluded
from .convert import (
    DEFAULT_SEVERITY,
    SEVERITIES,
    SOURCE,
    fix_action,
    noqa_edit,
    overlaps,
    position,
    split_lines,
    suppress_action,
    text_edit,
    to_lsp_diagnostic,
    uri_key,
)
from .notebooks import (
    NOTEBOOK_SYNC,
    NotebookResult,
    analyse_notebook,
    cell_code_actions,
    cell_diagnostics,
    publish_notebook,
)

LOG = logging.getLogger(__name__)
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.flake8-detach"
DEFAULT_DEBOUNCE_SECONDS = 0.3
# Beyond these a buffer is not analysed (a generated or data file: minutes and gigabytes to lint);
# the server says so with one Information diagnostic. initializationOptions maxFileBytes/Lines.
DEFAULT_MAX_BYTES = 2_000_000
DEFAULT_MAX_LINES = 50_000
# A code action request without `only` (every cursor move) answers at once: fix-all from the
# cache, else left out while the fixer behind it starts this long after the answer has gone (a
# thread parsing 6,000 lines holds the GIL for a while) and runs in the background.
FIX_ALL_START_DELAY = 0.05
# Files whose change may change the settings of open documents.
CONFIG_FILES = ("pyproject.toml", *FLAKE8_FILES)
PYTHON_SUFFIXES = (".py", ".pyi")
# What a buffer with something to report needs (libcst among it): loaded in the background.
ANALYSIS_MODULES = ("flake8_detach.engine", "flake8_detach.fixing.passes", "flake8_detach.reporting.fix_spans")


@dataclass
class LintResult:
    """One analysis of one version of a buffer, and what code actions derive from it (once)."""

    version: int | None
    source: str
    config: Config
    report: FileReport
    path: Path | None = None  # the document's file (per-file-ignores), if it has one
    lines: list[str] = field(default_factory=list)
    _fix_all: str | None = field(default=None, repr=False)
    # Derived once per version, so a code action (sent on every cursor move) costs a lookup:
    # the diagnostics in LSP terms, each one's quick fixes, and the fix-all action.
    lsp: list[types.Diagnostic] | None = field(default=None, repr=False)
    actions: dict[int, list[types.CodeAction]] = field(default_factory=dict, repr=False)
    fix_all_action: types.CodeAction | None = field(default=None, repr=False)
    fix_all_done: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if not self.lines:
            self.lines = split_lines(self.source)

    def rendered_fixes(self) -> list[RenderedFix | None]:
        return self.report.rendered_fixes() if self.report.module is not None else [None] * len(self.report.diagnostics)

    def fixed_source(self) -> str:
        """The buffer with every safe fix applied (the fixer runs once per version)."""
        if self._fix_all is None:
            fixed = fix_source(self.source, self.config.settings_for(self.path))
            self._fix_all = self.source if fixed.error is not None else fixed.source
        return self._fix_all


class DetachLanguageServer(LanguageServer):
    def __init__(self, debounce_seconds: float = DEFAULT_DEBOUNCE_SECONDS, severity: str = DEFAULT_SEVERITY) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC)
        self.debounce_seconds = debounce_seconds
        self.severity = SEVERITIES[severity]
        self.pending: dict[str, asyncio.Task[None]] = {}
        # The analysis running in a worker thread, per document: a thread cannot be cancelled, so
        # a newer lint waits for it instead of running beside it (one analysis per buffer at once).
        self.running: dict[str, asyncio.Future[FileReport]] = {}
        self.reported_config_errors: set[str] = set()
        self.results: dict[str, LintResult] = {}  # the latest analysis of each open document
        self.last_good: dict[str, list[types.Diagnostic]] = {}  # kept while a buffer does not parse
        self.notebook_results: dict[str, NotebookResult] = {}  # the latest analysis of each notebook
        self.max_bytes = DEFAULT_MAX_BYTES
        # The fixer behind fix-all, per document: one run at a time, off the event loop.
        self.fixing: dict[str, asyncio.Task[None]] = {}
        self.fix_all_start_delay = FIX_ALL_START_DELAY
        self.max_lines = DEFAULT_MAX_LINES

    # -- documents ---------------------------------------------------------------------------

    def document(self, uri: str) -> TextDocument | None:
        """The open text document at ``uri``, looked up as pygls keys documents.

        pygls stores documents under their unquoted URI (`file:///c%3A/x.py` as `file:///c:/x.py`),
        so a lookup by the raw URI misses every percent-encoded one (Windows paths, spaces,
        non-ASCII names, notebook cells). `get_text_document` makes up a document read from disk
        for a URI that is not open (it has no version): that is not an open buffer.
        """
        document = self.workspace.get_text_document(uri)
        return document if document.version is not None else None

    # -- settings ------------------------------------------------------------------------------

    def apply_initialization_options(self, options: object) -> None:
        """`{"severity": "warning", "maxFileBytes": 2000000, "maxFileLines": 50000}` from the
        client's initializationOptions (or settings)."""
        if not isinstance(options, dict):
            return
        for name, attribute in (("maxFileBytes", "max_bytes"), ("maxFileLines", "max_lines")):
            value = options.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                setattr(self, attribute, value)
            elif value is not None:
                self.window_show_message(types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"flake8-detach: {name} must be a positive integer, not {value!r}",
                ))
        severity = options.get("severity")
        if isinstance(severity, str) and severity.lower() in SEVERITIES:
            self.severity = SEVERITIES[severity.lower()]
        elif severity is not None:
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning,
                message=f"flake8-detach: unknown severity {severity!r}; use one of {', '.join(SEVERITIES)}",
            ))

    def config_for(self, uri: str) -> Config:
        """The settings governing this document; defaults (and a message) if they are broken."""
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

    def is_python(self, uri: str) -> bool:
        """Only Python buffers are linted (a saved pyproject.toml is a config change, not code)."""
        if self.workspace.get_notebook_document(cell_uri=uri) is not None:
            return False  # a notebook cell: linted with its notebook (lsp/notebooks.py)
        document = self.document(uri)
        if document is not None and document.language_id:
            return document.language_id == "python"
        return (to_fs_path(uri) or uri).endswith(PYTHON_SUFFIXES)

    def too_large(self, source: str) -> str | None:
        """Why the buffer is not analysed (over the size bound), or None."""
        lines = source.count("\n") + 1
        if lines > self.max_lines:
            return f"{lines:,} lines, over the {self.max_lines:,}-line bound (maxFileLines)"
        if len(source) * 4 > self.max_bytes:  # else it cannot be over: 4 bytes a character at most
            size = len(source.encode("utf-8", "surrogatepass"))
            if size > self.max_bytes:
                return f"{size:,} bytes, over the {self.max_bytes:,}-byte bound (maxFileBytes)"
        return None

    # -- linting -----------------------------------------------------------------------------

    @staticmethod
    def check(uri: str, source: str, config: Config, root: Path | None) -> FileReport:
        """Check one buffer's text (pure: safe to run in a worker thread).

        A file `check` would skip (under `.venv`, `build`, an `extend-exclude` pattern) gets no
        diagnostics either, so opening a library's source does not flood the editor.
        """
        path = to_fs_path(uri)
        if path and is_path_excluded(Path(path), config.extend_exclude, root):
            return FileReport(path)
        # The buffer's path reaches the project index (analysis/project.py); an untitled buffer has none.
        return check_text(source, path or uri, config.settings_for(Path(path) if path else None),
                          Path(path) if path else None)

    @classmethod
    def check_and_render(cls, uri: str, source: str, config: Config, root: Path | None) -> FileReport:
        """`check`, and each diagnostic's fix rendered as an edit (in the same worker thread), so
        that quick fixes answer from the analysis without touching libcst on the event loop."""
        report = cls.check(uri, source, config, root)
        if report.module is not None:
            report.rendered_fixes()
        return report

    async def analysis(self, uri: str) -> LintResult | None:
        """The analysis of the buffer as it is now: the cached one if the version matches."""
        key = uri_key(uri)
        while (busy := self.running.get(key)) is not None:
            await asyncio.wait([busy])  # an analysis in flight (maybe of this very version)
        document = self.document(uri)
        if document is None or not self.is_python(uri):
            return None
        cached = self.results.get(key)
        if cached is not None and cached.version == document.version and cached.source == document.source:
            return cached
        version, source = document.version, document.source
        config = self.config_for(uri)
        if cached is not None and cached.source == source and cached.config == config:
            # A new version with the same text (a save, an edit undone): the analysis stands.
            reused = replace(cached, version=version)
            self.results[key] = reused
            return reused
        path = to_fs_path(uri)
        skipped = self.too_large(source)
        if skipped is not None:
            report = FileReport(path or uri, skipped=skipped)
            result = LintResult(version, source, config, report, Path(path) if path else None, lines=[""])
        else:
            work = asyncio.ensure_future(
                asyncio.to_thread(self.check_and_render, uri, source, config, self.project_root(config)))
            self.running[key] = work
            work.add_done_callback(lambda done: self.running.pop(key, None) if self.running.get(key) is done else None)
            # Shielded: a newer edit cancels the lint waiting here, not the thread's bookkeeping.
            report = await asyncio.shield(work)
            result = LintResult(version, source, config, report, Path(path) if path else None)
        current = self.document(uri)
        if current is not None and current.version == version:
            self.results[key] = result
        return result

    def lsp_diagnostics(self, uri: str, result: LintResult) -> list[types.Diagnostic]:
        codec = self.workspace.position_codec
        report = result.report
        if report.skipped is not None:
            # Not silence: one note at the top saying the buffer is not analysed, and why.
            start = types.Position(line=0, character=0)
            return [types.Diagnostic(
                range=types.Range(start=start, end=start),
                message=f"flake8-detach does not analyse this file: {report.skipped}",
                severity=types.DiagnosticSeverity.Information,
                source=SOURCE,
            )]
        if report.error is not None and report.error_position is not None:
            # The buffer does not parse (the user is typing): keep what the last good version
            # showed and say where the syntax error is.
            line, column = report.error_position
            start = position(result.lines, line, column, codec)
            syntax = types.Diagnostic(
                range=types.Range(start=start, end=types.Position(line=start.line, character=start.character + 1)),
                message=f"{report.error} (flake8-detach shows the last diagnostics until the file parses)",
                severity=types.DiagnosticSeverity.Error,
                source=SOURCE,
            )
            return [*self.last_good.get(uri_key(uri), []), syntax]
        diagnostics = self.converted(uri, result)
        self.last_good[uri_key(uri)] = diagnostics
        return diagnostics

    def converted(self, uri: str, result: LintResult) -> list[types.Diagnostic]:
        """The analysis' diagnostics in LSP terms (converted once per version)."""
        if result.lsp is None:
            codec = self.workspace.position_codec
            result.lsp = [to_lsp_diagnostic(d, result.lines, codec, self.severity, uri) for d in result.report.diagnostics]
        return result.lsp

    async def publish(self, uri: str) -> None:
        """Lint off the event loop, then publish unless the buffer changed in the meantime."""
        document = self.document(uri)
        if document is None:
            return
        uri = document.uri  # as the client sent it: published under the URI it knows
        version = document.version
        result = await self.analysis(uri)
        current = self.document(uri)
        if result is None or current is None or current.version != version:
            return
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=self.lsp_diagnostics(uri, result))
        )

    def schedule(self, uri: str, delay: float, notebook: bool = False) -> None:
        """(Re)start the lint of ``uri`` after ``delay`` seconds; a newer change cancels an older one."""
        if not notebook and not self.is_python(uri):
            return
        key = uri_key(uri)
        previous = self.pending.pop(key, None)
        if previous is not None:
            previous.cancel()

        async def later() -> None:
            try:
                if delay:
                    await asyncio.sleep(delay)
                await (publish_notebook(self, uri) if notebook else self.publish(uri))
            except asyncio.CancelledError:
                raise
            except Exception as error:
                LOG.exception("flake8-detach: lint failed for %s", uri)
                self.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Error, message=f"flake8-detach: {error!r}")
                )
            finally:
                if self.pending.get(key) is task:
                    del self.pending[key]

        task = asyncio.get_running_loop().create_task(later())
        self.pending[key] = task

    def settings_changed(self) -> None:
        """A config file changed: re-lint every open Python buffer whose settings it changed.

        Coalesced: a storm of events (a branch switch, a formatter rewriting pyproject.toml) is
        one re-lint per open document after the debounce delay, and an analysis whose settings
        came out the same is kept (each one's settings are compared, not assumed changed).
        """
        for key, result in list(self.results.items()):
            self.results[key] = replace(result, version=None)  # the settings are checked again
        self.notebook_results.clear()
        self.reported_config_errors.clear()
        # The workspace's keys are unquoted URIs: each document's own `uri` is the client's.
        for document in list(self.workspace.text_documents.values()):
            self.schedule(document.uri, self.debounce_seconds)
        for notebook in list(self.workspace.notebook_documents.values()):
            self.schedule(notebook.uri, self.debounce_seconds, notebook=True)

    def forget(self, uri: str) -> None:
        key = uri_key(uri)
        pending = self.pending.pop(key, None)
        if pending is not None:
            pending.cancel()
        self.results.pop(key, None)
        self.last_good.pop(key, None)
        self.notebook_results.pop(key, None)

    # -- code actions --------------------------------------------------------------------------

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        in_cell = await cell_code_actions(self, params)
        if in_cell is not None:
            return in_cell if _wants(params.context.only, types.CodeActionKind.QuickFix) else []
        result = await self.analysis(uri)
        if result is None:
            return []
        codec = self.workspace.position_codec
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        if _wants(wanted, types.CodeActionKind.QuickFix):
            actions.extend(self.quick_fixes(uri, result, params.range, codec))
        if _wants(wanted, FIX_ALL_KIND):
            # Asked for by name (on save): wait for the fixer. Asked for with everything else (a
            # cursor move): from the cache, else left out while the fixer runs in the background.
            fix_all = await self.fix_all(uri, result, codec, wait=bool(wanted))
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    def quick_fixes(
        self, uri: str, result: LintResult, wanted: types.Range, codec: PositionCodec
    ) -> list[types.CodeAction]:
        """Each diagnostic in range: its fix (where it has one), then "suppress with noqa" (as ruff)."""
        fixes: list[types.CodeAction] = []
        suppressions: list[types.CodeAction] = []
        rendered_fixes: list[RenderedFix | None] | None = None
        for index, lsp_diagnostic in enumerate(self.converted(uri, result)):
            if not overlaps(lsp_diagnostic.range, wanted):
                continue
            actions = result.actions.get(index)
            if actions is None:  # built once per diagnostic and version
                if rendered_fixes is None:
                    rendered_fixes = result.rendered_fixes()  # rendered by the lint already
                rendered, diagnostic = rendered_fixes[index], result.report.diagnostics[index]
                actions = []
                if rendered is not None:
                    actions.append(fix_action(uri, lsp_diagnostic, rendered, text_edit(result.lines, rendered.edit, codec)))
                suppress = noqa_edit(result.lines, diagnostic.line, diagnostic.code, codec)
                if suppress is not None:
                    actions.append(suppress_action(uri, lsp_diagnostic, suppress))
                result.actions[index] = actions
            for action in actions:
                (suppressions if action.is_preferred is None else fixes).append(action)
        return fixes + suppressions

    async def fix_all(
        self, uri: str, result: LintResult, codec: PositionCodec, wait: bool = True
    ) -> types.CodeAction | None:
        """Every safe fix at once, through the same fixer as `flake8-detach fix` (once per version,
        in the background: one run per document at a time). ``wait``: for the fixer if it has not
        run (fix-all asked for by name); else answer at once, without it until it is done."""
        if not any(d.fix is not None and d.fix.safe for d in result.report.diagnostics):
            return None
        if result.fix_all_done:
            return result.fix_all_action
        key = uri_key(uri)
        running = self.fixing.get(key)
        if running is not None and not running.done():
            if not wait:
                return None  # the cursor moved while the fixer runs: answer now, without fix-all
            await asyncio.shield(running)  # an older version's run: let it finish, then ours
            if result.fix_all_done:
                return result.fix_all_action

        def compute() -> None:
            try:
                fixed = result.fixed_source()
            except Exception:  # a bug of ours: no fix-all, and the server goes on
                LOG.exception("flake8-detach: fix-all failed for %s", uri)
                fixed = result.source
            if fixed != result.source:
                edit = minimal_edit(result.source, fixed)
                result.fix_all_action = types.CodeAction(
                    title="flake8-detach: fix all safely fixable hazards",
                    kind=FIX_ALL_KIND,
                    edit=types.WorkspaceEdit(changes={uri: [text_edit(result.lines, edit, codec)]}),
                )
            result.fix_all_done = True

        async def run() -> None:
            try:
                if not wait:
                    await asyncio.sleep(self.fix_all_start_delay)  # after the answer has gone
                    if self.results.get(key) is not result:
                        return  # superseded by an edit meanwhile: the fixer would work for nothing
                await asyncio.to_thread(compute)
            finally:
                if self.fixing.get(key) is task:
                    del self.fixing[key]

        task = asyncio.get_running_loop().create_task(run())
        self.fixing[key] = task
        if wait:
            await asyncio.shield(task)
        return result.fix_all_action if result.fix_all_done else None


def _wants(only: Sequence[str] | None, kind: str) -> bool:
    """LSP: `only` filters by kind prefix (`source.fixAll` asks for `source.fixAll.flake8-detach`)."""
    if not only:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def load_analysis() -> None:
    """Import the analysis ahead of the first buffer that needs it. A failure is only logged:
    the lint that needs a module imports it again and reports what went wrong."""
    for name in ANALYSIS_MODULES:
        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 - a background warm-up must not kill the server
            LOG.warning("flake8-detach: could not load %s: %r", name, error)


def create_server(
    debounce_seconds: float = DEFAULT_DEBOUNCE_SECONDS, severity: str = DEFAULT_SEVERITY
) -> DetachLanguageServer:
    server = DetachLanguageServer(debounce_seconds, severity)

    @server.feature(types.INITIALIZE)
    def initialize(ls: DetachLanguageServer, params: types.InitializeParams) -> None:
        ls.apply_initialization_options(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: DetachLanguageServer, params: types.InitializedParams) -> None:
        """Load the analysis in the background; ask the client to tell us when a config file
        changes (where it can register watchers)."""
        threading.Thread(target=load_analysis, name="flake8-detach-load-analysis", daemon=True).start()
        workspace = ls.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace is not None else None
        if watched is None or not watched.dynamic_registration:
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]
        )
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(id="flake8-detach-config-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                   register_options=options),
            ]))
        except Exception as error:  # noqa: BLE001 - a client that refuses still gets didSave
            LOG.warning("flake8-detach: could not register file watchers: %r", error)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: DetachLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any((to_fs_path(change.uri) or change.uri).endswith(CONFIG_FILES) for change in params.changes):
            ls.settings_changed()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: DetachLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: DetachLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: DetachLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if (to_fs_path(uri) or uri).endswith(CONFIG_FILES):
            ls.settings_changed()  # a saved pyproject.toml changes the settings, it is not code
        else:
            from ..analysis.project import forget_projects

            forget_projects()  # a saved models.py changes what the other files' summaries say
            ls.schedule(uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def notebook_did_open(ls: DetachLanguageServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0, notebook=True)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def notebook_did_change(ls: DetachLanguageServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, ls.debounce_seconds, notebook=True)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    async def notebook_did_close(ls: DetachLanguageServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.forget(params.notebook_document.uri)
        for cell in params.cell_text_documents:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: DetachLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.forget(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=False, workspace_diagnostics=False),
    )
    async def pull_diagnostics(
        ls: DetachLanguageServer, params: types.DocumentDiagnosticParams
    ) -> types.RelatedFullDocumentDiagnosticReport:
        notebook = ls.workspace.get_notebook_document(cell_uri=params.text_document.uri)
        if notebook is not None:
            notebook_result = await analyse_notebook(ls, notebook.uri)
            cells = cell_diagnostics(ls, notebook_result) if notebook_result is not None else {}
            wanted = uri_key(params.text_document.uri)
            items = next((found for cell, found in cells.items() if uri_key(cell) == wanted), [])
            return types.RelatedFullDocumentDiagnosticReport(items=items)
        result = await ls.analysis(params.text_document.uri)
        items = ls.lsp_diagnostics(params.text_document.uri, result) if result is not None else []
        return types.RelatedFullDocumentDiagnosticReport(items=items)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND],
            resolve_provider=False,
        ),
    )
    async def code_action(ls: DetachLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return await ls.code_actions(params)

    return server
