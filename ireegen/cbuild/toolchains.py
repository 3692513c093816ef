"""C toolchains for building emitted C on this machine: the host's compiler,
or, for a foreign target triple, Debian's cross gcc run under qemu-user, or
for a bare-metal Cortex-M triple, arm-none-eabi-gcc run under qemu-system-arm
(baremetal.py)."""

from __future__ import annotations

import os
import platform
import shutil
from dataclasses import dataclass

from ireegen.common.errors import UsageError
from ireegen.config.cores import ARCH_ORDER
from ireegen.config.modes import host_triple

from . import baremetal

# LLVM architecture -> (Debian cross gcc prefix, qemu-user program, Debian cross package)
_CROSS = {
    "x86_64": ("x86_64-linux-gnu-", "qemu-x86_64", "gcc-x86-64-linux-gnu"),
    "aarch64": ("aarch64-linux-gnu-", "qemu-aarch64", "gcc-aarch64-linux-gnu"),
    "riscv64": ("riscv64-linux-gnu-", "qemu-riscv64", "gcc-riscv64-linux-gnu"),
    "armv7": ("arm-linux-gnueabihf-", "qemu-arm", "gcc-arm-linux-gnueabihf"),
}


@dataclass(frozen=True)
class Toolchain:
    triple: str
    cc: str
    emulator: tuple  # prefix of the command that runs a built program; () on the host
    link_flags: tuple
    cflags: tuple = ()  # what every object of the program needs (-mcpu, float ABI)
    core: object = None  # bare metal: the cores.Core the program runs on, under qemu-system

    @property
    def bare_metal(self) -> bool:
        return self.core is not None

    def run_command(self, program, args=()) -> list:
        if self.bare_metal:
            return baremetal.semihosting_command(self.core, self.emulator, program, args)
        return [*self.emulator, str(program), *map(str, args)]


def runs_natively(triple: str) -> bool:
    """Whether programs built for `triple` run on this machine as they are."""
    arch = triple.split("-", 1)[0]
    return arch == host_triple().split("-", 1)[0] and "linux" in triple and platform.system() == "Linux"


def toolchain_for(
    triple: str,
    cc: str | None = None,
    emulator: str | None = None,
    cpu: str | None = None,
    need_emulator: bool = True,
    cpu_features: str = "",
) -> Toolchain:
    """The compiler (and emulator) for programs of `triple` (`cpu` and
    `cpu_features` pick a bare-metal core's flags and board).  `cc`/`emulator`
    override the choice (CC in the environment overrides the host's)."""
    arch = triple.split("-", 1)[0]
    if arch in ARCH_ORDER or (arch == "riscv32" and "linux" not in triple):  # a board, not a process
        return _bare_metal_toolchain(triple, cpu, cc, emulator, need_emulator, cpu_features)
    if runs_natively(triple):
        compiler = cc or os.environ.get("CC") or "cc"
        _require(compiler, f"a C compiler for {triple} (set CC or --cc)")
        if emulator:
            _require(emulator.split()[0], "the --emulator command")
        return Toolchain(triple, compiler, tuple(emulator.split()) if emulator else (), ())
    if arch not in _CROSS or "linux" not in triple:
        if not (cc and emulator):
            raise UsageError(
                f"--target-triple {triple}: ireegen knows no cross toolchain for it; give --cc and --emulator"
            )
        _require(cc, "the --cc compiler")
        _require(emulator.split()[0], "the --emulator command")
        return Toolchain(triple, cc, tuple(emulator.split()), ("-static",))
    prefix, qemu, package = _CROSS[arch]
    compiler = cc or prefix + "gcc"
    _require(compiler, f"the cross compiler for {triple} (Debian: apt-get install {package})")
    runner = tuple(emulator.split()) if emulator else (qemu,)
    if need_emulator:
        _require(runner[0], f"an emulator for {triple} programs (Debian: apt-get install qemu-user)")
    # Static programs need no target sysroot at run time.
    return Toolchain(triple, compiler, runner, ("-static",))


def _bare_metal_toolchain(triple, cpu, cc, emulator, need_emulator, cpu_features) -> Toolchain:
    core = baremetal.core_for(triple, cpu, cpu_features)
    family = baremetal.FAMILIES[core.family]
    compiler = cc or family.cc
    _require(compiler, f"the bare-metal compiler for {triple} (Debian: apt-get install {family.packages})")
    runner = tuple(emulator.split()) if emulator else baremetal.emulator_command(core)
    if need_emulator:
        _require(runner[0], f"an emulator for {triple} programs (Debian: apt-get install {family.qemu_package})")
    return Toolchain(
        triple, compiler, runner, family.link_flags, (*core.gcc_flags(triple), *family.compile_flags), core
    )


def binutil(cc: str, name: str) -> str:
    """The binutils program `name` (nm, objcopy ...) that goes with the compiler `cc`."""
    return cc[: -len("gcc")] + name if cc.endswith("gcc") else name


def _require(program: str, what: str) -> None:
    if not program or shutil.which(program) is None:
        raise UsageError(f"{program}: not found; it is {what}")
