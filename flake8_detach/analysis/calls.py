"""What calls evaluate to: functions of this module, library functions, methods and modules.

The walk hands every call here; the knowledge of torch, NumPy, matplotlib and pandas comes from
the tables in :mod:`.semantics`, and functions defined in the module are analysed by the
:class:`Interpreter` with the values this call passes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from . import array_facts, distributions, frames, placement, ranks
from . import dtypes as dt
from . import semantics as sem
from .distributions import Distribution
from .exports import ForeignClass, stored_by_this_caller
from .expressions import LambdaBody, constant_key, rebinds_import
from .facts import ArrayHandover, ConvertingCall, DtypeClash
from .freezing import FROZEN_LOADERS, class_body_adds_no_parameters, loader_freezes
from .project import THIS_MODULE
from .scopes import ClassInfo, Env, FunctionInfo
from .syntax import (
    dotted,
    is_classmethod,
    is_name,
    is_static,
    keyword_is_false,
    literal_bool,
    returns_no_value,
    string_value,
)
from .syntax import receiver_name as syntax_receiver_name
from .tensor_methods import TENSOR_METHODS
from .uses import TENSOR_ONLY_RESULTS
from .values import (
    ARRAY_LAYOUT,
    DTYPES,
    EMPTY,
    GRAD_FLAGS,
    KEYED_CONTAINERS,
    TENSOR_FLOW,
    Flag,
    Value,
    merge_all,
    module_item,
    passed_by,
    passed_device,
    passed_tensors,
    seen_from,
)

if TYPE_CHECKING:
    from .interpreter import Interpreter

# What makes a module's field hold parameters for `_holds_no_parameters`: grad, or a value the
# analysis cannot see the origin of (a caller's argument, an unknown object, a guess).
HOLDING_PARAMETERS = (Flag.GRAD | Flag.UNKNOWN_ARG | Flag.UNKNOWN_OBJECT | Flag.MAYBE_PARAMETER
                      | Flag.MODULE_HINT)


class CallEvaluator:
    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self.facts = interp.facts
        self.imports = interp.imports
        self._subclasses_of: dict[tuple[int, int], list[ClassInfo]] = {}  # see _subclasses

    @staticmethod
    def _may_write_self(node: cst.Call, env: Env) -> bool:
        """A call of a method of `self` (or `super()`'s), or one that is given `self`."""
        if env.self_name is None:
            return False
        func = node.func
        while isinstance(func, cst.Attribute):
            func = func.value
        if isinstance(func, cst.Name) and func.value == env.self_name or isinstance(func, cst.Call):
            return True  # `self.reset()`, `self.head.reset()`, `super().__init__()`, `make()()`
        return any(isinstance(arg.value, cst.Name) and arg.value.value == env.self_name for arg in node.args)

    def eval_call(self, node: cst.Call, env: Env) -> Value:
        func = node.func
        positional: list[Value] = []
        keywords: dict[str, Value] = {}
        for arg in node.args:
            value = self.interp.eval(arg.value, env)
            if arg.keyword is not None:
                keywords[arg.keyword.value] = value
                if arg.keyword.value == "out":
                    self.facts.parents[arg.value] = node  # `torch.add(a, b, out=x.data)` writes through `.data`
            elif arg.star:
                positional.append(value.element())
            else:
                positional.append(value)
        qualified = self.imports.resolve(func)
        if qualified is not None and rebinds_import(func, env):
            qualified = None  # `import model` ... `model = model.Net()`: `model(x)` calls the network
        may_write_self = qualified is None and self._may_write_self(node, env)
        if may_write_self and not isinstance(func, cst.Attribute):
            self.interp.statements.forget_fields()
        written = dotted(func)
        if qualified in self.interp.converting_functions or written in self.interp.converting_functions:
            self.facts.converting_calls.append(ConvertingCall(node, written or str(qualified), "convert"))
        if qualified is not None:
            if isinstance(func, cst.Attribute) and env.cls is not None and env.self_name is not None and positional:
                owner = qualified.rpartition(".")[0]
                if owner in env.cls.foreign_bases and is_name(node.args[0].value, env.self_name):
                    # `Configured.__init__(self, config)`: the base's method on this object, as `super()`'s
                    self._store_foreign_fields(env.cls, func.attr.value, positional[1:], keywords)
            self.facts.values[func] = EMPTY
            self.interp.locate(func)
            if isinstance(func, cst.Attribute):
                self.facts.attributes[func.attr.value].append(func)
                self.interp.locate(func.attr)
            self.interp.aliases.note_library_writes(qualified, node, env)
            return self.interp.grad_mode_result(self._call_library(qualified, node, positional, keywords))
        if isinstance(func, cst.Attribute):
            self.facts.attributes[func.attr.value].append(func)
            self.interp.locate(func, func.attr)
            self.facts.parents[func.value] = func
            self.facts.parents[func] = node
            method = func.attr.value
            self.facts.method_calls[method].append(node)
            receiver = self.interp.eval(func.value, env)
            self.facts.values[func] = receiver
            if may_write_self and not _tensor_or_array(receiver):
                # `self.reset()`, `self.head.reset()`; not `self.z.cpu()` nor `np.array(x).reshape(...)`
                self.interp.statements.forget_fields()
            base_method = self._super_method(func.value, method, env)
            if base_method is not None:  # `super().__init__(t)`: the base class's method, on this object
                return self.interp.grad_mode_result(self._call_defined(base_method, node, positional, keywords))
            if _is_super(func.value, env) and env.cls is not None and env.cls.foreign_bases:
                self._store_foreign_fields(env.cls, method, positional, keywords)
            if isinstance(func.value, cst.Name):
                if sem.writes_in_place(method):
                    self.interp.aliases.note_write(func.value, env)
                if func.value.value == env.self_name and env.cls is not None:
                    buffer = _string_argument(node) if method == "register_buffer" else None
                    if buffer is not None:
                        env.cls.buffers.add(buffer)  # `self.pe` is a tensor of the module that is no parameter
                    info = env.cls.method(method)
                    if info is not None:
                        returned = self._call_defined(info, node, positional, keywords)
                        for override in self._overrides(env.cls, method, info):
                            returned = returned.merge(self._call_defined(override, node, positional, keywords))
                        elsewhere = self._overrides_elsewhere(env.cls, method, info)
                        if elsewhere is not None:
                            returned = returned.merge(with_arguments(elsewhere, [*positional, *keywords.values()]))
                        return self.interp.grad_mode_result(returned)
                    known = self.interp.summaries.read_field(env.cls, method, self.interp.current_function)
                    if known is not None:
                        if _used_as_submodule(env.cls, known, positional):
                            known = Value(Flag.MODULE, origin=f"submodule '{method}'")
                            self.interp.summaries.write_field(env.cls, method, known)
                        return self.interp.grad_mode_result(self._call_value(known, positional, keywords, method, node))
                    foreign = self._foreign_call(env.cls, method, node, positional, keywords)
                    if foreign is not None:  # `self.sample()` defined by a base class of another file
                        return foreign
            info = instance_method(receiver, method)  # `client.score(x)`: the class's method
            if info is not None:
                return self.interp.grad_mode_result(self._call_defined(info, node, positional, keywords))
            if receiver.has(Flag.INSTANCE) and isinstance(receiver.callee, ClassInfo):
                # `net.decoder(x)`: a field of an instance of a class of this file (a record's
                # too) that holds a module or a function is called
                known = self.interp.summaries.read_field(receiver.callee, method, self.interp.current_function)
                if known is not None and (known.flags & (Flag.MODULE | Flag.FUNCTION) or known.callee is not None):
                    return self.interp.grad_mode_result(self._call_value(known, positional, keywords, method, node))
            if isinstance(receiver.callee, ClassInfo) and not receiver.has(Flag.INSTANCE):
                info = receiver.callee.method(method)  # `Util.scale(x)`: a static or class method
                if info is not None and (is_static(info.node) or is_classmethod(info.node)):
                    return self.interp.grad_mode_result(self._call_defined(info, node, positional, keywords))
            if isinstance(receiver.callee, (ClassInfo, ForeignClass)):
                foreign = self._foreign_call(receiver.callee, method, node, positional, keywords, receiver)
                if foreign is not None:  # `buffer.sample()` of a class of another project file
                    return foreign
            if receiver.has(Flag.AXES) and method in sem.PLOTTING:
                self.facts.converting_calls.append(ConvertingCall(node, written or method, "convert"))
            if receiver.has(Flag.SKLEARN_ESTIMATOR) and method in sem.SKLEARN_CONVERTING_METHODS:
                named = written if isinstance(func.value, (cst.Name, cst.Attribute)) and written else f".{method}"
                self.facts.converting_calls.append(ConvertingCall(node, named, "convert"))
                if method == "fit":
                    return receiver  # `fit` returns the estimator
                if method in frames.TRANSFORMING_METHODS:
                    return frames.transformed(receiver, positional)
                return Value(Flag.NDARRAY)
            if method in sem.AXES_FACTORIES and method not in ("axes",):
                return Value(Flag.AXES)
            if _unknown(receiver) and not receiver.has(Flag.MODULE_HINT):
                self.interp.note_outgoing_method(method, positional, keywords)  # `logger.log_validation(y_pred)`
            result = self._call_method(receiver, method, node, positional, keywords, env)
            return self.interp.grad_mode_result(result)
        callee = self.interp.eval(func, env)
        if callee.has(Flag.FUNCTION) and isinstance(callee.callee, FunctionInfo):
            return self.interp.grad_mode_result(self._call_defined(callee.callee, node, positional, keywords))
        if isinstance(callee.callee, ClassInfo) and not callee.has(Flag.INSTANCE):  # the class, not an instance
            return self._instantiate(callee, callee.callee, node, positional, keywords)
        if isinstance(func, cst.Name):
            builtin = self._call_builtin(func.value, callee, positional, env, node)
            if builtin is not None:
                return builtin
        return self.interp.grad_mode_result(self._call_value(callee, positional, keywords, written, node))

    def _default_dict(self, node: cst.Call) -> Value:
        """`history = defaultdict(list)`: a dict whose missing keys give a fresh list (one heap
        object per key the file spells, heap.py; one for the keys it computes), so
        `history["acc"].append(acc)` then `plt.plot(history["acc"])` reads what was appended,
        and `history["loss"]` does not."""
        heap = self.interp.heap
        made = heap.allocate(node, Value(Flag.CONTAINER), {})
        factory = node.args[0].value if node.args and node.args[0].keyword is None else None
        if isinstance(factory, cst.Name) and factory.value in ("list", "set", "dict") and \
                self.imports.resolve(factory) is None:
            heap.objects[id(node)].default = factory.value  # a key the file spells: its own container
            fresh = heap.allocate(factory, Value(Flag.CONTAINER), {} if factory.value == "dict" else None)
            heap.add_element(made.objs, fresh)  # a key it computes may be any: every list and this one
        return made

    def _namedtuple_class(self, node: cst.Call) -> Value:
        """`collections.namedtuple("Pair", "a b")`: a record class of this file whose fields hold
        what its calls pass (as a `typing.NamedTuple` class statement's do)."""
        values = [arg.value for arg in node.args if arg.keyword is None]
        name = _string(values[0]) if values else None
        spec = values[1] if len(values) > 1 else None
        fields: list[str | None]
        if isinstance(spec, (cst.List, cst.Tuple)):
            fields = [_string(element.value) for element in spec.elements]
        else:
            text = _string(spec) if spec is not None else None
            fields = list(text.replace(",", " ").split()) if text is not None else [None]
        known = [field for field in fields if field is not None]
        if name is None or len(known) != len(fields):
            return EMPTY  # names the file does not spell
        info = self.interp.statements.record_class(node, name, known)
        return Value(Flag.PLAIN_CLASS, callee=info)

    def _super_method(self, receiver: cst.BaseExpression, method: str, env: Env) -> FunctionInfo | None:
        """`super().m` in a method of a class whose base (of this file) defines `m`."""
        if not _is_super(receiver, env):
            return None
        current = self.interp.current_function
        cls = current.cls if current is not None else None
        for base in cls.local_bases if cls is not None else ():
            found = base.method(method)
            if found is not None:
                return found
        return None

    def _store_foreign_fields(self, cls: ClassInfo, method: str, positional: list[Value],
                              keywords: dict[str, Value]) -> None:
        """`super().__init__(config, model)` where the base class is another project file's and
        stores its parameters in fields (`self.model = model`): this class's fields hold what this
        call passes, joined with what that file's export says they hold otherwise (less "from an
        unknown caller": the caller is this call)."""
        for field, value in self.interp.fields_stored_by(cls.foreign_bases, method, positional, keywords):
            exported = self.interp.foreign_member(cls, field, "fields")
            self.interp.summaries.write_field(cls, field, stored_by_this_caller(exported, value))

    def _foreign_call(self, owner: ClassInfo | ForeignClass, method: str, node: cst.Call,
                      positional: list[Value], keywords: dict[str, Value], receiver: Value = EMPTY) -> Value | None:
        """A method (or a field holding a module) of a class of another project file, or of a
        base class there: what that file's interpreter found it returns (analysis/exports.py).

        What it found came from parameters of unknown origin (`UNKNOWN_ARG`) comes from what this
        call passes and, for an instance this file made, from what the file passed to any of its
        methods: `box.add(t)` then `box.last()` gives `t` back (the export cannot say which
        method stored what, so every value passed to the object is joined). While this file's
        exports are computed, what the call passes is noted for the method's own file, as for a
        function's (`ema.restore(model.parameters())`: the method's parameter holds parameters)."""
        project = self.interp.project
        if isinstance(owner, ForeignClass) and project is not None and not project.values:
            self.interp.note_outgoing(f"{owner.qualified}.{method}", positional, keywords)
        self._keep_passed(receiver, positional, keywords)
        if isinstance(owner, ForeignClass) and owner.declared and project is not None:
            returned = project.subclass_returns(owner.qualified, method)
        else:
            returned = self.interp.foreign_member(owner, method, "returns")
        if returned is not None:
            site = receiver.callee.site if isinstance(receiver.callee, ForeignClass) else None
            stored = self.interp.heap.elements_of((site,)) if site is not None else EMPTY
            return self.interp.grad_mode_result(with_arguments(returned, [*positional, *keywords.values(), stored]))
        field = self.interp.foreign_member(owner, method, "fields")
        if field is not None:
            return self.interp.grad_mode_result(self._call_value(field, positional, keywords, method, node))
        return None

    def _project_module(self, qualified: str, positional: list[Value], keywords: dict[str, Value],
                        node: cst.Call | None = None) -> Value:
        """An instance of a module class of another project file. One whose file says it holds no
        parameters but what its constructor is given (`parameter_free_for_its_arguments`), given
        none here, is frozen: its output requires grad only where its input does (a label
        smoothing or a positional encoding of a buffer)."""
        project = self.interp.project
        frozen = project is not None and project.values and not any(
            self._field_holds_parameters(value, frozenset()) for value in (*positional, *keywords.values())
        ) and project.parameter_free(qualified)
        # While the file's own values are read, a heap object (named by the call's function node)
        # keeps what the file passes to the instance, for the fields its methods compute from it.
        kept = next(iter(self.interp.heap.allocate(node.func, EMPTY).objs)) if node is not None and project is not None \
            and project.values else None
        return Value(Flag.MODULE | (Flag.FROZEN if frozen else 0), callee=ForeignClass(qualified, kept))

    def _keep_passed(self, instance: Value, positional: list[Value], keywords: dict[str, Value]) -> None:
        """The tensors passed to an instance of another file's class, kept in its heap object."""
        if isinstance(instance.callee, ForeignClass) and instance.callee.site is not None:
            passed = passed_tensors([*positional, *keywords.values()])
            if passed.flags:
                self.interp.heap.add_element((instance.callee.site,), passed)

    def _call_defined(self, info: FunctionInfo, node: cst.CSTNode, positional: list[Value],
                      keywords: dict[str, Value]) -> Value:
        """A function or method of this file; a generator's call is the iterable of what it yields."""
        returned = self.interp.call_function(info, node, positional, keywords)
        if not self.interp.heap.is_generator(info.node):
            return returned
        generator = self.interp.heap.generator_call(info.node)
        yielded = generator.element()
        if not yielded.has(Flag.UNKNOWN_ARG):
            return generator
        # Like a return value: what came from the parameters is what this call passed.
        return Value(Flag.CONTAINER, elem=with_arguments(yielded, [*positional, *keywords.values()]))

    def _batch(self, node: cst.Call, positional: list[Value], keywords: dict[str, Value]) -> Value:
        """What iterating `DataLoader(dataset)` gives: tensors without grad, and with the default
        `collate_fn` the dtype of the dataset's items (`__getitem__` of a class of this file, the
        rows of a `TensorDataset`, the elements of a list), structure kept: a float64 array item
        gives a float64 batch (torch 2.13's `default_collate`)."""
        unknown = Value(Flag.TENSOR, origin="batch")
        if "collate_fn" in keywords or len(positional) > 6:  # a collate function of its own (7th)
            return unknown
        dataset = positional[0] if positional else keywords.get("dataset", EMPTY)
        item: Value | None = None
        if dataset.has(Flag.INSTANCE) and isinstance(dataset.callee, ClassInfo):
            item = self.item(dataset, node, EMPTY)
        elif dataset.has(Flag.CONTAINER) and not dataset.is_tensor_like:
            item = dataset.element()
        return unknown if item is None else self._collated(item, node)

    def _collated(self, item: Value, node: cst.Call, depth: int = 0) -> Value:
        """`default_collate` of items like `item`: a tuple of batches for a tuple, a dict of
        batches (a heap object of the loader's call) for a dict with constant keys, a tensor with
        the item's dtype for an array or a tensor (NumPy scalars too), else a tensor of unknown
        dtype. Only what the item shows: a batch never requires grad here, as before."""
        if item.items is not None and depth < 4:
            parts = tuple(self._collated(part, node, depth + 1) for part in item.items)
            return Value(Flag.CONTAINER, items=parts, elem=merge_all(list(parts)))
        fields = self.interp.heap.dict_items(item.objs) if depth == 0 and item.objs else None
        if fields:
            batches = {key: self._collated(value, node, depth + 1) for key, value in fields.items()}
            return self.interp.heap.allocate(node, Value(Flag.CONTAINER, elem=merge_all(list(batches.values()))),
                                             batches)
        known = item.flags & (Flag.NDARRAY | TENSOR_FLOW) and not item.flags & Flag.CONTAINER
        return Value(Flag.TENSOR | (item.dtype if known else 0), origin="batch")

    def _instantiate(self, callee: Value, cls: ClassInfo, node: cst.Call, positional: list[Value],
                     keywords: dict[str, Value]) -> Value:
        """`Client(model)`: runs `__init__` with the arguments (its `self.x = ...` fill the class's
        fields) and gives an instance whose method calls go to the class's methods."""
        init = cls.method("__init__")
        if init is not None:
            self.interp.call_function(init, node, positional, keywords)
        else:
            self._set_record_fields(cls, positional, keywords)
        kind = self._call_value(callee, positional, keywords, cls.name)
        return Value(kind.flags | Flag.INSTANCE, callee=cls)

    def _set_record_fields(self, cls: ClassInfo, positional: list[Value], keywords: dict[str, Value]) -> None:
        """`Record(t)` of a dataclass or NamedTuple: its fields hold what the call passes."""
        fields = self.interp.heap.record_fields.get(cls)
        if fields is None:
            return
        for name, value in [*zip(fields, positional), *((k, v) for k, v in keywords.items() if k in fields)]:
            self.interp.summaries.write_field(cls, name, value)

    def _call_value(self, callee: Value, positional: list[Value], keywords: dict[str, Value],
                    name: str | None, node: cst.Call | None = None) -> Value:
        if callee.has(Flag.MODULE_CLASS):
            return Value(Flag.MODULE)
        if isinstance(callee.callee, PartialCall) and node is not None:  # `double(x)` of a partial
            bound = callee.callee
            return self._call_defined(bound.function, node, [*bound.positional, *positional],
                                      {**dict(bound.keywords), **keywords})
        dunder_call = self._dunder_call(callee)
        if dunder_call is not None and node is not None:  # `loss_fn(out, y)`: the class's `__call__`
            return self._call_defined(dunder_call, node, positional, keywords)
        if isinstance(callee.callee, ForeignClass) and not callee.has(Flag.MODULE) and node is not None:
            # The same for an instance of another project file's class.
            foreign = self._foreign_call(callee.callee, "__call__", node, positional, keywords, callee)
            if foreign is not None:
                return foreign
        if callee.has(Flag.PLAIN_CLASS):
            return Value(Flag.NOT_TENSOR)  # an instance of a plain class of this file
        if callee.has(Flag.MODULE | Flag.MODULE_HINT):  # MODULE_HINT: `model.train()` ... `model(x)`
            self._keep_passed(callee, positional, keywords)  # another file's module: for its fields
            returned = self._run_forward(callee, node, positional, keywords) if node is not None else None
            if self._forward_gives_none(callee):  # a template: `def forward(self, x): ...`
                return Value(Flag.NOT_TENSOR, origin=f"None, what {name or 'the module'}'s forward returns")
            grad = Flag.GRAD
            if callee.has(Flag.FROZEN):
                grad = _frozen_output_grad(positional, keywords)
            elif returned is not None and returned.has(Flag.TENSOR) and not returned.has(Flag.GRAD):
                # A module class of the file with no parameters: what its `forward` gives, and its input's grad.
                through = (returned.flags | _frozen_output_grad(positional, keywords)) & GRAD_FLAGS
                if not through & Flag.GRAD and self._holds_no_parameters(callee):
                    grad = through
            output = Value(Flag.TENSOR | grad | self._module_output_dtype(callee, positional)
                           | callee.flags & (Flag.DETECTION | Flag.ZERO_DIM), origin=f"output of {name or 'a module'}")
            output = output.with_device_of(callee, *positional, *keywords.values())
            if node is not None:
                output = output.with_flags(add=self._module_gpu_stop(callee, node, positional, returned))
                self._note_module_clash(callee, node, positional, name)
            if positional and positional[0].has(Flag.PACKED_SEQUENCE):
                # An RNN fed a PackedSequence returns one, then its hidden state: `out, h = rnn(packed)`.
                return Value(Flag.CONTAINER, items=(positional[0], output), elem=output)
            return _with_distributions(output, returned)
        if isinstance(callee.callee, LambdaBody):  # `get = lambda: store[0]` ... `get()`
            return with_arguments(callee.callee.value, [*positional, *keywords.values()])
        if callee.has(Flag.UNKNOWN_ARG) and not callee.has(Flag.NOT_TENSOR):
            # `fn(x)` with `fn` a parameter nothing in the file passes: as unknown as `fn` itself.
            return Value(Flag.UNKNOWN_ARG, origin=f"result of {callee.origin or 'a parameter'}")
        return EMPTY

    def _overrides(self, cls: ClassInfo, method: str, found: FunctionInfo) -> list[FunctionInfo]:
        """The methods named `method` that subclasses of `cls` in this file define instead of
        `found`: `self._net_filter(q)` in a base class whose own `_net_filter` is a template runs
        a subclass's for an instance of that subclass (`self` may be one)."""
        overrides: list[FunctionInfo] = []
        for other in self._subclasses(cls):
            override = other.method(method)
            if override is not None and override is not found and override not in overrides:
                overrides.append(override)
        return overrides

    def _overrides_elsewhere(self, cls: ClassInfo, method: str, found: FunctionInfo) -> Value | None:
        """`self.set_forward(x)` in a base class whose own `set_forward` is a template (an
        `@abstractmethod` whose body is `pass`): the subclasses of other project files define what
        runs, so what their overrides return (ProjectView.subclass_returns); None where the
        method is no template, the class is not one of the file's top level, or nothing is known.
        Templates only: a method that returns nothing (a setter, `reset()`) is no question for
        the subclasses, and asking them for each costs their files' exports."""
        project = self.interp.project
        owner = found.cls
        if project is None or not cls.top_level or owner is None or not owner.top_level or (
                not project.is_template(f"{owner.name}.{method}")):
            return None
        return project.subclass_returns(THIS_MODULE + cls.name, method)

    def _subclasses(self, cls: ClassInfo) -> list[ClassInfo]:
        """The classes of this file deriving from `cls`, at any depth (kept until the file
        defines another class)."""
        classes = self.interp.classes
        key = (id(cls), len(classes))
        found = self._subclasses_of.get(key)
        if found is None:
            found = self._subclasses_of[key] = [other for other in classes
                                                if other is not cls and cls in other.lineage()]
        return found

    @staticmethod
    def _dunder_call(callee: Value) -> FunctionInfo | None:
        """The `__call__` of an instance of a plain class of this file (a loss, a transform): the
        instance is called like a function. A module's call is its `forward` (`_run_forward`)."""
        cls = callee.callee
        if isinstance(cls, ClassInfo) and not cls.is_module:
            return instance_method(callee, "__call__")
        return None

    def elements(self, iterable: Value, node: cst.BaseExpression | None) -> Value:
        """What iterating `iterable` gives: an instance of a class of this file or of another
        project file iterates through its `__next__` where the class defines one (its `__iter__`
        then gives the object itself: an iterator class, as a data iterator over batches is),
        else through its `__iter__` (a generator's values); anything else gives its elements.
        Without a node to call its methods from, its elements."""
        if node is None:
            return iterable.element()
        following = instance_method(iterable, "__next__")
        if following is not None:
            return self._call_defined(following, node, [], {})
        method = instance_method(iterable, "__iter__")
        if method is not None:
            return self._call_defined(method, node, [], {}).element()
        owner = iterable.callee
        if isinstance(owner, ForeignClass) and not iterable.flags & (Flag.CONTAINER | Flag.MODULE | TENSOR_FLOW):
            given = self.interp.foreign_member(owner, "__next__", "returns")
            if given is not None:
                return self.interp.grad_mode_result(given)
            iterator = self.interp.foreign_member(owner, "__iter__", "returns")
            if iterator is not None:
                return self.interp.grad_mode_result(iterator.element())
        return iterable.element()

    def item(self, container: Value, node: cst.CSTNode, index: Value) -> Value | None:
        """`bag[i]` of an instance of a class of this file (`node` the subscript, or a loader's
        call reading its dataset): its `__getitem__`'s return value."""
        method = instance_method(container, "__getitem__")
        return None if method is None else self.interp.call_function(method, node, [index], {})

    def _holds_no_parameters(self, module: Value, seen: frozenset[int] = frozenset(),
                             holding: int = HOLDING_PARAMETERS) -> bool:
        """An instance of a module class of the file that can hold parameters only in its `__init__`'s
        fields (freezing.class_body_adds_no_parameters), none of which holds one now: frozen modules,
        tensors without grad, plain values. A field of unknown origin, a heap container or a module
        that may have parameters counts as holding some (`holding`: the flags that say so)."""
        cls = module.callee
        if not isinstance(cls, ClassInfo) or id(cls) in seen or not self._adds_no_parameters(cls):
            return False
        seen = seen | {id(cls)}
        return not any(self._field_holds_parameters(value, seen, holding)
                       for owner in cls.lineage() for value in owner.attrs.values())

    def _adds_no_parameters(self, cls: ClassInfo) -> bool:
        """The class's statement, read once when it matters (a walk of a class is not cheap)."""
        if cls.adds_no_parameters is None:
            described = cls.names_of_the_file or (lambda name: False)
            cls.adds_no_parameters = cls.node is not None and all(
                self._adds_no_parameters(base) for base in cls.local_bases
            ) and class_body_adds_no_parameters(cls.node, self.interp.imports.resolve, described)
        return cls.adds_no_parameters

    def _field_holds_parameters(self, value: Value, seen: frozenset[int], holding: int = HOLDING_PARAMETERS,
                                depth: int = 3) -> bool:
        if value.has(holding):
            return True
        if value.objs:  # `self.config = {"name": ...}`: a container the file fills, with what it holds
            return depth == 0 or self._field_holds_parameters(self.interp.heap.elements_of(value.objs), seen,
                                                              holding, depth - 1)
        if value.has(Flag.MODULE) and not value.has(Flag.FROZEN):
            return not self._holds_no_parameters(value, seen, holding)
        parts = [*(value.items or ()), *([value.elem] if value.elem is not None else [])]
        return any(self._field_holds_parameters(part, seen, holding, depth) for part in parts)

    def parameter_free_for_its_arguments(self, cls: ClassInfo) -> bool:
        """An export's question about a module class of this file: whether an instance holds no
        parameters unless its constructor is given some (the importer checks what its call
        passes, `_project_module`), and its `forward` makes no tensor that requires grad."""
        if not cls.is_module or not self._adds_no_parameters(cls):
            return False
        instance = Value(Flag.MODULE, callee=cls)
        if not self._holds_no_parameters(instance, holding=HOLDING_PARAMETERS & ~Flag.UNKNOWN_ARG):
            return False
        forward = cls.method("forward")
        return forward is None or not forward.returns.has(Flag.GRAD)

    def _run_forward(self, module: Value, node: cst.Call, positional: list[Value],
                     keywords: dict[str, Value]) -> Value | None:
        """`model(x)` with `model` an instance of a module class of this file runs its `forward`:
        analysed in this call's context (its arguments, the grad mode here), so a `.data` or
        `.numpy()` of a parameter there sees what the call passes, and the fields `forward` writes
        get this call's grad mode. The output stays the module's (a tensor that requires grad
        where grad is on): the forward's own return value (given back) may be less than the
        analysis knows, and counts only for a module that holds no parameters."""
        cls = module.callee
        forward = instance_method(module, "forward") if isinstance(cls, ClassInfo) and cls.is_module else None
        if forward is not None:
            return self._call_defined(forward, node, positional, keywords)
        return None

    def _module_gpu_stop(self, module: Value, node: cst.Call, positional: list[Value], returned: Value | None) -> int:
        """What says a module's output is computed only by runs without a GPU (placement.py): a
        torch.nn layer on a GPU given a tensor on the CPU raises, and so does a module class of
        the file whose `forward`, analysed for this call, gives only such values; an input
        computed that way passes it on. A layer of the method's own instance (`self.fc(x)`) is
        where the instance is: given a tensor on the CPU, it raised where a call of the instance
        moved to a GPU ran, which that call reads (CPU_INTO_OWN_LAYER)."""
        layer = module.callee in placement.DEVICE_CHECKING_LAYERS and bool(positional)
        flags = placement.stopped_on_a_gpu(positional)
        if layer and placement.raises_on_a_gpu(positional[0], module) and self.interp.trusts_on_cpu():
            flags |= Flag.CPU_RUNS_ONLY
        if returned is not None:
            inner = returned.flags & placement.STOPPED_ON_A_GPU
            if inner & Flag.CPU_INTO_OWN_LAYER and not self._own_field(node.func):
                # Its own layers met a tensor on the CPU: where this instance is on a GPU, they raised.
                inner &= ~Flag.CPU_INTO_OWN_LAYER
                if module.has(Flag.DEVICE) and self.interp.trusts_on_cpu():
                    inner |= Flag.CPU_RUNS_ONLY
            flags |= inner
        if layer and not module.has(Flag.DEVICE) and placement.on_the_cpu_everywhere(positional[0]) and (
                self._own_field(node.func)):
            flags |= Flag.CPU_INTO_OWN_LAYER
        return flags

    def _own_field(self, callee: cst.BaseExpression) -> bool:
        """`self.fc` (or `self.layers[i]`) in a method: a submodule of the method's instance."""
        while isinstance(callee, cst.Subscript):
            callee = callee.value
        function = self.interp.current_function
        if not isinstance(callee, cst.Attribute) or not isinstance(callee.value, cst.Name) or (
                function is None or function.cls is None or is_static(function.node)):
            return False
        params = function.node.params.params
        return bool(params) and callee.value.value == params[0].name.value

    @staticmethod
    def _forward_gives_none(module: Value) -> bool:
        """Whether the `forward` a module class of this file runs returns None on every path (no
        `return` of a value): its call's output is no tensor, whatever its parameters."""
        cls = module.callee
        forward = instance_method(module, "forward") if isinstance(cls, ClassInfo) and cls.is_module else None
        return forward is not None and returns_no_value(forward.node)

    def _module_output_dtype(self, module: Value, positional: list[Value]) -> int:
        """A module's output dtype: its parameters' (`model.bfloat16()`), its input's for a module
        with no parameters (`nn.ReLU()`, `nn.CrossEntropyLoss()`), or under autocast the lower
        precision for the layers autocast runs in it; unknown otherwise."""
        if self.interp.in_autocast:
            autocast = self.interp.autocast
            return autocast if module.callee in dt.AUTOCAST_LOWER_LAYERS else 0
        if not module.flags & DTYPES and module.has(Flag.FROZEN) and module.callee in sem.PARAMETER_FREE_MODULES:
            return dt.combine(positional[:2])  # FROZEN: a must-fact, so no joined layer has parameters
        return module.flags & DTYPES

    def _note_module_clash(self, module: Value, node: cst.Call, positional: list[Value], name: str | None) -> None:
        """`model(x64)` with float32 parameters, `criterion(out32, target64)` with a strict loss."""
        if self.interp.in_autocast or not node.args or node.args[0].keyword is not None:
            return
        if module.callee in dt.DTYPE_STRICT_LOSSES and len(positional) >= 2 and len(node.args) >= 2:
            self._note_operand_clash(node, list(zip((node.args[0].value, node.args[1].value), positional[:2])), "loss")
            return
        if module.flags & DTYPES == dt.F32 and positional[0].flags & TENSOR_FLOW and positional[0].dtype == dt.F64:
            layer = module.callee if isinstance(module.callee, str) else None
            other = (f"nn.{layer} " if layer else "") + (f"'{name}'" if name else "a module")
            self.facts.dtype_clashes[node.args[0].value] = DtypeClash(node, node.args[0].value, other, "module", layer)

    def _note_operand_clash(self, call: cst.CSTNode, operands: list[tuple[cst.BaseExpression, Value]], kind: str) -> None:
        """Two operands, one known float32 and one known float64, in a kernel that refuses the mix."""
        if self.interp.in_autocast:
            return
        float32 = [value for _, value in operands if value.flags & TENSOR_FLOW and value.dtype == dt.F32]
        if not float32:
            return
        for expr, value in operands:
            if value.flags & TENSOR_FLOW and value.dtype == dt.F64:
                origin = float32[0].origin
                other = f"the float32 {origin}" if origin else "a float32 operand"
                self.facts.dtype_clashes[expr] = DtypeClash(call, expr, other, kind)
                return

    def _mapped(self, function: Value, iterables: list[Value]) -> Value:
        """`map(f, xs)`: what `f` returns (its summary; `f` escapes, so it is analysed for unknown
        callers, not bound to `xs`), the elements in place of its parameters; unknown for a
        function not of this file."""
        if isinstance(function.callee, LambdaBody):
            returned = function.callee.value
        elif function.has(Flag.FUNCTION) and isinstance(function.callee, FunctionInfo):
            info = function.callee
            if info.state == "new" and self.interp.depth < MAPPED_ANALYSIS_DEPTH:
                self.interp.depth += 1  # analysed now, for callers it cannot see, to know what it returns
                try:
                    self.interp.analyse_function(info)
                finally:
                    self.interp.depth -= 1
            returned = self.interp.summaries.read(info, self.interp.current_function)
        else:
            return EMPTY
        return with_arguments(returned, [xs.element() for xs in iterables])

    def _call_builtin(self, name: str, callee: Value, positional: list[Value], env: Env,
                      node: cst.Call | None = None) -> Value | None:
        if env.lookup(name) is not None:
            return None
        first = positional[0] if positional else EMPTY
        if name in ("float", "int", "bool", "len", "str", "repr", "print", "isinstance", "hasattr", "range"):
            return EMPTY
        if name in ("list", "set", "dict") and node is not None:  # a fresh container: later writes count
            element = self.elements(first, node) if positional else None
            if name == "dict" and element is not None and element.items is not None and len(element.items) == 2:
                element = element.items[1]  # `dict(model.named_parameters())`: the pairs' values
            copied = Value(Flag.CONTAINER, elem=element)
            return self.interp.heap.allocate(node, copied, {} if name == "dict" else None)
        if name in ("list", "tuple", "sorted", "reversed", "iter", "set", "frozenset", "filter"):
            source = positional[-1] if name == "filter" and positional else first
            return Value(Flag.CONTAINER, elem=self.elements(source, node))
        if name == "map" and len(positional) >= 2:
            return Value(Flag.CONTAINER, elem=self._mapped(positional[0], positional[1:]))
        if name == "next":
            return self.elements(first, node)
        if name == "enumerate":
            return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=(EMPTY, self.elements(first, node))))
        if name == "zip" and node is not None and len(node.args) == 1 and node.args[0].star == "*" and (
                positional[0].items is not None):
            # `states, actions = zip(*transitions)`: the columns of rows of known fields, each apart.
            columns = tuple(Value(Flag.CONTAINER, elem=field) for field in positional[0].items)
            return Value(Flag.CONTAINER, items=columns, elem=merge_all(list(columns)))
        if name == "zip":
            items = tuple(self.elements(value, node) for value in positional)
            return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=items, elem=merge_all(list(items))))
        if name in ("getattr", "setattr") and node is not None:
            return self._reflective_member(name, node, positional, env)
        if name in ("sum", "max", "min", "abs"):
            return self.interp.grad_mode_result(first.element().tensor_part() if first.has(Flag.CONTAINER) else first.tensor_part())
        return None

    def _reflective_member(self, name: str, node: cst.Call, positional: list[Value], env: Env) -> Value:
        """`getattr(obj, "t"[, default])` reads `obj.t`, `setattr(obj, "t", v)` writes it: the same
        fields as the attribute syntax. A computed name says nothing."""
        plain = all(arg.keyword is None and not arg.star for arg in node.args)
        attr = _string(node.args[1].value) if plain and len(node.args) >= 2 else None
        if attr is None:
            return self._computed_member(name, node) if plain and len(node.args) == 2 else EMPTY
        owner = node.args[0].value
        if name == "getattr" and len(positional) in (2, 3):
            read = self.interp.expressions.member(owner, positional[0], attr, node, env)
            return read.merge(positional[2]) if len(positional) == 3 else read
        if name == "setattr" and len(positional) == 3:
            if isinstance(owner, cst.Name):
                self.interp.statements.thaw(owner.value, env)  # `setattr(model, "fc", nn.Linear(...))`
            self.interp.statements.write_member(owner, attr, positional[2], env)
        return EMPTY

    def _computed_member(self, name: str, node: cst.Call) -> Value:
        """`getattr(models, args.arch)`: a computed name of a module every candidate of which is an
        nn.Module class (torch.nn's layers, torchvision's model builders, a project module whose
        public classes all are modules) is one of them, whichever the run picks."""
        qualified = self.imports.resolve(node.args[0].value) if name == "getattr" else None
        if qualified is None:
            return EMPTY
        project = self.interp.project
        if qualified in sem.MODULE_NAMESPACES or project is not None and project.classes_are_modules(qualified):
            return Value(Flag.MODULE_CLASS)
        return EMPTY

    def _call_library(self, qualified: str, node: cst.Call, positional: list[Value],
                      keywords: dict[str, Value]) -> Value:
        if qualified == "collections.namedtuple":
            return self._namedtuple_class(node)
        if qualified == "collections.defaultdict":
            return self._default_dict(node)
        last = qualified.rsplit(".", 1)[-1]
        kind = sem.converting_kind(qualified)
        if kind is not None:
            self.facts.converting_calls.append(ConvertingCall(node, dotted(node.func) or qualified, kind))
        taken = array_facts.ARRAY_ARGUMENTS.get(qualified)
        if taken is not None:
            kind = ("array" if qualified in array_facts.TORCH_ARRAY_ONLY
                    else "dlpack" if qualified in array_facts.TORCH_FROM_DLPACK else "data")
            self.facts.array_handovers.append(ArrayHandover(node, dotted(node.func) or qualified, kind, *taken))
        if qualified.startswith("numpy."):
            layout = array_facts.numpy_result(last, positional, keywords, _rot90_k(node) if last == "rot90" else None)
            if layout.has(Flag.NDARRAY) or last == "dtype":  # the dtype lattice's bits beside the layout's
                return layout.with_flags(add=self._numpy_dtype(qualified[len("numpy."):], node, positional, keywords))
            return layout
        if qualified.startswith("cv2.") and last in array_facts.CV2_ARRAY_RESULTS:
            return Value(Flag.NDARRAY)  # a fresh, contiguous array (`cv2.flip`: the safe mirror)
        if qualified.startswith("captum.attr.") and last[:1].isupper():  # `IntegratedGradients(model)`
            return Value(Flag.NOT_TENSOR, callee=Attribution(sem.CAPTUM_GRAD_ATTRIBUTIONS.get(last, "never")))
        if qualified.startswith("sklearn.") and last[:1].isupper():
            return Value(Flag.SKLEARN_ESTIMATOR | Flag.NOT_TENSOR, callee=last)  # `LogisticRegression()`, `KMeans(3)`
        if qualified in frames.SPLITTERS:
            return frames.split(positional)
        if qualified.startswith("pandas.") and last in frames.READERS:
            return frames.read()
        if qualified in frames.CONSTRUCTORS:
            return frames.constructed(positional, keywords)
        if qualified == "matplotlib.pyplot.subplots":
            return Value(Flag.CONTAINER, items=(EMPTY, Value(Flag.AXES)))
        if qualified.startswith("matplotlib.pyplot.") and last in sem.AXES_FACTORIES:
            return Value(Flag.AXES)
        if qualified == "itertools.chain":  # the elements of every iterable passed, in turn
            return Value(Flag.CONTAINER, elem=merge_all([value.element() for value in positional]))
        if qualified == "functools.partial" and positional and isinstance(positional[0].callee, FunctionInfo):
            return Value(callee=PartialCall(positional[0].callee, tuple(positional[1:]), tuple(keywords.items())))
        if qualified == "itertools.chain.from_iterable":  # the elements of each iterable it yields
            return Value(Flag.CONTAINER, elem=merge_all([value.element().element() for value in positional]))
        if qualified in sem.DATA_LOADERS:
            return Value(Flag.CONTAINER, elem=self._batch(node, positional, keywords))
        if qualified in sem.ITERABLE_WRAPPERS:  # `tqdm(loader)`: the loader's batches
            iterable = positional[0] if positional else keywords.get("iterable", EMPTY)
            return Value(Flag.CONTAINER, elem=iterable.element())
        if qualified in sem.DATASET_SUBSETS:  # `Subset(ds, idx)`: ds's items
            return positional[0] if positional else keywords.get("dataset", EMPTY)
        if qualified in sem.DATASET_SPLITS:  # `train, test = random_split(ds, [0.8, 0.2])`: subsets of ds
            return Value(Flag.CONTAINER, elem=positional[0] if positional else keywords.get("dataset", EMPTY))
        if qualified in sem.TENSOR_DATASETS:  # its items: one row of each tensor, as a tuple
            rows = tuple(Value(Flag.TENSOR | value.dtype) for value in positional)
            return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=rows, elem=merge_all(list(rows))))
        if qualified in sem.PASSTHROUGH_FUNCTIONS:
            return positional[0] if positional else EMPTY
        if qualified in sem.ELEMENT_DRAWS:  # `test = random.choice(pairs)`: one of the pairs
            keyword, several = sem.ELEMENT_DRAWS[qualified]
            drawn = (positional[0] if positional else keywords.get(keyword, EMPTY)).element()
            return Value(Flag.CONTAINER, elem=drawn) if several else drawn
        if qualified in FROZEN_LOADERS:  # `nn.Embedding.from_pretrained(vectors)`: frozen by default
            layer = qualified.rsplit(".", 2)[-2]
            return Value(Flag.MODULE | dt.F32 | (Flag.FROZEN if loader_freezes(node) else 0), callee=layer)
        if qualified.startswith(sem.MODEL_FACTORIES) or qualified in sem.MODEL_LOADERS or (
                sem.pretrained_gives_model(qualified)):
            return Value(Flag.MODULE | (Flag.DETECTION if qualified.startswith(sem.DETECTION_MODELS) else 0))
        if qualified in sem.CHECKPOINT_LOADERS:
            return Value(Flag.MODULE_HINT)  # a model if the file calls it (`model(x)`), else a checkpoint
        if qualified in sem.PARAMETER_FREE_LIBRARY_MODULES:  # `torchaudio.transforms.Resample(...)`
            return Value(Flag.MODULE | Flag.FROZEN, callee=qualified.rsplit(".", 1)[-1])
        project = self.interp.project
        if project is not None and not project.values:  # computing this file's exports
            self.interp.note_outgoing(qualified, positional, keywords)
        owner, _, constructor = qualified.rpartition(".")
        if project is not None and constructor in sem.ALTERNATE_CONSTRUCTORS and (
                project.is_module_class(owner) or project.names_class(owner)):
            # `ScoreModel.load_from_checkpoint(path)`: an instance of the project's class (what
            # the call passes goes to the library's loader, not to the class's `__init__`).
            qualified, positional, keywords = owner, [], {}
        fields = project.record_fields(qualified) if project is not None and last[:1].isupper() else None
        if fields is not None:  # `DaRnnNet(encoder, decoder, ...)` of another file's namedtuple: a record here
            record = self.interp.statements.record_class(node.func, last, fields)
            return self._instantiate(Value(Flag.PLAIN_CLASS, callee=record), record, node, positional, keywords)
        if project is not None and project.is_module_class(qualified):
            # A project class deriving from nn.Module (analysis/project.py); its methods are read
            # from its file's exports (analysis/exports.py), and while this file's exports are
            # computed, what its methods get is noted (`ema.restore(model.parameters())`).
            return self._project_module(qualified, positional, keywords, node)
        if project is not None and not project.values and project.names_class(qualified):
            return Value(callee=ForeignClass(qualified))  # an instance: what its methods get is noted
        if project is not None and project.values and project.is_class(qualified):
            # An instance: its methods' values are known, and a heap object (this call's) keeps
            # what this file passes to it, for the methods that hand it back (`_foreign_call`).
            # Two heap objects of this call: the instance's own (as any object a call makes:
            # indexing it reads it), and, named by the call's function node, the one that
            # keeps what the file passes to its methods (read only by `_foreign_call`).
            kept = next(iter(self.interp.heap.allocate(node.func, EMPTY).objs))
            instance = self.interp.heap.allocate(node, Value(Flag.NONE, callee=ForeignClass(qualified, kept)))
            self._keep_passed(instance, positional, keywords)
            for field, value in self.interp.fields_stored_by((qualified,), "__init__", positional, keywords):
                old = self.interp.constructed_fields.get((kept, field), EMPTY)
                self.interp.constructed_fields[(kept, field)] = old.merge(value)
            return instance
        if project is not None and (project.values or project.returns):
            returned = project.returns_of(qualified)
            if returned is not None:  # a function of another project file
                return with_arguments(returned, [*positional, *keywords.values()])
        if not qualified.startswith("torch."):
            return EMPTY
        if last in sem.PACKED_SEQUENCE_FUNCTIONS:
            return Value(Flag.NOT_TENSOR | Flag.PACKED_SEQUENCE)  # its `.data` field is a tensor, not Tensor.data
        if qualified == "torch.device":
            target = positional[0] if positional else keywords.get("type", EMPTY)
            if target.has(Flag.CPU_SPEC) and not target.has(Flag.DEVICE_SPEC):
                return Value(Flag.CPU_SPEC)
            return Value(Flag.DEVICE_SPEC)
        if qualified in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            data = positional[0] if positional else EMPTY
            requires = keywords.get("requires_grad")
            grad = Flag.NONE if keyword_is_false(node, "requires_grad") and requires is not None else Flag.GRAD
            return Value(Flag.TENSOR | grad | data.flags & Flag.ON_CPU, origin="nn.Parameter").with_device_of(data)
        if sem.is_nn_module_class(qualified):
            module = self._nn_module(last, positional, keywords, node)
            reducing = last in ranks.LOSS_MODULES and ranks.loss_reduces(node, ranks.LOSS_MODULES[last])
            return module.with_flags(add=Flag.ZERO_DIM) if reducing else module
        if qualified.startswith("torch.distributions.") and last[:1].isupper():
            return distributions.built([*positional, *keywords.values()])  # `Categorical(probs)`
        if last[:1].isupper() and last not in sem.FACTORIES:
            return Value(Flag.NOT_TENSOR)  # a class under torch.* (an IR box, a wrapper): not a tensor
        if last == "from_numpy":  # the array's memory: on the CPU whatever the default device
            return Value(Flag.TENSOR | Flag.ON_CPU | (
                positional[0].dtype if positional and positional[0].has(Flag.NDARRAY) else 0))
        if last in dt.SPARSE_FACTORIES:
            sparse = Value(Flag.TENSOR | Flag.SPARSE | dt.dtype_named(keywords.get("dtype", EMPTY)))
            return self._device_keyword(keywords, self._built_on_the_cpu(qualified, positional, keywords, sparse))
        if last in sem.FACTORIES:
            base = EMPTY
            if last.endswith("_like") and positional:
                base = positional[0].device_part()
            if last in ("as_tensor", "asarray", "Variable") and positional:
                base = positional[0].tensor_part()
            value = Value(Flag.TENSOR | base.flags, origin=base.origin).with_dtype(self._factory_dtype(last, node, positional, keywords))
            if "requires_grad" in keywords and not keyword_is_false(node, "requires_grad"):
                value = value.with_flags(add=Flag.GRAD)
                value = Value(value.flags, origin=f"torch.{last}(..., requires_grad=True)")
            return self._device_keyword(keywords, self._built_on_the_cpu(qualified, positional, keywords, value))
        if qualified in sem.GPU_AVAILABILITY:
            return Value(Flag.DEVICE_FLAG)
        if qualified.startswith(("torch.cuda.", "torch.backends.", "torch.distributed.")) or last.startswith("is_"):
            return EMPTY
        operands = []
        flowing = [value for name, value in keywords.items() if name not in sem.SCALAR_KEYWORDS]
        for index, value in enumerate(positional + flowing):
            part = value.element().tensor_part() if value.has(Flag.CONTAINER) else value.tensor_part()
            if index > 0:
                # Only the input of a torch function is a tensor of unknown origin; `size=`,
                # `mode=`, `dim` parameters passed along are not.
                part = part.with_flags(remove=Flag.UNKNOWN_ARG)
            operands.append(part)
        combined = merge_all(operands)
        if combined.flags & TENSOR_FLOW:
            combined = combined.with_flags(add=self.interp.gpu_stops(operands, last in placement.DEVICE_CHECKING_FUNCTIONS))
        if last in sem.NO_GRAD_RESULTS:
            return sem.integer_result(combined.with_flags(add=Flag.TENSOR))
        if last in sem.VALUES_INDICES and (len(positional) >= 2 or "dim" in keywords):
            return sem.values_indices(combined.with_flags(add=Flag.TENSOR))
        combined = combined.with_flags(add=Flag.TENSOR).with_dtype(self._function_dtype(qualified, last, node, operands, keywords))
        if last == "conj" and combined.has(Flag.COMPLEX) and positional and positional[0].has(Flag.COMPLEX):
            combined = combined.with_flags(add=Flag.CONJ)
        if last in ranks.FULL_REDUCTIONS and ranks.full_reduction(node, 1) or last in ranks.LOSS_FUNCTIONS and (
                ranks.loss_reduces(node, ranks.LOSS_FUNCTIONS[last])):
            combined = combined.with_flags(add=Flag.ZERO_DIM)  # `torch.sum(t)`, `F.mse_loss(out, y)`
        return self._device_keyword(keywords, combined)

    def _numpy_dtype(self, name: str, node: cst.Call, positional: list[Value], keywords: dict[str, Value]) -> int:
        """The dtype of a NumPy function's array: `dtype=`, else the function's default."""
        if "dtype" in keywords:
            return dt.dtype_named(keywords["dtype"])
        if name in dt.NUMPY_FLOAT64_FACTORIES:
            return dt.F64
        if name in dt.NUMPY_LIKE_FACTORIES and positional and positional[0].has(Flag.NDARRAY):
            return positional[0].dtype
        if name == "arange":
            found = dt.arange_dtype([arg.value for arg in node.args if arg.keyword is None])
            return dt.F64 if found == dt.F32 else found  # NumPy's float default is float64
        return 0

    def _nn_module(self, last: str, positional: list[Value], keywords: dict[str, Value], node: cst.Call) -> Value:
        """A fresh torch.nn module: float32 parameters for the layers that refuse a float64
        input (`dtype=` says otherwise); `callee` keeps the class name (autocast, losses). A
        module with no parameters (`nn.ReLU()`, a loss, `nn.LayerNorm(n, elementwise_affine=False)`)
        is frozen from the start: its output requires grad only through its input, as a frozen
        module's does (freezing.py)."""
        if last in sem.PARAMETER_FREE_MODULES:
            return Value(Flag.MODULE | Flag.FROZEN | self._device_keyword(keywords, EMPTY).flags, callee=last)
        if last in dt.AFFINE_SWITCHES and not _affine(node, *dt.AFFINE_SWITCHES[last]):
            statistics = last in dt.RUNNING_STATISTICS_LAYERS and not keyword_is_false(node, "track_running_stats")
            return Value(Flag.MODULE | Flag.FROZEN | (dt.F32 if statistics else 0)
                         | self._device_keyword(keywords, EMPTY).flags, callee=last)
        dtype = dt.F32 if last in dt.FLOAT32_PARAMETER_LAYERS else 0
        if "dtype" in keywords:
            dtype = dt.dtype_named(keywords["dtype"])
        elif last == "Sequential" and positional and positional[0].has(Flag.MODULE):
            dtype = positional[0].dtype  # the first layer meets the input
        module = Value(Flag.MODULE | dtype | self._device_keyword(keywords, EMPTY).flags, callee=last)
        return module

    def _factory_dtype(self, last: str, node: cst.Call, positional: list[Value], keywords: dict[str, Value]) -> int:
        """The dtype of a torch factory's tensor: `dtype=`, else what the factory gives."""
        if "dtype" in keywords:
            return dt.dtype_named(keywords["dtype"])
        first = positional[0] if positional else EMPTY
        if last in ("tensor", "as_tensor", "asarray", "Variable"):
            if first.flags & (TENSOR_FLOW | Flag.NDARRAY):
                return first.dtype  # an array's or a tensor's dtype is kept
            args = [arg.value for arg in node.args if arg.keyword is None]
            return dt.literal_dtype(args[0]) if args else 0
        if last in dt.TORCH_LIKE_FACTORIES:
            return first.dtype
        if last in dt.TORCH_FLOAT_FACTORIES:
            return dt.F32
        if last in ("arange", "range"):
            return dt.arange_dtype([arg.value for arg in node.args if arg.keyword is None])
        return dt.TORCH_FACTORY_DTYPES.get(last, 0)

    def _function_dtype(self, qualified: str, last: str, node: cst.Call, operands: list[Value],
                        keywords: dict[str, Value]) -> int:
        """The dtype of another torch function's result (and the clashes it raises)."""
        if "dtype" in keywords:
            return dt.dtype_named(keywords["dtype"])
        if qualified.startswith("torch.fft.") and last in dt.COMPLEX_RESULTS:
            return dt.COMPLEX
        written = [arg for arg in node.args if arg.keyword is None]
        tensors = [(arg.value, value) for arg, value in zip(written, operands) if not arg.star]
        if last in dt.MATMUL_FUNCTIONS:
            self._note_operand_clash(node, tensors[:2], "matmul")
        elif last in dt.DTYPE_STRICT_LOSSES:
            self._note_operand_clash(node, tensors[:2], "loss")
        if self.interp.in_autocast and last in dt.AUTOCAST_LOWER_FUNCTIONS:
            return self.interp.autocast
        if last in ("real", "imag", "abs", "angle", "view_as_real") or qualified.startswith("torch.fft."):
            return 0  # a complex input gives a real result of a width the lattice does not keep
        if last == "where" and len(operands) == 3:  # the condition is no operand of the result
            chosen = [value for value in operands[1:] if value.flags & TENSOR_FLOW]
            return dt.combine(chosen) if len(chosen) == 2 else dt.with_scalar(dt.combine(chosen))
        return dt.combine(operands)

    @staticmethod
    def _built_on_the_cpu(qualified: str, positional: list[Value], keywords: dict[str, Value], value: Value) -> Value:
        """A factory's tensor, on the CPU where no `device=` says otherwise and its tensor arguments
        are there (analysis/placement.py)."""
        if "device" in keywords or not placement.factory_on_the_cpu(qualified, positional):
            return value
        return value.with_flags(add=Flag.ON_CPU)

    def _device_keyword(self, keywords: dict[str, Value], value: Value) -> Value:
        device = keywords.get("device")
        return sem.device_move(device, value) if device is not None else value

    def _call_method(self, receiver: Value, method: str, node: cst.Call, positional: list[Value],
                     keywords: dict[str, Value], env: Env) -> Value:
        if (method in sem.BACKWARD_HOOKS or method in sem.FORWARD_HOOKS) and positional and self._call_hook(
                receiver, method, node, self._hook_function(node, positional[0], env)):
            return EMPTY  # a handle
        if isinstance(receiver.callee, Distribution):  # `dist.sample()`: no grad; `dist.log_prob(a)`: its parameters'
            return receiver.callee.method(method, positional)
        if isinstance(receiver.callee, Attribution) and method == "attribute":
            return receiver.callee.result(positional[0] if positional else keywords.get("inputs", EMPTY), node)
        if receiver.has(Flag.FRAME):
            return frames.method(receiver, method, positional, keywords)
        receiver_name = syntax_receiver_name(node)
        if method == "forward" and receiver.has(Flag.MODULE_HINT) and not receiver.has(Flag.MODULE):
            # `model = torch.load(path)` ... `model.forward(x)`: a call of the model, as `model(x)`.
            return self._call_value(receiver, positional, keywords, receiver_name, node)
        field = _self_field(node, env)
        if (_may_be_a_module(receiver, receiver_name, env) or field is not None and _unknown(receiver)) and (
                _module_call_signature(method, node)):
            # `self.model.train()` ... `self.model(x)`: a field of unknown origin (a base class of
            # another file stored a constructor argument) used as a module in any method is one
            # in all of them, as a parameter used so is one from there on.
            duck = self._duck_typed(receiver, method, receiver_name, env)
            if field is not None and env.cls is not None and duck is not receiver:
                self.interp.summaries.write_field(env.cls, field, duck)
            receiver = duck
        elif receiver.flags in (Flag.NONE, Flag.UNKNOWN_OBJECT) and method in sem.MODULE_ONLY_METHODS - {"eval"}:
            # `self.policy_old.parameters()`: an object the file cannot see into (a field a base
            # class or a factory set), used as only an nn.Module is.
            receiver = Value(Flag.MODULE, origin=receiver.origin)
        if receiver.has(Flag.MODULE) and receiver.has(Flag.TENSOR) and method in sem.TENSOR_NOT_MODULE_METHODS:
            receiver = receiver.with_flags(remove=Flag.MODULE)  # `model.fc.weight.detach()`: a parameter
        elif receiver.has(Flag.MODULE) and method in sem.NO_MODULE_METHODS:
            # `model.table[k].detach()`: no module has the method, so this is a tensor the file
            # took for a module (an item of a container it does not know), of unknown grad.
            receiver = Value(Flag.TENSOR, origin=receiver.origin).with_device_of(receiver)
        if method in MAPPING_METHODS and receiver_name is not None and _unknown(receiver) and (
                not receiver.has(Flag.MODULE_HINT) and env.lookup(receiver_name) is not None):
            # `for key, value in batch.items(): batch[key] = value.to(device)`: no tensor has
            # `.items()`, so `batch` is a mapping (of what it held before) that item writes fill.
            receiver = Value(Flag.CONTAINER, elem=receiver.element(), origin=receiver.origin)
            env.vars[receiver_name] = receiver
        if receiver.has(Flag.MODULE):
            return self._module_method(receiver, method, node, positional, keywords, receiver_name, env)
        if receiver.objs and not receiver.is_tensor_like and method in CONTAINER_WRITES:
            stored = self._write_container(receiver, method, node, positional, keywords)
            if stored is not None:
                return stored
        if method in ("append", "add", "insert", "extend") and receiver_name is not None:
            added = positional[-1] if positional else EMPTY
            self.interp.statements.add_element(receiver_name, added.element() if method == "extend" else added, env)
            return EMPTY
        if receiver.has(Flag.CONTAINER) and not receiver.is_tensor_like:
            if method in ("values", "copy"):
                return Value(Flag.CONTAINER, elem=receiver.element())
            if method == "items":
                return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=(EMPTY, receiver.element())))
            if method in ("pop", "popleft", "get", "popitem", "setdefault"):
                key = _constant_first_key(node)
                stored = self.interp.heap.item_of(receiver.objs, key) if receiver.objs and key else None
                return stored if stored is not None else receiver.element()
            return EMPTY
        if (receiver.has(Flag.NDARRAY) or receiver.flags & ARRAY_LAYOUT and method in array_facts.NDARRAY_VIEW_METHODS
                ) and not receiver.is_tensor_like:
            # `img[..., ::-1].transpose(2, 0, 1)` of a parameter: only an ndarray has both (a
            # tensor refuses the negative step, a list has no `.transpose`), as `.T` in attribute_of.
            result = array_facts.ndarray_method(receiver, method, positional, keywords)
            if result.has(Flag.NDARRAY):  # the dtype lattice's bits beside the layout's
                return result.with_flags(add=_array_method_dtype(receiver, method, positional, keywords))
            return result
        if method == "newbyteorder":  # `dt.newbyteorder(">")` (ndarray.newbyteorder is gone in NumPy 2)
            return array_facts.newbyteorder(_string_argument(node))
        if method == "backward" and receiver_name is not None and receiver.has(TENSOR_FLOW) and (
                not self.interp.defines_own_autograd):
            # `loss.backward()` raises unless `loss` requires grad: past it, the name is a tensor that
            # does (NODE's trainer: the loss of a model a constructor argument holds).
            env.vars[receiver_name] = receiver.with_flags(add=Flag.TENSOR | Flag.GRAD, remove=Flag.UNKNOWN_ARG)
            return EMPTY
        if method in ("detach", "detach_"):
            return receiver.with_flags(add=Flag.TENSOR | passed_device(receiver), remove=GRAD_FLAGS)
        if method == "numpy":
            return Value(Flag.NDARRAY | receiver.dtype)
        if method == "cpu":
            return sem.on_the_cpu(receiver)
        if method in ("cuda", "xpu", "mps"):
            return self.interp.moved_here(receiver.moved_to_device())
        if method == "to":
            result = self._moved_to(receiver, positional, keywords)
            dtype = _target_dtype(positional, keywords)
            if dtype and receiver.flags in (Flag.NONE, Flag.UNKNOWN_OBJECT):
                # `out.hidden_states[-1].to(torch.bfloat16)`: only a tensor or a module takes a
                # torch dtype, and a module's `.to` gives the module, on which no tensor method
                # (`.numpy()`, `.data`) runs: the result is read as a tensor of that dtype.
                result = result.with_flags(add=Flag.TENSOR)
            if dtype and not dtype & ~INTEGRAL:  # `.to(torch.int16)`: an integer tensor never requires grad
                return _integer_cast(result, dtype, receiver)
            return result.with_dtype(dtype) if dtype is not None else result
        if method == "type" and (positional or "dtype" in keywords):
            receiver = receiver.with_flags(remove=Flag.ON_CPU)  # `.type(torch.cuda.FloatTensor)` moves it
            dtype = _target_dtype(positional[:1], keywords) or self._tensor_class_dtype(node)
            if dtype and not dtype & ~INTEGRAL:  # `.type(torch.LongTensor)`, `.type(torch.int64)`
                return _integer_cast(receiver, dtype, receiver)
        if method == "requires_grad_":
            if positional and keyword_is_false(node, None):
                return receiver.with_flags(add=Flag.TENSOR, remove=Flag.GRAD)
            value = receiver.with_flags(add=Flag.TENSOR | Flag.GRAD)
            if receiver_name is not None:
                env.vars[receiver_name] = value
            return value
        if not receiver.has(TENSOR_FLOW):
            return EMPTY
        if method in sem.NON_TENSOR_METHODS:
            return EMPTY
        cast = dt.CAST_METHODS.get(method)
        if cast is not None and not positional:
            if method in sem.NO_GRAD_RESULTS:
                return _integer_cast(receiver, cast, receiver)
            return receiver.tensor_part().with_flags(add=receiver.flags & Flag.SPARSE).with_dtype(cast)  # keeps the layout
        if method in sem.NO_GRAD_RESULTS:
            return sem.integer_result(receiver)
        if method in sem.VALUES_INDICES and (positional or "dim" in keywords):
            return sem.values_indices(receiver)
        if not receiver.has(Flag.TENSOR) and method not in TENSOR_METHODS:
            # `model.inference(x)` of a value known only to live on a GPU: no tensor has the
            # method, so it may be a module of the project's whose method it is.
            returned = self._project_module_method(receiver, method, positional, keywords)
            if returned is not None:
                return returned
        elif method not in TENSOR_METHODS and not method.startswith("_"):
            # `coo = matrix.tocoo()` of a parameter annotated `Union[sp.spmatrix, torch.Tensor]`:
            # no tensor has the method, so where it runs the value is something else, whose
            # method gives what the file cannot tell (a tensor would raise AttributeError here).
            # The table lists public methods: a tensor has private ones too (`._values()`).
            return EMPTY
        result = receiver.tensor_part()
        if method in TENSOR_ONLY_RESULTS:
            result = result.with_flags(add=Flag.TENSOR)  # only a tensor has the method: it ran on one
        for value in positional if method not in sem.SHAPE_ARGUMENT_METHODS else ():
            if value.flags & TENSOR_FLOW:
                result = result.merge(value.tensor_part())
                result = result.with_flags(add=self.interp.gpu_stops((receiver, value), method in placement.DEVICE_CHECKING_METHODS))
        if method in ranks.FULL_REDUCTIONS and ranks.full_reduction(node, 0):
            result = result.with_flags(add=Flag.ZERO_DIM)  # `loss.sum()`, `t.max()`
        return result.with_flags(add=self._method_layout(receiver, method)).with_dtype(
            self._method_dtype(receiver, method, node, positional, keywords))

    def _tensor_class_dtype(self, node: cst.Call) -> int:
        """`t.type(torch.LongTensor)`: the dtype a legacy tensor class names (0: another argument)."""
        if not node.args or node.args[0].keyword is not None:
            return 0
        qualified = self.interp.imports.resolve(node.args[0].value) or ""
        head, _, last = qualified.rpartition(".")
        return dt.TORCH_FACTORY_DTYPES.get(last, 0) if head in ("torch", "torch.cuda") else 0

    def _hook_function(self, node: cst.Call, hook: Value, env: Env) -> FunctionInfo | None:
        """The file's function a hook registration passes: a function or closure by its value, a
        method by its spelling: `self._save_input` in the class, `stats.save` of an instance of it."""
        if hook.has(Flag.FUNCTION) and isinstance(hook.callee, FunctionInfo):
            return hook.callee
        written = node.args[0].value if node.args and node.args[0].keyword is None else None
        if not isinstance(written, cst.Attribute):
            return None
        cls: ClassInfo | None = None
        if isinstance(written.value, cst.Name) and written.value.value == env.self_name:
            cls = env.cls
        else:
            owner = self.interp.facts.value_of(written.value)
            if owner.has(Flag.INSTANCE) and isinstance(owner.callee, ClassInfo):
                cls = owner.callee
        method = cls.method(written.attr.value) if cls is not None else None
        return method if method is not None and not is_static(method.node) else None

    def _call_hook(self, receiver: Value, method: str, node: cst.Call, info: FunctionInfo | None) -> bool:
        """`out.register_hook(store)`, `layer.register_forward_pre_hook(self._save_input)`: torch
        calls the hook with what the tables of semantics.py say it passes, so the file's function
        is analysed as called here with those values: a backward hook with grad off (a gradient
        has no grad), a forward hook in the grad mode of the registration, with tensors whose
        grad depends on the model's calls (`UNKNOWN_ARG`: DET111's claim). A plain function or
        closure called only so is judged by this call; a method keeps its record for unknown
        callers beside it. False for an array (NumPy has no hooks) and for a backward hook where
        the file builds higher-order graphs (`create_graph=True`: gradients then require grad)."""
        if info is None or receiver.has(Flag.NDARRAY):
            return False
        backward = method in sem.BACKWARD_HOOKS
        if backward and self.interp.builds_higher_order_graphs:
            return False
        # The method names the receiver's class (only a tensor has `register_hook`, only a module
        # `register_full_backward_hook`), whatever the walk made of it (`list(m._modules.items())[0][1]`).
        gradient = Value(Flag.TENSOR | (receiver.flags & Flag.DEVICE)).with_dtype(receiver.dtype)
        module = receiver if receiver.has(Flag.MODULE) else Value(Flag.MODULE | (receiver.flags & Flag.DEVICE))
        # A forward hook's input or output: whether it requires grad is the model's call's to say.
        tensor = Value(Flag.TENSOR | Flag.UNKNOWN_ARG | (module.flags & Flag.DEVICE))
        passed = {"gradient": gradient, "gradients": Value(Flag.CONTAINER, elem=gradient),
                  "module": module, "itself": receiver.with_flags(add=Flag.TENSOR),
                  "inputs": Value(Flag.CONTAINER, elem=tensor), "output": tensor}
        kinds = sem.BACKWARD_HOOKS[method] if backward else sem.FORWARD_HOOKS[method]
        saved = self.interp.grad_enabled
        self.interp.grad_enabled = saved and not backward
        try:
            self.interp.call_function(info, node, [passed[kind] for kind in kinds], {})
        finally:
            self.interp.grad_enabled = saved
        return True

    def _write_container(self, receiver: Value, method: str, node: cst.Call, positional: list[Value],
                         keywords: dict[str, Value]) -> Value | None:
        """`xs.append(v)`, `d.update(...)`, `d.setdefault("loss", [])`: a write into the receiver's
        heap objects. Returns the call's value where it is known here (`setdefault`'s), else None."""
        heap = self.interp.heap
        if method in ("append", "add", "insert"):
            heap.add_element(receiver.objs, positional[-1] if positional else EMPTY)
        elif method == "extend":
            heap.add_element(receiver.objs, positional[0].element() if positional else EMPTY)
        elif method == "update":
            for value in positional:
                heap.store_item(receiver.objs, None, value.element())
            for value in keywords.values():
                heap.store_item(receiver.objs, None, value)
        elif method == "setdefault" and len(positional) == 2:
            key = _constant_first_key(node)
            heap.store_item(receiver.objs, key, positional[1])
            stored = heap.item_of(receiver.objs, key) if key is not None else None
            return stored if stored is not None else receiver.element()
        return None

    def _method_layout(self, receiver: Value, method: str) -> int:
        """The layout bits a tensor method's result keeps or gets (`.to_sparse()`, `.conj()`)."""
        flags = receiver.flags
        if method in dt.TO_SPARSE_METHODS:
            return Flag.SPARSE
        if method == "conj" and flags & Flag.COMPLEX:
            return Flag.CONJ | flags & Flag.SPARSE
        out = Flag.NONE
        if flags & Flag.SPARSE and method in dt.SPARSE_KEEPING:
            out |= Flag.SPARSE
        if flags & Flag.CONJ and method in dt.CONJ_KEEPING:
            out |= Flag.CONJ
        return out

    def _method_dtype(self, receiver: Value, method: str, node: cst.Call, positional: list[Value],
                      keywords: dict[str, Value]) -> int:
        """The dtype of a tensor method's result: `.type(dtype)`, `.type_as(t)`, matmul, or the
        promotion of the receiver with its tensor arguments."""
        if "dtype" in keywords:
            return dt.dtype_named(keywords["dtype"])
        if method == "type":
            return dt.dtype_named(positional[0]) if positional else 0
        if method == "view" and positional and dt.dtype_named(positional[0]):
            return dt.dtype_named(positional[0])  # `t.view(torch.int16)`: the same bytes read as int16
        if method == "type_as":
            return positional[0].dtype if positional else 0
        if method in sem.SHAPE_ARGUMENT_METHODS:
            return receiver.dtype
        if method in dt.MATMUL_FUNCTIONS and positional and isinstance(node.func, cst.Attribute):
            written = [arg for arg in node.args if arg.keyword is None]
            if written:
                self._note_operand_clash(node, [(node.func.value, receiver), (written[0].value, positional[0])], "matmul")
        if self.interp.in_autocast and method in dt.AUTOCAST_LOWER_FUNCTIONS:
            return self.interp.autocast
        if method in ("real", "imag", "abs", "angle"):
            return 0
        return dt.combine([receiver, *positional])

    @staticmethod
    def _duck_typed(receiver: Value, method: str, receiver_name: str | None, env: Env) -> Value:
        """A parameter of unknown origin used as an nn.Module is one from here on.

        `.parameters()`, `.eval()`, `.named_parameters()` and the like are a module's alone; `.train()`,
        `.zero_grad()`, `.state_dict()` are shared with trainers and optimizers, so they only hint:
        the value becomes a module's output when it is also called (`model(x)`).
        """
        if method in sem.MODULE_ONLY_METHODS and isinstance(receiver.callee, (ClassInfo, ForeignClass)):
            found = receiver.with_flags(add=Flag.MODULE)  # an instance of a project class: its methods stay known
        elif method in sem.MODULE_ONLY_METHODS:
            found = Value(Flag.MODULE, origin=receiver.origin).with_device_of(receiver)
        elif method in sem.MODULE_LIKE_METHODS:
            found = receiver.with_flags(add=Flag.MODULE_HINT)
        else:
            return receiver
        if receiver_name is not None and env.lookup(receiver_name) is not None:
            env.vars[receiver_name] = found
        return found

    def _moved_to(self, receiver: Value, positional: list[Value], keywords: dict[str, Value]) -> Value:
        """`x.to(target)` / `x.to(device=target)` of a tensor or a module: where it lives then (a
        move to a GPU made under a device flag keeps the flag: Interpreter.moved_here)."""
        moved = receiver
        for target in positional[:1] + ([keywords["device"]] if "device" in keywords else []):
            moved = sem.device_move(target, moved)
        return self.interp.moved_here(moved) if moved.flags & ~receiver.flags & Flag.DEVICE else moved

    def _module_method(self, receiver: Value, method: str, node: cst.Call, positional: list[Value],
                       keywords: dict[str, Value], receiver_name: str | None, env: Env) -> Value:
        if method in sem.MODULE_SELF_METHODS:
            moved = receiver
            if method == "requires_grad_":  # `nn.Linear(3, 1).requires_grad_(False)`: the module, frozen
                frozen = keyword_is_false(node, None) or keyword_is_false(node, "requires_grad")
                moved = receiver.with_flags(add=Flag.FROZEN) if frozen else receiver.with_flags(remove=Flag.FROZEN)
            if method == "cuda":
                moved = self.interp.moved_here(receiver.moved_to_device())
            elif method == "cpu":
                moved = receiver.with_flags(remove=Flag.DEVICE)
            elif method == "to":
                moved = self._moved_to(moved, positional, keywords)
            dtype = (_target_dtype(positional, keywords) if method in ("to", "type")
                     else dt.MODULE_CAST_METHODS.get(method))
            if dtype is not None:
                moved = moved.with_dtype(dtype)  # every floating parameter converted in place
                if isinstance(receiver.callee, ClassInfo):
                    self._convert_submodules(receiver.callee, dtype, set())
            if receiver_name is not None and moved is not receiver:
                env.vars[receiver_name] = moved  # modules move in place
            return moved
        if method in ("parameters",):
            return Value(Flag.PARAMS).with_device_of(receiver)
        if method == "named_parameters":
            param = Value(Flag.TENSOR | Flag.GRAD, origin="parameter").with_device_of(receiver)
            return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=(EMPTY, param)))
        if method in ("buffers", "named_buffers"):  # registered tensors, on the module's device
            buffer = Value(Flag.TENSOR, origin="buffer").with_device_of(receiver)
            return Value(Flag.CONTAINER, elem=buffer if method == "buffers" else Value(Flag.CONTAINER, items=(EMPTY, buffer)))
        if method in ("children", "modules"):
            return Value(Flag.CONTAINER, elem=Value(Flag.MODULE).with_device_of(receiver))
        if receiver.callee in KEYED_CONTAINERS and method in ("keys", "values", "items"):
            item = module_item(receiver)  # `self.heads.values()` of an nn.ModuleDict: its modules
            entry = {"keys": EMPTY, "values": item, "items": Value(Flag.CONTAINER, items=(EMPTY, item), elem=item)}
            return Value(Flag.CONTAINER, elem=entry[method])
        if method in sem.MODULE_NON_OUTPUT_METHODS:
            return EMPTY
        returned = self._project_module_method(receiver, method, positional, keywords)
        if returned is not None:
            return returned
        return self._call_value(receiver, positional, keywords, method)

    def _project_module_method(self, receiver: Value, method: str, positional: list[Value],
                               keywords: dict[str, Value]) -> Value | None:
        """`model.inference(x)` of a model whose class the file cannot tell: what the project's
        module classes that define the method return (`output.cpu().detach()`), if any do."""
        project = self.interp.project
        if project is None or isinstance(receiver.callee, (ClassInfo, ForeignClass)):
            return None
        returned = project.module_method_returns(method)
        return None if returned is None else with_arguments(returned, [*positional, *keywords.values()])


    def _convert_submodules(self, cls: ClassInfo, dtype: int, seen: set[int]) -> None:
        """`Net().double()` converts the layers its fields hold, whose calls in `forward` then see
        float64 parameters: each module field of the class (and of its bases and of the module
        classes of this file its fields hold) may hold the converted dtype too. Joined, not
        replaced: the class's fields describe every instance, converted or not."""
        if id(cls) in seen:
            return
        seen.add(id(cls))
        for owner in (cls, *cls.local_bases):
            for attr, value in list(owner.attrs.items()):
                if value.has(Flag.MODULE):
                    self.interp.summaries.write_field(owner, attr, value.with_dtype(dtype))
                    if isinstance(value.callee, ClassInfo):
                        self._convert_submodules(value.callee, dtype, seen)


def _integer_cast(value: Value, dtype: int, receiver: Value) -> Value:
    """An integer or bool cast of `value` (`.long()`, `.to(torch.int16)`): it never requires grad,
    keeps the receiver's layout and has `dtype`."""
    return sem.integer_result(value).with_flags(add=dtype | receiver.flags & Flag.SPARSE)


def _frozen_output_grad(positional: list[Value], keywords: dict[str, Value]) -> int:
    """A frozen module's output may require grad only through its input (freezing.py)."""
    return merge_all([*positional, *keywords.values()]).flags & GRAD_FLAGS


def _affine(node: cst.Call, keyword: str, default: bool) -> bool:
    """Whether a normalisation layer's call keeps its parameters: `keyword=` a literal, else the
    default (a value the file cannot tell keeps them)."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return literal_bool(arg.value) is not False
    return default


def with_arguments(returned: Value, arguments: list[Value]) -> Value:
    """A result computed from parameters of unknown origin, seen where these arguments are passed."""
    return seen_from(returned, functools.partial(passed_tensors, arguments), devices=True)


@dataclass(frozen=True)
class Attribution:
    """An attribution method of Captum (`IntegratedGradients(model)`): whether what its `attribute`
    returns requires grad (semantics.CAPTUM_GRAD_ATTRIBUTIONS: "always", "input" or "never")."""

    grad: str

    def result(self, inputs: Value, node: cst.Call) -> Value:
        """The attributions of ``inputs`` (one per input for a tuple of them), on their device, and
        `(attributions, delta)` where the call asks for the convergence delta."""

        def attributions(value: Value) -> Value:
            grad = Flag.GRAD if self.grad == "always" else value.flags & Flag.GRAD if self.grad == "input" else 0
            return Value(Flag.TENSOR | grad, origin="Captum attributions" if grad else None).with_device_of(value)

        found = (Value(Flag.CONTAINER, items=tuple(attributions(item) for item in inputs.items))
                 if inputs.items is not None else attributions(inputs))
        delta = next((arg.value for arg in node.args
                      if arg.keyword is not None and arg.keyword.value == "return_convergence_delta"), None)
        if delta is not None and literal_bool(delta) is not False:
            return Value(Flag.CONTAINER, items=(found, Value(Flag.TENSOR)))
        return found


@dataclass(frozen=True)
class PartialCall:
    """`functools.partial(f, a, k=b)` of a function of this file: calling it calls `f` with these
    arguments first."""

    function: FunctionInfo
    positional: tuple[Value, ...]
    keywords: tuple[tuple[str, Value], ...]


def instance_method(value: Value, name: str) -> FunctionInfo | None:
    """The method `name` of the class of this file that `value` is an instance of (as Python
    finds it: its bases of this file too)."""
    cls = value.callee
    if value.has(Flag.INSTANCE) and isinstance(cls, ClassInfo):
        return cls.method(name)
    return None


def rest_bindings(info: FunctionInfo, call: cst.Call, positional: list[Value],
                  keywords: dict[str, Value]) -> list[tuple[str, Value]]:
    """`f(a, b)` into `def f(*args)`, `f(a=x)` into `def f(**kwargs)`: what lands in the rest
    parameters, joined into one element (the analysis of `f` binds it; see analyse_function)."""
    bound: list[tuple[str, Value]] = []
    params = info.node.params
    names, keyword_names = info.parameter_names()
    for star, extra in ((params.star_arg, positional[len(names):]),
                        (params.star_kwarg, [value for key, value in keywords.items() if key not in keyword_names])):
        if isinstance(star, cst.Param) and extra:
            bound.append((star.name.value, Value(Flag.CONTAINER, elem=passed_by(merge_all(extra), call))))
    return bound


# How deep `map(f, xs)` analyses an `f` not analysed yet (interpreter.MAX_CALL_DEPTH).
MAPPED_ANALYSIS_DEPTH = 8
# Methods of list, set and dict that put something into the receiver.
CONTAINER_WRITES = frozenset({"append", "add", "insert", "extend", "update", "setdefault"})


def _constant_first_key(node: cst.Call) -> str | None:
    """`d.get("loss")`: the first argument when the file spells it."""
    first = node.args[0] if node.args else None
    return constant_key(first.value) if first is not None and first.keyword is None else None


def _rot90_k(node: cst.Call) -> str | None:
    """The literal `k` of `np.rot90(a, k)` ("1" when it is left out); None for anything else."""
    for index, arg in enumerate(node.args):
        if (arg.keyword is not None and arg.keyword.value == "k") or (arg.keyword is None and index == 1 and not arg.star):
            value = arg.value
            if isinstance(value, cst.Integer):
                return value.value
            if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) and isinstance(value.expression, cst.Integer):
                return "-" + value.expression.value
            return None
    return "1"


def _string_argument(node: cst.Call) -> str | None:
    """The first argument when it is a plain string literal (`">"`), else None."""
    if node.args and isinstance(node.args[0].value, cst.SimpleString):
        text = string_value(node.args[0].value)
        return text if isinstance(text, str) else None
    return None


def _may_be_a_module(receiver: Value, receiver_name: str | None, env: Env) -> bool:
    """A parameter of unknown origin, or a name bound to something the file knows nothing of
    (`model = create_model(...)` from an imported factory), moved to a device or not
    (`get_model(cfg).to(device)`: tensors and modules both have `.to`), or hinted a module on
    one path only (`model.load_state_dict(...)` in a `try`, `model.apply(init)` in its `except`)."""
    if receiver.has(Flag.UNKNOWN_ARG):
        return not receiver.is_tensor_like and not receiver.has(Flag.MODULE | Flag.NOT_TENSOR)
    unknown = receiver.flags & ~(Flag.DEVICE | Flag.MODULE_HINT) == Flag.NONE
    return unknown and receiver_name is not None and env.lookup(receiver_name) is not None


# A mapping's methods that no tensor, module or array has (torch 2.13, checked in tests/test_tensor_methods.py).
MAPPING_METHODS = frozenset({"items", "keys", "setdefault", "popitem"})


def _self_field(call: cst.Call, env: Env) -> str | None:
    """`model` in `self.model.train()` (a method's receiver is a field of `self`), else None."""
    func = call.func
    if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and env.self_name is not None
            and is_name(func.value.value, env.self_name)):
        return func.value.attr.value
    return None


def _with_distributions(output: Value, returned: Value | None) -> Value:
    """A module's output where its `forward` returns a torch distribution (`return dist, value`):
    the distribution itself there (its draws carry no grad), the module's output elsewhere."""
    if returned is None:
        return output
    if isinstance(returned.callee, Distribution):
        return returned
    if returned.items is None or not any(isinstance(item.callee, Distribution) for item in returned.items):
        return output
    items = tuple(item if isinstance(item.callee, Distribution) else output for item in returned.items)
    return Value(Flag.CONTAINER, items=items, elem=output)


def _tensor_or_array(value: Value) -> bool:
    """A tensor or an ndarray and nothing else: its methods cannot rebind the fields of `self`."""
    return bool(value.flags & (Flag.TENSOR | Flag.GRAD | Flag.NDARRAY)) and not value.flags & (
        Flag.MODULE | Flag.MODULE_HINT | Flag.INSTANCE | Flag.UNKNOWN_OBJECT | Flag.CONTAINER) and value.callee is None


def _unknown(value: Value) -> bool:
    """A value the file knows nothing of: no flag but "from an unknown caller" and module hints."""
    return not value.flags & ~(Flag.UNKNOWN_ARG | Flag.DEVICE | Flag.MODULE_HINT) and value.callee is None


def _module_call_signature(method: str, node: cst.Call) -> bool:
    """`model.eval()` takes no argument (`df.eval("a + b")` is pandas); the others are as written."""
    return not (method == "eval" and node.args)


def _is_super(receiver: cst.BaseExpression, env: Env) -> bool:
    """`super()` or `super(C, self)`, the builtin (no local name `super`)."""
    return (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super"
            and env.lookup("super") is None)


def _used_as_submodule(cls: ClassInfo, known: Value, positional: list[Value]) -> bool:
    """`self.conv = create_conv2d(...)` (a factory the file cannot see into), then `self.conv(x)`
    with a tensor in a module's method: `self.conv` is a submodule, so `self.conv.weight` is a
    parameter (the methods that read the field already are analysed again, as for any write)."""
    if not cls.is_module or known.flags != Flag.NONE or known.callee is not None:
        return False
    return any(value.has(TENSOR_FLOW) for value in positional[:1])


# Integer and bool dtypes: a tensor of one never requires grad (autograd refuses them; checked on torch 2.13).
INTEGRAL = Flag.INTEGER | Flag.BOOL


def _target_dtype(positional: list[Value], keywords: dict[str, Value]) -> int | None:
    """The dtype `.to(...)` converts to: `torch.bfloat16`, `dtype=`, or another tensor's; None: kept."""
    target = keywords.get("dtype")
    if target is not None:
        return dt.dtype_named(target)
    for value in positional[:2]:  # `.to(dtype)`, `.to(device, dtype)`
        named = dt.dtype_named(value)
        if named:
            return named
        if value.flags & TENSOR_FLOW:
            return value.dtype  # `.to(other)`: other's device and dtype
        if not value.flags & (Flag.DEVICE_SPEC | Flag.CPU_SPEC):
            return 0  # `.to(something)` the file does not know: it may be a dtype
    return None


def _array_method_dtype(array: Value, method: str, positional: list[Value], keywords: dict[str, Value]) -> int:
    """`a.astype(np.float32)`: float32; `a.reshape(...)`: the array's dtype; others: unknown."""
    if method == "astype":
        target = positional[0] if positional else keywords.get("dtype", EMPTY)
        return dt.dtype_named(target)
    if method == "view" and (positional or "dtype" in keywords):
        return dt.dtype_named(positional[0] if positional else keywords["dtype"])  # `a.view(np.uint16)`
    if method in dt.NDARRAY_DTYPE_KEEPING:
        return array.dtype
    return 0


def _string(node: cst.BaseExpression | None) -> str | None:
    """The text of a plain string literal, None for anything else."""
    if isinstance(node, cst.SimpleString) and node.prefix.lower() in ("", "u"):
        value = string_value(node)
        return value if isinstance(value, str) else None
    return None
