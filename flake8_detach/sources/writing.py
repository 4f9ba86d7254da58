"""The one way a user's file is replaced: a temporary file beside it, then an atomic rename.

:func:`replace_file` is the primitive every write goes through (a fixed file, a cache entry,
`--output-file`): the bytes go to a temporary file in the target's folder, which is prepared
(mode, owner), flushed, checked once more and renamed over the target; on any failure the
temporary file is removed and the target is as it was. :func:`write_atomically` adds what a fix
needs on top: the file must still be the one that was read (identity and bytes), and it keeps
its owner, group, mode and extended attributes (ACLs included).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .files import NOT_REGULAR, size_limit, too_large


class WriteRefused(Exception):
    """The file was not written, to keep it safe; the message is one line for the user."""


def replace_file(
    target: Path,
    data: bytes,
    *,
    prefix: str | None = None,
    suffix: str = ".tmp",
    prepare: Callable[[int, str], None] | None = None,
    before_rename: Callable[[], None] | None = None,
    durable: bool = True,
) -> None:
    """Write ``data`` to a temporary file beside ``target``, then rename it over ``target``.

    ``prepare(fd, temporary_path)`` sets the new file's metadata before it is flushed;
    ``before_rename()`` makes the last checks (it raises to stop the write); ``durable`` fsyncs
    the data before the rename (a cache entry need not be). A reader, or a crash, sees the old
    file or the new one, never a part; the rename replaces whatever has ``target``'s name (a
    symlink is replaced, not followed).
    """
    import tempfile  # a run that writes nothing need not load it

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=prefix or f".{target.name}.", suffix=suffix)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            if prepare is not None:
                prepare(stream.fileno(), temporary)
            if durable:
                os.fsync(stream.fileno())
        if before_rename is not None:
            before_rename()
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


# Writes, as an editor that cares makes them (docs/robustness.md, "Writes"): the bytes are read
# with the file's identity; right before the rename the file must still be that file (same device,
# inode, size and modification time, not a symlink swapped in) with the same bytes, or nothing is
# written. The new file gets the old one's owner, group, mode and extended attributes (ACLs are
# one) before the rename; where one of them cannot be kept, nothing is written either.

CHANGED_ON_DISK = "changed on disk while fixing; not written (run fix again)"

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # not on Windows: an lstat check stands in
_BINARY = getattr(os, "O_BINARY", 0)
_ACL = "system.posix_acl_access"  # a Linux file's access ACL, as an extended attribute
_NO_XATTRS = {errno.ENOTSUP, errno.EOPNOTSUPP}


@dataclass(frozen=True)
class FileSnapshot:
    """A file's bytes and its identity when they were read: what a write must find unchanged.

    ``path`` is the file itself: a symlink named is resolved once, here, and the write goes to
    the file that was read, whatever the link points to later.
    """

    path: Path
    data: bytes
    identity: tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns


def _identity(status: os.stat_result) -> tuple[int, int, int, int]:
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def _open_file(path: Path) -> int:
    """A read-only descriptor of ``path`` itself, never of a symlink's target (ELOOP)."""
    # Non-blocking, so that opening a FIFO swapped in cannot hang; reads block again below.
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY | getattr(os, "O_NONBLOCK", 0))
    if not _NOFOLLOW and stat.S_ISLNK(os.lstat(path).st_mode):
        os.close(fd)
        raise OSError(errno.ELOOP, "a symbolic link", str(path))
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def read_snapshot(path: str | os.PathLike[str]) -> FileSnapshot:
    """Read a file's bytes with its identity (OSError when it cannot be read)."""
    target = Path(os.path.realpath(path))
    fd = _open_file(target)
    try:
        status = os.fstat(fd)  # before the read: a write during the read changes it
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(status.st_mode):  # a FIFO or a device: never read (files.read_file_bytes)
            raise OSError(errno.EINVAL, NOT_REGULAR, str(path))
        limit = size_limit(target)
        if status.st_size > limit:
            raise OSError(errno.EFBIG, too_large(target, status.st_size, limit), str(path))
        data = _read_all(fd)
    finally:
        os.close(fd)
    return FileSnapshot(target, data, _identity(status))


def write_atomically(path: Path, data: bytes, snapshot: FileSnapshot | None = None) -> None:
    """Replace the file ``snapshot`` read (default: as it is now) with ``data``, atomically.

    The bytes go to a temporary file in the same folder, which gets the file's owner, group, mode
    and extended attributes (ACLs included), is flushed and fsynced, and is renamed over the file
    only if the file is still the one read, with the same bytes: :class:`WriteRefused` otherwise,
    as when something cannot be kept. A reader (or a crash) sees the old file or the new one.

    What remains: between the last check (an lstat) and the rename, another program can still
    replace the file; editors that check before saving have the same window. It is two syscalls.
    """
    if snapshot is None:
        snapshot = read_snapshot(path)
    target = snapshot.path
    try:
        original = _open_file(target)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOENT):  # swapped for a symlink, renamed or deleted
            raise WriteRefused(CHANGED_ON_DISK) from error
        raise
    open_original = True
    try:
        status = os.fstat(original)
        if _identity(status) != snapshot.identity:
            raise WriteRefused(CHANGED_ON_DISK)
        mode = stat.S_IMODE(status.st_mode)
        if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):  # a rename would replace it anyway
            raise PermissionError(errno.EACCES, "the file is read-only", str(path))
        read = snapshot

        def last_checks() -> None:
            # As close to the rename as they can be: the file read (by its descriptor) is
            # unwritten and untouched (ctime: no chmod, chown or xattr change since its metadata
            # was copied) and has the same bytes, and it is still at its name.
            nonlocal open_original
            now = os.fstat(original)
            if (_identity(now) != read.identity or now.st_ctime_ns != status.st_ctime_ns
                    or _read_all(original) != read.data):
                raise WriteRefused(CHANGED_ON_DISK)
            os.close(original)  # Windows renames nothing over a file held open
            open_original = False
            named = os.lstat(target)
            if not stat.S_ISREG(named.st_mode) or (named.st_dev, named.st_ino) != (status.st_dev, status.st_ino):
                raise WriteRefused(CHANGED_ON_DISK)

        replace_file(target, data, prepare=lambda fd, temporary: _copy_metadata(original, status, fd, temporary),
                     before_rename=last_checks)
    finally:
        if open_original:
            os.close(original)


def _copy_metadata(source: int, status: os.stat_result, target: int, target_path: str) -> None:
    """Give the file ``target`` the owner, group, extended attributes and mode of ``source``."""
    if hasattr(os, "fchown"):
        current = os.fstat(target)
        if (current.st_uid, current.st_gid) != (status.st_uid, status.st_gid):
            try:
                os.fchown(target, status.st_uid, status.st_gid)
            except OSError as error:
                raise WriteRefused(f"cannot keep its owner {status.st_uid}:{status.st_gid} "
                                   f"({error.strerror or error}); not written") from error
    _copy_xattrs(source, target)
    if hasattr(os, "fchmod"):
        os.fchmod(target, stat.S_IMODE(status.st_mode))  # after chown, which clears set-id bits
    else:
        os.chmod(target_path, stat.S_IMODE(status.st_mode))


def _xattr_names(fd: int) -> list[str]:
    try:
        return os.listxattr(fd)
    except OSError as error:
        if error.errno in _NO_XATTRS:  # the filesystem has none
            return []
        raise


def _xattr_label(name: str) -> str:
    return "its ACL" if name == _ACL else f"its extended attribute {name}"


def _copy_xattrs(source: int, target: int) -> None:
    """Make ``target``'s extended attributes those of ``source`` (Linux; elsewhere nothing to do)."""
    if not hasattr(os, "listxattr"):
        return
    try:
        wanted = {name: os.getxattr(source, name) for name in _xattr_names(source)}
    except OSError as error:
        raise WriteRefused(f"cannot read its extended attributes ({error.strerror or error}); not written") from error
    try:
        present = _xattr_names(target)
    except OSError:
        present = []
    for name in present:  # what the new file got from its folder (a default ACL) and the old lacks
        if name not in wanted:
            try:
                os.removexattr(target, name)
            except OSError as error:
                raise WriteRefused(f"cannot remove the extended attribute {name}, which the old file lacks, from "
                                   f"the new one ({error.strerror or error}); not written") from error
    for name, value in wanted.items():
        try:
            if name in present and os.getxattr(target, name) == value:
                continue
            os.setxattr(target, name, value)
        except OSError as error:
            raise WriteRefused(f"cannot keep {_xattr_label(name)} ({error.strerror or error}); not written") from error
