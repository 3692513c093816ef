"""Bare-metal programs for `ireegen run`, parity and emit's verification.
Cortex-M: arm-none-eabi-gcc with newlib's semihosting (rdimon), a startup
and a linker script for a qemu-system-arm board that has the core, run as
`qemu-system-arm -M BOARD -semihosting-config ... -kernel PROGRAM`.
RV32: riscv64-unknown-elf-gcc with picolibc's semihosting crt0 on qemu's
virt machine.  The program's files, command line and exit status travel
over semihosting."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ireegen.cgen.render import render
from ireegen.common.errors import UsageError
from ireegen.common.resources import templates_dir
from ireegen.config.cores import ARCH_DEFAULT_CPU, CORES, Rv32Core


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
        # -bios none: the program starts at the start of RAM.
        Board("virt", (0x80000000, 16 * MIB), (0x81000000, 16 * MIB), "RAM", "RAM"),
    )
}
STACK_SIZE = 64 * KIB


@dataclass(frozen=True)
class Family:
    """How programs for one architecture are built and started."""

    cc: str
    compile_flags: tuple  # for every C file, besides the core's
    packages: str  # Debian packages of the compiler and C library
    qemu_package: str
    link_flags: tuple
    support_sources: tuple  # from templates/baremetal/
    linker_script: bool  # ours (-T), or the C library's own from --defsym
    qemu_options: tuple
    argv0_in_command_line: bool  # does the startup take argv[0] from the command line?


FAMILIES = {
    # newlib's stdio over semihosting (rdimon); our startup and linker script.
    "arm": Family(
        "arm-none-eabi-gcc",
        (),
        "gcc-arm-none-eabi libnewlib-arm-none-eabi",
        "qemu-system-arm",
        ("--specs=rdimon.specs", "-nostartfiles", "-Wl,--gc-sections", "-Wl,--no-warn-execstack"),
        ("startup.c", "libm_compat.c"),
        True,
        (),
        True,
    ),
    # picolibc's semihosting crt0 reads the command line and exits with main's status.
    "riscv": Family(
        "riscv64-unknown-elf-gcc",
        ("--specs=picolibc.specs",),
        "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf",
        "qemu-system-misc",
        ("--oslib=semihost", "--crt0=semihost"),
        ("libm_compat.c",),
        False,
        ("-bios", "none"),
        False,
    ),
}


def core_for(triple: str, cpu: str | None, cpu_features: str = ""):
    """The core a bare-metal triple's programs run on."""
    arch = triple.split("-", 1)[0]
    if arch == "riscv32":
        return Rv32Core(cpu_features)
    cpu = cpu if cpu and cpu != "generic" else ARCH_DEFAULT_CPU.get(arch)
    core = CORES.get(cpu or "")
    if core is None:
        raise UsageError(
            f"--target-triple {triple}: ireegen runs bare-metal programs for "
            f"{', '.join(CORES)}; give --cc and --emulator for others"
        )
    return core


def emulator_command(core) -> tuple:
    return (core.qemu, "-M", core.qemu_machine, *FAMILIES[core.family].qemu_options, "-nographic", "-monitor", "none")


def semihosting_command(core, emulator: tuple, program, args) -> list:
    """qemu-system with `args` as the program's command line (semihosting
    joins them with spaces; commas are doubled for qemu's option parser)."""
    for a in args:
        if " " in str(a):
            raise UsageError(f"{a}: bare-metal program arguments cannot contain spaces")
    if FAMILIES[core.family].argv0_in_command_line:
        args = [Path(program).name, *args]
    line = ",".join(f"arg={str(a).replace(',', ',,')}" for a in args)
    return [*emulator, "-semihosting-config", f"enable=on,target=native,{line}", "-kernel", str(program)]


def support_files(core, build_dir: Path) -> tuple:
    """Writes the startup, the libm additions and the board's linker script
    into `build_dir`: (C sources, link flags)."""
    board = BOARDS[core.qemu_machine]
    family = FAMILIES[core.family]
    sources = []
    for name in family.support_sources:
        target = build_dir / name
        shutil.copyfile(templates_dir() / "baremetal" / name, target)
        sources.append(target)
    if not family.linker_script:
        symbols = {
            "__flash": board.rom[0],
            "__flash_size": board.rom[1],
            "__ram": board.ram[0],
            "__ram_size": board.ram[1],
            "__stack_size": STACK_SIZE,
        }
        return tuple(sources), (*family.link_flags, *(f"-Wl,--defsym={k}={v:#x}" for k, v in symbols.items()))
    script = build_dir / f"{board.machine}.ld"
    script.write_text(
        render(
            "baremetal/link.ld.j2",
            machine=board.machine,
            rom=board.rom,
            ram=board.ram,
            rom_name=board.rom_name,
            ram_name=board.ram_name,
            stack_size=STACK_SIZE,
        )
    )
    return tuple(sources), (*family.link_flags, f"-T{script}")
