"""Running a compiled module on numpy inputs.

Two ways, because the Python runtime cannot load inline modules (it never
registers hal_inline/hal_loader):
- `run_in_process`: async modules through `iree.runtime` (local-sync);
- `run_with_tool`: any module through `iree-run-module` from
  iree-base-runtime, with inputs and outputs passed as .npy files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ireegen.common.errors import RunError
from ireegen.frontend.dtypes import numpy_dtype

__all__ = ["RunError", "RuntimeTools", "find_runtime_tools", "run_in_process", "run_with_tool"]


def run_in_process(vmfb, function: str, inputs, driver: str = "local-sync") -> list:
    import iree.runtime as rt

    config = rt.Config(driver)
    try:
        module = rt.VmModule.mmap(config.vm_instance, str(vmfb))
        context = rt.SystemContext(vm_modules=[module], config=config)
        fn = context.modules[module.name][function]
        # A numpy scalar is a scalar argument; a 0-d array is a tensor<T>.
        results = fn(*[x.item() if isinstance(x, np.generic) else np.asarray(x) for x in inputs])
    except (RuntimeError, ValueError) as e:
        raise RunError(str(e)) from None
    if results is None:
        return []
    if not isinstance(results, (tuple, list)):
        results = [results]
    return [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in results]


@dataclass(frozen=True)
class RuntimeTools:
    """Where the command-line runtime tools are: the installed
    iree-base-runtime package's, or another release's directory."""

    bin_dir: Path

    @property
    def run_module(self) -> Path:
        return self.bin_dir / "iree-run-module"

    @property
    def dump_module(self) -> Path:
        return self.bin_dir / "iree-dump-module"

    @property
    def benchmark_module(self) -> Path:
        return self.bin_dir / "iree-benchmark-module"


def find_runtime_tools(bin_dir=None) -> RuntimeTools:
    bin_dir = bin_dir or os.environ.get("IREEGEN_IREE_RUNTIME_BIN")
    if bin_dir:
        return RuntimeTools(Path(bin_dir))
    import iree._runtime_libs as libs

    return RuntimeTools(Path(libs.__file__).parent)


MODULE_LINK = "module.vmfb"


def device_flags(threads: int = 1) -> list:
    """iree-run-module's device for the generated async glue's worker count
    (config/modes.py): 1 the calling thread (local-sync); N > 1 N workers of
    the task executor (local-task); 0 the task executor's default topology,
    one worker per physical core, as the glue's options choose it."""
    if threads == 1:
        return ["--device=local-sync"]
    return ["--device=local-task"] + ([f"--task_topology_group_count={threads}"] if threads else [])


def run_with_tool(
    vmfb,
    function: str,
    inputs,
    output_count,
    tools: RuntimeTools | None = None,
    timeout: float = 300,
    threads: int = 1,
) -> list:
    tools = tools or find_runtime_tools()
    workdir = Path(tempfile.mkdtemp(prefix="ireegen-run-"))
    try:
        # Every path relative to the work directory: iree-run-module's flags
        # give '@' (and more) a meaning, and OUTDIR or TMPDIR may hold one.
        (workdir / MODULE_LINK).symlink_to(Path(vmfb).resolve())
        cmd = [str(tools.run_module), f"--module={MODULE_LINK}", f"--function={function}", *device_flags(threads)]
        cmd += tool_inputs(inputs, workdir)
        # bf16 results come back as raw bytes (iree-run-module writes no bf16
        # .npy); `output_count` may be the outputs' signature Values for that.
        values = list(output_count) if not isinstance(output_count, int) else [None] * output_count
        raw = [v is not None and v.dtype == "bfloat16" for v in values]
        outs = [workdir / (f"output{i}.bin" if r else f"output{i}.npy") for i, r in enumerate(raw)]
        cmd += [f"--output=@{p.name}" for p in outs]
        try:
            proc = subprocess.run(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, cwd=workdir
            )
        except subprocess.TimeoutExpired:
            raise RunError(f"iree-run-module did not finish @{function} within {timeout:g} s") from None
        if proc.returncode != 0:
            message = "\n".join(line for line in proc.stdout.splitlines() if not line.startswith("EXEC @"))
            raise RunError(message.strip() or f"iree-run-module exited with {proc.returncode}")
        return [
            np.frombuffer(p.read_bytes(), numpy_dtype(v.dtype)).reshape(v.shape) if r else np.load(p)
            for p, v, r in zip(outs, values, raw)
        ]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def tool_inputs(inputs, workdir: Path) -> list:
    """The --input flags of IREE's runtime tools for `inputs`, with the
    arrays written into `workdir` and named relative to it."""
    flags = []
    for i, x in enumerate(inputs):
        if isinstance(x, np.generic):  # a scalar argument: the bare value
            flags.append(f"--input={x.item()!r}" if x.dtype.kind == "f" else f"--input={int(x)}")
            continue
        x = np.asarray(x)
        if x.dtype.name == "bfloat16":  # iree-run-module reads no bf16 .npy: raw bytes
            path = workdir / f"input{i}.bin"
            path.write_bytes(np.ascontiguousarray(x).tobytes())
            flags.append(f"--input={''.join(f'{d}x' for d in x.shape)}bf16=@{path.name}")
        elif x.ndim == 0:  # a 0-d tensor<T>
            flags.append(f"--input={_scalar_arg(x)}")
        else:
            path = workdir / f"input{i}.npy"
            np.save(path, x)
            flags.append(f"--input=@{path.name}")
    return flags


def _scalar_arg(x) -> str:
    kind = {"i": "i", "u": "i", "f": "f", "b": "i"}[x.dtype.kind]
    bits = x.dtype.itemsize * 8
    return f"{kind}{max(bits, 8)}={x.item():d}" if kind == "i" else f"f{bits}={x.item()!r}"
