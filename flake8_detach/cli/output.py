"""Writing a subcommand's report to `--output-file`, the same way for every subcommand."""

from __future__ import annotations

import sys
from pathlib import Path


def write_output_file(path: Path, text: str, program: str) -> bool:
    """Write ``text`` to ``path``; on failure print one line naming the file and return False."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        print(f"{program}: error: cannot write {path}: {error.strerror or error}", file=sys.stderr)
        return False
    return True
