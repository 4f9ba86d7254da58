"""What a project file gives the files that import it: the values its functions and its classes'
methods return, and what its classes' fields hold, as the interpreter finds them for callers it
does not know (each function's own context, analysis/summaries.py).

`from replay import Buffer; Buffer().sample().numpy()` is a GPU tensor when `Buffer.sample`
returns `... .to(self.device)` and `self.device` may be a GPU: the project index's `ast`
summaries cannot say that, the interpreter run over `replay.py` can. The run happens once per
file content, project state and question, on demand (the first time an importer asks), and is
stored beside the project summaries. A question (what `Buffer.sample` returns, what the file
passes to one helper) analyses only the definitions that can change its answer
(analysis/demand.py); a later question those already cover reads the same run. It goes one
level deep: while it runs, the exported file's own imports of other project files give modules,
devices and no-grad contexts (the `ast` summaries) but no values, so no chain of files is
analysed for one import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .values import DTYPES, STOPPED_ON_A_GPU, TENSOR_FLOW, Flag, Value, join_flags

EXPORT_FORMAT = "19"  # bump when the layout or meaning of an export changes
# What an export keeps of a value: what a rule or a later call can use in another file.
# FROZEN, ZERO_DIM, ON_CPU and STOPPED_ON_A_GPU's bits are must-facts (every joined module frozen,
# every joined tensor 0-dim, on the CPU, or computed only where a GPU run stopped before):
# joins of encodings go through `join_encoded`.
# MODULE_HINT: what `torch.load(path)["model"]` gives is a model where the importing file calls it.
KEPT = (TENSOR_FLOW | Flag.DEVICE_SPEC | Flag.CPU_SPEC | Flag.MODULE | Flag.NDARRAY | Flag.CONTAINER
        | Flag.NOT_TENSOR | DTYPES | Flag.DETECTION | Flag.FROZEN | Flag.ZERO_DIM | Flag.MODULE_HINT | Flag.ON_CPU
        | STOPPED_ON_A_GPU | Flag.PASSED_DEVICE)


@dataclass(frozen=True)
class ForeignClass:
    """A class of another project file (its dotted reference as this file imports it); for an
    instance this file made, `site` names the heap object that keeps what the file passes to its
    methods. Not the instance's own `objs`: indexing or iterating the instance must not give
    those values back (a checkpoint object made from a tensor is no container of it)."""

    qualified: str
    site: int | None = None
    # Declared, not made: a parameter annotated with the class may hold an instance of any project
    # subclass, whose overrides of a method may run (ProjectView.subclass_returns).
    declared: bool = False
    # Made by another project file and handed over by its export (`solver = main(config)`): its
    # fields hold what the project's calls of the class pass (ProjectView.constructed_field).
    made_elsewhere: bool = False


# How deep an export keeps a tuple's items (`return output, masks`: a tensor and a dict of them).
ITEM_DEPTH = 2
MAX_ITEMS = 8


def encode(value: Value, depth: int = ITEM_DEPTH, instance_of: Callable[[Value], str | None] | None = None,
           ) -> list[Any]:
    """[flags, the element's] and, for a tuple of known length, each item's encoding: what
    unpacking `output, masks = net.forward_masks(x)` in another file needs to keep them apart.
    An element with a structure of its own (a loader's `(inputs, labels)` batches) is encoded
    whole while the depth lasts, its flags alone past it. Where ``instance_of`` names the project
    class a value is an instance of (`return Solver(loader, config)`), a fourth slot keeps that
    reference (project.anchored), so that an importer reads the instance's fields and methods."""
    # `model.parameters()` is iterated for its parameters: tensors that require grad.
    element = value.element() if value.has(Flag.CONTAINER | Flag.PARAMS) else None
    slot: int | list[Any] = 0
    if element is not None:
        structured = element.items is not None or element.elem is not None
        slot = encode(element, depth - 1, instance_of) if depth and structured else element.flags & KEPT
    encoded: list[Any] = [value.flags & KEPT, slot]
    if depth and value.items is not None and len(value.items) <= MAX_ITEMS:
        encoded.append([encode(item, depth - 1, instance_of) for item in value.items])
    instance = instance_of(value) if instance_of is not None and value.callee is not None else None
    if instance is not None:
        encoded += [None, instance] if len(encoded) == 2 else [instance]
    return encoded


def stored_by_this_caller(exported: Value | None, passed: Value) -> Value:
    """A field another file's constructor stores from a parameter, where this file's call passes
    `passed`: what its export says the field holds otherwise, less "from an unknown caller" (the
    caller is this call), joined with what the call passes."""
    return passed if exported is None else exported.with_flags(remove=Flag.UNKNOWN_ARG).merge(passed)


def join_encoded(old: list[Any] | None, new: list[Any]) -> list[Any]:
    """The flags and element flags of two encodings joined as Value.merge joins them: "may" facts
    by union, "frozen" only where every module joined is (a frozen model here, a trained one there).
    An element's structure is not kept through a join; the class of an instance is, where every
    encoding joined names the same one (every call passes a `DatasetIterater`)."""
    if old is None:
        return [new[0], _flags_of(new[1]), *([None, new[3]] if len(new) == 4 else [])]
    joined: list[Any] = [join_flags(old[0], new[0]), join_flags(_flags_of(old[1]), _flags_of(new[1]))]
    if len(old) == 4 and len(new) == 4 and old[3] == new[3]:
        joined += [None, new[3]]
    return joined


def _flags_of(slot: int | list[Any]) -> int:
    return slot if isinstance(slot, int) else slot[0]


def decode(encoded: Any, origin: str) -> Value | None:
    if not (isinstance(encoded, list) and len(encoded) in (2, 3, 4) and isinstance(encoded[0], int)
            and isinstance(encoded[1], (int, list))):
        return None
    instance: ForeignClass | None = None
    if len(encoded) == 4:
        if not isinstance(encoded[3], str):
            return None
        instance = ForeignClass(encoded[3], made_elsewhere=True)
        encoded = encoded[:2] if encoded[2] is None else encoded[:3]
    flags, slot = encoded[0], encoded[1]
    element: Value | None = None
    if isinstance(slot, list):
        element = decode(slot, origin)
        if element is None:
            return None
    elif slot:
        element = Value(slot & KEPT, origin=origin)
    items = None
    if len(encoded) == 3:
        if not isinstance(encoded[2], list):
            return None
        decoded = [decode(item, origin) for item in encoded[2]]
        if any(item is None for item in decoded):
            return None
        items = tuple(item for item in decoded if item is not None)
    keep = origin if flags & TENSOR_FLOW else None
    return Value(flags & KEPT, items, elem=element, origin=keep, callee=instance)


def compute_exports(source: str, view: Any, roots: frozenset[str] | None = None) -> dict[str, Any]:
    """Run the interpreter over a project file (`view`: its project, values not followed) and
    collect what each top-level function and method returns, each class field holds, and what
    its calls pass to other project files' functions (for their analysis: `outgoing`).

    With ``roots`` (top-level names), only the definitions that can change what those give are
    analysed for unknown callers (analysis/demand.py); "covered" lists them, and the export
    answers for them alone: their functions' returns, their classes' fields, and what the calls
    in them pass. Without, the whole file is (`covered` None)."""
    import libcst as cst

    from ..diagnostics import AnalysisError
    from .demand import definition_of
    from .imports import ImportTable
    from .interpreter import Interpreter

    # A file without torch is read too: a base class there sets fields a module subclass reads
    # (`self.chunk_length` of megatron's retro attention), a script there passes arrays to helpers.
    empty: dict[str, Any] = {"returns": {}, "fields": {}, "buffers": {}, "parameter_free": [], "outgoing": {},
                             "covered": None}
    try:
        module, wanted = _module_of(source, roots)
        imports = ImportTable.from_module(module)
        if imports.star:
            imports.add_star_names(view.star_names())
        interpreter = Interpreter(module, imports, project=view, exporting=True, wanted=wanted)
        interpreter.run()
    except (cst.ParserSyntaxError, RecursionError, ValueError, AnalysisError):  # nested too deeply: no exports
        return empty
    previous = interpreter.heap.install()  # a container's elements live in the heap
    instance_of = _instance_reference(view)
    try:
        # Every function's and method's return, those that give nothing the analysis knows too
        # (a method returning a plain value is not "unknown", Project.module_methods reads them).
        returns = {name: encode(info.returns, instance_of=instance_of) for info in interpreter.summaries.functions
                   if (name := interpreter.unit_name(info)) is not None
                   and (wanted is None or definition_of(name) in wanted)}
        # Every field the class's code sets, those of values it cannot tell too: `model.sde` of
        # such a field is unknown to the importer, not a parameter of a module it guesses.
        fields = {f"{cls.name}.{attr}": encode(value, instance_of=instance_of) for cls in interpreter.classes if cls.top_level
                  and (wanted is None or cls.name in wanted)  # a class only calls reached: partial
                  for attr, value in cls.attrs.items()}
        # Per module class, what an importer cannot see from its fields: the buffers it registers
        # (`pe.table` is no parameter) and whether it holds parameters at all.
        classes = [cls for cls in interpreter.classes if cls.top_level and cls.is_module
                   and (wanted is None or cls.name in wanted)]
        buffers = {cls.name: sorted({name for owner in cls.lineage() for name in owner.buffers})
                   for cls in classes if any(owner.buffers for owner in cls.lineage())}
        parameter_free = sorted(cls.name for cls in classes if interpreter.calls.parameter_free_for_its_arguments(cls))
        outgoing = {key: {parameter: encoded for parameter, value in passed.items()
                          if (encoded := encode(value, instance_of=instance_of)) != [0, 0]}
                    for key, passed in interpreter.outgoing.items()}
    finally:
        interpreter.heap.uninstall(previous)
        interpreter.release()
    return {"returns": returns, "fields": fields, "buffers": buffers, "parameter_free": parameter_free,
            "outgoing": outgoing,
            "covered": None if wanted is None or roots is None else sorted(wanted | roots)}


def _instance_reference(view: Any) -> Callable[[Value], str | None] | None:
    """What an export says of a value's class: the project class it is an instance of, as a
    reference any importer resolves (project.anchored), or None. None without a project view (a
    file's exports computed alone: no importer to read them)."""
    from .project import anchored
    from .scopes import ClassInfo

    if view is None:
        return None

    def instance_of(value: Value) -> str | None:
        callee = value.callee
        if isinstance(callee, ForeignClass) and not callee.declared:
            unit = view.project.definition(view.path, callee.qualified)
            return None if unit is None or "." in unit[1] else anchored(*unit)
        if isinstance(callee, ClassInfo) and callee.top_level and value.flags & (Flag.INSTANCE | Flag.MODULE):
            return anchored(view.path, callee.name)
        return None

    return instance_of


def _module_of(source: str, roots: frozenset[str] | None) -> tuple[Any, frozenset[str] | None]:
    """The file's libcst tree, built from its `ast` tree (ast_bridge.py: several times cheaper than
    libcst's parse) unless the bridge cannot build it, and the definitions ``roots`` want (None:
    all); ParserSyntaxError where neither parses, AnalysisError where it is nested too deeply."""
    from ..parsing import bridged, parse_unvalidated, quiet_ast_parse
    from .demand import wanted_definitions

    try:
        tree = quiet_ast_parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        tree = None
    wanted = None if roots is None or tree is None else wanted_definitions(tree, source, roots)
    built = bridged(source, tree) if tree is not None else None
    return (built.module if built is not None else parse_unvalidated(source)), wanted
