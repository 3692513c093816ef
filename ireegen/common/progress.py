"""Progress lines on stderr, only when stderr is a terminal (so logs, CI and
CMake builds stay quiet).  `IREEGEN_PROGRESS=1` forces them on, `=0` off."""

from __future__ import annotations

import os
import sys
import time

_START = time.monotonic()


def enabled() -> bool:
    forced = os.environ.get("IREEGEN_PROGRESS")
    if forced is not None:
        return forced not in ("", "0")
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress(phase: str, detail: str = "") -> None:
    if enabled():
        elapsed = time.monotonic() - _START
        sys.stderr.write(f"ireegen: [{elapsed:5.1f}s] {phase}{': ' + detail if detail else ''}\n")
        sys.stderr.flush()
