"""Jupyter notebooks as one Python module: read, mask IPython syntax, map positions, write back.

The code cells form one module in notebook order (state flows from cell to cell: a model made in
cell 2 and converted in cell 7 is one flow). IPython syntax (magics, shell escapes, help) is
masked line for line, so every other line keeps its number and columns; a cell that does not
parse is reported and left out, and the rest is still analysed. Only the standard library is
used: linting a notebook needs no Jupyter install.

Positions name the cell: ``cell`` is 1-based over the notebook's code cells (markdown cells do not
count), as ruff and nbqa number them, ``line`` 1-based within the cell.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A notebook this large is not a notebook we can rewrite safely or quickly (its outputs are).
MAX_NOTEBOOK_BYTES = 25 * 1024 * 1024
# Cell magics whose body is Python (the first line is masked, the body analysed).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# Each masked line ends with this marker and its index, so a fix can be mapped back.
MASK_MARKER = "#flake8-detach:ipython-"
CELL_SEPARATOR = "# flake8-detach:cell "
_IPYTHON_LINE = re.compile(r"^(?P<indent>[ \t]*)(?:[!%]|\?)")
_ASSIGNED_IPYTHON = re.compile(r"^(?P<indent>[ \t]*)(?P<target>[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=\s*[!%]")
_HELP = re.compile(r"^(?P<indent>[ \t]*)[\w.\[\]()]+\?\??\s*$")


class NotebookError(Exception):
    """The notebook cannot be read as nbformat 4 JSON; the message is one line for the user."""


class NotebookSkipped(NotebookError):
    """A well-formed notebook that is not ours to check (its kernel is not Python)."""


@dataclass
class CellSource:
    index: int  # 0-based position among all cells (where it is in the JSON)
    number: int  # 1-based among the code cells (what the user is told)
    text: str  # the cell's source as written
    masked: str  # the same with IPython syntax masked (same number of lines)
    masked_lines: dict[int, str] = field(default_factory=dict)  # mask number -> original line


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
    problems: list[str]  # one line per cell left out because it does not parse

    def cell_position(self, line: int) -> tuple[int, int] | None:
        return self.line_map.get(line)


def cell_location(cells: dict[int, tuple[int, int]] | None, line: int) -> tuple[int | None, int]:
    """(cell number or None, line) of a module line: in-cell for a notebook, as is otherwise."""
    if cells is None:
        return None, line
    cell, cell_line = cells.get(line, (None, line))
    return cell, cell_line


def display_location(path: str, cells: dict[int, tuple[int, int]] | None, line: int) -> str:
    """`path:line`, or `path:cell 3:line` for a notebook (as ruff writes it)."""
    cell, cell_line = cell_location(cells, line)
    return f"{path}:{cell_line}" if cell is None else f"{path}:cell {cell}:{cell_line}"


def read_notebook(path: Path) -> NotebookModule:
    """Read ``path``; :class:`NotebookError` when it is not a notebook we can analyse."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise NotebookError(f"cannot read: {error.strerror or error}") from error
    if size > MAX_NOTEBOOK_BYTES:
        raise NotebookError(f"the notebook is {size / 2**20:.0f} MB; flake8-detach reads notebooks up to "
                            f"{MAX_NOTEBOOK_BYTES // 2**20} MB (clear the outputs to check it)")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise NotebookError(f"cannot read: {error.strerror or error}") from error
    return notebook_from_bytes(data, str(path))


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
    if language is not None and language != "python":
        raise NotebookSkipped(f"skipped: the kernel language is {language}, not Python")
    code_cells = [(index, cell_text(cell)) for index, cell in enumerate(cells)
                  if isinstance(cell, dict) and cell.get("cell_type") == "code"]
    return assemble(path, code_cells, document, raw)


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


def assemble(
    path: str, code_cells: list[tuple[int, str]], document: dict[str, Any] | None = None, raw: str = ""
) -> NotebookModule:
    """One module of the code cells ``(index in the notebook, source)``, in order.

    The editor's notebook documents come here too, with their cells' texts (no JSON).
    """
    parts: list[str] = []
    line_map: dict[int, tuple[int, int]] = {}
    sources: list[CellSource] = []
    problems: list[str] = []
    next_line = 1
    for number, (index, text) in enumerate(code_cells, start=1):
        masked, masked_lines, skip = mask_ipython(text, len(sources))
        if skip is not None:
            continue  # `%%bash` and the like: not Python, nothing to analyse (and nothing wrong)
        error = _syntax_error(masked)
        if error is not None:
            problems.append(f"cell {number}: left out, {error}")
            continue
        source = CellSource(index, number, text, masked, masked_lines)
        sources.append(source)
        parts.append(f"{CELL_SEPARATOR}{index + 1}\n")
        next_line += 1
        body = masked if masked.endswith("\n") or not masked else masked + "\n"
        for offset in range(body.count("\n")):
            line_map[next_line + offset] = (number, offset + 1)
        next_line += body.count("\n")
        parts.append(body)
    return NotebookModule(path, document or {}, raw, "".join(parts), sources, line_map, problems)


def _syntax_error(text: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as error:
        return f"syntax error at line {error.lineno}: {error.msg}"
    except (ValueError, RecursionError, MemoryError) as error:
        return f"cannot parse: {error}"
    return None


def mask_ipython(text: str, cell_number: int) -> tuple[str, dict[int, str], str | None]:
    """``text`` with IPython lines replaced by Python ones of the same line count.

    Returns the masked text, the original of each masked line by mask number, and the reason
    to leave the whole cell out (a cell magic whose body is not Python), or None.
    """
    lines = text.splitlines(keepends=True)
    masked: dict[int, str] = {}
    out: list[str] = []
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if magic not in PYTHON_CELL_MAGICS:
            return text, {}, f"%%{magic} cell magic: not Python"
    for number, line in enumerate(lines):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        replacement = _mask_line(body)
        if replacement is None:
            out.append(line)
            continue
        key = cell_number * 100_000 + number
        masked[key] = line
        out.append(f"{replacement}  {MASK_MARKER}{key}{ending}")
    return "".join(out), masked, None


def _mask_line(line: str) -> str | None:
    assigned = _ASSIGNED_IPYTHON.match(line)
    if assigned:
        return f"{assigned['indent']}{assigned['target']} = None"
    start = _IPYTHON_LINE.match(line) or _HELP.match(line)
    if start is None:
        return None
    return f"{start['indent']}pass"


def unmask(text: str, cells: list[CellSource]) -> str:
    """Put the original IPython lines back where their markers are (after a fix)."""
    originals = {key: value for cell in cells for key, value in cell.masked_lines.items()}

    def restore(line: str) -> str:
        position = line.find(MASK_MARKER)
        if position < 0:
            return line
        key = int(line[position + len(MASK_MARKER):].rstrip("\r\n"))
        return originals[key]

    return "".join(restore(line) for line in text.splitlines(keepends=True))


def split_cells(module: NotebookModule, fixed: str) -> dict[int, str]:
    """The fixed module cut back into cell sources (cell index -> source), IPython restored.

    Lines a fix added before the first cell (an ``import torch``) go to the first code cell.
    """
    pieces: dict[int, list[str]] = {}
    current: int | None = None
    preamble: list[str] = []
    for line in fixed.splitlines(keepends=True):
        if line.startswith(CELL_SEPARATOR):
            current = int(line[len(CELL_SEPARATOR):].strip()) - 1
            pieces[current] = []
            continue
        (pieces[current] if current is not None else preamble).append(line)
    if preamble and module.cells:
        pieces.setdefault(module.cells[0].index, [])[:0] = preamble
    result: dict[int, str] = {}
    for cell in module.cells:
        text = unmask("".join(pieces.get(cell.index, [])), module.cells)
        if not cell.text.endswith("\n") and text.endswith("\n"):
            text = text[:-1]  # the module added a final newline the cell did not have
        result[cell.index] = text
    return result


def source_lines(text: str) -> list[str]:
    """A cell's source as nbformat stores it: lines with their endings, the last without."""
    return text.splitlines(keepends=True)


def render_notebook(module: NotebookModule, new_sources: dict[int, str]) -> str:
    """The notebook's JSON with only the changed cells' sources replaced, byte for byte elsewhere.

    The document is serialised as Jupyter writes it (1-space indentation, key order kept, no
    ASCII escaping, a final newline); a notebook whose text is not what that gives back is
    refused rather than reformatted.
    """
    if _dump(module.document) != module.raw:
        raise NotebookError("not written: its JSON is not formatted as Jupyter writes it "
                            "(1-space indentation); re-save it in Jupyter and fix again")
    for index, text in new_sources.items():
        cell = module.document["cells"][index]
        original = cell.get("source", "")
        cell["source"] = source_lines(text) if isinstance(original, list) else text
    return _dump(module.document)


def _dump(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"
