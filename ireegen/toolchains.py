"""C toolchains for building emitted C on this machine: the host's compiler,
or, for a foreign target triple, Debian's cross gcc run under qemu-user."""

from __future__ import annotations

import os
import platform
import shutil
from dataclasses import dataclass

from .errors import UsageError
from .modes import host_triple

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

    def run_command(self, program) -> list:
        return [*self.emulator, str(program)]


def toolchain_for(triple: str, cc: str | None = None, emulator: str | None = None) -> Toolchain:
    """The compiler (and emulator) for programs of `triple`.  `cc`/`emulator`
    override the choice (CC in the environment overrides the host's)."""
    arch = triple.split("-", 1)[0]
    host_arch = host_triple().split("-", 1)[0]
    if arch == host_arch and "linux" in triple and platform.system() == "Linux":
        compiler = cc or os.environ.get("CC") or "cc"
        _require(compiler, f"a C compiler for {triple} (set CC or --cc)")
        if emulator:
            _require(emulator.split()[0], "the --emulator command")
        return Toolchain(triple, compiler, tuple(emulator.split()) if emulator else (), ())
    if arch not in _CROSS or "linux" not in triple:
        if not (cc and emulator):
            raise UsageError(
                f"--target-triple {triple}: ireegen knows no cross toolchain for it; "
                "give --cc and --emulator"
            )
        _require(cc, "the --cc compiler")
        _require(emulator.split()[0], "the --emulator command")
        return Toolchain(triple, cc, tuple(emulator.split()), ("-static",))
    prefix, qemu, package = _CROSS[arch]
    compiler = cc or prefix + "gcc"
    _require(compiler, f"the cross compiler for {triple} (Debian: apt-get install {package})")
    runner = tuple(emulator.split()) if emulator else (qemu,)
    _require(runner[0], f"an emulator for {triple} programs (Debian: apt-get install qemu-user)")
    # Static programs need no target sysroot at run time.
    return Toolchain(triple, compiler, runner, ("-static",))


def _require(program: str, what: str) -> None:
    if not program or shutil.which(program) is None:
        raise UsageError(f"{program}: not found; it is {what}")
