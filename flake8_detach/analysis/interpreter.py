"""A small abstract interpreter over the libcst tree: the driver.

It walks each scope's statements in order, keeps an environment of what every name may hold (a
:class:`Value`), and records the value of each expression it evaluates and whether grad mode was
off there. Rules then ask these facts ("may this receiver require grad?") instead of guessing
from names.

Where things live (one concern per module):

- :mod:`.values`: the lattice of abstract values; :mod:`.semantics`: what library calls do;
- :mod:`.statements`: the walk over statements; :mod:`.expressions`: over expressions;
- :mod:`.calls`: calls (functions of this module, library functions, methods, modules);
- :mod:`.aliases`: names sharing storage; :mod:`.guards`: what tests and contexts tell;
- :mod:`.heap`: abstract containers named by the node that made them, filled by every write;
- :mod:`.summaries`: summaries per calling context and the worklist to a fixed point;
- :mod:`.scopes`: environments and records of functions and classes; :mod:`.facts`: the output.

How a value gets from models.py to train.py: the interpreter still walks one file, but when the
front knows the file's path it hands over a :class:`~.project.ProjectView` (analysis/project.py),
built from cheap ``ast`` summaries of the project's other files. Three questions go through it,
each at the one place where the file alone had no answer: a call whose qualified name resolves to
a project class that derives (at any depth, across files) from ``torch.nn.Module`` gives a module
(``calls.py``; a class of this file deriving from one is a module class, ``statements.py``); a
project function whose body returns or wraps ``torch.no_grad()`` / ``torch.inference_mode()``
joins ``extra_no_grad``, so ``@smart_inference_mode()`` turns grad off as ``@torch.no_grad()``
does; and a function that nothing in this file calls is judged by its callers in the project:
when every one of them runs with grad off (inside such a context or decorator, or inside a
function that itself only runs so), its parameters hold no grad tensor and its body runs with
grad off; otherwise a parameter that every call fills with a variable assigned with grad off
(or from a project function returning ``torch.from_numpy(...)`` / ``.detach()``) holds no grad
tensor either. A function with no call anywhere in the project stays caller-dependent. Values
cross files through exports (analysis/exports.py): what another file's functions and methods
return and its classes' fields hold, found by running this interpreter over that file once (for
callers it does not know), read for calls of its functions, instances of its classes, and
methods and fields a class of this file inherits from one of them.

It is deliberately simple: flow-insensitive inside expressions, branches merged by union, loops
run twice to reach a fixed point. Function bodies are analysed once per calling context (the grad
mode at the call and the kinds of the arguments; analysis/summaries.py), and re-analysed, with the
module's own statements, until no summary that something read grows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence

import libcst as cst
import libcst.matchers as m

from . import placement
from . import semantics as sem
from .aliases import AliasTracker
from .calls import CallEvaluator, rest_bindings, with_arguments
from .construction import InitMemo, switches_grad_off
from .exports import ForeignClass, stored_by_this_caller
from .expressions import ExpressionEvaluator
from .facts import Facts
from .guards import (
    Assumptions,
    GradOffNames,
    flag_key,
    flags_guarding_gpu_moves,
    grad_mode_of,
    is_flag_name,
)
from .heap import Heap
from .imports import ImportTable
from .project import ProjectView
from .scopes import ClassInfo, Env, FunctionInfo
from .statements import StatementExecutor, seen_under
from .summaries import MAX_MODULE_ROUNDS, MAX_RUNS, Summaries, grew
from .syntax import all_params, dotted, is_classmethod, is_none, is_static
from .uses import defines_data_and_grad, scalar_users
from .values import (
    EMPTY,
    GRAD_FLAGS,
    Flag,
    Value,
    passed_by,
    passed_tensors,
    seen_from,
    without_grad,
)

MAX_CALL_DEPTH = 8  # summaries analysed on demand from a call site, nested


def _unwanted_units(module: cst.Module, wanted: frozenset[str]) -> frozenset[int]:
    """The ids of the nodes of the top-level functions, and of the methods of top-level classes,
    whose definitions are not ``wanted``: their base records are skipped. A function nested in
    one (a hook, a closure) keeps its own: it exists only once a call analyses its definer."""
    found: set[int] = set()
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value not in wanted:
            found.add(id(statement))
        elif isinstance(statement, cst.ClassDef) and statement.name.value not in wanted:
            found.update(id(inner) for inner in statement.body.body if isinstance(inner, cst.FunctionDef))
    return frozenset(found)


class Interpreter:
    def __init__(self, module: cst.Module, imports: ImportTable,
                 extra_no_grad: frozenset[str] = frozenset(),
                 converting_functions: frozenset[str] = frozenset(),
                 project: ProjectView | None = None, exporting: bool = False,
                 wanted: frozenset[str] | None = None, source: str | None = None) -> None:
        self.module = module
        self.source = source  # the module's text, where the front has it (else printed when asked)
        self._default_device: bool | None = None  # default_device_may_move(), once asked
        self.imports = imports
        self.project = project
        if project is not None:  # what the file's imports name among the project's own modules
            imports.aliases.update(imports.relative)
            self.extra_no_grad = GradOffNames(extra_no_grad | project.local_no_grad_names(), project.turns_grad_off)
        else:
            self.extra_no_grad = GradOffNames(extra_no_grad)
        self.converting_functions = converting_functions
        self.facts = Facts(imports, module=module, default_device_may_move=self.default_device_may_move)
        # The state of the walk, shared by its parts.
        self.grad_enabled = True
        # A module statement `torch.set_grad_enabled(False)` ran (statements._switch_grad_mode): the
        # file's functions run with grad off for callers the file does not show.
        self.module_grad_off = False
        self.autocast = 0  # the dtype bits of the enclosing `torch.autocast` (0: none or unknown)
        self.in_autocast = False  # inside an enabled `torch.autocast` (of a dtype known or not)
        # Computing what the file exports (analysis/exports.py): every function is analysed for
        # callers the file does not show, called in the file or not; with `wanted`, only the
        # functions of those top-level definitions (analysis/demand.py).
        self.exporting = exporting  # computing what this file gives its importers (exports.py)
        self.summaries = Summaries(self.analyse_function, every_base=exporting, known_calls=self._known_calls,
                                   skipped=frozenset() if wanted is None else _unwanted_units(module, wanted))
        self._scalars: dict[cst.FunctionDef, frozenset[str]] = {}  # what each function uses as sizes
        self.init_memo = InitMemo()  # what each constructor writes (construction.py)
        # The module's names that functions assign through `global`, as the fields of a class
        # (joined over every write, their readers analysed again when one grows).
        self.module_names = ClassInfo("<module>", is_module=False)
        self.classes: list[ClassInfo] = []
        # Records of the module's own definitions, kept when a later round walks it again.
        self.definitions: dict[cst.CSTNode, FunctionInfo | ClassInfo] = {}
        # While computing exports: what this file passes to other project files' functions
        # (their export key -> parameter index or keyword -> the join of the values passed).
        self.outgoing: dict[str, dict[str, Value]] = {}
        # (kept site of an instance of another file's class, field) -> what its constructor stored
        # there from this file's arguments (`Trainer(model=net).model`: fields_stored_by)
        self.constructed_fields: dict[tuple[int, str], Value] = {}
        self._device_defaults_of: dict[cst.FunctionDef, list[tuple[str, Value]]] = {}  # _device_defaults
        self.current_function: FunctionInfo | None = None
        self.depth = 0
        self.top = -1  # index of the module statement being interpreted
        # Device flags whose value the walk knows here (`if use_gpu:` ... `else:` use_gpu is False).
        self.assumed: dict[str, bool] = {}
        # The parts of the walk; each reaches the others through this object.
        self.heap = Heap()
        self.aliases = AliasTracker(self)
        self.calls = CallEvaluator(self)
        self.expressions = ExpressionEvaluator(self)
        self.statements = StatementExecutor(self)
        self.eval = self.expressions.eval
        self.assign = self.statements.assign

    def default_device_may_move(self) -> bool:
        """Whether this file, or its project, may build factories' tensors off the CPU
        (analysis/placement.py); read once, where a rule first relies on ON_CPU."""
        if self._default_device is None:
            text = self.source if self.source is not None else self.module.code
            self._default_device = placement.default_device_may_move(text) or (
                self.project is not None and self.project.moves_default_device())
        return self._default_device

    def gpu_stops(self, operands: Sequence[Value], checks_devices: bool) -> int:
        """The STOPPED_ON_A_GPU bits of an operation's result (analysis/placement.py): its
        operands', and CPU_RUNS_ONLY where an operation that checks devices (``checks_devices``)
        is given a tensor on the CPU and one that may be on a GPU as its first two operands."""
        flags = placement.stopped_on_a_gpu(operands)
        if checks_devices and len(operands) >= 2 and placement.raises_on_a_gpu(operands[0], operands[1]) and (
                self.trusts_on_cpu()):
            flags |= Flag.CPU_RUNS_ONLY
        return flags

    def trusts_on_cpu(self) -> bool:
        """Whether ON_CPU, and a device a module was moved to, say where a GPU run stops: only where
        the program keeps its factories on the CPU."""
        return not self.default_device_may_move()

    @functools.cached_property
    def defines_own_autograd(self) -> bool:
        """A class of the file sets both `self.data` and `self.grad` (micrograd's `Value`): then
        `.grad`, `.backward()` and `.data` tell nothing about what an object is (uses.py)."""
        return defines_data_and_grad(self.module)

    @functools.cached_property
    def builds_higher_order_graphs(self) -> bool:
        """`backward(create_graph=True)` / `autograd.grad(..., create_graph=True)` somewhere in the
        file: backward hooks may then receive gradients that require grad."""
        return bool(m.findall(self.module, m.Arg(keyword=m.Name("create_graph"))))

    def exec_block(self, body: cst.BaseSuite | Sequence[cst.CSTNode], env: Env) -> None:
        self.statements.exec_block(body, env)

    # ----------------------------------------------------------------- driver
    def run(self) -> Facts:
        previous = self.heap.install()
        try:
            self._run()
        finally:
            self.heap.materialize_all(self.facts.values)  # the rules read the heap as the walk left it
            self.heap.uninstall(previous)
        return self.facts

    def release(self) -> None:
        """Break the walk's reference cycles once nothing will read its records (the flake8 front,
        whose diagnostics are plain values; an export, once encoded): records point to their
        scopes and back, and the parts of the walk to this object. The tree and the values are
        then freed by their reference counts when the front drops them, instead of being walked
        by the cycle collector, which cost the flake8 front about a second on timm. The facts
        stay readable; the records, classes and parts do not."""
        for info in list(self.summaries.all_records()):
            info.__dict__.clear()
        for cls in (*self.classes, self.module_names):
            cls.__dict__.clear()
        for obj in self.heap.objects.values():
            obj.readers.clear()
        for part in (self.calls, self.expressions, self.statements, self.aliases, self.summaries, self.heap):
            part.__dict__.clear()
        self.__dict__.clear()

    def _run(self) -> None:
        """Walk the module's statements, then run the summaries to a fixed point; walk the module
        again (keeping every record) while a return value its statements read has grown."""
        summaries = self.summaries
        for _ in range(MAX_MODULE_ROUNDS):
            summaries.module_dirty = False
            self.grad_enabled = True  # until a module statement turns it off, in each round
            env = Env()
            for index, statement in enumerate(self.module.body):
                self.top = index
                self.statements.exec_statement(statement, env)
            self._settle()
            if not summaries.module_dirty:
                break

    def _settle(self) -> None:
        """Analyse until nothing is queued: calls' summaries and what read a return value or a
        field that grew (queued as it grows), what read a container before another function
        filled it, then functions that escape the file's calls."""
        summaries = self.summaries
        while True:
            summaries.drain()
            stale, self.heap.stale = self.heap.stale, set()
            for record in summaries.all_records():  # read a container before another function filled it
                if record in stale:
                    summaries.analyse_again(record)
            for info in summaries.functions:  # read other than by calls (callbacks, `map(f, xs)`)
                if info.cls is None and not info.escaped and info.calls and info.references > info.calls:
                    info.escaped = True  # its own analysis is for the callers the file does not show
                    summaries.pending.append(info)
            if not summaries.pending:
                return

    def analyse_function(self, info: FunctionInfo) -> None:
        node = info.node
        info.state = "running"
        info.rerun = False
        info.runs += 1
        info.analysed_with = dict(info.arg_values)
        self_name = None
        env = Env(parent=info.env, cls=info.cls)
        params = list(node.params.posonly_params) + list(node.params.params)
        if info.cls is not None and params and not is_static(node):
            first = params.pop(0)
            self_name = first.name.value
            bound_to_instance = not is_classmethod(node)
            env.vars[self_name] = Value(Flag.MODULE if info.cls.is_module and bound_to_instance else Flag.NONE)
        autograd = self._autograd_method(info)
        if autograd and self_name is None and params:  # a @staticmethod's first parameter: the context
            self_name = params.pop(0).name.value
            env.vars[self_name] = Value(Flag.NONE)
        env.self_name = self_name
        enclosing = info.env
        if self_name is None and info.cls is None and enclosing is not None and enclosing.self_name is not None \
                and enclosing.self_name not in {param.name.value for param in all_params(node.params)}:
            # A closure in a method (a hook: `def store(grad): self.grads.append(grad)`) writes and
            # reads the instance's fields through the method's `self`.
            env.self_name, env.cls = enclosing.self_name, enclosing.cls
        judged = info.judged_by_callers
        quiet, grad_free = self._judged_by_project(info) if info.is_base else (False, frozenset())
        # Calls in other project files: what they pass, and (for a plain function nothing here
        # calls) all it gets, as calls in this file would say.
        incoming = self._incoming(info) if info.is_base else None
        judged = judged or (incoming is not None and info.cls is None and not info.calls and not info.escaped)
        incoming = incoming or {}
        if quiet:  # what they pass, seen with grad off: still tensors (`param.data`), none requiring grad
            incoming = {name: value.with_flags(remove=GRAD_FLAGS) for name, value in incoming.items()}
        # An export's results are seen from each call, where what the call passes replaces what came
        # from a parameter (values.seen_from): only the linted file's own walk asks which are numbers.
        numbers = self._scalar_users(node) if not judged and not self.exporting else frozenset()
        gradients = autograd and node.name.value == "backward"
        for param in params + list(node.params.kwonly_params):
            name = param.name.value
            declared = self.param_value(param) if not gradients else Value(Flag.TENSOR, origin=f"gradient '{name}'")
            if not info.is_base and name in info.arg_values and param.annotation is None and sem.is_device_name(name):
                declared = EMPTY  # the device a call passes, or the default it leaves, not the name's guess
            if judged or name in grad_free or name in numbers:
                # every call is in the file, or passes no grad tensor, or the body uses it as a size
                declared = declared.with_flags(remove=Flag.UNKNOWN_ARG)
            passed = info.arg_values.get(name, EMPTY).merge(incoming.get(name, EMPTY))
            # A context's calls all pass a tensor on the CPU, or none does (summaries.KEY_FLAGS):
            # the placeholder for unknown callers does not undo that must-fact here.
            on_cpu = passed.flags & Flag.ON_CPU if not info.is_base and name in info.arg_values else 0
            env.vars[name] = declared.merge(passed).with_flags(add=on_cpu)
        for star in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(star, cst.Param):
                rest = Value(Flag.CONTAINER, elem=Value(Flag.UNKNOWN_ARG))  # and what calls pass (calls._bind_rest)
                env.vars[star.name.value] = rest.merge(info.arg_values.get(star.name.value, EMPTY))
        saved = (self.grad_enabled, self.current_function, self.top, self.assumed, self.autocast, self.in_autocast)
        self.grad_enabled = info.grad_enabled and not quiet and not (info.is_base and self.module_grad_off) and not (
            autograd and not (gradients and self.builds_higher_order_graphs)) and not self._after_grad_off_constructor(info)
        self.autocast, self.in_autocast = 0, False  # one analysis serves every call site
        self.current_function = self.heap.reader = info
        self.top = info.top
        self.assumed = {}  # one analysis serves every call site, whatever flags hold there
        fields = self.statements.swap_fields([])
        try:
            self.exec_block(node.body, env)
        finally:
            self.statements.swap_fields(fields)
            self.grad_enabled, self.current_function, self.top, self.assumed, self.autocast, self.in_autocast = saved
            self.heap.reader = self.current_function
            self.summaries.finished(info)

    @staticmethod
    def _autograd_method(info: FunctionInfo) -> bool:
        """A method autograd calls of a custom autograd function (`forward`, `backward`, ...): its
        first parameter is the context, whatever its decorator, and it runs with grad off
        (`backward` with grad as `create_graph` says; semantics.AUTOGRAD_FUNCTION_BASES)."""
        return info.cls is not None and info.cls.autograd_function and info.node.name.value in sem.AUTOGRAD_FUNCTION_METHODS

    def _scalar_users(self, node: cst.FunctionDef) -> frozenset[str]:
        """The names a function uses as sizes and counts (uses.scalar_users), once per function."""
        found = self._scalars.get(node)
        if found is None:
            found = self._scalars[node] = scalar_users(node, self.imports)
        return found

    def _judged_by_project(self, info: FunctionInfo) -> tuple[bool, frozenset[str]]:
        """For the base record (callers the file does not show) of a top-level function or a
        method of a top-level class: whether every call of it in the project runs with grad off,
        and the parameters every call fills with values computed with grad off (analysis/project.py).
        The file's own calls have their own contexts, whatever the order they are met in."""
        name = self.unit_name(info) if self.project is not None and self.project.values else None
        if self.project is None or name is None:
            return False, frozenset()
        return self.project.callers_without_grad(name)

    def _known_calls(self, info: FunctionInfo) -> frozenset[str] | None:
        """The file's own top-level names a top-level function calls, from the project index's
        summary of this file (None: not known there, so the walk looks)."""
        name = self.unit_name(info) if self.project is not None else None
        return None if name is None or self.project is None else self.project.local_calls(name)

    def _incoming(self, info: FunctionInfo) -> dict[str, Value] | None:
        """What calls in other project files pass to a top-level function or method, None where
        the project does not call it (analysis/exports.py)."""
        name = self.unit_name(info) if self.project is not None and self.project.values else None
        if name is None or self.project is None:
            return None
        return self.project.incoming(name, info.parameter_names()[0])

    def unit_name(self, info: FunctionInfo) -> str | None:
        """"f" for a top-level function, "C.m" for a method of a top-level class, else None."""
        if not 0 <= info.top < len(self.module.body):
            return None
        top = self.module.body[info.top]
        if top is info.node:
            return info.node.name.value
        if info.cls is not None and isinstance(top, cst.ClassDef) and top.name.value == info.cls.name and any(
                statement is info.node for statement in top.body.body):
            return f"{info.cls.name}.{info.node.name.value}"
        return None

    def call_function(self, info: FunctionInfo, call: cst.CSTNode, positional: list[Value],
                       keywords: dict[str, Value]) -> Value:
        """Bind the call's arguments into the summary of `info` for this calling context, analyse
        it if that is new or its inputs grew, and return what it returns.

        `call` is the node that calls: a `Call`, an attribute for a property read (`client.loss`),
        a subscript for `__getitem__` (`bag[i]`), the iterable of a loop for `__iter__`.
        """
        names, keyword_names = info.parameter_names()
        info.calls += 1
        if isinstance(call, cst.Call) and any(arg.star for arg in call.args):
            info.escaped = True  # `f(*args)`: which parameter gets what is not in the file
        bound = list(zip(names, positional)) + [(k, v) for k, v in keywords.items() if k in keyword_names]
        passed = {name for name, _ in bound}
        bound += [(name, value) for name, value in self._device_defaults(info) if name not in passed]
        rest = rest_bindings(info, call, positional, keywords) if isinstance(call, cst.Call) else []
        summary = self.summaries.context_for(info, bound + rest, self.grad_enabled)
        changed = False
        for name, value in [*((name, passed_by(value, call)) for name, value in bound), *rest]:
            old = summary.arg_values.get(name, EMPTY)
            new = old.merge(value)
            if grew(old, new):
                summary.arg_values[name] = new
                changed = True
        ready = summary.state in ("new", "stale") or (changed and summary.state == "done" and summary.runs < MAX_RUNS)
        if ready and self.depth < MAX_CALL_DEPTH:
            self.depth += 1
            try:
                self.analyse_function(summary)
            finally:
                self.depth -= 1
        elif ready and summary.state != "stale":
            summary.state = "stale" if summary.state == "done" else summary.state
            self.summaries.pending.append(summary)  # too deep now: analysed from the queue
        returned = self.summaries.read(summary, self.current_function)
        # What came from the parameters is what this call passed, not "unknown".
        return seen_from(returned, lambda: passed_tensors(value for _, value in bound))

    def _device_defaults(self, info: FunctionInfo) -> list[tuple[str, Value]]:
        """The parameters named as a device whose default names one (`device="cpu"`,
        `device=torch.device("cuda")`), with it: a call that leaves one binds it, so `x.to(device)`
        in the callee moves `x` where the default says, not where the name `device` suggests
        (param_value's guess is for callers the file does not show). Read once per function."""
        found = self._device_defaults_of.get(info.node)
        if found is not None:
            return found
        found = self._device_defaults_of[info.node] = []
        params = info.node.params
        for param in (*params.params, *params.kwonly_params):
            default = param.default
            if default is None or not sem.is_device_name(param.name.value):
                continue
            if isinstance(default, cst.SimpleString) or (
                    isinstance(default, cst.Call) and self.imports.resolve(default.func) == "torch.device"):
                value = self.eval(default, info.env)
                if value.has(Flag.CPU_SPEC | Flag.DEVICE_SPEC):
                    found.append((param.name.value, value))
        return found

    def note_outgoing(self, qualified: str, positional: list[Value], keywords: dict[str, Value]) -> None:
        """A call of another project file's function: remember what it passes (grad mode
        applied: a helper called with grad off runs with grad off), for that file's analysis."""
        key = self.project.outgoing_key(qualified) if self.project is not None else None
        if key is not None:
            self._note_outgoing(key, positional, keywords)

    def note_outgoing_method(self, name: str, positional: list[Value], keywords: dict[str, Value]) -> None:
        """`logger.log_validation(...)` on an object of a class the file cannot tell, while this
        file's exports are computed: what it passes goes to the project's one method of that name
        (Project.unique_method), as a call of it would."""
        project = self.project
        key = project.unique_method_key(name) if project is not None and not project.values else None
        if key is not None:
            self._note_outgoing(key, positional, keywords)

    def _note_outgoing(self, key: str, positional: list[Value], keywords: dict[str, Value]) -> None:
        passed = self.outgoing.setdefault(key, {})
        for parameter, value in [*((str(index), value) for index, value in enumerate(positional)), *keywords.items()]:
            seen = value if self.grad_enabled else value.with_flags(remove=GRAD_FLAGS)
            passed[parameter] = passed.get(parameter, EMPTY).merge(seen)

    def foreign_member(self, owner: ClassInfo | ForeignClass, name: str, table: str) -> Value | None:
        """A member of a class of another project file, or one a class of this file inherits from
        such a class: a method's return value ("returns") or a field ("fields"); for an instance
        this file made, a field holds what its constructor stored from the call's arguments too.
        An entry point's export reads what methods return, as it reads what functions return."""
        project = self.project
        if project is None or not (project.values or project.returns and table == "returns"):
            return None
        if isinstance(owner, ForeignClass) and owner.site is not None and table == "fields":
            constructed = self.constructed_fields.get((owner.site, name))
            if constructed is not None:
                return stored_by_this_caller(self.foreign_member(ForeignClass(owner.qualified), name, table), constructed)
        if isinstance(owner, ForeignClass) and owner.made_elsewhere and table == "fields":
            exported = self.foreign_member(ForeignClass(owner.qualified), name, table)
            constructed = project.constructed_field(owner.qualified, name)
            if constructed is not None:
                return stored_by_this_caller(exported, constructed)
            if exported is not None and exported.flags == Flag.UNKNOWN_ARG and _blank_structure(exported):
                return None  # "what some caller passed": the instance's own kind says more (`model.seq2seq`)
            return exported
        for qualified in _foreign_owners(owner):
            found = project.member(qualified, name, table)
            if found is not None:
                return self._seen_from_instance(owner, found) if table == "fields" else found
        return None

    def _seen_from_instance(self, owner: ClassInfo | ForeignClass, field: Value) -> Value:
        """A field that a method of another file's class computes from its parameters
        (`self.disp_est = [d[:, 0] for d in input]` in a loss's `forward`), read from an instance
        this file made: what came from the parameters is what this file passed to the instance
        (`calls._keep_passed`), as for what its methods return."""
        if not isinstance(owner, ForeignClass) or owner.site is None:
            return field
        stored = self.heap.elements_of((owner.site,))
        return with_arguments(field, [stored]) if stored.flags else field

    def foreign_property(self, owner: ForeignClass, name: str) -> Value | None:
        """`generator.evaluate_data` of a class of another project file whose `evaluate_data` is
        a property: what its getter returns there."""
        project = self.project
        if project is None or not (project.values or project.returns) or not project.is_property(owner.qualified, name):
            return None
        return self.foreign_member(ForeignClass(owner.qualified), name, "returns")

    def foreign_getattr(self, owner: ForeignClass) -> bool:
        """Whether a class of another project file answers reads of attributes its instances lack
        (`__getattr__`, here or in a project base: `DataParallel` subclasses that hand them to
        the wrapped model)."""
        return self.project is not None and self.project.answers_missing_attributes(owner.qualified)

    def foreign_buffer(self, owner: ClassInfo | ForeignClass, name: str) -> bool:
        """Whether a class of another project file (or a base there of a class of this file)
        registers a buffer `name`: a tensor of the module that is no parameter."""
        project = self.project
        if project is None or not project.values:
            return False
        return any(project.registers_buffer(qualified, name) for qualified in _foreign_owners(owner))

    def fields_stored_by(self, classes: Iterable[str], method: str, positional: list[Value],
                         keywords: dict[str, Value]) -> Iterator[tuple[str, Value]]:
        """(field, value) for each field the method `method` of another project file's class (the
        first of `classes` that has it) stores a parameter in, given what a call passes."""
        project = self.project
        if project is None or not project.values:
            return
        for qualified in classes:
            found = project.parameter_fields(qualified, method)
            if found is None:
                continue
            parameters, fields = found
            bound = dict(zip(parameters, positional))
            bound.update(keywords)
            for field, parameter in fields.items():
                value = bound.get(parameter)
                if value is not None and value.flags:
                    yield field, value
            return

    def param_value(self, param: cst.Param) -> Value:
        name = param.name.value
        if param.annotation is not None:
            qualified = self._annotation_name(param.annotation.annotation)
            if qualified in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return Value(Flag.TENSOR | Flag.UNKNOWN_ARG, origin=f"parameter '{name}'")
            if qualified is not None and sem.is_nn_module_class(qualified):
                return Value(Flag.MODULE)
            if qualified in sem.DATA_LOADERS:  # `loader: DataLoader`: batches of tensors, as a loader made here
                return Value(Flag.CONTAINER, elem=Value(Flag.TENSOR, origin="batch"))
            project = self.project
            if qualified is not None and project is not None and project.is_class(qualified) \
                    and not project.is_module_class(qualified):
                # `dataset: BaseDataset`: an instance of a project class or of a subclass of it.
                return Value(Flag.NOT_TENSOR, callee=ForeignClass(qualified, declared=True))
            return Value(Flag.NOT_TENSOR)  # `s: StorageDesc`, `n: int`: declared not a tensor
        if sem.is_device_name(name):
            return Value(Flag.DEVICE_SPEC)
        if param.default is not None and not is_none(param.default):
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

    def _after_grad_off_constructor(self, info: FunctionInfo) -> bool:
        """A method (not the constructor) of an object whose constructor switched grad off for the
        process (construction.switches_grad_off): it runs with grad off, whoever calls it."""
        return info.cls is not None and info.node.name.value != "__init__" and switches_grad_off(
            info.cls, self.init_memo, self.grad_switch)

    def grad_switch(self, call: cst.Call) -> bool | None:
        """The mode `torch.set_grad_enabled(mode)` sets, or None for any other call (or a mode
        the file cannot tell); a statement of a body (statements.py) or of a constructor's."""
        if self.imports.resolve(call.func) not in sem.SET_GRAD_ENABLED:
            return None
        return self.grad_mode_of(call)

    def grad_mode_of(self, expr: cst.BaseExpression) -> bool | None:
        """False if the context/decorator turns grad off, True if it turns it on."""
        return grad_mode_of(expr, self.imports, self.extra_no_grad)

    def device_flag(self, test: cst.BaseExpression) -> str | None:
        """The device flag a test reads (`use_gpu`, `args.cuda`), or None; the test is evaluated."""
        key = dotted(test) if isinstance(test, (cst.Name, cst.Attribute)) else None
        if key is None:
            return None
        if self.facts.value_of(test).has(Flag.DEVICE_FLAG) or is_flag_name(key) or key in self.flags_by_use:
            return key
        return None

    @functools.cached_property
    def flags_by_use(self) -> frozenset[str]:
        """Tests the file makes GPU moves under (`if self.gpu_mode: self.G.cuda()`): device flags
        whatever their names (guards.flags_guarding_gpu_moves)."""
        return flags_guarding_gpu_moves(self.module)

    def moved_here(self, moved: Value) -> Value:
        """A value just moved to a GPU, as seen where it was moved: under `if use_gpu:` its DEVICE
        needs that flag wherever the value goes (a field, a module moved in place, a container),
        not only in the names the branch leaves behind (StatementExecutor._assuming)."""
        if not self.assumed:
            return moved
        key, truth = next(reversed(self.assumed.items()))  # the innermost test (a value keeps one flag)
        return moved.guarded_by(flag_key(key, truth))

    def assuming(self, assumptions: Assumptions, branch: Callable[[], Value | None]) -> Value | None:
        """Run `branch` knowing these device flags' values; what it returns is seen accordingly."""
        if not assumptions:
            return branch()
        saved = self.assumed
        self.assumed = {**saved, **dict(assumptions)}
        try:
            result = branch()
        finally:
            self.assumed = saved
        return None if result is None else seen_under(result, assumptions)

    def locate(self, *nodes: cst.CSTNode) -> None:
        """Remember the module statement of nodes a rule may report (see Facts.top_statements)."""
        top_statements = self.facts.top_statements
        for node in nodes:
            top_statements[node] = self.top

    def grad_mode_result(self, value: Value) -> Value:
        """A result computed while grad is off does not require grad, nor does any item or element
        of it (`pred, info = model.update(x)` under `no_grad()`: `info["loss"]` neither)."""
        return value if self.grad_enabled else without_grad(value)


def _blank_structure(value: Value) -> bool:
    return value.items is None and value.elem is None and not value.objs and value.callee is None


def _foreign_owners(owner: ClassInfo | ForeignClass) -> tuple[str, ...]:
    """The classes of other project files to ask about a member: the class itself, or the bases
    there of a class of this file."""
    return (owner.qualified,) if isinstance(owner, ForeignClass) else owner.foreign_bases
