"""The walk over expressions: what each kind of expression evaluates to.

One small method per kind of node, found through a table on the node's exact type; calls are
the :class:`CallEvaluator`'s. Every evaluated expression's value is recorded in the facts (merged
over every time the walk meets it), with whether grad mode was off there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import libcst as cst

from . import array_facts, frames, ranks
from . import dtypes as dt
from . import semantics as sem
from .construction import unset_in_constructor
from .distributions import Distribution
from .exports import ForeignClass
from .guards import (
    Narrowing,
    branch_narrowings,
    device_flag_assumptions,
    fails_here,
    isinstance_narrowing,
)
from .scopes import ClassInfo, Env, FunctionInfo
from .syntax import all_params, is_property, slot_name, string_value
from .uses import tensor_users
from .values import (
    ARRAY_LAYOUT,
    DTYPES,
    EMPTY,
    STOPPED_ON_A_GPU,
    TENSOR_FLOW,
    Flag,
    Value,
    merge_all,
    module_item,
    passed_device,
)
from .versions import known_branch

# What `.data` and `.grad` keep of a tensor besides where it lives: its rank, and that only runs
# without a GPU reach it (placement.py).
_PATH_FACTS = Flag.ZERO_DIM | STOPPED_ON_A_GPU

if TYPE_CHECKING:
    from .interpreter import Interpreter


def _equality(operator: cst.BaseCompOp) -> bool | None:
    if isinstance(operator, (cst.Equal, cst.Is)):
        return True
    if isinstance(operator, (cst.NotEqual, cst.IsNot)):
        return False
    return None


def _literal_int(node: cst.BaseExpression) -> str | None:
    """`3`, `-1`: the text of an integer literal (a name could hold anything)."""
    if isinstance(node, cst.Integer):
        return node.value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return "-" + node.expression.value
    return None


def _basic_index(node: cst.BaseExpression) -> bool:
    """An index that makes NumPy return a view: an integer, `...` or `None` (not an array or a mask)."""
    return _literal_int(node) is not None or isinstance(node, cst.Ellipsis) or (
        isinstance(node, cst.Name) and node.value == "None")


def _array_view(node: cst.Subscript, base: Value) -> Value | None:
    """`a[:, ::-1]` of an array (or of anything but a tensor or a list): a view with its layout and,
    for a literal negative step, a negative stride. None where the index may copy (`a[idx]`)."""
    if not base.flags & (Flag.NDARRAY | ARRAY_LAYOUT) and not any(
        isinstance(element.slice, cst.Slice) and element.slice.step is not None for element in node.slice
    ):
        return None  # the common case: no array, no step
    negative = False
    for element in node.slice:
        part = element.slice
        if isinstance(part, cst.Slice):
            step = _literal_int(part.step) if part.step is not None else None
            negative = negative or array_facts.is_negative_step(step)
        elif isinstance(part, cst.Index) and not _basic_index(part.value):
            return None
    layout = array_facts.layout_of(base)
    if negative:
        layout = array_facts.reversed_layout(layout)
    if base.has(Flag.NDARRAY):
        return array_facts.array_with(layout | (base.flags & DTYPES))  # a view keeps the dtype
    if not layout:
        return None
    return base.element().with_flags(add=layout)


@dataclass(frozen=True)
class LambdaBody:
    """What a lambda returns, evaluated where it is defined (its parameters of unknown origin):
    a call of it gives this, with what the call passes in place of the parameters."""

    value: Value


def constant_key(node: cst.BaseExpression) -> str | None:
    """`"loss"`, `3`: a dict key or index the file spells (its text), None for anything computed."""
    if isinstance(node, cst.SimpleString):
        try:
            return repr(string_value(node))
        except Exception:  # noqa: BLE001 - odd escapes: not a key we can compare
            return None
    return _literal_int(node)


def _no_evidence(node: cst.BaseExpression, env: Env) -> Value:
    return EMPTY


class ExpressionEvaluator:
    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self.facts = interp.facts
        self.imports = interp.imports
        self._tensor_users: dict[cst.FunctionDef, frozenset[str]] = {}  # names a function uses as tensors
        # libcst's node classes are final, so the exact type is the key. Kinds not listed have
        # their sub-expressions evaluated and give no evidence.
        self._evaluators: dict[type[cst.CSTNode], Callable[[Any, Env], Value]] = {
            cst.Name: self._eval_name,
            cst.Attribute: self._eval_attribute,
            cst.Call: interp.calls.eval_call,
            cst.Subscript: self._eval_subscript,
            cst.BinaryOperation: self._eval_binary_operation,
            cst.UnaryOperation: self._eval_unary_operation,
            cst.BooleanOperation: self._eval_boolean_operation,
            cst.Comparison: self._eval_comparison,
            cst.IfExp: self._eval_if_expression,
            cst.NamedExpr: self._eval_named_expression,
            cst.List: self._eval_sequence,
            cst.Tuple: self._eval_sequence,
            cst.Set: self._eval_sequence,
            cst.Dict: self._eval_dict,
            cst.ListComp: self._eval_comprehension,
            cst.SetComp: self._eval_comprehension,
            cst.GeneratorExp: self._eval_comprehension,
            cst.DictComp: self._eval_comprehension,
            cst.Lambda: self._eval_lambda,
            cst.SimpleString: self._eval_string,
            cst.FormattedString: self._eval_formatted_string,
            cst.Await: self._eval_await,
            cst.Yield: self._eval_yield,
            cst.StarredElement: self._eval_starred,
            cst.Integer: _no_evidence,
            cst.Float: _no_evidence,
            cst.Imaginary: _no_evidence,
            cst.Ellipsis: _no_evidence,
        }

    def eval(self, node: cst.BaseExpression, env: Env) -> Value:
        value = self._eval(node, env)
        facts = self.facts
        old = facts.values.get(node)
        facts.values[node] = value if old is None else old.merge(value)
        facts.top_statements[node] = self.interp.top
        if self.interp.grad_enabled:  # off only where every analysis reaching it had grad off
            facts.grad_enabled_seen.add(node)
        else:
            facts.grad_disabled.add(node)
        return value

    def _eval(self, node: cst.BaseExpression, env: Env) -> Value:
        """Dispatch on the node's type (one dict lookup, not a chain of ABC isinstance checks)."""
        method = self._evaluators.get(type(node))
        if method is not None:
            return method(node, env)
        for child in node.children:  # any other expression: evaluate its parts
            if isinstance(child, cst.BaseExpression):
                self.eval(child, env)
        return EMPTY

    def _eval_subscript(self, node: cst.Subscript, env: Env) -> Value:
        self.facts.parents[node.value] = node  # `p.data[i] = v` writes through `.data`
        slots = self.interp.statements.slots
        slot = slot_name(node) if slots else None
        if slot in slots:
            held = env.vars.get(slot)  # this iteration's entry (statements.loop_slots)
            if held is not None:
                self.eval(node.slice[0].slice.value, env)  # type: ignore[attr-defined]
                return held
        base = self.eval(node.value, env)
        index_value: cst.BaseExpression | None = None
        key_value = EMPTY
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                key_value = self.eval(element.slice.value, env)
                index_value = element.slice.value
            elif isinstance(element.slice, cst.Slice):
                for part in (element.slice.lower, element.slice.upper, element.slice.step):
                    if part is not None:
                        self.eval(part, env)
        if base.objs and index_value is not None and len(node.slice) == 1:
            key = constant_key(index_value)
            stored = self.interp.heap.item_of(base.objs, key) if key is not None else None
            if stored is not None:
                return stored  # `history["loss"]`: what the file put under that key
        if len(node.slice) == 1 and ranks.indexing_raises(base, index_value):
            return EMPTY  # `loss.data[0]` of a 0-dim loss: an IndexError, nothing flows on
        if base.items is not None and isinstance(index_value, cst.Integer) and len(node.slice) == 1:
            index = int(index_value.value, 0)
            if -len(base.items) <= index < len(base.items):
                return base.items[index]
        if base.has(Flag.MODULE):
            return module_item(base)
        if base.has(Flag.DETECTION) and index_value is not None and constant_key(index_value) in sem.DETECTION_INTEGER_KEYS:
            return Value(Flag.TENSOR | Flag.INTEGER).with_device_of(base)  # `pred[0]["labels"]`: class indices
        item = self.interp.calls.item(base, node, key_value) if len(node.slice) == 1 else None
        if item is not None:  # `bag[i]` of a class of this file: its `__getitem__`
            return item
        if base.has(Flag.FRAME):  # `df[cols]`, `df.iloc[:, :-1]`: rows and columns keep their dtypes
            return Value(frames.FRAME | base.dtype)
        if not base.is_tensor_like and (base.has(Flag.NDARRAY) or not base.has(Flag.CONTAINER)):
            view = _array_view(node, base)
            if view is not None:
                return view
        return base.element()

    def _eval_binary_operation(self, node: cst.BinaryOperation, env: Env) -> Value:
        left = self.eval(node.left, env)
        right = self.eval(node.right, env)
        result = left.tensor_part().merge(right.tensor_part())
        if not result.flags and (left.has(Flag.NDARRAY) or right.has(Flag.NDARRAY)):
            return Value(Flag.NDARRAY | self._array_operation_dtype(node, left, right))
        if result.flags & DTYPES or result.flags and self.interp.in_autocast and isinstance(node.operator, cst.MatrixMultiply):
            result = result.with_dtype(self._tensor_operation_dtype(node, left, right))
        if result.flags & TENSOR_FLOW and (dt.is_imaginary_literal(node.left) or dt.is_imaginary_literal(node.right)):
            result = result.with_dtype(dt.COMPLEX)  # `t * 1j`: complex, whatever `t` holds
        if result.flags & TENSOR_FLOW and not isinstance(node.operator, cst.MatrixMultiply):
            result = result.with_flags(add=ranks.zero_dim_of(left, right))  # `loss / n`: still 0-dim
        if result.flags & TENSOR_FLOW:
            result = result.with_flags(add=self.interp.gpu_stops((left, right), isinstance(node.operator, cst.MatrixMultiply)))
        if not result.flags and isinstance(node.operator, cst.Add) and (
            left.has(Flag.CONTAINER) or right.has(Flag.CONTAINER)
        ):
            return left.merge(right)
        return self.interp.grad_mode_result(result)

    def _tensor_operation_dtype(self, node: cst.BinaryOperation, left: Value, right: Value) -> int:
        """`a + b` promotes; `a @ b` of float32 and float64 raises (noted for DET109)."""
        if isinstance(node.operator, cst.MatrixMultiply):
            self.interp.calls._note_operand_clash(node, [(node.left, left), (node.right, right)], "matmul")
            if self.interp.in_autocast:
                return self.interp.autocast
        return dt.binary(left, right, dt.is_number_literal(node.left), dt.is_number_literal(node.right))

    @staticmethod
    def _array_operation_dtype(node: cst.BinaryOperation, left: Value, right: Value) -> int:
        """NumPy arrays promote like tensors (no scalar exception for arrays of any shape)."""
        left_array = left.has(Flag.NDARRAY)
        right_array = right.has(Flag.NDARRAY)
        if left_array and right_array:
            return dt.promote(left.dtype, right.dtype)
        array, other = (left, node.right) if left_array else (right, node.left)
        if dt.is_number_literal(other):
            return dt.with_scalar(array.dtype)
        return array.dtype & dt.F64

    def _eval_unary_operation(self, node: cst.UnaryOperation, env: Env) -> Value:
        operand = self.eval(node.expression, env)
        if isinstance(node.operator, cst.Not):
            return EMPTY
        return operand.tensor_part().with_flags(add=operand.flags & Flag.ZERO_DIM)

    def _eval_boolean_operation(self, node: cst.BooleanOperation, env: Env) -> Value:
        left = self.eval(node.left, env)
        known = isinstance_narrowing(node.left, self.imports) if isinstance(node.operator, cst.And) else None
        if known is None:
            return left.merge(self.eval(node.right, env))
        # `isinstance(x, Box) and x.data`: x is a Box on the right
        return left.merge(self._eval_narrowed(node.right, env, [known]))

    def _eval_comparison(self, node: cst.Comparison, env: Env) -> Value:
        values = [self.eval(node.left, env)] + [self.eval(c.comparator, env) for c in node.comparisons]
        if len(values) == 2 and sem.uses_gpu_comparison(_equality(node.comparisons[0].operator), *values):
            return Value(Flag.DEVICE_FLAG)  # `DEVICE != "cpu"`, `device.type == "cuda"`
        return sem.integer_result(merge_all([v.tensor_part() for v in values]))

    def _eval_if_expression(self, node: cst.IfExp, env: Env) -> Value:
        interp = self.interp
        self.eval(node.test, env)
        verdict = known_branch(node.test, self.imports)
        if verdict is not None:  # `a if torch.__version__ >= "1.0" else a.data[0]`: one branch runs
            return self.eval(node.body if verdict else node.orelse, env)
        # `t.detach().numpy() if t.requires_grad else t.numpy()`: t does not require grad in the
        # second branch; `t.cpu().numpy() if t.is_cuda else t.numpy()`: t is on the CPU there.
        body_narrowings, orelse_narrowings = branch_narrowings(node.test, self.imports)
        body_flags, orelse_flags = device_flag_assumptions(node.test, interp.device_flag)
        body = interp.assuming(body_flags, partial(self._eval_narrowed, node.body, env, body_narrowings))
        orelse = interp.assuming(orelse_flags, partial(self._eval_narrowed, node.orelse, env, orelse_narrowings))
        assert body is not None and orelse is not None
        return body.merge(orelse)

    def _eval_narrowed(self, node: cst.BaseExpression, env: Env, narrowings: list[Narrowing]) -> Value:
        """An expression guarded by a test, with what the test says about names there."""
        saved = env.narrow(narrowings)
        try:
            return self.eval(node, env)
        finally:
            env.widen(saved)

    def _eval_named_expression(self, node: cst.NamedExpr, env: Env) -> Value:
        value = self.eval(node.value, env)
        self.interp.assign(node.target, value, env)
        return value

    def _eval_lambda(self, node: cst.Lambda, env: Env) -> Value:
        inner = Env(parent=env)
        for param in all_params(node.params):
            if param.default is not None:
                self.eval(param.default, env)
            inner.vars[param.name.value] = self.interp.param_value(param)
        body = self.eval(node.body, inner)
        return Value(callee=LambdaBody(body)) if body.flags or body.objs or body.elem is not None else EMPTY

    def _eval_string(self, node: cst.SimpleString, env: Env) -> Value:
        try:
            text = string_value(node)
        except Exception:  # noqa: BLE001 - odd escapes: not a device string
            return EMPTY
        if not isinstance(text, str):
            return EMPTY
        if text[:1] == ">":
            return array_facts.typestring_value(text)  # `dtype=">f4"`
        return sem.string_device(text)

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
        yielded = EMPTY
        if isinstance(node.value, cst.BaseExpression):
            yielded = self.eval(node.value, env)
        elif isinstance(node.value, cst.From):
            yielded = self.eval(node.value.item, env).element()
        function = self.interp.current_function
        if function is not None:  # iterating a call of this generator gives what it yields
            self.interp.heap.note_yield(function.node, yielded)
        return EMPTY

    def _eval_starred(self, node: cst.StarredElement, env: Env) -> Value:
        return self.eval(node.value, env)

    def _eval_sequence(self, node: cst.List | cst.Tuple | cst.Set, env: Env) -> Value:
        items: list[Value] = []
        for element in node.elements:
            value = self.eval(element.value, env)
            items.append(value.element() if isinstance(element, cst.StarredElement) else value)
        structured = not any(isinstance(e, cst.StarredElement) for e in node.elements)
        value = Value(Flag.CONTAINER, items=tuple(items) if structured else None, elem=merge_all(items))
        if isinstance(node, cst.Tuple):
            return value  # immutable: its items say all
        return self.interp.heap.allocate(node, value)

    def _eval_dict(self, node: cst.Dict, env: Env) -> Value:
        values: list[Value] = []
        keys: dict[str, Value] = {}
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                self.eval(element.key, env)
                value = self.eval(element.value, env)
                # `DTYPE_MAP[name]`: which dtype a lookup gives depends on data, not the file.
                values.append(EMPTY if dt.dtype_named(value) else value)
                key = constant_key(element.key)
                if key is not None:
                    keys[key] = values[-1]
            elif isinstance(element, cst.StarredDictElement):
                values.append(self.eval(element.value, env).element())
        return self.interp.heap.allocate(node, Value(Flag.CONTAINER, elem=merge_all(values)), keys)

    def _eval_comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp,
                            env: Env) -> Value:
        inner = Env(parent=env, self_name=env.self_name, cls=env.cls)
        self._comprehension(node.for_in, inner, outer=env)
        if isinstance(node, cst.DictComp):
            self.eval(node.key, inner)
            element = self.eval(node.value, inner)
        else:
            element = self.eval(node.elt, inner)
        value = Value(Flag.CONTAINER, elem=element)
        return value if isinstance(node, cst.GeneratorExp) else self.interp.heap.allocate(node, value)

    def _comprehension(self, comp: cst.CompFor, inner: Env, outer: Env) -> None:
        iterable = self.eval(comp.iter, outer)
        self.interp.assign(comp.target, self.interp.calls.elements(iterable, comp.iter), inner)
        for condition in comp.ifs:
            self.eval(condition.test, inner)
        if comp.inner_for_in is not None:
            self._comprehension(comp.inner_for_in, inner, outer=inner)

    def _eval_name(self, node: cst.Name, env: Env) -> Value:
        if node.value == env.self_name:
            self.facts.self_names.add(node)
        statements = self.interp.statements
        if statements.slots and node.value in statements.slots.values():
            # The container read whole: what this iteration wrote is in it.
            statements.flush_slots(env, {slot: name for slot, name in statements.slots.items() if name == node.value})
        self.interp.aliases.note_read(node.value, env)
        found = env.lookup(node.value)
        if self.interp.module_names.attrs and node.value in self.interp.module_names.attrs:
            # A name some function assigns through `global`: what it may hold after those calls.
            written = self.interp.summaries.read_field(self.interp.module_names, node.value,
                                                       self.interp.current_function)
            found = (found or EMPTY).merge(written or EMPTY)
        if found is not None and (found.flags or not sem.is_device_name(node.value)):
            if found.callee is not None and isinstance(found.callee, FunctionInfo):
                found.callee.references += 1  # a call counts one call too; anything else escapes
            if found.device_if is not None and fails_here(found.device_if, self.interp.assumed):
                return found.unless(found.device_if)  # moved under `if use_gpu:`; use_gpu is false here
            return found
        if node.value in self.imports.aliases:
            return self._project_constant(self.imports.aliases[node.value])
        if sem.is_device_name(node.value):
            return Value(Flag.DEVICE_SPEC)
        return EMPTY

    def _project_constant(self, qualified: str) -> Value:
        """An imported name: a device constant of another project module (`from config import
        DEVICE`) may be a GPU (analysis/project.py); anything else imported is not known here."""
        project = self.interp.project
        if project is not None and project.is_device_constant(qualified):
            return Value(Flag.DEVICE_SPEC)
        return EMPTY

    def _used_as_tensor(self, name: cst.Name, value: Value) -> bool:
        """`param.data -= lr * param.grad`, `labels.data` ... `labels.cpu().detach()`: an object
        of unknown kind that the same function uses as only a tensor can be used (`_tensor_users`)
        is a tensor, so its `.data` is Tensor.data. Module-level code makes its objects where the
        file shows them."""
        if value.has(Flag.TENSOR | Flag.GRAD | Flag.NOT_TENSOR | Flag.NDARRAY | Flag.MODULE | Flag.INSTANCE):
            return False  # known already
        if value.flags & ~_KIND_UNKNOWN and not value.has(Flag.UNKNOWN_ARG | Flag.UNKNOWN_OBJECT):
            return False
        function = self.interp.current_function
        if function is None:
            return False
        scope = function.node
        users = self._tensor_users.get(scope)
        if users is None:
            users = self._tensor_users[scope] = tensor_users(scope, self.imports)
        if name.value not in users:
            return False
        return not self.interp.defines_own_autograd

    def _eval_attribute(self, node: cst.Attribute, env: Env) -> Value:
        attr = node.attr.value
        self.facts.attributes[attr].append(node)
        self.interp.locate(node.attr)
        self.facts.parents[node.value] = node
        qualified = self.imports.resolve(node)
        if qualified is not None and rebinds_import(node, env):
            qualified = None
        if qualified is not None:  # torch.float32, np.pi, nn.functional: a library name
            dtype = dt.DTYPE_NAMES.get(qualified)
            return self._project_constant(qualified) if dtype is None else Value(dtype)  # a dtype object
        base = self.eval(node.value, env)
        if attr == "grad" and isinstance(node.value, cst.Name) and self._used_as_tensor(node.value, base):
            return Value(Flag.TENSOR)  # `p.grad` of an object of unknown kind: a tensor's gradient
        if attr == "data" and isinstance(node.value, cst.Name) and self._used_as_tensor(node.value, base):
            base = base.with_flags(add=Flag.TENSOR)
            self.facts.values[node.value] = self.facts.value_of(node.value).with_flags(add=Flag.TENSOR)
        return self.member(node.value, base, attr, node, env)

    def _parameter_groups(self, site: cst.CSTNode) -> Value:
        """`self.param_groups` of an optimizer class: dicts whose "params" are the parameters the
        optimizer was given (they require grad); the other keys (`lr`, `betas`) are numbers."""
        parameters = Value(Flag.CONTAINER, elem=Value(Flag.TENSOR | Flag.GRAD, origin="a parameter of the optimizer"))
        key = repr("params")  # the heap's keys are constant_key's: the string's repr
        group = self.interp.heap.allocate(site, Value(Flag.CONTAINER), {key: parameters})
        return Value(Flag.CONTAINER, elem=group)

    def member(self, owner: cst.BaseExpression, base: Value, attr: str, site: cst.CSTNode, env: Env) -> Value:
        """`owner.attr` where `owner` evaluated to `base`: also `getattr(owner, "attr")`. `site` is
        the node a property's getter is called from."""
        if isinstance(base.callee, Distribution):  # `dist.probs`, `dist.mean`: computed from its parameters
            parameter = base.callee.attribute(attr)
            if parameter is not None:
                return parameter
        if isinstance(owner, cst.Name) and owner.value in self.interp.statements.attribute_owners:
            stored = env.lookup(f"{owner.value}.{attr}")
            if stored is not None:
                return stored  # `model.class_weights` read after the file stored a tensor in it
        cls = None
        if isinstance(owner, cst.Name) and owner.value == env.self_name and env.cls is not None:
            cls = env.cls
            if cls.autograd_function and attr in sem.AUTOGRAD_SAVED:  # `l, = ctx.saved_tensors`: inputs may require grad
                return Value(Flag.CONTAINER, elem=Value(Flag.TENSOR | Flag.GRAD, origin="a saved tensor"))
            if cls.optimizer and attr == "param_groups" and attr not in cls.attrs:
                return self._parameter_groups(site)
            known = self.interp.statements.field_written(attr)
            if known is not None:
                return known
            if unset_in_constructor(self.interp.current_function, cls, attr, self.interp.classes, self.interp.init_memo):
                return EMPTY  # `__init__` runs first: what other methods store is not there yet
            known = self.interp.summaries.read_field(cls, attr, self.interp.current_function)
            if known is None:  # `self.device` set by a base class of another project file
                known = self.interp.foreign_member(cls, attr, "fields")
            if known is not None:
                return known
        elif base.flags & Flag.INSTANCE and isinstance(base.callee, ClassInfo):
            cls = base.callee
            known = self.interp.summaries.read_field(cls, attr, self.interp.current_function)
            if known is None:
                known = self.interp.foreign_member(cls, attr, "fields")
            if known is not None:
                return known  # `client.net`: the field the class's methods assigned
        elif isinstance(base.callee, ForeignClass):
            if base.has(Flag.MODULE) and self.interp.foreign_buffer(base.callee, attr):
                return Value(Flag.TENSOR, origin=f"buffer '{attr}'").with_device_of(base)
            known = self.interp.foreign_member(base.callee, attr, "fields")
            if known is None:
                known = self.interp.foreign_property(base.callee, attr)
            if known is not None:
                return known  # `buffer.device`: a field of a class of another project file
            if self.interp.foreign_getattr(base.callee):
                return EMPTY  # no field: the class's own `__getattr__` answers, with what we cannot tell
        elif isinstance(base.callee, ClassInfo):
            known = self.interp.summaries.read_field(base.callee, attr, self.interp.current_function)
            if known is not None and known.objs:
                return known  # `Registry.items`: a container the class body made
        getter = cls.method(attr) if cls is not None else None
        if getter is not None and is_property(getter.node):
            return self.interp.call_function(getter, site, [], {})  # `client.loss`: the property's value
        if cls is not None and (cls.has_buffer(attr) or self.interp.foreign_buffer(cls, attr)):
            # `self.pe` of `self.register_buffer("pe", ...)`, here or in a base of another project file
            return Value(Flag.TENSOR, origin=f"buffer '{attr}'").with_device_of(base)
        return self.attribute_of(base, attr)

    def attribute_of(self, base: Value, attr: str) -> Value:
        if base.has(Flag.FRAME):
            return frames.attribute(base, attr)
        if base.flags & (Flag.NDARRAY | ARRAY_LAYOUT) and not base.is_tensor_like:
            if attr in array_facts.NDARRAY_VIEW_ATTRIBUTES:  # `a[::-1].T`: a view, same layout
                return base
            if attr == "dtype":
                return Value(Flag.NON_NATIVE_DTYPE) if base.has(Flag.NON_NATIVE_ORDER) else EMPTY
        if base.items is not None and attr in ("values", "indices") and len(base.items) == 2:
            return base.items[0 if attr == "values" else 1]
        if base.has(TENSOR_FLOW):
            if attr == "data" and (not base.is_tensor_like or base.has(Flag.NOT_TENSOR)):
                return EMPTY  # `.data` of an unknown object (a box, a record) says nothing
            if attr == "data":
                return Value(Flag.TENSOR | base.flags & _PATH_FACTS | passed_device(base), origin=base.origin
                             ).with_device_of(base)
            if attr == "grad":
                return Value(Flag.TENSOR | base.flags & _PATH_FACTS | passed_device(base)).with_device_of(base)
            if attr in sem.SHAPE_PRESERVING_ATTRIBUTES:
                return _attribute_view(base, attr)
            if attr == "device":
                return Value(Flag.DEVICE_SPEC if base.may_be_on_device else Flag.NONE)
            if attr in sem.NON_TENSOR_ATTRIBUTES:
                return EMPTY
        if base.has(Flag.MODULE):
            if attr in sem.NON_PARAMETER_MODULE_ATTRIBUTES or attr.startswith("__") and attr.endswith("__"):
                return EMPTY  # `self.__class__.__name__`: Python's own attributes are no parameter
            if attr in sem.PARAMETER_ATTRIBUTES and base.callee in sem.INDEX_NAMED_CONTAINERS:
                return EMPTY  # `embeddings.weight` of an nn.ModuleList raises AttributeError
            if attr in sem.MODULE_BUFFERS:  # a buffer: a tensor of the module that never requires grad
                return Value(Flag.TENSOR, origin=f"buffer '{attr}'").with_device_of(base)
            if base.has(Flag.FROZEN):  # a frozen module's parameters and submodules: frozen too
                return Value(Flag.MODULE | Flag.TENSOR | Flag.FROZEN, origin=f"attribute '{attr}'").with_device_of(base)
            parameter = Value(Flag.MODULE | Flag.TENSOR | Flag.GRAD, origin=f"parameter '{attr}'")
            return parameter.with_device_of(base)
        if base.flags in (Flag.UNKNOWN_ARG, Flag.UNKNOWN_OBJECT):
            # `model.weight`, `block.conv.weight` of a parameter nothing in the file passes: a
            # Parameter if the caller passes a module, so as unknown as `model` itself.
            if attr in sem.PARAMETER_ATTRIBUTES:
                return Value(Flag.UNKNOWN_ARG | Flag.MAYBE_PARAMETER, origin=f"'{attr}' of {base.origin or 'a parameter'}")
            return Value(Flag.UNKNOWN_OBJECT, origin=base.origin)
        if base.has(TENSOR_FLOW):
            return EMPTY  # a bound method or an attribute we know nothing of
        if sem.is_device_name(attr):
            return Value(Flag.DEVICE_SPEC)
        return EMPTY


def _attribute_view(base: Value, attr: str) -> Value:
    """`.T`/`.mT` keep a conjugate view; `.H`/`.mH` of a complex tensor are one; `.real`/`.imag`
    are real (of a width the lattice does not keep)."""
    part = base.tensor_part()
    if attr in ("T", "mT"):
        return part.with_flags(add=base.flags & Flag.CONJ)
    if attr in ("H", "mH"):
        return part.with_flags(add=Flag.CONJ) if base.flags & Flag.COMPLEX else part
    return part.with_dtype(0)



# Flags that leave open what kind of object a value is (a batch moved with `.to(device)`).
_KIND_UNKNOWN = Flag.UNKNOWN_ARG | Flag.UNKNOWN_OBJECT | Flag.DEVICE | DTYPES
_KNOWN_KIND = (Flag.TENSOR | Flag.GRAD | Flag.MODULE | Flag.MODULE_HINT | Flag.MODULE_CLASS | Flag.NDARRAY
               | Flag.CONTAINER | Flag.INSTANCE | Flag.FRAME)


def rebinds_import(node: cst.BaseExpression, env: Env) -> bool:
    """Whether the name `node` starts with, imported by the file, holds here what an assignment
    gave it: `import model` ... `model = model.Net()`, then `model(x)` calls the network, not the
    module (the import table is one for the whole file). Only a value of known kind counts: an
    `except ImportError: tqdm = None` fallback, or a parameter nothing passes (a marimo cell's
    `def _(nn, torch):`, the imports of another cell), leaves the import in charge."""
    while type(node) is cst.Attribute:
        node = node.value
    if type(node) is not cst.Name:
        return False
    found = env.lookup(node.value)
    return found is not None and bool(found.flags & _KNOWN_KIND)
