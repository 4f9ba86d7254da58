"""Write flake8_detach/lsp/initialize_schema.py: the shape of `InitializeParams`, from lsprotocol.

The language server answers `initialize` before pygls and lsprotocol are imported
(flake8_detach/lsp/fast_start.py), but only for a request pygls will read: lsprotocol rejects
params of the wrong shape (and pygls then sends no answer at all). This script walks lsprotocol's
attrs classes from `InitializeParams` and writes their fields, JSON names and types as plain data;
fast_start checks a request against it, more strictly than lsprotocol (exact JSON types, known
enum values, LSP's integer range), before answering early.

Usage: python scripts/gen_lsp_params_schema.py [--check]   (tests/test_lsp_fast_start.py checks)
"""

from __future__ import annotations

import enum
import pprint
import sys
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types

TARGET = Path(__file__).resolve().parent.parent / "flake8_detach" / "lsp" / "initialize_schema.py"
ROOT = "InitializeParams"
HEADER = '''"""The shape of LSP `InitializeParams` as lsprotocol {version} reads it (generated; do not edit).

Written by scripts/gen_lsp_params_schema.py; read by fast_start.py. Types: "bool", "int" (LSP's
integer or uinteger), "number", "str", "null", "any"; {{"enum": [values]}}, {{"array": type}},
{{"map": type}}, {{"union": [types]}}, {{"ref": structure}}. A structure maps each JSON name to
(type, required).
"""

from __future__ import annotations

from typing import Any

# fmt: off
'''


def camel(name: str) -> str:
    name = name.removesuffix("_")
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def describe(hint: Any, structures: dict[str, Any], pending: list[type]) -> Any:
    origin = typing.get_origin(hint)
    if hint is Any:
        return "any"
    if hint is type(None):
        return "null"
    if hint is bool:
        return "bool"
    if hint is int:
        return "int"
    if hint is float:
        return "number"
    if hint is str:
        return "str"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [member.value for member in hint]}
    if isinstance(hint, type) and attrs.has(hint):
        if hint.__name__ not in structures:
            structures[hint.__name__] = None  # claimed; filled in by the walk
            pending.append(hint)
        return {"ref": hint.__name__}
    if origin is typing.Union:
        members = []
        for arg in typing.get_args(hint):
            member = describe(arg, structures, pending)
            if member not in members:
                members.append(member)
        if "any" in members:
            return "any"
        return members[0] if len(members) == 1 else {"union": members}
    if origin in (list, Sequence, typing.Sequence) or origin is tuple and typing.get_args(hint)[1:] == (...,):
        return {"array": describe(typing.get_args(hint)[0], structures, pending)}
    if origin in (dict, Mapping, typing.Mapping):
        key, value = typing.get_args(hint)
        if key is not str:
            raise TypeError(f"a map keyed by {key!r}")
        return {"map": describe(value, structures, pending)}
    if origin is typing.Literal:
        values = typing.get_args(hint)
        return {"enum": list(values)}
    raise TypeError(f"no description for {hint!r}")


def schema() -> dict[str, Any]:
    structures: dict[str, Any] = {}
    root = getattr(types, ROOT)
    pending: list[type] = []
    describe(root, structures, pending)
    namespace = vars(types)
    while pending:
        cls = pending.pop()
        hints = typing.get_type_hints(cls, globalns=namespace)
        fields = {}
        for field in attrs.fields(cls):
            required = field.default is attrs.NOTHING
            fields[camel(field.name)] = (describe(hints[field.name], structures, pending), required)
        structures[cls.__name__] = fields
    return dict(sorted(structures.items()))


def render() -> str:
    import importlib.metadata

    body = f"ROOT = {ROOT!r}\nSTRUCTURES: dict[str, dict[str, tuple[Any, bool]]] = {pprint.pformat(schema(), width=110, sort_dicts=True)}\n"
    return HEADER.format(version=importlib.metadata.version("lsprotocol")) + body


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = TARGET.read_text() if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date: run python {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
