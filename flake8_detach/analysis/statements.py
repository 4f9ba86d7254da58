"""The walk over statements: order, branches, loops, scopes and definitions.

Each kind of statement has one small method, found through a table on the node's exact type.
Branches run from the same state and are joined afterwards (a name may hold what any branch
left); loops run twice so that what one iteration appends reaches the next.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import libcst as cst

from . import dtypes as dt
from . import ranks
from . import semantics as sem
from .exports import ForeignClass
from .expressions import constant_key
from .freezing import (
    WEIGHT_ONLY_MODULES,
    call_freeze,
    freezes_self,
    is_module_base,
    loop_freeze,
    root_name,
    weight_freeze,
)
from .guards import (
    Assumptions,
    Narrowing,
    branch_narrowings,
    device_flag_assumptions,
    dtype_narrowing,
    flag_key,
    isinstance_narrowing,
    then,
    type_narrowings,
)
from .scopes import ClassInfo, Env, FunctionInfo
from .syntax import (
    EntryRewrite,
    all_params,
    decorator_name,
    descendants,
    loop_slots,
    rewrites_every_entry,
    slot_name,
)
from .values import EMPTY, TENSOR_FLOW, Flag, Value
from .versions import known_branch

if TYPE_CHECKING:
    from .interpreter import Interpreter


def seen_under(value: Value, assumptions: Assumptions) -> Value:
    """A value as the rest of the code sees it after a branch where these flags held."""
    for key, truth in assumptions:
        value = value.guarded_by(flag_key(key, truth)).unless(flag_key(key, not truth))
    return value


class StatementExecutor:
    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self.facts = interp.facts
        self.imports = interp.imports
        # Names whose module attributes the file assigned (`model.x = ...`), kept as `model.x` in
        # the scope's names: rebinding the name forgets them.
        self.attribute_owners: set[str] = set()
        # The fields of `self` each block written so far wrote (field_written), innermost last.
        self._fields: list[dict[str, Value]] = []
        # The targets of the assignment being evaluated, and the name of `self` there: the fields it
        # rewrites (`self.e = torch.tensor(self.e)`), asked only where field_written needs them.
        self._assigning: tuple[Sequence[cst.AssignTarget], str | None] = ((), None)
        # What loops that replace every entry of a container wrote, by their `d[k]` (_loop_rewriting).
        self._rewrites: dict[int, Value] = {}
        # The slots `c[k]` of the loops being run (syntax.loop_slots): slot name -> container name.
        # Within an iteration a slot is a name of the scope ("c[k]"), joined at branches like one;
        # what it holds at the iteration's end (or where a branch leaves) goes into the container.
        self.slots: dict[str, str] = {}
        # Per `for` node, what its syntax says, read once however often it runs: whether it runs
        # once (_runs_once), the entries it rewrites (syntax.rewrites_every_entry), its slots.
        self._loop_shapes: dict[int, tuple[bool, EntryRewrite | None, dict[str, str]]] = {}

    # ----------------------------------------------------------------- blocks
    def exec_block(self, body: cst.BaseSuite | Sequence[cst.CSTNode], env: Env) -> None:
        statements = body.body if isinstance(body, cst.BaseSuite) else body
        written: dict[str, Value] = {}
        self._fields.append(written)
        try:
            for statement in statements:
                self.exec_statement(statement, env)
        finally:
            self._fields.pop()
        for outer in self._fields if written else ():  # the block may not have run: what it wrote
            for attr in written:  # joins every write again (the field's summary)
                outer.pop(attr, None)

    # ------------------------------------------------- fields written in this walk
    def field_written(self, attr: str) -> Value | None:
        """What `self.attr` holds after a write earlier in the method's straight-line code, where no
        call since could have changed it (`self.w = np.eye(n)`; `self.w = torch.tensor(self.w)`:
        the second reads the array, not the join of every write to the field)."""
        for written in reversed(self._fields):
            found = written.get(attr)
            if found is not None:  # a write of what the walk knows nothing of: the field's summary
                known = found.flags or found.objs or found.items is not None or found.elem is not None
                if known or found.callee is not None or attr in _self_fields(*self._assigning):
                    # Not the summary where this very assignment rewrites the field: that joins in
                    # what is being computed from it (`self.e = split(...)` then
                    # `self.e = torch.from_numpy(np.array(self.e)).to(device)`).
                    return found
                return None  # knows more (`self.conv(x)`)
        return None

    def forget_fields(self) -> None:
        """A call that may write the instance's fields (`self.reset()`, `helper(self)`)."""
        for written in self._fields:
            written.clear()

    def swap_fields(self, fields: list[dict[str, Value]]) -> list[dict[str, Value]]:
        """Another function's walk starts with nothing written (its `self` is another name)."""
        previous, self._fields = self._fields, fields
        return previous

    def exec_statement(self, node: cst.CSTNode, env: Env) -> None:
        """Any statement, compound or small: one method per kind, through `_EXECUTORS`."""
        method = _EXECUTORS.get(type(node))
        if method is not None:
            method(self, node, env)
            return
        # Any other statement (`del`, `global`, future syntax): still evaluate what it holds.
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                self.interp.eval(child, env)
            elif isinstance(child, cst.BaseSuite):
                self.exec_block(child, env)

    def alternatives(self, env: Env, branches: Sequence[Callable[[], object]],
                     exits: Sequence[bool] = ()) -> None:
        """Run each branch from the same state; afterwards a name may hold what any branch left.

        A branch that always leaves (`return`, `raise`, `continue`, `break` at its end; `exits`)
        leaves nothing for the code after it: `if t.requires_grad: return t.detach().numpy()`.
        """
        start = env.snapshot()
        ends = []
        for index, branch in enumerate(branches):
            env.vars = dict(start)
            branch()
            if not (index < len(exits) and exits[index]):
                ends.append(env.snapshot())
            elif self.slots:
                self.flush_slots(env)  # `out[i] = t; continue`: what the slot held leaves with it
        env.join(*(ends or [env.snapshot()]))

    # ------------------------------------------------------ compound statements
    def _exec_line(self, node: cst.SimpleStatementLine | cst.SimpleStatementSuite, env: Env) -> None:
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
            self._note_statement_line(node)
        for small in node.body:
            self.exec_statement(small, env)
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                self._switch_grad_mode(node, small.value)

    def _switch_grad_mode(self, line: cst.SimpleStatementLine | cst.SimpleStatementSuite, call: cst.Call) -> None:
        """`torch.set_grad_enabled(False)` as a statement: grad mode for the rest of the body it is a
        statement of (of a function, or of the module: then also for every function of the file,
        which run after the import). Turning grad off counts only as a statement of that body, not
        under an `if` or in a loop where it may not run; turning it on counts anywhere."""
        mode = self.interp.grad_switch(call)
        function = self.interp.current_function
        body = function.node.body.body if function is not None else self.interp.module.body
        if mode is None or not mode and not any(statement is line for statement in body):
            return
        self.interp.grad_enabled = mode
        if function is None:
            self.interp.module_grad_off = not mode

    def _exec_if(self, node: cst.If, env: Env) -> None:
        self.interp.eval(node.test, env)
        verdict = known_branch(node.test, self.imports)
        if verdict is not None:  # only one branch runs; the other binds nothing that flows on
            if verdict:
                self.exec_block(node.body, env)
            else:
                self._exec_orelse(node.orelse, env)
            return
        body: Callable[[], object] = partial(self.exec_block, node.body, env)
        orelse: Callable[[], object] = partial(self._exec_orelse, node.orelse, env)
        body_narrowings, orelse_narrowings = branch_narrowings(node.test, self.imports)
        if orelse_narrowings:  # what a type test says of one name it says of the names converted with it
            orelse_narrowings += _converted_together(node.body, type_narrowings(node.test, self.imports)[1])
        if body_narrowings:
            body = then(partial(env.narrow, body_narrowings), body)
        if orelse_narrowings:
            orelse = then(partial(env.narrow, orelse_narrowings), orelse)
        body_flags, orelse_flags = device_flag_assumptions(node.test, self.interp.device_flag)
        if body_flags or orelse_flags:  # `if use_gpu:`: follow the flag's value into each branch
            body = partial(self._assuming, body_flags, body, env)
            orelse = partial(self._assuming, orelse_flags, orelse, env)
        orelse_exits = isinstance(node.orelse, cst.Else) and _always_leaves(node.orelse.body)
        self.alternatives(env, [body, orelse], exits=(_always_leaves(node.body), orelse_exits))

    def _assuming(self, assumptions: Assumptions, branch: Callable[[], object], env: Env) -> None:
        """Run a branch where device flags are known; its names leave it marked accordingly."""
        def run() -> None:
            branch()
            env.vars = {name: seen_under(value, assumptions) for name, value in env.vars.items()}
        self.interp.assuming(assumptions, run)

    def _exec_orelse(self, orelse: cst.If | cst.Else | None, env: Env) -> None:
        if isinstance(orelse, cst.If):  # elif
            self._exec_if(orelse, env)
        elif isinstance(orelse, cst.Else):
            self.exec_block(orelse.body, env)

    def _exec_for(self, node: cst.For, env: Env) -> None:
        items = self.interp.calls.elements(self.interp.eval(node.iter, env), node.iter)
        shape = self._loop_shapes.get(id(node))
        if shape is None:
            shape = self._loop_shapes[id(node)] = (_runs_once(node.body), rewrites_every_entry(node), loop_slots(node))
        once, rewrite, written = shape
        slots = {slot: container for slot, container in written.items()
                 if slot not in self.slots and self._holds_entries(env.lookup(container))}

        def head() -> None:
            self.assign(node.target, items, env)
            for slot, container in slots.items():  # the entry as the iteration finds it
                env.vars[slot] = self._entry_of(env.lookup(container) or EMPTY)

        def tail() -> None:
            self.flush_slots(env, slots)
            for slot in slots:
                env.vars.pop(slot, None)

        self.slots.update(slots)
        try:
            if once:  # `for x, _ in loader: x_hat = model(x); break`: the first batch only
                head()
                self.exec_block(node.body, env)
                tail()
                return
            if rewrite is None:
                self._loop(env, node.body, head, tail)
            else:
                self._loop_rewriting(node, rewrite, head, env, tail)
        finally:
            for slot in slots:
                self.slots.pop(slot, None)
        freeze = loop_freeze(node)
        if freeze is not None:
            self._set_frozen(*freeze, env)
        if node.orelse is not None:
            self.exec_block(node.orelse.body, env)

    @staticmethod
    def _set_frozen(name: str, frozen: bool, env: Env) -> None:
        """Freeze or thaw the module a name holds (freezing.py); other values are left alone."""
        current = env.lookup(name)
        if current is None or not current.has(Flag.MODULE | Flag.MODULE_HINT):
            return
        env.vars[name] = current.with_flags(add=Flag.FROZEN) if frozen else current.with_flags(remove=Flag.FROZEN)

    def _thaw_owner(self, target: cst.Attribute | cst.Subscript, env: Env) -> None:
        """`model.fc = nn.Linear(...)`, `model[-1] = ...`: the module may have new parameters."""
        root = root_name(target)
        if root is not None:
            self.thaw(root, env)

    def thaw(self, name: str, env: Env) -> None:
        """The module `name` holds may have new parameters (a field was written)."""
        self._set_frozen(name, False, env)

    def _holds_entries(self, value: Value | None) -> bool:
        """A container whose entries `c[k]` are values of their own (a list, a dict; not a tensor or
        an array, whose `c[k] = v` writes into the one storage)."""
        return value is not None and not value.is_tensor_like and not value.has(Flag.NDARRAY | Flag.MODULE) and (
            bool(value.objs) or value.has(Flag.CONTAINER))

    def _entry_of(self, container: Value) -> Value:
        heap = self.interp.heap
        return container.element().merge(heap.elements_of(container.objs)) if container.objs else container.element()

    def flush_slots(self, env: Env, slots: dict[str, str] | None = None) -> None:
        """What the slots hold now goes into their containers (weakly: a later iteration, or the
        path that did not leave, may put something else there)."""
        for slot, container in (self.slots if slots is None else slots).items():
            value = env.vars.get(slot)
            current = env.lookup(container)
            if value is None or current is None:
                continue
            if current.objs:
                self.interp.heap.add_element(current.objs, value)
            self.add_element(container, value, env)

    def _loop_rewriting(self, node: cst.For, rewrite: EntryRewrite, head: Callable[[], object], env: Env,
                        tail: Callable[[], object] | None = None) -> None:
        """A loop that replaces every entry of the container it walks (syntax.rewrites_every_entry):
        afterwards the name holds a container of what the body wrote, not of that joined with what
        it held (`for k, v in masks.items(): masks[k] = v.cpu().detach().numpy()` leaves arrays).
        A new object at the loop: other names for the old one keep the join, as the heap must."""
        site = id(rewrite.write)
        outer = self._rewrites.get(site)  # the same loop, met again in a recursive call
        self._rewrites[site] = EMPTY
        try:
            self._loop(env, node.body, head, tail)
            written = self._rewrites[site]
        finally:
            if outer is None:
                del self._rewrites[site]
            else:
                self._rewrites[site] = outer
        current = env.lookup(rewrite.container)
        if current is None or not rewrite.mapping and (current.is_tensor_like or not current.has(Flag.CONTAINER)
                                                       and not current.objs):
            return
        heap = self.interp.heap
        old = [heap.objects[obj] for obj in current.objs if obj in heap.objects]
        keys = {name: written for obj in old for name in obj.keys} if any(obj.is_dict for obj in old) else None
        flags = Flag.CONTAINER if current.is_tensor_like else current.flags | Flag.CONTAINER
        refilled = heap.allocate(node, Value(flags), keys)
        heap.add_element(refilled.objs, written)
        env.vars[rewrite.container] = refilled

    def _exec_while(self, node: cst.While, env: Env) -> None:
        self._loop(env, node.body, lambda: self.interp.eval(node.test, env))
        if node.orelse is not None:
            self.exec_block(node.orelse.body, env)

    def _loop(self, env: Env, body: cst.BaseSuite, head: Callable[[], object],
              tail: Callable[[], object] | None = None) -> None:
        before = env.snapshot()
        for _ in range(2):  # twice: values appended in one iteration reach the next
            head()
            self.exec_block(body, env)
            if tail is not None:
                tail()
            env.join(before, env.snapshot())

    def _exec_with(self, node: cst.With, env: Env) -> None:
        interp = self.interp
        saved = interp.grad_enabled, interp.autocast, interp.in_autocast
        for item in node.items:
            entered = interp.eval(item.item, env)
            mode = interp.grad_mode_of(item.item)
            if mode is not None:
                interp.grad_enabled = mode
            autocast = self._autocast_dtype(item.item)
            if autocast is not None:
                interp.in_autocast = autocast >= 0
                interp.autocast = max(autocast, 0)
            if item.asname is not None:
                self.assign(item.asname.name, _yielded_by_context_manager(item.item, entered, env), env)
        try:
            self.exec_block(node.body, env)
        finally:
            interp.grad_enabled, interp.autocast, interp.in_autocast = saved

    def _autocast_dtype(self, context: cst.BaseExpression) -> int | None:
        """`torch.autocast("cpu", dtype=torch.bfloat16)`: the dtype its lower-precision ops give
        (0 where the file does not say; -1 for `enabled=False`); None for any other context."""
        if not isinstance(context, cst.Call):
            return None
        qualified = self.imports.resolve(context.func)
        if qualified not in dt.AUTOCAST_CONTEXTS:
            return None
        dtype = dt.AUTOCAST_CONTEXTS[qualified] or 0
        for index, arg in enumerate(context.args):
            name = arg.keyword.value if arg.keyword is not None else ("device_type" if index == 0 else "")
            if name == "dtype":
                dtype = dt.dtype_named(self.facts.value_of(arg.value))
            elif name == "enabled" and isinstance(arg.value, cst.Name) and arg.value.value == "False":
                return -1
            elif name == "device_type" and isinstance(arg.value, cst.SimpleString) and not dtype:
                dtype = {"'cpu'": dt.BF16, '"cpu"': dt.BF16, "'cuda'": dt.F16, '"cuda"': dt.F16}.get(arg.value.value, 0)
        return dtype

    def _exec_try(self, node: cst.Try | cst.TryStar, env: Env) -> None:
        self.exec_block(node.body, env)
        # After the body: no exception, or one caught by any handler.
        self.alternatives(env, [lambda: None] + [partial(self._exec_handler, h, env) for h in node.handlers])
        if node.orelse is not None:
            self.exec_block(node.orelse.body, env)
        if node.finalbody is not None:
            self.exec_block(node.finalbody.body, env)

    def _exec_handler(self, handler: cst.ExceptHandler | cst.ExceptStarHandler, env: Env) -> None:
        if handler.type is not None:
            self.interp.eval(handler.type, env)
        if handler.name is not None:
            self.assign(handler.name.name, EMPTY, env)
        self.exec_block(handler.body, env)

    def _exec_match(self, node: cst.Match, env: Env) -> None:
        self.interp.eval(node.subject, env)
        # No case may match: the state before the match is one of the outcomes.
        self.alternatives(env, [lambda: None] + [partial(self._exec_case, case, env) for case in node.cases])

    def _exec_case(self, case: cst.MatchCase, env: Env) -> None:
        if case.guard is not None:
            self.interp.eval(case.guard, env)
        self.exec_block(case.body, env)

    def _define_function(self, node: cst.FunctionDef, env: Env) -> None:
        interp = self.interp
        grad_enabled = True
        decorated = False  # by something other than a grad mode: whoever calls it is unknown
        for decorator in node.decorators:
            interp.eval(decorator.decorator, env)
            mode = interp.grad_mode_of(decorator.decorator)
            if mode is not None:
                grad_enabled = mode
            else:
                decorated = True
        for param in all_params(node.params):
            if param.default is not None:
                interp.eval(param.default, env)
        cls = env.cls if env.self_name is None and env.cls is not None else None
        info = interp.definitions.get(node) if interp.current_function is None else None
        if isinstance(info, FunctionInfo):  # the module walked again: the same record, in the new scope
            for record in (info, *info.contexts.values()):
                record.env = env
        else:
            info = FunctionInfo(node, env, cls, grad_enabled, top=interp.top, escaped=decorated)
            if interp.current_function is None:
                interp.definitions[node] = info
            interp.summaries.functions.append(info)
        env.vars[node.name.value] = Value(Flag.FUNCTION, callee=info)
        if cls is not None:
            cls.methods[node.name.value] = info
        interp.summaries.pending.append(info)

    def record_class(self, site: cst.CSTNode, name: str, fields: list[str]) -> ClassInfo:
        """A record class made by a call (`collections.namedtuple`): one per call site, kept
        when the module is walked again."""
        known = self.interp.definitions.get(site)
        if isinstance(known, ClassInfo):
            return known
        info = ClassInfo(name, False)
        self.interp.definitions[site] = info
        self.interp.classes.append(info)
        self.interp.heap.record_fields[info] = fields
        return info

    def _define_class(self, node: cst.ClassDef, env: Env) -> None:
        is_module = False
        project = self.interp.project
        foreign: list[str] = []
        local: list[ClassInfo] = []
        bases_add_no_parameters = bool(node.bases)  # nn.Module itself, or classes of this file
        autograd_function = optimizer = False
        for base in node.bases:
            value = self.interp.eval(base.value, env)
            if isinstance(value.callee, ClassInfo) and not value.has(Flag.INSTANCE):
                local.append(value.callee)  # `class Child(Base)` with Base of this file
                is_module = is_module or value.callee.is_module
                autograd_function = autograd_function or value.callee.autograd_function
                optimizer = optimizer or value.callee.optimizer
            qualified = self.imports.resolve(base.value)
            autograd_function = autograd_function or qualified in sem.AUTOGRAD_FUNCTION_BASES
            optimizer = optimizer or sem.is_optimizer_class(qualified)
            bases_add_no_parameters = bases_add_no_parameters and (
                is_module_base(qualified) or (isinstance(value.callee, ClassInfo) and value.callee.node is not None))
            if value.has(Flag.MODULE_CLASS) or (qualified is not None and sem.is_nn_module_class(qualified)):
                is_module = True
            elif qualified is not None and project is not None and project.is_module_class(qualified):
                is_module = True  # `class Head(Backbone)` with Backbone an nn.Module of another project file
            if qualified is not None and project is not None and project.is_class(qualified):
                foreign.append(qualified)  # its methods and fields are read from that file's exports
        known = self.interp.definitions.get(node) if self.interp.current_function is None else None
        if isinstance(known, ClassInfo):  # the module walked again: its fields so far are kept
            info = known
        else:
            top = self.interp.module.body
            top_level = 0 <= self.interp.top < len(top) and top[self.interp.top] is node
            info = ClassInfo(node.name.value, is_module, top_level, tuple(foreign), tuple(local))
            info.autograd_function = autograd_function
            info.optimizer = optimizer
            if is_module and bases_add_no_parameters:
                info.node = node
                info.names_of_the_file = lambda name: isinstance((env.lookup(name) or EMPTY).callee, (ClassInfo, FunctionInfo))
            if self.interp.current_function is None:
                self.interp.definitions[node] = info
            self.interp.classes.append(info)
        class_env = Env(parent=env, cls=info)
        self.exec_block(node.body, class_env)
        info.class_names = frozenset(class_env.vars)
        for name, value in class_env.vars.items():
            if value.objs and name not in info.attrs:  # `items = []` in the body: shared by every instance
                self.interp.summaries.write_field(info, name, value)
        if self._is_record(node):
            self.interp.heap.record_fields[info] = _annotated_fields(node)
        if is_module:
            kind = Flag.MODULE_CLASS
        elif all(_is_object_base(base.value) for base in node.bases):
            kind = Flag.PLAIN_CLASS  # `class Box:` / `class Box(object):`: its instances are no tensors
        else:
            kind = Flag.NONE  # a base the file cannot see into: it may be a module
        env.vars[node.name.value] = Value(kind, callee=info)

    def _is_record(self, node: cst.ClassDef) -> bool:
        """A `@dataclass` or a `typing.NamedTuple` subclass: its constructor sets its annotated fields."""
        for decorator in node.decorators:
            target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            if self.imports.resolve(target) == "dataclasses.dataclass":
                return True
        return any(self.imports.resolve(base.value) == "typing.NamedTuple" for base in node.bases)

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

    # --------------------------------------------------------- small statements
    def _exec_expr(self, node: cst.Expr, env: Env) -> None:
        self.interp.eval(node.value, env)
        freeze = call_freeze(node.value) if isinstance(node.value, cst.Call) else None
        if freeze is None and isinstance(node.value, cst.Call):
            freeze = self._method_freeze(node.value, env)
        if freeze is not None:
            self._set_frozen(*freeze, env)

    def _method_freeze(self, call: cst.Call, env: Env) -> tuple[str, bool] | None:
        """`separator.freeze()` where that method freezes its module (freezing.freezes_self, or the
        project's summaries for a class of another file, or every project module class's method
        of the name for a model whose class the file cannot tell): the name's module is frozen."""
        func = call.func
        if call.args or not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        receiver = env.lookup(func.value.value)
        if receiver is None or not receiver.has(Flag.MODULE):
            return None
        method = func.attr.value
        owner = receiver.callee
        if isinstance(owner, ClassInfo):
            info = owner.method(method)
            frozen = info is not None and isinstance(info.node, cst.FunctionDef) and freezes_self(info.node)
        elif self.interp.project is None or not self.interp.project.values:
            return None
        elif isinstance(owner, ForeignClass):
            frozen = self.interp.project.method_freezes(owner.qualified, method)
        elif owner is None:
            frozen = self.interp.project.method_freezes(None, method)
        else:
            return None
        return (func.value.value, True) if frozen else None

    def _exec_assert(self, node: cst.Assert, env: Env) -> None:
        self.interp.eval(node.test, env)
        if node.msg is not None:
            self.interp.eval(node.msg, env)
        known = isinstance_narrowing(node.test, self.imports)
        if known is not None:
            env.narrow([known])
        env.narrow(dtype_narrowing(node.test, self.imports)[0])  # `assert x.dtype != torch.bfloat16`

    def _exec_assign(self, node: cst.Assign, env: Env) -> None:
        outer, self._assigning = self._assigning, (node.targets, env.self_name)
        try:
            value = self.interp.eval(node.value, env)
        finally:
            self._assigning = outer
        for target in node.targets:
            self.assign(target.target, value, env)
        frozen_layer = weight_freeze(node)  # `emb.weight.requires_grad = False` of an nn.Embedding
        layer = (env.lookup(frozen_layer) or EMPTY).callee if frozen_layer is not None else None
        if frozen_layer is not None and isinstance(layer, str) and layer in WEIGHT_ONLY_MODULES:
            self._set_frozen(frozen_layer, True, env)
        if len(node.targets) == 1:
            self.interp.aliases.note_assignment(node.targets[0].target, node.value, env)

    def _exec_ann_assign(self, node: cst.AnnAssign, env: Env) -> None:
        if node.value is not None:
            self.assign(node.target, self.interp.eval(node.value, env), env)
            self.interp.aliases.note_assignment(node.target, node.value, env)

    def _exec_aug_assign(self, node: cst.AugAssign, env: Env) -> None:
        interp = self.interp
        current = interp.eval(node.target, env)
        self.facts.stores.add(node.target)
        rhs = interp.eval(node.value, env)
        result = interp.grad_mode_result(current.merge(rhs.tensor_part()))
        if result.flags & TENSOR_FLOW:  # `total += loss` from `total = 0`: 0-dim where both are
            result = result.with_flags(add=ranks.zero_dim_of(current, rhs))
        if current.flags & TENSOR_FLOW:
            result = result.with_dtype(current.dtype)  # `acc += x` writes into acc: its dtype stays
        if current.objs and rhs.has(Flag.CONTAINER) and not current.is_tensor_like:
            interp.heap.add_element(current.objs, rhs.element())  # `self.log += [loss]`
        written = node.target.value if isinstance(node.target, cst.Subscript) else node.target
        if isinstance(written, cst.Name):
            interp.aliases.note_write(written, env)  # `a += 1` / `a[0] += 1` write in place
        if isinstance(node.target, cst.Name):
            env.vars[node.target.value] = result

    def _exec_return(self, node: cst.Return, env: Env) -> None:
        if node.value is None:
            return
        value = self.interp.eval(node.value, env)
        summary = self.interp.current_function
        if summary is not None:
            self.interp.summaries.returned(summary, value)
            self.interp.aliases.note_return(node.value, env)

    # -------------------------------------------------------------- bindings
    def _record(self, value: Value) -> tuple[ClassInfo, list[str]] | None:
        """The record class (a namedtuple) `value` is an instance of, and its fields in order."""
        cls = value.callee
        if not value.has(Flag.INSTANCE) or not isinstance(cls, ClassInfo):
            return None
        fields = self.interp.heap.record_fields.get(cls)
        return None if fields is None else (cls, fields)

    def _exec_nonlocal(self, node: cst.Nonlocal, env: Env) -> None:
        """`nonlocal kept`: assignments to `kept` are the enclosing function's."""
        for item in node.names:
            scope = env.parent
            while scope is not None and item.name.value not in scope.vars:
                scope = scope.parent
            if scope is not None and scope.parent is not None:  # not the module's: that is `global`
                env.enclosing[item.name.value] = scope

    def _exec_global(self, node: cst.Global, env: Env) -> None:
        """`global best`: the function's assignments to `best` are the module's (`module_names`)."""
        env.globals = env.globals | {item.name.value for item in node.names}

    def _assign_global(self, name: str, value: Value) -> None:
        """A function assigns a module name: joined with its other writes, and the module's
        statements (and the functions that read it) are walked again if it grew."""
        names = self.interp.module_names
        before = names.attrs.get(name)
        self.interp.summaries.write_field(names, name, value)
        if names.attrs.get(name) is not before:
            self.interp.summaries.module_dirty = True

    def assign(self, target: cst.BaseExpression, value: Value, env: Env) -> None:
        if isinstance(target, cst.Name) and target.value in env.globals:
            self._assign_global(target.value, value)
        elif isinstance(target, cst.Name) and target.value in env.enclosing:
            scope = env.enclosing[target.value]  # joined: the inner function may run or not
            scope.vars[target.value] = (scope.vars.get(target.value) or EMPTY).merge(value)
        elif isinstance(target, cst.Name):
            env.vars[target.value] = value
            self.interp.aliases.forget(target.value, env)
            if target.value in self.attribute_owners:  # a new object: the old one's attributes go
                prefix = f"{target.value}."
                for key in [key for key in env.vars if key.startswith(prefix)]:
                    del env.vars[key]
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            record = self._record(value)
            if value.items is not None and len(value.items) == len(elements):
                parts = list(value.items)
            elif record is not None and len(record[1]) == len(elements):  # `a, b = Pair(t, 0)`
                cls, fields = record
                parts = [self.interp.summaries.read_field(cls, name, self.interp.current_function) or EMPTY
                         for name in fields]
            else:
                parts = [value.element()] * len(elements)
            for element, part in zip(elements, parts):
                if isinstance(element, cst.StarredElement):
                    self.assign(element.value, Value(Flag.CONTAINER, elem=part), env)
                else:
                    self.assign(element.value, part, env)
        elif isinstance(target, cst.Attribute):
            self.facts.stores.add(target)
            self.interp.aliases.forget_attribute(target, env)  # before `lin` in `lin.weight` is read
            self.interp.eval(target, env)
            self._thaw_owner(target, env)
            self.write_member(target.value, target.attr.value, value, env)
        elif isinstance(target, cst.Subscript):
            if id(target) in self._rewrites:
                self._rewrites[id(target)] = self._rewrites[id(target)].merge(value)
            self.facts.stores.add(target)
            self.interp.eval(target, env)
            slot = slot_name(target) if self.slots else None
            if slot in self.slots and isinstance(target.value, cst.Name):
                env.vars[slot] = value  # this iteration's entry: into the container at its end
                self.interp.aliases.note_write(target.value, env)
                return
            self._thaw_owner(target, env)
            self._store_item(target, value)
            if isinstance(target.value, cst.Name):
                self.add_element(target.value.value, value, env)
                self.interp.aliases.note_write(target.value, env)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, Value(Flag.CONTAINER, elem=value), env)
        else:
            self.interp.eval(target, env)

    def write_member(self, target: cst.BaseExpression, attr: str, value: Value, env: Env) -> None:
        """`owner.attr = value`, also `setattr(owner, "attr", value)`: a field of `self`'s class or of
        an instance of a class of the file, or what a module's attribute now holds."""
        if not isinstance(target, cst.Name):
            return
        owner = target.value
        if owner == env.self_name and env.cls is not None:
            self.interp.summaries.write_field(env.cls, attr, value)
            if self._fields:
                self._fields[-1][attr] = value
        elif attr == "requires_grad":
            current = env.lookup(owner) or EMPTY
            env.vars[owner] = current.with_flags(add=Flag.GRAD | Flag.TENSOR)
        else:
            base = self.facts.value_of(target)
            if base.has(Flag.INSTANCE) and isinstance(base.callee, ClassInfo):
                self.interp.summaries.write_field(base.callee, attr, value)  # `client.net = model`
            self._note_module_attribute(owner, attr, value, env)

    def _note_module_attribute(self, owner: str, attr: str, value: Value, env: Env) -> None:
        """`model.class_weights = weights.to(device)`: what the file stores in a module's attribute
        is what a later read of it gives (read as `owner.attr` by the expression walk), not a
        parameter (yolov5's train.py). A submodule stored this way stays a module as before."""
        owner_value = env.lookup(owner)
        if owner_value is None or not owner_value.has(Flag.MODULE) or value.has(Flag.MODULE | Flag.MODULE_CLASS):
            return
        env.vars[f"{owner}.{attr}"] = value
        self.attribute_owners.add(owner)

    def _store_item(self, target: cst.Subscript, value: Value) -> None:
        """`d["loss"] = v`, `self.cache[k] = v`: a write into the heap's objects of the subscripted value."""
        base = self.facts.value_of(target.value)
        if not base.objs or base.is_tensor_like:
            return
        index = target.slice[0].slice if len(target.slice) == 1 else None
        key = constant_key(index.value) if isinstance(index, cst.Index) else None
        self.interp.heap.store_item(base.objs, key, value)

    def add_element(self, name: str, element: Value, env: Env) -> None:
        """`xs.append(v)` / `xs[i] = v`: the container `name` may now hold `element`."""
        current = env.lookup(name)
        if current is None or current.is_tensor_like:
            return
        if current.has(Flag.CONTAINER) or current.flags == Flag.NONE:
            env.vars[name] = current.merge(Value(Flag.CONTAINER, elem=element))


def _converted_together(body: cst.BaseSuite, narrowings: list[Narrowing]) -> list[Narrowing]:
    """`if type(boxes).__name__ != "ndarray": boxes = boxes.cpu().numpy(); confs = confs.cpu().numpy()`:
    a body that only converts names to NumPy, each from itself, converts them together, so where
    the test fails they were arrays together: what the test says of one name it says of each."""
    converted = _self_conversions(body) if narrowings else set()
    return [(other, narrow) for name, narrow in narrowings if name in converted
            for other in sorted(converted - {name})]


def _self_conversions(body: cst.BaseSuite) -> set[str]:
    """The names a block assigns `name = name....numpy()` (or `.tolist()`), when that is all it does."""
    names: set[str] = set()
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for line in statements:
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return set()
        for small in line.body:
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)):
                return set()
            name = small.targets[0].target.value
            value = small.value
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                    and value.func.attr.value in ("numpy", "tolist") and _rooted_at(value.func.value, name)):
                return set()
            names.add(name)
    return names


def _rooted_at(node: cst.BaseExpression, name: str) -> bool:
    """Whether a chain of calls, attributes and subscripts starts at the name."""
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return isinstance(node, cst.Name) and node.value == name


# One method per kind of statement (libcst's node classes are final: the exact type is the key).
_EXECUTORS: dict[type[cst.CSTNode], Callable[[StatementExecutor, Any, Env], None]] = {
    cst.Global: StatementExecutor._exec_global,
    cst.Nonlocal: StatementExecutor._exec_nonlocal,
    cst.SimpleStatementLine: StatementExecutor._exec_line,
    cst.SimpleStatementSuite: StatementExecutor._exec_line,
    cst.If: StatementExecutor._exec_if,
    cst.For: StatementExecutor._exec_for,
    cst.While: StatementExecutor._exec_while,
    cst.With: StatementExecutor._exec_with,
    cst.Try: StatementExecutor._exec_try,
    cst.TryStar: StatementExecutor._exec_try,
    cst.FunctionDef: StatementExecutor._define_function,
    cst.ClassDef: StatementExecutor._define_class,
    cst.Match: StatementExecutor._exec_match,
    cst.Expr: StatementExecutor._exec_expr,
    cst.Assert: StatementExecutor._exec_assert,
    cst.Assign: StatementExecutor._exec_assign,
    cst.AnnAssign: StatementExecutor._exec_ann_assign,
    cst.AugAssign: StatementExecutor._exec_aug_assign,
    cst.Return: StatementExecutor._exec_return,
}


def _annotated_fields(node: cst.ClassDef) -> list[str]:
    """`t: Tensor` lines of a class body, in order: a dataclass's or NamedTuple's constructor parameters."""
    fields = []
    for line in node.body.body:
        if isinstance(line, cst.SimpleStatementLine):
            for small in line.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    fields.append(small.target.value)
    return fields


def _is_object_base(base: cst.BaseExpression) -> bool:
    return isinstance(base, cst.Name) and base.value == "object"


_LEAVING = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _yielded_by_context_manager(context: cst.BaseExpression, entered: Value, env: Env) -> Value:
    """`with opened() as v` of a `@contextmanager` generator of this file: what it yields; of
    anything else, nothing known (what `__enter__` returns is not followed)."""
    if not (isinstance(context, cst.Call) and isinstance(context.func, cst.Name)):
        return EMPTY
    function = env.lookup(context.func.value)
    info = function.callee if function is not None else None
    if not isinstance(info, FunctionInfo) or not any(
            (decorator_name(decorator) or "").rsplit(".", 1)[-1] == "contextmanager" for decorator in info.node.decorators):
        return EMPTY
    return entered.element()


def _runs_once(body: cst.BaseSuite) -> bool:
    """A loop body that ends in `break` and leaves no other way (no other `break`, no `continue`):
    it runs once, on the first element, and what it binds is what the names hold afterwards, not
    that joined with what they held before (an empty loader is no use case). A body of a lone
    `break` (the notebook idiom for one batch: `for images, labels in loader: break`) is one."""
    statements = body.body
    last = statements[-1] if statements else None
    if not isinstance(last, cst.SimpleStatementLine) or not last.body or not isinstance(last.body[-1], cst.Break):
        return False
    leaving = [node for node in descendants(body, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda))
               if type(node) in (cst.Break, cst.Continue)]
    return len(leaving) == 1


def _always_leaves(body: cst.BaseSuite) -> bool:
    """Whether a block ends in `return`, `raise`, `continue` or `break` (so nothing falls through)."""
    statements = body.body
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return bool(last.body) and isinstance(last.body[-1], _LEAVING)
    if isinstance(last, cst.With):  # `with autocast(): return model(x)`
        return _always_leaves(last.body)
    if isinstance(last, cst.If):  # every branch leaves (an `if` without `else` may fall through)
        orelse = last.orelse
        return _always_leaves(last.body) and orelse is not None and (
            _always_leaves(orelse.body) if isinstance(orelse, cst.Else) else _always_leaves(cst.IndentedBlock(body=[orelse])))
    return isinstance(body, cst.SimpleStatementSuite) and isinstance(statements[-1], _LEAVING)


def _self_fields(targets: Sequence[cst.AssignTarget], self_name: str | None) -> Iterator[str]:
    """The fields of `self` an assignment writes (`self.a = ...`, `self.a, self.b = ...`)."""
    if self_name is None:
        return
    for target in targets:
        parts = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else [target.target]
        for part in parts:
            node = part.value if isinstance(part, cst.BaseElement) else part
            if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == self_name:
                yield node.attr.value
