"""--data-format: the runtimeless constants and the vmfb module bytes as an
assembler source that .incbin's a binary file (asm, the default), or as a C
array (c).  The objects are read back with readelf: the symbol, its size
and alignment, its read-only section and its bytes must be what the C form
gives and what the blob / the .vmfb holds, for the host and the cross
targets `ireegen run` supports; programs that use them run (under qemu-user
for the cross targets)."""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest
from conftest import SAMPLES, run_cli, sample_cases

from ireegen.cbuild.native_run import STRICT_CFLAGS, build_runner
from ireegen.config.modes import make_config
from ireegen.emit import emit

MLP = SAMPLES / "mlp" / "mlp.mlir"
# name -> (C compiler, flags, program prefix); only those installed run.
TOOLCHAINS = {
    "host": ("cc", (), ()),
    "aarch64": ("aarch64-linux-gnu-gcc", ("-static",), ("qemu-aarch64",)),
    "riscv64": ("riscv64-linux-gnu-gcc", ("-static",), ("qemu-riscv64",)),
    # 32-bit ELF, size_t of 4 bytes (assembling and reading back only).
    "i386": ("cc", ("-m32",), None),
    "cortex-m4": ("arm-none-eabi-gcc", ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"), None),
}
SIZE_T_BYTES = {"i386": 4, "cortex-m4": 4}


def _toolchain(name):
    cc, flags, runner = TOOLCHAINS[name]
    if not shutil.which(cc) or (runner and not shutil.which(runner[0])):
        pytest.skip(f"{cc} / {runner} not installed")
    return cc, flags, runner


def sections(obj):
    """name -> (file offset, size, flags, alignment) from readelf."""
    out = subprocess.run(["readelf", "-SW", obj], stdout=subprocess.PIPE, text=True, check=True).stdout
    found = {}
    for m in re.finditer(
        r"\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+([A-Z]*)\s+\d+\s+\d+\s+(\d+)", out
    ):
        found[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16), m.group(4), int(m.group(5)))
    return found


def symbols(obj):
    """name -> (value, size, type, binding, section index) from readelf."""
    out = subprocess.run(["readelf", "-sW", obj], stdout=subprocess.PIPE, text=True, check=True).stdout
    found = {}
    for m in re.finditer(r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+(\w+)\s+(\w+)\s+\w+\s+(\w+)\s+(\S+)$", out, re.M):
        found[m.group(6)] = (int(m.group(1), 16), int(m.group(2)), m.group(3), m.group(4), m.group(5))
    return found


def compile_object(cc, flags, source, outdir, obj, cwd, extra=()):
    """Compiles from `cwd`, which is not `outdir`: the blob is found through
    -I alone, as in a build tree."""
    subprocess.run(
        [cc, *flags, *STRICT_CFLAGS, "-fdata-sections", *extra, f"-I{outdir}", "-c", str(source), "-o", str(obj)],
        check=True,
        cwd=cwd,
    )


def check_data_object(obj, symbol, data, alignment, size_symbol=None, size_t_bytes=8):
    """The object defines `symbol` = `data`, global, aligned, read-only."""
    secs, syms = sections(obj), symbols(obj)
    section = f".rodata.{symbol}"
    offset, size, flags, align = secs[section]
    assert flags == "A", f"{section} must be read-only data (alloc, not write/exec): {flags}"
    assert align == alignment and size == max(len(data), 1)
    value, sym_size, kind, binding, _ = syms[symbol]
    assert (kind, binding, sym_size, value % alignment) == ("OBJECT", "GLOBAL", max(len(data), 1), 0)
    raw = obj.read_bytes()
    assert raw[offset + value : offset + value + len(data)] == data
    if obj.name.endswith(".S.o") or ".note.GNU-stack" in secs:  # (bare-metal gcc writes none for C)
        assert secs[".note.GNU-stack"][2] == "", "no executable stack"
    if size_symbol:
        offset, size, flags, _ = secs[f".rodata.{size_symbol}"]
        assert flags == "A" and syms[size_symbol][1] == size == size_t_bytes
        assert int.from_bytes(raw[offset : offset + size], "little") == len(data)


@pytest.fixture(scope="module")
def emitted(tmp_path_factory):
    """(execution model, data format) -> output directory of the MLP sample."""
    cache = {}

    def get(mode, data_format):
        if (mode, data_format) not in cache:
            out = tmp_path_factory.mktemp(f"{mode}-{data_format}") / "out"
            emit(MLP, out, make_config(mode, data_format=data_format), name="mlp")
            cache[mode, data_format] = out
        return cache[mode, data_format]

    return get


def test_files_and_manifest_say_which_form(emitted):
    for mode, fmt, expected in [
        ("runtimeless", "asm", {"constants-source": "mlp_constants.S", "constants-blob": "mlp_constants.bin"}),
        ("runtimeless", "c", {"constants-source": "mlp_constants.c"}),
        ("async", "asm", {"module-data-source": "mlp_module_data.S", "module": "mlp.vmfb"}),
        ("async", "c", {"module-data-source": "mlp_module_data.c", "module": "mlp.vmfb"}),
    ]:
        out = emitted(mode, fmt)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["data_format"] == fmt
        roles = {f["role"]: f["path"] for f in manifest["files"]}
        assert {r: roles.get(r) for r in expected} == expected, (mode, fmt, roles)
        assert "constants-blob" in roles if (mode, fmt) == ("runtimeless", "asm") else "constants-blob" not in roles
        on_disk = sorted(p.name for p in out.iterdir())
        assert on_disk == sorted([*roles.values(), "manifest.json"])
        for f in manifest["files"]:
            import hashlib

            assert hashlib.sha256((out / f["path"]).read_bytes()).hexdigest() == f["sha256"], f["path"]
            if f["path"].endswith((".S", ".c", ".h")):
                text = (out / f["path"]).read_text()
                assert text.startswith("// DO NOT EDIT"), f["path"]
                assert str(out) not in text, f"{f['path']} names the output directory"
        if fmt == "asm":
            source = (out / expected.get("constants-source", expected.get("module-data-source"))).read_text()
            assert '.incbin "mlp' in source and "0x" not in source


@pytest.mark.parametrize("toolchain", list(TOOLCHAINS))
def test_constants_object_matches_the_c_array(emitted, tmp_path, toolchain):
    """Runtimeless constants: NAME_constants.S and NAME_constants.c give
    the same symbol, section, alignment and bytes."""
    cc, flags, _ = _toolchain(toolchain)
    asm_out, c_out = emitted("runtimeless", "asm"), emitted("runtimeless", "c")
    data = (asm_out / "mlp_constants.bin").read_bytes()
    manifest = json.loads((asm_out / "manifest.json").read_text())
    assert len(data) == manifest["runtimeless"]["constants"]["size"] > 0
    alignment = max([64] + [c["alignment"] for c in manifest["runtimeless"]["constants"]["items"]])
    for source, out in ((asm_out / "mlp_constants.S", asm_out), (c_out / "mlp_constants.c", c_out)):
        obj = tmp_path / f"{source.name}.o"
        try:
            compile_object(cc, flags, source, out, obj, tmp_path)
        except subprocess.CalledProcessError:
            if toolchain == "i386" and source.suffix == ".c":
                pytest.skip("no 32-bit C headers (gcc-multilib)")
            raise
        check_data_object(obj, "mlp__constants", data, alignment)


@pytest.mark.parametrize("toolchain", list(TOOLCHAINS))
def test_module_data_object_holds_the_vmfb_and_runs(emitted, tmp_path, toolchain):
    """VM mode (async, vmfb): NAME_module_data.S assembles into the .vmfb's
    bytes, 64-byte aligned, with NAME_module_size; a program using the
    runtime's own declarations sees them (run under qemu-user off the host)."""
    cc, flags, runner = _toolchain(toolchain)
    out = emitted("async", "asm")
    vmfb = (out / "mlp.vmfb").read_bytes()
    obj = tmp_path / "mlp_module_data.S.o"
    compile_object(cc, flags, out / "mlp_module_data.S", out, obj, tmp_path)
    check_data_object(obj, "mlp_module_data", vmfb, 64, "mlp_module_size", SIZE_T_BYTES.get(toolchain, 8))
    assert "extern const uint8_t mlp_module_data[];" in (out / "mlp.c").read_text()
    if runner is None:
        return
    main = tmp_path / "main.c"
    main.write_text(
        "#include <stdint.h>\n#include <stdio.h>\n"
        "extern const uint8_t mlp_module_data[];\nextern const size_t mlp_module_size;\n"
        'int main(int argc, char** argv) {\n  (void)argc;\n  FILE* f = fopen(argv[1], "wb");\n'
        "  fwrite(mlp_module_data, 1, mlp_module_size, f);\n  fclose(f);\n"
        '  printf("%u\\n", (unsigned)((uintptr_t)mlp_module_data % 64));\n  return 0;\n}\n'
    )
    program = tmp_path / "program"
    subprocess.run([cc, *flags, *STRICT_CFLAGS, str(main), str(obj), "-o", str(program)], check=True)
    dump = tmp_path / "dump.bin"
    printed = subprocess.run([*runner, program, dump], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert printed.strip() == "0" and dump.read_bytes() == vmfb


def test_module_data_c_fallback_matches(emitted, tmp_path):
    out = emitted("async", "c")
    obj = tmp_path / "mlp_module_data.o"
    compile_object("cc", (), out / "mlp_module_data.c", out, obj, tmp_path)
    check_data_object(obj, "mlp_module_data", (out / "mlp.vmfb").read_bytes(), 64, "mlp_module_size")


def test_section_macro_moves_the_bytes(emitted, tmp_path):
    """NAME_CONSTANTS_SECTION (a quoted name) places the constants, e.g. in
    external flash."""
    out = emitted("runtimeless", "asm")
    obj = tmp_path / "c.o"
    compile_object("cc", (), out / "mlp_constants.S", out, obj, tmp_path, ['-DMLP_CONSTANTS_SECTION=".qspi_weights"'])
    secs, syms = sections(obj), symbols(obj)
    assert ".rodata.mlp__constants" not in secs and secs[".qspi_weights"][2:] == ("A", 64)
    assert syms["mlp__constants"][1] == len((out / "mlp_constants.bin").read_bytes())


def test_a_blob_of_another_size_is_an_assembler_error(emitted, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(emitted("runtimeless", "asm"), out)
    (out / "mlp_constants.bin").write_bytes(b"\0" * 100)
    proc = subprocess.run(
        ["cc", f"-I{out}", "-c", str(out / "mlp_constants.S"), "-o", str(tmp_path / "x.o")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.returncode != 0 and "mlp_constants.bin is not the 512-byte file" in proc.stdout


@pytest.mark.parametrize("data_format", ["asm", "c"])
def test_runtimeless_runs_in_both_forms(emitted, tmp_path, data_format):
    _, function, inputs, expected = sample_cases()["mlp"]
    runner = build_runner(emitted("runtimeless", data_format), tmp_path / "build")
    got, _ = runner.call(function, inputs)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)


def test_run_cli_under_qemu_aarch64(tmp_path):
    _toolchain("aarch64")
    out = tmp_path / "out"
    proc = run_cli(
        "emit", MLP, "-o", out, "--execution-model", "runtimeless", "--target-triple", "aarch64-unknown-linux-gnu"
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "mlp_constants.S").is_file() and (out / "mlp_constants.bin").is_file()
    _, function, inputs, expected = sample_cases()["mlp"]
    np.save(tmp_path / "x.npy", inputs[0])
    # From another working directory: the assembler finds the blob by -I.
    proc = run_cli(
        "run",
        out,
        "--function",
        function,
        f"--input=@{tmp_path / 'x.npy'}",
        f"--output=@{tmp_path / 'y.npy'}",
        cwd=SAMPLES,
    )
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "args,message",
    [
        (["--data-format", "bin"], "--data-format 'bin': unknown data format; choose one of asm, c"),
        (["--module-format", "emitc", "--data-format", "asm"], "an emitc module has no module data file"),
    ],
)
def test_bad_data_format_is_a_usage_error(tmp_path, args, message):
    proc = run_cli("emit", MLP, "-o", tmp_path / "out", *args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_default_form_follows_the_target():
    assert make_config("runtimeless").data_format == "asm"
    assert make_config("runtimeless", target_triple="thumbv7em-none-eabihf").data_format == "asm"
    assert make_config("runtimeless", target_triple="x86_64-pc-windows-msvc").data_format == "c"
    assert make_config("async", module_format="emitc").data_format is None


def _macho_section(obj, name: str) -> tuple:
    """(file offset, size, alignment) of section `name` in a 64-bit Mach-O
    object (LC_SEGMENT_64 load commands)."""
    import struct

    raw = obj.read_bytes()
    assert struct.unpack_from("<I", raw)[0] == 0xFEEDFACF, "not a 64-bit Mach-O object"
    ncmds = struct.unpack_from("<I", raw, 16)[0]
    at = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", raw, at)
        if cmd == 0x19:  # LC_SEGMENT_64
            nsects = struct.unpack_from("<I", raw, at + 64)[0]
            for i in range(nsects):
                s = at + 72 + 80 * i
                if raw[s : s + 16].rstrip(b"\0").decode() == name:
                    sec_size, offset, align = struct.unpack_from("<QII", raw, s + 40)
                    return offset, sec_size, 1 << align
        at += size
    raise AssertionError(f"no section {name}")


ZIG_TARGETS = ["x86_64-macos", "aarch64-macos", "x86_64-windows-gnu", "x86-windows-gnu"]


@pytest.mark.parametrize("target", ZIG_TARGETS)
def test_mach_o_and_coff_objects(emitted, tmp_path, target):
    """The same .S assembled by clang (the `ziglang` wheel's `zig cc`) for
    macOS and Windows (MinGW): underscore-prefixed names where the platform
    wants them, read-only sections, 64-byte alignment, the .vmfb's bytes."""
    import importlib.util
    import sys

    if importlib.util.find_spec("ziglang") is None:
        pytest.skip("the ziglang wheel is not installed")
    out = emitted("async", "asm")
    vmfb = (out / "mlp.vmfb").read_bytes()
    obj = tmp_path / "module_data.o"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ziglang",
            "cc",
            "-target",
            target,
            f"-I{out}",
            "-c",
            str(out / "mlp_module_data.S"),
            "-o",
            str(obj),
        ],
        check=True,
        cwd=tmp_path,
    )
    prefix = "_" if target.startswith(("x86-", "x86_64-macos", "aarch64-macos")) else ""
    raw = obj.read_bytes()
    if target.endswith("macos"):
        offset, size, align = _macho_section(obj, "__const")
        assert align == 64 and raw[offset : offset + len(vmfb)] == vmfb
        assert b"\0_mlp_module_data\0" in raw and b"\0_mlp_module_size\0" in raw
        return
    headers = subprocess.run(["objdump", "-h", "-t", str(obj)], stdout=subprocess.PIPE, text=True, check=True).stdout
    m = re.search(r"\.rdata\s+([0-9a-f]+)\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+2\*\*(\d+)\s*\n\s*(.*)", headers)
    assert m and int(m.group(3)) == 6 and "READONLY" in m.group(4) and "CODE" not in m.group(4), headers
    offset = int(m.group(2), 16)
    assert raw[offset : offset + len(vmfb)] == vmfb
    names = re.findall(r"\(scl\s+2\).*0x[0-9a-f]+ (\w+)$", headers, re.M)
    assert sorted(names) == [f"{prefix}mlp_module_data", f"{prefix}mlp_module_size"], headers
