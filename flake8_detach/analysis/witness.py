"""What an analysis asked its project, and what the project answered: a witness.

A file's diagnostics, and a file's exports (analysis/exports.py), depend on the rest of the project
only through the questions the interpreter asks its :class:`~.project.ProjectView` ("is
``models.Net`` an nn.Module?", "what does ``utils.load`` return?", "what do the callers of
``plot`` pass?"). The view records each question and its answer while the analysis runs. A result
cached with its witness is still the result when every question, asked again of the project as it
is now, gets the same answer: the interpreter is deterministic, so the same answers lead it to the
same questions and the same findings. This is the early cutoff of build systems and query engines
(salsa, Bazel): an edit to a file that changes no answer a result used does not invalidate it,
where a digest of the whole project would invalidate every result after any edit.

A witness is plain JSON (``[[question, arguments, answer], ...]``), read back from the cache like
any entry: a question this module does not know, or arguments of the wrong shape, make the witness
invalid (the result is computed again), never a call of anything else.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar, cast

from .values import Value

# The ProjectView methods that answer the interpreter (see project.py): filled by `recorded`.
QUESTIONS: set[str] = set()
MAX_QUESTIONS = 100_000  # a witness longer than this is not kept (its result is not cached)

_F = TypeVar("_F", bound=Callable[..., Any])


def canonical(answer: Any) -> Any:
    """An answer as JSON that compares equal exactly when the answers do for the interpreter
    (sets sorted: their order varies per process; a value by the fields a view's values carry)."""
    if answer is None or isinstance(answer, (bool, int, str)):
        return answer
    if isinstance(answer, Value):
        instance = getattr(answer.callee, "qualified", None)  # an export's instance of a project class
        return ["value", answer.flags, canonical(answer.items), canonical(answer.elem), answer.origin,
                answer.device_if, *([instance] if isinstance(instance, str) else [])]
    if isinstance(answer, (set, frozenset)):
        return sorted(answer)
    if isinstance(answer, (list, tuple)):
        return [canonical(item) for item in answer]
    if isinstance(answer, dict):
        return {str(key): canonical(answer[key]) for key in sorted(answer)}
    raise TypeError(f"no canonical form for a {type(answer).__name__}")


def recorded(method: _F) -> _F:
    """Mark a ProjectView method as a question: while the view has a witness, each first asking
    of it (by its arguments) is kept with its answer."""
    name = method.__name__
    QUESTIONS.add(name)

    @functools.wraps(method)
    def asking(view: Any, *arguments: Any) -> Any:
        answer = method(view, *arguments)
        witness = view.witness
        if witness is not None:
            key = (name, *(argument if isinstance(argument, str) else json.dumps(argument, sort_keys=True)
                           for argument in arguments))
            if key not in witness:
                witness[key] = [name, list(arguments), canonical(answer)]
        return answer

    return cast(_F, asking)


def to_data(witness: dict[Any, list[Any]]) -> list[list[Any]] | None:
    """The witness as stored; None when it is too long to be worth keeping."""
    if len(witness) > MAX_QUESTIONS:
        return None
    return list(witness.values())


def _plain(value: Any, depth: int = 0) -> bool:
    """JSON made of strings (or null: `method_freezes(None, name)`) and lists or dicts of them:
    the arguments a question takes."""
    if value is None or isinstance(value, str):
        return True
    if depth > 2:
        return False
    if isinstance(value, list):
        return all(_plain(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _plain(item, depth + 1) for key, item in value.items())
    return False


def holds(view: Any, data: Any) -> bool:
    """Whether every question of a stored witness gets the same answer from ``view`` now."""
    if not isinstance(data, list) or len(data) > MAX_QUESTIONS:
        return False
    for record in data:
        if not (isinstance(record, list) and len(record) == 3 and record[0] in QUESTIONS
                and isinstance(record[1], list) and _plain(record[1])):
            return False
        name, arguments, answer = record
        try:
            now = canonical(getattr(view, name)(*arguments))
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError):
            return False  # a question asked with arguments it does not take: not this code's witness
        if now != answer:
            return False
    return True
