"""The one table of execution models, executable formats and module formats,
and the iree-compile flags each choice maps to.

Everything that asks "is this combination allowed?" or "which flags does it
need?" (the CLI, the parity harness, the CMake function through the CLI)
reads it from here.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass

from ireegen.common.errors import UsageError

from . import cores
from .baselines import ARCH_BASELINES


@dataclass(frozen=True)
class ExecutionModel:
    name: str  # ireegen's name
    iree_name: str  # --iree-execution-model value
    executable_formats: tuple  # allowed; the first is the default
    hal_module: str  # VM module that provides the HAL: "hal", "hal_inline", or "" (no VM)
    uses_loader_module: bool  # needs the hal_loader module
    # Takes --threads: the glue can run dispatches on worker threads (async:
    # IREE's task executor; the worker count is chosen again at create time).
    worker_threads: bool = False

    @property
    def has_vm_module(self) -> bool:
        return bool(self.hal_module)


EXECUTION_MODELS = {
    m.name: m
    for m in (
        ExecutionModel(
            "async", "async-internal", ("embedded-elf", "static-library", "vmvx"), "hal", False, worker_threads=True
        ),
        ExecutionModel("inline-static", "inline-static", ("vmvx",), "hal_inline", False),
        ExecutionModel(
            "inline-dynamic", "inline-dynamic", ("embedded-elf", "static-library", "vmvx"), "hal_inline", True
        ),
        # No VM at all: ireegen reads the async program's schedule at emit time
        # (runtimeless/interpret/) and writes it out as plain C.
        ExecutionModel("runtimeless", "async-internal", ("static-library",), "", False),
    )
}

# What runtimeless compiles to: the HAL-level program, one direct command
# buffer per submission, so that its schedule can be read off.  (How the
# stream is partitioned is chosen per model: compile/partitioning.py.)
RUNTIMELESS_COMPILE_FLAGS = (
    "--compile-to=hal",
    "--iree-hal-memoization=false",
    "--iree-hal-indirect-command-buffers=false",
    # The executables' reflection tables (source locations, stage names) are
    # read by IREE's runtime tools, never by the runtimeless glue: flash only.
    "--iree-llvmcpu-debug-symbols=false",
)


@dataclass(frozen=True)
class ExecutableFormat:
    name: str
    uses_llvm_cpu: bool  # takes --target-triple/--target-cpu/--target-cpu-features


EXECUTABLE_FORMATS = {
    f.name: f
    for f in (
        ExecutableFormat("embedded-elf", True),
        ExecutableFormat("static-library", True),
        ExecutableFormat("vmvx", False),
    )
}

# --optimize-for -> iree-compile flags for llvm-cpu executables.  "size": one
# 32-bit lane per vector, so that codegen neither unrolls by a 16-byte vector
# nor emits its tails: smaller kernels for more instructions per inference
# (figures: docs/firmware.md).
OPTIMIZE_FOR = {
    "speed": (),
    "size": ("--iree-llvmcpu-target-vector-width-in-bytes=4",),
}

# --module-format -> --output-format
MODULE_FORMATS = {"vmfb": "vm-bytecode", "emitc": "vm-c"}

# --data-format: the form of the big read-only bytes in the output (the
# runtimeless constants, the vmfb module) -> what it is and who builds it.
DATA_FORMATS = {
    "asm": "an assembler source (.S) that .incbin's the bytes from a file beside it; "
    "gcc/clang-like toolchains, for any ELF, Mach-O or MinGW target",
    "c": "a C array of hex literals; any C compiler (MSVC too), but slow to compile for megabytes",
}
# Target environments whose toolchain has no GNU-style assembler step:
# their default is the C array.
_C_DATA_ENVIRONMENTS = ("msvc",)


def default_data_format(triple: str) -> str:
    return "c" if triple.rsplit("-", 1)[-1] in _C_DATA_ENVIRONMENTS else "asm"


# platform.machine() -> LLVM architecture for the default triple
_HOST_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64", "riscv64": "riscv64"}


def host_triple() -> str:
    machine = platform.machine().lower()
    arch = _HOST_ARCH.get(machine, machine)
    system = platform.system().lower()
    if system == "darwin":
        return f"{arch}-apple-darwin"
    if system == "windows":
        return f"{arch}-pc-windows-msvc"
    return f"{arch}-unknown-linux-gnu"


@dataclass(frozen=True)
class Target:
    triple: str
    cpu: str = "generic"
    cpu_features: str = ""
    abi: str = ""
    float_abi: str = ""  # --iree-llvmcpu-target-float-abi for Cortex-M: soft or hard

    @property
    def microcontroller(self) -> bool:
        """A Cortex-M or RV32 target: memory, not only speed, is its budget."""
        arch = self.triple.split("-", 1)[0]
        return arch in cores.ARCH_ORDER or arch == "riscv32"

    def to_json(self) -> dict:
        return {
            "triple": self.triple,
            "cpu": self.cpu,
            "features": self.cpu_features,
            "abi": self.abi,
            "float_abi": self.float_abi,
        }


def default_target(triple: str, cpu: str | None, cpu_features: str | None) -> Target:
    arch = triple.split("-", 1)[0]
    if arch in cores.ARCH_ORDER:
        return cortex_m_target(triple, cpu, cpu_features)
    if arch == "riscv32":
        if cpu is None and cpu_features is None:
            cpu, cpu_features = cores.RV32_BASELINE
        return Target(triple, cpu or "generic-rv32", cpu_features or "", cores.rv32_abi(cpu_features or ""))
    base_cpu, base_features, abi = ARCH_BASELINES.get(arch, ("generic", "", ""))
    if cpu == "host" and cpu_features is None:
        cpu_features = "host"
    if cpu is None and cpu_features is None:
        cpu, cpu_features = base_cpu, base_features
    return Target(triple, cpu or "generic", cpu_features or "", abi)


def cortex_m_target(triple: str, cpu: str | None, cpu_features: str | None) -> Target:
    """A Cortex-M triple: --target-cpu (default: the architecture's usual
    core) picks the float ABI; its features are LLVM's defaults for the core."""
    arch = triple.split("-", 1)[0]
    cpu = cpu or cores.ARCH_DEFAULT_CPU[arch]
    core = cores.CORES.get(cpu)
    if core is None:
        raise UsageError(
            f"--target-cpu {cpu}: not a Cortex-M core ireegen knows for {triple}; "
            f"choose one of {', '.join(cores.CORES)}"
        )
    if cores.ARCH_ORDER.index(arch) > cores.ARCH_ORDER.index(core.arch):
        raise UsageError(f"--target-triple {triple}: {cpu} implements {core.arch}, not {arch}")
    if triple.endswith("eabihf") and not core.has_fpu:
        raise UsageError(
            f"--target-triple {triple}: {cpu} has no FPU for the hard-float ABI; use {core.default_triple}"
        )
    # LLVM's "soft" is a calling convention: with the core's FPU it is softfp.
    # Its "default" would mark even thumbv6m objects as hard-float.
    float_abi = "hard" if core.float_abi(triple) == "hard" else "soft"
    # LLVM reads thumbv6m-none-eabi as OS "eabi", not the EABI environment
    # (clang normalizes it; iree-compile does not), and then calls libgcc by
    # names that ARMv6-M's libgcc lacks (__mulsf3 for __aeabi_fmul).
    parts = triple.split("-")
    if len(parts) == 3 and parts[1] == "none":
        triple = f"{parts[0]}-unknown-none-{parts[2]}"
    return Target(triple, cpu, cpu_features or "", "aapcs", float_abi)


@dataclass(frozen=True)
class Config:
    """A validated choice of execution model, executable and module format."""

    execution_model: ExecutionModel
    executable_format: ExecutableFormat
    module_format: str | None  # None: no VM module (runtimeless)
    target: Target | None  # None when the executables are VMVX bytecode
    optimize_for: str = "speed"  # a key of OPTIMIZE_FOR
    data_format: str | None = "asm"  # None: no data file (an emitc module)
    threads: int = 1  # the glue's default worker count: 1 the calling thread, 0 the machine's cores

    @property
    def backend(self) -> str:
        if self.executable_format.name == "vmvx":
            return "vmvx-inline" if self.execution_model.name == "inline-static" else "vmvx"
        return "llvm-cpu"

    def compile_flags(self, static_library_path: str | None = None) -> list:
        """iree-compile flags for this configuration (without input/output)."""
        flags = [
            f"--iree-execution-model={self.execution_model.iree_name}",
            # IREE demotes f64 to f32 by default; the C API says double, so
            # the module must take double too.
            "--iree-input-demote-f64-to-f32=false",
            "--iree-hal-target-device=local",
            f"--iree-hal-local-target-device-backends={self.backend}",
        ]
        if self.module_format is None:
            flags += RUNTIMELESS_COMPILE_FLAGS
        else:
            flags.append(f"--output-format={MODULE_FORMATS[self.module_format]}")
        if self.target is not None:
            flags += [
                f"--iree-llvmcpu-target-triple={self.target.triple}",
                f"--iree-llvmcpu-target-cpu={self.target.cpu}",
                f"--iree-llvmcpu-target-cpu-features={self.target.cpu_features}",
            ]
            if self.target.abi:
                flags.append(f"--iree-llvmcpu-target-abi={self.target.abi}")
            if self.target.float_abi:
                flags.append(f"--iree-llvmcpu-target-float-abi={self.target.float_abi}")
            flags += OPTIMIZE_FOR[self.optimize_for]
        if self.executable_format.name == "static-library":
            if not static_library_path:
                raise ValueError("static-library needs the object's output path")
            flags += [
                "--iree-llvmcpu-link-embedded=false",
                "--iree-llvmcpu-link-static",
                f"--iree-llvmcpu-static-library-output-path={static_library_path}",
            ]
        elif self.executable_format.name == "embedded-elf":
            flags.append("--iree-llvmcpu-link-embedded=true")
        return flags


# IREE_TASK_EXECUTOR_MAX_WORKER_COUNT of iree/task/tuning.h.
MAX_THREADS = 256


def _threads(model: ExecutionModel, threads) -> int:
    if isinstance(threads, bool) or not isinstance(threads, int) or not 0 <= threads <= MAX_THREADS:
        raise UsageError(f"--threads {threads!r}: a worker count from 0 (the machine's cores) to {MAX_THREADS}")
    if threads != 1 and not model.worker_threads:
        takes = ", ".join(m.name for m in EXECUTION_MODELS.values() if m.worker_threads)
        raise UsageError(
            f"--threads {threads}: --execution-model {model.name} runs on the calling thread; {takes} takes it"
        )
    return threads


def _choice(kind: str, flag: str, value: str, allowed) -> str:
    if value not in allowed:
        raise UsageError(f"{flag} {value!r}: unknown {kind}; choose one of {', '.join(allowed)}")
    return value


def make_config(
    execution_model: str = "async",
    executable_format: str | None = None,
    module_format: str | None = None,
    target_triple: str | None = None,
    target_cpu: str | None = None,
    target_cpu_features: str | None = None,
    optimize_for: str = "speed",
    data_format: str | None = None,
    threads: int = 1,
) -> Config:
    """Validates a combination before any work is done; the error names the
    flag at fault and the allowed choices."""
    model = EXECUTION_MODELS[_choice("execution model", "--execution-model", execution_model, EXECUTION_MODELS)]
    if executable_format is None:
        executable_format = model.executable_formats[0]
    _choice("executable format", "--executable-format", executable_format, EXECUTABLE_FORMATS)
    if executable_format not in model.executable_formats:
        raise UsageError(
            f"--execution-model {model.name} cannot use --executable-format {executable_format}; "
            f"it takes {' or '.join(model.executable_formats)}"
        )
    if not model.has_vm_module:
        if module_format is not None:
            raise UsageError(f"--module-format {module_format}: --execution-model {model.name} has no VM module")
    else:
        module_format = _choice("module format", "--module-format", module_format or "vmfb", MODULE_FORMATS)
    fmt = EXECUTABLE_FORMATS[executable_format]
    target = None
    if fmt.uses_llvm_cpu:
        if target_triple is None and target_cpu in cores.CORES:
            target_triple = cores.CORES[target_cpu].default_triple  # --target-cpu cortex-m4 alone
        target = default_target(target_triple or host_triple(), target_cpu, target_cpu_features)
    else:
        given = [
            flag
            for flag, value in (
                ("--target-triple", target_triple),
                ("--target-cpu", target_cpu),
                ("--target-cpu-features", target_cpu_features),
            )
            if value
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)} only {'applies' if len(given) == 1 else 'apply'} to llvm-cpu executables "
                f"(--executable-format embedded-elf or static-library), not {executable_format}"
            )
    _choice("optimization goal", "--optimize-for", optimize_for, OPTIMIZE_FOR)
    if optimize_for != "speed" and target is None:
        raise UsageError(f"--optimize-for {optimize_for} only applies to llvm-cpu executables, not {executable_format}")
    if module_format == "emitc":
        if data_format is not None:
            raise UsageError(
                f"--data-format {data_format}: an emitc module has no module data file "
                "(IREE writes the whole module as C)"
            )
    else:
        data_format = _choice(
            "data format",
            "--data-format",
            data_format or default_data_format(target.triple if target else host_triple()),
            DATA_FORMATS,
        )
    return Config(model, fmt, module_format, target, optimize_for, data_format, _threads(model, threads))
