"""A small abstract interpreter over the libcst tree.

It walks each scope's statements in order, keeps an environment of what every
name may hold (a :class:`Value`), and records the value of each expression it
evaluates and whether grad mode was off there. Rules then ask these facts
("may this receiver require grad?") instead of guessing from names.

It is deliberately simple: one module, flow-insensitive inside expressions,
branches merged by union, loops run twice to reach a fixed point, function
bodies analysed once with their parameters treated as values of unknown origin.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import libcst as cst

from . import semantics as sem
from .imports import ImportTable
from .values import EMPTY, TENSOR_FLOW, Flag, Value, merge_all, passed_by

GRAD_FLAGS = Flag.GRAD | Flag.UNKNOWN_ARG


@dataclass(eq=False)
class ClassInfo:
    name: str
    is_module: bool
    attrs: dict[str, Value] = field(default_factory=dict)
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    # `self.x` read by a method before any method assigned it: worth a second pass.
    missed: set[str] = field(default_factory=set)


@dataclass(eq=False)
class FunctionInfo:
    """A function defined in this module: where it was defined and what flows in and out."""

    node: cst.FunctionDef
    env: Env  # the defining scope (its globals/closure)
    cls: ClassInfo | None  # set for methods
    grad_enabled: bool  # False under @torch.no_grad() and friends
    arg_values: dict[str, Value] = field(default_factory=dict)  # merged over the call sites
    returns: Value = EMPTY
    state: str = "new"  # new -> running -> done (stale: analyse again)
    analysed_with: dict[str, Value] | None = None
    runs: int = 0
    top: int = -1  # the module statement holding the definition (see Facts.top_statements)

    def parameter_names(self) -> tuple[list[str], set[str]]:
        """Positional parameter names (without `self` for methods) and all keyword-able names."""
        params = self.node.params
        positional = [p.name.value for p in list(params.posonly_params) + list(params.params)]
        if self.cls is not None and positional and not _is_static(self.node):
            positional = positional[1:]
        names = set(positional) | {p.name.value for p in params.kwonly_params}
        return positional, names


@dataclass(frozen=True)
class Alias:
    """`a = t.numpy()` / `t = torch.from_numpy(a)`: the new name shares memory with `source`."""

    source: str
    origin: cst.Call
    kind: str  # "numpy" or "from_numpy"


@dataclass(frozen=True)
class AliasWrite:
    """A write to an alias that is followed by a read of the other side (DET105)."""

    write: cst.CSTNode  # the written name
    alias: str
    source: str
    origin: cst.Call
    kind: str


@dataclass(frozen=True)
class ConvertingCall:
    """A call that turns its tensor arguments into ndarrays (DET106)."""

    call: cst.Call
    function: str  # as written: "np.asarray", "ax.scatter"
    kind: str  # "convert", or "reduce" (a single tensor is not converted, a list is)


class Env:
    """Names visible in one scope; reads fall back to the enclosing scope."""

    __slots__ = ("aliases", "cls", "parent", "pending_writes", "self_name", "vars")

    def __init__(self, parent: Env | None = None, self_name: str | None = None,
                 cls: ClassInfo | None = None) -> None:
        self.vars: dict[str, Value] = {}
        self.parent = parent
        self.self_name = self_name
        self.cls = cls
        self.aliases: dict[str, Alias] = {}
        # source name -> writes to its alias waiting for a later read of the source
        self.pending_writes: dict[str, list[AliasWrite]] = {}

    def lookup(self, name: str) -> Value | None:
        env: Env | None = self
        while env is not None:
            found = env.vars.get(name)
            if found is not None:
                return found
            env = env.parent
        return None

    def snapshot(self) -> dict[str, Value]:
        return dict(self.vars)

    def join(self, *branches: dict[str, Value]) -> None:
        """Make this scope the union of the states the branches ended in."""
        names = set().union(*branches)
        self.vars = {n: merge_all([b.get(n, EMPTY) for b in branches]) for n in names}


@dataclass
class Facts:
    """What the interpreter learned; the rules' only view of the code."""

    imports: ImportTable
    values: dict[cst.CSTNode, Value] = field(default_factory=dict)
    grad_disabled: set[cst.CSTNode] = field(default_factory=set)
    method_calls: dict[str, list[cst.Call]] = field(default_factory=lambda: defaultdict(list))
    attributes: dict[str, list[cst.Attribute]] = field(default_factory=lambda: defaultdict(list))
    # Attribute -> the expression it is the direct child of (call, subscript, attribute, ...).
    parents: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    stores: set[cst.CSTNode] = field(default_factory=set)  # assignment / augmented targets
    self_names: set[cst.CSTNode] = field(default_factory=set)  # `self`/`cls` references
    # Root of a line holding one statement (an Expr's value, an assignment target) -> that line;
    # fixes that rewrite a whole statement (DET103's `with torch.no_grad():`) start from here.
    statement_lines: dict[cst.CSTNode, cst.SimpleStatementLine] = field(default_factory=dict)
    converting_calls: list[ConvertingCall] = field(default_factory=list)
    alias_writes: dict[cst.CSTNode, AliasWrite] = field(default_factory=dict)
    # Node -> index of the module statement it is in, for the nodes rules report on (evaluated
    # expressions, attribute names, written names): positions then need that statement only.
    top_statements: dict[cst.CSTNode, int] = field(default_factory=dict)

    def value_of(self, node: cst.CSTNode) -> Value:
        return self.values.get(node, EMPTY)

    def grad_enabled_at(self, node: cst.CSTNode) -> bool:
        return node not in self.grad_disabled


MAX_RUNS_PER_FUNCTION = 3
MAX_CALL_DEPTH = 8  # functions analysed on demand from a call site, nested


class Interpreter:
    def __init__(self, module: cst.Module, imports: ImportTable,
                 extra_no_grad: frozenset[str] = frozenset(),
                 converting_functions: frozenset[str] = frozenset()) -> None:
        self.module = module
        self.imports = imports
        self.extra_no_grad = extra_no_grad
        self.converting_functions = converting_functions
        self.facts = Facts(imports)
        self.grad_enabled = True
        self.pending: deque[FunctionInfo] = deque()
        self.classes: list[ClassInfo] = []
        self._current_function: FunctionInfo | None = None
        self._depth = 0
        self._top = -1  # index of the module statement being interpreted

    # ----------------------------------------------------------------- driver
    def run(self) -> Facts:
        env = Env()
        for index, statement in enumerate(self.module.body):
            self._top = index
            self.exec_statement(statement, env)
        self._drain()
        # A method that read `self.x` before the method assigning it was analysed: once more.
        for cls in self.classes:
            if cls.missed & cls.attrs.keys():
                for info in cls.methods.values():
                    if info.runs < MAX_RUNS_PER_FUNCTION:
                        info.state = "stale"
                        self.pending.append(info)
        self._drain()
        return self.facts

    def _drain(self) -> None:
        while self.pending:
            info = self.pending.popleft()
            if info.state in ("new", "stale") or (
                info.state == "done" and info.arg_values != info.analysed_with
                and info.runs < MAX_RUNS_PER_FUNCTION
            ):
                self._analyse_function(info)

    def _analyse_function(self, info: FunctionInfo) -> None:
        node = info.node
        info.state = "running"
        info.runs += 1
        info.analysed_with = dict(info.arg_values)
        self_name = None
        env = Env(parent=info.env, cls=info.cls)
        params = list(node.params.posonly_params) + list(node.params.params)
        if info.cls is not None and params and not _is_static(node):
            first = params.pop(0)
            self_name = first.name.value
            is_classmethod = any(_decorator_name(d) == "classmethod" for d in node.decorators)
            env.vars[self_name] = Value(Flag.MODULE if info.cls.is_module and not is_classmethod else Flag.NONE)
        env.self_name = self_name
        for param in params + list(node.params.kwonly_params):
            name = param.name.value
            env.vars[name] = self._param_value(param).merge(info.arg_values.get(name, EMPTY))
        for star in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(star, cst.Param):
                env.vars[star.name.value] = Value(Flag.CONTAINER, elem=Value(Flag.UNKNOWN_ARG))
        saved = (self.grad_enabled, self._current_function, self._top)
        self.grad_enabled = info.grad_enabled
        self._current_function = info
        self._top = info.top
        try:
            self.exec_block(node.body, env)
        finally:
            self.grad_enabled, self._current_function, self._top = saved
            info.state = "done"

    def _call_function(self, info: FunctionInfo, call: cst.Call, positional: list[Value],
                       keywords: dict[str, Value]) -> Value:
        """Bind the call's arguments into the callee and return what it returns."""
        names, keyword_names = info.parameter_names()
        changed = False
        bound = list(zip(names, positional)) + [(k, v) for k, v in keywords.items() if k in keyword_names]
        for name, value in bound:
            old = info.arg_values.get(name, EMPTY)
            new = old.merge(passed_by(value, call))
            if new != old:
                info.arg_values[name] = new
                changed = True
        if info.state == "new" and self._depth < MAX_CALL_DEPTH:
            self._depth += 1
            try:
                self._analyse_function(info)
            finally:
                self._depth -= 1
        elif changed and info.state == "done":
            self.pending.append(info)
        returned = info.returns
        if returned.has(Flag.UNKNOWN_ARG):
            # What came from the parameters is what this call passed, not "unknown".
            passed = merge_all([value.tensor_part() for _, value in bound])
            returned = returned.with_flags(remove=Flag.UNKNOWN_ARG).merge(passed)
        return returned

    def _param_value(self, param: cst.Param) -> Value:
        name = param.name.value
        if param.annotation is not None:
            qualified = self._annotation_name(param.annotation.annotation)
            if qualified in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return Value(Flag.TENSOR | Flag.UNKNOWN_ARG, origin=f"parameter '{name}'")
            if qualified is not None and sem.is_nn_module_class(qualified):
                return Value(Flag.MODULE)
            return Value(Flag.NOT_TENSOR)  # `s: StorageDesc`, `n: int`: declared not a tensor
        if sem.is_device_name(name):
            return Value(Flag.DEVICE_SPEC)
        if param.default is not None and not _is_none(param.default):
            return EMPTY  # `scale=1.0`, `name="x"`, `flag=False`: not a tensor
        return Value(Flag.UNKNOWN_ARG, origin=f"parameter '{name}'")

    def _annotation_name(self, node: cst.BaseExpression) -> str | None:
        if isinstance(node, cst.SimpleString):
            return None
        if isinstance(node, cst.BinaryOperation):  # `Tensor | None`
            return self._annotation_name(node.left) or self._annotation_name(node.right)
        if isinstance(node, cst.Subscript):  # Optional[Tensor]
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    found = self._annotation_name(element.slice.value)
                    if found:
                        return found
            return None
        return self.imports.resolve(node) or (node.value if isinstance(node, cst.Name) else None)

    # ------------------------------------------------------------- statements
    def exec_block(self, body: cst.BaseSuite | Sequence[cst.CSTNode], env: Env) -> None:
        statements = body.body if isinstance(body, cst.BaseSuite) else body
        for statement in statements:
            self.exec_statement(statement, env)

    def exec_statement(self, node: cst.CSTNode, env: Env) -> None:
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
                self._note_statement_line(node)
            for small in node.body:
                self.exec_small(small, env)
        elif isinstance(node, cst.If):
            self.eval(node.test, env)
            no_grad_name, in_body = _requires_grad_test(node.test)
            body: Callable[[], object] = partial(self.exec_block, node.body, env)
            orelse: Callable[[], object] = partial(self._exec_orelse, node.orelse, env)
            if no_grad_name is not None:  # `if t.requires_grad:` ... `else:` t does not require grad
                refine = partial(self._refine_no_grad, no_grad_name, env)
                body, orelse = (_then(refine, body), orelse) if in_body else (body, _then(refine, orelse))
            boxed = self._non_tensor_isinstance(node.test)
            if boxed is not None:  # `if isinstance(x, TensorBox):` x is no tensor in the body
                body = _then(partial(self._refine_not_tensor, boxed, env), body)
            self._alternatives(env, [body, orelse])
        elif isinstance(node, cst.For):
            iterable = self.eval(node.iter, env)
            self._loop(env, node.body, lambda: self.assign(node.target, iterable.element(), env))
            if node.orelse is not None:
                self.exec_block(node.orelse.body, env)
        elif isinstance(node, cst.While):
            self._loop(env, node.body, lambda: self.eval(node.test, env))
            if node.orelse is not None:
                self.exec_block(node.orelse.body, env)
        elif isinstance(node, cst.With):
            self._exec_with(node, env)
        elif isinstance(node, (cst.Try, cst.TryStar)):
            self._exec_try(node, env)
        elif isinstance(node, cst.FunctionDef):
            self._define_function(node, env)
        elif isinstance(node, cst.ClassDef):
            self._define_class(node, env)
        elif isinstance(node, cst.Match):
            self.eval(node.subject, env)
            # No case may match: the state before the match is one of the outcomes.
            self._alternatives(env, [lambda: None] + [partial(self._exec_case, case, env) for case in node.cases])
        else:
            # Unknown compound statement (future syntax): still evaluate what it holds.
            for child in node.children:
                if isinstance(child, cst.BaseExpression):
                    self.eval(child, env)
                elif isinstance(child, cst.BaseSuite):
                    self.exec_block(child, env)

    def _note_statement_line(self, line: cst.SimpleStatementLine) -> None:
        small = line.body[0]
        roots: list[cst.CSTNode] = []
        if isinstance(small, cst.Expr):
            roots.append(small.value)
        elif isinstance(small, cst.Assign):
            roots.extend(target.target for target in small.targets)
        elif isinstance(small, cst.AugAssign):
            roots.append(small.target)
        for root in roots:
            self.facts.statement_lines[root] = line

    def _loop(self, env: Env, body: cst.BaseSuite, head) -> None:
        before = env.snapshot()
        for _ in range(2):  # twice: values appended in one iteration reach the next
            head()
            self.exec_block(body, env)
            env.join(before, env.snapshot())

    def _exec_with(self, node: cst.With, env: Env) -> None:
        saved = self.grad_enabled
        for item in node.items:
            self.eval(item.item, env)
            mode = self._grad_mode_of(item.item)
            if mode is not None:
                self.grad_enabled = mode
            if item.asname is not None:
                self.assign(item.asname.name, EMPTY, env)
        try:
            self.exec_block(node.body, env)
        finally:
            self.grad_enabled = saved

    def _non_tensor_isinstance(self, test: cst.BaseExpression) -> str | None:
        """`isinstance(x, TensorBox)` with a class that is not a tensor class: returns "x"."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._non_tensor_isinstance(test.left) or self._non_tensor_isinstance(test.right)
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
            return None
        classes = test.args[1].value
        candidates = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
        for candidate in candidates:
            qualified = self.imports.resolve(candidate) or _dotted(candidate) or ""
            if qualified.rsplit(".", 1)[-1] in sem.TENSOR_CLASSES or qualified in ("", "torch"):
                return None  # a tensor class, or something we cannot name
        return test.args[0].value.value

    def _refine_not_tensor(self, name: str, env: Env) -> None:
        env.vars[name] = Value(Flag.NOT_TENSOR)

    def _refine_no_grad(self, name: str, env: Env) -> None:
        value = env.lookup(name)
        if value is not None:
            env.vars[name] = value.with_flags(remove=GRAD_FLAGS)

    def _exec_orelse(self, orelse: cst.If | cst.Else | None, env: Env) -> None:
        if isinstance(orelse, cst.If):  # elif
            self.exec_statement(orelse, env)
        elif isinstance(orelse, cst.Else):
            self.exec_block(orelse.body, env)

    def _alternatives(self, env: Env, branches: Sequence[Callable[[], object]]) -> None:
        """Run each branch from the same state; afterwards a name may hold what any branch left."""
        start = env.snapshot()
        ends = []
        for branch in branches:
            env.vars = dict(start)
            branch()
            ends.append(env.snapshot())
        env.join(*ends)

    def _exec_case(self, case: cst.MatchCase, env: Env) -> None:
        if case.guard is not None:
            self.eval(case.guard, env)
        self.exec_block(case.body, env)

    def _exec_handler(self, handler: cst.ExceptHandler | cst.ExceptStarHandler, env: Env) -> None:
        if handler.type is not None:
            self.eval(handler.type, env)
        if handler.name is not None:
            self.assign(handler.name.name, EMPTY, env)
        self.exec_block(handler.body, env)

    def _exec_try(self, node: cst.Try | cst.TryStar, env: Env) -> None:
        self.exec_block(node.body, env)
        # After the body: no exception, or one caught by any handler.
        self._alternatives(env, [lambda: None] + [partial(self._exec_handler, h, env) for h in node.handlers])
        if node.orelse is not None:
            self.exec_block(node.orelse.body, env)
        if node.finalbody is not None:
            self.exec_block(node.finalbody.body, env)

    def _define_function(self, node: cst.FunctionDef, env: Env) -> None:
        grad_enabled = True
        for decorator in node.decorators:
            self.eval(decorator.decorator, env)
            mode = self._grad_mode_of(decorator.decorator)
            if mode is not None:
                grad_enabled = mode
        for param in _all_params(node.params):
            if param.default is not None:
                self.eval(param.default, env)
        cls = env.cls if env.self_name is None and env.cls is not None else None
        info = FunctionInfo(node, env, cls, grad_enabled, top=self._top)
        env.vars[node.name.value] = Value(Flag.FUNCTION, callee=info)
        if cls is not None:
            cls.methods[node.name.value] = info
        self.pending.append(info)

    def _define_class(self, node: cst.ClassDef, env: Env) -> None:
        is_module = False
        for base in node.bases:
            value = self.eval(base.value, env)
            qualified = self.imports.resolve(base.value)
            if value.has(Flag.MODULE_CLASS) or (qualified is not None and sem.is_nn_module_class(qualified)):
                is_module = True
        info = ClassInfo(node.name.value, is_module)
        self.classes.append(info)
        class_env = Env(parent=env, cls=info)
        self.exec_block(node.body, class_env)
        env.vars[node.name.value] = Value(Flag.MODULE_CLASS if is_module else Flag.NONE)

    def exec_small(self, node: cst.BaseSmallStatement, env: Env) -> None:
        if isinstance(node, cst.Expr):
            self.eval(node.value, env)
        elif isinstance(node, cst.Assert):
            self.eval(node.test, env)
            if node.msg is not None:
                self.eval(node.msg, env)
            boxed = self._non_tensor_isinstance(node.test)
            if boxed is not None:
                self._refine_not_tensor(boxed, env)
        elif isinstance(node, cst.Assign):
            value = self.eval(node.value, env)
            for target in node.targets:
                self.assign(target.target, value, env)
            if len(node.targets) == 1:
                self._note_alias(node.targets[0].target, node.value, env)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.eval(node.value, env), env)
                self._note_alias(node.target, node.value, env)
        elif isinstance(node, cst.AugAssign):
            current = self.eval(node.target, env)
            self.facts.stores.add(node.target)
            rhs = self.eval(node.value, env)
            result = current.merge(rhs.tensor_part())
            if not self.grad_enabled:
                result = result.with_flags(remove=GRAD_FLAGS)
            written = node.target.value if isinstance(node.target, cst.Subscript) else node.target
            if isinstance(written, cst.Name):
                self._note_alias_write(written, env)  # `a += 1` / `a[0] += 1` write in place
            if isinstance(node.target, cst.Name):
                env.vars[node.target.value] = result
        elif isinstance(node, cst.Return):
            if node.value is not None:
                value = self.eval(node.value, env)
                if self._current_function is not None:
                    summary = self._current_function
                    summary.returns = summary.returns.merge(value)
        else:
            for child in node.children:
                if isinstance(child, cst.BaseExpression):
                    self.eval(child, env)

    def assign(self, target: cst.BaseExpression, value: Value, env: Env) -> None:
        if isinstance(target, cst.Name):
            env.vars[target.value] = value
            self._forget_alias(target.value, env)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            if value.items is not None and len(value.items) == len(elements):
                parts = list(value.items)
            else:
                parts = [value.element()] * len(elements)
            for element, part in zip(elements, parts):
                if isinstance(element, cst.StarredElement):
                    self.assign(element.value, Value(Flag.CONTAINER, elem=part), env)
                else:
                    self.assign(element.value, part, env)
        elif isinstance(target, cst.Attribute):
            self.facts.stores.add(target)
            self.eval(target, env)
            if isinstance(target.value, cst.Name):
                owner = target.value.value
                if owner == env.self_name and env.cls is not None:
                    attrs = env.cls.attrs
                    attrs[target.attr.value] = attrs.get(target.attr.value, EMPTY).merge(value)
                elif target.attr.value == "requires_grad":
                    current = env.lookup(owner) or EMPTY
                    env.vars[owner] = current.with_flags(add=Flag.GRAD | Flag.TENSOR)
        elif isinstance(target, cst.Subscript):
            self.facts.stores.add(target)
            self.eval(target, env)
            if isinstance(target.value, cst.Name):
                self._add_element(target.value.value, value, env)
                self._note_alias_write(target.value, env)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, Value(Flag.CONTAINER, elem=value), env)
        else:
            self.eval(target, env)

    def _add_element(self, name: str, element: Value, env: Env) -> None:
        current = env.lookup(name)
        if current is None or current.is_tensor_like:
            return
        if current.has(Flag.CONTAINER) or current.flags == Flag.NONE:
            merged = current.merge(Value(Flag.CONTAINER, elem=element))
            env.vars[name] = merged

    # -------------------------------------------------------- memory aliases
    def _alias_of(self, expr: cst.BaseExpression) -> Alias | None:
        """`t.numpy()` (through `.detach()`/`.cpu()`/`.data`) or `torch.from_numpy(a)` on a name."""
        if not isinstance(expr, cst.Call):
            return None
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "numpy":
            base = expr.func.value
            while True:
                if (isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute)
                        and base.func.attr.value in ("detach", "cpu", "resolve_conj", "resolve_neg")):
                    base = base.func.value
                elif isinstance(base, cst.Attribute) and base.attr.value == "data":
                    base = base.value
                else:
                    break
            if isinstance(base, cst.Name):
                return Alias(base.value, expr, "numpy")
        elif self.imports.resolve(expr.func) == "torch.from_numpy" and expr.args:
            source = expr.args[0].value
            if isinstance(source, cst.Name) and expr.args[0].keyword is None:
                return Alias(source.value, expr, "from_numpy")
        return None

    def _note_alias(self, target: cst.BaseExpression, value: cst.BaseExpression, env: Env) -> None:
        alias = self._alias_of(value)
        if alias is not None and isinstance(target, cst.Name) and target.value != alias.source:
            env.aliases[target.value] = alias

    def _forget_alias(self, name: str, env: Env) -> None:
        """`name` was rebound: it no longer aliases anything, and no longer is the source read later."""
        env.aliases.pop(name, None)
        env.pending_writes.pop(name, None)

    def _locate(self, *nodes: cst.CSTNode) -> None:
        for node in nodes:
            self.facts.top_statements[node] = self._top

    def _note_alias_write(self, written: cst.Name, env: Env) -> None:
        self._locate(written)
        scope: Env | None = env
        while scope is not None:
            alias = scope.aliases.get(written.value)
            if alias is not None:
                record = AliasWrite(written, written.value, alias.source, alias.origin, alias.kind)
                scope.pending_writes.setdefault(alias.source, []).append(record)
                return
            if written.value in scope.vars:
                return
            scope = scope.parent

    def _note_source_read(self, name: str, env: Env) -> None:
        scope: Env | None = env
        while scope is not None:
            writes = scope.pending_writes.pop(name, None)
            if writes:
                for record in writes:
                    self.facts.alias_writes.setdefault(record.write, record)
            scope = scope.parent

    # ------------------------------------------------------------ grad modes
    def _grad_mode_of(self, expr: cst.BaseExpression) -> bool | None:
        """False if the context/decorator turns grad off, True if it turns it on."""
        call_args: list[cst.Arg] | None = None
        target = expr
        if isinstance(expr, cst.Call):
            call_args = list(expr.args)
            target = expr.func
        qualified = self.imports.resolve(target)
        if qualified is None:
            name = _dotted(target)
            if name is not None and name in self.extra_no_grad:
                return False
            return None
        if qualified in sem.GRAD_CONTEXT_DISABLE or qualified in self.extra_no_grad:
            return False
        if qualified in sem.ENABLE_GRAD:
            return True
        if qualified in sem.INFERENCE_MODE:
            flag = _literal_bool(call_args[0].value) if call_args else True
            return not flag if flag is not None else True
        if qualified in sem.SET_GRAD_ENABLED and call_args:
            flag = _literal_bool(call_args[0].value)
            return True if flag is None else flag
        return None

    # ------------------------------------------------------------ expressions
    def eval(self, node: cst.BaseExpression, env: Env) -> Value:
        value = self._eval(node, env)
        facts = self.facts
        old = facts.values.get(node)
        facts.values[node] = value if old is None else old.merge(value)
        facts.top_statements[node] = self._top
        if not self.grad_enabled:
            facts.grad_disabled.add(node)
        return value

    def _eval(self, node: cst.BaseExpression, env: Env) -> Value:
        """Dispatch on the node's type (one dict lookup, not a chain of ABC isinstance checks)."""
        method = _EVALUATORS.get(type(node))
        if method is not None:
            return method(self, node, env)
        for child in node.children:  # any other expression: evaluate its parts
            if isinstance(child, cst.BaseExpression):
                self.eval(child, env)
        return EMPTY

    def _eval_subscript(self, node: cst.Subscript, env: Env) -> Value:
        self.facts.parents[node.value] = node  # `p.data[i] = v` writes through `.data`
        base = self.eval(node.value, env)
        index_value: cst.BaseExpression | None = None
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                self.eval(element.slice.value, env)
                index_value = element.slice.value
            elif isinstance(element.slice, cst.Slice):
                for part in (element.slice.lower, element.slice.upper, element.slice.step):
                    if part is not None:
                        self.eval(part, env)
        if base.items is not None and isinstance(index_value, cst.Integer) and len(node.slice) == 1:
            index = int(index_value.value, 0)
            if -len(base.items) <= index < len(base.items):
                return base.items[index]
        if base.has(Flag.MODULE):
            return Value(Flag.MODULE | (base.flags & Flag.DEVICE))
        return base.element()

    def _eval_binary_operation(self, node: cst.BinaryOperation, env: Env) -> Value:
        left = self.eval(node.left, env)
        right = self.eval(node.right, env)
        result = left.tensor_part().merge(right.tensor_part())
        if not result.flags and (left.has(Flag.NDARRAY) or right.has(Flag.NDARRAY)):
            return Value(Flag.NDARRAY)
        if not result.flags and isinstance(node.operator, cst.Add) and (
            left.has(Flag.CONTAINER) or right.has(Flag.CONTAINER)
        ):
            return left.merge(right)
        return self._grad_mode_result(result)

    def _eval_unary_operation(self, node: cst.UnaryOperation, env: Env) -> Value:
        operand = self.eval(node.expression, env)
        if isinstance(node.operator, cst.Not):
            return EMPTY
        return operand.tensor_part()

    def _eval_boolean_operation(self, node: cst.BooleanOperation, env: Env) -> Value:
        left = self.eval(node.left, env)
        boxed = self._non_tensor_isinstance(node.left) if isinstance(node.operator, cst.And) else None
        if boxed is None:
            return left.merge(self.eval(node.right, env))
        saved = env.vars.get(boxed)  # `isinstance(x, Box) and x.data`: x is a Box on the right
        self._refine_not_tensor(boxed, env)
        right = self.eval(node.right, env)
        if saved is None:
            env.vars.pop(boxed, None)
        else:
            env.vars[boxed] = saved
        return left.merge(right)

    def _eval_comparison(self, node: cst.Comparison, env: Env) -> Value:
        values = [self.eval(node.left, env)] + [self.eval(c.comparator, env) for c in node.comparisons]
        return sem.integer_result(merge_all([v.tensor_part() for v in values]))

    def _eval_if_expression(self, node: cst.IfExp, env: Env) -> Value:
        self.eval(node.test, env)
        return self.eval(node.body, env).merge(self.eval(node.orelse, env))

    def _eval_named_expression(self, node: cst.NamedExpr, env: Env) -> Value:
        value = self.eval(node.value, env)
        self.assign(node.target, value, env)
        return value

    def _eval_lambda(self, node: cst.Lambda, env: Env) -> Value:
        inner = Env(parent=env)
        for param in _all_params(node.params):
            if param.default is not None:
                self.eval(param.default, env)
            inner.vars[param.name.value] = self._param_value(param)
        self.eval(node.body, inner)
        return EMPTY

    def _eval_string(self, node: cst.SimpleString, env: Env) -> Value:
        try:
            text = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd escapes: not a device string
            return EMPTY
        return sem.string_device(text) if isinstance(text, str) else EMPTY

    def _eval_formatted_string(self, node: cst.FormattedString, env: Env) -> Value:
        for content in node.parts:
            if isinstance(content, cst.FormattedStringExpression):
                self.eval(content.expression, env)
        first_part = node.parts[0] if node.parts else None
        if isinstance(first_part, cst.FormattedStringText):
            return sem.string_device(first_part.value.split(":")[0])
        return EMPTY

    def _eval_await(self, node: cst.Await, env: Env) -> Value:
        return self.eval(node.expression, env)

    def _eval_yield(self, node: cst.Yield, env: Env) -> Value:
        if isinstance(node.value, cst.BaseExpression):
            self.eval(node.value, env)
        elif isinstance(node.value, cst.From):
            self.eval(node.value.item, env)
        return EMPTY

    def _eval_starred(self, node: cst.StarredElement, env: Env) -> Value:
        return self.eval(node.value, env)

    def _eval_sequence(self, node: cst.List | cst.Tuple | cst.Set, env: Env) -> Value:
        items: list[Value] = []
        for element in node.elements:
            value = self.eval(element.value, env)
            items.append(value.element() if isinstance(element, cst.StarredElement) else value)
        structured = not any(isinstance(e, cst.StarredElement) for e in node.elements)
        return Value(Flag.CONTAINER, items=tuple(items) if structured else None, elem=merge_all(items))

    def _eval_dict(self, node: cst.Dict, env: Env) -> Value:
        values: list[Value] = []
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                self.eval(element.key, env)
                values.append(self.eval(element.value, env))
            elif isinstance(element, cst.StarredDictElement):
                values.append(self.eval(element.value, env).element())
        return Value(Flag.CONTAINER, elem=merge_all(values))

    def _eval_comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp,
                            env: Env) -> Value:
        inner = Env(parent=env, self_name=env.self_name, cls=env.cls)
        self._comprehension(node.for_in, inner, outer=env)
        if isinstance(node, cst.DictComp):
            self.eval(node.key, inner)
            element = self.eval(node.value, inner)
        else:
            element = self.eval(node.elt, inner)
        return Value(Flag.CONTAINER, elem=element)

    def _comprehension(self, comp: cst.CompFor, inner: Env, outer: Env) -> None:
        iterable = self.eval(comp.iter, outer)
        self.assign(comp.target, iterable.element(), inner)
        for condition in comp.ifs:
            self.eval(condition.test, inner)
        if comp.inner_for_in is not None:
            self._comprehension(comp.inner_for_in, inner, outer=inner)

    def _grad_mode_result(self, value: Value) -> Value:
        if not self.grad_enabled and value.flags & GRAD_FLAGS:
            return value.with_flags(remove=GRAD_FLAGS)
        return value

    def _eval_name(self, node: cst.Name, env: Env) -> Value:
        if node.value == env.self_name:
            self.facts.self_names.add(node)
        self._note_source_read(node.value, env)
        found = env.lookup(node.value)
        if found is not None and (found.flags or not sem.is_device_name(node.value)):
            return found
        if node.value in self.imports.aliases:
            return EMPTY
        if sem.is_device_name(node.value):
            return Value(Flag.DEVICE_SPEC)
        return EMPTY

    def _eval_attribute(self, node: cst.Attribute, env: Env) -> Value:
        attr = node.attr.value
        self.facts.attributes[attr].append(node)
        self._locate(node.attr)
        self.facts.parents[node.value] = node
        if self.imports.resolve(node) is not None:
            return EMPTY  # torch.float32, np.pi, nn.functional: a library name
        base = self.eval(node.value, env)
        if isinstance(node.value, cst.Name) and node.value.value == env.self_name and env.cls is not None:
            known = env.cls.attrs.get(attr)
            if known is not None:
                return known
            if attr not in env.cls.methods:
                env.cls.missed.add(attr)
        return self.attribute_of(base, attr)

    def attribute_of(self, base: Value, attr: str) -> Value:
        if base.items is not None and attr in ("values", "indices") and len(base.items) == 2:
            return base.items[0 if attr == "values" else 1]
        if base.has(TENSOR_FLOW):
            if attr == "data" and (not base.is_tensor_like or base.has(Flag.NOT_TENSOR)):
                return EMPTY  # `.data` of an unknown object (a box, a record) says nothing
            if attr == "data":
                return Value(Flag.TENSOR | (base.flags & Flag.DEVICE), origin=base.origin)
            if attr == "grad":
                return Value(Flag.TENSOR | (base.flags & Flag.DEVICE))
            if attr in sem.SHAPE_PRESERVING_ATTRIBUTES:
                return base.tensor_part()
            if attr == "device":
                return Value(Flag.DEVICE_SPEC if base.may_be_on_device else Flag.NONE)
            if attr in sem.NON_TENSOR_ATTRIBUTES:
                return EMPTY
        if base.has(Flag.MODULE):
            if attr in ("training", "device", "dtype"):
                return EMPTY
            device = base.flags & Flag.DEVICE
            return Value(Flag.MODULE | Flag.TENSOR | Flag.GRAD | device, origin=f"parameter '{attr}'")
        if base.has(TENSOR_FLOW):
            return EMPTY  # a bound method or an attribute we know nothing of
        if sem.is_device_name(attr):
            return Value(Flag.DEVICE_SPEC)
        return EMPTY

    # ------------------------------------------------------------------ calls
    def _eval_call(self, node: cst.Call, env: Env) -> Value:
        func = node.func
        positional: list[Value] = []
        keywords: dict[str, Value] = {}
        for arg in node.args:
            value = self.eval(arg.value, env)
            if arg.keyword is not None:
                keywords[arg.keyword.value] = value
            elif arg.star:
                positional.append(value.element())
            else:
                positional.append(value)
        qualified = self.imports.resolve(func)
        written = _dotted(func)
        if qualified in self.converting_functions or written in self.converting_functions:
            self.facts.converting_calls.append(ConvertingCall(node, written or str(qualified), "convert"))
        if qualified is not None:
            self.facts.values[func] = EMPTY
            self._locate(func)
            if isinstance(func, cst.Attribute):
                self.facts.attributes[func.attr.value].append(func)
                self._locate(func.attr)
            self._note_library_writes(qualified, node, env)
            return self._grad_mode_result(self._call_library(qualified, node, positional, keywords))
        if isinstance(func, cst.Attribute):
            self.facts.attributes[func.attr.value].append(func)
            self._locate(func, func.attr)
            self.facts.parents[func.value] = func
            self.facts.parents[func] = node
            method = func.attr.value
            self.facts.method_calls[method].append(node)
            receiver = self.eval(func.value, env)
            self.facts.values[func] = receiver
            if isinstance(func.value, cst.Name):
                if _writes_in_place(method):
                    self._note_alias_write(func.value, env)
                if func.value.value == env.self_name and env.cls is not None:
                    info = env.cls.methods.get(method)
                    if info is not None:
                        return self._grad_mode_result(self._call_function(info, node, positional, keywords))
                    known = env.cls.attrs.get(method)
                    if known is not None:
                        return self._grad_mode_result(self._call_value(known, positional, keywords, method))
            if receiver.has(Flag.AXES) and method in sem.PLOTTING:
                self.facts.converting_calls.append(ConvertingCall(node, written or method, "convert"))
            if method in sem.AXES_FACTORIES and method not in ("axes",):
                return Value(Flag.AXES)
            result = self._call_method(receiver, method, node, positional, keywords, env)
            return self._grad_mode_result(result)
        callee = self.eval(func, env)
        if callee.has(Flag.FUNCTION) and isinstance(callee.callee, FunctionInfo):
            return self._grad_mode_result(self._call_function(callee.callee, node, positional, keywords))
        if isinstance(func, cst.Name):
            builtin = self._call_builtin(func.value, callee, positional, env)
            if builtin is not None:
                return builtin
        return self._grad_mode_result(self._call_value(callee, positional, keywords, written))

    def _note_library_writes(self, qualified: str, node: cst.Call, env: Env) -> None:
        """`np.copyto(a, ...)` and `np.add(x, y, out=a)` write into `a`."""
        if not qualified.startswith("numpy."):
            return
        for index, arg in enumerate(node.args):
            is_destination = (arg.keyword is not None and arg.keyword.value == "out") or (
                index == 0 and arg.keyword is None and qualified == "numpy.copyto"
            )
            if is_destination and isinstance(arg.value, cst.Name):
                self._note_alias_write(arg.value, env)

    def _call_value(self, callee: Value, positional: list[Value], keywords: dict[str, Value],
                    name: str | None) -> Value:
        if callee.has(Flag.MODULE_CLASS):
            return Value(Flag.MODULE)
        if callee.has(Flag.MODULE):
            device = callee.flags & Flag.DEVICE
            for value in positional + list(keywords.values()):
                device |= value.flags & Flag.DEVICE
            return Value(Flag.TENSOR | Flag.GRAD | device, origin=f"output of {name or 'a module'}")
        return EMPTY

    def _call_builtin(self, name: str, callee: Value, positional: list[Value], env: Env) -> Value | None:
        if env.lookup(name) is not None:
            return None
        first = positional[0] if positional else EMPTY
        if name in ("float", "int", "bool", "len", "str", "repr", "print", "isinstance", "hasattr", "range"):
            return EMPTY
        if name in ("list", "tuple", "sorted", "reversed", "iter", "set", "frozenset"):
            return Value(Flag.CONTAINER, elem=first.element())
        if name == "next":
            return first.element()
        if name == "enumerate":
            return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=(EMPTY, first.element())))
        if name == "zip":
            items = tuple(value.element() for value in positional)
            return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=items, elem=merge_all(list(items))))
        if name in ("sum", "max", "min", "abs"):
            return self._grad_mode_result(first.element().tensor_part() if first.has(Flag.CONTAINER) else first.tensor_part())
        return None

    def _call_library(self, qualified: str, node: cst.Call, positional: list[Value],
                      keywords: dict[str, Value]) -> Value:
        last = qualified.rsplit(".", 1)[-1]
        kind = sem.converting_kind(qualified)
        if kind is not None:
            self.facts.converting_calls.append(ConvertingCall(node, _dotted(node.func) or qualified, kind))
        if qualified.startswith("numpy."):
            return Value(Flag.NDARRAY)
        if qualified == "matplotlib.pyplot.subplots":
            return Value(Flag.CONTAINER, items=(EMPTY, Value(Flag.AXES)))
        if qualified.startswith("matplotlib.pyplot.") and last in sem.AXES_FACTORIES:
            return Value(Flag.AXES)
        if qualified in sem.PASSTHROUGH_FUNCTIONS:
            return positional[0] if positional else EMPTY
        if qualified.startswith(sem.MODEL_FACTORIES):
            return Value(Flag.MODULE)
        if not qualified.startswith("torch."):
            return EMPTY
        if last in sem.PACKED_SEQUENCE_FUNCTIONS:
            return Value(Flag.NOT_TENSOR)  # its `.data` field is a tensor, not Tensor.data
        if qualified == "torch.device":
            target = positional[0] if positional else keywords.get("type", EMPTY)
            if target.has(Flag.CPU_SPEC) and not target.has(Flag.DEVICE_SPEC):
                return Value(Flag.CPU_SPEC)
            return Value(Flag.DEVICE_SPEC)
        if qualified in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            data = positional[0] if positional else EMPTY
            requires = keywords.get("requires_grad")
            grad = Flag.NONE if _keyword_is_false(node, "requires_grad") and requires is not None else Flag.GRAD
            return Value(Flag.TENSOR | grad | (data.flags & Flag.DEVICE), origin="nn.Parameter")
        if sem.is_nn_module_class(qualified):
            return Value(Flag.MODULE | self._device_keyword(keywords, EMPTY).flags)
        if last[:1].isupper() and last not in sem.FACTORIES:
            return Value(Flag.NOT_TENSOR)  # a class under torch.* (an IR box, a wrapper): not a tensor
        if last == "from_numpy":
            return Value(Flag.TENSOR)
        if last in sem.FACTORIES:
            base = EMPTY
            if last.endswith("_like") and positional:
                base = Value(positional[0].flags & Flag.DEVICE)
            if last in ("as_tensor", "asarray", "Variable") and positional:
                base = positional[0].tensor_part()
            value = Value(Flag.TENSOR | base.flags, origin=base.origin)
            if "requires_grad" in keywords and not _keyword_is_false(node, "requires_grad"):
                value = value.with_flags(add=Flag.GRAD)
                value = Value(value.flags, origin=f"torch.{last}(..., requires_grad=True)")
            return self._device_keyword(keywords, value)
        if qualified.startswith(("torch.cuda.", "torch.backends.", "torch.distributed.")) or last.startswith("is_"):
            return EMPTY
        operands = []
        for index, value in enumerate(positional + list(keywords.values())):
            part = value.element().tensor_part() if value.has(Flag.CONTAINER) else value.tensor_part()
            if index > 0:
                # Only the input of a torch function is a tensor of unknown origin; `size=`,
                # `mode=`, `dim` parameters passed along are not.
                part = part.with_flags(remove=Flag.UNKNOWN_ARG)
            operands.append(part)
        combined = merge_all(operands)
        if last in sem.NO_GRAD_RESULTS:
            return sem.integer_result(combined.with_flags(add=Flag.TENSOR))
        if last in sem.VALUES_INDICES and (len(positional) >= 2 or "dim" in keywords):
            return sem.values_indices(combined.with_flags(add=Flag.TENSOR))
        return self._device_keyword(keywords, combined.with_flags(add=Flag.TENSOR))

    def _device_keyword(self, keywords: dict[str, Value], value: Value) -> Value:
        device = keywords.get("device")
        return sem.device_move(device, value) if device is not None else value

    def _call_method(self, receiver: Value, method: str, node: cst.Call, positional: list[Value],
                     keywords: dict[str, Value], env: Env) -> Value:
        receiver_name = node.func.value.value if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) else None  # type: ignore[union-attr]
        if receiver.has(Flag.MODULE) and receiver.has(Flag.TENSOR) and method in sem.TENSOR_ONLY_METHODS:
            receiver = receiver.with_flags(remove=Flag.MODULE)  # `model.fc.weight.detach()`: a parameter
        if receiver.has(Flag.MODULE):
            return self._module_method(receiver, method, positional, keywords, receiver_name, env)
        if method in ("append", "add", "insert", "extend") and receiver_name is not None:
            added = positional[-1] if positional else EMPTY
            self._add_element(receiver_name, added.element() if method == "extend" else added, env)
            return EMPTY
        if receiver.has(Flag.CONTAINER) and not receiver.is_tensor_like:
            if method in ("values", "copy"):
                return Value(Flag.CONTAINER, elem=receiver.element())
            if method == "items":
                return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=(EMPTY, receiver.element())))
            if method in ("pop", "get", "popitem", "setdefault"):
                return receiver.element()
            return EMPTY
        if receiver.has(Flag.NDARRAY) and not receiver.is_tensor_like:
            return EMPTY if method in ("tolist", "item") else Value(Flag.NDARRAY)
        if method in ("detach", "detach_"):
            return receiver.with_flags(add=Flag.TENSOR, remove=GRAD_FLAGS)
        if method == "numpy":
            return Value(Flag.NDARRAY)
        if method == "cpu":
            return receiver.with_flags(remove=Flag.DEVICE)
        if method in ("cuda", "xpu", "mps"):
            return receiver.with_flags(add=Flag.DEVICE)
        if method == "to":
            result = receiver
            for target in positional[:1] + [keywords.get("device", EMPTY)]:
                result = sem.device_move(target, result)
            return result
        if method == "requires_grad_":
            if positional and _keyword_is_false(node, None):
                return receiver.with_flags(add=Flag.TENSOR, remove=Flag.GRAD)
            value = receiver.with_flags(add=Flag.TENSOR | Flag.GRAD)
            if receiver_name is not None:
                env.vars[receiver_name] = value
            return value
        if not receiver.has(TENSOR_FLOW):
            return EMPTY
        if method in sem.NON_TENSOR_METHODS:
            return EMPTY
        if method in sem.NO_GRAD_RESULTS:
            return sem.integer_result(receiver)
        if method in sem.VALUES_INDICES and (positional or "dim" in keywords):
            return sem.values_indices(receiver)
        result = receiver.tensor_part()
        for value in positional:
            if value.flags & TENSOR_FLOW:
                result = result.merge(value.tensor_part())
        return result

    def _module_method(self, receiver: Value, method: str, positional: list[Value],
                       keywords: dict[str, Value], receiver_name: str | None, env: Env) -> Value:
        device = receiver.flags & Flag.DEVICE
        if method in sem.MODULE_SELF_METHODS:
            moved = receiver
            if method == "cuda":
                moved = receiver.with_flags(add=Flag.DEVICE)
            elif method == "cpu":
                moved = receiver.with_flags(remove=Flag.DEVICE)
            elif method == "to":
                for target in positional[:1] + [keywords.get("device", EMPTY)]:
                    moved = sem.device_move(target, moved)
            if receiver_name is not None and moved is not receiver:
                env.vars[receiver_name] = moved  # modules move in place
            return moved
        if method in ("parameters",):
            return Value(Flag.PARAMS | device)
        if method == "named_parameters":
            param = Value(Flag.TENSOR | Flag.GRAD | device, origin="parameter")
            return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=(EMPTY, param)))
        if method in ("children", "modules"):
            return Value(Flag.CONTAINER, elem=Value(Flag.MODULE | device))
        if method in MODULE_NON_OUTPUT:
            return EMPTY
        return self._call_value(receiver, positional, keywords, method)


MODULE_NON_OUTPUT = sem.MODULE_NON_OUTPUT_METHODS


# The evaluator of each kind of expression node (libcst's node classes are final, so the exact
# type is the key). Kinds not listed have their sub-expressions evaluated and give no evidence.
_EVALUATORS: dict[type[cst.CSTNode], Callable[[Interpreter, Any, Env], Value]] = {
    cst.Name: Interpreter._eval_name,
    cst.Attribute: Interpreter._eval_attribute,
    cst.Call: Interpreter._eval_call,
    cst.Subscript: Interpreter._eval_subscript,
    cst.BinaryOperation: Interpreter._eval_binary_operation,
    cst.UnaryOperation: Interpreter._eval_unary_operation,
    cst.BooleanOperation: Interpreter._eval_boolean_operation,
    cst.Comparison: Interpreter._eval_comparison,
    cst.IfExp: Interpreter._eval_if_expression,
    cst.NamedExpr: Interpreter._eval_named_expression,
    cst.List: Interpreter._eval_sequence,
    cst.Tuple: Interpreter._eval_sequence,
    cst.Set: Interpreter._eval_sequence,
    cst.Dict: Interpreter._eval_dict,
    cst.ListComp: Interpreter._eval_comprehension,
    cst.SetComp: Interpreter._eval_comprehension,
    cst.GeneratorExp: Interpreter._eval_comprehension,
    cst.DictComp: Interpreter._eval_comprehension,
    cst.Lambda: Interpreter._eval_lambda,
    cst.SimpleString: Interpreter._eval_string,
    cst.FormattedString: Interpreter._eval_formatted_string,
    cst.Await: Interpreter._eval_await,
    cst.Yield: Interpreter._eval_yield,
    cst.StarredElement: Interpreter._eval_starred,
    cst.Integer: lambda interpreter, node, env: EMPTY,
    cst.Float: lambda interpreter, node, env: EMPTY,
    cst.Imaginary: lambda interpreter, node, env: EMPTY,
    cst.Ellipsis: lambda interpreter, node, env: EMPTY,
}


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def _requires_grad_test(test: cst.BaseExpression) -> tuple[str | None, bool]:
    """For `if t.requires_grad:` -> ("t", False): the branch where t does not require grad.

    Returns (name, True) when that branch is the body (`if not t.requires_grad:`).
    """
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    inner = test.expression if isinstance(test, cst.UnaryOperation) and negated else test
    if (isinstance(inner, cst.Attribute) and inner.attr.value == "requires_grad"
            and isinstance(inner.value, cst.Name)):
        return inner.value.value, negated
    return None, False


def _then(first: Callable[[], object], second: Callable[[], object]) -> Callable[[], None]:
    def both() -> None:
        first()
        second()
    return both


def _is_static(node: cst.FunctionDef) -> bool:
    return any(_decorator_name(d) == "staticmethod" for d in node.decorators)


# In-place methods of ndarrays (tensors spell theirs with a trailing underscore).
_NDARRAY_IN_PLACE = frozenset({"fill", "sort", "put", "partition", "resize", "itemset", "setfield"})


def _writes_in_place(method: str) -> bool:
    return method in _NDARRAY_IN_PLACE or (method.endswith("_") and not method.startswith("_"))


def _decorator_name(decorator: cst.Decorator) -> str | None:
    return _dotted(decorator.decorator)


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    if isinstance(node, cst.Call):
        return _dotted(node.func)
    return None


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _literal_bool(node: cst.BaseExpression) -> bool | None:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _keyword_is_false(node: cst.Call, keyword: str | None) -> bool:
    """Whether the call passes a literal False (as `keyword=`, or first positional for None)."""
    for arg in node.args:
        name = arg.keyword.value if arg.keyword is not None else None
        if name == keyword:
            return _literal_bool(arg.value) is False
    return False
