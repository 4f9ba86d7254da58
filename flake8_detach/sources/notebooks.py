"""Jupyter notebooks as one Python module: read, mask IPython syntax, map positions, write back.

The code cells form one module in notebook order (state flows from cell to cell: a model made in
cell 2 and converted in cell 7 is one flow). IPython syntax (magics, shell escapes, help) is
masked line for line, so every other line keeps its number and columns; a cell that does not
parse is reported and left out, and the rest is still analysed. Only the standard library is
used: linting a notebook needs no Jupyter install.

Positions name the cell as ruff names it: ``cell`` is the 1-based position among all the
notebook's cells (markdown and raw cells count, so the number is the one a reader counts down the
notebook; nbqa counts code cells only), ``line`` 1-based within the cell.
"""

from __future__ import annotations

import ast
import difflib
import functools
import json
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..syntax import syntax_error_text
from .files import MAX_NOTEBOOK_BYTES, SourceError, read_file_bytes
from .notebook_json import JsonLayout, first_difference, json_source_lines

if TYPE_CHECKING:  # only the standard library at run time: reading a notebook needs no libcst
    from ..diagnostics import Diagnostic

# A notebook this large is not a notebook we can rewrite safely or quickly (its outputs are).
# Cell magics whose body is Python (the first line is masked, the body analysed).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# The comment between two cells in the module. A fix is mapped back by the line numbers kept on
# the side (NotebookModule.line_map, CellSource.masked_lines), not by parsing user-writable text:
# where a cell's text holds this word, a longer word no cell holds is used (`assemble`).
CELL_MARKER = "flake8-detach:cell"
# IPython's escapes, recognised as its input transformer does: at the start of a logical line
# (not inside brackets, a string or after a backslash continuation), a continued escape line
# (ending in `\\`) takes the next lines with it.
_IPYTHON_LINE = re.compile(r"^(?P<indent>[ \t]*)[!%?,;/]")
_ASSIGNED_IPYTHON = re.compile(r"^(?P<indent>[ \t]*)(?P<target>[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=\s*[!%]")
# Where the logical-line scanner stops: outside a string, and in each kind of string.
_LEXICAL = re.compile(r"""[#'"()\[\]{}\\]""")
_STRING_END = {quote: re.compile(r"\\|" + quote) for quote in ("'", '"', "'''", '"""')}
_HELP = re.compile(r"^(?P<indent>[ \t]*)[\w.\[\]()]+\?\??\s*$")


class NotebookError(Exception):
    """The notebook cannot be read as nbformat 4 JSON; the message is one line for the user."""


class NotebookSkipped(NotebookError):
    """A well-formed notebook that is not ours to check (its kernel is not Python)."""


def cell_number(index: int) -> int:
    """What the user is told: the 1-based position among all cells, as ruff numbers them."""
    return index + 1


@dataclass
class CellSource:
    index: int  # 0-based position among all cells (where it is in the JSON)
    text: str  # the cell's source as written
    masked: str  # the same with IPython syntax masked (same number of lines)
    masked_lines: dict[int, str] = field(default_factory=dict)  # 0-based line in the cell -> original line

    @property
    def number(self) -> int:
        return cell_number(self.index)


@dataclass(frozen=True)
class CellError:
    """A code cell left out of the analysis because it does not parse, positioned in the cell.

    ``artifact_line`` is the line of the `.ipynb` text that holds that source line (see
    :func:`json_source_lines`), for formats that can only point into the file's text.
    """

    cell: int  # 1-based among all cells
    message: str  # Python's message: "invalid syntax"
    line: int | None = None  # 1-based in the cell; None when Python gives no position
    column: int | None = None  # 1-based, in characters
    artifact_line: int | None = None

    def describe(self) -> str:
        """`check`'s wording for a file's syntax error, with the line counted in the cell."""
        if self.line is None:
            return self.message
        return syntax_error_text(self.message, self.line, self.column)


@dataclass
class NotebookModule:
    """The code cells of one notebook as one module, and how to map positions back."""

    path: str
    document: dict[str, Any]
    raw: str
    source: str  # the module the engine analyses
    cells: list[CellSource]
    # module line (1-based) -> (cell number 1-based, line in cell 1-based); separator lines absent
    line_map: dict[int, tuple[int, int]]
    cell_errors: list[CellError]  # the cells left out because they do not parse
    marker: str = CELL_MARKER  # the word of the separator lines: `# {marker} {cell number}`

    def cell_position(self, line: int) -> tuple[int, int] | None:
        return self.line_map.get(line)

    def artifact_lines(self, lines: Iterable[int]) -> dict[int, int]:
        """Module line -> line of the `.ipynb` text holding it, for ``lines`` (none without JSON)."""
        if not self.raw:
            return {}
        in_json = self._json_lines()
        found: dict[int, int] = {}
        for line in lines:
            position = self.line_map.get(line)
            if position is not None:
                found[line] = _artifact_line(in_json, position[0] - 1, position[1])
        return found

    def _json_lines(self) -> dict[int, list[int]]:
        if self._json_lines_cache is None:
            self._json_lines_cache = json_source_lines(self.raw)
        return self._json_lines_cache

    _json_lines_cache: dict[int, list[int]] | None = field(default=None, repr=False, compare=False)


def _artifact_line(in_json: dict[int, list[int]], index: int, line: int) -> int:
    """The `.ipynb` line of ``line`` (1-based) of cell ``index``: its own, else the cell's nearest."""
    lines = in_json.get(index) or [1]
    return lines[min(line, len(lines)) - 1]


def related_place(cells: dict[int, tuple[int, int]] | None, line: int) -> str:
    """How a message names another place: `line 48` in a file, `cell 6, line 4` in a notebook."""
    cell, cell_line = cell_location(cells, line)
    return f"line {cell_line}" if cell is None else f"cell {cell}, line {cell_line}"


def placed_in_cells(diagnostics: Iterable[Diagnostic], cells: dict[int, tuple[int, int]]) -> list[Diagnostic]:
    """A notebook's diagnostics whose messages name other places by cell (`cell 6, line 4`)."""
    return [diagnostic.placed(functools.partial(related_place, cells)) for diagnostic in diagnostics]


def cell_location(cells: dict[int, tuple[int, int]] | None, line: int) -> tuple[int | None, int]:
    """(cell number or None, line) of a module line: in-cell for a notebook, as is otherwise."""
    if cells is None:
        return None, line
    cell, cell_line = cells.get(line, (None, line))
    return cell, cell_line


def cell_error_line(path: str, error: CellError) -> str:
    """One line for a cell left out, as `check` and `fix` print it (ruff's `path:cell N` prefix)."""
    return f"{path}:cell {error.cell}: error: cell left out: {error.describe()}"


def display_location(path: str, cells: dict[int, tuple[int, int]] | None, line: int) -> str:
    """`path:line`, or `path:cell 3:line` for a notebook (as ruff writes it)."""
    cell, cell_line = cell_location(cells, line)
    return f"{path}:{cell_line}" if cell is None else f"{path}:cell {cell}:{cell_line}"


def read_notebook(path: Path) -> NotebookModule:
    """Read ``path``; :class:`NotebookError` when it is not a notebook we can analyse."""
    return notebook_from_bytes(read_notebook_bytes(path), str(path))


def read_notebook_bytes(path: Path) -> bytes:
    """The bytes of the notebook at ``path``; :class:`NotebookError` when too large or unreadable."""
    try:
        return read_file_bytes(path, MAX_NOTEBOOK_BYTES)
    except SourceError as error:
        raise NotebookError(str(error)) from error


def notebook_from_bytes(data: bytes, path: str = "<notebook>") -> NotebookModule:
    """A notebook from the bytes of its file (read once: `check` hashes the same bytes)."""
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotebookError(f"not UTF-8 JSON: {error.reason} at byte {error.start}") from error
    return parse_notebook(raw, path)


def parse_notebook(raw: str, path: str = "<notebook>") -> NotebookModule:
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}") from error
    if not isinstance(document, dict):
        raise NotebookError("not a notebook: the JSON document is not an object")
    if document.get("nbformat") != 4:
        raise NotebookError(f"nbformat {document.get('nbformat')!r} is not supported (only nbformat 4); "
                            "upgrade it with `jupyter nbconvert --to notebook`")
    cells = document.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("not a notebook: no `cells` list")
    language = kernel_language(document)
    if language is not None and not _PYTHON_LANGUAGE.fullmatch(language):
        raise NotebookSkipped(f"skipped: the kernel language is {language}, not Python")
    code_cells: list[tuple[int, str]] = []
    invalid: list[CellError] = []
    for index, cell in enumerate(cells):
        problem = _cell_problem(cell)
        if problem is not None:
            invalid.append(CellError(cell_number(index), f"not a valid cell: {problem}"))
        elif cell["cell_type"] == "code":
            code_cells.append((index, cell_text(cell)))
    module = assemble(path, code_cells, document, raw)
    if invalid:
        module.cell_errors = sorted(invalid + module.cell_errors, key=lambda error: error.cell)
    if module.cell_errors:  # where each one is in the file's text, for SARIF and GitHub
        in_json = module._json_lines()
        module.cell_errors = [replace(error, artifact_line=_artifact_line(in_json, error.cell - 1, error.line or 1))
                              for error in module.cell_errors]
    return module


# What kernels call Python: "python" (Jupyter's ipykernel), "python3" or "Python 3" (Spyder's and
# older kernelspecs), "ipython".
_PYTHON_LANGUAGE = re.compile(r"i?python ?[0-9.]*")


def kernel_language(document: dict[str, Any]) -> str | None:
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for key in ("kernelspec", "language_info"):
        entry = metadata.get(key)
        if isinstance(entry, dict):
            name = entry.get("language") if key == "kernelspec" else entry.get("name")
            if isinstance(name, str) and name:
                return name.lower()
    return None


def cell_text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _cell_problem(cell: object) -> str | None:
    """Why ``cell`` is not a cell we can read (nbformat 4's shape), or None.

    Only what reading needs is checked: a cell is an object with a string ``cell_type``, and a
    code cell's ``source`` is a string or a list of strings. Such a cell is reported and left out.
    """
    if not isinstance(cell, dict):
        return f"a cell is a JSON object, not {_json_kind(cell)}"
    kind = cell.get("cell_type")
    if not isinstance(kind, str):
        return "no `cell_type` string" if kind is None else f"`cell_type` is {_json_kind(kind)}, not a string"
    if kind != "code":
        return None
    source = cell.get("source", "")
    if isinstance(source, str):
        return None
    if not isinstance(source, list):
        return f"`source` is {_json_kind(source)}, not a string or a list of strings"
    for number, item in enumerate(source, start=1):
        if not isinstance(item, str):
            return f"item {number} of `source` is {_json_kind(item)}, not a string"
    return None


def _json_kind(value: object) -> str:
    """What a JSON value is, in words: `a number (3)`, `null`, `a list`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def assemble(
    path: str, code_cells: list[tuple[int, str]], document: dict[str, Any] | None = None, raw: str = ""
) -> NotebookModule:
    """One module of the code cells ``(index in the notebook, source)``, in order.

    The editor's notebook documents come here too, with their cells' texts (no JSON).
    """
    parts: list[str] = []
    line_map: dict[int, tuple[int, int]] = {}
    sources: list[CellSource] = []
    errors: list[CellError] = []
    next_line = 1
    marker = separator_marker(text for _, text in code_cells)
    for index, text in code_cells:
        masked, masked_lines, skip = mask_ipython(text)
        if skip is not None:
            continue  # `%%bash` and the like: not Python, nothing to analyse (and nothing wrong)
        error = _syntax_error(masked, cell_number(index))
        if error is not None:
            errors.append(error)
            continue
        source = CellSource(index, text, masked, masked_lines)
        sources.append(source)
        parts.append(f"{_separator(marker, index)}\n")
        next_line += 1
        body = masked if masked.endswith("\n") or not masked else masked + "\n"
        for offset in range(body.count("\n")):
            line_map[next_line + offset] = (source.number, offset + 1)
        next_line += body.count("\n")
        parts.append(body)
    if parts and parts[-1].rstrip("\r\n").endswith("\\"):
        # libcst 1.9 drops the newline after a final comment ending in a backslash: a closing
        # line keeps the module printable byte for byte (split_cells takes it out again).
        parts.append(f"{_closing(marker)}\n")
    return NotebookModule(path, document or {}, raw, "".join(parts), sources, line_map, errors, marker)


def separator_marker(texts: Iterable[str]) -> str:
    """The word of the separator lines: :data:`CELL_MARKER`, lengthened until no cell holds it.

    So no line a user wrote can be taken for a separator, and the module of a notebook whose
    cells never mention it is the same as ever (a fix adds no comment, so it stays the same).
    """
    texts = list(texts)
    marker = CELL_MARKER
    while any(marker in text for text in texts):
        marker += "~"
    return marker


def _separator(marker: str, index: int) -> str:
    return f"# {marker} {cell_number(index)}"


def _closing(marker: str) -> str:
    return f"# {marker} end"


def _syntax_error(text: str, cell: int) -> CellError | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as error:
        column = error.offset if error.lineno is not None else None
        return CellError(cell, error.msg, error.lineno, max(column, 1) if column is not None else None)
    except (ValueError, RecursionError, MemoryError) as error:
        return CellError(cell, f"cannot parse: {error}")
    return None


def mask_ipython(text: str) -> tuple[str, dict[int, str], str | None]:
    """``text`` with IPython lines replaced by Python ones of the same line count.

    Returns the masked text, the original of each masked line by its 0-based line in the cell,
    and the reason to leave the whole cell out (a cell magic whose body is not Python), or None.
    A line is IPython syntax only where IPython's input transformer takes it as such: at the
    start of a logical line (see :func:`_logical_line_starts`); a magic or shell escape ending
    in a backslash continues on the next line, which is masked with it (as `pass`).
    """
    lines = text.splitlines(keepends=True)
    masked: dict[int, str] = {}
    out: list[str] = []
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if magic not in PYTHON_CELL_MAGICS:
            return text, {}, f"%%{magic} cell magic: not Python"
    continued: str | None = None  # after an escape line ending in a backslash: its indentation
    for number, (line, at_start) in enumerate(zip(lines, _logical_line_starts(lines))):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        replacement = f"{continued}pass" if continued is not None else _mask_line(body) if at_start else None
        if replacement is None:
            out.append(line)
            continue
        if continued is None:
            continued = body[:len(body) - len(body.lstrip(" \t"))]
        if not body.endswith("\\"):
            continued = None
        masked[number] = line
        out.append(f"{replacement}{ending}")
    return "".join(out), masked, None


def _logical_line_starts(lines: list[str]) -> Iterable[bool]:
    """For each physical line, whether it starts a logical line (IPython looks for escapes there).

    A small scanner of Python's lexical rules: brackets, strings (triple-quoted ones span
    lines), comments and backslash continuations. It is tolerant: an unterminated string ends
    with its line, a closing bracket too many is ignored. An IPython line found at a logical
    start is not scanned (its text is not Python), nor are the lines it continues onto.
    """
    depth = 0
    quote: str | None = None  # the open string's delimiter
    continued = False  # the previous line ends in a backslash outside a string or comment
    escape_continued = False  # the previous line is an IPython line ending in a backslash
    for line in lines:
        body = line.rstrip("\r\n")
        at_start = depth == 0 and quote is None and not continued and not escape_continued
        yield at_start
        if escape_continued or (at_start and _mask_line(body) is not None):
            escape_continued = body.endswith("\\")
            continue
        escape_continued = False
        continued = False
        index = 0
        while index < len(body):
            if quote is not None:  # in a string: to its end, a backslash escaping the next character
                found = _STRING_END[quote].search(body, index)
                if found is None:
                    break
                if found.group() == "\\":
                    index = found.end() + 1  # past the end of the line: the string goes on
                    continue
                quote = None
                index = found.end()
                continue
            found = _LEXICAL.search(body, index)
            if found is None:
                break
            char, index = found.group(), found.start()
            if char == "#":
                break
            if char in "'\"":
                quote = body[index:index + 3] if body.startswith(char * 3, index) else char
                index += len(quote)
                continue
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(depth - 1, 0)
            elif index == len(body) - 1:  # a backslash ending the line
                continued = True
            index += 1
        if quote is not None and len(quote) == 1 and not body.endswith("\\"):
            quote = None  # an unterminated string: Python reports it; the next line starts afresh


def _mask_line(line: str) -> str | None:
    assigned = _ASSIGNED_IPYTHON.match(line)
    if assigned:
        return f"{assigned['indent']}{assigned['target']} = None"
    start = _IPYTHON_LINE.match(line) or _HELP.match(line)
    if start is None:
        return None
    return f"{start['indent']}pass"


class FixNotMappable(NotebookError):
    """A fixed module cannot be cut back into the notebook's cells without guessing."""


def split_cells(module: NotebookModule, fixed: str) -> dict[int, str]:
    """The fixed module cut back into cell sources (cell index -> source), IPython restored.

    The cells are cut at the separator lines :func:`assemble` put between them (no cell holds
    their text, and a fix writes no comment), each found exactly once and in order. Lines a fix
    added before the first cell (an ``import torch``) go to the first code cell. A cell's masked
    lines are put back by position: its masked text is matched line for line against its fixed
    text (:mod:`difflib`), and each masked line must still be there, unchanged, else
    :class:`FixNotMappable` (a fix that moved or re-indented an IPython line is not guessed at).
    """
    lines = fixed.splitlines(keepends=True)
    closing = [number for number, line in enumerate(lines) if line.rstrip("\r\n") == _closing(module.marker)]
    if len(closing) > 1:
        raise FixNotMappable("the fix repeated the end of the last cell; not fixed")
    if closing:  # anything a fix put after it belongs to the last cell
        del lines[closing[0]]
    separators = {_separator(module.marker, cell.index): cell for cell in module.cells}
    found: dict[int, list[int]] = {}  # cell index -> the lines holding its separator
    for number, line in enumerate(lines):
        cell = separators.get(line.rstrip("\r\n"))
        if cell is not None:
            found.setdefault(cell.index, []).append(number)
    starts: list[int] = []
    for cell in module.cells:
        at = found.get(cell.index, [])
        if len(at) != 1 or (starts and at[0] < starts[-1]):
            raise FixNotMappable(f"the fix moved the boundary of cell {cell.number}; not fixed")
        starts.append(at[0])
    result: dict[int, str] = {}
    for number, cell in enumerate(module.cells):
        begin = 0 if number == 0 else starts[number] + 1
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        piece = lines[begin:starts[0]] + lines[starts[0] + 1:end] if number == 0 else lines[begin:end]
        text = "".join(_unmask_cell(cell, piece))
        if not cell.text.endswith("\n") and text.endswith("\n"):
            text = text[:-1]  # the module added a final newline the cell did not have
        result[cell.index] = text
    return result


def _unmask_cell(cell: CellSource, fixed: list[str]) -> list[str]:
    """The fixed lines of ``cell`` with its IPython lines put back where their masks are."""
    if not cell.masked_lines:
        return fixed
    body = cell.masked if cell.masked.endswith("\n") or not cell.masked else cell.masked + "\n"
    before = body.splitlines(keepends=True)
    if before == fixed:
        now = {line: line for line in range(len(before))}
    else:
        matcher = difflib.SequenceMatcher(None, before, fixed, autojunk=False)
        now = {old + offset: new + offset for old, new, size in matcher.get_matching_blocks() for offset in range(size)}
    restored = list(fixed)
    for line, original in cell.masked_lines.items():
        if line not in now:
            raise FixNotMappable(f"the fix changed the IPython line {line + 1} of cell {cell.number} "
                                 f"({original.strip()!r}) or the lines around it; not fixed")
        kept = restored[now[line]]
        restored[now[line]] = original.rstrip("\r\n") + kept[len(kept.rstrip("\r\n")):]
    return restored


def source_lines(text: str) -> list[str]:
    """A cell's source as nbformat stores it: lines with their endings, the last without."""
    return text.splitlines(keepends=True)


def render_notebook(module: NotebookModule, new_sources: dict[int, str]) -> str:
    """The notebook's JSON with only the changed cells' sources replaced, byte for byte elsewhere.

    The document is serialised in the layout its text has (:class:`JsonLayout`); a notebook
    whose text re-serialising does not give back is refused, and the message says where the
    two first differ, rather than reformatted.
    """
    layout = JsonLayout.of(module.raw)
    again = layout.dump(module.document)
    if again != module.raw:
        raise NotebookError(first_difference(module.raw, again, layout))
    cells = list(module.document["cells"])  # copies of what changes only: the module stays as read
    for index, text in new_sources.items():
        original = cells[index].get("source", "")
        cells[index] = {**cells[index], "source": source_lines(text) if isinstance(original, list) else text}
    return layout.dump({**module.document, "cells": cells})
