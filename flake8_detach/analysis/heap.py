"""Abstract objects named by the node that created them (the allocation-site abstraction).

A list display, a dict display, a `list()` call or a generator function is one abstract object
however often the walk meets it, so the heap stays finite. Each object holds what was put into
it, joined over every write from every function (flow-insensitive per object): one element set
for sequences and sets, one value per constant key (and one for keys the file does not spell)
for dicts. A :class:`Value` names the objects it may be (`objs`); reading an element reads the
heap as it is then, and :meth:`Heap.materialize` reads it once more at the end of the walk, so a
list filled in one method and read in another is seen full by the rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from . import values
from .values import EMPTY, Value

# How deep `materialize` follows containers of containers (a dict of lists of tensors is 2).
MATERIALIZE_DEPTH = 3


@dataclass
class HeapObject:
    """What was put into one abstract container, joined over every write."""

    elements: Value = EMPTY
    is_dict: bool = False
    keys: dict[str, Value] = field(default_factory=dict)  # a dict's constant keys
    unknown_keys: Value = EMPTY  # what was stored under keys the file does not spell
    readers: set[object] = field(default_factory=set)  # functions that read it (for re-analysis)
    # A `defaultdict`'s factory ("list", "set", "dict"): a key the file spells gets its own container.
    default: str | None = None


class Heap:
    def __init__(self) -> None:
        self.objects: dict[int, HeapObject] = {}
        # Functions that read an object that a later write changed: worth one more analysis.
        self.stale: set[object] = set()
        self.reader: object | None = None  # the function being analysed (set by the walk)
        # Classes whose constructor sets their annotated fields (dataclasses, NamedTuples): the fields.
        self.record_fields: dict[object, list[str]] = {}

    # ------------------------------------------------------------- allocation
    def allocate(self, site: cst.CSTNode, initial: Value, keys: dict[str, Value] | None = None) -> Value:
        """The value of a fresh container made at `site` (its display's elements in `elem`, a dict
        display's constant keys in `keys`)."""
        key = id(site)
        obj = self.objects.get(key)
        if obj is None:
            obj = self.objects[key] = HeapObject(is_dict=keys is not None)
        for name, value in (keys or {}).items():
            obj.keys[name] = obj.keys.get(name, EMPTY).merge(value)
        return Value(initial.flags, initial.items, initial.elem, initial.origin, initial.via, initial.callee,
                     initial.device_if, frozenset((key,)))

    # ----------------------------------------------------------------- writes
    def add_element(self, objs: Iterable[int], element: Value) -> None:
        """`xs.append(v)`, `xs[i] = v`, `s.add(v)`, `yield v`: the objects may now hold `element`."""
        for key in objs:
            obj = self.objects.get(key)
            if obj is None:
                continue
            merged = obj.elements.merge(element)
            if merged != obj.elements or merged.elem != obj.elements.elem:
                obj.elements = merged
                self._changed(obj)

    def store_item(self, objs: Iterable[int], key: str | None, element: Value) -> None:
        """`d["loss"] = v`: the constant key's value (and the join of all values) may be `element`."""
        for name in objs:
            obj = self.objects.get(name)
            if obj is not None and obj.is_dict:
                if key is None:
                    obj.unknown_keys = obj.unknown_keys.merge(element)
                else:
                    obj.keys[key] = obj.keys.get(key, EMPTY).merge(element)
        self.add_element(objs, element)

    def _changed(self, obj: HeapObject) -> None:
        self.stale |= obj.readers - {self.reader}

    # ------------------------------------------------------------------ reads
    def elements_of(self, objs: Iterable[int]) -> Value:
        """What the objects may hold (any element, any key)."""
        out = EMPTY
        for key in objs:
            obj = self.objects.get(key)
            if obj is not None:
                if self.reader is not None:
                    obj.readers.add(self.reader)
                out = out.merge(obj.elements)
        return out

    def item_of(self, objs: Iterable[int], key: str) -> Value | None:
        """`d["loss"]`: the value stored under a constant key, None where no object knows the key."""
        found: Value | None = None
        for name in objs:
            obj = self.objects.get(name)
            if obj is None:
                continue
            if self.reader is not None:
                obj.readers.add(self.reader)
            value = obj.keys.get(key)
            if value is None and obj.default is not None:
                value = obj.keys[key] = self._default_entry(obj)
            if value is None:
                return None  # a key that one of them may lack: no better than any element
            value = value.merge(obj.unknown_keys)
            found = value if found is None else found.merge(value)
        return found

    def _default_entry(self, obj: HeapObject) -> Value:
        """`history["acc"]` of a `defaultdict(list)`: the list its factory makes for that key, one
        object per key (`history["loss"]` is another list), also among the dict's values."""
        site = -(len(self.objects) + 1)  # no node's id is negative
        self.objects[site] = HeapObject(is_dict=obj.default == "dict")
        entry = Value(values.Flag.CONTAINER, objs=frozenset((site,)))
        obj.elements = obj.elements.merge(entry)
        return entry

    def dict_items(self, objs: Iterable[int]) -> dict[str, Value] | None:
        """The constant keys that every one of the objects has, with what each holds (as
        :meth:`item_of` reads them); None unless all are dicts (a dict display's objects)."""
        objects = [self.objects.get(name) for name in objs]
        dicts = [obj for obj in objects if obj is not None and obj.is_dict]
        if not dicts or len(dicts) < len(objects):
            return None
        common = set.intersection(*(set(obj.keys) for obj in dicts))
        found = {key: self.item_of(objs, key) for key in sorted(common)}
        return {key: value for key, value in found.items() if value is not None}

    # ---------------------------------------------------------------- the end
    def materialize(self, value: Value, depth: int = MATERIALIZE_DEPTH) -> Value:
        """The value with its objects' contents written into `elem` (and no objects), for the rules,
        which read the facts after the walk."""
        if depth <= 0 or not (value.objs or value.items or value.elem is not None):
            return value
        items = tuple(self.materialize(item, depth - 1) for item in value.items) if value.items else value.items
        elem = value.element() if value.objs or value.elem is not None else None
        if elem is not None:
            elem = self.materialize(elem, depth - 1)
        return Value(value.flags, items, elem, value.origin, value.via, value.callee, value.device_if)

    def materialize_all(self, table: dict[cst.CSTNode, Value]) -> None:
        for node, value in table.items():
            if value.objs or value.elem is not None and value.elem.objs:
                table[node] = self.materialize(value)

    # ------------------------------------------------------------- generators
    def is_generator(self, node: cst.FunctionDef) -> bool:
        """Whether the walk met a `yield` of this function's own body (noted as it evaluated it:
        a syntactic search with a libcst visitor cost a quarter of the whole analysis)."""
        return id(node) in self.objects

    def generator_call(self, function: cst.FunctionDef) -> Value:
        """The value of calling a generator function: an iterable of what it yields."""
        return self.allocate(function, Value(values.Flag.CONTAINER))

    def note_yield(self, function: cst.FunctionDef, yielded: Value) -> None:
        self.allocate(function, EMPTY)
        self.add_element((id(function),), yielded)

    # ---------------------------------------------------------- installation
    def install(self) -> object:
        """Make `Value.element()` read this heap; returns what to give back to `uninstall`."""
        previous = getattr(values.WALK, "heap_reader", None)
        values.WALK.heap_reader = self.elements_of
        return previous

    @staticmethod
    def uninstall(previous: object) -> None:
        values.WALK.heap_reader = previous
