"""LSP 3.17 notebook documents: the cells of an open notebook linted as one module, per cell.

The client sends the notebook (`notebookDocument/didOpen`/`didChange`/`didClose`) with its cells
as text documents (pygls keeps them in the workspace). The code cells are joined in order exactly
as `flake8-detach check` joins an `.ipynb` file's (flake8_detach/notebooks.py), analysed once per
notebook version off the event loop, and each cell gets the diagnostics of its own lines; code
actions on a cell answer from that analysis, with edits translated into the cell's lines. A cell
that does not parse is left out of the analysis and gets one error at its syntax error, so the
user knows why nothing is reported there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from ..cli.check import check_notebook_module
from ..diagnostics import Diagnostic
from ..reporting.model import FileReport
from ..reporting.spans import TextEdit
from ..sources.notebooks import CellError, NotebookModule, assemble
from .convert import (
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

if TYPE_CHECKING:
    from pygls.workspace import Workspace
    from pygls.workspace.text_document import TextDocument

    from ..config import Config


class NotebookHost(Protocol):
    """What the notebook support needs of the language server (which passes itself)."""

    severity: types.DiagnosticSeverity
    notebook_results: dict[str, NotebookResult]

    @property
    def workspace(self) -> Workspace: ...

    def document(self, uri: str) -> TextDocument | None: ...

    def config_for(self, uri: str) -> Config: ...

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None: ...

NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook="*", cells=[types.NotebookCellLanguage(language="python")]
        )
    ]
)


@dataclass
class NotebookResult:
    """One analysis of one version of an open notebook."""

    version: int
    module: NotebookModule
    report: FileReport
    cell_uris: dict[int, str]  # code cell number -> the cell's text document URI (analysed cells)
    all_uris: dict[int, str]  # the same for every code cell, also those left out
    texts: dict[int, str]  # code cell number -> its text (every code cell)

    def cell_of(self, uri: str) -> int | None:

        key = uri_key(uri)  # the client may quote a cell's URI otherwise than the notebook lists it
        return next((number for number, cell_uri in self.cell_uris.items() if uri_key(cell_uri) == key), None)


def code_cells(ls: NotebookHost, notebook: types.NotebookDocument) -> list[tuple[int, str, str]]:
    """(index, cell URI, text) of the notebook's code cells, in order."""
    cells = []
    for index, cell in enumerate(notebook.cells):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        document = ls.document(cell.document)  # looked up as pygls keys it (unquoted)
        if document is not None and (document.language_id or "python") == "python":
            cells.append((index, cell.document, document.source))
    return cells


async def analyse_notebook(ls: NotebookHost, notebook_uri: str) -> NotebookResult | None:
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return None

    key = uri_key(notebook_uri)
    cached = ls.notebook_results.get(key)
    if cached is not None and cached.version == notebook.version:
        return cached
    cells = code_cells(ls, notebook)
    path = to_fs_path(notebook_uri) or notebook_uri
    module = assemble(path, [(index, text) for index, _, text in cells])
    config = ls.config_for(notebook_uri)
    settings = config.settings_for(Path(path))
    on_disk = Path(path) if to_fs_path(notebook_uri) else None  # the .ipynb's path, for the project index
    report = await asyncio.to_thread(check_notebook_module, module, path, settings, on_disk)
    numbers = {cell.index: cell.number for cell in module.cells}
    uris = {numbers[index]: uri for index, uri, _ in cells if index in numbers}
    result = NotebookResult(notebook.version, module, report, uris,
                            {index + 1: uri for index, uri, _ in cells}, {index + 1: text for index, _, text in cells})
    current = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if current is not None and current.version == notebook.version:
        ls.notebook_results[key] = result
    return result


def cell_diagnostics(ls: NotebookHost, result: NotebookResult) -> dict[str, list[types.Diagnostic]]:
    """Each code cell's diagnostics, positioned in the cell (every cell gets a list, maybe empty)."""

    codec = ls.workspace.position_codec
    per_cell: dict[str, list[types.Diagnostic]] = {uri: [] for uri in result.all_uris.values()}
    cell_lines = {number: split_lines(text) for number, text in result.texts.items()}
    for diagnostic in result.report.diagnostics:
        where = result.module.cell_position(diagnostic.line)
        if where is None or where[0] not in result.cell_uris:
            continue
        number, line = where
        in_cell = _in_cell(diagnostic, line)
        uri = result.cell_uris[number]
        lsp_diagnostic = to_lsp_diagnostic(in_cell, cell_lines[number], codec, ls.severity, uri)
        lsp_diagnostic.related_information = _related_in_cell(result, diagnostic, cell_lines, codec)
        per_cell[uri].append(lsp_diagnostic)
    for error in result.report.cell_errors:
        if error.cell in result.all_uris:
            per_cell[result.all_uris[error.cell]].append(_left_out(error, cell_lines.get(error.cell, []), codec))
    return per_cell


def _related_in_cell(result: NotebookResult, diagnostic: Diagnostic, cell_lines: dict[int, list[str]],
                     codec: PositionCodec) -> list[types.DiagnosticRelatedInformation] | None:
    """"Passed by the call on cell 6, line 4": the editor links to that call, in its own cell."""
    if diagnostic.related is None:
        return None
    line, column = diagnostic.related
    where = result.module.cell_position(line)
    if where is None or where[0] not in result.cell_uris:
        return None
    start = position(cell_lines[where[0]], where[1], column, codec)
    return [types.DiagnosticRelatedInformation(
        location=types.Location(uri=result.cell_uris[where[0]], range=types.Range(start=start, end=start)),
        message="the call that passes the value",
    )]


def _left_out(error: CellError, lines: list[str], codec: PositionCodec) -> types.Diagnostic:
    """An error at the syntax error of a cell left out of the analysis (nothing else is said there)."""

    start = position(lines, error.line or 1, max((error.column or 1) - 1, 0), codec)
    return types.Diagnostic(
        range=types.Range(start=start, end=types.Position(line=start.line, character=start.character + 1)),
        message=f"{error.describe()} (flake8-detach leaves this cell out until it parses)",
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
    )


def _in_cell(diagnostic: Diagnostic, line: int) -> Diagnostic:
    """The diagnostic at its line in the cell (the related call may be in another cell: dropped)."""
    return replace(diagnostic, line=line, related=None)


async def publish_notebook(ls: NotebookHost, notebook_uri: str) -> None:
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return
    version = notebook.version
    result = await analyse_notebook(ls, notebook_uri)
    current = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if result is None or current is None or current.version != version:
        return
    for uri, diagnostics in cell_diagnostics(ls, result).items():
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


def cell_edit(result: NotebookResult, number: int, edit: TextEdit) -> TextEdit | None:
    """A module edit as an edit of cell ``number``, when it lies within that cell."""
    start = result.module.cell_position(edit.start_line)
    end = result.module.cell_position(edit.end_line)
    if start is None or end is None or start[0] != number or end[0] != number:
        return None
    return TextEdit(start[1], edit.start_column, end[1], edit.end_column, edit.new_text)


async def cell_code_actions(
    ls: NotebookHost, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    """Quick fixes and noqa suppressions for a notebook cell; None when the URI is not a cell."""

    uri = params.text_document.uri
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    if notebook is None:
        return None
    result = await analyse_notebook(ls, notebook.uri)
    if result is None:
        return []
    number = result.cell_of(uri)
    cell = next((cell for cell in result.module.cells if cell.number == number), None)
    if number is None or cell is None:
        return []
    codec = ls.workspace.position_codec
    lines = split_lines(cell.text)
    fixes = result.report.rendered_fixes() if result.report.module is not None else []
    fixed: list[types.CodeAction] = []
    suppressions: list[types.CodeAction] = []
    for index, diagnostic in enumerate(result.report.diagnostics):
        position = result.module.cell_position(diagnostic.line)
        if position is None or position[0] != number:
            continue
        lsp_diagnostic = to_lsp_diagnostic(_in_cell(diagnostic, position[1]), lines, codec, ls.severity, uri)
        if not overlaps(lsp_diagnostic.range, params.range):
            continue
        rendered = fixes[index] if index < len(fixes) else None
        edit = cell_edit(result, number, rendered.edit) if rendered is not None else None
        if rendered is not None and edit is not None:
            fixed.append(fix_action(uri, lsp_diagnostic, rendered, text_edit(lines, edit, codec)))
        suppress = noqa_edit(lines, position[1], diagnostic.code, codec)
        if suppress is not None:
            suppressions.append(suppress_action(uri, lsp_diagnostic, suppress))
    return fixed + suppressions

