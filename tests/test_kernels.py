"""--kernels SPEC / CMake KERNELS: users' own C kernels linked into the
executables (docs/kernels.md), with samples/custom_kernel: the spec's
checks, every executable format, a deliberately wrong kernel refused by
verification, Cortex-M4 under qemu, and the CMake build."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES, run_cli

from ireegen.common.errors import UsageError
from ireegen.config.modes import make_config
from ireegen.emit import emit
from ireegen.frontend.kernel_spec import load_kernel_spec

SAMPLE = SAMPLES / "custom_kernel"
MODEL = SAMPLE / "scale.mlir"
SPEC = SAMPLE / "kernels.json"


def _copy_sample(tmp_path: Path) -> Path:
    d = tmp_path / "kernels"
    shutil.copytree(SAMPLE, d)
    return d


def _wrong_kernel(tmp_path: Path) -> Path:
    """The sample with a kernel that adds 1 to every product."""
    d = _copy_sample(tmp_path)
    source = d / "scale_kernel.c"
    text = source.read_text()
    assert "c[i] = a[i] * b[i];" in text
    source.write_text(text.replace("c[i] = a[i] * b[i];", "c[i] = a[i] * b[i] + 1.0f;"))
    return d


def _expected(offset: float) -> np.ndarray:
    """y = x * w + x for x = i / 4 - offset: what samples/custom_kernel/main.c
    (offset 8) and samples/firmware/main.c (offset 2) print."""
    i = np.arange(64, dtype=np.float32)
    x = np.float32(0.25) * i - np.float32(offset)
    w = np.float32(0.5) + i / np.float32(64)
    return x * w + x


# --- the spec: untrusted data, checked before any work --------------------


def _spec(tmp_path: Path, doc, files=("k.c", "m.mlir")) -> Path:
    for f in files:
        (tmp_path / f).write_text("")
    path = tmp_path / "spec.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


GOOD = {"ireegen_kernels": 1, "sources": ["k.c"], "match": "m.mlir"}


@pytest.mark.parametrize(
    "change, message",
    [
        ("{not json", "not a JSON kernel spec"),
        ([1, 2], "a kernel spec is a JSON object"),
        ({"extra": 1}, '"extra": unknown key'),
        ({"ireegen_kernels": 2}, '"ireegen_kernels": expected 1'),
        ({"ireegen_kernels": True}, '"ireegen_kernels": expected 1'),
        ("[" * 100000 + "]" * 100000, "nested too deep"),
        ({"sources": []}, '"sources": expected a non-empty list'),
        ({"sources": "k.c"}, '"sources": expected a non-empty list'),
        ({"sources": ["k.c", "k.c"]}, "k.c is listed twice"),
        ({"sources": ["k.cpp"]}, "k.cpp is not a .c file"),
        ({"sources": ["../k.c"]}, "leads outside the kernel spec's directory"),
        ({"sources": ["/etc/passwd.c"]}, "is absolute"),
        ({"sources": ["missing.c"]}, "is missing"),
        ({"match": "m.txt"}, '"match": m.txt is not a .mlir file'),
        ({"headers": ["k.c"]}, '"headers": k.c is not a .h file'),
        ({"cflags": ["-O2"]}, '"cflags": expected an object'),
        ({"cflags": {"vax": ["-O2"]}}, "vax: not a target family"),
        ({"cflags": {"*": ["-fplugin=evil.so"]}}, '"cflags.*": -fplugin=evil.so: not a C flag'),
        ({"cflags": {"*": ["-o", "x"]}}, "-o: not a C flag"),
        ({"cflags": {"*": ["@args"]}}, "@args: not a C flag"),
        ({"cflags": {"x86_64": ["-I/usr/include"]}}, "-I/usr/include: not a C flag"),
        ({"cflags": {"*": ["-Wl,-T,x"]}}, "-Wl,-T,x: not a C flag"),
        ({"cflags": {"*": ["-DX=$(rm)"]}}, "-DX=$(rm): not a C flag"),
    ],
)
def test_a_bad_spec_is_refused_naming_the_file_and_key(tmp_path, change, message):
    path = _spec(tmp_path, {**GOOD, **change} if isinstance(change, dict) else change)
    with pytest.raises(UsageError) as e:
        load_kernel_spec(path)
    assert str(path) in str(e.value) and message in str(e.value)


def test_a_symlink_out_of_the_directory_is_refused_like_dotdot(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.c").write_text("")
    inner = tmp_path / "spec"
    inner.mkdir()
    os.symlink(outside / "secret.c", inner / "k.c")
    path = _spec(inner, GOOD, files=("m.mlir",))
    with pytest.raises(UsageError, match="leads outside the kernel spec's directory"):
        load_kernel_spec(path)


def test_good_flags_and_the_family_order(tmp_path):
    doc = {**GOOD, "cflags": {"*": ["-O2", "-DN=4", "-ffast-math"], "cortex-m": ["-Os", "-mno-unaligned-access"]}}
    spec = load_kernel_spec(_spec(tmp_path, doc))
    assert spec.flags_for("cortex-m") == ["-O2", "-DN=4", "-ffast-math", "-Os", "-mno-unaligned-access"]
    assert spec.flags_for("x86_64") == ["-O2", "-DN=4", "-ffast-math"]


def test_cli_refuses_in_one_line_before_any_work(tmp_path):
    path = _spec(tmp_path, {**GOOD, "sources": ["../../etc/x.c"]})
    out = tmp_path / "out"
    proc = run_cli("emit", MODEL, "-o", out, "--execution-model", "runtimeless", "--kernels", path)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert str(path) in proc.stderr and '"sources"' in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "doc",
    [
        {**GOOD, "sources": ["a\nb.c"]},
        {**GOOD, "sources": ["\x1b[31mred.c"]},
        {**GOOD, "cflags": {"*": ["-O2\n-fplugin=x"]}},
        {**GOOD, "\u202eevil": 1},
    ],
)
def test_hostile_names_stay_one_line(tmp_path, doc):
    path = _spec(tmp_path, doc)
    proc = run_cli("emit", MODEL, "-o", tmp_path / "out", "--execution-model", "runtimeless", "--kernels", path)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "\x1b" not in proc.stderr and "\u202e" not in proc.stderr and "Traceback" not in proc.stderr


def test_vmvx_executables_cannot_call_c_kernels(tmp_path):
    with pytest.raises(UsageError, match="vmvx executables cannot call C kernels"):
        emit(MODEL, tmp_path / "out", make_config("inline-static"), kernels=SPEC)


def test_a_kernel_that_does_not_compile_shows_the_compilers_diagnostics(tmp_path):
    d = _copy_sample(tmp_path)
    (d / "scale_kernel.c").write_text((d / "scale_kernel.c").read_text() + "\nint f(int x) { int unused; return x; }\n")
    proc = run_cli(
        "emit", MODEL, "-o", tmp_path / "out", "--execution-model", "runtimeless", "--kernels", d / SPEC.name
    )
    assert proc.returncode == 2
    assert "compiling scale_kernel.c for" in proc.stderr and "unused" in proc.stderr
    assert not (tmp_path / "out").exists()


def _calls_libm(tmp_path: Path) -> Path:
    """The sample with a kernel that calls libm (in a second source)."""
    d = _copy_sample(tmp_path)
    (d / "unit.c").write_text(
        "#include <math.h>\n\nfloat scale_unit(float v);\nfloat scale_unit(float v) { return expf(logf(v)); }\n"
    )
    kernel = d / "scale_kernel.c"
    kernel.write_text(
        kernel.read_text()
        .replace("#include <stddef.h>", "#include <stddef.h>\n\nfloat scale_unit(float v);")
        .replace("c[i] = a[i] * b[i];", "c[i] = a[i] * scale_unit(b[i]);")
    )
    spec = json.loads((d / SPEC.name).read_text())
    spec["sources"].append("unit.c")
    (d / SPEC.name).write_text(json.dumps(spec))
    return d


def test_kernels_may_call_libm_in_a_static_library_but_not_in_an_embedded_elf(tmp_path):
    d = _calls_libm(tmp_path)
    result = emit(d / "scale.mlir", tmp_path / "rl", make_config("runtimeless"), kernels=d / SPEC.name)
    assert result.manifest["verification"]["verified"]
    proc = run_cli("emit", d / "scale.mlir", "-o", tmp_path / "elf", "--kernels", d / SPEC.name)
    assert proc.returncode == 1
    assert "undefined symbol: logf" in proc.stderr and "may call only functions of its own sources" in proc.stderr


def test_a_match_spec_that_matches_nothing_is_refused(tmp_path):
    # simple_mul multiplies tensor<4xf32>: the sample's matcher wants 64.
    with pytest.raises(UsageError, match="rewrote no op of simple_mul.mlir into a kernel call"):
        emit(
            SAMPLES / "simple_mul" / "simple_mul.mlir",
            tmp_path / "out",
            make_config("runtimeless"),
            kernels=SPEC,
        )


def test_a_library_that_need_not_match_links_nothing_into_a_model_it_does_not_touch(tmp_path):
    from ireegen.cbuild.kernels import kernel_link

    link = kernel_link(load_kernel_spec(SPEC), require_match=False)
    result = emit(
        SAMPLES / "simple_mul" / "simple_mul.mlir", tmp_path / "out", make_config("runtimeless"), kernels=link
    )
    assert result.manifest["kernels"]["dispatches"] == []
    symbols = subprocess.run(["nm", tmp_path / "out" / "simple_mul_executables.o"], stdout=subprocess.PIPE, text=True)
    assert "scale_mul_f32" not in symbols.stdout


# --- emitting with the kernels --------------------------------------------


def _nm_globals(obj: Path, nm: str = "nm") -> list:
    out = subprocess.run([nm, "-g", "--defined-only", "-P", obj], stdout=subprocess.PIPE, text=True, check=True)
    return sorted(line.split()[0] for line in out.stdout.splitlines())


def test_runtimeless_links_the_kernel_and_keeps_its_symbols_local(tmp_path):
    result = emit(MODEL, tmp_path / "out", make_config("runtimeless"), kernels=SPEC)
    m = result.manifest
    assert m["kernels"]["dispatches"] == [
        {"executable": "scale__scale_mul", "dispatch": "scale_mul", "kernels": ["scale_mul_f32"]}
    ]
    assert m["kernels"]["spec"]["name"] == "kernels.json"
    assert [f["name"] for f in m["kernels"]["files"]] == ["scale.match.mlir", "scale_kernel.c", "scale_kernel.h"]
    assert m["verification"]["verified"] and m["verification"]["ran_the_emitted_code"]
    obj = tmp_path / "out" / "scale_executables.o"
    # The kernel is in, and the only global symbols are the library query and
    # the dispatch function's name for the glue (direct_exports.py).
    symbols = subprocess.run(["nm", obj], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert " t scale_mul_f32" in symbols
    assert _nm_globals(obj) == sorted(
        [*m["runtimeless"]["abi"]["direct_exports"], "scale__module_linked_library_query"]
    )
    # No path of this machine in the object.
    assert str(SAMPLE).encode() not in obj.read_bytes() and str(tmp_path).encode() not in obj.read_bytes()


def test_a_kernel_symbol_that_would_stay_global_is_refused(tmp_path):
    """A common symbol (-fcommon) is not localized by objcopy: refused, not shipped."""
    d = _copy_sample(tmp_path)
    (d / "scale_kernel.c").write_text((d / "scale_kernel.c").read_text() + "int scale_counter;\n")
    spec = json.loads((d / SPEC.name).read_text())
    (d / SPEC.name).write_text(json.dumps({**spec, "cflags": {"*": ["-O2", "-fcommon"]}}))
    with pytest.raises(UsageError, match="symbol scale_counter stayed global in scale_executables.o"):
        emit(d / "scale.mlir", tmp_path / "out", make_config("runtimeless"), kernels=d / SPEC.name)


def test_the_output_does_not_depend_on_where_the_kernels_are(tmp_path):
    outs = []
    for where in ("a", "b/deeper"):
        d = tmp_path / where / "kernels"
        shutil.copytree(SAMPLE, d)
        emit(d / "scale.mlir", d / "out", make_config("runtimeless"), verify=False, kernels=d / SPEC.name)
        outs.append({f.name: f.read_bytes() for f in sorted((d / "out").iterdir())})
    assert outs[0] == outs[1]


def test_the_content_key_covers_the_spec_and_every_kernel_file(tmp_path):
    d = _copy_sample(tmp_path)
    spec = d / SPEC.name
    config = make_config("runtimeless")
    keys = [emit(d / "scale.mlir", tmp_path / "a", config, verify=False).manifest["content_key"]]
    keys.append(emit(d / "scale.mlir", tmp_path / "a", config, verify=False, kernels=spec).manifest["content_key"])
    for f in ("scale_kernel.c", "scale_kernel.h", "scale.match.mlir", "kernels.json"):
        path = d / f
        path.write_text(path.read_text() + ("\n" if f != "kernels.json" else " "))
        keys.append(emit(d / "scale.mlir", tmp_path / "a", config, verify=False, kernels=spec).manifest["content_key"])
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize(
    "mode, fmt", [("async", "embedded-elf"), ("inline-dynamic", "embedded-elf"), ("inline-dynamic", "static-library")]
)
def test_vm_modes_link_the_kernel(tmp_path, mode, fmt):
    result = emit(MODEL, tmp_path / "out", make_config(mode, fmt), kernels=SPEC)
    assert result.manifest["kernels"]["dispatches"][0]["kernels"] == ["scale_mul_f32"]
    assert result.manifest["verification"]["verified"]


def test_async_with_the_kernels_runs_the_kernel(tmp_path):
    """The module calls the kernel: iree-run-module gives x * w + x."""
    from ireegen.check.runners import find_runtime_tools

    emit(MODEL, tmp_path / "out", make_config("async"), kernels=SPEC)
    run_module = find_runtime_tools().run_module
    out = subprocess.run(
        [run_module, f"--module={tmp_path / 'out' / 'scale.vmfb'}", "--device=local-sync", "--function=predict"]
        + ["--input=64xf32=2"],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    ).stdout
    assert "64xf32=3 3.03125 3.0625" in out  # 2 * w + 2, w = 0.5 + i / 64


@pytest.mark.parametrize("mode", ["runtimeless", "async"])
def test_a_wrong_kernel_is_refused_by_verification(tmp_path, mode):
    d = _wrong_kernel(tmp_path)
    out = tmp_path / "out"
    proc = run_cli("emit", d / "scale.mlir", "-o", out, "--execution-model", mode, "--kernels", d / SPEC.name)
    assert proc.returncode == 1, proc.stderr
    assert "computes different numbers from async" in proc.stderr and "mismatch" in proc.stderr
    assert "compute something else than the ops they replace" in proc.stderr
    assert not out.exists()


def test_parity_links_the_kernels_into_every_mode_but_the_reference(tmp_path):
    from ireegen.parity import parity

    report = parity(MODEL, modes=["async", "inline-dynamic", "runtimeless"], kernels=SPEC)
    assert report.modes == ["async", "async+kernels", "inline-dynamic+kernels", "runtimeless+kernels"]
    assert report.agrees and report.exit_code == 0, report.table()
    d = _wrong_kernel(tmp_path)
    proc = run_cli("parity", d / "scale.mlir", "--execution-models", "runtimeless", "--kernels", d / SPEC.name)
    assert proc.returncode == 1
    assert re.search(r"runtimeless\+kernels\s+async .*mismatch", proc.stdout), proc.stdout


needs_cross = pytest.mark.skipif(
    not shutil.which("aarch64-linux-gnu-gcc") or not shutil.which("qemu-aarch64"),
    reason="no aarch64 cross gcc / qemu-user",
)


@needs_cross
def test_aarch64_runtimeless_and_embedded_elf(tmp_path):
    triple = "aarch64-unknown-linux-gnu"
    rl = emit(MODEL, tmp_path / "rl", make_config("runtimeless", target_triple=triple), kernels=SPEC)
    assert rl.manifest["verification"]["ran_the_emitted_code"]  # under qemu-aarch64
    assert _nm_globals(tmp_path / "rl" / "scale_executables.o", "aarch64-linux-gnu-nm") == sorted(
        [*rl.manifest["runtimeless"]["abi"]["direct_exports"], "scale__module_linked_library_query"]
    )
    elf = emit(MODEL, tmp_path / "elf", make_config("async", target_triple=triple), kernels=SPEC)
    assert elf.manifest["kernels"]["dispatches"][0]["kernels"] == ["scale_mul_f32"]


needs_m4 = pytest.mark.skipif(
    not shutil.which("arm-none-eabi-gcc") or not shutil.which("qemu-system-arm"),
    reason="no arm-none-eabi-gcc / qemu-system-arm",
)


@needs_m4
def test_cortex_m4_runs_the_kernel_under_qemu_and_refuses_a_wrong_one(tmp_path):
    """Verification builds the runner with arm-none-eabi-gcc and runs it on
    qemu-system-arm's mps2-an386: the emitted code itself, kernel included."""
    config = make_config("runtimeless", target_cpu="cortex-m4")
    result = emit(MODEL, tmp_path / "out", config, kernels=SPEC)
    assert result.manifest["verification"]["ran_the_emitted_code"]
    nm = _nm_globals(tmp_path / "out" / "scale_executables.o", "arm-none-eabi-nm")
    assert nm == sorted(
        [*result.manifest["runtimeless"]["abi"]["direct_exports"], "scale__module_linked_library_query"]
    )
    # ireegen size names the kernel, its bytes and its caller.
    from ireegen.cbuild.footprint import measure, table

    report = measure(tmp_path / "out")
    [kernel] = report["kernels"]
    assert kernel["kernel"] == "scale_mul_f32" and kernel["dispatches"] == ["scale_mul"] and 0 < kernel["bytes"] < 200
    assert "kernel    scale_mul_f32:" in table(report)
    d = _wrong_kernel(tmp_path)
    proc = run_cli(
        "emit",
        d / "scale.mlir",
        "-o",
        tmp_path / "wrong",
        "--execution-model",
        "runtimeless",
        "--target-cpu",
        "cortex-m4",
        "--kernels",
        d / SPEC.name,
    )
    assert proc.returncode == 1 and "mismatch" in proc.stderr, proc.stderr


@needs_m4
def test_firmware_sample_with_the_kernel_runs_on_cortex_m4(tmp_path):
    """samples/firmware cross-built by CMake with KERNELS: arm-none-eabi-gcc,
    the sample's startup and linker script, run on qemu's mps2-an386."""
    from test_firmware import _build_and_run_firmware_sample, _configure_firmware_sample, _require_cmake

    _require_cmake()
    build = tmp_path / "build"
    _configure_firmware_sample(build, "cortex-m4", f"-DMODEL={MODEL}", f"-DKERNELS={SPEC}")
    log, numbers = _build_and_run_firmware_sample(build, "cortex-m4")
    assert "kernel    scale_mul_f32:" in log  # the build-time footprint names it
    np.testing.assert_allclose(numbers, _expected(2), rtol=1e-6)


# --- CMake: KERNELS -------------------------------------------------------


@pytest.mark.skipif(not shutil.which("cmake") or not shutil.which("ninja"), reason="cmake/ninja not installed")
def test_sample_builds_with_cmake_and_rebuilds_when_a_kernel_file_changes(tmp_path):
    d = _copy_sample(tmp_path)
    build = tmp_path / "build"
    cmake_dir = run_cli("--cmake-dir").stdout.strip()
    subprocess.run(
        ["cmake", "-G", "Ninja", "-S", d, "-B", build, f"-Direegen_DIR={cmake_dir}"]
        + [f"-DIREEGEN_PYTHON_EXECUTABLE={sys.executable}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=True,
    )

    def build_log() -> str:
        proc = subprocess.run(
            ["cmake", "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False
        )
        assert proc.returncode == 0, proc.stdout
        return proc.stdout

    assert "ireegen: generating scale" in build_log()
    out = subprocess.run([build / "scale_demo"], stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    np.testing.assert_allclose(np.array(out, np.float32), _expected(8), rtol=1e-6)
    assert "generating" not in build_log()
    for f in ("scale_kernel.c", "scale_kernel.h", "scale.match.mlir", "kernels.json"):
        (d / f).write_text((d / f).read_text() + "\n")
        assert "ireegen: generating scale" in build_log(), f
        assert "generating" not in build_log()
    # A source added to the spec becomes a dependency (the spec re-configures).
    (d / "unit.c").write_text("float scale_unit(float v);\nfloat scale_unit(float v) { return v; }\n")
    spec = json.loads((d / SPEC.name).read_text())
    (d / SPEC.name).write_text(json.dumps({**spec, "sources": [*spec["sources"], "unit.c"]}))
    assert "ireegen: generating scale" in build_log()
    (d / "unit.c").write_text((d / "unit.c").read_text() + "\n")
    assert "ireegen: generating scale" in build_log()
    assert "generating" not in build_log()


def test_cmake_refuses_a_bad_kernels_spec_at_configure_time(tmp_path):
    from conftest import build_generate_only

    path = _spec(tmp_path, {**GOOD, "sources": ["../x.c"]})
    proc = build_generate_only(
        tmp_path, tmp_path / "build", f"ireegen_add_model(model SRC {MODEL} KERNELS {path} EXECUTION_MODEL runtimeless)"
    )
    assert proc.returncode != 0
    said = " ".join(proc.stdout.split())  # CMake wraps the message
    assert '"sources"' in said and "leads outside the kernel spec's directory" in said
