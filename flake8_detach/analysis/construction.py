"""What a constructor can see of its own object's fields.

A field's summary joins every write to it in every method (analysis/summaries.py), which is right
for a method that may run after any other. `__init__` runs first: when it reads `self.alpha`
before writing it, no other method of the object has run yet, so what `train()` later stores
there (`self.alpha = self.log_alpha.exp()`, a tensor that requires grad) cannot be what it reads
(DRL-Pytorch's SAC reads the float its `self.__dict__.update(kwargs)` set). The read sees only
what the class body, the constructors of the class and of its bases in the file, a method the
constructor calls, or a dynamic write (`__dict__.update`, `setattr`) set.

`unset_in_constructor` answers, from the syntax, whether none of those the file can see writes the
field: no `self.<field> = ...` in any constructor of the class's lineage in the file, no class-body
name of that name, and no constructor that calls a method of its own object or passes the object
on (which could write it). The read then holds no value the file knows of, rather than the join.

For the same reason a constructor that switches grad off for the process (`torch.set_grad_enabled(
False)` as a statement of its body, not turned on again there: an inference wrapper's `__init__`)
has done so before any other method of the object runs (`switches_grad_off`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import libcst as cst

from .scopes import ClassInfo, FunctionInfo
from .syntax import all_params, descendants, is_static


class InitMemo:
    """What the syntax says, read once: per constructor node, the fields it assigns and whether it
    lets the object out; per class (and number of classes the walk has met, since a subclass met
    later changes the answer), the fields its lineage may set before a read, or None where any
    may be. The interpreter owns it, so that it dies with the file's tree."""

    def __init__(self) -> None:
        self.inits: dict[cst.FunctionDef, tuple[frozenset[str], bool]] = {}
        self.classes: dict[tuple[int, int], frozenset[str] | None] = {}
        self.grad_off: dict[int, bool] = {}  # per class: its constructor switches grad off


def _what_init_does(node: cst.FunctionDef, memo: InitMemo) -> tuple[frozenset[str], bool]:
    """The fields a constructor assigns through its first parameter, and whether it lets the
    object out: a call of one of its attributes (a method, which may write fields) or any use of
    the object other than as the base of an attribute (`helper(self)`)."""
    found = memo.inits.get(node)
    if found is not None:
        return found
    params = all_params(node.params)
    if not params or is_static(node):
        found = (frozenset(), True)
    else:
        found = _read_init(node.body, params[0].name.value)
    memo.inits[node] = found
    return found


def _read_init(body: cst.BaseSuite, name: str) -> tuple[frozenset[str], bool]:
    """One walk of a constructor's body (a parent comes before its children): the fields it binds
    (`self.x = ...`, `self.x += ...`, `a, self.x = ...`) and whether it lets the object out."""
    fields: set[str] = set()
    bases: set[int] = set()  # ids of the object's names that are the base of an attribute
    lets_out = False
    for child in descendants(body):
        kind = type(child)  # exact types: `isinstance` against libcst's classes goes through `abc`
        if kind is cst.Name:
            if cast(cst.Name, child).value == name and id(child) not in bases:
                lets_out = True  # `register(self)`, `return self`
        elif kind is cst.Attribute:
            value = cast(cst.Attribute, child).value
            if type(value) is cst.Name and cast(cst.Name, value).value == name:
                bases.add(id(value))
        elif kind is cst.Call:
            func = cast(cst.Call, child).func
            if type(func) is cst.Attribute and _is_the_object(cast(cst.Attribute, func).value, name):
                lets_out = True  # `self.setup()`: a method may write any field
        elif kind is cst.Assign:
            for target in cast(cst.Assign, child).targets:
                fields |= _bound_fields(target.target, name)
        elif kind is cst.AugAssign or kind is cst.AnnAssign:
            fields |= _bound_fields(cast("cst.AugAssign | cst.AnnAssign", child).target, name)
    return frozenset(fields), lets_out


def _is_the_object(node: cst.BaseExpression, name: str) -> bool:
    return type(node) is cst.Name and cast(cst.Name, node).value == name


def _bound_fields(target: cst.BaseExpression, name: str) -> set[str]:
    """The fields an assignment target binds: `self.x`, or an item of `a, (self.x, *self.y)`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return {field for element in target.elements for field in _bound_fields(element.value, name)}
    if isinstance(target, cst.Attribute) and _is_the_object(target.value, name):
        return {target.attr.value}
    return set()


def unset_in_constructor(function: FunctionInfo | None, cls: ClassInfo, attr: str, classes: list[ClassInfo],
                         memo: InitMemo) -> bool:
    """Whether `self.attr`, read in `function` (the constructor of `cls`, before the method writes
    it), holds nothing the file's other methods wrote: see the module docstring. False outside a
    constructor, for a class with bases of other files (their constructors may write it) or with
    subclasses in the file (theirs may write it before calling this one), and wherever the syntax
    leaves a doubt."""
    if function is None or function.cls is not cls or function.node.name.value != "__init__" or cls.foreign_bases:
        return False
    key = (id(cls), len(classes))
    if key not in memo.classes:
        memo.classes[key] = _set_before_reads(cls, classes, memo)
    written = memo.classes[key]
    return written is not None and attr not in written


def _set_before_reads(cls: ClassInfo, classes: list[ClassInfo], memo: InitMemo) -> frozenset[str] | None:
    """The names the class body and the constructors of the lineage may set; None where any field
    may be set before the constructor reads it (a subclass, a constructor that lets the object out)."""
    if any(other is not cls and cls in other.lineage() for other in classes):
        return None
    names: set[str] = set()
    for owner in cls.lineage():
        names |= owner.class_names
        init = owner.methods.get("__init__")
        if init is None:
            continue
        fields, lets_out = _what_init_does(init.node, memo)
        if lets_out:
            return None
        names |= fields
    return frozenset(names)


def switches_grad_off(cls: ClassInfo, memo: InitMemo, grad_switch: Callable[[cst.Call], bool | None]) -> bool:
    """Whether the constructor that builds an instance of `cls` (its own `__init__`, or the first of
    its bases' in the file) switches grad off for the process and leaves it so: the last of its
    body's statements that is a call `grad_switch` says sets the mode (`torch.set_grad_enabled(b)`)
    sets it off. Every other method of the object runs after it."""
    found = memo.grad_off.get(id(cls))
    if found is None:
        init = next((owner.methods["__init__"] for owner in cls.lineage() if "__init__" in owner.methods), None)
        found = memo.grad_off[id(cls)] = init is not None and _last_switch(init.node, grad_switch) is False
    return found


def _last_switch(node: cst.FunctionDef, grad_switch: Callable[[cst.Call], bool | None]) -> bool | None:
    """The mode the last grad-mode switch among the body's own statements sets (None: none)."""
    mode: bool | None = None
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    switched = grad_switch(small.value)
                    mode = switched if switched is not None else mode
    return mode
