"""A user's own kernels in the compile (`--kernels SPEC`, docs/kernels.md).

The match spec (a transform-dialect file) runs in IREE's preprocessing and
rewrites the ops it matches into dispatches of the spec's own
`stream.executable`s, whose functions call external functions marked
`hal.import.static`: the kernels, compiled from C by cbuild/kernels.py for
the model's target.  How they reach the executables depends on the format:

- embedded-elf: at `stream`, every executable that imports a kernel gets a
  `hal.executable.objects` attribute naming the kernels' object for the
  target's format; IREE's linker links it into the ELF.
- static-library: IREE writes one object and refuses a second, so the
  kernel calls stay undefined in it, and ireegen links the kernels' object
  into it afterwards (a relocatable link, the kernels' symbols made local:
  cbuild/kernels.py).

The compile runs inside its work directory with relative names (the match
spec and the object are copied in): no path of the user's machine ends up
in the module.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ireegen.common.errors import CompileError, UsageError
from ireegen.common.resources import doc
from ireegen.config.modes import Config
from ireegen.frontend.kernel_spec import KernelSpec

MATCH_FILE = "kernels.match.mlir"
OBJECT_FILE = "kernels.o"
_IMPORT_ATTR = "hal.import.static"
_NO_UNWIND = "llvm.no_unwind"
_EMBEDDED_FORMAT = re.compile(r'"llvm-cpu", "(embedded-elf-[A-Za-z0-9_]+)"')


@dataclass(frozen=True)
class KernelLink:
    """What compile_model needs of a user's kernels; cbuild/kernels.py makes it."""

    spec: KernelSpec
    # (config, workdir, file name): compiles the kernels for config's target into workdir/file name.
    build_object: Callable[[Config, Path, str], None]
    # (config, static object, kernels object): links the kernels into IREE's static-library object.
    merge_static: Callable[[Config, Path, Path], None]
    # A match spec that rewrites nothing is refused (a user's --kernels);
    # False for a library applied to every model whether it matches or not.
    require_match: bool = True
    # The match spec to use instead of spec.match's file: the int8 library's
    # spec with the convolution forms a model needs (cbuild/int8_kernels.py).
    match_text: str | None = None
    # The int8 library with TFLite Micro's rounding, for a .tflite source:
    # the model is loaded in the form its spec matches (cbuild/int8_kernels.py).
    tflm: bool = False


@dataclass
class KernelCalls:
    """Which dispatch calls which kernel, read off the program at `stream`."""

    dispatches: list = field(default_factory=list)  # [{"executable", "dispatch", "kernels"}]

    def to_json(self) -> list:
        return sorted(self.dispatches, key=lambda d: (d["executable"], d["dispatch"]))


def check_config(config: Config) -> None:
    """Kernels are C: they link into llvm-cpu executables only."""
    if config.target is None:
        raise UsageError(
            f"--kernels: {config.executable_format.name} executables cannot call C kernels; "
            "use --executable-format embedded-elf or static-library"
        )


def compile_flags() -> list:
    return [f"--iree-preprocessing-transform-spec-filename={MATCH_FILE}", "--iree-hal-executable-object-search-path=."]


def stage_inputs(link: KernelLink, config: Config, workdir: Path) -> None:
    """Copies the match spec into workdir and, for embedded ELF, builds the
    kernels' object there (the static-library object is merged afterwards)."""
    check_config(config)
    if link.match_text is not None:
        (workdir / MATCH_FILE).write_text(link.match_text)
    else:
        shutil.copyfile(link.spec.match, workdir / MATCH_FILE)
    if config.executable_format.name == "embedded-elf":
        link.build_object(config, workdir, OBJECT_FILE)


def _str(attr) -> str:
    from iree.compiler import ir

    return ir.StringAttr(attr).value


def _ops(region_owner, name: str):
    for region in region_owner.regions:
        for block in region.blocks:
            for op in block.operations:
                if op.operation.name == name:
                    yield op.operation


def _callees(op) -> set:
    out = set()
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                c = child.operation
                if c.name == "func.call":
                    out.add(_symbol(c.attributes["callee"]))
                out |= _callees(c)
    return out


def _symbol(attr) -> str:
    from iree.compiler import ir

    return ir.FlatSymbolRefAttr(attr).value


def _embedded_formats(module) -> list:
    formats = set()
    for op in _ops(module.operation, "util.global"):
        if "initial_value" in op.attributes:
            formats.update(_EMBEDDED_FORMAT.findall(str(op.attributes["initial_value"])))
    return sorted(formats)


def link_at_stream(module, calls: KernelCalls, config: Config) -> int:
    """The `stream` rewrite: records each dispatch's kernel calls into
    `calls`, marks the kernels as not unwinding and, for embedded ELF,
    attaches the kernels' object to every executable that calls one;
    returns how many executables it changed."""
    from iree.compiler import ir

    embedded = config.executable_format.name == "embedded-elf"
    formats = _embedded_formats(module) if embedded else []
    changed = 0
    for exe in _ops(module.operation, "stream.executable"):
        imports, entries = set(), {}
        for inner in _ops(exe, "builtin.module"):
            for func in _ops(inner, "func.func"):
                if _IMPORT_ATTR in func.attributes:
                    imports.add(_str(func.attributes["sym_name"]))
                    # C does not unwind: without this, LLVM gives each caller
                    # an unwind entry, and on Arm a reference to
                    # __aeabi_unwind_cpp_pr0 that pulls libgcc's unwinder
                    # (and its linker-script symbols) into the firmware.
                    func.attributes[_NO_UNWIND] = ir.UnitAttr.get()
                else:
                    entries[_str(func.attributes["sym_name"])] = _callees(func)
        if not imports:
            continue
        exe_name = _str(exe.attributes["sym_name"])
        for entry, callees in sorted(entries.items()):
            used = sorted(callees & imports)
            if used:
                calls.dispatches.append({"executable": exe_name, "dispatch": entry, "kernels": used})
        if embedded:
            if not formats:
                raise UsageError("--kernels: found no embedded-elf target in the program to link the kernels for")
            objects = ", ".join(
                f'#hal.executable.target<"llvm-cpu", "{f}"> = [#hal.executable.object<{{path = "{OBJECT_FILE}"}}>]'
                for f in formats
            )
            exe.attributes["hal.executable.objects"] = ir.Attribute.parse(f"#hal.executable.objects<{{{objects}}}>")
        changed += 1
    return changed


@contextlib.contextmanager
def explained_failures(link: KernelLink | None):
    """A compile that fails on a kernel's undefined symbol (an embedded ELF
    has no C library) says what a kernel may call."""
    try:
        yield
    except CompileError as e:
        if link is None or "undefined symbol" not in str(e):
            raise
        raise CompileError(
            f"{e}\n{link.spec.path}: a kernel linked into an embedded ELF may call only functions of its own "
            "sources (no C library, no libm); use --executable-format static-library, or write the function "
            f"into the kernel ({doc('kernels.md')})"
        ) from None


def check_matched(link: KernelLink, calls: KernelCalls, source: str) -> None:
    if not calls.dispatches and link.require_match:
        raise UsageError(
            f"{link.spec.path}: its match spec ({link.spec.relative(link.spec.match)}) rewrote no op of {source} "
            f"into a kernel call; nothing would use the kernels ({doc('kernels.md')} says how a match is written)"
        )


def finish_static(link: KernelLink, config: Config, workdir: Path, static_object: str) -> None:
    """Links the kernels into IREE's static-library object."""
    link.build_object(config, workdir, OBJECT_FILE)
    link.merge_static(config, workdir / static_object, workdir / OBJECT_FILE)
    (workdir / OBJECT_FILE).unlink()


def cleanup(workdir: Path) -> None:
    for f in (MATCH_FILE, OBJECT_FILE):
        (workdir / f).unlink(missing_ok=True)
