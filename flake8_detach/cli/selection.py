"""The options `check` and `fix` share: which rules, which files, which config (as ruff names them).

One place, so both commands select and find files the same way: `--select`/`--ignore` replace
the config's codes, `--extend-select`/`--extend-ignore` add to them, `--exclude` replaces the
default excluded folders, `--extend-exclude` adds patterns, and `.gitignore` is respected unless
`--no-respect-gitignore`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..config import Config, split_comma_list
from ..sources.files import NOT_REGULAR, discover, unreadable
from .parallel import PARALLEL_MIN_FILES


def add_selection_options(parser: Any, verb: str) -> None:
    parser.add_argument("--select", help=f"comma-separated codes or prefixes to {verb} (replaces the config's)")
    parser.add_argument("--ignore", help=f"comma-separated codes or prefixes not to {verb} (replaces the config's)")
    parser.add_argument("--extend-select", help="comma-separated codes or prefixes added to the selected ones")
    parser.add_argument("--extend-ignore", help="comma-separated codes or prefixes added to the ignored ones")
    parser.add_argument(
        "--preview",
        action="store_true",
        default=None,
        help="also run the opt-in rules (DET111, caller-dependent claims), as the config's preview = true does",
    )
    parser.add_argument(
        "--exclude",
        help="comma-separated glob patterns of files or folders to skip, replacing the default "
        "(.git, .venv, build, dist, __pycache__, ...)",
    )
    parser.add_argument("--extend-exclude", help="comma-separated glob patterns of files or folders to skip, added to the config's")
    parser.add_argument(
        "--no-respect-gitignore",
        dest="respect_gitignore",
        action="store_false",
        help="also look at files that .gitignore ignores (respected by default, as ruff does)",
    )
    parser.add_argument("--config", type=Path, help="pyproject.toml to read [tool.flake8-detach] from (default: the nearest one per file)")


def add_run_options(parser: Any, cache_help: str) -> None:
    """The results cache and the worker processes, as `check` and `fix` both take them."""
    parser.add_argument("--no-cache", dest="cache", action="store_false", help=cache_help)
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="where the results cache lives (default: $FLAKE8_DETACH_CACHE_DIR, else .flake8_detach_cache)",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=job_count,
        default=0,
        help=f"worker processes (default 0: one per CPU; used from {PARALLEL_MIN_FILES} files on)",
    )


def job_count(text: str) -> int:
    """``--jobs``: 0 (one per CPU) or more; anything else is a usage error (exit 2)."""
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError("must be 0 (one per CPU) or more")
    return count


def workers(args: argparse.Namespace) -> int:
    """How many worker processes ``--jobs`` asks for."""
    return int(args.jobs) or os.cpu_count() or 1


def command_line_overrides(args: argparse.Namespace, **extra: Any) -> Callable[[Config], Config]:
    """The command line's selection, laid over each file's config (validated as the config is)."""
    def override(config: Config) -> Config:
        return config.overridden(
            select=split_comma_list(args.select) if args.select is not None else None,
            ignore=split_comma_list(args.ignore) if args.ignore is not None else None,
            extend_select=split_comma_list(args.extend_select) if args.extend_select else None,
            extend_ignore=split_comma_list(args.extend_ignore) if args.extend_ignore else None,
            extend_exclude=split_comma_list(args.extend_exclude) if args.extend_exclude else None,
            preview=getattr(args, "preview", None),
            **extra,
        )
    return override


def discover_files(args: argparse.Namespace, raw: str, config: Config) -> Iterator[Path]:
    """The Python files under one command-line path, with the run's excludes."""
    exclude = split_comma_list(args.exclude) if args.exclude is not None else None
    # Patterns with a slash are relative to the config's folder, or without a config table to
    # the folder the run starts in, as flake8 resolves its own (not silently to nothing).
    root = config.root if config.root is not None else Path.cwd()
    return discover([raw], config.extend_exclude, root, exclude=exclude,
                    respect_gitignore=args.respect_gitignore)


def screen(path: Path, named: bool) -> tuple[str, str] | None:
    """Why a found file is not read, before anything opens it: None to read it, else
    ("skipped", line) for what a folder walk meets that is not a regular file (a FIFO, a device,
    a socket named `x.py`: never read, so never a hang), or ("error", line) for a file named on the
    command line that is not one, a file over the size bound, or one that cannot be looked at."""
    problem = unreadable(path)
    if problem is None:
        return None
    if problem == NOT_REGULAR and not named:
        return "skipped", f"skipped: {NOT_REGULAR}"
    return "error", problem
