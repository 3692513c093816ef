"""Which files in OUTDIR are ireegen's: it replaces or deletes only those.

OUTDIR is untrusted: it may hold the user's own files, another tool's
`manifest.json`, files an earlier emit wrote and someone edited since, or
entries planted to make ireegen write or delete elsewhere.  The rule:

- `manifest.json` is ireegen's only when it carries the marker
  (`"generator": "ireegen"`, `"manifest_schema": MANIFEST_SCHEMA`).  Any
  other manifest.json makes emit refuse, before compiling, in one line: it
  is never overwritten, and the files it lists are never touched.
- A file is ireegen's when that manifest lists it *and* its bytes still
  have the sha256 recorded for it (a regular file, not a symlink).  Emit
  replaces only such files, deletes a stale one only if it is such a file
  (an edited stale file is left alone), and refuses in one line when one of
  its outputs would land on a file that is not ireegen's.
- A stale file (listed by the old manifest, not produced now) is deleted
  only when ireegen's own record *outside* OUTDIR (`ledger_path`: the
  user's state directory, keyed by OUTDIR's real path and its inode) also
  lists it with the same sha256.  A manifest inside OUTDIR is not proof: a
  planted one with ireegen's marker can list the user's LICENSE or main.c
  with their true sha256.  Without the record (a fresh OUTDIR, another
  machine, a state directory that cannot be written) stale files stay.
- Emit refuses an OUTDIR whose outputs would overwrite one of its inputs:
  the model, its external data files, the `--verify-inputs` file.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.untrusted import load_json

MANIFEST = "manifest.json"
GENERATOR = "ireegen"
MANIFEST_SCHEMA = 1
MARKER = {"generator": GENERATOR, "manifest_schema": MANIFEST_SCHEMA}


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def regular_sha256(path: Path) -> str | None:
    """sha256 of the regular file at `path`, never through a symlink; None
    when it is absent, a link, or anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
        return h.hexdigest()


def is_marked(record) -> bool:
    return isinstance(record, dict) and all(record.get(k) == v for k, v in MARKER.items())


def owned_files(outdir: Path) -> dict:
    """{file name: sha256} of what ireegen's manifest.json in `outdir` lists
    ({} without one); a manifest.json that is not ireegen's is refused."""
    path = Path(outdir) / MANIFEST
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise _foreign(outdir, "a symbolic link" if e.errno == errno.ELOOP else f"unreadable: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _foreign(outdir, "not a regular file")
        try:
            manifest = json.loads(f.read(64 << 20))
        except ValueError:
            raise _foreign(outdir, "not JSON") from None
    if not is_marked(manifest):
        raise _foreign(outdir, f'without "generator": "{GENERATOR}", "manifest_schema": {MANIFEST_SCHEMA}')
    files = manifest.get("files")
    return {
        f["path"]: f["sha256"]
        for f in (files if isinstance(files, list) else [])
        if isinstance(f, dict) and is_plain_name(f.get("path")) and isinstance(f.get("sha256"), str)
    }


LEDGER_ENV = "IREEGEN_STATE_DIR"
_MAX_LEDGER_BYTES = 16 << 20


def ledger_dir() -> Path:
    """Where ireegen records what it wrote: $IREEGEN_STATE_DIR, else
    $XDG_STATE_HOME/ireegen/outputs, else ~/.local/state/ireegen/outputs."""
    explicit = os.environ.get(LEDGER_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ireegen" / "outputs"


def ledger_path(outdir: Path) -> Path | None:
    """The record for OUTDIR: named by its real path, device and inode, so a
    directory removed and made again at the same path starts with none."""
    try:
        st = os.stat(outdir)
        real = os.path.realpath(outdir)
    except (OSError, ValueError):
        return None
    key = hashlib.sha256(f"{real}\0{st.st_dev}\0{st.st_ino}".encode("utf-8", "surrogateescape")).hexdigest()
    try:
        return ledger_dir() / f"{key}.json"
    except RuntimeError:  # no home directory to put it in
        return None


def vouched_files(outdir: Path) -> dict:
    """{file name: sha256} that ireegen's record outside OUTDIR says its last
    emit there wrote; {} when there is none or it cannot be read."""
    path = ledger_path(outdir)
    if path is None:
        return {}
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        data = f.read(_MAX_LEDGER_BYTES + 1)
    try:
        record = load_json(data, str(path), max_depth=4) if len(data) <= _MAX_LEDGER_BYTES else None
    except UsageError:
        return {}
    if not is_marked(record) or record.get("outdir") != os.path.realpath(outdir):
        return {}
    files = record.get("files")
    if not isinstance(files, dict):
        return {}
    return {n: h for n, h in files.items() if is_plain_name(n) and isinstance(h, str)}


def record_written(outdir: Path, files: dict) -> bool:
    """Records {file name: sha256} as what ireegen wrote into OUTDIR (atomic:
    a temporary file renamed over the record).  False when the state
    directory cannot be written: stale files are then left, never deleted."""
    path = ledger_path(outdir)
    if path is None:
        return False
    record = {**MARKER, "outdir": os.path.realpath(outdir), "files": dict(sorted(files.items()))}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, sort_keys=True)
        os.replace(tmp, path)
    except (OSError, RuntimeError, ValueError):
        return False
    return True


def _foreign(outdir, why: str) -> UsageError:
    return UsageError(
        f"-o {outdir}: its {MANIFEST} is not ireegen's ({why}); ireegen neither overwrites it nor touches "
        "the files it lists: choose another output directory, or remove it if it is yours"
    )


def is_plain_name(name) -> bool:
    """A file name directly inside OUTDIR that is not ireegen's own namespace."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and not name.startswith(".ireegen")
    )


def is_ours(outdir: Path, name: str, owned: dict) -> bool:
    """Whether OUTDIR/name is a file ireegen wrote and nobody changed since."""
    return name in owned and regular_sha256(Path(outdir) / name) == owned[name]


def check_overwrites(outdir: Path, names, owned: dict) -> None:
    """Refuses when writing `names` into OUTDIR would replace a file that is
    not ireegen's (manifest.json itself is checked by owned_files)."""
    outdir = Path(outdir)
    for name in names:
        target = outdir / name
        if name == MANIFEST or not os.path.lexists(target) or is_ours(outdir, name, owned):
            continue
        if target.is_dir() and not target.is_symlink():
            raise UsageError(f"-o {outdir}: {name} is a directory; ireegen needs to write a file there")
        why = "it was changed after ireegen wrote it" if name in owned else f"no ireegen {MANIFEST} there lists it"
        raise UsageError(
            f"-o {outdir}: {name} is there and {why}; ireegen overwrites only its own files: "
            "move it away or choose another output directory"
        )


def check_spares_inputs(outdir: Path, names, inputs) -> None:
    """Refuses an OUTDIR where writing `names` would replace one of `inputs`
    ((what, path) pairs: the model, its data files, the verify inputs)."""
    where = os.path.realpath(outdir)
    targets = {os.path.join(where, n): n for n in names}
    for what, path in inputs:
        path = Path(path)
        for entry in (os.path.join(os.path.realpath(path.parent), path.name), os.path.realpath(path)):
            if entry in targets:
                raise UsageError(
                    f"-o {outdir}: emit would write {targets[entry]} over {what} {path}; "
                    "choose an output directory apart from the model's files"
                )


def check_outdir_path(outdir: Path) -> None:
    """A one-line reason when OUTDIR, or a directory on its way, is a
    symbolic link that leads nowhere (dangling or a loop) or not a directory."""
    outdir = Path(outdir)
    for path in [outdir, *outdir.parents]:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError:
            return
        if stat.S_ISLNK(st.st_mode):
            try:
                os.stat(path)
            except OSError as e:
                kind = "a symbolic link loop" if e.errno == errno.ELOOP else "a dangling symbolic link"
                target = os.readlink(path)
                raise UsageError(
                    f"-o {outdir}: {path} is {kind} (to {target}); point it at a directory or remove it"
                ) from None
        if path == outdir and os.path.lexists(path) and not path.is_dir():
            raise UsageError(f"-o {outdir}: exists and is not a directory")
