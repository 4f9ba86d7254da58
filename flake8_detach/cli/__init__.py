"""`flake8-detach` console script: one subcommand per module in this package.

Each module named in SUBCOMMANDS defines ``register(subparsers, summary)``, which adds its
parser and sets ``func`` to a callable taking the parsed namespace and returning the exit code.

Only the module of the command being run is imported, and none for `--version` or `--help`:
pre-commit and editors start this program again and again, so what it does not need it must
not load (libcst, pygls, the results cache). The other commands are listed by their summary.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from .. import __version__

# Command -> the one line `flake8-detach --help` shows for it; its module is cli/<command>.py.
SUBCOMMANDS: dict[str, str] = {
    "check": "report tensor-to-NumPy hazards (text, json, sarif or github output)",
    "fix": "fix tensor-to-NumPy hazards in place (like ruff check --fix)",
    "explain": "print a rule's page: what it flags, why, how to fix it and the runtime evidence",
    "lsp": "start the language server over stdio (needs the lsp extra)",
    "verify": "run the fixtures on cpu/cuda and check that each diagnostic's runtime claim holds",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser, with ``command``'s own arguments (its module imported); every other command
    is a placeholder that only names it in `--help`."""
    parser = argparse.ArgumentParser(
        prog="flake8-detach", description="Find and fix PyTorch tensor-to-NumPy hazards."
    )
    parser.add_argument("--version", action="version", version=f"flake8-detach {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in SUBCOMMANDS.items():
        if name == command:
            importlib.import_module(f"{__name__}.{name}").register(subparsers, summary)
        else:
            subparsers.add_parser(name, help=summary, add_help=False)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The subcommand on the command line: its first argument that is not an option, if known.

    The top-level options (`--version`, `--help`) take no value, so nothing else comes first.
    """
    for argument in argv:
        if not argument.startswith("-"):
            return argument if argument in SUBCOMMANDS else None
    return None


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    parser = build_parser(command_named(arguments))
    args = parser.parse_args(arguments)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    _names_survive_stdout()
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `flake8-detach check | head`: the reader has seen enough
        _silence_stdout()
        return 1
    except Exception as error:  # a bug of ours: one line and exit 2, as documented
        if os.environ.get("FLAKE8_DETACH_TRACEBACK"):
            raise
        text = str(error).strip().splitlines()
        detail = f": {text[0]}" if text else ""
        print(f"flake8-detach: internal error: {type(error).__name__}{detail} "
              "(set FLAKE8_DETACH_TRACEBACK=1 for the traceback, and please report it)", file=sys.stderr)
        return 2


def _names_survive_stdout() -> None:
    """File names whose bytes are not UTF-8 reach Python as lone surrogates; a UTF-8 stdout with
    strict errors (a UTF-8 locale's default) would fail on the first one. Write their bytes back
    instead, as `ls` and flake8 print them, on stdout and stderr (whose default would print
    `\\udcff`); a stream in another encoding escapes what it lacks."""
    for stream, original in ((sys.stdout, sys.__stdout__), (sys.stderr, sys.__stderr__)):
        if stream is not original or getattr(stream, "errors", None) not in ("strict", "backslashreplace"):
            continue
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        encoding = (getattr(stream, "encoding", "") or "").lower().replace("-", "").replace("_", "")
        try:
            reconfigure(errors="surrogateescape" if encoding == "utf8" else "backslashreplace")
        except (ValueError, OSError):  # pragma: no cover - a stream that cannot change
            pass


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
