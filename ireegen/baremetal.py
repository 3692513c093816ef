"""Bare-metal Cortex-M programs for `ireegen run`, parity and emit's
verification: arm-none-eabi-gcc with newlib's semihosting (rdimon), a
startup and a linker script for a qemu-system-arm board that has the core,
run as `qemu-system-arm -M BOARD -semihosting-config ... -kernel PROGRAM`.
The board's files and the program's exit status travel over semihosting."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from .cores import ARCH_DEFAULT_CPU, CORES, Core
from .errors import UsageError
from .render import render
from .resources import templates_dir


@dataclass(frozen=True)
class Board:
    """Memory of a qemu board: (origin, bytes) of code and of data."""

    machine: str
    rom: tuple
    ram: tuple
    rom_name: str
    ram_name: str


KIB, MIB = 1024, 1024 * 1024
BOARDS = {
    b.machine: b
    for b in (
        Board("mps2-an385", (0x00000000, 4 * MIB), (0x20000000, 4 * MIB), "ZBT SSRAM1", "ZBT SSRAM2/3"),
        Board("mps2-an386", (0x00000000, 4 * MIB), (0x20000000, 4 * MIB), "ZBT SSRAM1", "ZBT SSRAM2/3"),
        Board("mps2-an500", (0x00000000, 4 * MIB), (0x20000000, 4 * MIB), "ZBT SSRAM1", "ZBT SSRAM2/3"),
        # Secure aliases: the core starts in the secure state.
        Board("mps2-an505", (0x10000000, 4 * MIB), (0x38000000, 4 * MIB), "SSRAM1", "SSRAM2/3"),
        Board("mps3-an547", (0x10000000, 512 * KIB), (0x31000000, 4 * MIB), "ITCM", "ISRAM0/1"),
    )
}
STACK_SIZE = 64 * KIB
CC = "arm-none-eabi-gcc"
QEMU = "qemu-system-arm"
# Semihosting for files and the exit status; newlib with its stdio over it.
LINK_FLAGS = ("--specs=rdimon.specs", "-nostartfiles", "-Wl,--gc-sections", "-Wl,--no-warn-execstack")
SUPPORT_SOURCES = ("startup.c", "libm_compat.c")


def core_for(triple: str, cpu: str | None) -> Core:
    """The core a bare-metal triple's programs run on."""
    arch = triple.split("-", 1)[0]
    cpu = cpu if cpu and cpu != "generic" else ARCH_DEFAULT_CPU.get(arch)
    core = CORES.get(cpu or "")
    if core is None:
        raise UsageError(f"--target-triple {triple}: ireegen runs bare-metal programs for "
                         f"{', '.join(CORES)}; give --cc and --emulator for others")
    return core


def emulator_command(core: Core) -> tuple:
    return (QEMU, "-M", core.qemu_machine, "-nographic", "-monitor", "none")


def semihosting_command(emulator: tuple, program, args) -> list:
    """qemu-system with `args` as the program's command line (semihosting
    joins them with spaces; commas are doubled for qemu's option parser)."""
    for a in args:
        if " " in str(a):
            raise UsageError(f"{a}: bare-metal program arguments cannot contain spaces")
    line = ",".join(f"arg={str(a).replace(',', ',,')}" for a in [Path(program).name, *args])
    return [*emulator, "-semihosting-config", f"enable=on,target=native,{line}", "-kernel", str(program)]


def support_files(core: Core, build_dir: Path) -> tuple:
    """Writes the startup, the libm additions and the board's linker script
    into `build_dir`: (C sources, link flags)."""
    board = BOARDS[core.qemu_machine]
    sources = []
    for name in SUPPORT_SOURCES:
        target = build_dir / name
        shutil.copyfile(templates_dir() / "baremetal" / name, target)
        sources.append(target)
    script = build_dir / f"{board.machine}.ld"
    script.write_text(render("baremetal/link.ld.j2", machine=board.machine, rom=board.rom, ram=board.ram,
                             rom_name=board.rom_name, ram_name=board.ram_name, stack_size=STACK_SIZE))
    return tuple(sources), (*LINK_FLAGS, f"-T{script}")
