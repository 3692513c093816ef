"""Fault injection for the crash tests: `IREEGEN_FAULT=<point>` kills this
process with SIGKILL when it reaches `<point>` (no cleanup, no finally, like
a power cut), and `IREEGEN_FAULT=<point>:sleep=<seconds>` pauses there (to
force two emits to overlap).  Unset, a fault point costs one dict lookup."""

from __future__ import annotations

import os
import signal
import time

POINTS = (
    "after-staging",
    "after-compile",
    "after-render",
    "commit-journal",
    "commit-manifest-removed",
    "commit-file",
    "commit-file-more",
    "commit-before-manifest",
    "commit-before-point",
    "commit-done",
)


def fault_point(name: str) -> None:
    spec = os.environ.get("IREEGEN_FAULT")
    if not spec:
        return
    point, _, action = spec.partition(":")
    if point != name:
        return
    if action.startswith("sleep="):
        time.sleep(float(action[6:]))
    else:
        os.kill(os.getpid(), signal.SIGKILL)
