"""Function summaries per calling context, and the worklist that runs them to a fixed point.

A function of the file is analysed once per *calling context*: the grad mode at the call and
what kind of value each argument is (its flags, and a container's element's). `spectrum(ones)`
and `spectrum(param)` then get their own summaries, so the second call's grad result is not
the first call's. Past `MAX_CONTEXTS` per function the extra calls share one joined context,
so a function called from a hundred places costs at most `MAX_CONTEXTS + 1` analyses.

A summary records who read what it returns, and a class who read each of its fields (another
summary, or `None` for the module's own statements). When a return value or a field grows after
it was read, every reader is analysed again; when
the module's statements read it, the whole module is walked again (records, heap and facts are
kept and joined, so a later round only adds). The work ends because every value only grows in a
finite lattice, and `MAX_RUNS` per summary and `MAX_MODULE_ROUNDS` bound the rest (a widening:
past the bound the summary keeps what it has).

The base record of a function (the one its name is bound to) is its context for callers the
file does not show: analysed with parameters of unknown origin when nothing in the file calls
it, when it escapes (a callback, `map(f, xs)`), or always for methods, which any code may call.
Uncalled functions are analysed callers first (a function that another uncalled function names
in a call waits for that one), so which definition comes first does not change the result.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Optional

import libcst as cst

from .scopes import ClassInfo, FunctionInfo
from .syntax import descendants
from .values import GRAD_FLAGS, Flag, Value

MAX_CONTEXTS = 4  # summaries per function; further calls share one joined context
MAX_RUNS = 6  # analyses of one summary (its inputs or what it read changed)
MAX_MODULE_ROUNDS = 3  # walks of the module's statements (a return value they read grew)
OVERFLOW = "joined"  # the context key shared by calls past MAX_CONTEXTS

# What tells contexts apart: what a rule or a result depends on. The rest (dtypes, origins,
# which container) is joined within a context.
# A device spec is part of it: `doubled(x)` leaving `device="cpu"` and `doubled(x, DEVICE)` differ.
KEY_FLAGS = (GRAD_FLAGS | Flag.DEVICE | Flag.TENSOR | Flag.NDARRAY | Flag.MODULE | Flag.CONTAINER
             | Flag.NOT_TENSOR | Flag.DEVICE_SPEC | Flag.CPU_SPEC | Flag.ON_CPU)
ELEMENT_KEY_FLAGS = GRAD_FLAGS | Flag.DEVICE | Flag.TENSOR

Reader = Optional[FunctionInfo]  # None: the module's own statements


def _kind(value: Value) -> int:
    element = value.elem.flags & ELEMENT_KEY_FLAGS if value.elem is not None else 0
    return (value.flags & KEY_FLAGS) | element << 40


def context_key(bound: list[tuple[str, Value]], grad_enabled: bool) -> tuple[object, ...]:
    """The calling context of a call: grad mode, and the kind of value bound to each parameter."""
    return (grad_enabled, *sorted((name, _kind(value)) for name, value in bound))


def grew(old: Value, new: Value) -> bool:
    """Whether `new` says more than `old` (flags, tuple items, elements, heap objects)."""
    if new.flags != old.flags or new.objs != old.objs or new.items != old.items:
        return True
    if new.elem is None:
        return False
    return old.elem is None or grew(old.elem, new.elem)


class Summaries:
    """The summaries of the file's functions, and the queue of those to analyse (again)."""

    def __init__(self, analyse: Callable[[FunctionInfo], None], every_base: bool = False,
                 known_calls: Callable[[FunctionInfo], frozenset[str] | None] | None = None,
                 skipped: frozenset[int] = frozenset()) -> None:
        self._analyse = analyse
        # The local names a function calls, where something cheaper than a walk knows them
        # (the project index's `ast` summary of this file); None: walk its body.
        self._known_calls = known_calls
        self.every_base = every_base  # analyse each base record even where the file's calls say all
        # The definitions (ids of their nodes) whose base records an export does not need
        # (analysis/demand.py): only calls analyse them, in the calls' contexts.
        self.skipped = skipped
        self.pending: deque[FunctionInfo] = deque()
        self.functions: list[FunctionInfo] = []  # base records, in definition order
        self.module_dirty = False  # a return value the module's statements read has grown
        self._calls_by_name: dict[int, frozenset[str]] = {}

    # --------------------------------------------------------------- contexts
    def context_for(self, info: FunctionInfo, bound: list[tuple[str, Value]], grad_enabled: bool) -> FunctionInfo:
        """The summary of `info` for a call binding `bound` with grad mode `grad_enabled`."""
        key: object = context_key(bound, grad_enabled)
        if key not in info.contexts and len(info.contexts) >= MAX_CONTEXTS:
            key = OVERFLOW
        summary = info.contexts.get(key)
        if summary is None:
            summary = info.contexts[key] = FunctionInfo(
                info.node, info.env, info.cls, info.grad_enabled and (grad_enabled or key == OVERFLOW),
                top=info.top, base=info)
        return summary

    def all_records(self) -> Iterator[FunctionInfo]:
        for info in self.functions:
            yield info
            yield from info.contexts.values()

    # ---------------------------------------------------------- dependencies
    def read(self, summary: FunctionInfo, reader: Reader) -> Value:
        """What `summary` returns, remembering that `reader` used it."""
        summary.readers.add(reader)
        return summary.returns

    def read_field(self, cls: ClassInfo, attr: str, reader: Reader) -> Value | None:
        """`self.x` / `client.x`: what the class's field holds so far (a base of this file's
        class may have assigned it: `super().__init__(t)`), remembering who read it."""
        cls.readers.setdefault(attr, set()).add(reader)
        owner = cls.owner_of(attr)
        if owner is not cls:
            owner.readers.setdefault(attr, set()).add(reader)
        return owner.attrs.get(attr)

    def write_field(self, cls: ClassInfo, attr: str, value: Value) -> None:
        """`self.x = v`: the field may hold `value` too; whoever read less is analysed again. A
        field is not known to stay on the CPU: `model.cuda()` moves a module's parameters and
        buffers in place, wherever it is called (analysis/placement.py)."""
        if value.flags & Flag.ON_CPU:
            value = value.with_flags(remove=Flag.ON_CPU)
        old = cls.attrs.get(attr)
        joined = value if old is None else old.merge(value)
        if old is not None and not grew(old, joined):
            return
        cls.attrs[attr] = joined
        self._notify(cls.readers.get(attr, ()))

    def returned(self, summary: FunctionInfo, value: Value) -> None:
        """A return statement of `summary` may give `value`: its readers see the change."""
        joined = summary.returns.merge(value)
        if not grew(summary.returns, joined):
            summary.returns = joined
            return
        summary.returns = joined
        self._notify(summary.readers)

    def _notify(self, readers: Iterable[Reader]) -> None:
        for reader in readers:
            if reader is None:
                self.module_dirty = True
            else:
                self.analyse_again(reader)

    def analyse_again(self, info: FunctionInfo) -> None:
        """Queue a summary analysed already for one more run, within its bound."""
        if info.runs >= MAX_RUNS:
            return
        if info.state == "running":
            info.rerun = True  # queued when this run ends: what it read has changed meanwhile
        elif info.state != "stale":
            info.state = "stale"
            self.pending.append(info)

    def finished(self, info: FunctionInfo) -> None:
        """`info`'s analysis ended: queue it again if something it read changed while it ran."""
        info.state = "done"
        if info.rerun:
            info.rerun = False
            self.analyse_again(info)

    # --------------------------------------------------------------- the queue
    def drain(self) -> None:
        """Analyse what is queued until nothing is; functions nothing has called wait until the
        queue is otherwise empty, then go callers first."""
        waiting: list[FunctionInfo] = []
        while self.pending or waiting:
            if not self.pending:
                self.pending.append(self._next_uncalled(waiting))
            info = self.pending.popleft()
            if info.is_base and id(info.node) in self.skipped:
                continue
            if info.is_base and info.state == "new" and info.cls is None and not info.calls and not info.waited:
                info.waited = True
                waiting.append(info)  # a function analysed later may call it: wait for that call
                continue
            if info.is_base and info.cls is None and info.calls and not info.escaped and not self.every_base:
                continue  # every call is in the file: its contexts say all
            if info.state in ("new", "stale") or (
                    info.state == "done" and info.arg_values != info.analysed_with and info.runs < MAX_RUNS):
                self._analyse(info)

    def _next_uncalled(self, waiting: list[FunctionInfo]) -> FunctionInfo:
        """The waiting function that no other waiting function calls by name (the last defined
        of those; the last defined of all where each is called by another, as in a cycle)."""
        open_ = [info for info in waiting if info.state == "new" and not info.calls]
        called = frozenset().union(*(self._called_names(info) for info in open_))
        for info in reversed(open_):
            if info.node.name.value not in called:
                waiting.remove(info)
                return info
        return waiting.pop()

    def _called_names(self, info: FunctionInfo) -> frozenset[str]:
        """The names the body calls (`f(...)`, `obj.f(...)`), minus the function's own."""
        names = self._calls_by_name.get(id(info.node))
        if names is None and self._known_calls is not None:
            names = self._known_calls(info)
            if names is not None:
                self._calls_by_name[id(info.node)] = names
        if names is None:
            found: set[str] = set()
            for node in descendants(info.node.body):
                if isinstance(node, cst.Call):
                    func = node.func
                    if isinstance(func, cst.Name):
                        found.add(func.value)
                    elif isinstance(func, cst.Attribute):
                        found.add(func.attr.value)
            found.discard(info.node.name.value)
            names = self._calls_by_name[id(info.node)] = frozenset(found)
        return names
