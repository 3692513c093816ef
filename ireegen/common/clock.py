"""The CPU-time clock of `emit --tune`'s budget: seconds of CPU that this
process and the processes it ran (iree-compile, gcc, the runners) have used.
Unlike wall time, other jobs on the machine barely move it, so a search
tries the same candidates on a loaded machine as on a quiet one."""

from __future__ import annotations

import resource


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its children that
    were waited for, since this process started."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total
