"""`fix` writes like an editor that cares (issue 22, items 3-5; docs/robustness.md, "Writes").

A file that changed on disk while it was being fixed (an edit, a touch, a new file renamed over
it, a symlink swapped in, a deletion) is not written; a folder walk never writes through a
symlink to a file outside the folder; the rewritten file keeps its owner, group, mode, extended
attributes and ACL, and where one of them cannot be kept nothing is written.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_detach import cli
from flake8_detach.fixing import fixer
from flake8_detach.fixing.fixer import CHANGED_ON_DISK, FixFileError, fix_file

SOURCE = b"import torch\nw = torch.ones(2, requires_grad=True)\na = w.numpy()\n"
FIXED = SOURCE.replace(b".numpy()", b".detach().numpy()")
REFUSED = f"^{CHANGED_ON_DISK.replace('(', '[(]').replace(')', '[)]')}$"
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


# --- concurrent modification ------------------------------------------------------------

def _edit_after_compute(monkeypatch: pytest.MonkeyPatch, edit: Callable[[], object]) -> None:
    """Run ``edit`` when the fix has been computed, before anything is written."""
    real = fixer.fix_source

    def computed(*args: object, **kwargs: object) -> fixer.FixResult:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        edit()
        return result

    monkeypatch.setattr(fixer, "fix_source", computed)


def _edit_before_rename(monkeypatch: pytest.MonkeyPatch, edit: Callable[[], None]) -> None:
    """Run ``edit`` when the temporary file is written and about to be fsynced and renamed."""
    real = os.fsync

    def fsync(fd: int) -> None:
        edit()
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def test_an_edit_appended_while_fixing_is_kept_and_the_run_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22, item 3: `fix a.py &`, an edit saved meanwhile: the edit stays, exit 2."""
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)

    def append() -> None:
        with open(path, "ab") as stream:
            stream.write(b"b = 1  # the user's edit\n")

    _edit_after_compute(monkeypatch, append)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["fix", "a.py", "--no-cache"]) == 2
    captured = capsys.readouterr()
    assert [line for line in captured.err.splitlines() if "a.py" in line] == [f"a.py: error: {CHANGED_ON_DISK}"]
    assert captured.out.splitlines()[-1] == "0 fixes applied in 0 files; 1 error"
    assert path.read_bytes() == SOURCE + b"b = 1  # the user's edit\n"
    assert _names(tmp_path) == ["a.py"]


def test_an_edit_of_the_same_size_and_mtime_is_caught_by_the_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)
    before = path.stat()
    edited = SOURCE.replace(b"a = ", b"z = ")

    def overwrite_in_place() -> None:
        with open(path, "r+b") as stream:
            stream.write(edited)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    _edit_before_rename(monkeypatch, overwrite_in_place)
    with pytest.raises(FixFileError, match=REFUSED):
        fix_file(path)
    assert path.read_bytes() == edited and _names(tmp_path) == ["a.py"]


def test_the_bytes_the_fix_was_computed_from_must_be_the_files(tmp_path: Path) -> None:
    """`fix` reads a file once for its cache and hands the bytes on: they must still be the file's."""
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE + b"b = 2\n")
    with pytest.raises(FixFileError, match=REFUSED):
        fix_file(path, data=SOURCE)
    assert path.read_bytes() == SOURCE + b"b = 2\n"


def test_a_file_deleted_while_fixing_is_not_brought_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)
    _edit_after_compute(monkeypatch, path.unlink)
    with pytest.raises(FixFileError, match=REFUSED):
        fix_file(path)
    assert _names(tmp_path) == []


# The property: whatever happens to the file while it is being fixed, and when, either the fix is
# written over the very bytes it was computed from, or nothing is written and the file is as the
# other program left it. No byte of anyone's is lost; no temporary file stays behind.

def _edits(path: Path, outside: Path) -> dict[str, Callable[[], None]]:
    def append() -> None:
        with open(path, "ab") as stream:
            stream.write(b"# edit\n")

    def same_size() -> None:
        before = path.stat()
        data = path.read_bytes()
        path.write_bytes(data[:-2] + b"#\n")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    def truncate() -> None:
        path.write_bytes(b"")

    def touch() -> None:
        os.utime(path, ns=(1, 10**18))

    def new_file_same_bytes() -> None:  # an editor that saves by rename, with no change
        fresh = path.with_name("fresh.tmp")
        fresh.write_bytes(path.read_bytes())
        os.replace(fresh, path)

    def symlink_outside() -> None:
        link = path.with_name("link.tmp")
        link.symlink_to(outside)
        os.replace(link, path)

    def symlink_same_bytes() -> None:
        outside.write_bytes(path.read_bytes())
        symlink_outside()

    def chmod() -> None:
        path.chmod(0o640)

    return {
        "nothing": lambda: None, "append": append, "same_size": same_size, "truncate": truncate,
        "touch": touch, "new_file_same_bytes": new_file_same_bytes, "symlink_outside": symlink_outside,
        "symlink_same_bytes": symlink_same_bytes, "chmod": chmod, "delete": path.unlink,
    }


@settings(max_examples=120, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edit=st.sampled_from(["nothing", "append", "same_size", "truncate", "touch", "new_file_same_bytes",
                          "symlink_outside", "symlink_same_bytes", "chmod", "delete"]),
    moment=st.sampled_from(["after_compute", "before_rename"]),
    padding=st.lists(st.sampled_from([b"x = 1\n", b"# comment\n", b"\n", b"y = w.numpy()\n"]), max_size=20),
)
def test_no_edit_is_ever_lost_whatever_happens_while_fixing(
    monkeypatch: pytest.MonkeyPatch, edit: str, moment: str, padding: list[bytes]
) -> None:
    original = SOURCE + b"".join(padding)
    with tempfile.TemporaryDirectory() as folder, monkeypatch.context() as patch:
        path, outside = Path(folder) / "model.py", Path(folder) / "settings.toml"
        path.write_bytes(original)
        path.chmod(0o644)
        outside.write_bytes(b"[settings]\n")
        action = _edits(path, outside)[edit]
        state: dict[str, object] = {}

        def recorded() -> None:
            action()
            state["bytes"] = path.read_bytes() if path.exists() else None
            state["outside"] = outside.read_bytes()

        (_edit_after_compute if moment == "after_compute" else _edit_before_rename)(patch, recorded)
        try:
            fix_file(path)
        except FixFileError as error:
            written = False
            assert str(error) == CHANGED_ON_DISK
        else:
            written = True
        patch.undo()
        if written:  # only where the file's bytes and identity stayed as read
            assert edit in {"nothing", "chmod"} and state["bytes"] == original
            assert not path.is_symlink() and path.read_bytes() == original.replace(b".numpy()", b".detach().numpy()")
            assert stat.S_IMODE(path.stat().st_mode) == (0o640 if edit == "chmod" else 0o644)
        else:
            assert edit != "nothing"
            now = path.read_bytes() if path.exists() else None
            assert now == state["bytes"]  # exactly what the other program left
            assert outside.read_bytes() == state["outside"]  # a symlink's target is never written
        assert not [name for name in os.listdir(folder) if name.endswith(".tmp") and name != "link.tmp"]


# --- symbolic links -----------------------------------------------------------------------

def test_a_symlink_swapped_in_before_the_write_is_refused_and_its_target_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22, item 4: a settings file once received the fixed Python through such a link."""
    path, settings_file = tmp_path / "a.py", tmp_path / "settings.toml"
    path.write_bytes(SOURCE)
    settings_file.write_bytes(b"[tool]\nkey = 1\n")

    def swap() -> None:
        path.unlink()
        path.symlink_to(settings_file)

    _edit_before_rename(monkeypatch, swap)
    with pytest.raises(FixFileError, match=REFUSED):
        fix_file(path)
    assert settings_file.read_bytes() == b"[tool]\nkey = 1\n"
    assert path.is_symlink() and _names(tmp_path) == ["a.py", "settings.toml"]


def test_fixing_a_folder_never_writes_through_a_symlink_to_a_file_outside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (elsewhere / "shared.py").write_bytes(SOURCE)
    (project / "linked.py").symlink_to(elsewhere / "shared.py")
    (project / "own.py").write_bytes(SOURCE)
    (project / "inside.py").symlink_to(project / "own.py")  # a link inside the folder is fine
    monkeypatch.chdir(tmp_path)
    assert cli.main(["fix", "project", "--no-cache"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "linked.py" in line]
    real = os.path.realpath(elsewhere / "shared.py")
    assert errors == [(f"project/linked.py: error: a symbolic link to {real}, outside project; "
                       "not written (name the file itself to fix it)")]
    assert (elsewhere / "shared.py").read_bytes() == SOURCE
    assert (project / "own.py").read_bytes() == FIXED and (project / "inside.py").is_symlink()
    # Named on the command line, the link is followed (as ruff does): the user asked for that file.
    assert cli.main(["fix", "project/linked.py", "--no-cache"]) == 0
    assert (elsewhere / "shared.py").read_bytes() == FIXED and (project / "linked.py").is_symlink()


def test_check_fix_on_a_folder_does_not_write_outside_it_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "shared.py").write_bytes(SOURCE)
    (project / "linked.py").symlink_to(tmp_path / "shared.py")
    monkeypatch.chdir(project)
    assert cli.main(["check", "--fix", ".", "--no-cache"]) == 1  # check's exit for a file it could not handle
    real = os.path.realpath(tmp_path / "shared.py")
    assert (f"linked.py: error: a symbolic link to {real}, outside .; not written (name the file itself to fix it)"
            in capsys.readouterr().err.splitlines())
    assert (tmp_path / "shared.py").read_bytes() == SOURCE


# --- owner, group, mode, extended attributes, ACL -------------------------------------------

@pytest.mark.skipif(not ROOT, reason="only root can give a file another owner to keep")
def test_owner_and_group_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)
    os.chown(path, 1234, 2345)
    path.chmod(0o664)
    inode = path.stat().st_ino
    fix_file(path)
    after = path.stat()
    assert after.st_ino != inode and path.read_bytes() == FIXED  # really a new file, renamed over
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (1234, 2345, 0o664)


def test_a_file_whose_owner_cannot_be_kept_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user may write another user's file (group-writable) but not give a new file its owner."""
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)
    status = path.stat()
    real_fstat = os.fstat

    def fstat(fd: int) -> os.stat_result:  # the temporary file: someone else's, as for a non-root user
        result = real_fstat(fd)
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).endswith(".tmp"):
            values = list(result)
            values[stat.ST_UID] = status.st_uid + 1
            return os.stat_result(values)
        return result

    def denied(*_: object) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    if not os.path.exists("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to tell the temporary file's descriptor")
    monkeypatch.setattr(os, "fstat", fstat)
    monkeypatch.setattr(os, "fchown", denied)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["fix", "a.py", "--no-cache"]) == 2
    monkeypatch.undo()
    errors = [line for line in capsys.readouterr().err.splitlines() if "a.py" in line]
    assert errors == [(f"a.py: error: cannot keep its owner {status.st_uid}:{status.st_gid} "
                       "(Operation not permitted); not written")]
    assert path.read_bytes() == SOURCE and _names(tmp_path) == ["a.py"]


def test_mode_bits_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)
    path.chmod(0o2751)  # setgid: a chown would clear it, so the mode is set after the owner
    fix_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o2751 and path.read_bytes() == FIXED


def _set_xattr_or_skip(path: Path, name: str, value: bytes) -> None:
    if not hasattr(os, "setxattr"):
        pytest.skip("no extended attributes on this platform")
    try:
        os.setxattr(path, name, value)
    except OSError as error:
        pytest.skip(f"the filesystem under {path.parent} refuses {name}: {error.strerror}")


def test_a_user_extended_attribute_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)
    _set_xattr_or_skip(path, "user.test", b"kept")
    fix_file(path)
    assert path.read_bytes() == FIXED and os.getxattr(path, "user.test") == b"kept"


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX ACL as Linux stores it in system.posix_acl_access (what setfacl writes)."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, ident) for tag, perm, ident in entries)


NO_ID = 0xFFFFFFFF
USER_OBJ, USER, GROUP_OBJ, MASK, OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
# user::rw-, user:1234:rw-, group::r--, mask::rw-, other::r--
ACL = _acl((USER_OBJ, 6, NO_ID), (USER, 6, 1234), (GROUP_OBJ, 4, NO_ID), (MASK, 6, NO_ID), (OTHER, 4, NO_ID))


def test_an_acl_is_kept(tmp_path: Path) -> None:
    """Set as setfacl sets it (the system.posix_acl_access attribute), so no setfacl is needed."""
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)
    _set_xattr_or_skip(path, "system.posix_acl_access", ACL)
    mode = stat.S_IMODE(path.stat().st_mode)
    fix_file(path)
    assert path.read_bytes() == FIXED
    assert os.getxattr(path, "system.posix_acl_access") == ACL
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_an_acl_the_folder_gives_new_files_is_not_added(tmp_path: Path) -> None:
    """The temporary file inherits the folder's default ACL; the file it replaces had none."""
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)
    path.chmod(0o644)
    if not hasattr(os, "setxattr"):
        pytest.skip("no extended attributes on this platform")
    try:
        os.setxattr(tmp_path, "system.posix_acl_default", ACL)
    except OSError as error:
        pytest.skip(f"the filesystem refuses a default ACL: {error.strerror}")
    fix_file(path)
    assert path.read_bytes() == FIXED and "system.posix_acl_access" not in os.listxattr(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_an_extended_attribute_that_cannot_be_kept_stops_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a security.* label for a user without the right: said, and nothing written."""
    path = tmp_path / "a.py"
    path.write_bytes(SOURCE)
    _set_xattr_or_skip(path, "user.label", b"x")
    real = os.setxattr

    def refused(target: object, name: str, value: bytes, *args: object) -> None:
        if name == "user.label":
            raise PermissionError(errno.EPERM, "Operation not permitted")
        real(target, name, value, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "setxattr", refused)
    with pytest.raises(FixFileError, match=r"^cannot keep its extended attribute user\.label "
                                           r"\(Operation not permitted\); not written$"):
        fix_file(path)
    monkeypatch.undo()
    assert path.read_bytes() == SOURCE and os.getxattr(path, "user.label") == b"x"
    assert _names(tmp_path) == ["a.py"]


def _as_user(uid: int) -> Callable[[], None]:
    def drop() -> None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    return drop


@pytest.mark.skipif(not ROOT or not hasattr(os, "setuid"), reason="needs root to hand a file to another user")
def test_a_user_who_cannot_keep_the_owner_gets_a_message_not_a_new_owner() -> None:
    """The real case: `nobody` may write the world-writable file of 1234:2345, and a rename would
    make it nobody's. Runs `fix` as nobody where this interpreter can be run by that user."""
    nobody = 65534
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        runs = subprocess.run([sys.executable, "-c", "import flake8_detach"], preexec_fn=_as_user(nobody),
                              capture_output=True, env=env, check=False).returncode == 0
    except OSError:
        runs = False
    if not runs:
        pytest.skip(f"this interpreter or the package cannot be run by uid {nobody} here (under a private "
                    "folder such as /root); the in-process test above shows the same refusal")
    folder = Path(tempfile.mkdtemp(prefix="fix-owner-", dir="/tmp"))
    try:
        folder.chmod(0o777)
        path = folder / "a.py"
        path.write_bytes(SOURCE)
        os.chown(path, 1234, 2345)
        path.chmod(0o666)
        done = subprocess.run([sys.executable, "-m", "flake8_detach", "fix", "a.py", "--no-cache"], cwd=folder,
                              preexec_fn=_as_user(nobody), capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 2
        assert "a.py: error: cannot keep its owner 1234:2345 (Operation not permitted); not written" in done.stderr
        assert path.read_bytes() == SOURCE and (path.stat().st_uid, path.stat().st_gid) == (1234, 2345)
        assert _names(folder) == ["a.py"]
    finally:
        shutil.rmtree(folder)


def test_the_issue_scenario_fix_in_the_background_and_an_edit_saved_meanwhile(tmp_path: Path) -> None:
    """`fix big.py &`, then an edit appended while it runs: whenever the edit lands (before the
    read, during the fix, after the write), it is in the file afterwards, and the run says so when
    it refused. A real process and a real race: the invariant holds at any timing."""
    body = SOURCE + b"".join(b"v%d = w.numpy()\n" % index for index in range(400))
    path = tmp_path / "big.py"
    path.write_bytes(body)
    edit = b"user_edit = 1\n"
    process = subprocess.Popen([sys.executable, "-m", "flake8_detach", "fix", "big.py", "--no-cache"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)  # the interpreter and the engine are loading, or the fix is computing
    with open(path, "ab") as stream:
        stream.write(edit)
    out, err = process.communicate(timeout=300)
    after = path.read_bytes()
    assert after.endswith(edit), "the edit was lost"
    if process.returncode == 2:
        assert f"big.py: error: {CHANGED_ON_DISK}" in err.splitlines() and after == body + edit
    else:  # the edit landed before the read (fixed with it) or after the write (appended to the fix)
        fixed = body.replace(b".numpy()", b".detach().numpy()")
        assert process.returncode == 0 and after == fixed + edit, out + err


NOTEBOOK = Path(__file__).resolve().parent.parent / "fixtures" / "notebooks" / "train_across_cells.ipynb"


def test_a_notebook_changed_while_fixing_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Notebooks take the same write path: saved from Jupyter meanwhile, the save is kept."""
    path = tmp_path / "train.ipynb"
    path.write_bytes(NOTEBOOK.read_bytes())
    assert fix_file(path, write=False).changed  # there is something to fix
    saved = NOTEBOOK.read_bytes().replace(b'"nbformat": 4', b'"nbformat": 4 ', 1)
    assert saved != NOTEBOOK.read_bytes()
    _edit_after_compute(monkeypatch, lambda: path.write_bytes(saved))
    with pytest.raises(FixFileError, match=REFUSED):
        fix_file(path)
    assert path.read_bytes() == saved and _names(tmp_path) == ["train.ipynb"]


def test_the_folder_rule_holds_in_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "shared.py").write_bytes(SOURCE)
    for index in range(20):  # enough files for worker processes
        (project / f"m{index:02}.py").write_bytes(SOURCE)
    (project / "linked.py").symlink_to(tmp_path / "shared.py")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["fix", "project", "--no-cache", "--jobs", "2"]) == 2
    assert [line for line in capsys.readouterr().err.splitlines() if "linked.py" in line]
    assert (tmp_path / "shared.py").read_bytes() == SOURCE
    assert all((project / f"m{index:02}.py").read_bytes() == FIXED for index in range(20))
