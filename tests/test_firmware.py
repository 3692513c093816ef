"""Bare-metal Cortex-M: the core table and its flags; corpus models built with
arm-none-eabi-gcc and run under qemu-system-arm against their numpy
references; parity and `ireegen size` for an MCU target; the firmware
sample built by CMake for two cores and run."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES, run_cli, sample_cases
from test_parity import corpus
from test_runtimeless import ACCEPTED

from ireegen.cbuild.native_run import build_runner
from ireegen.check.runners import RunError
from ireegen.common.errors import UsageError
from ireegen.config.cores import CORES
from ireegen.config.modes import make_config
from ireegen.emit import emit

TOOLS = {"arm": ("arm-none-eabi-gcc", "qemu-system-arm"), "riscv": ("riscv64-unknown-elf-gcc", "qemu-system-riscv32")}
PACKAGES = {
    "arm": "gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm",
    "riscv": "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc",
}


def _require_tools(family="arm"):
    missing = [t for t in TOOLS[family] if shutil.which(t) is None]
    if family == "riscv" and not Path("/usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs").is_file():
        missing.append("picolibc")
    if missing:
        if os.environ.get("IREEGEN_REQUIRE_CROSS"):
            pytest.fail(f"IREEGEN_REQUIRE_CROSS is set but {', '.join(missing)} is missing")
        pytest.skip(f"{', '.join(missing)} not installed (apt-get install {PACKAGES[family]})")


@pytest.mark.parametrize("cpu", sorted(CORES))
def test_target_cpu_picks_triple_and_float_abi(cpu):
    core = CORES[cpu]
    flags = make_config("runtimeless", target_cpu=cpu).compile_flags("/o.o")
    hard = core.has_fpu
    assert f"--iree-llvmcpu-target-triple={core.arch}-unknown-none-eabi{'hf' if hard else ''}" in flags
    assert f"--iree-llvmcpu-target-float-abi={'hard' if hard else 'soft'}" in flags
    assert f"--iree-llvmcpu-target-cpu={cpu}" in flags


def test_inconsistent_cortex_m_targets_are_refused():
    for triple, cpu, needle in (
        ("thumbv7m-none-eabihf", "cortex-m3", "has no FPU"),
        ("thumbv7em-none-eabihf", "cortex-m3", "implements thumbv7m"),
        ("thumbv7em-none-eabihf", "cortex-a53", "not a Cortex-M core"),
    ):
        with pytest.raises(UsageError, match=needle):
            make_config("runtimeless", target_triple=triple, target_cpu=cpu)
    # eabi on a core with an FPU is softfp: FP instructions, integer-register calls.
    target = make_config("runtimeless", target_triple="thumbv7em-none-eabi", target_cpu="cortex-m4").target
    assert target.float_abi == "soft" and CORES["cortex-m4"].gcc_flags(target.triple)[2] == "-mfloat-abi=softfp"


def test_cmake_toolchain_file_matches_the_core_table(tmp_path):
    if shutil.which("cmake") is None:
        pytest.skip("cmake not installed")
    toolchain = run_cli("--cmake-dir").stdout.strip() + "/toolchains/arm-none-eabi.cmake"
    for cpu, core in CORES.items():
        script = tmp_path / "print.cmake"
        script.write_text(
            f'cmake_policy(SET CMP0126 NEW)\nset(IREEGEN_CORTEX_M_CPU {cpu})\ninclude("{toolchain}")\n'
            'message("${IREEGEN_TARGET_TRIPLE}|${IREEGEN_TARGET_CPU}|${IREEGEN_CORTEX_M_FLAGS}")\n'
        )
        out = subprocess.run(["cmake", "-P", str(script)], stderr=subprocess.PIPE, text=True, check=True).stderr
        triple, got_cpu, flags = out.strip().split("|")
        assert (triple, got_cpu) == (core.default_triple, cpu)
        assert flags.split() == list(core.gcc_flags(core.default_triple))


# Every accepted corpus model on the Cortex-M4F; two models on every other core.
CASES = [("cortex-m4", n) for n in ACCEPTED] + [
    (cpu, n) for cpu in sorted(set(CORES) - {"cortex-m4", "cortex-m0"}) for n in ("mlp", "cnn")
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cache = {}

    def get(name, cpu):
        if (name, cpu) not in cache:
            base = tmp_path_factory.mktemp(f"{name}-{cpu}")
            emit(corpus.CASES[name].path, base / "out", make_config("runtimeless", target_cpu=cpu), name=name)
            cache[name, cpu] = build_runner(base / "out", base / "build")
        return cache[name, cpu]

    return get


@pytest.mark.parametrize("cpu,name", CASES)
def test_corpus_model_runs_on_the_board(built, cpu, name):
    _require_tools()
    case = corpus.CASES[name]
    runner = built(name, cpu)
    assert runner.toolchain.bare_metal and CORES[cpu].qemu_machine in runner.toolchain.emulator
    for call in case.calls:
        out, _ = runner.call(call.function, call.inputs, misaligned=(name == "cnn"))
        # Other targets may contract multiply-adds differently.
        for actual, expected in zip(out, call.expected):
            corpus.compare(actual, expected, max(case.rtol, 1e-4), max(case.atol, 1e-4))


@pytest.mark.parametrize("features", ["+m,+a,+c", "+m,+a,+f,+c"])
@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_rv32_runs_on_qemu_virt(tmp_path, name, features):
    """rv32imac (ilp32) and rv32imafc (ilp32f) with picolibc's semihosting."""
    _require_tools("riscv")
    case = corpus.CASES[name]
    config = make_config("runtimeless", target_triple="riscv32-unknown-elf", target_cpu_features=features)
    assert config.target.abi == ("ilp32f" if "+f" in features else "ilp32")
    emit(case.path, tmp_path / "out", config, name=name)
    runner = build_runner(tmp_path / "out", tmp_path / "build")
    assert runner.toolchain.emulator[0] == "qemu-system-riscv32"
    for call in case.calls:
        out, _ = runner.call(call.function, call.inputs, misaligned=True)
        for actual, expected in zip(out, call.expected):
            corpus.compare(actual, expected, max(case.rtol, 1e-4), max(case.atol, 1e-4))


def test_rv32_size_of_a_model_past_picolibcs_default_flash(tmp_path):
    """`ireegen size` links without the C library's specs: picolibc's brings
    a linker script with 64 KiB of flash, which an 80 KB model overflowed."""
    _require_tools("riscv")
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    from ireegen.cbuild.footprint import measure

    w = np.random.default_rng(5).standard_normal((160, 128)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "big",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 160])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 128])],
        [numpy_helper.from_array(w, "w")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "big.onnx")
    emit(tmp_path / "big.onnx", tmp_path / "out", make_config("runtimeless", target_triple="riscv32-unknown-elf"))
    report = measure(tmp_path / "out")
    assert report["flash"]["constants"] >= w.nbytes and report["flash"]["total"] > 64 * 1024, report["flash"]


def test_failures_and_exit_status_come_back_over_semihosting(built):
    _require_tools()
    runner = built("cnn", "cortex-m4")
    call = corpus.CASES["cnn"].calls[0]
    with pytest.raises(RunError, match="is not aligned"):
        runner.call(call.function, call.inputs, aligned_io_arena=True, misaligned=True)
    # --emulator picks another board: Cortex-M4F code on the M3 of mps2-an385 faults.
    wrong = build_runner(
        runner.outdir, runner.build_dir / "m3", emulator="qemu-system-arm -M mps2-an385 -nographic -monitor none"
    )
    with pytest.raises(RunError, match="HardFault"):
        wrong.call(call.function, call.inputs)


def test_parity_and_size_cli_for_a_bare_metal_target(tmp_path):
    _require_tools()
    model = corpus.CASES["mlp"].path
    proc = run_cli(
        "parity",
        model,
        "--execution-models",
        "runtimeless",
        "--target-cpu",
        "cortex-m33",
        "--rtol",
        "1e-4",
        "--atol",
        "1e-5",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "runtimeless" in proc.stdout and "ok" in proc.stdout

    out = tmp_path / "out"
    assert (
        run_cli("emit", model, "-o", out, "--execution-model", "runtimeless", "--target-cpu", "cortex-m4").returncode
        == 0
    )
    proc = run_cli("size", out, "--json", tmp_path / "size.json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "size.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    assert report["flash"]["constants"] == manifest["runtimeless"]["constants"]["size"]
    assert report["flash"]["executables"] > 0 and report["flash"]["glue"] > 0
    assert report["ram"]["arena"] == manifest["runtimeless"]["arena"]["size"]
    assert report["ram"]["stack"] and report["ram"]["instance"] > 0
    assert f"flash {report['flash']['total']:>9,} B" in proc.stdout
    # The C library's share is measured from newlib-nano; the glue compares
    # export names itself (no strcmp) and IREE leaves out its reflection tables.
    assert "strcmp" not in report["c_library"]
    assert report["c_library"] and report["c_library_flash"] > 0
    assert f"({report['c_library_flash']:,} B of flash)" in proc.stdout
    executables = next(f["path"] for f in manifest["files"] if f["role"] == "executables-object")
    assert b"source_locations" not in (out / executables).read_bytes()


def _configure_firmware_sample(build, cpu, *defs, check=True):
    cmake_dir = run_cli("--cmake-dir").stdout.strip()
    return subprocess.run(
        [
            "cmake",
            "-G",
            "Ninja",
            "-S",
            SAMPLES / "firmware",
            "-B",
            build,
            f"--toolchain={cmake_dir}/toolchains/arm-none-eabi.cmake",
            f"-DIREEGEN_CORTEX_M_CPU={cpu}",
            f"-Direegen_DIR={cmake_dir}",
            f"-DIREEGEN_PYTHON_EXECUTABLE={sys.executable}",
            *defs,
        ],
        check=check,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _build_and_run_firmware_sample(build, cpu) -> tuple:
    log = subprocess.run(["cmake", "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert log.returncode == 0, log.stdout
    run = subprocess.run(
        [
            "qemu-system-arm",
            "-M",
            CORES[cpu].qemu_machine,
            "-nographic",
            "-monitor",
            "none",
            "-semihosting-config",
            "enable=on,target=native",
            "-kernel",
            build / "firmware.elf",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout
    return log.stdout, np.array([float(w) for w in run.stdout.split()], np.float32)


def _require_cmake():
    _require_tools()
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        pytest.skip("cmake or ninja not installed")


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55", "cortex-m0plus"])
def test_firmware_sample_builds_and_runs_under_qemu(tmp_path, cpu):
    _require_cmake()
    build = tmp_path / "build"
    _configure_firmware_sample(build, cpu)
    log, numbers = _build_and_run_firmware_sample(build, cpu)
    assert "flash" in log and "arena" in log  # the build-time footprint
    _, _, _, expected = sample_cases()["mlp"]
    np.testing.assert_allclose(numbers, expected[0].ravel(), rtol=1e-5, atol=1e-6)
    footprint = json.loads((build / "ireegen" / "mlp.footprint.json").read_text())
    assert footprint["target"]["cpu"] == cpu and footprint["objects"] == "given"


def test_firmware_sample_runs_another_models_names(tmp_path):
    """-DMODEL= with a function and tensors named otherwise than the MLP's."""
    _require_cmake()
    model = tmp_path / "negate.mlir"
    model.write_text(
        "func.func @forward(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {\n"
        "  %0 = arith.negf %x : tensor<3x4xf32>\n  return %0 : tensor<3x4xf32>\n}\n"
    )
    build = tmp_path / "build"
    _configure_firmware_sample(build, "cortex-m4", f"-DMODEL={model}")
    _, numbers = _build_and_run_firmware_sample(build, "cortex-m4")
    np.testing.assert_array_equal(numbers, -(np.arange(12, dtype=np.float32) * 0.25 - 2))


def test_firmware_sample_refuses_a_signature_it_cannot_call(tmp_path):
    _require_cmake()
    model = SAMPLES / "simple_mul" / "simple_mul.mlir"
    proc = _configure_firmware_sample(tmp_path / "build", "cortex-m4", f"-DMODEL={model}", check=False)
    assert proc.returncode != 0
    errors = proc.stdout.split("CMake Error at ")[1:]
    assert len(errors) == 1, proc.stdout
    message = " ".join(errors[0].split("\n\n")[0].split("\n", 1)[1].split())
    assert message == (
        f"samples/firmware: MODEL {model}: main.c calls the model's first function with one float32 or int8 tensor "
        "of static shape and prints its one float32 or int8 result, and @simple_mul does not fit (2 inputs, 1 "
        "results; see "
        "`ireegen info`); write a main.c for it"
    )


def test_optimize_for_size_and_quiet_glue(tmp_path):
    """--optimize-for size narrows codegen's vectors; NAME_NO_ERROR_MESSAGES
    compiles warning-free and leaves the messages out."""
    flags = make_config("runtimeless", target_cpu="cortex-m4", optimize_for="size").compile_flags("/o.o")
    assert "--iree-llvmcpu-target-vector-width-in-bytes=4" in flags
    with pytest.raises(UsageError, match="--optimize-for size only applies"):
        make_config("async", "vmvx", optimize_for="size")
    proc = run_cli(
        "emit",
        SAMPLES / "mlp" / "mlp.mlir",
        "-o",
        tmp_path / "out",
        "--execution-model",
        "runtimeless",
        "--optimize-for",
        "fast",
    )
    assert proc.returncode == 2 and "--optimize-for" in proc.stderr
    out = tmp_path / "out"
    emit(SAMPLES / "mlp" / "mlp.mlir", out, make_config("runtimeless"), name="mlp")
    for define, present in (("-DMLP_NO_ERROR_MESSAGES", False), ('-DMLP_CONSTANTS_SECTION=".rodata.w"', True)):
        obj = tmp_path / "mlp.o"
        subprocess.run(
            [
                "cc",
                "-std=c11",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-Os",
                define,
                f"-I{out}",
                "-c",
                str(out / "mlp.c"),
                "-o",
                str(obj),
            ],
            check=True,
        )
        assert (b"arena not aligned to" in obj.read_bytes()) == present
    # The section macro places the weights in both data forms: .S (default) and C.
    out_c = tmp_path / "out-c"
    emit(SAMPLES / "mlp" / "mlp.mlir", out_c, make_config("runtimeless", data_format="c"), name="mlp", verify=False)
    for source in (out / "mlp_constants.S", out_c / "mlp_constants.c"):
        subprocess.run(
            [
                "cc",
                "-Wall",
                "-Wextra",
                "-Werror",
                '-DMLP_CONSTANTS_SECTION=".rodata.w"',
                f"-I{source.parent}",
                "-c",
                str(source),
                "-o",
                str(tmp_path / "c.o"),
            ],
            check=True,
        )
        sections = subprocess.run(["objdump", "-h", str(tmp_path / "c.o")], stdout=subprocess.PIPE, text=True).stdout
        assert ".rodata.w" in sections, source.name
