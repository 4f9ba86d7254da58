"""`flake8-detach lsp`: start the language server on stdin/stdout (for editors' LSP clients)."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "lsp",
        help=summary,
        description="Start the flake8-detach language server on stdin/stdout. "
        "Install it with: pip install 'flake8-detach[lsp]'.",
    )
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default and only transport)")
    parser.add_argument(
        "--debounce-ms",
        type=int,
        default=300,
        help="wait this long after the last change before linting a buffer (default: 300)",
    )
    parser.add_argument(
        "--severity",
        choices=("error", "warning", "information", "hint"),
        default="warning",
        help="how diagnostics are shown (default: warning, as flake8's through python-lsp-server); "
        "a client's initializationOptions {\"severity\": ...} override it",
    )
    parser.add_argument("--log-file", help="write the server's log to this file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..lsp import fast_start

    missing = fast_start.missing_requirement()
    if missing is not None:
        return _needs_pygls(missing)
    if args.debounce_ms < 0:
        print("flake8-detach: error: --debounce-ms must be 0 or more", file=sys.stderr)
        return 2
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=logging.INFO)

    def load() -> Any:
        from ..lsp.server import create_server

        return create_server(debounce_seconds=args.debounce_ms / 1000, severity=args.severity)

    try:
        if not fast_start.enabled():
            server = load()
        else:
            # pygls loads in a thread while `initialize` is read and answered (lsp/fast_start.py).
            fast_start.serve(load)
            return 0
    except ImportError as error:
        return _needs_pygls(error.name or str(error))
    server.start_io()
    return 0


def _needs_pygls(name: str) -> int:
    print(
        f"flake8-detach: error: the language server needs pygls ({name}); "
        "install it with: pip install 'flake8-detach[lsp]'",
        file=sys.stderr,
    )
    return 2
