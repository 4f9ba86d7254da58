"""Whether a file is Python, in one wording for every front (`check`, `fix`, the editor).

Python's own parser decides, as flake8 does (it compiles every file, even where no rule would
look), and its message is what the user sees: `syntax error at line L, column C: MESSAGE`,
never libcst's `Syntax Error @ L:C.`. A file only a newer Python reads (3.12 generics on 3.11)
is not the file's fault: libcst reads every version's grammar, so the caller asks it next
unless the problem is :attr:`SyntaxProblem.final`.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

# SyntaxErrors that are CPython's limits, not grammar a newer Python has (libcst has no such limits).
COMPILER_LIMITS = ("too many nested parentheses", "too many statically nested blocks",
                   "too many levels of indentation")


@dataclass(frozen=True)
class SyntaxProblem:
    message: str  # one line for the user
    position: tuple[int, int] | None = None  # (1-based line, 0-based column) when Python says
    # No version of Python reads it (a compiler limit, a null byte): asking libcst is pointless.
    final: bool = False


def python_parse(source: str, filename: str = "<unknown>") -> tuple[ast.AST | None, SyntaxProblem | None]:
    """The module's ``ast`` tree, or None and why this Python cannot read it."""
    try:
        # A SyntaxWarning (`1if x`, an invalid escape) is the compiler talking to whoever runs the
        # file, not a finding: it must not reach our stderr (notebooks parse cells the same way).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.parse(source, filename), None
    except SyntaxError as error:
        position = (error.lineno, max((error.offset or 1) - 1, 0)) if error.lineno is not None else None
        return None, SyntaxProblem(syntax_error_text(error.msg, error.lineno, error.offset), position,
                                   final=error.msg.startswith(COMPILER_LIMITS))
    except (ValueError, RecursionError, MemoryError) as error:
        return None, SyntaxProblem(f"cannot parse: {one_line(error)}", final=True)


def syntax_error_text(reason: str, line: int | None, column: int | None) -> str:
    """The one wording: `syntax error at line L, column C: REASON` (1-based, as Python counts)."""
    where = f" at line {line}, column {column or 1}" if line is not None else ""
    return f"syntax error{where}: {reason}"


def one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
