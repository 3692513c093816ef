"""The tables of bare-metal cores: for Cortex-M, what `--target-cpu` implies
for the executables (triple, float ABI), for the C compiler that builds the
code around them (arm-none-eabi-gcc flags) and for the emulator that runs it
(qemu-system-arm board); for RV32, what the ISA extensions in
`--target-cpu-features` imply (ABI, -march).  Pure data; modes.py,
toolchains.py, baremetal.py and the CMake toolchain files read it."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Core:
    cpu: str  # LLVM and gcc -mcpu name
    qemu = "qemu-system-arm"
    family = "arm"
    arch: str  # LLVM triple architecture
    fpu: str  # gcc -mfpu, "" without an FPU; "auto" lets -mcpu choose
    qemu_machine: str  # qemu-system-arm -M board that has this core (or a superset)
    tested_in_ci: bool  # the test suite runs code for this core under qemu

    @property
    def has_fpu(self) -> bool:
        return bool(self.fpu)

    @property
    def default_triple(self) -> str:
        return f"{self.arch}-none-eabi{'hf' if self.has_fpu else ''}"

    def float_abi(self, triple: str) -> str:
        """The float ABI of `triple` on this core: eabihf is hard, eabi is
        softfp on a core with an FPU and soft on one without."""
        if triple.endswith("eabihf"):
            return "hard"
        return "softfp" if self.has_fpu else "soft"

    def gcc_flags(self, triple: str) -> tuple:
        """arm-none-eabi-gcc flags whose objects link with the executables."""
        flags = [f"-mcpu={self.cpu}", "-mthumb", f"-mfloat-abi={self.float_abi(triple)}"]
        if self.has_fpu:
            flags.append(f"-mfpu={self.fpu}")
        return tuple(flags)


CORES = {
    c.cpu: c
    for c in (
        # ARMv6-M code runs on the Cortex-M3 of mps2-an385: qemu has no MPS2 M0 board.
        Core("cortex-m0", "thumbv6m", "", "mps2-an385", False),
        Core("cortex-m0plus", "thumbv6m", "", "mps2-an385", True),
        Core("cortex-m3", "thumbv7m", "", "mps2-an385", True),
        Core("cortex-m4", "thumbv7em", "fpv4-sp-d16", "mps2-an386", True),
        Core("cortex-m7", "thumbv7em", "fpv5-d16", "mps2-an500", True),
        Core("cortex-m33", "thumbv8m.main", "fpv5-sp-d16", "mps2-an505", True),
        # MVE (Helium) integer and float: LLVM's default features for the core.
        Core("cortex-m55", "thumbv8.1m.main", "auto", "mps3-an547", True),
    )
}


def cpu_family(cpu: str) -> str:
    """A CPU name's family: the name up to its first digit (cortex-m99 and
    cortex-m0plus are cortex-m, znver4 is znver, skylak is skylak)."""
    return re.match(r"\D*", cpu).group()


def cores_of_family(cpu: str) -> list:
    """The cores of CORES in `cpu`'s family: every Cortex-M for cortex-m99,
    none for a name of another family."""
    family = cpu_family(cpu)
    return [name for name in CORES if family and cpu_family(name) == family]


# Each architecture in the order of its instruction sets: a triple's code
# runs on a core of that architecture or a later one.
ARCH_ORDER = ("thumbv6m", "thumbv7m", "thumbv7em", "thumbv8m.main", "thumbv8.1m.main")

# A Cortex-M triple given without --target-cpu gets this core.
ARCH_DEFAULT_CPU = {
    "thumbv6m": "cortex-m0plus",
    "thumbv7m": "cortex-m3",
    "thumbv7em": "cortex-m4",
    "thumbv8m.main": "cortex-m33",
    "thumbv8.1m.main": "cortex-m55",
}


# Bare-metal RISC-V, 32-bit (riscv32-unknown-elf): the baseline is rv32imac;
# +f / +d in --target-cpu-features make the ABI ilp32f / ilp32d.
RV32_BASELINE = ("generic-rv32", "+m,+a,+c")
RV32_FLOAT_ABIS = (("+d", "ilp32d"), ("+f", "ilp32f"))  # the first match wins; else ilp32
RV32_EXTENSIONS = "mafdc"  # -march letters, in the order gcc wants them


def rv32_abi(features: str) -> str:
    given = features.split(",")
    return next((abi for feature, abi in RV32_FLOAT_ABIS if feature in given), "ilp32")


@dataclass(frozen=True)
class Rv32Core:
    """A bare-metal RV32 target, run on qemu's virt machine."""

    features: str
    qemu = "qemu-system-riscv32"
    qemu_machine = "virt"
    family = "riscv"
    tested_in_ci = True

    def gcc_flags(self, triple: str) -> tuple:
        given = self.features.split(",")
        march = "rv32i" + "".join(x for x in RV32_EXTENSIONS if f"+{x}" in given)
        return (f"-march={march}", f"-mabi={rv32_abi(self.features)}")
