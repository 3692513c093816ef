"""Writing an output directory so that no reader ever sees a half-written one.

Everything is produced in a staging directory beside OUTDIR, then moved in
file by file with os.replace.  The old manifest goes first and the new one
comes last, so a generation that fails or is interrupted leaves either the
old complete set or a set without manifest.json, never one that looks
finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .errors import UsageError

MANIFEST = "manifest.json"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextmanager
def staging_dir(outdir: Path):
    """A temporary directory on the same file system as `outdir`."""
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise UsageError(f"-o {outdir}: exists and is not a directory")
    parent = outdir.parent if str(outdir.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.", suffix=".tmp", dir=parent))
    except OSError as e:
        raise UsageError(f"-o {outdir}: cannot write there ({e.strerror})") from None
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def commit(staging: Path, outdir: Path, files: list, manifest: dict) -> None:
    """Moves `files` (names relative to staging) into outdir, removes files the
    previous manifest listed that are no longer produced, and writes the
    manifest last."""
    outdir.mkdir(parents=True, exist_ok=True)
    old_manifest = outdir / MANIFEST
    stale = set()
    if old_manifest.exists():
        try:
            stale = {f["path"] for f in json.loads(old_manifest.read_text()).get("files", [])}
        except (ValueError, OSError, AttributeError, KeyError, TypeError):
            stale = set()
        old_manifest.unlink()
    for name in files:
        os.replace(staging / name, outdir / name)
    for name in sorted(stale - set(files)):
        target = outdir / name
        if target.is_file() and target.parent.resolve() == outdir.resolve():
            target.unlink()
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    (staging / MANIFEST).write_text(text)
    os.replace(staging / MANIFEST, old_manifest)
