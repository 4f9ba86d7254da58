"""Folders a file adds to ``sys.path``: where its own imports are then found.

Research code and notebooks often import the project's package through the path rather than
through a package layout: ``sys.path.append("../semi-supervised")`` then ``from models import
VAE``, or ``sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))``. The project
index (``project.Project._module_file``) looks for the importing file's modules in these folders
too, after its own folder.

What is read is the argument's text, evaluated on paths only (``ast``, no code runs):

- a string literal: relative to the working directory, which for a script run from its own
  folder is that folder, and for one run from the project's root is the root (both are tried);
- ``__file__`` and what ``os.path.dirname``/``join``/``abspath``/``realpath``/``normpath``,
  ``pathlib.Path(...)``, ``.parent``, ``.parents[k]``, ``/``, ``.resolve()`` and ``str()`` make
  of it: relative to the file's own folder.

Each entry is ``(base, folder)``: base ``"file"`` (the file's folder) or ``"cwd"`` (the working
directory), folder a normalised POSIX path relative to it. Anything else (an absolute path, an
environment variable, a computed name) adds nothing.
"""

from __future__ import annotations

import ast
import posixpath

# The file itself (`__file__`), as a path relative to its own folder.
_FILE = "\0file"

_UNCHANGED = frozenset({"abspath", "realpath", "normpath", "resolve", "absolute", "expanduser"})


def added_folder(call: ast.Call) -> tuple[str, str] | None:
    """The folder of ``sys.path.append(X)`` / ``sys.path.insert(i, X)``, or None."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("append", "insert")
            and isinstance(func.value, ast.Attribute) and func.value.attr == "path"
            and isinstance(func.value.value, ast.Name) and func.value.value.id == "sys"):
        return None
    arguments = call.args[1:] if func.attr == "insert" else call.args
    if len(arguments) != 1:
        return None
    argument = arguments[0]
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        folder = _relative(argument.value)
        return None if folder is None else ("cwd", folder)
    folder = _path(argument)
    return None if folder is None or folder == _FILE else ("file", folder)


def _relative(text: str) -> str | None:
    if not text or text.startswith(("/", "~", "$")) or ":" in text or "\\" in text:
        return None if text else "."
    return posixpath.normpath(text)


def _path(node: ast.expr) -> str | None:
    """A path relative to the file's folder (`_FILE`: the file), or None when it is not one."""
    if isinstance(node, ast.Name) and node.id == "__file__":
        return _FILE
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _relative(node.value)
    if isinstance(node, ast.Call):
        return _called_path(node)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _path(node.value)
        return None if inner is None else _parent(inner)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
        inner = _path(node.value.value)
        index = node.slice
        if inner is None or not (isinstance(index, ast.Constant) and isinstance(index.value, int)):
            return None
        for _ in range(index.value + 1):
            inner = _parent(inner)
        return inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _joined([node.left, node.right])
    return None


def _called_path(call: ast.Call) -> str | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name == "join" and not call.keywords:
        return _joined(call.args)
    if call.keywords or (len(call.args) != 1 and name not in ("resolve", "absolute")):
        return None
    if isinstance(func, ast.Attribute) and name in ("resolve", "absolute") and not call.args:
        return _path(func.value)  # `Path(__file__).resolve()`
    if name in ("dirname",):
        inner = _path(call.args[0])
        return None if inner is None else _parent(inner)
    if name in _UNCHANGED or name in ("Path", "PurePath", "str", "fspath"):
        return _path(call.args[0])
    return None


def _joined(parts: list[ast.expr]) -> str | None:
    if not parts:
        return None
    found = _path(parts[0])
    for part in parts[1:]:
        if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
            return None
        piece = _relative(part.value)
        if found is None or found == _FILE or piece is None:
            return None
        found = posixpath.normpath(posixpath.join(found, piece))
    return found


def _parent(path: str) -> str:
    if path == _FILE:
        return "."
    return posixpath.normpath(posixpath.join(path, ".."))
