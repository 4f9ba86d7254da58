"""Run a test program and say where it failed: the runtime half of tests that lint a program."""

from __future__ import annotations


def failing_line(source: str, filename: str = "<program>") -> int | None:
    """Run the program: the line of the program itself that raised (a RuntimeError or TypeError,
    what the rules predict), or None if it ran."""
    try:
        exec(compile(source, filename, "exec"), {"__name__": "__main__"})  # noqa: S102
    except (RuntimeError, TypeError) as error:
        trace, line = error.__traceback__, None
        while trace is not None:
            if trace.tb_frame.f_code.co_filename == filename:
                line = trace.tb_lineno
            trace = trace.tb_next
        return line
    return None
