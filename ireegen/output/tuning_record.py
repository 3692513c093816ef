"""Tuning records: the candidate `emit --tune` chose for a content key,
kept so that a rebuild or another checkout does not search again.

A record is one JSON file, <content key>.json, in the tuning directory:
$IREEGEN_TUNING_DIR, else $XDG_CACHE_HOME/ireegen/tuning, else
~/.cache/ireegen/tuning.  (Through a shared cache, `--cache`, the whole
tuned output is reused instead: output/cache.py.)

A record is data from outside: it is used only when it is a JSON object
of at most MAX_RECORD_BYTES, names this content key, chose a candidate
that the caller's table offers for this key with exactly the table's flags,
and lists only such candidates with figures and short notes (the manifest
copies it); anything else is ignored (the search runs again and rewrites it).  Writes
are atomic (a temporary file renamed over the record), and a directory that
cannot be written only costs the next emit a search.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.untrusted import load_json, read_regular
from ireegen.config.tuning import LEVELS

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
    if not os.path.lexists(path):
        return None
    # Opened without blocking and parsed within a depth limit: a FIFO, a
    # huge or a deeply nested record is ignored like any other bad one.
    try:
        record = load_json(read_regular(path, str(path), MAX_RECORD_BYTES), str(path), max_depth=8)
    except UsageError:
        return None
    if not isinstance(record, dict) or record.get("schema") != SCHEMA or record.get("content_key") != key:
        return None
    choice = record.get("choice")
    if not isinstance(choice, str) or choice not in offered or record.get("flags") != list(offered[choice]):
        return None
    candidates = record.get("candidates")
    if not isinstance(candidates, list) or not all(_entry_ok(c, offered) for c in candidates):
        return None
    if record.get("level") not in LEVELS or not all(
        isinstance(record.get(k), str) and len(record[k]) <= MAX_TEXT for k in ("measured", "unit")
    ):
        return None
    if not isinstance(record.get("timed_on", ""), str) or len(record.get("timed_on", "")) > MAX_TEXT:
        return None
    if not all(_number(record.get(k)) for k in ("speedup", "search_seconds", "search_cpu_seconds")):
        return None
    return {k: record[k] for k in _SECTION_KEYS if k in record}


# What a record holds: the manifest's tuning section, field by field.
_SECTION_KEYS = (
    "level",
    "measured",
    "timed_on",
    "unit",
    "candidates",
    "choice",
    "flags",
    "speedup",
    "search_seconds",
    "search_cpu_seconds",
)
_ENTRY_KEYS = {"name", "flags", "status", "figure", "unit", "samples", "note"}
STATUSES = ("ok", "failed", "not timed", "not tried", "same as baseline")
MAX_TEXT = 400


def _number(x) -> bool:
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < 1e18)


def _entry_ok(entry, offered: dict) -> bool:
    """One candidate's line: a candidate offered, with its table flags,
    and nothing but figures and short text besides."""
    if not isinstance(entry, dict) or not set(entry) <= _ENTRY_KEYS:
        return False
    name = entry.get("name")
    if not isinstance(name, str) or name not in offered or entry.get("flags") != list(offered[name]):
        return False
    if entry.get("status") not in STATUSES or not _number(entry.get("figure")):
        return False
    if not isinstance(entry.get("samples", 0), int) or isinstance(entry.get("samples", 0), bool):
        return False
    return all(isinstance(entry.get(k, ""), str) and len(entry.get(k, "")) <= MAX_TEXT for k in ("unit", "note"))


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
