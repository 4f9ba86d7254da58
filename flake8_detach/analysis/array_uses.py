"""What happens to an array after it is made: only read, written in place, or let out of sight.

On the CPU `t.numpy()` shares the tensor's storage, and so do `np.asarray(...)` and the views
made from it. A fix that makes such a conversion run where it used to raise (DET101's
`.detach()`, DET106's explicit conversion) must not turn that crash into a silent write into the
tensor. This module answers, *syntactically within the scope of the expression*, what becomes of
the value: :data:`READ` (every use makes a new object or only looks), :data:`WRITTEN` (it, or a
view of it, is written in place: `a[i] = v`, `a += v`, `a.fill(0)`, `np.copyto(a, v)`, `out=a`)
or :data:`ESCAPES` (returned, stored, passed to a call not known to be read-only, captured by a
nested function). Unknown uses escape.

Names are followed flow-insensitively: every use of a bound name after the binding counts, and
in a loop every use in the loop body. A name rebound before its write (`a = a * 2; a[0] = 1`)
therefore counts as written: an unneeded copy, never a missed write.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .facts import Facts
from .semantics import writes_in_place
from .syntax import may_be_a_view

READ, WRITTEN, ESCAPES = "read", "written", "escapes"
_RANK = {READ: 0, ESCAPES: 1, WRITTEN: 2}

# Checked on NumPy 2.4 with `np.shares_memory(a, result)`:
# ndarray methods and attributes whose result is a view of the array (a write through it is a write
# into the array) ...
# (a tensor's `.to()`, `.cpu()`, `.float()`, `.contiguous()` return the tensor itself when there is
# nothing to do, and its `.numpy()` shares the storage: for `torch.from_numpy(a)` they are views)
ARRAY_VIEW_METHODS = frozenset({"reshape", "transpose", "view", "squeeze", "swapaxes", "ravel",
                                "diagonal", "__array__", "permute", "unsqueeze", "expand", "narrow",
                                "select", "movedim", "detach", "view_as", "expand_as", "to", "cpu",
                                "cuda", "float", "double", "half", "int", "long", "bool", "type",
                                "contiguous", "numpy", "type_as", "resolve_conj", "resolve_neg"})
ARRAY_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "flat", "base"})
# ... and those that return a new object, or only look (a tensor's methods are included: `torch.from_numpy(a)`).
ARRAY_READING_METHODS = frozenset(
    """copy astype tolist item mean sum std var min max prod argmax argmin argsort cumsum cumprod
    round clip any all nonzero dot flatten tobytes tofile dump dumps conj conjugate trace ptp
    searchsorted compress repeat take choose nanmean numel size dim clone abs exp log sqrt norm
    allclose __len__ __repr__ __str__ __format__
    __contains__ __eq__ __getitem__""".split()
)
ARRAY_READING_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "nbytes", "itemsize", "strides",
                                      "device", "requires_grad", "is_cuda"})
# NumPy functions whose result shares the memory of their (first) argument.
NUMPY_VIEW_FUNCTIONS = frozenset(
    """asarray asanyarray ascontiguousarray asfortranarray atleast_1d atleast_2d atleast_3d ravel
    reshape transpose squeeze swapaxes moveaxis expand_dims broadcast_to diagonal flip fliplr flipud
    rot90 split array_split hsplit vsplit dsplit real imag require asmatrix frombuffer
    lib.stride_tricks.as_strided lib.stride_tricks.sliding_window_view""".split()
)
# NumPy functions that write into their first positional argument.
NUMPY_WRITING_FUNCTIONS = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis",
                                     "random.shuffle"})
# torch functions that copy an array, and those that share its memory.
TORCH_COPYING = frozenset({"torch.tensor"})
TORCH_SHARING = frozenset({"torch.from_numpy", "torch.as_tensor", "torch.asarray"})
# Library prefixes whose functions only read an array they are given: matplotlib copies what it
# plots; pandas >= 3 constructors copy an ndarray (`np.shares_memory(a, pd.DataFrame(a).values)` is
# False on pandas 3.1; on pandas 2 without copy-on-write they shared it).
READING_LIBRARIES = ("matplotlib.", "pandas.", "seaborn.")
# Builtins that only look at their argument (or copy it into a new object).
READING_BUILTINS = frozenset({"print", "len", "float", "int", "bool", "str", "repr", "format", "abs", "round",
                              "sum", "min", "max", "sorted", "isinstance", "type", "id", "hash", "any", "all"})
# TensorBoard's SummaryWriter methods: each turns the array into a summary at the call (the one
# method family of an object the analysis cannot type that is common right after a conversion).
READING_LOGGER_METHODS = frozenset({"add_scalar", "add_scalars", "add_histogram", "add_image", "add_images",
                                    "add_figure", "add_embedding", "add_pr_curve", "add_video", "add_audio",
                                    "add_mesh"})
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)
_LOOPS = (cst.For, cst.While)


@dataclass(frozen=True)
class ArrayUse:
    """The verdict: ``kind`` and, for a write or an escape, where (``node``) and what (``what``)."""

    kind: str
    node: cst.CSTNode | None = None
    what: str = ""  # "'w' is written", "the array is returned"
    who: str = ""  # who could write it after an escape: "the caller", "f()"


_READ = ArrayUse(READ)


@dataclass
class _Tree:
    """Parents, pre-order positions and variable references of the whole module."""

    parents: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    order: dict[cst.CSTNode, int] = field(default_factory=dict)
    names: dict[str, list[cst.Name]] = field(default_factory=dict)


class _TreeBuilder(cst.CSTVisitor):
    def __init__(self, tree: _Tree) -> None:
        super().__init__()
        self.tree = tree
        self.stack: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.tree.parents[node] = self.stack[-1]
        self.tree.order[node] = len(self.tree.order)
        self.stack.append(node)
        if isinstance(node, cst.Name):
            self.tree.names.setdefault(node.value, []).append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


def _tree_of(facts: Facts, module: cst.Module) -> _Tree:
    """The module's index, built once per analysis (on the first fix that needs it)."""
    if not isinstance(facts.array_tree, _Tree):
        tree = _Tree()
        module.visit(_TreeBuilder(tree))
        facts.array_tree = tree
    return facts.array_tree


def array_use(expr: cst.BaseExpression, facts: Facts) -> ArrayUse:
    """What the program does with the array ``expr`` produces (see the module docstring)."""
    if facts.module is None:
        return ArrayUse(ESCAPES, expr, "cannot be followed", "")
    return _Walker(facts, _tree_of(facts, facts.module)).climb(expr)


def strongest(uses: list[ArrayUse]) -> ArrayUse:
    """A write wins over an escape, which wins over a read (the first of each kind is kept)."""
    best = _READ
    for use in uses:
        if _RANK[use.kind] > _RANK[best.kind]:
            best = use
    return best


def line_of(facts: Facts, node: cst.CSTNode | None) -> int | None:
    """The 1-based line ``node`` starts on (positions of one node: cheap enough for a fix's words)."""
    if node is None or facts.module is None:
        return None
    from ..positions import start_positions

    found = start_positions(facts.module, [node]).get(node)
    return found[0] if found else None


class _Walker:
    def __init__(self, facts: Facts, tree: _Tree) -> None:
        self.facts = facts
        self.tree = tree
        self.parents = tree.parents
        self.followed: set[tuple[cst.CSTNode, str]] = set()
        self.converting_calls = {converting.call for converting in facts.converting_calls}

    # ------------------------------------------------------------ one value
    def climb(self, node: cst.CSTNode, container: bool = False) -> ArrayUse:
        """The use of the value ``node`` evaluates to, from its parent."""
        parent = self.parents.get(node)
        if parent is None:
            return ArrayUse(ESCAPES, node, "is used where the analysis cannot follow it", "")
        if container:
            return self._container_use(node, parent)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return self._attribute_use(parent)
        if isinstance(parent, cst.Subscript) and parent.value is node:
            return self._subscript_use(parent)
        if isinstance(parent, cst.Arg):
            call = self.parents.get(parent)
            if isinstance(call, cst.Call):
                return self._argument_use(call, parent, container=False)
        if isinstance(parent, (cst.Element, cst.StarredElement)) and self._in_store_target(parent):
            return _READ  # rebound by a tuple target (`a, b = b, a`)
        if isinstance(parent, (cst.Element, cst.StarredElement, cst.DictElement)):
            holder = self.parents.get(parent)
            if holder is not None:
                return self.climb(holder, container=True)
        return self._statement_use(node, parent)

    def _statement_use(self, node: cst.CSTNode, parent: cst.CSTNode) -> ArrayUse:
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.ComparisonTarget, cst.Comparison,
                               cst.FormattedStringExpression, cst.Expr, cst.Assert, cst.Del, cst.Index,
                               cst.Slice, cst.If, cst.While)):
            return _READ
        if isinstance(parent, cst.AugAssign):
            return self._written(parent, node) if parent.target is node else _READ
        if isinstance(parent, cst.IfExp):
            return _READ if parent.test is node else self.climb(parent)
        if isinstance(parent, cst.BooleanOperation):
            return self.climb(parent)
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node:
            return self._assignment_use(parent)
        if isinstance(parent, cst.AssignTarget):
            return _READ  # the name is rebound here: the uses after it are followed anyway
        if isinstance(parent, cst.For) and parent.iter is node:
            return self._bound_use(parent.target, parent)
        if isinstance(parent, cst.CompFor) and parent.iter is node:
            return self._bound_use(parent.target, parent)
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.target is node:
            return _READ
        if isinstance(parent, cst.Return):
            return ArrayUse(ESCAPES, parent, "is returned", "by the caller")
        if isinstance(parent, (cst.Yield, cst.Await)):
            return ArrayUse(ESCAPES, parent, "is yielded", "by the consumer")
        if isinstance(parent, cst.Lambda):
            return ArrayUse(ESCAPES, parent, "is returned by a lambda", "by its caller")
        return ArrayUse(ESCAPES, parent, "is used in a way the analysis does not follow", "there")

    # ------------------------------------------------------------ on the array itself
    def _attribute_use(self, attribute: cst.Attribute) -> ArrayUse:
        name = attribute.attr.value
        call = self.parents.get(attribute)
        if isinstance(call, cst.Call) and call.func is attribute:
            if name in ARRAY_VIEW_METHODS:
                return self.climb(call)
            if writes_in_place(name):
                return self._written(call, attribute.value, f".{name}()")
            if name in ARRAY_READING_METHODS:
                return _READ
            return ArrayUse(ESCAPES, call, f"is passed to .{name}()", f"by .{name}()")
        if name in ARRAY_VIEW_ATTRIBUTES:
            return self.climb(attribute)
        if name in ARRAY_READING_ATTRIBUTES:
            if isinstance(call, cst.AssignTarget):
                return self._written(call, attribute.value)  # `a.shape = ...` reshapes in place
            return _READ
        return ArrayUse(ESCAPES, attribute, f"has its .{name} used", "through it")

    def _subscript_use(self, subscript: cst.Subscript) -> ArrayUse:
        parent = self.parents.get(subscript)
        if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.AugAssign) and parent.target is subscript):
            return self._written(subscript, subscript.value)
        if isinstance(parent, (cst.Element, cst.StarredElement)) and self._in_store_target(parent):
            return self._written(subscript, subscript.value)
        if all(may_be_a_view(element) for element in subscript.slice):
            return self.climb(subscript)
        return _READ  # advanced indexing copies

    def _in_store_target(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is inside a tuple or list target (`a[0], b = ...`)."""
        parent = self.parents.get(node)
        while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            node, parent = parent, self.parents.get(parent)
        return isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.For) and parent.target is node)

    def _written(self, where: cst.CSTNode, array: cst.CSTNode | None, how: str = "") -> ArrayUse:
        label = f"'{array.value}'" if isinstance(array, cst.Name) else "the array"
        return ArrayUse(WRITTEN, where, f"{label} is written" + (f" by {how}" if how else ""))

    # ------------------------------------------------------------ passed to a call
    def _argument_use(self, call: cst.Call, arg: cst.Arg, container: bool) -> ArrayUse:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "out":
            return ArrayUse(WRITTEN, call, "the array is written by out=")
        first = call.args[0] is arg and keyword is None
        qualified = self.facts.imports.resolve(call.func)
        if qualified is not None:
            return self._library_argument_use(qualified, call, first, container)
        if isinstance(call.func, cst.Name) and call.func.value in READING_BUILTINS:
            return _READ
        if call in self.converting_calls:  # `ax.plot(a)`: matplotlib on an Axes
            return _READ
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in READING_LOGGER_METHODS:
            return _READ
        written = _written_call(call)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("append", "extend", "insert", "add",
                                                                              "update", "setdefault", "put"):
            return ArrayUse(ESCAPES, call, "is stored in a container", "through it")
        return ArrayUse(ESCAPES, call, f"is passed to {written}()", f"by {written}()")

    def _library_argument_use(self, qualified: str, call: cst.Call, first: bool, container: bool) -> ArrayUse:
        if qualified.startswith("numpy."):
            name = qualified[len("numpy."):]
            if first and (name in NUMPY_WRITING_FUNCTIONS or name.endswith(".at")):
                return ArrayUse(WRITTEN, call, f"the array is written by np.{name}()")
            if not container and (name in NUMPY_VIEW_FUNCTIONS or (name == "array" and _passes_copy_false(call))):
                return self.climb(call)
            return _READ  # NumPy functions return new arrays (or scalars)
        if qualified in TORCH_COPYING:
            return _READ
        if qualified in TORCH_SHARING and not container:
            return self.climb(call)
        if qualified.startswith(READING_LIBRARIES) and not _passes_copy_false(call):
            return _READ
        return ArrayUse(ESCAPES, call, f"is passed to {qualified}()", f"by {qualified}()")

    def _container_use(self, holder: cst.CSTNode, parent: cst.CSTNode) -> ArrayUse:
        """A list, tuple or dict holding the array: read only when a reading call takes it whole."""
        if isinstance(parent, cst.Arg):
            call = self.parents.get(parent)
            if isinstance(call, cst.Call):
                return self._argument_use(call, parent, container=True)
        if isinstance(parent, (cst.Element, cst.StarredElement, cst.DictElement)):
            outer = self.parents.get(parent)
            if outer is not None:
                return self.climb(outer, container=True)
        if isinstance(parent, cst.Return):
            return ArrayUse(ESCAPES, parent, "is returned (in a container)", "by the caller")
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is holder:
            return self._bound_use(parent.target, parent)
        if isinstance(parent, (cst.Expr, cst.FormattedStringExpression)):
            return _READ
        return ArrayUse(ESCAPES, holder, "is stored in a container", "through it")

    # ------------------------------------------------------------ bound to names
    def _assignment_use(self, statement: cst.Assign | cst.AnnAssign) -> ArrayUse:
        targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
        return strongest([self._bound_use(target, statement) for target in targets])

    def _bound_use(self, target: cst.BaseExpression, binding: cst.CSTNode) -> ArrayUse:
        if isinstance(target, cst.Name):
            return self._name_use(target, binding)
        if isinstance(target, (cst.Tuple, cst.List)):  # unpacked rows are views: follow each name
            uses = [self._bound_use(element.value, binding) for element in target.elements]
            return strongest(uses)
        if isinstance(target, cst.Attribute):
            return ArrayUse(ESCAPES, target, "is stored in an attribute", "through it")
        return ArrayUse(ESCAPES, target, "is stored in a container", "through it")

    def _name_use(self, target: cst.Name, binding: cst.CSTNode) -> ArrayUse:
        scope = self._scope_of(binding)
        key = (scope, target.value)
        if key in self.followed:
            return _READ  # already being followed (`b = a` ... `a = b`)
        self.followed.add(key)
        if self._declared_global(scope, target.value):
            return ArrayUse(ESCAPES, target, f"is bound to the global '{target.value}'", "through it")
        after = self.tree.order[binding]
        loop = self._outermost_loop(binding, scope)
        uses = []
        for reference in self.tree.names.get(target.value, ()):
            if reference is target or not self._is_variable(reference):
                continue
            reference_scope = self._scope_of(reference)
            in_loop = loop is not None and self._inside(reference, loop)
            if self.tree.order[reference] <= after and not in_loop:
                continue
            if reference_scope is not scope:
                if self._inside(reference_scope, scope):
                    uses.append(ArrayUse(ESCAPES, reference, f"is captured by a nested function (as '{target.value}')",
                                         "by it"))
                continue
            use = self.climb(reference)
            if use.kind == WRITTEN and use.what.startswith("the array"):
                use = ArrayUse(WRITTEN, use.node, f"'{target.value}'" + use.what[len("the array"):])
            uses.append(use)
            if use.kind == WRITTEN:
                break
        return strongest(uses)

    def _is_variable(self, name: cst.Name) -> bool:
        """A name that reads or binds a variable (not `x.name`, a keyword, a def or an import)."""
        parent = self.parents.get(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is name:
            return False
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param, cst.ImportAlias, cst.AsName,
                               cst.Global, cst.Nonlocal, cst.NameItem)):
            return False
        return not isinstance(parent, (cst.Import, cst.ImportFrom))

    def _scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, _SCOPES):
            parent = self.parents.get(parent)
        return parent if parent is not None else node

    def _inside(self, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
        parent: cst.CSTNode | None = node
        while parent is not None:
            if parent is ancestor:
                return True
            parent = self.parents.get(parent)
        return False

    def _outermost_loop(self, node: cst.CSTNode, scope: cst.CSTNode) -> cst.CSTNode | None:
        found = None
        parent = self.parents.get(node)
        while parent is not None and parent is not scope:
            if isinstance(parent, _LOOPS):
                found = parent
            parent = self.parents.get(parent)
        return found

    def _declared_global(self, scope: cst.CSTNode, name: str) -> bool:
        if isinstance(scope, cst.Module):
            return False
        for reference in self.tree.names.get(name, ()):
            parent = self.parents.get(reference)
            if isinstance(parent, cst.NameItem) and self._scope_of(parent) is scope:
                return True
        return False


def _passes_copy_false(call: cst.Call) -> bool:
    return any(arg.keyword is not None and arg.keyword.value == "copy"
               and isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None") for arg in call.args)


def _written_call(call: cst.Call) -> str:
    """How a call's function is written: `helper`, `obj.method`."""
    return cst.Module([]).code_for_node(call.func)
