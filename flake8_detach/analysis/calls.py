"""What calls evaluate to: functions of this module, library functions, methods and modules.

The walk hands every call here; the knowledge of torch, NumPy, matplotlib and pandas comes from
the tables in :mod:`.semantics`, and functions defined in the module are analysed by the
:class:`Interpreter` with the values this call passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from . import array_facts
from . import semantics as sem
from .facts import ConvertingCall
from .scopes import ClassInfo, Env, FunctionInfo
from .syntax import dotted, keyword_is_false
from .syntax import receiver_name as syntax_receiver_name
from .values import EMPTY, GRAD_FLAGS, TENSOR_FLOW, Flag, Value, merge_all

if TYPE_CHECKING:
    from .interpreter import Interpreter


class CallEvaluator:
    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self.facts = interp.facts
        self.imports = interp.imports

    def eval_call(self, node: cst.Call, env: Env) -> Value:
        func = node.func
        positional: list[Value] = []
        keywords: dict[str, Value] = {}
        for arg in node.args:
            value = self.interp.eval(arg.value, env)
            if arg.keyword is not None:
                keywords[arg.keyword.value] = value
            elif arg.star:
                positional.append(value.element())
            else:
                positional.append(value)
        qualified = self.imports.resolve(func)
        written = dotted(func)
        if qualified in self.interp.converting_functions or written in self.interp.converting_functions:
            self.facts.converting_calls.append(ConvertingCall(node, written or str(qualified), "convert"))
        if qualified is not None:
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
            if isinstance(func.value, cst.Name):
                if sem.writes_in_place(method):
                    self.interp.aliases.note_write(func.value, env)
                if func.value.value == env.self_name and env.cls is not None:
                    info = env.cls.methods.get(method)
                    if info is not None:
                        return self.interp.grad_mode_result(self.interp.call_function(info, node, positional, keywords))
                    known = env.cls.attrs.get(method)
                    if known is not None:
                        known = _submodule_by_use(env.cls, method, known, positional)
                        return self.interp.grad_mode_result(self._call_value(known, positional, keywords, method))
            if receiver.has(Flag.INSTANCE) and isinstance(receiver.callee, ClassInfo):
                info = receiver.callee.methods.get(method)  # `client.score(x)`: the class's method
                if info is not None:
                    return self.interp.grad_mode_result(self.interp.call_function(info, node, positional, keywords))
            if receiver.has(Flag.AXES) and method in sem.PLOTTING:
                self.facts.converting_calls.append(ConvertingCall(node, written or method, "convert"))
            if receiver.has(Flag.SKLEARN_ESTIMATOR) and method in sem.SKLEARN_CONVERTING_METHODS:
                named = written if isinstance(func.value, (cst.Name, cst.Attribute)) and written else f".{method}"
                self.facts.converting_calls.append(ConvertingCall(node, named, "convert"))
                return receiver if method == "fit" else Value(Flag.NDARRAY)  # `fit` returns the estimator
            if method in sem.AXES_FACTORIES and method not in ("axes",):
                return Value(Flag.AXES)
            result = self._call_method(receiver, method, node, positional, keywords, env)
            return self.interp.grad_mode_result(result)
        callee = self.interp.eval(func, env)
        if callee.has(Flag.FUNCTION) and isinstance(callee.callee, FunctionInfo):
            return self.interp.grad_mode_result(self.interp.call_function(callee.callee, node, positional, keywords))
        if isinstance(callee.callee, ClassInfo) and not callee.has(Flag.INSTANCE):  # the class, not an instance
            return self._instantiate(callee, callee.callee, node, positional, keywords)
        if isinstance(func, cst.Name):
            builtin = self._call_builtin(func.value, callee, positional, env)
            if builtin is not None:
                return builtin
        return self.interp.grad_mode_result(self._call_value(callee, positional, keywords, written))

    def _instantiate(self, callee: Value, cls: ClassInfo, node: cst.Call, positional: list[Value],
                     keywords: dict[str, Value]) -> Value:
        """`Client(model)`: runs `__init__` with the arguments (its `self.x = ...` fill the class's
        fields) and gives an instance whose method calls go to the class's methods."""
        init = cls.methods.get("__init__")
        if init is not None:
            self.interp.call_function(init, node, positional, keywords)
        kind = self._call_value(callee, positional, keywords, cls.name)
        return Value(kind.flags | Flag.INSTANCE, callee=cls)

    def _call_value(self, callee: Value, positional: list[Value], keywords: dict[str, Value],
                    name: str | None) -> Value:
        if callee.has(Flag.MODULE_CLASS):
            return Value(Flag.MODULE)
        if callee.has(Flag.PLAIN_CLASS):
            return Value(Flag.NOT_TENSOR)  # an instance of a plain class of this file
        if callee.has(Flag.MODULE | Flag.MODULE_HINT):  # MODULE_HINT: `model.train()` ... `model(x)`
            output = Value(Flag.TENSOR | Flag.GRAD, origin=f"output of {name or 'a module'}")
            output = output.with_device_of(callee, *positional, *keywords.values())
            if positional and positional[0].has(Flag.PACKED_SEQUENCE):
                # An RNN fed a PackedSequence returns one, then its hidden state: `out, h = rnn(packed)`.
                return Value(Flag.CONTAINER, items=(positional[0], output), elem=output)
            return output
        if callee.has(Flag.UNKNOWN_ARG) and not callee.has(Flag.NOT_TENSOR):
            # `fn(x)` with `fn` a parameter nothing in the file passes: as unknown as `fn` itself.
            return Value(Flag.UNKNOWN_ARG, origin=f"result of {callee.origin or 'a parameter'}")
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
            return self.interp.grad_mode_result(first.element().tensor_part() if first.has(Flag.CONTAINER) else first.tensor_part())
        return None

    def _call_library(self, qualified: str, node: cst.Call, positional: list[Value],
                      keywords: dict[str, Value]) -> Value:
        last = qualified.rsplit(".", 1)[-1]
        kind = sem.converting_kind(qualified)
        if kind is not None:
            self.facts.converting_calls.append(ConvertingCall(node, dotted(node.func) or qualified, kind))
        if qualified in array_facts.TORCH_FROM_ARRAY:
            kind = "array" if qualified in array_facts.TORCH_ARRAY_ONLY else "data"
            self.facts.array_handovers.append(ConvertingCall(node, dotted(node.func) or qualified, kind))
        if qualified.startswith("numpy."):
            return array_facts.numpy_result(last, positional, keywords, _rot90_k(node) if last == "rot90" else None)
        if qualified.startswith("cv2.") and last in array_facts.CV2_ARRAY_RESULTS:
            return Value(Flag.NDARRAY)  # a fresh, contiguous array (`cv2.flip`: the safe mirror)
        if qualified.startswith("sklearn.") and last[:1].isupper():
            return Value(Flag.SKLEARN_ESTIMATOR | Flag.NOT_TENSOR)  # `LogisticRegression()`, `KMeans(3)`
        if qualified == "matplotlib.pyplot.subplots":
            return Value(Flag.CONTAINER, items=(EMPTY, Value(Flag.AXES)))
        if qualified.startswith("matplotlib.pyplot.") and last in sem.AXES_FACTORIES:
            return Value(Flag.AXES)
        if qualified in sem.DATA_LOADERS:
            return Value(Flag.CONTAINER, elem=Value(Flag.TENSOR, origin="batch"))
        if qualified in sem.PASSTHROUGH_FUNCTIONS:
            return positional[0] if positional else EMPTY
        if qualified.startswith(sem.MODEL_FACTORIES):
            return Value(Flag.MODULE)
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
            return Value(Flag.TENSOR | grad, origin="nn.Parameter").with_device_of(data)
        if sem.is_nn_module_class(qualified):
            return Value(Flag.MODULE | self._device_keyword(keywords, EMPTY).flags)
        if last[:1].isupper() and last not in sem.FACTORIES:
            return Value(Flag.NOT_TENSOR)  # a class under torch.* (an IR box, a wrapper): not a tensor
        if last == "from_numpy":
            return Value(Flag.TENSOR)
        if last in sem.FACTORIES:
            base = EMPTY
            if last.endswith("_like") and positional:
                base = positional[0].device_part()
            if last in ("as_tensor", "asarray", "Variable") and positional:
                base = positional[0].tensor_part()
            value = Value(Flag.TENSOR | base.flags, origin=base.origin)
            if "requires_grad" in keywords and not keyword_is_false(node, "requires_grad"):
                value = value.with_flags(add=Flag.GRAD)
                value = Value(value.flags, origin=f"torch.{last}(..., requires_grad=True)")
            return self._device_keyword(keywords, value)
        if qualified in sem.GPU_AVAILABILITY:
            return Value(Flag.DEVICE_FLAG)
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
        receiver_name = syntax_receiver_name(node)
        if _may_be_a_module(receiver, receiver_name, env) and _module_call_signature(method, node):
            receiver = self._duck_typed(receiver, method, receiver_name, env)
        if receiver.has(Flag.MODULE) and receiver.has(Flag.TENSOR) and method in sem.TENSOR_ONLY_METHODS:
            receiver = receiver.with_flags(remove=Flag.MODULE)  # `model.fc.weight.detach()`: a parameter
        if receiver.has(Flag.MODULE):
            return self._module_method(receiver, method, positional, keywords, receiver_name, env)
        if method in ("append", "add", "insert", "extend") and receiver_name is not None:
            added = positional[-1] if positional else EMPTY
            self.interp.statements.add_element(receiver_name, added.element() if method == "extend" else added, env)
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
            return array_facts.ndarray_method(receiver, method, positional, keywords)
        if method == "newbyteorder":  # `dt.newbyteorder(">")` (ndarray.newbyteorder is gone in NumPy 2)
            return array_facts.newbyteorder(_string_argument(node))
        if method in ("detach", "detach_"):
            return receiver.with_flags(add=Flag.TENSOR, remove=GRAD_FLAGS)
        if method == "numpy":
            return Value(Flag.NDARRAY)
        if method == "cpu":
            return receiver.with_flags(remove=Flag.DEVICE)
        if method in ("cuda", "xpu", "mps"):
            return receiver.moved_to_device()
        if method == "to":
            result = receiver
            for target in positional[:1] + [keywords.get("device", EMPTY)]:
                result = sem.device_move(target, result)
            return result
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
        if method in sem.NO_GRAD_RESULTS:
            return sem.integer_result(receiver)
        if method in sem.VALUES_INDICES and (positional or "dim" in keywords):
            return sem.values_indices(receiver)
        result = receiver.tensor_part()
        for value in positional:
            if value.flags & TENSOR_FLOW:
                result = result.merge(value.tensor_part())
        return result

    @staticmethod
    def _duck_typed(receiver: Value, method: str, receiver_name: str | None, env: Env) -> Value:
        """A parameter of unknown origin used as an nn.Module is one from here on.

        `.parameters()`, `.eval()`, `.named_parameters()` and the like are a module's alone; `.train()`,
        `.zero_grad()`, `.state_dict()` are shared with trainers and optimizers, so they only hint:
        the value becomes a module's output when it is also called (`model(x)`).
        """
        if method in sem.MODULE_ONLY_METHODS:
            found = Value(Flag.MODULE, origin=receiver.origin).with_device_of(receiver)
        elif method in sem.MODULE_LIKE_METHODS:
            found = receiver.with_flags(add=Flag.MODULE_HINT)
        else:
            return receiver
        if receiver_name is not None and env.lookup(receiver_name) is not None:
            env.vars[receiver_name] = found
        return found

    def _module_method(self, receiver: Value, method: str, positional: list[Value],
                       keywords: dict[str, Value], receiver_name: str | None, env: Env) -> Value:
        if method in sem.MODULE_SELF_METHODS:
            moved = receiver
            if method == "cuda":
                moved = receiver.moved_to_device()
            elif method == "cpu":
                moved = receiver.with_flags(remove=Flag.DEVICE)
            elif method == "to":
                for target in positional[:1] + [keywords.get("device", EMPTY)]:
                    moved = sem.device_move(target, moved)
            if receiver_name is not None and moved is not receiver:
                env.vars[receiver_name] = moved  # modules move in place
            return moved
        if method in ("parameters",):
            return Value(Flag.PARAMS).with_device_of(receiver)
        if method == "named_parameters":
            param = Value(Flag.TENSOR | Flag.GRAD, origin="parameter").with_device_of(receiver)
            return Value(Flag.CONTAINER, elem=Value(Flag.CONTAINER, items=(EMPTY, param)))
        if method in ("children", "modules"):
            return Value(Flag.CONTAINER, elem=Value(Flag.MODULE).with_device_of(receiver))
        if method in sem.MODULE_NON_OUTPUT_METHODS:
            return EMPTY
        return self._call_value(receiver, positional, keywords, method)


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
        text = node.args[0].value.evaluated_value
        return text if isinstance(text, str) else None
    return None


def _may_be_a_module(receiver: Value, receiver_name: str | None, env: Env) -> bool:
    """A parameter of unknown origin, or a name bound to something the file knows nothing of
    (`model = create_model(...)` from an imported factory)."""
    if receiver.has(Flag.UNKNOWN_ARG):
        return not receiver.is_tensor_like and not receiver.has(Flag.MODULE | Flag.NOT_TENSOR)
    return receiver.flags == Flag.NONE and receiver_name is not None and env.lookup(receiver_name) is not None


def _module_call_signature(method: str, node: cst.Call) -> bool:
    """`model.eval()` takes no argument (`df.eval("a + b")` is pandas); the others are as written."""
    return not (method == "eval" and node.args)


def _submodule_by_use(cls: ClassInfo, attr: str, known: Value, positional: list[Value]) -> Value:
    """`self.conv = create_conv2d(...)` (a factory the file cannot see into), then `self.conv(x)`
    with a tensor in a module's method: `self.conv` is a submodule, so `self.conv.weight` is a
    parameter. The methods that read it before this call are analysed again (`missed`)."""
    if not cls.is_module or known.flags != Flag.NONE or known.callee is not None:
        return known
    if not any(value.has(TENSOR_FLOW) for value in positional[:1]):
        return known
    module = Value(Flag.MODULE, origin=f"submodule '{attr}'")
    cls.attrs[attr] = module
    cls.missed.add(attr)
    return module
