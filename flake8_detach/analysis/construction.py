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
"""

from __future__ import annotations

import libcst as cst

from .scopes import ClassInfo, FunctionInfo
from .syntax import all_params, descendants, is_static

# Per constructor node: the fields it assigns, and whether it lets the object out (a memo the
# interpreter owns, so that it dies with the file's tree).
InitMemo = dict[cst.FunctionDef, tuple[frozenset[str], bool]]


def _what_init_does(node: cst.FunctionDef, memo: InitMemo) -> tuple[frozenset[str], bool]:
    """The fields a constructor assigns through its first parameter, and whether it lets the
    object out: a call of one of its attributes (a method, which may write fields) or any use of
    the object other than as the base of an attribute (`helper(self)`)."""
    found = memo.get(node)
    if found is not None:
        return found
    params = all_params(node.params)
    if not params or is_static(node):
        found = (frozenset(), True)
    else:
        name = params[0].name.value
        fields: set[str] = set()
        bases: set[cst.Name] = set()  # the object's names that are the base of an attribute
        lets_out = False
        for child in descendants(node.body):
            if isinstance(child, cst.Attribute) and isinstance(child.value, cst.Name) and child.value.value == name:
                bases.add(child.value)
            elif isinstance(child, cst.Call) and isinstance(child.func, cst.Attribute) and isinstance(
                    child.func.value, cst.Name) and child.func.value.value == name:
                lets_out = True  # `self.setup()`: a method may write any field
            elif isinstance(child, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in child.targets] if isinstance(child, cst.Assign) else [child.target]
                for target in targets:
                    for part in (target, *descendants(target)):
                        if isinstance(part, cst.Attribute) and isinstance(part.value, cst.Name) and (
                                part.value.value == name):
                            fields.add(part.attr.value)
        for child in descendants(node.body):
            if isinstance(child, cst.Name) and child.value == name and child not in bases:
                lets_out = True  # `register(self)`, `return self`, `f(self.__dict__)` keeps a base
        found = (frozenset(fields), lets_out)
    memo[node] = found
    return found


def unset_in_constructor(function: FunctionInfo | None, cls: ClassInfo, attr: str, classes: list[ClassInfo],
                         memo: InitMemo) -> bool:
    """Whether `self.attr`, read in `function` (the constructor of `cls`, before the method writes
    it), holds nothing the file's other methods wrote: see the module docstring. False outside a
    constructor, for a class with bases of other files (their constructors may write it) or with
    subclasses in the file (theirs may write it before calling this one), and wherever the syntax
    leaves a doubt."""
    if function is None or function.cls is not cls or function.node.name.value != "__init__" or cls.foreign_bases:
        return False
    if any(other is not cls and cls in other.lineage() for other in classes):
        return False
    for owner in cls.lineage():
        if attr in owner.class_names:
            return False
        init = owner.methods.get("__init__")
        if init is None:
            continue
        fields, lets_out = _what_init_does(init.node, memo)
        if lets_out or attr in fields:
            return False
    return True
