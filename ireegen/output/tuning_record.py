"""Tuning records: the candidate `emit --tune` chose for a content key,
kept so that a rebuild or another checkout does not search again.

A record is one JSON file, <content key>.json, in the tuning directory:
$IREEGEN_TUNING_DIR, else $XDG_CACHE_HOME/ireegen/tuning, else
~/.cache/ireegen/tuning.  (Through a shared cache, `--cache`, the whole
tuned output is reused instead: output/cache.py.)

A record is data from outside: it is used only when it is a JSON object
of at most MAX_RECORD_BYTES, names this content key, and chose a candidate
that the caller's table offers for this key with exactly the table's flags;
anything else is ignored (the search runs again and rewrites it).  Writes
are atomic (a temporary file renamed over the record), and a directory that
cannot be written only costs the next emit a search.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

DIR_ENV = "IREEGEN_TUNING_DIR"
SCHEMA = 1
MAX_RECORD_BYTES = 1 << 20


def records_dir() -> Path:
    explicit = os.environ.get(DIR_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ireegen" / "tuning"


def _path(key: str) -> Path | None:
    # The key is ours (a sha256 hex digest), but check: it names a file.
    if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        return None
    return records_dir() / f"{key}.json"


def load_record(key: str, offered: dict) -> dict | None:
    """The record for `key` when it is valid: `offered` maps the names of the
    candidates this emit would try to their flags."""
    path = _path(key)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RECORD_BYTES + 1)
        record = json.loads(data.decode("utf-8")) if len(data) <= MAX_RECORD_BYTES else None
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("schema") != SCHEMA or record.get("content_key") != key:
        return None
    choice = record.get("choice")
    if not isinstance(choice, str) or choice not in offered or record.get("flags") != list(offered[choice]):
        return None
    if not isinstance(record.get("candidates"), list):
        return None
    return record


def store_record(key: str, record: dict) -> bool:
    """Writes the record for `key`; False when the directory cannot take it."""
    path = _path(key)
    if path is None:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"schema": SCHEMA, "content_key": key, **record}, f, indent=2, sort_keys=True)
                f.write("\n")
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True
