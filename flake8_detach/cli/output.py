"""Writing a subcommand's report to `--output-file`, the same way for every subcommand."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path


def write_output_file(path: Path, text: str, program: str) -> bool:
    """Write ``text`` to ``path``; on failure print one line naming the file and return False.

    A regular file (or a new one) is replaced atomically, through a temporary file in its folder
    and a rename: a run that fails halfway leaves the old report whole, never a truncated one.
    Anything else (`/dev/stdout`, a FIFO) is written to as it is. A file name's bytes that are not
    UTF-8 (lone surrogates from ``os.fsdecode``) are written back as those bytes.
    """
    data = text.encode("utf-8", "surrogateescape")
    try:
        target = Path(os.path.realpath(path))  # replace the file a symlink points to, not the link
        try:
            info: os.stat_result | None = target.stat()
        except FileNotFoundError:
            info = None
        if info is not None and not stat.S_ISREG(info.st_mode):
            with open(target, "wb") as stream:
                stream.write(data)
            return True
        _replace(target, data, None if info is None else stat.S_IMODE(info.st_mode))
    except (OSError, UnicodeEncodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else None
        print(f"{program}: error: cannot write {path}: {reason or error}", file=sys.stderr)
        return False
    return True


def _replace(target: Path, data: bytes, mode: int | None) -> None:
    from ..sources.writing import replace_file  # only a run with --output-file needs it

    if mode is None:  # a new file gets what open() would give it: 0o666 less the umask
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    chosen = mode
    replace_file(target, data, prepare=lambda fd, temporary: os.chmod(temporary, chosen))
