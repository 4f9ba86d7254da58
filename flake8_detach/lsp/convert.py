"""Our diagnostics, fixes and positions in LSP's types, for files and notebook cells alike.

From the engine's positions (1-based lines, code-point columns) to LSP's (0-based, client units).

The unit conversion is pygls' own position codec (UTF-16 unless the client negotiated another).
The lines are split the way the engine counts them (``\\r\\n``, ``\\r`` or ``\\n``), not with
``str.splitlines``, which also breaks at form feeds and other separators Python code may contain.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ..diagnostics import Diagnostic
from ..reporting.model import RenderedFix
from ..reporting.spans import TextEdit, token_length
from ..rule_pages import rule_page_uri

SOURCE = "flake8-detach"
SEVERITIES: dict[str, types.DiagnosticSeverity] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}
DEFAULT_SEVERITY = "warning"  # as flake8's diagnostics show through python-lsp-server
_NOQA_CODES = re.compile(r"#\s*noqa\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)", re.IGNORECASE)
_BARE_NOQA = re.compile(r"#\s*noqa(?!\s*:)", re.IGNORECASE)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(source: str) -> list[str]:
    """Physical lines without their endings, as the engine numbers them."""
    return [line.rstrip("\r\n") for line in _LINE.findall(source)]


def position(lines: list[str], line: int, column: int, codec: PositionCodec) -> types.Position:
    """Position of (1-based ``line``, 0-based code-point ``column``) in the client's units."""
    if not 0 < line <= len(lines):
        return types.Position(line=max(line - 1, 0), character=column)
    return codec.position_to_client_units(lines, types.Position(line=line - 1, character=column))


def text_edit(lines: list[str], edit: TextEdit, codec: PositionCodec) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(
            start=position(lines, edit.start_line, edit.start_column, codec),
            end=position(lines, edit.end_line, edit.end_column, codec),
        ),
        new_text=edit.new_text,
    )


def uri_key(uri: str) -> str:
    """The key of a document's state here: its URI unquoted, as pygls keys its workspace, so
    `file:///c%3A/x.py` and `file:///c:/x.py` are one document (lookups go through pygls)."""
    return unquote(uri)


def fix_action(
    uri: str, diagnostic: types.Diagnostic, rendered: RenderedFix, edit: types.TextEdit
) -> types.CodeAction:
    safety = "" if rendered.safe else " (unsafe)"
    return types.CodeAction(
        title=f"{diagnostic.code}: {rendered.description}{safety}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=rendered.safe,
        edit=types.WorkspaceEdit(changes={uri: [edit]}),
    )


def suppress_action(uri: str, diagnostic: types.Diagnostic, edit: types.TextEdit) -> types.CodeAction:
    return types.CodeAction(
        title=f"{diagnostic.code}: suppress with # noqa: {diagnostic.code}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=types.WorkspaceEdit(changes={uri: [edit]}),
    )


def noqa_edit(lines: list[str], line: int, code: str, codec: PositionCodec) -> types.TextEdit | None:
    """The edit that adds ``code`` to the line's `# noqa: ...` comment, or adds the comment."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    existing = _NOQA_CODES.search(text)
    if existing is not None:
        codes = [c for c in re.split(r"[,\s]+", existing["codes"]) if c]
        if code in codes:
            return None
        start, end = existing.span("codes")
        new_text = ", ".join([*codes, code])
    elif _BARE_NOQA.search(text):
        return None  # a bare noqa comment already silences every code on the line
    else:
        start = end = len(text)
        new_text = f"  # noqa: {code}"
    return types.TextEdit(
        range=types.Range(start=position(lines, line, start, codec), end=position(lines, line, end, codec)),
        new_text=new_text,
    )


def to_lsp_diagnostic(
    diagnostic: Diagnostic,
    lines: list[str],
    codec: PositionCodec,
    severity: types.DiagnosticSeverity = SEVERITIES[DEFAULT_SEVERITY],
    uri: str | None = None,
) -> types.Diagnostic:
    line_text = lines[diagnostic.line - 1] if 0 < diagnostic.line <= len(lines) else ""
    end = diagnostic.column + token_length(line_text, diagnostic.column)
    message = diagnostic.message.removeprefix(f"{diagnostic.code} ")
    related = None
    if diagnostic.related is not None and uri is not None:
        # "passed by the call on line N": the editor links to that call.
        line, column = diagnostic.related
        start = position(lines, line, column, codec)
        related = [types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=types.Range(start=start, end=start)),
            message="the call that passes the value",
        )]
    return types.Diagnostic(
        range=types.Range(
            start=position(lines, diagnostic.line, diagnostic.column, codec),
            end=position(lines, diagnostic.line, end, codec),
        ),
        message=message,
        severity=severity,
        code=diagnostic.code,
        code_description=types.CodeDescription(href=rule_page_uri(diagnostic.code)),
        source=SOURCE,
        related_information=related,
    )


def overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)
