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
   leaves the journal, and the next emit (or `ireegen info`) into the
   directory rolls it back under the lock before doing anything else.

So manifest.json, when present, describes exactly the files present: the old
set until the commit point, the new set after it.  During a commit, and
after a crash until the next recovery, manifest.json is absent.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.faults import fault_point

MANIFEST = "manifest.json"
STAGING_PREFIX = ".ireegen-staging-"
_OWNER = ".owner"
_JOURNAL = ".journal.json"
_OLD = ".old"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _cannot_write(outdir: Path, e: OSError) -> UsageError:
    link = _broken_link_in(outdir)
    if link is not None:
        return UsageError(f"-o {outdir}: {link}; remove the link or point it at a directory")
    return UsageError(f"-o {outdir}: cannot write there ({e.strerror or e})")


def _broken_link_in(path: Path) -> str | None:
    """Why `path` cannot be made a directory when it (or a directory above
    it) is a symbolic link that loops or leads nowhere; None otherwise."""
    for p in (path, *path.parents):
        if not os.path.islink(p):
            continue
        try:
            os.stat(p)
        except OSError as e:
            if e.errno == errno.ELOOP:
                return f"{p} is a symbolic link that loops"
            if e.errno == errno.ENOENT:
                return f"{p} is a symbolic link to {os.readlink(p)}, which does not exist"
    return None


def _lock_fd(path: Path, blocking: bool = True, directory: bool = False):
    """An open descriptor holding an exclusive advisory lock on `path` (a
    file, created if needed, or a directory), or None when non-blocking and
    someone else holds it.  Closing the descriptor releases the lock."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY) if directory else os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def directory_lock(outdir: Path):
    """OUTDIR's commit lock, an flock on the directory itself."""
    try:
        fd = _lock_fd(Path(outdir), directory=True)
    except OSError as e:
        raise _cannot_write(outdir, e) from None
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


def recover(outdir: Path) -> list:
    """Rolls back commits interrupted by a crash and deletes the staging
    directories of dead emits; the caller holds the directory lock.  Returns
    the names of the directories it removed."""
    outdir = Path(outdir)
    removed = []
    try:
        entries = sorted(p for p in outdir.iterdir() if p.name.startswith(STAGING_PREFIX) and p.is_dir())
    except OSError:
        return removed
    for staging in entries:
        try:
            fd = _lock_fd(staging / _OWNER, blocking=False)
        except OSError:
            continue
        if fd is None:
            continue  # a live emit is still working in it
        try:
            if (staging / _JOURNAL).exists():
                _roll_back(staging, outdir)
            shutil.rmtree(staging, ignore_errors=True)
        finally:
            os.close(fd)
        removed.append(staging.name)
    return removed


@contextmanager
def staging_dir(outdir: Path):
    """A fresh staging directory inside `outdir` (created if needed), owned by
    this process until the context ends.  If this emit created `outdir` and
    then fails, `outdir` goes again."""
    outdir = Path(outdir)
    try:
        if outdir.exists() and not outdir.is_dir():
            raise UsageError(f"-o {outdir}: exists and is not a directory")
        created = not outdir.exists()
        outdir.mkdir(parents=True, exist_ok=True)
        # Created and owned under the directory lock, so that no other
        # emit's recover() can take the new directory for a dead one's.
        with directory_lock(outdir):
            recover(outdir)
            tmp = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=outdir))
            owner = _lock_fd(tmp / _OWNER)
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


def _stale_names(outdir: Path) -> set:
    """Files the current manifest lists (the previous emit's output)."""
    try:
        files = json.loads((outdir / MANIFEST).read_text()).get("files", [])
        return {f["path"] for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)}
    except (OSError, ValueError, AttributeError, TypeError):
        return set()


def _is_plain_name(name: str) -> bool:
    return name not in ("", ".", "..") and "/" not in name and "\0" not in name and not name.startswith(".ireegen")


def manifest_text(manifest: dict) -> str:
    """manifest.json's bytes: sorted keys, so the same manifest is the same file."""
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def commit(staging: Path, outdir: Path, files: list, manifest: dict) -> None:
    """Swaps the files named in `files` (relative to staging) and the manifest
    into outdir, removing files the previous manifest listed that are no
    longer produced.  Atomic as the module docstring describes."""
    outdir = Path(outdir)
    (staging / MANIFEST).write_text(manifest_text(manifest))
    with directory_lock(outdir):
        recover(outdir)
        replace = list(files) + [MANIFEST]
        remove = sorted(n for n in _stale_names(outdir) - set(replace) if _is_plain_name(n))
        for name in replace + remove:
            target = outdir / name
            if target.is_dir() and not target.is_symlink():
                raise UsageError(f"-o {outdir}: {name} is a directory; ireegen needs to write a file there")
        (staging / _OLD).mkdir()
        journal = staging / _JOURNAL
        tmp = staging / (_JOURNAL + ".tmp")
        with open(tmp, "w") as f:
            json.dump({"replace": replace, "remove": remove}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, journal)
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
            journal.unlink()  # the commit point
            _fsync_dir(staging)
        except BaseException as e:
            _roll_back(staging, outdir)
            if isinstance(e, OSError):
                raise UsageError(
                    f"-o {outdir}: cannot replace the previous output ({e.strerror or e}); it is left as it was"
                ) from None
            raise
        fault_point("commit-done")


def _displace(outdir: Path, staging: Path, name: str) -> None:
    """Moves an existing outdir/name aside into staging/.old (same file
    system, so a rename; a read-only file moves too, its directory is what
    must be writable)."""
    target = outdir / name
    if target.exists() or target.is_symlink():
        os.replace(target, staging / _OLD / name)


def _roll_back(staging: Path, outdir: Path) -> None:
    """Undoes a commit that did not reach its commit point: removes the new
    files already moved in, puts back every displaced file."""
    try:
        journal = json.loads((staging / _JOURNAL).read_text())
        replaced = {n for n in journal["replace"] if isinstance(n, str)}
        names = [n for n in journal["replace"] + journal["remove"] if _is_plain_name(n) or n == MANIFEST]
    except (OSError, ValueError, KeyError, TypeError):
        replaced, names = set(), []
    for name in names:
        # A new file is in place when staging no longer has it.
        if name in replaced and not (staging / name).exists() and (outdir / name).exists():
            try:
                (outdir / name).unlink()
            except OSError:
                pass
    old = staging / _OLD
    for name in names:
        if (old / name).exists() or (old / name).is_symlink():
            try:
                os.replace(old / name, outdir / name)
            except OSError:
                pass
    try:
        (staging / _JOURNAL).unlink()
    except OSError:
        pass
    _fsync_dir(outdir)


def read_manifest_path(outdir: Path) -> Path:
    """OUTDIR/manifest.json after rolling back an interrupted commit, when the
    directory is writable (readers of an output call this)."""
    outdir = Path(outdir)
    if any(p.name.startswith(STAGING_PREFIX) for p in _safe_iterdir(outdir)):
        try:
            with directory_lock(outdir):
                recover(outdir)
        except (UsageError, OSError):
            pass
    return outdir / MANIFEST


def _safe_iterdir(path: Path):
    try:
        return list(path.iterdir())
    except OSError:
        return []
