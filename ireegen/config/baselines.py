"""The CPU a host architecture's code is compiled for when no --target-cpu
is given, and what each such CPU needs of the machine that runs the code.

x86_64 defaults to x86-64-v3 (AVX2, FMA, BMI1/2, F16C, MOVBE: Intel Haswell
of 2013 and later, AMD Excavator of 2015 and Zen): the "generic" x86-64
(SSE2, no FMA) costs 1.2x to 5x on convolutional models (docs/peers.md).
`--target-cpu generic` stays the choice for any x86-64; `host` for exactly
this machine.  Other architectures keep LLVM's generic CPU (aarch64: ARMv8-A
with NEON), riscv64 its Linux ABI's RV64GC.
"""

from __future__ import annotations

from pathlib import Path

# architecture -> (cpu, cpu features, abi)
ARCH_BASELINES = {
    "x86_64": ("x86-64-v3", "", ""),
    # Linux riscv64 is RV64GC with the lp64d ABI; without F/D the executables would need soft-float calls.
    "riscv64": ("generic-rv64", "+m,+a,+f,+d,+c", "lp64d"),
}

_X86_64_V2 = ("cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3")
_X86_64_V3 = (*_X86_64_V2, "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")
# CPU name -> the /proc/cpuinfo flags its code may use (the psABI's levels; Linux calls LZCNT "abm").
CPU_NEEDS = {
    "x86-64-v2": _X86_64_V2,
    "x86-64-v3": _X86_64_V3,
    "x86-64-v4": (*_X86_64_V3, "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"),
}


def host_cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset | None:
    """The flags of this machine's CPU, or None where /proc/cpuinfo does not say."""
    try:
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def missing_here(cpu: str, flags: frozenset | None = None) -> tuple:
    """What code for `cpu` needs that this machine's CPU lacks (empty when
    nothing, or when the machine does not say)."""
    flags = host_cpu_flags() if flags is None else flags
    if flags is None:
        return ()
    return tuple(f for f in CPU_NEEDS.get(cpu, ()) if f not in flags)
