"""libcst's tree of a file, built from its `ast` tree instead of by libcst's parser.

The analysis reads libcst nodes, but on a cold run libcst's parse is about 40% of the plugin's
cost, while flake8 hands every plugin the file's `ast` tree for free (and `ast.parse` of a file
that only its importers need is several times faster than libcst's). The analysis reads no
whitespace, comments or parentheses, so a tree with the same semantic nodes and libcst's default
whitespace serves it; what it cannot give is positions from generated code, so each node keeps
its `ast` start (see :class:`BridgedModule.start`).

Built without libcst's constructors (nodes are frozen, slotted dataclasses): each node gets its
fields set directly, defaults shared, which is what makes the bridge cheap. What the bridge does
not translate (``match``, type parameters, a lone carriage return) raises :class:`Unbridgeable`,
and the caller parses with libcst instead. The fixer always parses with libcst: it writes code.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Callable
from typing import Any, TypeVar

import libcst as cst

_N = TypeVar("_N", bound=cst.CSTNode)
_set = object.__setattr__


class Unbridgeable(Exception):
    """The file holds something the bridge does not translate: parse it with libcst."""


def _defaults(cls: type[cst.CSTNode]) -> tuple[tuple[str, Any], ...]:
    """Each field of a node class with its default (a factory's value made once and shared:
    the analysis never writes a node, and nothing it reads compares whitespace by identity)."""
    found = []
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if field.default is not dataclasses.MISSING:
            found.append((field.name, field.default))
        elif field.default_factory is not dataclasses.MISSING:
            found.append((field.name, field.default_factory()))
        else:
            found.append((field.name, _REQUIRED))
    return tuple(found)


_REQUIRED = object()
_DEFAULTS: dict[type, tuple[tuple[str, Any], ...]] = {}


def make(cls: type[_N], **given: Any) -> _N:
    """A node of ``cls`` with ``given`` fields and libcst's defaults for the rest, unvalidated."""
    defaults = _DEFAULTS.get(cls)
    if defaults is None:
        defaults = _DEFAULTS[cls] = _defaults(cls)
    node = object.__new__(cls)
    for name, default in defaults:
        value = given.get(name, default)
        if value is _REQUIRED:
            raise Unbridgeable(f"{cls.__name__} needs {name}")
        _set(node, name, value)
    return node


_BINARY: dict[type, type[cst.BaseBinaryOp]] = {
    ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.MatMult: cst.MatrixMultiply,
    ast.Div: cst.Divide, ast.FloorDiv: cst.FloorDivide, ast.Mod: cst.Modulo, ast.Pow: cst.Power,
    ast.LShift: cst.LeftShift, ast.RShift: cst.RightShift, ast.BitOr: cst.BitOr, ast.BitXor: cst.BitXor,
    ast.BitAnd: cst.BitAnd,
}
_AUGMENTED: dict[type, type[cst.BaseAugOp]] = {
    ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign, ast.Mult: cst.MultiplyAssign,
    ast.MatMult: cst.MatrixMultiplyAssign, ast.Div: cst.DivideAssign, ast.FloorDiv: cst.FloorDivideAssign,
    ast.Mod: cst.ModuloAssign, ast.Pow: cst.PowerAssign, ast.LShift: cst.LeftShiftAssign,
    ast.RShift: cst.RightShiftAssign, ast.BitOr: cst.BitOrAssign, ast.BitXor: cst.BitXorAssign,
    ast.BitAnd: cst.BitAndAssign,
}
_UNARY: dict[type, type[cst.BaseUnaryOp]] = {
    ast.UAdd: cst.Plus, ast.USub: cst.Minus, ast.Invert: cst.BitInvert, ast.Not: cst.Not,
}
_COMPARE: dict[type, type[cst.BaseCompOp]] = {
    ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan, ast.LtE: cst.LessThanEqual,
    ast.Gt: cst.GreaterThan, ast.GtE: cst.GreaterThanEqual, ast.Is: cst.Is, ast.IsNot: cst.IsNot,
    ast.In: cst.In, ast.NotIn: cst.NotIn,
}
_NAMED_CONSTANTS = {True: "True", False: "False", None: "None"}


class BridgedModule:
    """A libcst module built from an `ast` tree, and the `ast` start of its nodes."""

    def __init__(self, module: cst.Module, starts: dict[int, tuple[int, int]], source: str) -> None:
        self.module = module
        self._starts = starts
        self._source = source

    @functools.cached_property
    def _lines(self) -> list[str]:
        """The source's lines, split once a position is asked for (most imported files never are)."""
        return self._source.split("\n")

    def start(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """(1-based line, 0-based column in characters) where ``node`` starts; None when the
        `ast` tree gave it no position (a caller then asks libcst's own tree)."""
        found = self._starts.get(id(node))
        if found is None:
            return None
        line, byte_column = found
        if not 0 < line <= len(self._lines):
            return None
        text = self._lines[line - 1]
        return line, len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="replace"))


def bridge(tree: ast.Module, source: str) -> BridgedModule:
    """libcst's tree for ``source`` from its `ast` ``tree``; :class:`Unbridgeable` when it cannot."""
    if "\r" in source and "\r" in source.replace("\r\n", "") or source.startswith("\ufeff"):
        raise Unbridgeable("a lone carriage return or a byte-order mark: ast and libcst count lines apart")
    builder = _Builder()
    try:
        body = builder.statements(tree.body)
    except RecursionError as error:
        raise Unbridgeable("nested too deeply") from error
    finally:
        builder.forget()
    module = make(cst.Module, body=body)
    return BridgedModule(module, builder.starts, source)


class _Builder:
    """One method per kind of `ast` node; each records the start of what it builds."""

    def __init__(self) -> None:
        self.starts: dict[int, tuple[int, int]] = {}
        self._statement_kinds: dict[type, Callable[[Any], cst.BaseStatement]] = {
            ast.FunctionDef: self._function, ast.AsyncFunctionDef: self._function, ast.ClassDef: self._class,
            ast.If: self._if, ast.For: self._for, ast.AsyncFor: self._for, ast.While: self._while,
            ast.With: self._with, ast.AsyncWith: self._with, ast.Try: self._try,
        }
        if hasattr(ast, "TryStar"):
            self._statement_kinds[ast.TryStar] = self._try
        self._small_kinds: dict[type, Callable[[Any], cst.BaseSmallStatement]] = {
            ast.Expr: self._expression_statement, ast.Assign: self._assign, ast.AugAssign: self._augmented,
            ast.AnnAssign: self._annotated, ast.Return: self._return, ast.Raise: self._raise,
            ast.Assert: self._assert, ast.Delete: self._delete, ast.Pass: lambda _: make(cst.Pass),
            ast.Break: lambda _: make(cst.Break), ast.Continue: lambda _: make(cst.Continue),
            ast.Global: self._global, ast.Nonlocal: self._nonlocal, ast.Import: self._import,
            ast.ImportFrom: self._import_from,
        }
        self._expression_kinds: dict[type, Callable[[Any], cst.BaseExpression]] = {
            ast.Name: self._name, ast.Attribute: self._attribute, ast.Call: self._call,
            ast.Subscript: self._subscript, ast.Constant: self._constant, ast.BinOp: self._binary,
            ast.UnaryOp: self._unary, ast.BoolOp: self._boolean, ast.Compare: self._compare,
            ast.IfExp: self._if_expression, ast.Lambda: self._lambda, ast.List: self._list,
            ast.Tuple: self._tuple, ast.Set: self._set, ast.Dict: self._dict, ast.ListComp: self._list_comp,
            ast.SetComp: self._set_comp, ast.GeneratorExp: self._generator, ast.DictComp: self._dict_comp,
            ast.NamedExpr: self._named, ast.Await: self._await, ast.Yield: self._yield,
            ast.YieldFrom: self._yield_from, ast.JoinedStr: self._fstring, ast.Starred: self._starred_alone,
        }

    def forget(self) -> None:
        """Drop the dispatch tables: their bound methods hold the builder in a cycle, which would
        keep it for the cycle collector to find instead of being freed when the build ends."""
        self._statement_kinds, self._small_kinds, self._expression_kinds = {}, {}, {}

    # ------------------------------------------------------------------ helpers
    def _at(self, node: _N, origin: ast.AST) -> _N:
        lineno = getattr(origin, "lineno", None)
        if lineno is not None:
            self.starts[id(node)] = (lineno, origin.col_offset)  # type: ignore[attr-defined]
        return node

    def _block(self, body: list[ast.stmt]) -> cst.IndentedBlock:
        return make(cst.IndentedBlock, body=self.statements(body))

    def _else(self, body: list[ast.stmt]) -> cst.Else | None:
        return make(cst.Else, body=self._block(body)) if body else None

    def _word(self, value: str) -> cst.Name:
        return make(cst.Name, value=value)

    def _dotted(self, dotted: str) -> cst.Name | cst.Attribute:
        parts = dotted.split(".")
        node: cst.Name | cst.Attribute = self._word(parts[0])
        for part in parts[1:]:
            node = make(cst.Attribute, value=node, attr=self._word(part))
        return node

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> tuple[cst.Decorator, ...]:
        return tuple(self._at(make(cst.Decorator, decorator=self.expression(item)), item)
                     for item in node.decorator_list)

    # ------------------------------------------------------------------ statements
    def statements(self, body: list[ast.stmt]) -> tuple[cst.BaseStatement, ...]:
        built: list[cst.BaseStatement] = []
        for statement in body:
            compound = self._statement_kinds.get(type(statement))
            if compound is not None:
                built.append(self._at(compound(statement), statement))
                continue
            small = self._small_kinds.get(type(statement))
            if small is None:
                raise Unbridgeable(type(statement).__name__)
            line = make(cst.SimpleStatementLine, body=(self._at(small(statement), statement),))
            built.append(self._at(line, statement))
        return tuple(built)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> cst.FunctionDef:
        if getattr(node, "type_params", None):
            raise Unbridgeable("type parameters")
        returns = make(cst.Annotation, annotation=self.expression(node.returns)) if node.returns else None
        return make(
            cst.FunctionDef, name=self._word(node.name), params=self._parameters(node.args),
            body=self._block(node.body), decorators=self._decorators(node), returns=returns,
            asynchronous=make(cst.Asynchronous) if isinstance(node, ast.AsyncFunctionDef) else None)

    def _class(self, node: ast.ClassDef) -> cst.ClassDef:
        if getattr(node, "type_params", None):
            raise Unbridgeable("type parameters")
        return make(cst.ClassDef, name=self._word(node.name), body=self._block(node.body),
                    bases=tuple(self._argument(base) for base in node.bases),
                    keywords=tuple(self._keyword(keyword) for keyword in node.keywords),
                    decorators=self._decorators(node))

    def _if(self, node: ast.If) -> cst.If:
        orelse: cst.If | cst.Else | None
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):  # `elif` (ast cannot tell `else: if`)
            orelse = self._at(self._if(node.orelse[0]), node.orelse[0])
        else:
            orelse = self._else(node.orelse)
        return make(cst.If, test=self.expression(node.test), body=self._block(node.body), orelse=orelse)

    def _for(self, node: ast.For | ast.AsyncFor) -> cst.For:
        return make(cst.For, target=self.expression(node.target), iter=self.expression(node.iter),
                    body=self._block(node.body), orelse=self._else(node.orelse),
                    asynchronous=make(cst.Asynchronous) if isinstance(node, ast.AsyncFor) else None)

    def _while(self, node: ast.While) -> cst.While:
        return make(cst.While, test=self.expression(node.test), body=self._block(node.body),
                    orelse=self._else(node.orelse))

    def _with(self, node: ast.With | ast.AsyncWith) -> cst.With:
        items = tuple(
            make(cst.WithItem, item=self.expression(item.context_expr),
                 asname=make(cst.AsName, name=self.expression(item.optional_vars)) if item.optional_vars else None)
            for item in node.items)
        return make(cst.With, items=items, body=self._block(node.body),
                    asynchronous=make(cst.Asynchronous) if isinstance(node, ast.AsyncWith) else None)

    def _try(self, node: ast.Try) -> cst.Try | cst.TryStar:
        star = type(node).__name__ == "TryStar"
        handler_kind = cst.ExceptStarHandler if star else cst.ExceptHandler
        handlers = tuple(
            self._at(make(handler_kind, body=self._block(handler.body),
                          type=self.expression(handler.type) if handler.type else None,
                          name=make(cst.AsName, name=self._word(handler.name)) if handler.name else None), handler)
            for handler in node.handlers)
        finalbody = make(cst.Finally, body=self._block(node.finalbody)) if node.finalbody else None
        kind: Any = cst.TryStar if star else cst.Try
        built: cst.Try | cst.TryStar = make(kind, body=self._block(node.body), handlers=handlers,
                                            orelse=self._else(node.orelse), finalbody=finalbody)
        return built

    def _expression_statement(self, node: ast.Expr) -> cst.Expr:
        return make(cst.Expr, value=self.expression(node.value))

    def _assign(self, node: ast.Assign) -> cst.Assign:
        targets = tuple(self._at(make(cst.AssignTarget, target=self.expression(target)), target)
                        for target in node.targets)
        return make(cst.Assign, targets=targets, value=self.expression(node.value))

    def _augmented(self, node: ast.AugAssign) -> cst.AugAssign:
        return make(cst.AugAssign, target=self.expression(node.target),
                    operator=make(_AUGMENTED[type(node.op)]), value=self.expression(node.value))

    def _annotated(self, node: ast.AnnAssign) -> cst.AnnAssign:
        return make(cst.AnnAssign, target=self.expression(node.target),
                    annotation=make(cst.Annotation, annotation=self.expression(node.annotation)),
                    value=self.expression(node.value) if node.value is not None else None)

    def _return(self, node: ast.Return) -> cst.Return:
        return make(cst.Return, value=self.expression(node.value) if node.value is not None else None)

    def _raise(self, node: ast.Raise) -> cst.Raise:
        return make(cst.Raise, exc=self.expression(node.exc) if node.exc is not None else None,
                    cause=make(cst.From, item=self.expression(node.cause)) if node.cause is not None else None)

    def _assert(self, node: ast.Assert) -> cst.Assert:
        return make(cst.Assert, test=self.expression(node.test),
                    msg=self.expression(node.msg) if node.msg is not None else None)

    def _delete(self, node: ast.Delete) -> cst.Del:
        if len(node.targets) == 1:
            return make(cst.Del, target=self.expression(node.targets[0]))
        return make(cst.Del, target=make(cst.Tuple, elements=self._elements(node.targets)))

    def _global(self, node: ast.Global) -> cst.Global:
        return make(cst.Global, names=tuple(make(cst.NameItem, name=self._word(name)) for name in node.names))

    def _nonlocal(self, node: ast.Nonlocal) -> cst.Nonlocal:
        return make(cst.Nonlocal, names=tuple(make(cst.NameItem, name=self._word(name)) for name in node.names))

    def _alias(self, alias: ast.alias) -> cst.ImportAlias:
        asname = make(cst.AsName, name=self._word(alias.asname)) if alias.asname else None
        return self._at(make(cst.ImportAlias, name=self._dotted(alias.name), asname=asname), alias)

    def _import(self, node: ast.Import) -> cst.Import:
        return make(cst.Import, names=tuple(self._alias(alias) for alias in node.names))

    def _import_from(self, node: ast.ImportFrom) -> cst.ImportFrom:
        names: tuple[cst.ImportAlias, ...] | cst.ImportStar
        if len(node.names) == 1 and node.names[0].name == "*":
            names = make(cst.ImportStar)
        else:
            names = tuple(self._alias(alias) for alias in node.names)
        return make(cst.ImportFrom, module=self._dotted(node.module) if node.module else None, names=names,
                    relative=tuple(make(cst.Dot) for _ in range(node.level or 0)))

    # ------------------------------------------------------------------ parameters and arguments
    def _param(self, arg: ast.arg, default: ast.expr | None = None, star: str | None = None) -> cst.Param:
        annotation = make(cst.Annotation, annotation=self.expression(arg.annotation)) if arg.annotation else None
        given: dict[str, Any] = {"name": self._word(arg.arg), "annotation": annotation,
                                 "default": self.expression(default) if default is not None else None}
        if star is not None:
            given["star"] = star
        return self._at(make(cst.Param, **given), arg)

    def _parameters(self, arguments: ast.arguments) -> cst.Parameters:
        positional = arguments.posonlyargs + arguments.args
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
        defaults += arguments.defaults
        params = [self._param(arg, default) for arg, default in zip(positional, defaults)]
        posonly = len(arguments.posonlyargs)
        star_arg: Any = dataclasses.MISSING
        if arguments.vararg is not None:
            star_arg = self._param(arguments.vararg, star="*")
        elif arguments.kwonlyargs:
            star_arg = make(cst.ParamStar)
        given: dict[str, Any] = {
            "params": tuple(params[posonly:]), "posonly_params": tuple(params[:posonly]),
            "kwonly_params": tuple(self._param(arg, default)
                                   for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)),
            "star_kwarg": self._param(arguments.kwarg, star="**") if arguments.kwarg is not None else None,
        }
        if star_arg is not dataclasses.MISSING:
            given["star_arg"] = star_arg
        if posonly:
            given["posonly_ind"] = make(cst.ParamSlash)
        return make(cst.Parameters, **given)

    def _argument(self, node: ast.expr) -> cst.Arg:
        if isinstance(node, ast.Starred):
            return self._at(make(cst.Arg, value=self.expression(node.value), star="*"), node)
        return self._at(make(cst.Arg, value=self.expression(node)), node)

    def _keyword(self, node: ast.keyword) -> cst.Arg:
        if node.arg is None:
            return self._at(make(cst.Arg, value=self.expression(node.value), star="**"), node)
        return self._at(make(cst.Arg, value=self.expression(node.value), keyword=self._word(node.arg)), node)

    # ------------------------------------------------------------------ expressions
    def expression(self, node: ast.expr) -> cst.BaseExpression:
        kind = self._expression_kinds.get(type(node))
        if kind is None:
            raise Unbridgeable(type(node).__name__)
        return self._at(kind(node), node)

    def _name(self, node: ast.Name) -> cst.Name:
        return self._word(node.id)

    def _attribute(self, node: ast.Attribute) -> cst.Attribute:
        attr = self._word(node.attr)
        end_line, end_column = node.end_lineno, node.end_col_offset
        if end_line is not None and end_column is not None:  # the name is the node's last token
            self.starts[id(attr)] = (end_line, end_column - len(node.attr.encode("utf-8")))
        return make(cst.Attribute, value=self.expression(node.value), attr=attr)

    def _call(self, node: ast.Call) -> cst.Call:
        parts: list[ast.expr | ast.keyword] = [*node.args, *node.keywords]
        if node.args and node.keywords:  # libcst keeps them in the order written: `f(a=1, *rest)`
            parts.sort(key=lambda part: (part.lineno, part.col_offset))
        args = tuple(self._keyword(part) if isinstance(part, ast.keyword) else self._argument(part)
                     for part in parts)
        return make(cst.Call, func=self.expression(node.func), args=args)

    def _subscript(self, node: ast.Subscript) -> cst.Subscript:
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) and index.elts and not self._parenthesized(index) \
            else [index]
        elements = tuple(make(cst.SubscriptElement, slice=self._index(part)) for part in parts)
        return make(cst.Subscript, value=self.expression(node.value), slice=elements)

    @staticmethod
    def _parenthesized(node: ast.Tuple) -> bool:
        """`a[(1, 2)]` is one index in libcst's tree; `a[1, 2]` two (ast gives a tuple for both)."""
        first = node.elts[0]
        return (first.lineno, first.col_offset) != (node.lineno, node.col_offset)

    def _index(self, node: ast.expr) -> cst.BaseSlice:
        if isinstance(node, ast.Slice):
            return self._at(make(
                cst.Slice, lower=self.expression(node.lower) if node.lower else None,
                upper=self.expression(node.upper) if node.upper else None,
                step=self.expression(node.step) if node.step else None), node)
        if isinstance(node, ast.Starred):
            raise Unbridgeable("a starred index")
        return self._at(make(cst.Index, value=self.expression(node)), node)

    def _constant(self, node: ast.Constant) -> cst.BaseExpression:
        value = node.value
        if value is None or isinstance(value, bool):
            return self._word(_NAMED_CONSTANTS[value])
        if value is Ellipsis:
            return make(cst.Ellipsis)
        if isinstance(value, int):
            return make(cst.Integer, value=repr(value))
        if isinstance(value, float):
            return make(cst.Float, value=repr(value))
        if isinstance(value, complex):
            return make(cst.Imaginary, value=repr(value.imag) + "j") if not value.real else self._unbridged(node)
        if isinstance(value, (str, bytes)):
            return make(cst.SimpleString, value=repr(value))
        return self._unbridged(node)

    @staticmethod
    def _unbridged(node: ast.AST) -> cst.BaseExpression:
        raise Unbridgeable(ast.dump(node)[:40])

    def _binary(self, node: ast.BinOp) -> cst.BinaryOperation:
        return make(cst.BinaryOperation, left=self.expression(node.left), operator=make(_BINARY[type(node.op)]),
                    right=self.expression(node.right))

    def _unary(self, node: ast.UnaryOp) -> cst.UnaryOperation:
        return make(cst.UnaryOperation, operator=make(_UNARY[type(node.op)]), expression=self.expression(node.operand))

    def _boolean(self, node: ast.BoolOp) -> cst.BooleanOperation:
        operator = cst.And if isinstance(node.op, ast.And) else cst.Or
        values = [self.expression(value) for value in node.values]
        built = values[0]
        for value in values[1:]:  # `a and b and c` is ((a and b) and c) in libcst's tree
            built = self._at(make(cst.BooleanOperation, left=built, operator=make(operator), right=value), node)
        return built  # type: ignore[return-value]

    def _compare(self, node: ast.Compare) -> cst.Comparison:
        targets = tuple(make(cst.ComparisonTarget, operator=make(_COMPARE[type(op)]), comparator=self.expression(right))
                        for op, right in zip(node.ops, node.comparators))
        return make(cst.Comparison, left=self.expression(node.left), comparisons=targets)

    def _if_expression(self, node: ast.IfExp) -> cst.IfExp:
        return make(cst.IfExp, test=self.expression(node.test), body=self.expression(node.body),
                    orelse=self.expression(node.orelse))

    def _lambda(self, node: ast.Lambda) -> cst.Lambda:
        return make(cst.Lambda, params=self._parameters(node.args), body=self.expression(node.body))

    def _elements(self, nodes: list[ast.expr]) -> tuple[cst.BaseElement, ...]:
        return tuple(
            self._at(make(cst.StarredElement, value=self.expression(item.value)), item) if isinstance(item, ast.Starred)
            else self._at(make(cst.Element, value=self.expression(item)), item)
            for item in nodes)

    def _list(self, node: ast.List) -> cst.List:
        return make(cst.List, elements=self._elements(node.elts))

    def _tuple(self, node: ast.Tuple) -> cst.Tuple:
        return make(cst.Tuple, elements=self._elements(node.elts))

    def _set(self, node: ast.Set) -> cst.Set:
        return make(cst.Set, elements=self._elements(node.elts))

    def _dict(self, node: ast.Dict) -> cst.Dict:
        elements = tuple(
            make(cst.StarredDictElement, value=self.expression(value)) if key is None
            else make(cst.DictElement, key=self.expression(key), value=self.expression(value))
            for key, value in zip(node.keys, node.values))
        return make(cst.Dict, elements=elements)

    def _comprehension(self, generators: list[ast.comprehension]) -> cst.CompFor:
        inner: cst.CompFor | None = None
        for generator in reversed(generators):
            inner = make(cst.CompFor, target=self.expression(generator.target), iter=self.expression(generator.iter),
                         ifs=tuple(make(cst.CompIf, test=self.expression(test)) for test in generator.ifs),
                         inner_for_in=inner, asynchronous=make(cst.Asynchronous) if generator.is_async else None)
        assert inner is not None
        return inner

    def _list_comp(self, node: ast.ListComp) -> cst.ListComp:
        return make(cst.ListComp, elt=self.expression(node.elt), for_in=self._comprehension(node.generators))

    def _set_comp(self, node: ast.SetComp) -> cst.SetComp:
        return make(cst.SetComp, elt=self.expression(node.elt), for_in=self._comprehension(node.generators))

    def _generator(self, node: ast.GeneratorExp) -> cst.GeneratorExp:
        return make(cst.GeneratorExp, elt=self.expression(node.elt), for_in=self._comprehension(node.generators))

    def _dict_comp(self, node: ast.DictComp) -> cst.DictComp:
        return make(cst.DictComp, key=self.expression(node.key), value=self.expression(node.value),
                    for_in=self._comprehension(node.generators))

    def _named(self, node: ast.NamedExpr) -> cst.NamedExpr:
        return make(cst.NamedExpr, target=self.expression(node.target), value=self.expression(node.value))

    def _await(self, node: ast.Await) -> cst.Await:
        return make(cst.Await, expression=self.expression(node.value))

    def _yield(self, node: ast.Yield) -> cst.Yield:
        return make(cst.Yield, value=self.expression(node.value) if node.value is not None else None)

    def _yield_from(self, node: ast.YieldFrom) -> cst.Yield:
        return make(cst.Yield, value=make(cst.From, item=self.expression(node.value)))

    def _fstring(self, node: ast.JoinedStr) -> cst.FormattedString:
        parts: list[cst.BaseFormattedStringContent] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                spec = list(self._fstring(part.format_spec).parts) if isinstance(part.format_spec, ast.JoinedStr) \
                    else None
                conversion = chr(part.conversion) if part.conversion and part.conversion > 0 else None
                parts.append(make(cst.FormattedStringExpression, expression=self.expression(part.value),
                                  conversion=conversion, format_spec=spec))
            elif isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(make(cst.FormattedStringText, value=part.value.replace("{", "{{").replace("}", "}}")))
            else:
                raise Unbridgeable("an f-string part")
        return make(cst.FormattedString, parts=tuple(parts))

    def _starred_alone(self, node: ast.Starred) -> cst.BaseExpression:
        raise Unbridgeable("a starred expression outside a display or a call")
