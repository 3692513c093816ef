"""Building a user's kernels (`--kernels SPEC`) for the model's target.

The kernels are compiled with the toolchain ireegen builds the model's C
with (toolchains.py: the host's cc, Debian's cross gcc, arm-none-eabi-gcc
with the core's -mcpu and float ABI, riscv64-unknown-elf-gcc), with the
same strict flags (native_run.STRICT_CFLAGS), then SPEC's flags for the
target family.  All sources become one relocatable object:

- for embedded ELF: position independent and freestanding, linked by
  IREE's linker into the executables' ELF (compile/kernel_link.py);
- for a static library: linked into NAME_executables.o by a relocatable
  link, and every symbol the kernels define is then made local, so that
  the only global symbols of NAME_executables.o stay IREE's library
  queries under the model's prefix: two models can link the same kernel
  source, and no kernel name can clash with the user's program.

Each source compiles in SPEC's directory by its relative name, with that
directory mapped to `.` (-ffile-prefix-map): the object holds no path of
this machine.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from ireegen.common.errors import DiagnosticsError, UsageError
from ireegen.common.resources import doc
from ireegen.common.untrusted import argv_path, deadline_message, tool_deadline
from ireegen.compile.kernel_link import KernelLink, check_config
from ireegen.config.modes import Config
from ireegen.frontend.kernel_spec import KernelSpec, target_family

from .native_run import STRICT_CFLAGS
from .toolchains import Toolchain, binutil, toolchain_for

# Flags the object's destination needs, by executable format.
FORMAT_CFLAGS = {
    # An embedded ELF is a position-independent shared object with no C
    # library: nothing from outside, no stack protector's guard symbol.
    "embedded-elf": ("-fPIC", "-ffreestanding", "-fno-stack-protector", "-fvisibility=hidden"),
    "static-library": ("-fno-stack-protector", "-fvisibility=hidden"),
}


def kernel_toolchain(config: Config) -> Toolchain:
    check_config(config)
    target = config.target
    return toolchain_for(target.triple, cpu=target.cpu, need_emulator=False, cpu_features=target.cpu_features)


def _run(cmd, cwd, spec: KernelSpec, what: str) -> str:
    deadline = tool_deadline()
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=deadline,
        )
    except OSError as e:
        raise UsageError(f"{spec.path}: {what}: cannot run {cmd[0]} ({e.strerror or e})") from None
    except subprocess.TimeoutExpired:
        raise UsageError(deadline_message(cmd[0], f"{spec.path}: {what}", deadline)) from None
    if proc.returncode != 0:
        raise DiagnosticsError(
            f"{spec.path}: {what} failed (exit status {proc.returncode}):",
            [f"$ {' '.join(map(str, cmd))}", *proc.stdout.rstrip().splitlines()],
        )
    return proc.stdout


def _link_flags(toolchain: Toolchain) -> list:
    """The toolchain's flags that pick the object format (-mcpu, -march ...),
    without the C library's specs, whose linker script a relocatable link
    must not get."""
    return [f for f in toolchain.cflags if not f.startswith("--specs")]


def _relocatable_link(toolchain: Toolchain, inputs, output: Path, spec: KernelSpec, what: str) -> None:
    cmd = [toolchain.cc, *_link_flags(toolchain), "-nostdlib", "-nostartfiles", "-r", *map(argv_path, inputs), "-o"]
    _run([*cmd, argv_path(output)], None, spec, what)


def build_object(spec: KernelSpec, config: Config, workdir: Path, file_name: str) -> None:
    """Compiles SPEC's sources for config's target into workdir/file_name:
    each source on its own, then one relocatable link."""
    toolchain = kernel_toolchain(config)
    family = target_family(config.target.triple)
    directory = spec.directory.resolve()
    workdir = Path(workdir).resolve()
    flags = [
        *toolchain.cflags,
        *STRICT_CFLAGS,
        *FORMAT_CFLAGS[config.executable_format.name],
        *spec.flags_for(family),
        f"-ffile-prefix-map={directory}=.",
    ]
    objects = []
    for i, source in enumerate(spec.sources):
        obj = workdir / f"kernels.{i}.o"
        what = f"compiling {spec.relative(source)} for {config.target.triple} (family {family})"
        # A source's name is the spec's data: `./name`, never an option or @file.
        source_arg = argv_path(spec.relative(source))
        _run([toolchain.cc, *flags, "-c", source_arg, "-o", argv_path(obj)], directory, spec, what)
        objects.append(obj)
    _relocatable_link(toolchain, objects, workdir / file_name, spec, "linking the kernels into one object")
    for obj in objects:
        obj.unlink()


def defined_globals(nm: str, obj: Path, spec: KernelSpec) -> list:
    out = _run([nm, "-g", "--defined-only", "-P", argv_path(obj)], None, spec, "listing the kernels' symbols")
    return sorted({line.split()[0] for line in out.splitlines() if line.strip()})


def merge_static(spec: KernelSpec, config: Config, static_object: Path, kernels_object: Path) -> None:
    """Links the kernels into IREE's static-library object; their symbols become local."""
    toolchain = kernel_toolchain(config)
    nm = binutil(toolchain.cc, "nm")
    kernel_symbols = defined_globals(nm, kernels_object, spec)
    iree_symbols = defined_globals(nm, static_object, spec)
    merged = static_object.with_name(static_object.name + ".merged")
    _relocatable_link(
        toolchain, [static_object, kernels_object], merged, spec, f"linking the kernels into {static_object.name}"
    )
    names = static_object.with_name("kernels.symbols")
    names.write_text("".join(s + "\n" for s in kernel_symbols))
    _run(
        [binutil(toolchain.cc, "objcopy"), f"--localize-symbols={names}", argv_path(merged), argv_path(static_object)],
        None,
        spec,
        f"making the kernels' symbols local to {static_object.name}",
    )
    merged.unlink()
    names.unlink()
    # What the program's link sees is what IREE's object had: its library
    # queries, under the model's prefix (checked by emit).
    escaped = sorted(set(defined_globals(nm, static_object, spec)) - set(iree_symbols))
    if escaped:
        raise UsageError(
            f"{spec.path}: the kernels' symbol {escaped[0]} stayed global in {static_object.name}; "
            f"define the kernels' functions and data as ordinary C definitions ({doc('kernels.md')})"
        )


def kernel_link(spec: KernelSpec, require_match: bool = True) -> KernelLink:
    return KernelLink(spec, functools.partial(build_object, spec), functools.partial(merge_static, spec), require_match)


def kernel_footprint(manifest: dict, nm_tool: str, executables: Path) -> list:
    """`ireegen size`: each kernel of a --kernels output, its code size in
    NAME_executables.o (part of the executables' flash) and the dispatches
    that call it."""
    section = manifest.get("kernels")
    if not section:
        return []
    callers = {}
    for d in section["dispatches"]:
        for k in d["kernels"]:
            callers.setdefault(k, []).append(d["dispatch"])
    sizes = _code_sizes(nm_tool, executables)
    return [{"kernel": k, "bytes": sizes.get(k), "dispatches": sorted(callers[k])} for k in sorted(callers)]


def _code_sizes(nm_tool: str, obj: Path) -> dict:
    """symbol -> bytes, for the code symbols of `obj` (local ones too)."""
    proc = subprocess.run(
        [nm_tool, "-S", argv_path(obj)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, errors="replace"
    )
    sizes = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            sizes[parts[3]] = int(parts[1], 16)
    return sizes


def kernel_table_lines(report: dict) -> list:
    return [
        f"  kernel    {k['kernel']}: {k['bytes'] if k['bytes'] is not None else '?'} B of the executables' flash, "
        f"called by {', '.join(k['dispatches'])}"
        for k in report.get("kernels", [])
    ]
