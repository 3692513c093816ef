"""`ireegen size OUTDIR`: a runtimeless model's flash and RAM on its target,
read with the target toolchain's `size` and `objdump` from the built objects
(CMake's, or compiled here at -Os with the target's flags).

Flash: the executables' text+rodata, the glue (NAME.c), the constants.
RAM: the arena, the instance, the glue's other data, and the stack of one
call: the glue's frames from gcc's -fstack-usage plus the deepest dispatch
function's frame, read from its prologue (Arm targets)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from .errors import UsageError
from .native_run import load_manifest
from .toolchains import toolchain_for

FLASH_SECTIONS = re.compile(r"^\.(text|rodata|data|ARM\.exidx|ARM\.extab|init_array|fini_array)")
RAM_SECTIONS = re.compile(r"^\.(data|bss)")
SIZE_CFLAGS = ("-Os", "-std=c11", "-ffunction-sections", "-fdata-sections")


def _tool(cc: str, name: str) -> str:
    return cc[: -len("gcc")] + name if cc.endswith("gcc") else name


def _run(cmd) -> str:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise UsageError(f"{' '.join(map(str, cmd))}: {proc.stdout.strip()}")
    return proc.stdout


def section_sizes(size_tool: str, obj) -> dict:
    """section name -> bytes (`size -A`)."""
    sizes = {}
    for line in _run([size_tool, "-A", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            sizes[parts[0]] = sizes.get(parts[0], 0) + int(parts[1])
    return sizes


def _flash(sections: dict) -> int:
    return sum(v for k, v in sections.items() if FLASH_SECTIONS.match(k))


def _ram(sections: dict, skip=()) -> int:
    return sum(v for k, v in sections.items() if RAM_SECTIONS.match(k) and not any(s in k for s in skip))


def symbol_size(nm_tool: str, obj, symbol: str) -> int | None:
    for line in _run([nm_tool, "-S", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == symbol:
            return int(parts[1], 16)
    return None


_PUSH = re.compile(r"\b(push(?:\.w)?|stmdb(?:\.w)?\s+sp!,)\s*\{([^}]*)\}")
_VPUSH = re.compile(r"\bvpush\s*\{([^}]*)\}")
_SUB_SP = re.compile(r"\bsub(?:s|w|\.w)?\s+sp,\s*(?:sp,\s*)?#(\d+)")


def _register_count(text: str) -> int:
    n = 0
    for item in text.split(","):
        item = item.strip()
        m = re.match(r"([a-z]+)(\d+)-[a-z]+(\d+)", item)
        n += int(m.group(3)) - int(m.group(2)) + 1 if m else 1
    return n


def dispatch_frames(objdump_tool: str, obj) -> dict:
    """function -> bytes its prologue reserves (pushes, vpush, sub sp), for
    Arm code; {} for other architectures."""
    frames, current = {}, None
    for line in _run([objdump_tool, "-d", str(obj)]).splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if m:
            current = m.group(1)
            frames[current] = 0
            continue
        if current is None:
            continue
        for regex, width in ((_PUSH, 4), (_VPUSH, None)):
            found = regex.search(line)
            if found:
                regs = found.group(found.lastindex)
                size = 8 if width is None and "d" in regs.split("-")[0] else (width or 4)
                frames[current] += _register_count(regs) * size
        found = _SUB_SP.search(line)
        if found:
            frames[current] += int(found.group(1))
    return {k: v for k, v in frames.items() if v}


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
    toolchain = toolchain_for(target["triple"], cc, cpu=target.get("cpu"), need_emulator=False)
    name = manifest["name"]
    roles = {f["role"]: outdir / f["path"] for f in manifest["files"]}
    size_tool, nm_tool, objdump_tool = (_tool(toolchain.cc, t) for t in ("size", "nm", "objdump"))
    with tempfile.TemporaryDirectory(prefix="ireegen-size-") as tmp:
        built = {}
        for role in ("runtime-source", "constants-source"):
            source = roles[role]
            obj = Path(tmp) / (source.stem + ".o")
            _run([toolchain.cc, *toolchain.cflags, *cflags, "-fstack-usage", f"-I{outdir}", "-c", str(source),
                  "-o", str(obj)])
            built[role] = obj
        stack = _stack_usage(Path(tmp).glob("*.su"))
        given = {Path(o).name: Path(o) for o in objects}
        glue = next((o for n, o in given.items() if n.startswith(f"{name}.c")), built["runtime-source"])
        consts = next((o for n, o in given.items() if n.startswith(f"{name}_constants.")), built["constants-source"])
        executables = roles["executables-object"]
        exe_sections, glue_sections, const_sections = (section_sizes(size_tool, o) for o in (executables, glue, consts))
        instance = symbol_size(nm_tool, glue, f"{name}__default_instance") or 0
        frames = dispatch_frames(objdump_tool, executables) if target["triple"].startswith(("thumb", "arm")) else {}
    arena = manifest["runtimeless"]["arena"]["size"]
    entry_points = [f["name"] for f in manifest["functions"]]
    glue_stack = max((stack.get(f"{name}_{fn}", 0) for fn in entry_points), default=0) + stack.get(
        f"{name}__dispatch", 0)
    flash = {"executables": _flash(exe_sections), "glue": _flash(glue_sections), "constants": _flash(const_sections)}
    ram = {
        "arena": arena,
        "instance": instance,
        "glue_data": _ram(glue_sections, skip=("default_arena", "default_instance")),
        "stack": glue_stack + max(frames.values(), default=0) if frames else None,
    }
    return {
        "name": name,
        "target": target,
        "objects": "given" if objects else f"compiled with {' '.join(cflags)}",
        "flash": {**flash, "total": sum(flash.values())},
        "ram": {**ram, "total": sum(v for v in ram.values() if v)},
        "stack_detail": {"glue": glue_stack, "deepest_dispatch": max(frames.values(), default=None)},
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
        + (f"{stack:,} (glue {report['stack_detail']['glue']:,} + deepest dispatch "
           f"{report['stack_detail']['deepest_dispatch']:,})" if stack is not None else "not measured for this target"),
    ]
    return "\n".join(lines)
