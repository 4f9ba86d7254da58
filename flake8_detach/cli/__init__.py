"""`flake8-detach` console script: one subcommand per module in this package.

Each module listed in SUBCOMMANDS defines ``register(subparsers)``, which adds
its parser and sets ``func`` to a callable taking the parsed namespace and
returning the exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .. import __version__

SUBCOMMANDS: tuple[str, ...] = ("check", "fix", "explain", "lsp", "verify")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flake8-detach", description="Find and fix PyTorch tensor-to-NumPy hazards."
    )
    parser.add_argument("--version", action="version", version=f"flake8-detach {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
