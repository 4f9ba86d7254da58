"""What every rule is: a code, a kebab-case name, its documentation and its examples.

A rule reads the interpreter's :class:`Facts` and yields findings; it never
walks the tree itself. What the cheap screen knows of it (candidate attributes, required
modules) lives in ``flake8_detach.catalog``, which does not import libcst. Its VALID and INVALID examples are run as tests
(``tests/test_rule_examples.py``), as Fixit does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from ..analysis.facts import Facts
from ..analysis.values import Value
from ..diagnostics import Finding, Fix


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag (at least once)."""

    code: str
    # The source after the rule's fix, when the rule has one (checked by the fix tests).
    fixed: str | None = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case
    message: ClassVar[str]  # without the code
    what_it_does: ClassVar[str]
    why_bad: ClassVar[str]
    example: ClassVar[str]
    use_instead: ClassVar[str]
    fix_safety: ClassVar[str]
    runtime_truth: ClassVar[str]
    VALID: ClassVar[list[str]]
    INVALID: ClassVar[list[Invalid]]

    def check(self, facts: Facts) -> Iterator[Finding]:
        raise NotImplementedError

    def finding(self, node: cst.CSTNode, message: str | None = None, fix: Fix | None = None,
                related: cst.CSTNode | None = None) -> Finding:
        return Finding(self.code, node, f"{self.code} {message or self.message}", fix, related)


def call_site_note(value: Value) -> tuple[str, cst.CSTNode | None]:
    """For a hazard that reached a helper's parameter: a message suffix naming the passing call."""
    if isinstance(value.via, cst.Call):
        return " (the value is passed by the call on {related})", value.via
    return "", None


def method_receiver(call: cst.Call) -> cst.BaseExpression:
    """`out.cpu()` in `out.cpu().numpy()`."""
    assert isinstance(call.func, cst.Attribute)
    return call.func.value


def method_name(call: cst.Call) -> cst.Name:
    assert isinstance(call.func, cst.Attribute)
    return call.func.attr


def passes_force(call: cst.Call) -> bool:
    """`.numpy(force=True)` (or any non-False force) detaches and copies to the CPU itself."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "force":
            return not (isinstance(arg.value, cst.Name) and arg.value.value == "False")
    return False  # `force` is keyword-only in Tensor.numpy
