"""Writing an output directory so that no reader ever sees a half-written one.

Protocol (docs/reproducible-builds.md has the reasoning):

1. Everything is produced in `OUTDIR/.ireegen-staging-<pid>-<random>/`, on
   OUTDIR's own file system (an OUTDIR that is a mount point works).  The
   staging directory holds an flock on its `.owner` file for as long as its
   emit lives, so any later emit can tell a dead emit's leftovers from a
   live one's work and delete them.
2. The commit runs under an exclusive flock on OUTDIR itself (its directory
   file descriptor: no lock file is left behind).  It
   writes a journal into the staging directory (the names it will replace
   and remove), then moves every file it displaces (old manifest first) into
   `staging/.old/`, moves the new files in, and the new manifest last.
   Deleting the journal is the commit point.
3. An error during the commit rolls back at once; a crash (SIGKILL, power)
   leaves the journal, and the next emit into the directory rolls it back
   under the lock before doing anything else.  Recovery belongs to the
   command about to write: readers (`info`, `run`, `size`) never recover
   or delete; they say that an emit was interrupted.

So manifest.json, when present, describes exactly the files present: the old
set until the commit point, the new set after it.  During a commit, and
after a crash until the next recovery, manifest.json is absent.

Only ireegen's files are touched (ownership.py has the rule): the commit
displaces and deletes only files its manifest lists with their sha256
unchanged, the journal records the sha256 of every file it moves in (a
roll-back deletes only those bytes), and a roll-back never puts a file back
over one that appeared since.  OUTDIR's entries are untrusted: a staging
directory is used only when lstat says it is a directory of this user, its
`.owner` is opened with O_NOFOLLOW and must carry ireegen's mark, and so is
its journal; a symlink anywhere there is left alone, never followed.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.faults import fault_point

from .ownership import (
    MANIFEST,
    MARKER,
    check_outdir_path,
    check_overwrites,
    check_spares_inputs,
    is_marked,
    is_ours,
    is_plain_name,
    owned_files,
    record_written,
    regular_sha256,
    sha256_of,
    vouched_files,
)

__all__ = [
    "MANIFEST",
    "STAGING_PREFIX",
    "check_emit_target",
    "commit",
    "manifest_text",
    "read_manifest_path",
    "sha256_of",
    "staging_dir",
]

STAGING_PREFIX = ".ireegen-staging-"
_OWNER = ".owner"
_OWNER_MARK = b"ireegen staging directory\n"
_JOURNAL = ".journal.json"
_OLD = ".old"
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def _cannot_write(outdir: Path, e: OSError) -> UsageError:
    return UsageError(f"-o {outdir}: cannot write there ({e.strerror or e})")


def _flock(fd: int, blocking: bool = True) -> bool:
    """An exclusive advisory lock on `fd`; False when non-blocking and
    someone else holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


@contextmanager
def directory_lock(outdir: Path):
    """OUTDIR's commit lock, an flock on the directory itself."""
    try:
        fd = os.open(outdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise _cannot_write(outdir, e) from None
    try:
        _flock(fd)
    except BaseException:
        os.close(fd)
        raise
    try:
        yield
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _staging_entries(outdir: Path) -> list:
    """OUTDIR's staging directories: real directories (lstat, never a
    symlink) named with STAGING_PREFIX and owned by this user."""
    try:
        entries = sorted(os.scandir(outdir), key=lambda e: e.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        if not entry.name.startswith(STAGING_PREFIX):
            continue
        try:
            st = os.lstat(entry.path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
            found.append(Path(entry.path))
    return found


def _open_owner(staging: Path):
    """The descriptor of staging's `.owner`, opened without following a
    link, when it is a regular file carrying ireegen's mark; else None."""
    try:
        fd = os.open(staging / _OWNER, os.O_RDWR | _NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode) and os.pread(fd, len(_OWNER_MARK), 0) == _OWNER_MARK:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _read_journal(staging: Path):
    """The journal (a dict) when staging holds one that ireegen wrote, else None."""
    try:
        fd = os.open(staging / _JOURNAL, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            journal = json.loads(f.read(16 << 20))
        except (OSError, ValueError):
            return None
    return journal if is_marked(journal) else None


def recover(outdir: Path) -> list:
    """Rolls back commits interrupted by a crash and deletes the staging
    directories of dead emits; the caller holds the directory lock (only a
    command about to write calls this).  Returns the names of the
    directories it removed."""
    outdir = Path(outdir)
    removed = []
    for staging in _staging_entries(outdir):
        fd = _open_owner(staging)
        if fd is None:
            # Not ireegen's, or an emit killed before it marked its directory:
            # removed only when empty, never emptied.
            if not os.path.lexists(staging / _OWNER):
                try:
                    os.rmdir(staging)
                    removed.append(staging.name)
                except OSError:
                    pass
            continue
        try:
            if not _flock(fd, blocking=False):
                continue  # a live emit is still working in it
            complete = True
            if os.path.lexists(staging / _JOURNAL):
                journal = _read_journal(staging)
                complete = journal is not None and _roll_back(staging, outdir, journal)
            if complete:
                shutil.rmtree(staging, ignore_errors=True)  # never follows a link inside
                removed.append(staging.name)
        finally:
            os.close(fd)
    return removed


def check_emit_target(outdir: Path, names, inputs) -> None:
    """Everything emit can know about OUTDIR before it compiles: a path that
    leads somewhere, no input in the way of an output, and (after rolling
    back a crashed commit: emit is about to write) no manifest.json that is
    not ireegen's and no output landing on a file that is not ours.  The
    commit checks the last two again under the directory lock."""
    outdir = Path(outdir)
    check_outdir_path(outdir)
    check_spares_inputs(outdir, names, inputs)
    try:
        is_dir = stat.S_ISDIR(os.stat(outdir).st_mode)
    except OSError:  # absent, or a name too long: staging_dir says so
        is_dir = False
    if is_dir:
        if interrupted(outdir):
            with directory_lock(outdir):
                recover(outdir)
        check_overwrites(outdir, names, owned_files(outdir))


@contextmanager
def staging_dir(outdir: Path):
    """A fresh staging directory inside `outdir` (created if needed), owned by
    this process until the context ends.  If this emit created `outdir` and
    then fails, `outdir` goes again."""
    outdir = Path(outdir)
    check_outdir_path(outdir)
    try:
        created = not os.path.lexists(outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        # Created and owned under the directory lock, so that no other
        # emit's recover() can take the new directory for a dead one's.
        with directory_lock(outdir):
            recover(outdir)
            tmp = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=outdir))
            owner = os.open(tmp / _OWNER, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
            os.write(owner, _OWNER_MARK)
            _flock(owner)
    except FileExistsError as e:
        check_outdir_path(outdir)  # a link that leads nowhere says so
        raise _cannot_write(outdir, e) from None
    except OSError as e:
        raise _cannot_write(outdir, e) from None
    ok = False
    try:
        fault_point("after-staging")
        yield tmp
        ok = True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        os.close(owner)
        if created and not ok:
            _remove_if_only_ours(outdir)


def _remove_if_only_ours(outdir: Path) -> None:
    try:
        outdir.rmdir()  # only if empty
    except OSError:
        pass


def manifest_text(manifest: dict) -> str:
    """manifest.json's bytes: sorted keys, so the same manifest is the same
    file; with ireegen's mark (ownership.MARKER), which says it is ours."""
    return json.dumps({**manifest, **MARKER}, indent=2, sort_keys=True) + "\n"


def _write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def commit(staging: Path, outdir: Path, files: list, manifest: dict) -> None:
    """Swaps the files named in `files` (relative to staging) and the manifest
    into outdir, removing files the previous manifest listed that are no
    longer produced and are unchanged.  Atomic as the module docstring
    describes; touches only ireegen's files (ownership.py)."""
    outdir = Path(outdir)
    _write_new(staging / MANIFEST, manifest_text(manifest).encode())
    with directory_lock(outdir):
        recover(outdir)
        owned = owned_files(outdir)  # refuses a manifest.json that is not ireegen's
        replace = list(files) + [MANIFEST]
        check_overwrites(outdir, replace, owned)
        # A stale file goes only when the record outside OUTDIR vouches for it
        # too (ownership.py): a manifest in OUTDIR alone may be planted.
        vouched = vouched_files(outdir)
        remove = sorted(
            n for n in owned if n not in replace and vouched.get(n) == owned[n] and is_ours(outdir, n, owned)
        )
        (staging / _OLD).mkdir()
        journal = {
            **MARKER,
            "replace": {n: regular_sha256(staging / n) for n in replace},
            "remove": remove,
        }
        _write_new(staging / (_JOURNAL + ".tmp"), json.dumps(journal).encode())
        os.replace(staging / (_JOURNAL + ".tmp"), staging / _JOURNAL)
        _fsync_dir(staging)
        fault_point("commit-journal")
        try:
            # The old manifest leaves first, the new one comes last.
            _displace(outdir, staging, MANIFEST)
            fault_point("commit-manifest-removed")
            for i, name in enumerate(files):
                _displace(outdir, staging, name)
                os.replace(staging / name, outdir / name)
                fault_point("commit-file" if i == 0 else "commit-file-more")
            for name in remove:
                _displace(outdir, staging, name)
            fault_point("commit-before-manifest")
            os.replace(staging / MANIFEST, outdir / MANIFEST)
            fault_point("commit-before-point")
            _fsync_dir(outdir)
            (staging / _JOURNAL).unlink()  # the commit point
            _fsync_dir(staging)
        except BaseException as e:
            _roll_back(staging, outdir, journal)
            if isinstance(e, OSError):
                raise UsageError(
                    f"-o {outdir}: cannot replace the previous output ({e.strerror or e}); it is left as it was"
                ) from None
            raise
        record_written(outdir, {n: h for n, h in journal["replace"].items() if h is not None})
        fault_point("commit-done")


def _displace(outdir: Path, staging: Path, name: str) -> None:
    """Moves an existing outdir/name aside into staging/.old (same file
    system, so a rename; a read-only file moves too, its directory is what
    must be writable)."""
    target = outdir / name
    if target.exists() or target.is_symlink():
        os.replace(target, staging / _OLD / name)


def _roll_back(staging: Path, outdir: Path, journal: dict) -> bool:
    """Undoes a commit that did not reach its commit point: deletes the new
    files already moved in (only where OUTDIR still holds exactly the bytes
    the journal recorded), puts back every displaced file (never over a file
    that is there now).  True when everything is back."""
    replace = journal.get("replace")
    remove = journal.get("remove")
    if not isinstance(replace, dict) or not isinstance(remove, list):
        return False
    names = [n for n in [*replace, *remove] if is_plain_name(n) or n == MANIFEST]
    complete = True
    for name in names:
        # A new file is in place when staging no longer has it.
        if name in replace and not os.path.lexists(staging / name) and os.path.lexists(outdir / name):
            if regular_sha256(outdir / name) == replace[name]:
                try:
                    (outdir / name).unlink()
                except OSError:
                    complete = False
    old = staging / _OLD
    for name in names:
        try:
            st = os.lstat(old / name)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or os.path.lexists(outdir / name):
            complete = False  # left in staging, which then stays too
            continue
        try:
            os.rename(old / name, outdir / name)
        except OSError:
            complete = False
    if complete:
        try:
            (staging / _JOURNAL).unlink()
        except OSError:
            pass
    _fsync_dir(outdir)
    return complete


def interrupted(outdir: Path) -> bool:
    """Whether a crashed commit's journal waits in OUTDIR for the next emit."""
    return any(os.path.lexists(staging / _JOURNAL) for staging in _staging_entries(Path(outdir)))


def read_manifest_path(outdir: Path) -> Path:
    """OUTDIR/manifest.json for readers of an output (`info`, `run`,
    `size`).  It never recovers nor deletes anything: when a crash
    interrupted a commit, it says so (the next emit rolls it back)."""
    outdir = Path(outdir)
    path = outdir / MANIFEST
    if not os.path.lexists(path) and interrupted(outdir):
        raise UsageError(
            f"{outdir}: an emit into it was interrupted while replacing its files; "
            "run the emit again (it first puts the previous output back)"
        )
    return path
