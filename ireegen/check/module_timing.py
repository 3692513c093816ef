"""How fast an async VM module (a .vmfb with embedded-ELF executables for
this machine) calls its functions: iree-benchmark-module from the
iree-base-runtime package, on the local-sync device (the whole call on
one thread), its process CPU time per iteration.  The counterpart of
cbuild/timing.py's Timer for the VM execution models."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from ireegen.common.errors import RunError
from ireegen.common.untrusted import deadline_message, tool_deadline

from .runners import MODULE_LINK, find_runtime_tools, tool_inputs

MIN_TIME = "0.25s"  # Google Benchmark's minimum time per function
_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


class ModuleTimer:
    """Times every function of one .vmfb on fixed inputs: one sample of
    the model is the sum over its functions of one call each."""

    def __init__(self, vmfb: Path, inputs: dict, tools=None):
        self.tool = (tools or find_runtime_tools()).benchmark_module
        self.workdir = Path(tempfile.mkdtemp(prefix="ireegen-bench-"))
        # Every path relative to the work directory, as run_with_tool does.
        (self.workdir / MODULE_LINK).symlink_to(Path(vmfb).resolve())
        self.calls = []
        for k, (function, args) in enumerate(inputs.items()):
            folder = self.workdir / f"f{k}"
            folder.mkdir()
            flags = [flag.replace("=@", f"=@f{k}/", 1) for flag in tool_inputs(args, folder)]
            self.calls.append((function, flags))

    def sample(self) -> float:
        total = 0.0
        for function, flags in self.calls:
            cmd = [
                str(self.tool),
                f"--module={MODULE_LINK}",
                "--device=local-sync",
                f"--function={function}",
                *flags,
                f"--benchmark_min_time={MIN_TIME}",
                "--benchmark_format=json",
            ]
            deadline = tool_deadline()
            try:
                proc = subprocess.run(
                    cmd, cwd=self.workdir, capture_output=True, text=True, errors="replace", timeout=deadline
                )
            except subprocess.TimeoutExpired:
                raise RunError(deadline_message(cmd[0], f"timing @{function}", deadline)) from None
            if proc.returncode != 0:
                raise RunError(proc.stderr.strip() or f"iree-benchmark-module exited with {proc.returncode}")
            try:
                runs = json.loads(proc.stdout)["benchmarks"]
                run = next(r for r in runs if r.get("run_type") == "iteration")
                total += float(run["cpu_time"]) * _NS[run["time_unit"]]
            except (ValueError, KeyError, StopIteration) as e:
                raise RunError(f"iree-benchmark-module printed no figure for @{function} ({e})") from None
        return total

    def close(self):
        shutil.rmtree(self.workdir, ignore_errors=True)
