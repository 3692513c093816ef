"""Checks --target-triple and --target-cpu against the LLVM inside the
iree-compile in use, before compiling: iree-compile answers an unknown
target with a crash and a stack dump, an unknown CPU with a warning it then
ignores (so the code would be for another CPU than the user asked for)."""

from __future__ import annotations

import difflib
import re
import subprocess
from dataclasses import replace
from functools import lru_cache

from ireegen.common.errors import UsageError
from ireegen.config.cores import CORES, cores_of_family, cpu_family

# Triple architecture (prefix) -> LLVM target name, as --iree-llvmcpu-list-targets prints it.
_ARCH_TO_TARGET = (
    ("x86_64", "x86-64"),
    ("amd64", "x86-64"),
    ("i386", "x86"),
    ("i486", "x86"),
    ("i586", "x86"),
    ("i686", "x86"),
    ("aarch64_be", "aarch64_be"),
    ("aarch64_32", "aarch64_32"),
    ("aarch64", "aarch64"),
    ("arm64_32", "arm64_32"),
    ("arm64", "arm64"),
    ("armeb", "armeb"),
    ("arm", "arm"),
    ("thumbeb", "thumbeb"),
    ("thumb", "thumb"),
    ("riscv64be", "riscv64be"),
    ("riscv64", "riscv64"),
    ("riscv32be", "riscv32be"),
    ("riscv32", "riscv32"),
    ("wasm32", "wasm32"),
    ("wasm64", "wasm64"),
)
_TRIPLE = re.compile(r"^[A-Za-z0-9_.]+(-[A-Za-z0-9_.]+){1,3}$")
_CPUS_FREE = ("generic", "host")


def _run(compiler_path: str, args: list, stdin: str = "") -> str:
    try:
        proc = subprocess.run(
            [compiler_path, *args],
            input=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout


@lru_cache(maxsize=8)
def registered_targets(compiler_path: str) -> tuple:
    out = _run(compiler_path, ["--iree-llvmcpu-list-targets"])
    return tuple(m.group(1) for m in re.finditer(r"^\s{4}(\S+)\s+- ", out, re.M))


def _llvm_cpu_flags(triple: str, cpu: str, features: str = "") -> list:
    """iree-compile's flags for the llvm-cpu backend on `triple` and `cpu`."""
    return [
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        f"--iree-llvmcpu-target-triple={triple}",
        f"--iree-llvmcpu-target-cpu={cpu}",
        *([f"--iree-llvmcpu-target-cpu-features={features}"] if features else []),
    ]


@lru_cache(maxsize=32)
def accepted_cpus(compiler_path: str, triple: str) -> tuple:
    out = _run(
        compiler_path,
        ["-", *_llvm_cpu_flags(triple, "help"), "-o", "/dev/null"],
        stdin="module {}\n",
    )
    m = re.search(r"List of accepted CPUs: (.*)", out)
    if m:
        return tuple(c.strip() for c in m.group(1).split(",") if c.strip())
    return tuple(m.group(1) for m in re.finditer(r"^  (\S+)\s+- Select the", out, re.M))


# A module with one dispatch: compiled to its executable targets, it shows
# the CPU and features iree-compile's LLVM picked for `host`.
_PROBE = """func.func @probe(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
HOST = "host"


@lru_cache(maxsize=8)
def _resolved_host(compiler_path: str, triple: str, cpu: str, features: str) -> tuple:
    """(cpu, features) that iree-compile resolves `host` to, by LLVM's host
    detection, as it writes them into the executable target; () when it does
    not say."""
    out = _run(
        compiler_path,
        [
            "-",
            *_llvm_cpu_flags(triple, cpu, features),
            "--compile-to=executable-targets",
            "-o",
            "-",
        ],
        stdin=_PROBE,
    )
    got_cpu = re.search(r'\bcpu = "([^"]*)"', out)
    got_features = re.search(r'\bcpu_features = "([^"]*)"', out)
    if not got_cpu or not got_cpu.group(1) or got_cpu.group(1) == HOST:
        return ()
    return got_cpu.group(1), got_features.group(1) if got_features else ""


def resolve_host(target, compiler):
    """`target` with `host` (as --target-cpu or --target-cpu-features)
    replaced by the CPU name and features iree-compile compiles for on this
    machine, so that the content key and the manifest name the real target
    (code for one machine's `host` dies with SIGILL on another)."""
    if target is None or HOST not in (target.cpu, target.cpu_features):
        return target
    resolved = _resolved_host(compiler.path, target.triple, target.cpu, target.cpu_features)
    if not resolved:
        raise UsageError(
            f"--target-cpu {target.cpu}: iree-compile did not say which CPU `host` is on this machine; "
            "give the CPU by name (--target-cpu NAME --target-cpu-features +a,+b)"
        )
    cpu, features = resolved
    return replace(
        target,
        cpu=cpu if target.cpu == HOST else target.cpu,
        cpu_features=features if target.cpu_features == HOST else target.cpu_features,
    )


def llvm_target_of(triple: str) -> str | None:
    arch = triple.split("-", 1)[0]
    for prefix, target in _ARCH_TO_TARGET:
        if arch.startswith(prefix):
            return target
    return None


def check_target(target, compiler) -> None:
    """Refuses a triple LLVM does not know, a bare architecture (which `run`
    and the toolchain files cannot place), and a CPU the target lacks."""
    if target is None:
        return
    triple = target.triple
    if not _TRIPLE.match(triple):
        arch = triple.split("-", 1)[0]
        raise UsageError(
            f"--target-triple {triple}: not an LLVM triple (arch-vendor-os[-abi]); for example "
            f"{arch}-unknown-linux-gnu for Linux or {arch}-none-elf for bare metal"
        )
    registered = registered_targets(compiler.path)
    llvm_target = llvm_target_of(triple)
    if registered and (llvm_target is None or llvm_target not in registered):
        raise UsageError(
            f"--target-triple {triple}: iree-compile's LLVM has no target for {triple.split('-', 1)[0]} "
            f"(it has {', '.join(registered)})"
        )
    if target.cpu in _CPUS_FREE or target.cpu.startswith("generic"):
        return
    cpus = accepted_cpus(compiler.path, triple)
    if cpus and target.cpu not in cpus:
        raise UsageError(
            f"--target-cpu {target.cpu}: not a CPU of {triple} in iree-compile's LLVM; {similar_cpus(target.cpu, cpus)}"
        )


def similar_cpus(cpu: str, cpus: tuple) -> str:
    """The did-you-mean for an unknown CPU, drawn from its own family (its
    name up to the first digit): ireegen's bare-metal cores for a Cortex-M
    name, whatever the triple; else the triple's CPUs whose names start with
    the family; else a few of the triple's CPUs."""
    cores = cores_of_family(cpu)
    if cores:
        closest = difflib.get_close_matches(cpu, cores, n=1, cutoff=0)[0]
        return (
            f"a bare-metal core? ireegen knows {', '.join(cores)}, each with its own triple "
            f"(without --target-triple, {closest} picks {CORES[closest].default_triple})"
        )
    family = cpu_family(cpu)
    close = [c for c in cpus if family and c.startswith(family)][:8]
    if close:
        return f"similar: {', '.join(close)}"
    return f"it knows {len(cpus)} CPUs, e.g. {', '.join(cpus[:8])}"
