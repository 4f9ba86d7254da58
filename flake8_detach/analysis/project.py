"""The project index: what a file's own project tells about the names it imports.

One file's text does not say that ``from models import Net`` is an ``nn.Module``, that
``@smart_inference_mode()`` turns grad off, or that every caller of a helper runs under
``torch.no_grad()``. This module answers those three questions from the other files of the
project, read cheaply with :mod:`ast` (never libcst, never the full interpreter):

- the **root** is found as flake8 and ruff do: the nearest folder upwards holding
  ``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git`` (none: the file's own folder);
- a **module name** resolves as Python would run the code: from the importing file's folder (a
  script's ``sys.path[0]``), from the root, from ``root/src`` and from the folders the file adds
  to ``sys.path`` (:mod:`.import_paths`); relative imports from the
  importing file's package. What resolves to no file of the project is a library;
- each file gets a **summary** (:func:`summarise`, JSON): its imports, classes and their bases,
  functions that turn grad off when used as decorators or contexts (a body that returns or wraps
  ``torch.no_grad()`` / ``torch.inference_mode()``, or a factory of such a decorator), its
  module-level device constants that may be a GPU (``DEVICE = torch.device("cuda" ...)``), and its
  outgoing calls with the grad contexts around each;
- summaries are computed once per file content and code version and stored in the results
  cache's folder (``sources/cache.py``: atomic renames, shared by flake8's workers, ``check
  --jobs`` and the language server), or kept in memory only when the cache is off;
- the **reverse index** (who calls what, analysis/callers.py) is read per helper asked about, from
  the files whose text names it, and tells whether every project call site of it runs with
  grad off (directly, or inside a function that itself only runs with grad off: a fixpoint).

Nothing here imports libcst: flake8 loads it only for files that pass the screen. What the
interpreter finds in another file (values, not names) is :mod:`.exports`, run on demand.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import json
import os
import re
import sys
import textwrap
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .callers import CallerIndex
from .demand import definition_of
from .exports import decode, join_encoded
from .import_paths import added_folder
from .placement import DEFAULT_DEVICE_SETTERS
from .semantics import PARAMETER_FREE_MODULES, PROPERTY_DECORATORS
from .values import EMPTY, Value
from .witness import holds, recorded, to_data

try:  # as sources/cache.py: hashlib's import loads OpenSSL for nothing
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
# Folders that hold no project code (environments, builds, caches, vendored packages).
SKIPPED_FOLDERS = frozenset({
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env", ".env", "__pycache__", "node_modules",
    "build", "dist", "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".flake8_detach_cache",
    ".eggs", ".ipynb_checkpoints",
})
MAX_PROJECT_FILES = 5000  # a larger tree is not indexed for callers (the cost would be the run's)
MAX_FILE_BYTES = 2 * 2**20
NOTEBOOK_SUFFIX = ".ipynb"
SUMMARY_FORMAT = "16"  # bump when a summary's layout or meaning changes
# `if __name__ == "__main__":` (either quotes, either order): the file is run as a script.
_MAIN_GUARD = re.compile(
    rb"""^if\s+(?:__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)""", re.MULTILINE)
SUMMARY_FOLDER = "project-summaries"
# Checked on torch 2.13: these turn grad off as `with X():` and as `@X()` (no_grad also as `@X`).
TORCH_NO_GRAD = frozenset({"torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
                           "torch.inference_mode", "torch.autograd.grad_mode.inference_mode"})
# Checked on torch 2.13: a tensor these make never requires grad (`requires_grad=` aside).
GRAD_FREE_RESULTS = frozenset({"torch.from_numpy", "torch.as_tensor", "torch.tensor", "torch.frombuffer"})
GRAD_FREE_METHODS = frozenset({"detach", "numpy", "item", "tolist"})
_GRAD_OFF_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in TORCH_NO_GRAD)
GPU_DEVICE_PREFIXES = ("cuda", "mps", "xpu")  # device strings torch 2.13 maps to an accelerator
RESULT_OF = "=>"  # in an assignment's contexts: "assigned the result of" this reference
THIS_MODULE = "~"  # the prefix of a reference to a name defined in the summarised file itself
# A reference that names its file (`@/project/solver.py::Solver`): what an export says of an instance
# of a project class it returns, readable from any importer (exports.encode).
ANCHOR, ANCHOR_SEPARATOR = "@", "::"
_T = TypeVar("_T")
ANY_RECEIVER = "?."  # the prefix of a method called on an object of a class the file cannot tell
RE_EXPORT_HOPS = 4
# How many levels of project base classes a class's lineage follows (the class itself is level 0).
MAX_LINEAGE = 8
MAX_METHOD_OWNERS = 8  # project module classes defining one method name, past which it tells nothing


def _c3_merge(sequences: list[list[Unit]]) -> list[Unit] | None:
    """C3's merge of the bases' linearizations and the list of the bases themselves, as
    `type.mro` computes it; None where no consistent order exists."""
    merged: list[Unit] = []
    sequences = [sequence for sequence in sequences if sequence]
    while sequences:
        head = next((sequence[0] for sequence in sequences
                     if not any(sequence[0] in other[1:] for other in sequences)), None)
        if head is None:
            return None
        merged.append(head)
        sequences = [rest for sequence in sequences if (rest := sequence[1:] if sequence[0] == head else sequence)]
    return merged


def anchored(path: Path, name: str) -> str:
    """The reference to the top-level name `name` of the project file `path`, from any file."""
    return f"{ANCHOR}{path}{ANCHOR_SEPARATOR}{name}"


# ----------------------------------------------------------------------------------- the root
def find_root(path: Path) -> Path:
    """The nearest folder at or above ``path``'s folder with a project marker, as flake8 and ruff
    find it. Without one (a tree unpacked from an archive, a course's folder, a Kaggle download),
    the folder the file's package is imported from, as mypy crawls up: the first folder above the
    file's that holds no `__init__.py` (`models/ema.py` of `run_lib.py`'s `from models.ema import
    ...`), and for a file outside any package its own folder."""
    start = path.parent if path.suffix else path
    start = start.resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            if _imported_from_above(folder):
                continue  # glow-tts's `monotonic_align/setup.py`: a package's own build script
            return folder
    folder = start
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return _namespace_root(path, folder)


def _imported_from_above(folder: Path) -> bool:
    """Whether a marked folder is a package the files beside it import (`import monotonic_align`
    in `models.py`, with `monotonic_align/setup.py` building its Cython extension): its marker
    belongs to that build, not to the project, whose root is further up."""
    if not (folder / "__init__.py").is_file() or folder.parent == folder:
        return False
    for sibling in itertools.islice(sorted(folder.parent.glob("*.py")), MAX_SIBLINGS_READ):
        data = python_text(sibling)
        text = data.decode("utf-8", "replace") if data is not None else ""
        if any((first or second) == folder.name for first, second in _IMPORT_HEAD.findall(text)):
            return True
    return False


NAMESPACE_LEVELS = 3  # how far above its package a marker-less file's imports may place the root
_IMPORT_HEAD = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b|import[ \t]+([A-Za-z_]\w*))", re.MULTILINE)


def _namespace_root(path: Path, folder: Path) -> Path:
    """Above `folder` where the file's own absolute imports resolve, for folders without
    `__init__.py` (namespace packages: SELFRec's `model/graph/SelfCF.py` imports
    `model.graph.LightGCN` and `base.graph_recommender` from the repository's top). `folder`
    itself where one of them resolves there. Where none resolves within NAMESPACE_LEVELS above
    (a file that imports only libraries: benchmarking-gnns' `train/metrics.py`), the files beside
    it say (`train/train_SBMs.py` imports `train.metrics` from the top); else `folder`."""
    own = _placed_by_imports(path, folder)
    if own is not None:
        return own
    for sibling in itertools.islice(sorted(folder.glob("*.py")), MAX_SIBLINGS_READ):
        if sibling != path:
            placed = _placed_by_imports(sibling, folder)
            if placed is not None and placed != folder:
                return placed
    return folder


MAX_SIBLINGS_READ = 32  # files beside a file whose imports place nothing, read to place it


def _placed_by_imports(path: Path, folder: Path) -> Path | None:
    """Where a file's absolute imports of non-library modules resolve: `folder`, a folder at most
    NAMESPACE_LEVELS above it, or None (no such import, none resolves, or no readable text)."""
    # A notebook's code cells too (NODE's `notebooks/*.ipynb` import `lib` from the folder above,
    # on `sys.path.insert(0, '..')`); a FIFO or a device is refused, not read.
    data = python_text(path) if path.suffix in (".py", NOTEBOOK_SUFFIX) else None
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    heads = {first or second for first, second in _IMPORT_HEAD.findall(text)} - _STANDARD_MODULES
    if not heads:
        return None
    if any(_names_module(folder, head) for head in heads):
        return folder
    for ancestor in itertools.islice(folder.parents, NAMESPACE_LEVELS):
        if any(_names_module(ancestor, head) for head in heads):
            return ancestor
    return None


_STANDARD_MODULES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"torch", "numpy", "__future__"}


def _names_module(folder: Path, head: str) -> bool:
    """Whether `import head` from `folder` finds a module or a package (regular or namespace)."""
    return (folder / f"{head}.py").is_file() or (folder / head).is_dir()


def project_files(root: Path, notebooks: bool = False) -> list[Path]:
    """The project's Python files (and, with ``notebooks``, its notebooks: they call the project's
    helpers but cannot be imported), skipping environments and build folders; [] past the bound."""
    found: list[Path] = []
    suffixes = (".py", NOTEBOOK_SUFFIX) if notebooks else (".py",)
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(name for name in folders if name not in SKIPPED_FOLDERS and not name.startswith("."))
        for name in sorted(files):
            if name.endswith(suffixes):
                found.append(Path(folder) / name)
                if len(found) > MAX_PROJECT_FILES:
                    return []
    return found


def python_text(path: Path) -> bytes | None:
    """A project file's Python text (a notebook's code cells, assembled as every front reads
    them), or None when it cannot be read as one: too large, not a regular file, not JSON."""
    from ..sources.files import SourceError, read_file_bytes

    if path.suffix != NOTEBOOK_SUFFIX:
        try:
            return read_file_bytes(path, MAX_FILE_BYTES)
        except SourceError:
            return None
    from ..sources.notebooks import NotebookError, read_notebook

    try:
        return read_notebook(path).source.encode("utf-8", "surrogatepass")
    except (NotebookError, ValueError, RecursionError):
        return None


# ----------------------------------------------------------------------------- the summaries
class _Summariser(ast.NodeVisitor):
    """One walk over a file's ``ast`` tree; what other files need of it, as plain JSON."""

    def __init__(self) -> None:
        self.imports: dict[str, str] = {}  # local name -> dotted reference (".x" relative)
        self.star_imports: list[str] = []  # modules of `from X import *` at the top level (re-exports)
        self.classes: dict[str, list[str]] = {}  # class -> its bases, as references
        self.functions: dict[str, list[str]] = {}  # "f" / "C.m" -> its decorators, as references
        self.grad_off: list[str] = []  # functions that turn grad off as decorators or contexts
        self.grad_free_returns: list[str] = []  # functions whose every `return` gives a tensor without grad
        self.freezing: list[str] = []  # methods that set requires_grad=False on all of `self`'s parameters
        self.templates: list[str] = []  # abstract methods: a subclass's override is what runs (_is_template)
        self.properties: list[str] = []  # "C.m" read as `obj.m`: its getter runs (_is_property)
        # Classes whose statement makes a parameter or a torch.nn layer that has some, or derives
        # from such a layer: they hold parameters, no export needs to say (ProjectView.parameter_free).
        self.parameter_makers: list[str] = []
        # "C.m" -> {field: parameter}: `self.model = model` in a method (a base trainer's `__init__`)
        self.param_fields: dict[str, dict[str, str]] = {}
        self.calls: list[list[Any]] = []  # [caller unit, callee reference, kind, contexts]
        self.escaped: set[str] = set()  # references read other than by a call (callbacks)
        self.unit = ""  # the function being walked ("" for module code)
        self.cls: str | None = None
        self.contexts: list[str] = []  # references of the `with` items around the current point
        self.bound: dict[str, str] = {}  # in the current unit: variable -> class reference it holds
        self.fields: dict[str, str] = {}  # in the current class: `self.x` -> the reference that built it
        # In the current unit: variable -> the contexts around each of its assignments so far.
        self.assigned: dict[str, list[list[str]]] = {}
        self.params: dict[str, list[str]] = {}  # "f" / "C.m" -> its positional parameter names
        self.depth = 0  # nesting of function definitions
        self.mentions_grad_off = True  # the text names no_grad or inference_mode somewhere
        self.mentions_requires_grad = False  # the text says requires_grad somewhere (a freeze may be there)
        self.lines: list[str] = []  # the text's lines, for the grad-off and freeze tests' text checks
        self.devices: list[str] = []  # module-level names bound to a device that may be a GPU
        self.returns: list[ast.Return] | None = None  # the `return`s of the top-level unit walked
        self.sys_path: list[list[str]] = []  # folders added to sys.path: [base, folder] (import_paths.py)
        self.default_device = False  # calls `torch.set_default_device(...)` or the like (placement.py)
        self.namedtuples: dict[str, list[str]] = {}  # module-level record classes a call makes: their fields
        # One lookup per node instead of NodeVisitor's name-built getattr (most of the walk's time).
        self._handlers: dict[type, Callable[[Any], None]] = {
            ast.ClassDef: self.visit_ClassDef, ast.FunctionDef: self.visit_FunctionDef,
            ast.AsyncFunctionDef: self.visit_FunctionDef, ast.With: self.visit_With,
            ast.AsyncWith: self.visit_With, ast.Assign: self.visit_Assign, ast.Call: self.visit_Call,
            ast.Name: self.visit_Name, ast.Return: self.visit_Return,
        }

    def visit(self, node: ast.AST) -> None:
        handler = self._handlers.get(type(node))
        if handler is not None:
            handler(node)
        elif type(node) not in _LEAVES:
            for child in ast.iter_child_nodes(node):
                self.visit(child)

    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    # The names this file binds at its top level and what they refer to.
    def reference(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Call):
            return self.reference(node.func)
        if isinstance(node, ast.Name):
            if node.id in self.imports:
                return self.imports[node.id]
            if node.id in self.classes or node.id in self.functions:
                return THIS_MODULE + node.id
            if self.star_imports and node.id not in _BUILTIN_NAMES and not node.id.startswith("_"):
                return THIS_MODULE + node.id  # maybe bound by `from models import *` (_star_definition)
            return None
        if isinstance(node, ast.Attribute):
            base = self.reference(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def collect_top_level(self, tree: ast.Module) -> None:
        """Imports and definitions first: a call may name a function defined further down."""
        for node in _statements(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.imports[alias.asname] = alias.name
                    else:
                        head = alias.name.split(".", 1)[0]
                        self.imports[head] = head
            elif isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                if node in tree.body:  # `from .base_trainer import *` in a package's __init__
                    self.star_imports.append("." * node.level + (node.module or ""))
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                for alias in node.names:
                    joiner = "" if base.endswith(".") or not base else "."
                    self.imports[alias.asname or alias.name] = f"{base}{joiner}{alias.name}"
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _names_a_gpu(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                self.devices.extend(target.id for target in targets if isinstance(target, ast.Name))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = []
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = []
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                fields = self._record_fields(node.value)
                if fields is not None:  # `Net = collections.namedtuple("Net", ["encoder", "decoder"])`
                    self.namedtuples[node.targets[0].id] = fields

    def _record_fields(self, value: ast.expr) -> list[str] | None:
        """The fields of `collections.namedtuple("N", "a b")` or `typing.NamedTuple("N", [("a", T)])`,
        spelled out in the call; None for any other value."""
        if not isinstance(value, ast.Call) or len(value.args) < 2:
            return None
        called = self.reference(value.func)
        spec = value.args[1]
        if called in ("collections.namedtuple", "typing.NamedTuple") and isinstance(spec, (ast.List, ast.Tuple)):
            parts = [element.elts[0] if called == "typing.NamedTuple" and isinstance(element, ast.Tuple) and element.elts
                     else element for element in spec.elts]
            names = [part.value for part in parts if isinstance(part, ast.Constant) and isinstance(part.value, str)]
            return names if len(names) == len(parts) else None
        if called == "collections.namedtuple" and isinstance(spec, ast.Constant) and isinstance(spec.value, str):
            return spec.value.replace(",", " ").split()
        return None

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if self.depth == 0 and self.cls is None:
            self.classes[node.name] = [ref for ref in map(self.reference, node.bases) if ref]
            if any(_makes_parameters(ref) for ref in self.classes[node.name]):
                self.parameter_makers.append(node.name)  # `class Head(nn.Linear)`; calls: visit_Call
            self.cls = node.name
            self.fields = self._constructed_fields(node)
            self.generic_visit(node)
            self.cls, self.fields = None, {}
        else:
            self.generic_visit(node)

    def _constructed_fields(self, node: ast.ClassDef) -> dict[str, str]:
        """`self.ema = LitEma(self.model)` in any method of the class: field -> the reference of
        what built it, for `self.ema.restore(...)` in every method (a field built two ways: none)."""
        fields: dict[str, str] = {}
        clashing: set[str] = set()
        for method in node.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for statement in _statements(method):
                if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)):
                    continue
                ref = self.reference(statement.value.func)
                for target in statement.targets:
                    if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                            and target.value.id == "self"):
                        if ref is None or fields.get(target.attr, ref) != ref:
                            clashing.add(target.attr)
                        else:
                            fields[target.attr] = ref
        return {name: ref for name, ref in fields.items() if name not in clashing}

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        decorators = [ref for ref in map(self.reference, node.decorator_list) if ref]
        for decorator in node.decorator_list:
            self.visit(decorator)
        top = self.depth == 0
        name = f"{self.cls}.{node.name}" if self.cls else node.name
        if top:
            self.functions[name] = decorators
            if self.mentions_grad_off and self._names_grad_off(node) and _turns_grad_off(node, self.reference):
                self.grad_off.append(name)
        saved = self.unit, self.contexts, self.bound, self.assigned, self.returns
        if top:
            self.unit, self.contexts, self.bound, self.assigned = name, list(decorators), {}, {}
            self.params[name] = [arg.arg for arg in (*node.args.posonlyargs, *node.args.args)]
            self.returns = []
        else:
            self.contexts = self.contexts + decorators
            self.returns = None  # a nested function's `return`s are not the unit's
        self.depth += 1
        for statement in node.body:
            self.visit(statement)
        self.depth -= 1
        if top and self.returns and all(self._gives_grad_free(ret) for ret in self.returns):
            self.grad_free_returns.append(name)
        if top and self.cls is not None and self.mentions_requires_grad and self._freezes_self(node):
            self.freezing.append(name)
        if top and self.cls is not None and _is_template(node, decorators):
            self.templates.append(name)
        if top and self.cls is not None and any(map(_is_property, node.decorator_list)):
            self.properties.append(name)
        if top and self.cls is not None:
            stored = _parameter_fields(node)
            if stored:
                self.param_fields[name] = stored
        self.unit, self.contexts, self.bound, self.assigned, self.returns = saved

    def _freezes_self(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether calling the method freezes its module: the analysis's own test
        (freezing.freezes_self) on libcst's parse of the method's text, for a method that says
        `requires_grad` (open-unmix's `Separator.freeze`); others are not parsed again."""
        text = "".join(self.lines[node.lineno - 1:node.end_lineno or node.lineno])
        if "requires_grad" not in text:
            return False
        import libcst as cst

        from .freezing import freezes_self

        try:
            parsed = cst.parse_statement(textwrap.dedent(text))
        except (cst.ParserSyntaxError, RecursionError, ValueError):
            return False
        return isinstance(parsed, cst.FunctionDef) and freezes_self(parsed)

    def _names_grad_off(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether the function's text (its decorators included) spells `no_grad` or
        `inference_mode`: a name the grad-off test looks for must be written there."""
        first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
        text = "".join(self.lines[first - 1:node.end_lineno or node.lineno])
        return "no_grad" in text or "inference_mode" in text

    def visit_Return(self, node: ast.Return) -> None:
        if self.returns is not None:
            self.returns.append(node)
        self.generic_visit(node)

    def _gives_grad_free(self, ret: ast.Return) -> bool:
        """`return torch.from_numpy(out)`, `return y.detach()`: a tensor that needs no grad."""
        return isinstance(ret.value, ast.Call) and (
            self.reference(ret.value.func) in GRAD_FREE_RESULTS
            or isinstance(ret.value.func, ast.Attribute) and ret.value.func.attr in GRAD_FREE_METHODS)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        items = [ref for ref in (self.reference(item.context_expr) for item in node.items) if ref]
        for item in node.items:
            self.visit(item.context_expr)
        saved = self.contexts
        self.contexts = self.contexts + items
        for statement in node.body:
            self.visit(statement)
        self.contexts = saved

    def visit_Assign(self, node: ast.Assign) -> None:
        call = node.value if isinstance(node.value, ast.Call) else None
        explicit = call is not None and any(keyword.arg == "requires_grad" for keyword in call.keywords)
        result = self.reference(call.func) if call is not None and not explicit else None
        marks = [RESULT_OF + result] if result is not None else []
        for target in node.targets:
            for name in _bound_names(target):
                self.assigned.setdefault(name, []).append(self.contexts + marks)
        if isinstance(node.value, ast.Call):
            ref = self.reference(node.value.func)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    if ref is not None:
                        self.bound[target.id] = ref
                    else:
                        self.bound.pop(target.id, None)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        self._note_call(func, node)
        cls = self.cls
        called = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
        if cls is not None and (not self.parameter_makers or self.parameter_makers[-1] != cls) and (
                called[:1].isupper() and _makes_parameters(self.reference(func))):
            self.parameter_makers.append(cls)  # `self.fc = nn.Linear(...)`, `nn.Parameter(...)`
        if called in DEFAULT_DEVICE_SETTERS and (self.reference(func) or "").startswith("torch."):
            self.default_device = True
        if type(func) is ast.Attribute and func.attr in ("append", "insert"):
            folder = added_folder(node)  # `sys.path.append("../src")`: where its imports are found
            if folder is not None and list(folder) not in self.sys_path:
                self.sys_path.append(list(folder))
        for part in (*node.args, *(keyword.value for keyword in node.keywords)):
            self.visit(part)
        if isinstance(func, ast.Attribute):
            self.visit(func.value)
        elif not isinstance(func, ast.Name):
            self.visit(func)

    def _arguments(self, call: ast.Call) -> list[list[Any]] | None:
        """Per argument (its position or keyword): the contexts of each assignment of the variable
        it reads (`output[0]` reads `output`), or None when that is not known in this function."""
        if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
            return None  # `f(*args)`: which parameter gets what is not in the file
        found: list[list[Any]] = []
        for key, value in [*enumerate(call.args), *((k.arg, k.value) for k in call.keywords)]:
            base = value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            found.append([key, self.assigned.get(base.id) if isinstance(base, ast.Name) else None])
        return found

    def _note_call(self, func: ast.expr, call: ast.Call) -> None:
        contexts: list[Any] = [list(self.contexts), self._arguments(call)]
        if isinstance(func, ast.Name) and func.id in self.bound:  # `model = Net(); model(x)`
            self.calls.append([self.unit, self.bound[func.id], "instance", *contexts])
            return
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute)
                and isinstance(func.value.value, ast.Name) and func.value.value.id == "self"
                and func.value.attr in self.fields):  # `self.ema.restore(...)`, `self.ema` built in `__init__`
            self.calls.append([self.unit, f"{self.fields[func.value.attr]}.{func.attr}", "method", *contexts])
            return
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = func.value.id
            if owner == "self" and self.cls is not None:
                self.calls.append([self.unit, f"{THIS_MODULE}{self.cls}.{func.attr}", "method", *contexts])
                if func.attr in self.fields:  # `self.net(x)`: the instance is called too
                    self.calls.append([self.unit, self.fields[func.attr], "instance", *contexts])
                return
            if owner in self.bound:  # `model.warmup(...)`
                self.calls.append([self.unit, f"{self.bound[owner]}.{func.attr}", "method", *contexts])
                return
        if isinstance(func, ast.Call):  # `Net()(x)`: the instance is called
            ref = self.reference(func.func)
            if ref is not None:
                self.calls.append([self.unit, ref, "instance", *contexts])
            return
        ref = self.reference(func)
        if ref is not None:
            self.calls.append([self.unit, ref, "call", *contexts])
        elif isinstance(func, ast.Attribute) and func.attr not in _COMMON_METHODS:
            # `logger.log_validation(...)` of an object the file cannot tell: the project class
            # that alone defines a method of that name, if one does (Project.unique_method)
            self.calls.append([self.unit, ANY_RECEIVER + func.attr, "anymethod", *contexts])

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            ref = self.reference(node)
            if ref is not None:
                self.escaped.add(ref)  # read, not called: a callback, a `map(f, ...)`

    def summary(self) -> dict[str, Any]:
        return {"imports": self.imports, "classes": self.classes, "functions": self.functions,
                "grad_off": self.grad_off, "calls": self.calls, "escaped": sorted(self.escaped),
                "params": self.params, "grad_free_returns": self.grad_free_returns, "devices": self.devices,
                "star_imports": self.star_imports, "freezing": self.freezing, "param_fields": self.param_fields,
                "sys_path": self.sys_path, "templates": self.templates, "parameter_makers": self.parameter_makers,
                "default_device": self.default_device, "namedtuples": self.namedtuples,
                "properties": self.properties}


def _makes_parameters(reference: str | None) -> bool:
    """`nn.Parameter(...)`, or a torch.nn layer that is no container and not known to hold no
    parameters (semantics.PARAMETER_FREE_MODULES): `nn.Linear`, `nn.Conv2d`, `nn.LayerNorm`."""
    if reference is None or not reference.startswith("torch.nn."):
        return False
    name = reference.rpartition(".")[2]
    return name == "Parameter" or (name[:1].isupper() and name not in PARAMETER_FREE_MODULES
                                   and name not in _LAYER_CONTAINERS)


_LAYER_CONTAINERS = frozenset({"Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"})


def _is_property(decorator: ast.expr) -> bool:
    """`@property`, `@functools.cached_property`: reading the attribute runs the method."""
    name = decorator.id if isinstance(decorator, ast.Name) else (
        f"{decorator.value.id}.{decorator.attr}" if isinstance(decorator, ast.Attribute)
        and isinstance(decorator.value, ast.Name) else None)
    return name in PROPERTY_DECORATORS


def _is_template(method: ast.FunctionDef | ast.AsyncFunctionDef, decorators: list[str]) -> bool:
    """An abstract method: decorated `abc.abstractmethod`, or a body of a docstring and `pass`,
    `...` or `raise NotImplementedError` only. What it returns is a subclass's business."""
    if any(decorator.rpartition(".")[2] == "abstractmethod" for decorator in decorators):
        return True
    body = method.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    return bool(body) and all(_is_placeholder(statement) for statement in body)


def _is_placeholder(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return statement.value.value is Ellipsis
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
    return False


def _parameter_fields(method: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """`self.model = model` in a method: field -> the parameter it stores, for a subclass in another
    file whose `super().__init__(config, model)` says what the field holds. A field stored from
    two parameters, or a parameter the method rebinds first, is left out (the export says what
    the field holds otherwise)."""
    arguments = [*method.args.posonlyargs, *method.args.args, *method.args.kwonlyargs]
    if not arguments:
        return {}
    receiver, parameters = arguments[0].arg, {argument.arg for argument in arguments[1:]}
    rebound: set[str] = set()
    stored: dict[str, str] = {}
    clashing: set[str] = set()
    for node in _statements(method):  # statements only: an assignment is one (a walk of every expression costs)
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets, value = [node.target], node.value
        for target in targets:
            if isinstance(target, ast.Name) and target.id in parameters:
                rebound.add(target.id)
            elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                  and target.value.id == receiver and isinstance(value, ast.Name) and value.id in parameters
                  and not isinstance(node, ast.AugAssign)):
                if stored.get(target.attr, value.id) != value.id:
                    clashing.add(target.attr)
                stored[target.attr] = value.id
    return {field: parameter for field, parameter in stored.items()
            if field not in clashing and parameter not in rebound}


def _names_a_gpu(value: ast.expr) -> bool:
    """A module-level device constant that may be a GPU: `"cuda"`, `torch.device("cuda:0")`,
    `torch.device("cuda" if torch.cuda.is_available() else "cpu")` (a string naming cuda or mps
    anywhere in the value, held by a string or a `device(...)` call; the file's own walk treats
    the same values as devices that may be a GPU)."""
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name != "device":
            return False
        return any(_names_a_gpu(argument) for argument in value.args)
    if isinstance(value, ast.IfExp):
        return _names_a_gpu(value.body) or _names_a_gpu(value.orelse)
    return isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value.startswith(GPU_DEVICE_PREFIXES)


def _bound_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


_BUILTIN_NAMES = frozenset(dir(builtins))


def _common_methods() -> frozenset[str]:
    """Method names a call on an object of unknown class is not taken to run a project method by."""
    from . import semantics as sem
    from .tensor_methods import TENSOR_METHODS

    builtin = {name for kind in (dict, list, str, set, bytes, object) for name in dir(kind)}
    return (TENSOR_METHODS | sem.COMMON_METHOD_NAMES | sem.MODULE_SELF_METHODS | sem.MODULE_ONLY_METHODS
            | sem.MODULE_NON_OUTPUT_METHODS | builtin)


_COMMON_METHODS = _common_methods()
# Nodes with nothing inside that the summary reads: the walk does not descend into them.
_LEAVES = frozenset({ast.Constant, ast.Load, ast.Store, ast.Del, *(operator for operator in (
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult, ast.BitAnd, ast.BitOr,
    ast.BitXor, ast.LShift, ast.RShift, ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd, ast.Invert, ast.Eq, ast.NotEq,
    ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn)), ast.Pass, ast.Break, ast.Continue})
_HANDLERS = (ast.ExceptHandler, *((ast.match_case,) if hasattr(ast, "match_case") else ()))


def _statements(tree: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.stmt]:
    """Every statement at any depth, without walking into expressions (imports are statements)."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, name, None)
            if inner:
                for child in reversed(inner):
                    stack.extend(reversed(child.body) if isinstance(child, _HANDLERS) else [child])


def _turns_grad_off(node: ast.FunctionDef | ast.AsyncFunctionDef, reference: Any) -> bool:
    """A decorator, decorator factory or context manager that turns grad off.

    Read from its body: it names ``torch.no_grad`` / ``torch.inference_mode`` (in a `return`,
    a `with`, or on a nested function), and it gives something back (a `return` of a value or a
    `yield`): ``return torch.no_grad()``, ``return (torch.inference_mode if new else
    torch.no_grad)()(fn)``, a wrapper that calls ``fn`` inside ``with torch.no_grad():``, a
    `@contextmanager` that yields there, or a factory returning any of these.
    """
    mentions = gives_back = False
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr in _GRAD_OFF_NAMES and reference(inner) in TORCH_NO_GRAD or (
                isinstance(inner, ast.Name) and inner.id in _GRAD_OFF_NAMES and reference(inner) in TORCH_NO_GRAD):
            mentions = True
        elif isinstance(inner, ast.Return) and inner.value is not None or isinstance(inner, (ast.Yield, ast.YieldFrom)):
            gives_back = True
    return mentions and gives_back


def summarise(source: str | bytes, tree: ast.Module | None = None) -> dict[str, Any] | None:
    """The summary of one file's text, or None when it does not parse. ``tree``: the text's own
    `ast` tree where the caller has it (flake8 gives the linted file's), read, never changed."""
    if tree is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    walker = _Summariser()
    text = source if isinstance(source, str) else source.decode("utf-8", "replace")
    walker.mentions_grad_off = "no_grad" in text or "inference_mode" in text
    walker.mentions_requires_grad = "requires_grad" in text
    if walker.mentions_grad_off or walker.mentions_requires_grad:
        walker.lines = text.splitlines(keepends=True)
    walker.collect_top_level(tree)
    try:
        walker.visit(tree)
    except RecursionError:
        return None
    return walker.summary()


# ------------------------------------------------------------------------------ the storage
class SummaryStore:
    """Summaries by content hash: in memory, and on disk in the results cache's folder when given."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.memory: dict[str, dict[str, Any] | None] = {}

    @staticmethod
    def key(data: bytes, kind: str = SUMMARY_FORMAT) -> str:
        from ..sources.cache import code_fingerprint

        digest = blake2b(f"{code_fingerprint()}\0{kind}\0".encode(), digest_size=20)
        digest.update(data)
        return digest.hexdigest()

    def summary_of(self, data: bytes, tree: ast.Module | None = None) -> dict[str, Any] | None:
        """A file's summary, its lists made tuples: read-only, and a tuple of strings is one
        object Python's cycle collector stops tracking, where the lists of every call site of
        a project (100,000 on timm) were walked by each of flake8's full collections. ``tree``:
        the text's `ast` tree, where the caller has one (a cold run then parses it once)."""
        compute = summarise if tree is None else lambda raw: summarise(raw, tree)
        return self.cached(data, SUMMARY_FORMAT, compute, keep=_immutable)

    def cached(self, data: bytes, kind: str, compute: Callable[[bytes], dict[str, Any] | None],
               keep: Callable[[dict[str, Any] | None], dict[str, Any] | None] = lambda found: found,
               ) -> dict[str, Any] | None:
        """`compute(data)`, kept in memory (as ``keep`` makes it) and on disk under the content's
        and the kind's key."""
        key = self.key(data, kind)
        if key in self.memory:
            return self.memory[key]
        found = self._read(key)
        if found is None:
            found = compute(data)
            if found is not None:
                self._write(key, found)
        self.memory[key] = kept = keep(found)
        return kept

    def witnessed(self, data: bytes, kind: str, view: ProjectView,
                  compute: Callable[[bytes], dict[str, Any] | None]) -> dict[str, Any] | None:
        """`compute(data)`, which asks the project through ``view``: stored with its witness
        (analysis/witness.py), and read back while the witness holds, whatever else changed in
        the project. In memory, per file (the same text at two paths asks other questions)."""
        key = self.key(data, kind)
        remembered = f"{key}\0{view.path}"
        if remembered in self.memory:
            return self.memory[remembered]
        found = self._read(key)
        if found is not None and not holds(view, found.pop("witness", None)):
            found = None
        if found is None:
            view.witness = {}
            try:
                found = compute(data)
            finally:
                questions, view.witness = view.witness, None
            stored = to_data(questions)
            if found is not None and stored is not None:
                self._write(key, {**found, "witness": stored})
        self.memory[remembered] = found
        return found

    def _entry(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / SUMMARY_FOLDER / key[:2] / f"{key[2:]}.json"

    def _read(self, key: str) -> dict[str, Any] | None:
        entry = self._entry(key)
        if entry is None:
            return None
        try:
            data = json.loads(entry.read_bytes())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("key") == key else None

    def _write(self, key: str, summary: dict[str, Any]) -> None:
        entry = self._entry(key)
        if entry is None:
            return
        from ..sources.writing import replace_file

        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            replace_file(entry, json.dumps({**summary, "key": key}).encode(), prefix=".tmp-", suffix=".part",
                         durable=False)
        except OSError:
            pass  # a summary not stored is computed again next time


def _immutable(value: Any) -> Any:
    """``value`` with every list, at any depth, a tuple (dicts stay dicts)."""
    if isinstance(value, list):
        return tuple(_immutable(item) for item in value)
    if isinstance(value, dict):
        return {key: _immutable(item) for key, item in value.items()}
    return value


# ------------------------------------------------------------------------------- the project
Unit = tuple[Path, str]  # a file and "f" or "C.m" in it


def unit_key(unit: Unit) -> str:
    """A unit as a key of an export's outgoing calls."""
    return f"{unit[0]}::{unit[1]}"


@dataclass
class Project:
    """One project's files, their summaries (read as asked), and the call graph between them."""

    root: Path
    store: SummaryStore
    summaries: dict[Path, dict[str, Any] | None] = field(default_factory=dict)
    # Memos of name resolution: the same few names are resolved from every call of every file.
    # Keyed by one string ("folder\0name"), not a (Path, str) tuple: tens of thousands of keys,
    # and a string is no object for the cycle collector to walk at each of flake8's full passes.
    _files: dict[str, tuple[Path, str] | None] = field(default_factory=dict)
    _definitions: dict[str, Unit | None] = field(default_factory=dict)
    _sys_path: dict[str, tuple[Path, ...]] = field(default_factory=dict)  # per importer: _added_folders
    _known: frozenset[str] | None = None
    _callers_of: list[Path] | None = None
    # Per file and depth (deep: it reads other files' returns; see `exports`), its exports computed
    # so far, each with the top-level definitions it covers (None: all of them; analysis/demand.py).
    _exports: dict[tuple[Path, bool], list[tuple[frozenset[str] | None, dict[str, Any] | None]]] = field(
        default_factory=dict)
    _exporting: set[Path] = field(default_factory=set)
    _export_depth: int = 0  # exports being computed, nested: only the outermost reads returns
    _entry_points: dict[str, bool] = field(default_factory=dict)
    _local_calls: dict[Path, dict[str, frozenset[str]]] = field(default_factory=dict)
    _module_methods: dict[str, tuple[Unit, ...] | None] = field(default_factory=dict)
    _unique_methods: dict[str, Unit | None] = field(default_factory=dict)
    _callers: CallerIndex | None = None
    buffers: set[Path] = field(default_factory=set)  # files summarised from a text given, not from disk
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # Reading files.
    def summary(self, path: Path, source: str | None = None, tree: ast.Module | None = None) -> dict[str, Any] | None:
        """``tree``: ``source``'s `ast` tree, where the caller has one."""
        if path in self.summaries:
            return self.summaries[path]
        if source is not None:
            self.buffers.add(path)
        data = source.encode("utf-8", "surrogatepass") if source is not None else python_text(path)
        found = None if data is None else self.store.summary_of(data, tree if source is not None else None)
        self.summaries[path] = found
        return found

    def exports(self, path: Path, roots: Iterable[str] | None = None) -> dict[str, Any] | None:
        """What the interpreter finds ``path``'s functions return, its classes' fields hold and its
        calls pass (analysis/exports.py), for the top-level definitions ``roots`` (None: all),
        once per content and project state: an export that covers them already answers."""
        wanted = None if roots is None else frozenset(roots)
        deep = self._export_depth == 0 and self._entry_point(path)  # reads what other files return
        known = self._exports.setdefault((path, deep), [])
        for cover, found in known:
            if cover is None or (wanted is not None and wanted <= cover):
                return found
        if path in self._exporting:
            return None  # a file whose export is being computed exports nothing meanwhile
        self._exporting.add(path)
        self._export_depth += 1
        try:
            found = self._compute_exports(path, wanted, deep)
        finally:
            self._exporting.discard(path)
            self._export_depth -= 1
        covered = None if found is None else found.get("covered")
        known.append((None if covered is None else frozenset(covered), found))
        return found

    def _entry_point(self, path: Path) -> bool:
        """A notebook or a script (`if __name__ == "__main__":`): where a project's objects are
        made by its own loaders and handed to its helpers (`model = V.load(...)`, then
        `V.show(model)`). Library modules, which most exports are of, pass on what they get."""
        if path.suffix != ".py":
            return path.suffix == NOTEBOOK_SUFFIX  # a notebook needs no reading to tell
        key = str(path)
        found = self._entry_points.get(key)
        if found is None:
            data = python_text(path)
            found = self._entry_points[key] = data is not None and (
                _MAIN_GUARD.search(data) is not None or self._drives_project_objects(path))
        return found

    def _drives_project_objects(self, path: Path) -> bool:
        """A script without a main guard (`train.py` that runs at import): its module code calls a
        method of an object of a project class (`engine.evaluate(data)`), as a library module's
        import-time code does not."""
        summary = self.summary(path)
        for caller, reference, kind, *_ in summary["calls"] if summary is not None else ():
            if caller == "" and kind == "method" and isinstance(reference, str):
                unit = self.definition(path, reference)
                if unit is not None and "." in unit[1]:
                    return True
        return False

    def _compute_exports(self, path: Path, roots: frozenset[str] | None, deep: bool) -> dict[str, Any] | None:
        """``deep``: the export reads what other project files' functions return (their own
        exports then read nothing further): one level, for an entry point (`_entry_point`), so
        that `model, data = V.load(...)` in a notebook passes the loaded model on to
        `V.show(model)`, while exports stay bounded."""
        from .exports import EXPORT_FORMAT, compute_exports

        data = python_text(path)
        if data is None:
            return None
        view = ProjectView(self, path, values=False, returns=deep)
        kind = (f"exports-{EXPORT_FORMAT}" + ("" if deep else "-flat")
                + ("" if roots is None else ":" + ",".join(sorted(roots))))
        return self.store.witnessed(data, kind, view,
                                    lambda raw: compute_exports(raw.decode("utf-8", "replace"), view, roots))

    def incoming(self, unit: Unit) -> dict[str, list[int]]:
        """What the calls of ``unit`` in other project files pass, per parameter (an index or a
        keyword), joined over those files' exports (their interpreter's view of each call)."""
        joined: dict[str, list[int]] = {}
        key = unit_key(unit)
        calls = self.callers().calls(unit)
        for path in sorted(calls.files):
            callers = {definition_of(site.caller[1]) for site in calls.sites
                       if site.caller is not None and site.caller[0] == path}
            exports = self.exports(path, callers)
            passed = exports.get("outgoing", {}).get(key, {}) if exports is not None else {}
            for parameter, encoded in passed.items():
                joined[parameter] = join_encoded(joined.get(parameter), encoded)
        return joined

    def unit_of(self, importer: Path, dotted: str) -> Unit | None:
        """The project function a reference names (a class: its `__init__`), or None."""
        unit = self.definition(importer, dotted)
        summary = self.summary(unit[0]) if unit is not None else None
        if unit is None or summary is None:
            return None
        if unit[1] in summary["classes"]:
            init = f"{unit[1]}.__init__"
            return (unit[0], init) if init in summary["functions"] else None
        return unit if unit[1] in summary["functions"] else self.inherited(unit)

    def inherited(self, unit: Unit) -> Unit | None:
        """The method "C.m" of a project class as a call runs it: C's own, else the first of its
        lineage's that the project defines; None where no project class on the way has it."""
        path, name = unit
        owner, _, method = name.rpartition(".")
        if not owner or "." in owner:
            return None
        for (owner_path, owner_name), _ in self.lineage(path, THIS_MODULE + owner):
            summary = self.summary(owner_path)
            if summary is not None and f"{owner_name}.{method}" in summary["functions"]:
                return owner_path, f"{owner_name}.{method}"
        return None

    def lineage(self, importer: Path, dotted: str) -> Iterator[tuple[Unit, list[str]]]:
        """The project class a reference names, then its project bases in Python's method
        resolution order (C3; depth first where the bases admit no such order), each with its
        bases as written in its file: the one walk over a class's ancestry that inherited methods,
        module classes, subclass tests and the view's per-class questions share. A cycle ends,
        and at most MAX_LINEAGE levels of bases are followed."""
        yield from self._linearized(importer, dotted, 0, frozenset(), {})

    def _linearized(self, importer: Path, dotted: str, depth: int, active: frozenset[Unit],
                    memo: dict[Unit, list[tuple[Unit, list[str]]]]) -> list[tuple[Unit, list[str]]]:
        found = self.class_bases(importer, dotted)
        unit = self.definition(importer, dotted)
        if found is None or unit is None or "." in unit[1] or unit in active:
            return []
        if unit in memo:
            return memo[unit]
        entry = (unit, found[1])
        parents = [] if depth >= MAX_LINEAGE else [
            order for base in found[1] if (order := self._linearized(found[0], base, depth + 1, active | {unit}, memo))]
        entries = {parent[0]: parent for order in parents for parent in order}
        units = [[parent[0] for parent in order] for order in parents]
        merged = _c3_merge([*units, [order[0] for order in units]])
        if merged is None:  # no consistent order (Python refuses the class): depth first, each once
            merged = list(entries)
        memo[unit] = [entry, *(entries[parent] for parent in merged)]
        return memo[unit]

    def exported(self, importer: Path, dotted: str, table: str) -> tuple[Unit, Any] | None:
        """The export of the unit a reference ends at (`table`: "returns" or "fields")."""
        unit = self.definition(importer, dotted)
        if unit is None:
            return None
        exports = self.exports(unit[0], (definition_of(unit[1]),))
        return (unit, None if exports is None else exports.get(table, {}).get(unit[1]))

    def local_calls(self, path: Path, summary: dict[str, Any]) -> dict[str, frozenset[str]]:
        """Per unit of a file, the file's own top-level names it calls (under "?units": the units)."""
        found = self._local_calls.get(path)
        if found is None:
            calls: dict[str, set[str]] = {}
            for caller, reference, *_ in summary["calls"]:
                if isinstance(caller, str) and isinstance(reference, str) and reference.startswith(THIS_MODULE):
                    calls.setdefault(caller, set()).add(reference[len(THIS_MODULE):].split(".", 1)[0])
            found = {name: frozenset(names) for name, names in calls.items()}
            found["?units"] = frozenset(summary["functions"])
            self._local_calls[path] = found
        return found

    def class_bases(self, importer: Path, dotted: str) -> tuple[Path, list[str]] | None:
        """The file of the project class a reference names and its bases as written there."""
        unit = self.definition(importer, dotted)
        summary = self.summary(unit[0]) if unit is not None else None
        if unit is None or summary is None or unit[1] not in summary["classes"]:
            return None
        return unit[0], summary["classes"][unit[1]]

    # Resolving names.
    def module_file(self, importer: Path, dotted: str) -> tuple[Path, str] | None:
        """The project file a dotted reference names and the rest of it (the name inside), or None."""
        # Files of one folder resolve alike, unless one adds folders to sys.path.
        shared = not dotted.startswith(THIS_MODULE) and not self._added_folders(importer)
        key = f"{importer.parent if shared else importer}\0{dotted}"
        if key not in self._files:
            self._files[key] = self._module_file(importer, dotted)
        return self._files[key]

    def _module_file(self, importer: Path, dotted: str) -> tuple[Path, str] | None:
        if dotted.startswith(THIS_MODULE):
            return importer, dotted[len(THIS_MODULE):]
        if dotted.startswith(ANCHOR):  # read from an export (a cache file): only a file of this project
            path, _, rest = dotted[len(ANCHOR):].partition(ANCHOR_SEPARATOR)
            file = Path(path)
            return (file, rest) if rest and file.suffix == ".py" and file.is_relative_to(self.root) else None
        if dotted.startswith("."):
            level = len(dotted) - len(dotted.lstrip("."))
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            parts = [part for part in dotted[level:].split(".") if part]
            return self._longest_module(parts, (base,), allow_package_itself=True)
        parts = dotted.split(".")
        bases = (importer.parent, self.root, self.root / "src", *self._added_folders(importer))
        return self._longest_module(parts, bases)

    def _added_folders(self, importer: Path) -> tuple[Path, ...]:
        """The folders the importing file adds to sys.path (import_paths.py), inside the project:
        relative to its own folder, and a plain string also relative to the root (the working
        directory a script may be run from)."""
        key = str(importer)
        found = self._sys_path.get(key)
        if found is None:
            found = self._sys_path[key] = tuple(self._read_added_folders(importer))
        return found

    def _read_added_folders(self, importer: Path) -> list[Path]:
        summary = self.summary(importer) if importer.suffix in (".py", ".ipynb") else None
        folders: list[Path] = []
        for base, folder in (summary or {}).get("sys_path", ()):
            for start in (importer.parent, self.root) if base == "cwd" else (importer.parent,):
                found = Path(os.path.normpath(start / folder))
                if found.is_relative_to(self.root) and found not in folders:
                    folders.append(found)
        return folders

    def _longest_module(self, parts: list[str], bases: Iterable[Path],
                        allow_package_itself: bool = False) -> tuple[Path, str] | None:
        known = self.known_files()
        for base in bases:
            folder = str(base)
            for cut in range(len(parts), -1 if allow_package_itself else 0, -1):
                stem = os.path.join(folder, *parts[:cut])
                for candidate in (stem + ".py", os.path.join(stem, "__init__.py")) if cut else (
                        os.path.join(stem, "__init__.py"),):
                    if candidate in known:
                        return Path(candidate), ".".join(parts[cut:])
        return None

    def known_files(self) -> frozenset[str]:
        """The project's files as strings: resolving a name is set lookups, not file system calls."""
        if self._known is None:
            # One walk serves both lists; past the bound with notebooks counted, the modules alone.
            modules = [path for path in self.caller_files() if path.suffix == ".py"] or project_files(self.root)
            self._known = frozenset(map(str, modules))
        return self._known

    def caller_files(self) -> list[Path]:
        """The files whose calls judge the project's functions: its modules and its notebooks."""
        if self._callers_of is None:
            self._callers_of = project_files(self.root, notebooks=True)
        return self._callers_of

    def definition(self, importer: Path, dotted: str) -> Unit | None:
        """The file and top-level name (or "C.m") a reference ends at, following re-exports."""
        key = f"{importer}\0{dotted}"
        if key not in self._definitions:
            self._definitions[key] = self._definition(importer, dotted)
        return self._definitions[key]

    def _definition(self, importer: Path, dotted: str, hops: int = RE_EXPORT_HOPS) -> Unit | None:
        while hops > 0:
            hops -= 1
            found = self.module_file(importer, dotted)
            if found is None or not found[1]:
                return None
            path, rest = found
            summary = self.summary(path)
            if summary is None:
                return None
            head, _, tail = rest.partition(".")
            if head in summary["classes"] or head in summary["functions"] or head in summary.get("devices", ()) or (
                    head in summary.get("namedtuples", ())):
                return (path, rest)
            if head in summary["imports"]:  # `from .torch_utils import smart_inference_mode` re-exported
                importer, dotted = path, summary["imports"][head] + (f".{tail}" if tail else "")
                continue
            return self._star_definition(path, summary, rest, hops)
        return None

    def star_names(self, importer: Path, hops: int = RE_EXPORT_HOPS) -> dict[str, str]:
        """The public names the file's `from X import *` of project modules bind, each as the file
        would import it: a library name X imports as X does (`torch`, `nn` -> "torch.nn"), a
        name X defines or takes from the project through X ("models.Darknet"). A later star
        import wins, as in Python; a library's star import names nothing known here."""
        summary = self.summary(importer)
        names: dict[str, str] = {}
        if summary is None or hops <= 0:
            return names
        for star in summary.get("star_imports", ()):
            found = self.module_file(importer, star)
            inner = self.summary(found[0]) if found is not None and not found[1] else None
            if found is None or inner is None:
                continue
            path = found[0]
            joiner = "" if star.endswith(".") else "."
            bound = {**self.star_names(path, hops - 1), **inner["imports"]}
            for name, reference in bound.items():
                library = not reference.startswith(".") and self.module_file(path, reference) is None
                names[name] = reference if library else f"{star}{joiner}{name}"
            for name in [*inner["classes"], *inner["functions"], *inner.get("devices", ())]:
                if "." not in name:
                    names[name] = f"{star}{joiner}{name}"
        return {name: reference for name, reference in names.items() if not name.startswith("_")}

    def _star_definition(self, path: Path, summary: dict[str, Any], rest: str, hops: int) -> Unit | None:
        """A name a package re-exports with `from .base_trainer import *`. The last star import
        that binds it wins, as in Python; one whose module does not define it binds nothing."""
        if hops <= 0 or rest.startswith("_"):  # `import *` skips private names
            return None
        for star in reversed(summary.get("star_imports", ())):
            joiner = "" if star.endswith(".") else "."
            found = self._definition(path, f"{star}{joiner}{rest}", hops)
            if found is not None:
                return found
        return None

    # Facts.
    def is_module_class(self, importer: Path, dotted: str) -> bool:
        """Whether a reference names a project class with a torch.nn module among its lineage's bases."""
        from .semantics import is_nn_module_class

        return any(is_nn_module_class(self.library_reference(path, base) or base)
                   for (path, _), bases in self.lineage(importer, dotted) for base in bases)

    def library_reference(self, importer: Path, dotted: str) -> str | None:
        """The library name a reference of the file's own names spells where a star import of a
        project module binds its head to a library (`class Net(nn.Module)` in a file whose only
        `nn` comes from `from utils import *`, utils importing `torch.nn as nn`): "torch.nn.Module"."""
        if not dotted.startswith(THIS_MODULE):
            return None
        head, _, rest = dotted[len(THIS_MODULE):].partition(".")
        summary = self.summary(importer)
        if summary is None or not summary.get("star_imports") or head in summary["classes"] or head in summary["functions"]:
            return None
        bound = self.star_names(importer).get(head)
        if bound is None or bound.startswith(".") or self.module_file(importer, bound) is not None:
            return None
        return f"{bound}.{rest}" if rest else bound

    def derives_from(self, importer: Path, dotted: str, ancestor: Unit) -> bool:
        """Whether a reference names the project class ``ancestor`` or one with it in its lineage."""
        return any(unit == ancestor for unit, _ in self.lineage(importer, dotted))

    def subclass_methods(self, importer: Path, dotted: str, name: str) -> tuple[Unit, ...] | None:
        """Each method `name` of a project class deriving from the class a reference names (itself
        included), as (file, "C.m"), less the templates (`_is_template`): what `obj.name(...)` may
        run where `obj` is declared an instance of that class and may be one of any subclass
        (class hierarchy analysis). None past MAX_METHOD_OWNERS: too many to tell."""
        ancestor = self.definition(importer, dotted)
        if ancestor is None:
            return None
        found: list[Unit] = []
        for path in self.callers().files_defining(name):
            summary = self.summary(path) if path.suffix == ".py" else None
            if summary is None:
                continue
            templates = summary.get("templates", ())
            for unit in summary["functions"]:
                owner, _, method = unit.partition(".")
                if method == name and unit not in templates and self.derives_from(path, THIS_MODULE + owner, ancestor):
                    found.append((path, unit))
        return tuple(found) if len(found) <= MAX_METHOD_OWNERS else None

    def classes_are_modules(self, importer: Path, dotted: str) -> bool:
        """Whether a reference names a project module whose public classes all derive from a torch.nn
        module (at least one): `getattr(models, args.model)(...)` is one of them, a module."""
        found = self.module_file(importer, dotted)
        if found is None or found[1]:
            return False
        summary = self.summary(found[0])
        classes = [name for name in summary["classes"] if not name.startswith("_")] if summary is not None else []
        return bool(classes) and all(self.is_module_class(found[0], THIS_MODULE + name) for name in classes)

    def is_device_constant(self, importer: Path, dotted: str) -> bool:
        """Whether a reference names a module-level device constant of the project that may be a
        GPU (`from config import DEVICE`, `config.DEVICE`), following re-exports."""
        unit = self.definition(importer, dotted)
        summary = self.summary(unit[0]) if unit is not None else None
        return summary is not None and unit is not None and unit[1] in summary.get("devices", ())

    def turns_grad_off(self, importer: Path, dotted: str) -> bool:
        unit = self.definition(importer, dotted)
        if unit is None:
            return False
        summary = self.summary(unit[0])
        return summary is not None and unit[1] in summary["grad_off"]

    def grad_off_here(self, importer: Path, contexts: list[str]) -> bool:
        """Whether one of the contexts around a call (with-items, decorators) turns grad off, or
        (for an assignment) the value is the result of a project function returning no grad."""
        return any(self._returns_grad_free(importer, context[len(RESULT_OF):]) if context.startswith(RESULT_OF)
                   else context in TORCH_NO_GRAD or self.turns_grad_off(importer, context) for context in contexts)

    def _returns_grad_free(self, importer: Path, dotted: str) -> bool:
        if dotted in GRAD_FREE_RESULTS:
            return True
        unit = self.definition(importer, dotted)
        summary = self.summary(unit[0]) if unit is not None else None
        return summary is not None and unit is not None and unit[1] in summary.get("grad_free_returns", ())

    def judged_by_project(self, unit: Unit) -> bool:
        """Whether the project calls ``unit`` and never lets it out: its calls say all it gets."""
        return self.callers().judged(unit)

    def callers_without_grad(self, unit: Unit) -> tuple[bool, frozenset[str]]:
        """What the project's calls of ``unit`` tell: whether every one runs with grad off, and
        the parameters that every one fills with a value computed with grad off (all of them
        when the first holds). Nothing calls it: (False, no parameter)."""
        return self.callers().judgement(unit)

    def module_methods(self, name: str) -> tuple[Unit, ...] | None:
        """Each method `name` of a project class deriving from a torch.nn module, as (file, "C.m"):
        what `model.name(x)` may run where `model` is a module of a class the file cannot tell
        (class hierarchy analysis). None past MAX_METHOD_OWNERS: too common a name to tell."""
        if name in self._module_methods:
            return self._module_methods[name]
        found: list[Unit] = []
        for path in self.callers().files_defining(name):
            summary = self.summary(path) if path.suffix == ".py" else None
            for unit in summary["functions"] if summary is not None else ():
                owner, _, method = unit.partition(".")
                if method == name and self.is_module_class(path, THIS_MODULE + owner):
                    found.append((path, unit))
        result = tuple(found) if len(found) <= MAX_METHOD_OWNERS else None
        self._module_methods[name] = result
        return result

    def callers(self) -> CallerIndex:
        """The reverse index of the project's calls (analysis/callers.py), read as units are asked."""
        with self._lock:
            if self._callers is None:
                self._callers = CallerIndex(self)
        return self._callers

    def grad_free(self, path: Path, unit: Unit, arguments: list[list[Any]] | None) -> frozenset[str]:
        """The callee's parameters this call fills with values computed with grad off, or leaves
        to their defaults: `save_image(name, output[0])` with `output` assigned under no_grad."""
        params = self.parameters(unit)
        if "." in unit[1]:
            params = params[1:]  # `self`
        if arguments is None:
            return frozenset()
        free = set(params)
        for key, assignments in arguments:
            name = params[key] if isinstance(key, int) and key < len(params) else key
            evident = bool(assignments) and all(self.grad_off_here(path, contexts) for contexts in assignments)
            if not evident:
                free.discard(name)
        return frozenset(free)

    def parameters(self, unit: Unit) -> list[str]:
        summary = self.summary(unit[0])
        return list(summary["params"].get(unit[1], [])) if summary is not None else []

    def unique_method(self, name: str) -> Unit | None:
        """The project method `name` where exactly one project class defines a method of that
        name and no file defines a function of it, and the name is not a common one
        (`_COMMON_METHODS`): what `logger.log_validation(...)` runs where the file cannot tell
        the class of `logger` (a parameter, a factory's result). None otherwise."""
        if name in self._unique_methods:
            return self._unique_methods[name]
        found: list[Unit] = []
        files = self.callers().files_defining(name) if name not in _COMMON_METHODS and not name.startswith("__") else []
        if len(files) == 1 and files[0].suffix == ".py":  # two files defining it: no answer, no summary read
            summary = self.summary(files[0])
            found = [] if summary is None else [
                (files[0], unit) for unit in summary["functions"] if unit.rpartition(".")[2] == name]
        result = found[0] if len(found) == 1 and "." in found[0][1] else None
        self._unique_methods[name] = result
        return result

    def callees(self, path: Path, reference: str, kind: str) -> Iterator[Unit]:
        """The units a call in ``path`` runs (`Net(...)`: `__init__`; `net(x)`: `forward`;
        `obj.m()` of an object of unknown class: the project's one method `m`, if it has one)."""
        if kind == "anymethod":
            unique = self.unique_method(reference[len(ANY_RECEIVER):])
            if unique is not None:
                yield unique
            return
        unit = self.definition(path, reference)
        if unit is None:
            return
        target, name = unit
        summary = self.summary(target)
        if summary is None:
            return
        if name in summary["classes"]:  # `Net(...)` runs `__init__`; `net(x)` runs `forward`
            method = "forward" if kind == "instance" else "__init__"
            for candidate in (f"{name}.{method}", f"{name}.__call__") if kind == "instance" else (f"{name}.{method}",):
                if candidate in summary["functions"]:
                    yield target, candidate
            return
        if name in summary["functions"]:
            yield target, name
        elif "." in name:  # `engine.evaluate()` of a subclass that inherits the method
            inherited = self.inherited(unit)
            if inherited is not None:
                yield inherited


# ------------------------------------------------------------------------ one file's view
@dataclass
class ProjectView:
    """What the interpreter of one file asks its project (see interpreter.py's docstring)."""

    project: Project
    path: Path
    values: bool = True  # whether other files' exports are read (not while computing an export)
    returns: bool = True  # whether other files' functions' return values are (an export's first level)
    # While not None, each question and its answer (analysis/witness.py): what a cached result needs.
    witness: dict[Any, list[Any]] | None = None

    @recorded
    def is_module_class(self, qualified: str) -> bool:
        return not qualified.startswith("torch.") and self.project.is_module_class(self.path, qualified)

    @recorded
    def classes_are_modules(self, qualified: str) -> bool:
        return not qualified.startswith("torch.") and self.project.classes_are_modules(self.path, qualified)

    @recorded
    def star_names(self) -> dict[str, str]:
        """What this file's `from X import *` of project modules bind (Project.star_names)."""
        return self.project.star_names(self.path)

    @recorded
    def is_device_constant(self, qualified: str) -> bool:
        return not qualified.startswith("torch.") and self.project.is_device_constant(self.path, qualified)

    @recorded
    def turns_grad_off(self, qualified: str) -> bool:
        """Whether the project function an import names (a with-item's or a decorator's) turns grad off."""
        return not qualified.startswith("torch") and self.project.turns_grad_off(self.path, qualified)

    @recorded
    def local_no_grad_names(self) -> frozenset[str]:
        """This file's own top-level functions that turn grad off."""
        summary = self.project.summary(self.path)
        return frozenset() if summary is None else frozenset(name for name in summary["grad_off"] if "." not in name)

    @recorded
    def record_fields(self, qualified: str) -> list[str] | None:
        """The fields of a record class another project file makes with a call (`DaRnnNet =
        collections.namedtuple("DaRnnNet", ["encoder", "decoder", ...])`), in order; None otherwise."""
        unit = None if qualified.startswith("torch.") else self.project.definition(self.path, qualified)
        summary = self.project.summary(unit[0]) if unit is not None and "." not in unit[1] else None
        fields = summary.get("namedtuples", {}).get(unit[1]) if summary is not None and unit is not None else None
        return None if fields is None else list(fields)

    def is_template(self, unit: str) -> bool:
        """Whether this file's method ("C.m") is a template (`_is_template`: abstract, or a body of
        `pass`/`...`/`raise NotImplementedError`): a subclass's override is what runs. The file's
        own summary says, so nothing of the project is asked."""
        summary = self.project.summary(self.path)
        return summary is not None and unit in summary.get("templates", ())

    @recorded
    def moves_default_device(self) -> bool:
        """Whether some project file calls `torch.set_default_device` or `set_default_tensor_type`
        (analysis/placement.py): then a factory's tensor may not be on the CPU. Only the files
        whose text spells one are summarised."""
        for path in self.project.callers().files_spelling(DEFAULT_DEVICE_SETTERS):
            summary = self.project.summary(path)
            if summary is None or summary.get("default_device", True):
                return True  # a file that does not parse: it may
        return False

    @recorded
    def callers_without_grad(self, name: str) -> tuple[bool, frozenset[str]]:
        """Of this file's function (or "C.m"): whether every project call runs with grad off, and
        which parameters every call fills with values computed with grad off."""
        return self.project.callers_without_grad((self.path, name))

    @recorded
    def outgoing_key(self, qualified: str) -> str | None:
        """The key under which a call of another project file's function is exported."""
        if qualified.startswith("torch."):
            return None
        unit = self.project.unit_of(self.path, qualified)
        return None if unit is None or unit[0] == self.path else unit_key(unit)

    @recorded
    def unique_method_key(self, name: str) -> str | None:
        """The outgoing key of the project's one method `name` in another file (Project.unique_method)."""
        unit = self.project.unique_method(name)
        return None if unit is None or unit[0] == self.path else unit_key(unit)

    @recorded
    def incoming(self, name: str, parameters: list[str]) -> dict[str, Value] | None:
        """What other project files pass to this file's function or method ("f", "C.m"), per
        parameter name (`parameters`: the positional ones, without `self`); None when no file of
        the project calls it or it escapes (a callback): its callers are not all known."""
        if not self.values or not self.project.judged_by_project((self.path, name)):
            return None
        found: dict[str, Value] = {}
        for key, encoded in self.project.incoming((self.path, name)).items():
            if key.isdigit():
                if int(key) >= len(parameters):
                    continue  # into `*args`
                parameter = parameters[int(key)]
            else:
                parameter = key
            value = decode(encoded, f"a value another project file passes to {name.rsplit('.', 1)[-1]}()")
            if value is not None:
                found[parameter] = value
        return found

    @recorded
    def local_calls(self, unit: str) -> frozenset[str] | None:
        """The names defined at this file's top level that its unit ("f" or "C.m") calls; None
        when the summary does not know the unit."""
        summary = self.project.summary(self.path)
        if summary is None or not isinstance(summary.get("calls"), (list, tuple)):
            return None
        calls = self.project.local_calls(self.path, summary)
        return calls.get(unit, frozenset()) if unit in calls["?units"] else None

    @recorded
    def names_class(self, qualified: str) -> bool:
        """Whether a reference names a class of another project file, also while this file's
        exports are computed (its instances' method calls are noted for that file)."""
        return not qualified.startswith("torch.") and self.project.class_bases(self.path, qualified) is not None

    @recorded
    def is_class(self, qualified: str) -> bool:
        """Whether a reference names a class of another project file."""
        return self.values and not qualified.startswith("torch.") and self.project.class_bases(self.path, qualified) is not None

    @recorded
    def returns_of(self, qualified: str) -> Value | None:
        """What a function of another project file returns to a caller it does not know."""
        if not (self.values or self.returns) or qualified.startswith("torch."):
            return None
        found = self.project.exported(self.path, qualified, "returns")
        return None if found is None else decode(found[1], f"value returned by {qualified.rsplit('.', 1)[-1]}()")

    @recorded
    def method_freezes(self, qualified: str | None, name: str) -> bool:
        """Whether `model.name()` freezes `model` (sets requires_grad=False on all its parameters,
        `_Summariser._freezes_self`): the method of the project class `qualified`, or, for a module of a class
        the file cannot tell (None), every project module class's method of that name."""
        if qualified is None:
            owners = self.project.module_methods(name)
        else:
            cls = self.project.definition(self.path, qualified)
            owners = None if cls is None else ((cls[0], f"{cls[1]}.{name}"),)
        if not owners:
            return False
        for path, unit in owners:
            summary = self.project.summary(path)
            if summary is None or unit not in summary.get("freezing", ()):
                return False
        return True

    def _joined_returns(self, owners: Iterable[Unit], name: str) -> Value | None:
        """What the methods `owners` return, joined (class hierarchy analysis); None where one's
        return is unknown."""
        joined: Value | None = None
        for path, unit in owners:
            exports = self.project.exports(path, (definition_of(unit),))
            encoded = exports.get("returns", {}).get(unit) if exports is not None else None
            value = decode(encoded, f"value returned by {name}()") if encoded is not None else None
            if value is None:
                return None
            joined = value if joined is None else joined.merge(value)
        return joined

    @recorded
    def module_method_returns(self, name: str) -> Value | None:
        """What `model.name(...)` returns where `model` is a module of a class this file cannot tell:
        the join of what each project module class's method `name` returns (Project.module_methods);
        None where no class defines it, or one's return is unknown."""
        owners = self.project.module_methods(name) if self.values else None
        if not owners:
            return None
        return self._joined_returns(owners, name)

    @recorded
    def subclass_returns(self, qualified_class: str, name: str) -> Value | None:
        """What `obj.name(...)` returns where `obj` is declared an instance of the project class
        `qualified_class` (`dataset: BaseDataset`), so that a subclass may be passed: the join of
        that class's (or its bases') method and every project subclass's override, templates
        apart (Project.subclass_methods); None where one is unknown or none is found."""
        if not self.values:
            return None
        overrides = self.project.subclass_methods(self.path, qualified_class, name)
        if overrides is None:
            return None

        def defined(unit: Unit) -> tuple[Unit, bool] | None:
            summary = self.project.summary(unit[0])
            method = f"{unit[1]}.{name}"
            if summary is None or method not in summary["functions"]:
                return None
            return (unit[0], method), method in summary.get("templates", ())

        inherited = self._first_in_classes(self.path, qualified_class, defined)
        owners = list(overrides)
        if inherited is not None and not inherited[1] and inherited[0] not in owners:
            owners.append(inherited[0])  # the class's own or a base's, where no template
        return self._joined_returns(owners, name)

    @recorded
    def member(self, qualified_class: str, name: str, table: str) -> Value | None:
        """A method's return value ("returns") or a field ("fields") of a class of another project
        file, or of its project bases (in order, depth first as Python's simple cases); while an
        entry point's export is computed, return values only (`_compute_exports`)."""
        if not (self.values or self.returns and table == "returns"):
            return None

        def exported(unit: Unit) -> Value | None:
            exports = self.project.exports(unit[0], (definition_of(unit[1]),))
            encoded = exports.get(table, {}).get(f"{unit[1]}.{name}") if exports is not None else None
            if encoded is None:
                return None
            return decode(encoded, f"{name} of {unit[1]}" if table == "fields" else f"value returned by {name}()")

        return self._first_in_classes(self.path, qualified_class, exported)

    @recorded
    def is_property(self, qualified_class: str, name: str) -> bool:
        """Whether `name` of a class of another project file (or of its project bases) is a
        property: reading it runs the getter, so its value is what the getter returns."""
        if not (self.values or self.returns):
            return False

        def declared(unit: Unit) -> bool | None:
            summary = self.project.summary(unit[0])
            method = f"{unit[1]}.{name}"
            if summary is None or method not in summary["functions"]:
                return None  # not defined there: a base may
            return method in summary.get("properties", ())

        return bool(self._first_in_classes(self.path, qualified_class, declared))

    @recorded
    def answers_missing_attributes(self, qualified_class: str) -> bool:
        """Whether a class of another project file, or one of its project bases, defines
        `__getattr__`: an attribute its instances lack is what that method gives (a wrapper that
        hands reads to the model it holds), nothing the class's kind says."""
        if not (self.values or self.returns):
            return False
        unit = self.project.definition(self.path, qualified_class)
        return unit is not None and self.project.inherited((unit[0], f"{unit[1]}.__getattr__")) is not None

    @recorded
    def registers_buffer(self, qualified_class: str, name: str) -> bool:
        """Whether a class of another project file, or one of its project bases, registers a
        buffer `name` (`self.register_buffer(name, t)`; the export's "buffers")."""
        if not self.values:
            return False

        def registered(unit: Unit) -> bool | None:
            exports = self.project.exports(unit[0], (definition_of(unit[1]),))
            return True if exports is not None and name in exports.get("buffers", {}).get(unit[1], ()) else None

        return self._first_in_classes(self.path, qualified_class, registered) is not None

    @recorded
    def parameter_free(self, qualified_class: str) -> bool:
        """Whether a module class of another project file holds no parameters but what its
        constructor is given (the export's "parameter_free": CallEvaluator.parameter_free_for_its_arguments)."""
        unit = self.project.definition(self.path, qualified_class) if self.values else None
        if unit is None:
            return False

        def makes_parameters(unit: Unit) -> bool | None:  # the class or a project base, by its summary
            summary = self.project.summary(unit[0])
            return True if summary is None or unit[1] in summary.get("parameter_makers", ()) else None

        if self._first_in_classes(self.path, qualified_class, makes_parameters):
            return False
        exports = self.project.exports(unit[0], (definition_of(unit[1]),))
        return exports is not None and unit[1] in exports.get("parameter_free", ())

    @recorded
    def parameter_fields(self, qualified_class: str, method: str) -> tuple[list[str], dict[str, str]] | None:
        """The method `method` of a class of another project file (or of its project bases, as
        `_member` looks): its parameters after `self` and the fields it stores them in
        (`_parameter_fields`); None where no project class on the way defines it."""
        if not self.values:
            return None

        def stored(unit: Unit) -> tuple[list[str], dict[str, str]] | None:
            summary = self.project.summary(unit[0])
            name = f"{unit[1]}.{method}"
            if summary is None or name not in summary.get("functions", {}):
                return None
            parameters = summary.get("params", {}).get(name, [])
            return parameters[1:], dict(summary.get("param_fields", {}).get(name, {}))

        return self._first_in_classes(self.path, qualified_class, stored)

    @recorded
    def constructed_field(self, qualified_class: str, name: str) -> Value | None:
        """For an instance another project file made (an export's instance, exports.decode): what
        the project's calls of the class pass to the `__init__` parameter it stores in the field
        `name`, joined; None where `__init__` stores none there, or has a caller outside the
        project (then the field's export, "from an unknown caller", stands)."""
        stored = self.parameter_fields(qualified_class, "__init__")
        unit = self.project.definition(self.path, qualified_class)
        if stored is None or unit is None or name not in stored[1]:
            return None
        parameters, fields = stored
        init = (unit[0], f"{unit[1]}.__init__")
        if not self.project.judged_by_project(init) or self.project.callers().calls(unit).escaped:
            return None  # a caller outside, or the class itself let out (`FACTORIES = {"s": Solver}`)
        joined = EMPTY
        for key, encoded in self.project.incoming(init).items():
            parameter = parameters[int(key)] if key.isdigit() and int(key) < len(parameters) else key
            if parameter == fields[name]:
                value = decode(encoded, f"{name} of {unit[1]}")
                joined = joined.merge(value) if value is not None else joined
        return joined

    def _first_in_classes(self, importer: Path, qualified: str, answer: Callable[[Unit], _T | None]) -> _T | None:
        """The first answer of the project class a reference names, or of its lineage's classes in
        order (Project.lineage; `answer` gets the class's unit)."""
        for unit, _ in self.project.lineage(importer, qualified):
            got = answer(unit)
            if got is not None:
                return got
        return None


_summary_directory: Path | None = None  # set by a front that has a results cache (None: memory only)


def use_summary_directory(directory: Path | None) -> None:
    """Store summaries under ``directory`` (the results cache's own folder) from now on in this
    process and the workers it forks; None keeps them in memory (``--no-cache``)."""
    global _summary_directory
    _summary_directory = directory


def summary_directory() -> Path | None:
    return _summary_directory


_FINGERPRINTS: dict[Path, str] = {}


def project_fingerprint(path: Path) -> str:
    """A digest of the project around ``path`` (each file's name, size and modification time),
    computed once per root and process: part of a cached result's key, since a file's diagnostics
    now depend on the other files of its project (an edit to models.py changes train.py's)."""
    root = find_root(path.resolve())
    found = _FINGERPRINTS.get(root)
    if found is None:
        digest = blake2b(digest_size=16)
        for file in project_files(root, notebooks=True):
            try:
                stat = file.stat()
            except OSError:
                continue
            digest.update(f"{file.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
        found = _FINGERPRINTS[root] = digest.hexdigest()
    return found


_PROJECTS: dict[tuple[Path, Path | None], Project] = {}
_PROJECTS_LOCK = threading.Lock()


def project_view(path: str | os.PathLike[str] | None, source: str | None = None,
                 cache_directory: Path | None = None, tree: ast.Module | None = None) -> ProjectView | None:
    """The view of ``path``'s project (one Project per root and cache, kept for the process), or None
    without a path. ``source`` is the text being analysed (an editor's buffer may differ from disk),
    ``tree`` its `ast` tree where the front has one (flake8's: its summary then needs no parse)."""
    if path is None:
        return None
    file = Path(path).resolve()
    root = find_root(file)
    with _PROJECTS_LOCK:
        project = _PROJECTS.get((root, cache_directory))
        if project is None:
            project = _PROJECTS[(root, cache_directory)] = Project(root, SummaryStore(cache_directory))
    if source is not None:
        project.summaries.pop(file, None)
        project.summary(file, source, tree)
    return ProjectView(project, file)


def witness_holds(path: str | os.PathLike[str], source: str, cache_directory: Path | None, witness: Any) -> bool:
    """Whether a stored witness of the analysis of ``path`` (with text ``source``) still holds in
    its project as it is now (analysis/witness.py): then the result stored with it is the result.
    Replaying it reads summaries and exports, never libcst unless an export must be recomputed."""
    try:
        view = project_view(path, source, cache_directory)
        return view is not None and holds(view, witness)
    except Exception:  # noqa: BLE001 - whatever goes wrong in a replay, the file is analysed again
        return False


def forget_projects() -> None:
    """Drop the in-process projects (the language server after an edit to another file, tests)."""
    with _PROJECTS_LOCK:
        _PROJECTS.clear()
        _FINGERPRINTS.clear()
