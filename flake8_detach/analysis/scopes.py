"""What the walk keeps while it runs: scopes of names, and records of the module's functions and classes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from .syntax import is_static
from .values import EMPTY, Value

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .facts import AliasWrite
    from .guards import Narrowing


@dataclass(eq=False)
class ClassInfo:
    name: str
    is_module: bool
    top_level: bool = False  # defined by a statement of the module itself
    foreign_bases: tuple[str, ...] = ()  # bases that are classes of other project files (qualified)
    local_bases: tuple[ClassInfo, ...] = ()  # bases that are classes of this file
    # An nn.Module subclass whose bases are nn.Module or classes of this file, and its statement:
    # it may hold parameters only in the fields its `__init__` sets (calls.py asks when it matters:
    # freezing.class_body_adds_no_parameters, kept in `adds_no_parameters`).
    node: cst.ClassDef | None = None
    adds_no_parameters: bool | None = None
    # Whether a name of the file's scope where the class is defined is a class or function of the file.
    names_of_the_file: Callable[[str], bool] | None = None
    buffers: set[str] = field(default_factory=set)  # `self.register_buffer("name", t)` met in its methods
    autograd_function: bool = False  # a subclass of torch.autograd.Function (semantics.AUTOGRAD_FUNCTION_BASES)
    optimizer: bool = False  # a subclass of a torch.optim optimizer: `self.param_groups` holds parameters
    class_names: frozenset[str] = frozenset()  # the names its body binds (class attributes, methods)

    def method(self, name: str) -> FunctionInfo | None:
        """The method `name` of this class or, as Python finds it, of its bases in this file."""
        found = self.methods.get(name)
        if found is None:
            for base in self.local_bases:
                found = base.method(name)
                if found is not None:
                    break
        return found

    def lineage(self) -> list[ClassInfo]:
        """This class and its bases of this file, at every depth."""
        found = [self]
        for base in self.local_bases:
            found.extend(base.lineage())
        return found

    def has_buffer(self, attr: str) -> bool:
        """Whether this class or a base of this file registers a buffer `attr`."""
        return any(attr in cls.buffers for cls in self.lineage())

    def owner_of(self, attr: str) -> ClassInfo:
        """The class (this one or a base of this file) whose methods assign the field `attr`."""
        if attr not in self.attrs:
            for base in self.local_bases:
                owner = base.owner_of(attr)
                if attr in owner.attrs:
                    return owner
        return self
    attrs: dict[str, Value] = field(default_factory=dict)
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    # Field -> who read it (a summary, or None for the module's statements): analysed again
    # when the field grows (analysis/summaries.py).
    readers: dict[str, set[FunctionInfo | None]] = field(default_factory=dict)


@dataclass(eq=False)
class FunctionInfo:
    """A function defined in this module, or one of its summaries per calling context
    (analysis/summaries.py): where it was defined and what flows in and out."""

    node: cst.FunctionDef
    env: Env  # the defining scope (its globals/closure)
    cls: ClassInfo | None  # set for methods
    grad_enabled: bool  # False under @torch.no_grad() and friends (or a call with grad off)
    arg_values: dict[str, Value] = field(default_factory=dict)  # merged over the context's calls
    returns: Value = EMPTY
    state: str = "new"  # new -> running -> done (stale: analyse again)
    analysed_with: dict[str, Value] | None = None
    runs: int = 0
    top: int = -1  # the module statement holding the definition (see Facts.top_statements)
    # The record the function's name is bound to; None for that record itself, whose own
    # analysis is the context of callers the file does not show.
    base: FunctionInfo | None = None
    contexts: dict[object, FunctionInfo] = field(default_factory=dict)  # on the base: key -> summary
    readers: set[FunctionInfo | None] = field(default_factory=set)  # who read `returns` (None: the module)
    rerun: bool = False  # something it read changed while it ran
    calls: int = 0  # calls of it that the walk met
    references: int = 0  # reads of its name, calls included: more than calls means it escapes
    # Called from code the file does not show (passed as a callback, decorated, called with
    # `*args`): its parameters are of unknown origin whatever the file's own calls pass.
    escaped: bool = False
    waited: bool = False  # waited once for a caller before being analysed without one
    # (parameter, kind): it returns a view of that parameter's storage (`torch.from_numpy(a)`).
    returned_alias: tuple[str, str] | None = None

    @property
    def primary(self) -> FunctionInfo:
        """The record the function's name is bound to (itself, for that record)."""
        return self.base or self

    @property
    def is_base(self) -> bool:
        return self.base is None

    @property
    def judged_by_callers(self) -> bool:
        """A call's summary of a plain function the file never lets out: its parameters are what
        the calls pass (the base record is the context of callers the file does not show)."""
        base = self.base
        return base is not None and self.cls is None and not base.escaped

    def parameter_names(self) -> tuple[list[str], set[str]]:
        """Positional parameter names (without `self` for methods) and all keyword-able names."""
        params = self.node.params
        positional = [p.name.value for p in list(params.posonly_params) + list(params.params)]
        if self.cls is not None and positional and not is_static(self.node):
            positional = positional[1:]
        names = set(positional) | {p.name.value for p in params.kwonly_params}
        return positional, names


@dataclass(frozen=True)
class Alias:
    """`a = t.numpy()` / `t = torch.from_numpy(a)`: the new name shares memory with `source`."""

    source: str  # a name (`t`), or an attribute chain rooted at one (`lin.weight`, `self.buffer`)
    origin: cst.Call
    kind: str  # "numpy" or "from_numpy"
    # The source is an attribute of `self`, of a parameter or of a global inside a function: the
    # object outlives the scope, so a write is seen by others without a later read here.
    outlives: bool = False
    # The source name was bound to another object since: writing it no longer reaches this alias.
    source_replaced: bool = False

    @property
    def root(self) -> str:
        """The name whose later read sees a write: `lin` for `lin.weight`, `t` for `t`."""
        return self.source.split(".", 1)[0]


class Env:
    """Names visible in one scope; reads fall back to the enclosing scope."""

    __slots__ = ("aliases", "cls", "enclosing", "globals", "parent", "pending_writes", "rebound", "self_name",
                 "vars")

    def __init__(self, parent: Env | None = None, self_name: str | None = None,
                 cls: ClassInfo | None = None) -> None:
        self.vars: dict[str, Value] = {}
        self.parent = parent
        self.self_name = self_name
        self.cls = cls
        self.aliases: dict[str, Alias] = {}
        # source name -> writes to its alias waiting for a later read of the source
        self.pending_writes: dict[str, list[AliasWrite]] = {}
        # names an assignment here bound (a parameter rebound this way is a local object)
        self.rebound: set[str] = set()
        self.globals: frozenset[str] = frozenset()  # names this function declares `global`
        self.enclosing: dict[str, Env] = {}  # names it declares `nonlocal`: the scope that holds each

    def lookup(self, name: str) -> Value | None:
        env: Env | None = self
        while env is not None:
            found = env.vars.get(name)
            if found is not None:
                return found
            env = env.parent
        return None

    def narrow(self, narrowings: Sequence[Narrowing]) -> list[tuple[str, Value | None]]:
        """Apply what a test says about names here; returns what they held, for `widen`."""
        saved: list[tuple[str, Value | None]] = []
        for name, narrowed in narrowings:
            value = narrowed(self.lookup(name))
            if value is not None:
                saved.append((name, self.vars.get(name)))
                self.vars[name] = value
        return saved

    def widen(self, saved: list[tuple[str, Value | None]]) -> None:
        """Undo `narrow` (after the one expression the test guards)."""
        for name, value in reversed(saved):
            if value is None:
                self.vars.pop(name, None)
            else:
                self.vars[name] = value

    def snapshot(self) -> dict[str, Value]:
        return dict(self.vars)

    def join(self, *branches: dict[str, Value]) -> None:
        """Make this scope the union of the states the branches ended in."""
        # As `merge_all` over the branches in order, name by name, but a name that a branch left
        # as it found it (the same object) costs no merge: most names in most joins.
        joined: dict[str, Value] = {}
        for branch in branches:
            for name, value in branch.items():
                old = joined.get(name)
                if old is None:
                    joined[name] = EMPTY.merge(value)
                elif old is not value:
                    joined[name] = old.merge(value)
        self.vars = joined
