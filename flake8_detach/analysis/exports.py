"""What a project file gives the files that import it: the values its functions and its classes'
methods return, and what its classes' fields hold, as the interpreter finds them for callers it
does not know (each function's own context, analysis/summaries.py).

`from replay import Buffer; Buffer().sample().numpy()` is a GPU tensor when `Buffer.sample`
returns `... .to(self.device)` and `self.device` may be a GPU: the project index's `ast`
summaries cannot say that, the interpreter run over `replay.py` can. The run happens once per
file content and project state, on demand (the first time an importer asks), and is stored
beside the project summaries. It goes one level deep: while it runs, the exported file's own
imports of other project files give modules, devices and no-grad contexts (the `ast` summaries)
but no values, so no chain of files is analysed for one import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..screening import TORCH_IMPORT
from .values import DTYPES, TENSOR_FLOW, Flag, Value

EXPORT_FORMAT = "5"  # bump when the layout or meaning of an export changes
# What an export keeps of a value: what a rule or a later call can use in another file.
KEPT = (TENSOR_FLOW | Flag.DEVICE_SPEC | Flag.CPU_SPEC | Flag.MODULE | Flag.NDARRAY | Flag.CONTAINER
        | Flag.NOT_TENSOR | DTYPES | Flag.DETECTION)


@dataclass(frozen=True)
class ForeignClass:
    """A class of another project file (its dotted reference as this file imports it); for an
    instance this file made, `site` names the heap object that keeps what the file passes to its
    methods. Not the instance's own `objs`: indexing or iterating the instance must not give
    those values back (a checkpoint object made from a tensor is no container of it)."""

    qualified: str
    site: int | None = None


# How deep an export keeps a tuple's items (`return output, masks`: a tensor and a dict of them).
ITEM_DEPTH = 2
MAX_ITEMS = 8


def encode(value: Value, depth: int = ITEM_DEPTH) -> list[Any]:
    """[flags, an element's flags] and, for a tuple of known length, each item's encoding: what
    unpacking `output, masks = net.forward_masks(x)` in another file needs to keep them apart."""
    element = value.element() if value.has(Flag.CONTAINER) else None
    encoded: list[Any] = [value.flags & KEPT, element.flags & KEPT if element is not None else 0]
    if depth and value.items is not None and len(value.items) <= MAX_ITEMS:
        encoded.append([encode(item, depth - 1) for item in value.items])
    return encoded


def decode(encoded: Any, origin: str) -> Value | None:
    if not (isinstance(encoded, list) and len(encoded) in (2, 3)
            and all(isinstance(part, int) for part in encoded[:2])):
        return None
    flags, element = encoded[0], encoded[1]
    items = None
    if len(encoded) == 3:
        if not isinstance(encoded[2], list):
            return None
        decoded = [decode(item, origin) for item in encoded[2]]
        if any(item is None for item in decoded):
            return None
        items = tuple(item for item in decoded if item is not None)
    keep = origin if flags & TENSOR_FLOW else None
    return Value(flags & KEPT, items, elem=Value(element & KEPT, origin=origin) if element else None, origin=keep)


def compute_exports(source: str, view: Any) -> dict[str, Any]:
    """Run the interpreter over a project file (`view`: its project, values not followed) and
    collect what each top-level function and method returns, each class field holds, and what
    its calls pass to other project files' functions (for their analysis: `outgoing`)."""
    import libcst as cst

    from ..diagnostics import AnalysisError
    from .imports import ImportTable
    from .interpreter import Interpreter

    empty: dict[str, Any] = {"returns": {}, "fields": {}, "outgoing": {}}
    if not TORCH_IMPORT.search(source):  # what the import table would find, without libcst's parse
        return empty
    try:
        module = _module_of(source)
        imports = ImportTable.from_module(module)
        if not imports.imports_torch:
            return empty
        interpreter = Interpreter(module, imports, project=view, exporting=True)
        interpreter.run()
    except (cst.ParserSyntaxError, RecursionError, ValueError, AnalysisError):  # nested too deeply: no exports
        return empty
    previous = interpreter.heap.install()  # a container's elements live in the heap
    try:
        returns = {name: encode(info.returns) for info in interpreter.summaries.functions
                   if (name := interpreter.unit_name(info)) is not None and info.returns.flags}
        fields = {f"{cls.name}.{attr}": encode(value) for cls in interpreter.classes if cls.top_level
                  for attr, value in cls.attrs.items() if value.flags}
        outgoing = {key: {parameter: encode(value) for parameter, value in passed.items() if value.flags}
                    for key, passed in interpreter.outgoing.items()}
    finally:
        interpreter.heap.uninstall(previous)
    return {"returns": returns, "fields": fields, "outgoing": outgoing}


def _module_of(source: str) -> Any:
    """The file's libcst tree, built from its `ast` tree (ast_bridge.py: several times cheaper than
    libcst's parse) unless the bridge cannot build it; ParserSyntaxError where neither parses,
    AnalysisError where it is nested too deeply."""
    from ..parsing import bridged, parse_unvalidated

    built = bridged(source)
    return built.module if built is not None else parse_unvalidated(source)
