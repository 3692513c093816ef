"""`ireegen size OUTDIR`: a runtimeless model's flash and RAM on its target,
read with the target toolchain from the built objects (CMake's, or compiled
here at -Os with the target's flags).

The objects are linked the way firmware links them (--gc-sections, rooted at
NAME_initialize, the model's functions and NAME_last_error; the C library
left out), and the linker map gives what each object keeps: the executables
object carries IREE's builtins (f16 conversions, fma, memcpy...) that nothing
calls, which the link drops.
Flash: the executables' text+rodata, the glue (NAME.c), the constants.
RAM: the arena, the instance, the glue's other data, and the stack of one
call: the glue's frames from gcc's -fstack-usage plus the deepest chain of
calls from a dispatch function, each function's frame read from its
prologue and its callees from its direct calls (Arm and RISC-V targets)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.untrusted import deadline_message, tool_deadline

from .kernels import kernel_footprint, kernel_table_lines
from .native_run import load_manifest
from .toolchains import binutil, toolchain_for

SIZE_CFLAGS = ("-Os", "-std=c11", "-ffunction-sections", "-fdata-sections")


def _run(cmd) -> str:
    deadline = tool_deadline()
    try:
        proc = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", timeout=deadline
        )
    except subprocess.TimeoutExpired:
        raise UsageError(deadline_message(str(cmd[0]), "measuring the footprint", deadline)) from None
    if proc.returncode != 0:
        raise UsageError(f"{' '.join(map(str, cmd))}: {proc.stdout.strip()}")
    return proc.stdout


_MAP_SECTION = re.compile(r"^ (\.[^\s]+)")
_MAP_SIZE = re.compile(r"^\s+(?:(\.[^\s]+)\s+)?0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)$")


def linked_sizes(cc: str, cflags, objects: dict, roots, objdump_tool: str | None = None) -> tuple:
    """Links `objects` (role -> path) with --gc-sections from the `roots`
    symbols: ({role: {"flash": bytes, "ram": bytes}}, [undefined symbols]),
    and with `objdump_tool` also the stack each function the link keeps
    needs (call_chain_frames of the linked program: a kernel no dispatch
    calls is not on any stack)."""
    # No --specs: a C library's specs can bring a linker script whose memory
    # regions a large model overflows (picolibc's on RISC-V), and this link
    # leaves the C library out anyway.
    link_flags = [f for f in cflags if not f.startswith("--specs=")]
    with tempfile.TemporaryDirectory(prefix="ireegen-link-") as tmp:
        mapfile, elf = Path(tmp) / "probe.map", Path(tmp) / "probe.elf"
        cmd = [
            cc,
            *link_flags,
            "-nostdlib",
            "-nostartfiles",
            "-static",
            "-Wl,--gc-sections",
            f"-Wl,--entry={roots[0]}",
            *(f"-Wl,-u,{r}" for r in roots[1:]),
            "-Wl,--unresolved-symbols=ignore-all",
            f"-Wl,-Map={mapfile}",
            *map(str, objects.values()),
            "-o",
            str(elf),
        ]
        _run(cmd)
        text = mapfile.read_text()
        undefined = sorted(
            {line.split()[-1] for line in _run([binutil(cc, "nm"), "-u", str(elf)]).splitlines() if line.strip()}
        )
        frames = call_chain_frames(objdump_tool, elf) if objdump_tool else None
    by_path = {str(p): role for role, p in objects.items()}
    sizes = {role: {"flash": 0, "ram": 0} for role in objects}
    section = None
    for line in text.split("Linker script and memory map", 1)[-1].splitlines():
        m = _MAP_SECTION.match(line)
        if m:
            section = m.group(1)
        m = _MAP_SIZE.match(line)
        if not m or m.group(3) not in by_path:
            continue
        section = m.group(1) or section
        size, role = int(m.group(2), 16), by_path[m.group(3)]
        if section.startswith((".bss", ".tbss")) or section == "COMMON":
            sizes[role]["ram"] += size
        elif section.startswith(".data") and not section.startswith(".data.rel.ro"):
            sizes[role]["ram"] += size
            sizes[role]["flash"] += size
        elif section.startswith((".text", ".rodata", ".data.rel.ro", ".ARM.ex", ".init_array", ".fini_array")):
            sizes[role]["flash"] += size
    return (sizes, undefined, frames) if objdump_tool else (sizes, undefined)


# The C library firmware links, per compiler: newlib-nano for arm-none-eabi
# (the Cortex-M vendors' default); otherwise the compiler's own choice.
C_LIBRARY_SPECS = {"arm-none-eabi-gcc": ("--specs=nano.specs",)}
_FLASH_SECTIONS = re.compile(r"^\.(text|rodata|data|ARM\.ex)")


def c_library_size(cc: str, cflags, symbols) -> int | None:
    """Flash bytes (code, tables, initialized data) that the C library
    functions `symbols` and what they call take, linked from the toolchain's
    own -lm -lc -lgcc with --gc-sections; None without symbols or for a
    hosted toolchain (the program links libc dynamically)."""
    if not symbols or not (cc.endswith("-gcc") and "linux" not in cc):
        return None
    flags = [*cflags, *C_LIBRARY_SPECS.get(Path(cc).name, ())]
    with tempfile.TemporaryDirectory(prefix="ireegen-libc-") as tmp:
        elf = Path(tmp) / "libc.elf"
        cmd = [cc, *flags, "-nostartfiles", "-static", "-Wl,--gc-sections", f"-Wl,--entry={symbols[0]}"]
        cmd += [*(f"-Wl,-u,{s}" for s in symbols), "-Wl,--unresolved-symbols=ignore-all", "-o", str(elf)]
        try:
            linked = subprocess.run(
                [*cmd, "-lm", "-lc", "-lgcc"],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=tool_deadline(),
            )
        except subprocess.TimeoutExpired:
            return None  # not measured, as without a C library
        if linked.returncode != 0:  # a toolchain without its C library: not measured
            return None
        sections = _run([binutil(cc, "size"), "-A", str(elf)]).splitlines()
    return sum(int(line.split()[1]) for line in sections if _FLASH_SECTIONS.match(line))


def symbol_size(nm_tool: str, obj, symbol: str) -> int | None:
    for line in _run([nm_tool, "-S", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == symbol:
            return int(parts[1], 16)
    return None


_PUSH = re.compile(r"\b(push(?:\.w)?|stmdb(?:\.w)?\s+sp!,)\s*\{([^}]*)\}")
_VPUSH = re.compile(r"\bvpush\s*\{([^}]*)\}")
_SUB_SP = re.compile(r"\bsub(?:s|w|\.w)?\s+sp,\s*(?:sp,\s*)?#(\d+)|\baddi\s+sp,\s*sp,\s*-(\d+)")


def _register_count(text: str) -> int:
    n = 0
    for item in text.split(","):
        item = item.strip()
        m = re.match(r"([a-z]+)(\d+)-[a-z]+(\d+)", item)
        n += int(m.group(3)) - int(m.group(2)) + 1 if m else 1
    return n


# A direct branch to another function's first instruction (a call, or a
# tail call): objdump names its target `<symbol>` with no offset at the end
# of the line; literal loads end in `@ (...)` and branches within a
# function carry `+0x..`.
_DIRECT_BRANCH = re.compile(r"\t[a-z][\w.]*\t(?:[\w]+,\s*)*[0-9a-f]+ <([^>+]+)>$")


def dispatch_frames(objdump_tool: str, obj) -> dict:
    """function -> bytes its prologue reserves (Arm: pushes, vpush, sub sp;
    RISC-V: addi sp, sp, -N)."""
    frames, _ = _frames_and_calls(objdump_tool, obj)
    return {k: v for k, v in frames.items() if v}


def call_chain_frames(objdump_tool: str, obj) -> dict:
    """function -> the most stack a call of it takes: its own frame plus the
    deepest of the functions it branches to directly (a cycle's back edge
    counts nothing: generated code and the kernels do not recurse)."""
    frames, calls = _frames_and_calls(objdump_tool, obj)
    depth, open_calls = {}, set()

    def deepest(function: str) -> int:
        # An explicit stack, not recursion: a chain can be longer than
        # Python's recursion limit.
        work = [(function, False)]
        while work:
            f, expanded = work.pop()
            if f in depth:
                continue
            if expanded:
                open_calls.discard(f)
                depth[f] = frames.get(f, 0) + max((depth.get(g, 0) for g in calls.get(f, ())), default=0)
                continue
            open_calls.add(f)
            work.append((f, True))
            work += [(g, False) for g in calls.get(f, ()) if g not in depth and g not in open_calls]
        return depth[function]

    return {f: v for f in frames if (v := deepest(f))}


def _frames_and_calls(objdump_tool: str, obj) -> tuple:
    """({function: bytes its prologue reserves}, {function: functions it
    branches to directly}) from the disassembly of `obj`."""
    frames, calls, current = {}, {}, None
    for line in _run([objdump_tool, "-d", str(obj)]).splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if m:
            current = m.group(1)
            frames[current], calls[current] = 0, set()
            continue
        if current is None:
            continue
        branch = _DIRECT_BRANCH.search(line)
        if branch and branch.group(1) != current:
            calls[current].add(branch.group(1))
        for regex, width in ((_PUSH, 4), (_VPUSH, None)):
            found = regex.search(line)
            if found:
                regs = found.group(found.lastindex)
                size = 8 if width is None and "d" in regs.split("-")[0] else (width or 4)
                frames[current] += _register_count(regs) * size
        found = _SUB_SP.search(line)
        if found:
            frames[current] += int(found.group(1) or found.group(2))
    return frames, {f: {g for g in targets if g in frames} for f, targets in calls.items()}


def _stack_usage(su_files) -> dict:
    usage = {}
    for su in su_files:
        for line in Path(su).read_text().splitlines():
            parts = line.split("\t")
            if len(parts) >= 2 and parts[1].isdigit():
                usage[parts[0].rsplit(":", 1)[-1]] = int(parts[1])
    return usage


def measure(outdir, objects=(), cc: str | None = None, cflags=SIZE_CFLAGS) -> dict:
    """The footprint of an emitted runtimeless directory as a dict."""
    outdir = Path(outdir).resolve()
    manifest = load_manifest(outdir)
    target = manifest["target"]
    toolchain = toolchain_for(
        target["triple"], cc, cpu=target.get("cpu"), need_emulator=False, cpu_features=target.get("features", "")
    )
    name = manifest["name"]
    roles = {f["role"]: outdir / f["path"] for f in manifest["files"]}
    nm_tool, objdump_tool = binutil(toolchain.cc, "nm"), binutil(toolchain.cc, "objdump")
    with tempfile.TemporaryDirectory(prefix="ireegen-size-") as tmp:
        built = {}
        for role in ("runtime-source", "constants-source"):
            source = roles[role]
            obj = Path(tmp) / (source.stem + ".o")
            _run(
                [
                    toolchain.cc,
                    *toolchain.cflags,
                    *cflags,
                    "-fstack-usage",
                    f"-I{outdir}",
                    "-c",
                    str(source),
                    "-o",
                    str(obj),
                ]
            )
            built[role] = obj
        stack = _stack_usage(Path(tmp).glob("*.su"))
        glue, consts = built["runtime-source"], built["constants-source"]
        for obj in objects:  # told apart by what they define
            defined = _run([nm_tool, "--defined-only", str(obj)]).split()
            if f"{name}_initialize" in defined:
                glue = Path(obj)
            elif f"{name}__constants" in defined:
                consts = Path(obj)
        executables = roles["executables-object"]
        roots = [f"{name}_initialize", f"{name}_last_error", *(f["c_symbol"] for f in manifest["functions"])]
        readable = target["triple"].startswith(("thumb", "arm", "riscv"))
        linked, undefined, *kept = linked_sizes(
            toolchain.cc,
            toolchain.cflags,
            {"executables": executables, "glue": glue, "constants": consts},
            roots,
            objdump_tool if readable else None,
        )
        instance = symbol_size(nm_tool, glue, f"{name}__default_instance") or 0
        # The executables' functions the link keeps (the glue's frames are gcc's -fstack-usage).
        executable_functions = set(_run([nm_tool, "--defined-only", str(executables)]).split())
        frames = {f: b for f, b in kept[0].items() if f in executable_functions} if readable else {}
        kernels = kernel_footprint(manifest, nm_tool, executables)
    arena = manifest["runtimeless"]["arena"]["size"]
    plan = manifest["runtimeless"]["arena"]
    glue_stack = max((stack.get(f["c_symbol"], 0) for f in manifest["functions"]), default=0) + stack.get(
        f"{name}__dispatch", 0
    )
    flash = {role: linked[role]["flash"] for role in ("executables", "glue", "constants")}
    ram = {
        "arena": arena,
        "instance": instance,
        "glue_data": linked["glue"]["ram"] + linked["executables"]["ram"],
        "stack": glue_stack + max(frames.values(), default=0) if readable else None,
    }
    return {
        "name": name,
        "target": target,
        "objects": "given" if objects else f"compiled with {' '.join(cflags)}",
        "flash": {**flash, "total": sum(flash.values())},
        "ram": {**ram, "total": sum(v for v in ram.values() if v)},
        # The arena without the staging of unaligned caller tensors, and the
        # most bytes of IREE's transient buffers live at once (None: unknown).
        "arena_detail": {"transients": plan["size_aligned_io"], "lower_bound": plan.get("lower_bound")},
        "stack_detail": {"glue": glue_stack, "deepest_dispatch": max(frames.values(), default=0) if readable else None},
        "c_library": undefined,  # what the model needs from libc/libm/libgcc, not in "total"
        "c_library_flash": c_library_size(toolchain.cc, toolchain.cflags, undefined),
        **({"kernels": kernels} if kernels else {}),  # --kernels (kernels.py)
    }


def table(report: dict) -> str:
    t = report["target"]
    stack = report["ram"]["stack"]
    lines = [
        f"{report['name']} on {t['triple']} ({t['cpu']}), objects {report['objects']}:",
        f"  flash {report['flash']['total']:>9,} B   executables {report['flash']['executables']:,}, "
        f"glue {report['flash']['glue']:,}, constants {report['flash']['constants']:,}",
        f"  RAM   {report['ram']['total']:>9,} B   arena {report['ram']['arena']:,}, instance "
        f"{report['ram']['instance']:,}, glue data {report['ram']['glue_data']:,}, stack "
        + (
            f"{stack:,} (glue {report['stack_detail']['glue']:,} + deepest dispatch "
            f"{report['stack_detail']['deepest_dispatch']:,})"
            if stack is not None
            else "not measured for this target"
        ),
        *kernel_table_lines(report),
        f"  plus from the C library: {', '.join(report['c_library']) or 'nothing'}"
        + (f" ({report['c_library_flash']:,} B of flash)" if report.get("c_library_flash") else ""),
    ]
    detail = report["arena_detail"]
    if detail["lower_bound"]:
        lines.insert(
            3,
            f"  arena {detail['transients']:>9,} B   without staging; liveness lower bound "
            f"{detail['lower_bound']:,} ({detail['transients'] / detail['lower_bound']:.2f}x)",
        )
    return "\n".join(lines)
