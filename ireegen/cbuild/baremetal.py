"""Bare-metal programs for `ireegen run`, parity and emit's verification.
Cortex-M: arm-none-eabi-gcc with newlib's semihosting (rdimon), a startup
and a linker script for a qemu-system-arm board that has the core, run as
`qemu-system-arm -M BOARD -semihosting-config ... -kernel PROGRAM`.
RV32: riscv64-unknown-elf-gcc with picolibc's semihosting crt0 on qemu's
virt machine.  The program's files, command line and exit status travel
over semihosting."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ireegen.cgen.render import render
from ireegen.common.errors import UsageError
from ireegen.common.resources import templates_dir
from ireegen.config.cores import ARCH_DEFAULT_CPU, CORES, Rv32Core


@dataclass(frozen=True)
class Memory:
    """One memory of a board that a linker script may place sections in."""

    name: str  # the board's name for it
    origin: int
    size: int


@dataclass(frozen=True)
class Board:
    """Memory of a qemu board: where code goes (`rom`), where data, heap and
    stack go (`ram`), and the larger memories the model's constants move
    to, in this order, when they do not fit next to the code."""

    machine: str
    rom: Memory
    ram: Memory
    more: tuple = ()  # of Memory

    def constants_memories(self) -> tuple:
        """Where the constants may go, first choice first."""
        return (self.rom, *self.more)


KIB, MIB = 1024, 1024 * 1024
_ZBT1, _ZBT23 = Memory("ZBT SSRAM1", 0x00000000, 4 * MIB), Memory("ZBT SSRAM2/3", 0x20000000, 4 * MIB)
_MPS2_PSRAM = Memory("PSRAM", 0x21000000, 16 * MIB)
BOARDS = {
    b.machine: b
    for b in (
        Board("mps2-an385", _ZBT1, _ZBT23, (_MPS2_PSRAM,)),
        Board("mps2-an386", _ZBT1, _ZBT23, (_MPS2_PSRAM,)),
        Board("mps2-an500", _ZBT1, _ZBT23, (_MPS2_PSRAM,)),
        # Secure aliases: the core starts in the secure state.
        Board(
            "mps2-an505",
            Memory("SSRAM1", 0x10000000, 4 * MIB),
            Memory("SSRAM2/3", 0x38000000, 4 * MIB),
            (Memory("PSRAM", 0x80000000, 16 * MIB),),
        ),
        # The 512 KiB ITCM holds code; larger constants go to the DDR (its secure alias).
        Board(
            "mps3-an547",
            Memory("ITCM", 0x10000000, 512 * KIB),
            Memory("ISRAM0/1", 0x31000000, 4 * MIB),
            (Memory("DDR", 0x70000000, 256 * MIB),),
        ),
        # -bios none: the program starts at the start of RAM.
        Board("virt", Memory("RAM", 0x80000000, 16 * MIB), Memory("RAM", 0x81000000, 16 * MIB)),
    )
}
STACK_SIZE = 64 * KIB
# The ELF section the runner puts the model's constants in (NAME_CONSTANTS_SECTION),
# which the linker script places in one of the board's constants memories.
CONSTANTS_SECTION = ".ireegen_constants"


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


def support_files(core, build_dir: Path, constants_in: Memory | None = None) -> tuple:
    """Writes the startup, the libm additions and the board's linker script
    into `build_dir`: (C sources, link flags).  The script puts the
    CONSTANTS_SECTION in `constants_in` (the board's code memory by default)."""
    board = BOARDS[core.qemu_machine]
    family = FAMILIES[core.family]
    sources = []
    for name in family.support_sources:
        target = build_dir / name
        shutil.copyfile(templates_dir() / "baremetal" / name, target)
        sources.append(target)
    if not family.linker_script:
        symbols = {
            "__flash": board.rom.origin,
            "__flash_size": board.rom.size,
            "__ram": board.ram.origin,
            "__ram_size": board.ram.size,
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
            constants=constants_in if constants_in not in (None, board.rom) else None,
            constants_section=CONSTANTS_SECTION,
            stack_size=STACK_SIZE,
        )
    )
    return tuple(sources), (*family.link_flags, f"-T{script}")


_OVERFLOW = re.compile(r"region `([^']*)' overflowed by (\d+) bytes")


def link_placed(core, build_dir: Path, name: str, link) -> None:
    """Links a bare-metal program with the model's constants next to the
    code if they fit, else in the board's next larger memory: `link(sources,
    link flags, defines)` runs the compiler and returns its failure output
    (None when it linked).  A program that fits no placement is refused in
    one line naming the board and the memory it overflows."""
    board = BOARDS.get(getattr(core, "qemu_machine", ""))
    if board is None or not FAMILIES[core.family].linker_script:
        sources, flags = support_files(core, build_dir)
        failure = link(sources, flags, ())
        if failure is not None:
            raise LinkError(failure)
        return
    overflows = []
    for memory in board.constants_memories():
        sources, flags = support_files(core, build_dir, memory)
        define = f'-D{name.upper()}_CONSTANTS_SECTION="{CONSTANTS_SECTION}"'
        failure = link(sources, flags, (define,) if memory is not board.rom else ())
        if failure is None:
            return
        found = _OVERFLOW.findall(failure)
        if not found:
            raise LinkError(failure)
        region, by = max(found, key=lambda f: int(f[1]))
        where = {"ROM": board.rom.name, "RAM": board.ram.name, "CONSTANTS": memory.name}.get(region, region)
        overflows.append(f"in {memory.name} {_human(memory.size)}, {where} overflows by {int(by):,} bytes")
        if region == "RAM":
            break
    raise DoesNotFit(
        f"{name}: the program does not fit the memories of qemu board {board.machine} (--target-cpu {core.cpu}): "
        f"code in {board.rom.name} {_human(board.rom.size)}, data in {board.ram.name} {_human(board.ram.size)}; "
        f"with the constants {'; '.join(overflows)}"
    )


def _human(size: int) -> str:
    return f"{size // MIB} MiB" if size % MIB == 0 else f"{size // KIB} KiB"


class DoesNotFit(UsageError):
    """A program too large for every placement on its board."""


class LinkError(Exception):
    """The compiler or linker failed for another reason than memory: its output."""
