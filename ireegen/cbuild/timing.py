"""How fast a built runner (native_run.Runner) calls a function, measured
where its target runs:

- on this machine: CPU time (user + system) of the runner process, from
  wait4(), with R+1 calls minus 1 call over R, so that start-up and file I/O
  cancel out; R is chosen so that a run takes about RUN_SECONDS;
- under qemu (qemu-user for a foreign Linux triple, qemu-system for a
  board): guest instructions counted by a TCG plugin (qemu_insn_count.c,
  beside this file), R+1 calls minus 1 over R.  qemu does not model time:
  instructions are the best signal it gives.

Nothing here asserts a time: the figures are returned to the caller.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from ireegen.common.errors import RunError
from ireegen.common.untrusted import deadline_message, tool_deadline

from .native_run import check_inputs, find_function

CPU_TIME = "ns CPU/call"
INSTRUCTIONS = "instructions/call"
RUN_SECONDS = 0.25  # target length of one timed run on this machine
MAX_REPEAT = 100_000
EMULATED_REPEAT = 5
PLUGIN_SOURCE = Path(__file__).resolve().parent / "qemu_insn_count.c"


@dataclass(frozen=True)
class Meter:
    unit: str  # CPU_TIME or INSTRUCTIONS
    plugin: Path | None = None  # the built qemu plugin, for INSTRUCTIONS
    vm_module: bool = False  # time the VM module (iree-benchmark-module), not a runtimeless runner


def this_cpu() -> str:
    """This machine's architecture and CPU model, as /proc/cpuinfo names it
    (printable ASCII only, at most 120 characters): what a CPU-time figure
    was measured on."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "uarch", "cpu model"):
                    model = value.strip()
                    break
    except OSError:
        pass
    model = "".join(c for c in (model or platform.processor() or "unknown CPU") if " " <= c <= "~")
    return f"{platform.machine() or 'unknown'}, {' '.join(model.split())}"[:120]


def build_plugin(workdir: Path) -> Path:
    """Builds the instruction-counting qemu plugin with the host's C compiler."""
    cc = os.environ.get("CC") or "cc"
    lib = Path(workdir) / "libireegen_insn_count.so"
    proc = subprocess.run(
        [cc, "-shared", "-fPIC", "-O2", str(PLUGIN_SOURCE), "-o", str(lib)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if proc.returncode != 0:
        raise RunError(f"building the qemu instruction-count plugin failed:\n{proc.stdout}")
    return lib


class _Call:
    """One function's input files in a directory, run as often as asked."""

    def __init__(self, runner, function: str, inputs):
        fn = find_function(runner.functions, function)
        arrays = check_inputs(fn, inputs)
        self.runner, self.function = runner, function
        self.workdir = Path(tempfile.mkdtemp(prefix="time-", dir=runner.build_dir))
        names = []
        for i, a in enumerate(arrays):
            (self.workdir / f"in{i}.bin").write_bytes(a.tobytes())
            names.append(f"in{i}.bin")
        self.names = names + [f"out{i}.bin" for i in range(len(fn.outputs))]

    def command(self, repeat: int, plugin: Path | None = None) -> list:
        cmd = self.runner.toolchain.run_command(
            self.runner.program, ["--repeat", str(repeat), self.function, *self.names]
        )
        if plugin is not None:
            cmd[1:1] = ["-plugin", str(plugin), "-d", "plugin"]
        return cmd

    def cpu_ns(self, repeat: int) -> tuple:
        """(CPU nanoseconds of the whole run, the runner's own wall ns per call)."""
        cmd = self.command(repeat)
        proc = subprocess.Popen(
            cmd, cwd=self.workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        )
        # The child's rusage needs wait4, which has no timeout: a timer kills
        # a run that passes the tool deadline.
        deadline, killed = tool_deadline(), threading.Event()

        def kill():
            killed.set()
            proc.kill()

        timer = threading.Timer(deadline, kill) if deadline is not None else None
        if timer is not None:
            timer.start()
        try:
            out = proc.stdout.read()
            proc.stdout.close()
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            if timer is not None:
                timer.cancel()
        if killed.is_set():
            raise RunError(deadline_message(cmd[0], f"timing {self.function}", deadline))
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RunError(out.strip() or f"{self.runner.program.name} exited with {proc.returncode}")
        wall = next((float(line.split()[1]) for line in out.splitlines() if line.startswith("ns_per_call ")), None)
        return (usage.ru_utime + usage.ru_stime) * 1e9, wall

    def instructions(self, repeat: int, plugin: Path) -> int:
        proc = subprocess.run(
            self.command(repeat, plugin),
            cwd=self.workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        counts = [int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("instructions ")]
        if proc.returncode != 0 or not counts:
            raise RunError(proc.stdout.strip() or f"{self.runner.program.name} exited with {proc.returncode}")
        return counts[-1]

    def close(self):
        shutil.rmtree(self.workdir, ignore_errors=True)


class Timer:
    """Times every function of one runner on fixed inputs: one sample of
    the model is the sum over its functions of one call each."""

    def __init__(self, runner, inputs: dict, meter: Meter):
        self.meter = meter
        self.calls = [_Call(runner, function, args) for function, args in inputs.items()]
        self.repeats = [self._repeat(c) for c in self.calls] if meter.unit == CPU_TIME else []

    def _repeat(self, call: _Call) -> int:
        _, wall = call.cpu_ns(3)
        per_call = max(wall or 1e6, 1.0)
        return int(min(MAX_REPEAT, max(3, RUN_SECONDS * 1e9 / per_call)))

    def sample(self) -> float:
        """One figure for the model, in self.meter.unit."""
        total = 0.0
        if self.meter.unit == INSTRUCTIONS:
            for call in self.calls:
                once = call.instructions(1, self.meter.plugin)
                more = call.instructions(EMULATED_REPEAT + 1, self.meter.plugin)
                total += (more - once) / EMULATED_REPEAT
            return total
        for call, repeat in zip(self.calls, self.repeats):
            once, _ = call.cpu_ns(1)
            more, _ = call.cpu_ns(repeat + 1)
            total += max(more - once, 0.0) / repeat
        return total

    def close(self):
        for call in self.calls:
            call.close()
