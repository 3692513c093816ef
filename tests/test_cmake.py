"""ireegen_add_model() in real CMake builds (Ninja and Unix Makefiles):
configure-time validation, and that incremental builds re-run exactly the
generator commands they must, read from the build log."""

import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_cli

from ireegen.cli import build_parser

GENERATORS = [g for g, tool in (("Ninja", "ninja"), ("Unix Makefiles", "make")) if shutil.which(tool)]
CMAKE = shutil.which("cmake")
# One worker runs this file's tests in order (`--dist loadgroup`): the
# incremental-build test touches ireegen's templates and the compiler,
# which makes every model of a build running beside it out of date.
pytestmark = [pytest.mark.skipif(not CMAKE, reason="cmake not installed"), pytest.mark.xdist_group("cmake-mtimes")]

GENERATED = re.compile(r"ireegen: generating (\w+) ")


def cmake_dir():
    return run_cli("--cmake-dir").stdout.strip()


class Project:
    """A CMake project using ireegen_add_model(GENERATE_ONLY), which needs no
    IREE runtime, so it builds on CI."""

    def __init__(self, root: Path, generator: str, models: dict):
        self.root, self.generator = root, generator
        self.src, self.build_dir = root / "src", root / "build"
        self.src.mkdir(parents=True)
        for name, text in models.items():
            (self.src / f"{name}.mlir").write_text(text)
        self.models = list(models)

    def write(self, extra_args=None):
        extra_args = extra_args or {}
        lines = ["cmake_minimum_required(VERSION 3.21)", "project(t NONE)", "find_package(ireegen CONFIG REQUIRED)"]
        for name in self.models:
            lines.append(f"ireegen_add_model({name} SRC {name}.mlir GENERATE_ONLY {extra_args.get(name, '')})")
        (self.src / "CMakeLists.txt").write_text("\n".join(lines) + "\n")

    def configure(self, *defs):
        proc = subprocess.run(
            [
                CMAKE,
                "-G",
                self.generator,
                "-S",
                self.src,
                "-B",
                self.build_dir,
                f"-Direegen_DIR={cmake_dir()}",
                f"-DIREEGEN_PYTHON_EXECUTABLE={sys.executable}",
                *defs,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            # find_package() also searches $IREERuntime_DIR, set when the opt-in runtime tests run.
            env={k: v for k, v in os.environ.items() if k != "IREERuntime_DIR"},
        )
        return proc

    def build(self, *args, check=True):
        proc = subprocess.run(
            [CMAKE, "--build", self.build_dir, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if check:
            assert proc.returncode == 0, proc.stdout
        return proc, sorted(GENERATED.findall(proc.stdout))


SIMPLE = (SAMPLES / "simple_mul" / "simple_mul.mlir").read_text()
ADD = """func.func @add(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
  %0 = arith.addi %a, %b : tensor<3xi32>
  return %0 : tensor<3xi32>
}
"""


# CI builds with Ninja only; the full suite with both generators.
@pytest.mark.parametrize(
    "generator", [pytest.param(g, marks=[pytest.mark.full_suite] if g != "Ninja" else []) for g in GENERATORS]
)
def test_incremental_rebuilds_run_exactly_the_affected_models(tmp_path, generator):
    p = Project(tmp_path, generator, {"m1": SIMPLE, "m2": ADD})
    p.write()
    assert p.configure().returncode == 0
    assert p.build()[1] == ["m1", "m2"]
    assert (p.build_dir / "ireegen" / "m1" / "manifest.json").exists()

    # Nothing changed: nothing runs.
    assert p.build()[1] == []

    # Touching one model re-runs that model only.
    os.utime(p.src / "m2.mlir")
    assert p.build()[1] == ["m2"]
    assert p.build()[1] == []

    # The module bytes are .incbin'd from the .vmfb by NAME_module_data.S
    # (no C compiler here: emit's default, asm): a lost blob is regenerated.
    outdir = p.build_dir / "ireegen" / "m1"
    assert '.incbin "m1.vmfb"' in (outdir / "m1_module_data.S").read_text()
    (outdir / "m1.vmfb").unlink()
    assert p.build()[1] == ["m1"]
    assert p.build()[1] == []

    # Changing FLAGS of one model re-runs it (a reconfigure; Makefiles too).
    p.write({"m1": "FLAGS --iree-opt-level=O1"})
    assert p.configure().returncode == 0
    assert p.build()[1] == ["m1"]
    assert p.build()[1] == []

    # Changing an option re-runs that model only.
    p.write({"m1": "FLAGS --iree-opt-level=O1", "m2": "EXECUTION_MODEL inline-static"})
    assert p.configure().returncode == 0
    assert p.build()[1] == ["m2"]
    manifest = (p.build_dir / "ireegen" / "m2" / "manifest.json").read_text()
    assert '"execution_model": "inline-static"' in manifest

    # Reconfiguring with nothing changed re-runs nothing.
    assert p.configure().returncode == 0
    assert p.build()[1] == []

    # Upgrading ireegen (its templates or sources) re-runs every model.
    from ireegen.common.resources import templates_dir

    template = templates_dir() / "api.h.j2"
    with _touched(template):
        assert p.build()[1] == ["m1", "m2"]

    # A new IREE compiler (pip replaces its files) re-runs every model.
    from ireegen.compile.compiler import find_compiler

    with _touched(Path(find_compiler().path)):
        assert p.build()[1] == ["m1", "m2"]
        assert p.build()[1] == []


@contextmanager
def _touched(path: Path):
    """`path` with its modification time now, put back afterwards (the
    file is shared with every other build of the suite)."""
    before = path.stat()
    os.utime(path)
    try:
        yield
    finally:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.mark.parametrize("generator", GENERATORS)
def test_failed_generation_is_never_taken_for_up_to_date(tmp_path, generator):
    p = Project(tmp_path, generator, {"m1": SIMPLE})
    p.write()
    assert p.configure().returncode == 0
    p.build()
    good = (p.build_dir / "ireegen" / "m1" / "m1.h").read_text()
    (p.src / "m1.mlir").write_text(SIMPLE.replace("arith.mulf %arg0, %arg1", "arith.mulf %arg0, %nope"))
    proc, ran = p.build(check=False)
    assert proc.returncode != 0 and ran == ["m1"]
    assert "m1.mlir:2" in proc.stdout  # the compiler's own file:line diagnostic
    # The old outputs are intact, and the next build tries again.
    assert (p.build_dir / "ireegen" / "m1" / "m1.h").read_text() == good
    proc, ran = p.build(check=False)
    assert proc.returncode != 0 and ran == ["m1"]
    (p.src / "m1.mlir").write_text(SIMPLE)
    assert p.build()[1] == ["m1"]
    assert p.build()[1] == []


@pytest.mark.parametrize(
    "generator", [pytest.param(g, marks=[pytest.mark.full_suite] if g != "Ninja" else []) for g in GENERATORS]
)
def test_parallel_build_of_four_models(tmp_path, generator):
    models = {f"m{i}": SIMPLE.replace("@simple_mul", f"@fn{i}") for i in range(4)}
    p = Project(tmp_path, generator, models)
    p.write(
        {"m1": "EXECUTION_MODEL inline-static", "m2": "MODULE_FORMAT emitc", "m3": "EXECUTABLE_FORMAT static-library"}
    )
    assert p.configure().returncode == 0
    proc, ran = p.build("-j4")
    assert ran == ["m0", "m1", "m2", "m3"]
    for i in range(4):
        assert f"@fn{i}" in (p.build_dir / "ireegen" / f"m{i}" / "manifest.json").read_text().replace(
            '"name": "fn', '"name": "@fn'
        )
    assert p.build("-j4")[1] == []


@pytest.mark.parametrize(
    "args,message",
    [
        (
            "SRC m1.mlir BOGUS 1",
            "unknown argument(s) BOGUS 1; the keywords are SRC NAME EXECUTION_MODEL "
            "EXECUTABLE_FORMAT MODULE_FORMAT DATA_FORMAT TARGET_TRIPLE TARGET_CPU TARGET_CPU_FEATURES OUTPUT_DIR "
            "CONSTANTS_SECTION ARENA_SECTION OPTIMIZE_FOR VERIFY VERIFY_INPUTS KERNELS TUNE THREADS MAX_DETECTIONS FLAGS "
            "INPUT_SHAPES "
            "INPUT_VALUES "
            "GENERATE_ONLY NO_BUILTIN_KERNELS",
        ),
        ("NAME x", "SRC <model file> is required"),
        ("SRC missing.mlir", "missing.mlir does not exist"),
        ("SRC m1.mlir VERIFY_INPUTS nothere.npz", "VERIFY_INPUTS"),
        ("SRC m1.mlir KERNELS nothere.json", "KERNELS"),
        ("SRC m1.mlir MAX_DETECTIONS 0", "MAX_DETECTIONS 0: expected a whole number of detections from 1 to 65536"),
        ("SRC m1.mlir MAX_DETECTIONS 70000", "MAX_DETECTIONS 70000: expected a whole number"),
        (
            "SRC m1.mlir EXECUTION_MODEL inline-static EXECUTABLE_FORMAT static-library",
            "inline-static cannot use --executable-format static-library",
        ),
        ("SRC m1.mlir NAME 9lives", "not a C identifier"),
        ("SRC m1.mlir FLAGS --output-format=vm-asm", "ireegen sets --output-format itself"),
        ("SRC m1.mlir DATA_FORMAT hex", "--data-format 'hex': unknown data format"),
        ("SRC m1.mlir MODULE_FORMAT emitc DATA_FORMAT c", "an emitc module has no module data file"),
    ],
)
def test_configure_time_validation(tmp_path, args, message, target="t1"):
    p = Project(tmp_path, GENERATORS[0], {"m1": SIMPLE})
    (p.src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(t NONE)\nfind_package(ireegen CONFIG REQUIRED)\n"
        f"ireegen_add_model({target} {args})\n"
    )
    proc = p.configure()
    assert proc.returncode != 0
    assert message in " ".join(proc.stdout.split()), proc.stdout


ADD_MODEL = ROOT / "cmake" / "ireegenAddModel.cmake"


def _cmake_set(text: str, name: str) -> list:
    m = re.search(rf"^set\({name}\s+([^)]*)\)", text, re.M)
    assert m, f"{ADD_MODEL}: set({name} ...) not found"
    return m.group(1).split()


def _command_options(command: str) -> set:
    action = next(a for a in build_parser()._actions if a.dest == "command")
    return {s for a in action.choices[command]._actions for s in a.option_strings}


def test_flag_tables_map_keywords_to_options_of_emit_and_resolve():
    """Each row of the keyword-to-flag tables names a keyword of
    ireegen_add_model() (or an IREEGEN_ variable) and an option of emit; the
    output's options are also options of `ireegen resolve`, which checks them."""
    text = ADD_MODEL.read_text()
    keywords = {k for kind in ("OPTION", "VALUE", "LIST") for k in _cmake_set(text, f"_IREEGEN_{kind}_KEYWORDS")}
    assert set(_cmake_set(text, "_IREEGEN_GIVEN_KEYWORDS")) <= keywords
    for table, command in (
        ("_IREEGEN_OUTPUT_FLAGS", "resolve"),
        ("_IREEGEN_EMIT_ONLY_FLAGS", "emit"),
        ("_IREEGEN_CACHE_FLAGS", "emit"),
    ):
        rows = _cmake_set(text, table)
        assert len(rows) % 2 == 0, table
        for name, flag in zip(rows[::2], rows[1::2]):
            keyword = name.split("=")[0]
            assert keyword in keywords or keyword.startswith("IREEGEN_"), (table, name)
            for options in (_command_options("emit"), _command_options(command)):
                assert flag.rstrip("=") in options, (table, flag)


def test_emit_command_line_of_every_keyword(tmp_path):
    """The emit step's command line: the output's options in the order of
    the tables, then emit's own, then the cache's."""
    import numpy as np

    p = Project(tmp_path, GENERATORS[0], {})
    shutil.copy(SAMPLES / "digits" / "digits.onnx", p.src)
    np.savez(p.src / "x.npz", image=np.zeros((1, 64), np.float32))
    (p.src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(t NONE)\nfind_package(ireegen CONFIG REQUIRED)\n"
        "ireegen_add_model(t1 SRC digits.onnx NAME alpha EXECUTION_MODEL runtimeless DATA_FORMAT c "
        "TARGET_TRIPLE x86_64-unknown-linux-gnu TARGET_CPU x86-64-v2 TARGET_CPU_FEATURES +sse4.2 OUTPUT_DIR out "
        "OPTIMIZE_FOR size VERIFY STRICT VERIFY_INPUTS x.npz TUNE off FLAGS --iree-opt-level=O2 --iree-opt-level=O3 "
        "INPUT_SHAPES image=1x64 NO_BUILTIN_KERNELS QUANTIZED_IO MAX_DETECTIONS 5 GENERATE_ONLY)\n"
    )
    proc = p.configure("-DIREEGEN_CACHE=http://127.0.0.1:1", "-DIREEGEN_CACHE_MODE=read")
    assert proc.returncode == 0, proc.stdout
    line = next(x for x in (p.build_dir / "build.ninja").read_text().splitlines() if " -m ireegen emit " in x)
    command = line.split(" -m ireegen emit ", 1)[1].split(" && ")[0]
    command = command.replace(str(p.src), "SRC").replace(str(p.build_dir), "BUILD")
    assert command.split() == [
        "SRC/digits.onnx", "-o", "BUILD/out", "--name", "alpha",
        "--execution-model", "runtimeless", "--data-format", "c", "--target-triple=x86_64-unknown-linux-gnu",
        "--target-cpu=x86-64-v2", "--target-cpu-features=+sse4.2", "--optimize-for=size", "--tune=off",
        "--iree-flag=--iree-opt-level=O2", "--iree-flag=--iree-opt-level=O3", "--input-shape=image=1x64",
        "--verify-strict", "--verify-inputs", "SRC/x.npz", "--no-builtin-kernels", "--quantized-io",
        "--max-detections=5",
        "--cache", "http://127.0.0.1:1", "--cache-mode", "read",
    ]  # fmt: skip


def test_target_named_like_a_system_library_is_refused(tmp_path):
    test_configure_time_validation(
        tmp_path, "SRC m1.mlir EXECUTION_MODEL runtimeless", "m is the name of a system library (libm)", target="m"
    )


def _error_messages(output: str) -> list:
    """The text of each `CMake Error` in a configure's output, CMake's line
    wrapping undone."""
    return [
        " ".join(block.split("\nCall Stack")[0].split("\n", 1)[1].split())
        for block in output.split("CMake Error at ")[1:]
    ]


def _runtime_project(tmp_path, mode_args=""):
    p = Project(tmp_path, GENERATORS[0], {"m1": SIMPLE})
    (p.src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(t C)\nfind_package(ireegen CONFIG REQUIRED)\n"
        f"ireegen_add_model(t1 SRC m1.mlir {mode_args})\n"
    )
    return p


ARCHIVE_SHA256 = "baa52e4850b8792bdffb0889c787df4dee5a9e95b4942004eb9e8dddcc388a7b"


@pytest.mark.parametrize(
    "defs, message",
    [
        (
            ["-DIREERuntime_DIR=/nonexistent"],
            "ireegen_add_model(t1): IREERuntime_DIR /nonexistent has no IREERuntimeConfig.cmake; point it at an "
            "IREE runtime's lib/cmake/IREE, or leave it unset to build the runtime here (docs/iree-runtime.md)",
        ),
        (
            ["-DIREEGEN_IREE_NO_DOWNLOAD=ON"],
            "ireegen_add_model(t1): {mode} links the IREE runtime, which find_package(IREERuntime CONFIG) did not "
            "find, and IREEGEN_IREE_NO_DOWNLOAD or FETCHCONTENT_FULLY_DISCONNECTED forbids cloning IREE; set "
            "-DIREERuntime_DIR, -DFETCHCONTENT_SOURCE_DIR_IREE, or -DIREEGEN_IREE_SOURCE_URL=file://... with "
            "-DIREEGEN_IREE_SOURCE_SHA256",
        ),
        (
            [
                "-DFETCHCONTENT_FULLY_DISCONNECTED=ON",
                "-DIREEGEN_IREE_SOURCE_URL=https://example.invalid/iree.tar.xz",
                f"-DIREEGEN_IREE_SOURCE_SHA256={ARCHIVE_SHA256}",
            ],
            "ireegen_add_model(t1): IREEGEN_IREE_NO_DOWNLOAD or FETCHCONTENT_FULLY_DISCONNECTED forbids downloading "
            "IREEGEN_IREE_SOURCE_URL; give a file:// URL, FETCHCONTENT_SOURCE_DIR_IREE or IREERuntime_DIR",
        ),
        (
            ["-DIREEGEN_IREE_SOURCE_URL=file:///nonexistent.tar.xz"],
            "ireegen_add_model(t1): IREEGEN_IREE_SOURCE_URL needs -DIREEGEN_IREE_SOURCE_SHA256=<the archive's "
            "sha256 in hex>",
        ),
        (
            ["-DIREEGEN_IREE_SOURCE_URL=file:///nonexistent.tar.xz", "-DIREEGEN_IREE_SOURCE_SHA256=abc123"],
            "ireegen_add_model(t1): IREEGEN_IREE_SOURCE_SHA256 has 6 hex digits, a sha256 has 64",
        ),
        (
            ["-DIREEGEN_IREE_SOURCE_URL=file:///nonexistent.tar.xz", f"-DIREEGEN_IREE_SOURCE_SHA256={ARCHIVE_SHA256}"],
            "ireegen_add_model(t1): IREEGEN_IREE_SOURCE_URL file:///nonexistent.tar.xz: no such file",
        ),
        (
            ["-DFETCHCONTENT_SOURCE_DIR_IREE=/nonexistent"],
            "ireegen_add_model(t1): FETCHCONTENT_SOURCE_DIR_IREE /nonexistent is not an IREE source tree (it has "
            "no CMakeLists.txt)",
        ),
    ],
    ids=[
        "bad-sdk-dir",
        "no-download",
        "disconnected-url",
        "url-without-hash",
        "short-hash",
        "no-archive",
        "bad-source-dir",
    ],
)
@pytest.mark.parametrize(
    "mode_args, mode_text",
    [("", "EXECUTION_MODEL async (the default)"), ("EXECUTION_MODEL inline-static", "EXECUTION_MODEL inline-static")],
)
def test_runtime_failures_are_one_line_at_configure(tmp_path, defs, message, mode_args, mode_text):
    """Where the VM modes' IREE runtime comes from (cmake/ireegenRuntime.cmake):
    every way it cannot is one sentence at configure time that says what to
    do, before anything is fetched or built."""
    p = _runtime_project(tmp_path, mode_args)
    proc = p.configure(*defs)
    assert proc.returncode != 0
    assert _error_messages(proc.stdout) == [message.format(mode=mode_text)], proc.stdout


def test_no_python3_on_path_for_irees_build_is_one_line(tmp_path):
    """IREE's runtime build runs `python3` by that name: without one on
    PATH, configure stops before fetching."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A C toolchain and a build tool, no python3.
    for tool in ("cc", "as", "ld", "ninja", "make"):
        if shutil.which(tool):
            (bin_dir / tool).symlink_to(shutil.which(tool))
    p = _runtime_project(tmp_path / "p")
    proc = subprocess.run(
        [
            CMAKE,
            "-G",
            GENERATORS[0],
            "-S",
            p.src,
            "-B",
            p.build_dir,
            f"-Direegen_DIR={cmake_dir()}",
            f"-DIREEGEN_PYTHON_EXECUTABLE={sys.executable}",
            f"-DCMAKE_C_COMPILER={shutil.which('cc')}",
            "-DIREEGEN_IREE_SOURCE_URL=file:///nonexistent.tar.xz",
            f"-DIREEGEN_IREE_SOURCE_SHA256={ARCHIVE_SHA256}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"PATH": str(bin_dir), "HOME": os.environ.get("HOME", "/")},
    )
    assert proc.returncode != 0
    assert _error_messages(proc.stdout) == [
        "ireegen_add_model(t1): EXECUTION_MODEL async (the default) links the IREE runtime, and building it runs "
        "`python3`, which is not on PATH; put a Python 3 on PATH as python3, or set -DIREERuntime_DIR to a "
        "prebuilt runtime SDK"
    ], proc.stdout


def test_cross_toolchain_sets_the_default_triple(tmp_path):
    p = Project(tmp_path, GENERATORS[0], {"m1": SIMPLE})
    p.write()
    toolchain = tmp_path / "riscv.cmake"
    toolchain.write_text("set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR riscv64)\n")
    assert p.configure(f"-DCMAKE_TOOLCHAIN_FILE={toolchain}").returncode == 0
    p.build()
    manifest = (p.build_dir / "ireegen" / "m1" / "manifest.json").read_text()
    assert '"triple": "riscv64-unknown-linux-gnu"' in manifest


def _build_sample_runtimeless(tmp_path, sample, *defs):
    build = tmp_path / "build"
    configure = subprocess.run(
        [
            CMAKE,
            "-G",
            GENERATORS[0],
            "-S",
            SAMPLES / sample,
            "-B",
            build,
            f"-Direegen_DIR={cmake_dir()}",
            f"-DIREEGEN_PYTHON_EXECUTABLE={sys.executable}",
            "-DEXECUTION_MODEL=runtimeless",
            "-DIREERuntime_DIR=/nonexistent",
            "-DCMAKE_BUILD_TYPE=Release",
            *defs,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert configure.returncode == 0, configure.stdout
    # CMake reports IREERuntime_DIR unused: no find_package(IREERuntime).
    assert "not used by the project" in configure.stdout and "IREERuntime_DIR" in configure.stdout
    proc = subprocess.run([CMAKE, "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout
    return build


@pytest.mark.parametrize("sample", ["simple_mul", "mlp"])
def test_sample_builds_and_runs_runtimeless_without_an_iree_runtime(tmp_path, sample):
    """The samples' main.c, written for the runtime-backed modes, unchanged,
    with -Wall -Wextra -Werror; IREERuntime_DIR points nowhere.  The project
    declares only C; the constants are assembled (.S + .incbin)."""
    from conftest import sample_cases

    build = _build_sample_runtimeless(tmp_path, sample)
    program = build / ("simple_mul_demo" if sample == "simple_mul" else "mlp_demo")
    out = subprocess.run([program], stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    _, _, _, expected = sample_cases()[sample]
    import numpy as np

    np.testing.assert_allclose(np.array(out, np.float32), expected[0].ravel(), rtol=1e-5, atol=1e-6)
    if sample != "mlp":
        return
    # Exact rebuilds: nothing to do; a changed blob re-assembles its .S only
    # (CMake's depfile cannot see .incbin; OBJECT_DEPENDS does).
    outdir = build / "ireegen" / "mlp"
    assert (outdir / "mlp_constants.S").is_file() and (outdir / "mlp_constants.bin").is_file()
    assert not (outdir / "mlp_constants.c").exists()
    assert _rebuilt(build) == []
    os.utime(outdir / "mlp_constants.bin")
    assert _rebuilt(build) == ["mlp_constants.S", "mlp_demo", "mlp_library"]
    assert _rebuilt(build) == []


def _rebuilt(build):
    """What a build did: the sources it compiled, 'mlp_library' and
    'mlp_demo' when it linked them, and any model it regenerated."""
    log = subprocess.run(
        [CMAKE, "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True
    ).stdout
    done = re.findall(r"Building \w+ object \S*?([\w.]+\.[cS])\.o", log)
    done += ["mlp_library" for _ in re.findall(r"Linking C static library", log)]
    done += ["mlp_demo" for _ in re.findall(r"Linking C executable", log)]
    return sorted(done + GENERATED.findall(log))


def test_sample_builds_with_the_c_array_fallback(tmp_path):
    """DATA_FORMAT c: the constants as a C array, for compilers without a
    GNU-style assembler step; same program, same numbers."""
    import numpy as np
    from conftest import sample_cases

    build = _build_sample_runtimeless(tmp_path, "mlp", "-DDATA_FORMAT=c")
    manifest = (build / "ireegen" / "mlp" / "manifest.json").read_text()
    assert '"data_format": "c"' in manifest and "mlp_constants.c" in manifest and ".bin" not in manifest
    out = subprocess.run([build / "mlp_demo"], stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    np.testing.assert_allclose(np.array(out, np.float32), sample_cases()["mlp"][3][0].ravel(), rtol=1e-5, atol=1e-6)
    assert _rebuilt(build) == []


@pytest.mark.skipif(
    not shutil.which("aarch64-linux-gnu-gcc") or not shutil.which("qemu-aarch64"),
    reason="no aarch64 cross gcc / qemu-user",
)
def test_sample_cross_builds_runtimeless_for_aarch64(tmp_path):
    """A cross toolchain file alone picks the executables' target triple."""
    toolchain = tmp_path / "aarch64.cmake"
    toolchain.write_text(
        "set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR aarch64)\n"
        "set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)\nset(CMAKE_EXE_LINKER_FLAGS_INIT -static)\n"
    )
    build = _build_sample_runtimeless(tmp_path, "mlp", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    out = subprocess.run(["qemu-aarch64", build / "mlp_demo"], stdout=subprocess.PIPE, text=True, check=True)
    import numpy as np
    from conftest import sample_cases

    _, _, _, expected = sample_cases()["mlp"]
    np.testing.assert_allclose(np.array(out.stdout.split(), np.float32), expected[0].ravel(), rtol=1e-4, atol=1e-5)


def _external_data_model(path, location):
    """y = x + w (4 floats), w in the external data file `location` beside `path`."""
    onnx = pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save_model(
        model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location=location, size_threshold=0
    )
    return path


# Text that CMake code would expand, quote or escape, in directory and file names.
HOSTILE_DIR = 'my ${HOME} $ENV{PATH} "q" [x] #h'
HOSTILE_DATA = "w ${CMAKE_COMMAND}$ENV{HOME}.bin"


def _hostile_project(tmp_path, model_dir: str, location: str):
    src = tmp_path / "src"
    models = src / model_dir
    models.mkdir(parents=True)
    _external_data_model(models / "add.onnx", location)
    (src / "main.c").write_text(
        '#include <stdio.h>\n#include "add.h"\n'
        "int main(void) {\n  add_t* m = NULL;\n  float x[4] = {1, 2, 3, 4}, y[4];\n"
        "  if (add_create(iree_allocator_system(), &m) != NULL || add_add(m, x, y) != 0) return 1;\n"
        '  printf("%g %g %g %g\\n", y[0], y[1], y[2], y[3]);\n  add_destroy(m);\n  return 0;\n}\n'
    )
    # The model path reaches CMake as a bracket argument: the test itself must not be CMake code either.
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(t C)\nfind_package(ireegen CONFIG REQUIRED)\n"
        f"ireegen_add_model(add SRC [==[{model_dir}/add.onnx]==] EXECUTION_MODEL runtimeless)\n"
        "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE add)\n"
    )
    return src, tmp_path / "build", models


@pytest.mark.parametrize("generator", GENERATORS)
def test_paths_and_locations_are_data_not_cmake_code(tmp_path, generator):
    """`${VAR}`, `$ENV{VAR}`, quotes, brackets and `#` in the model's directory
    and in its external-data location neither expand nor break the
    configure: the model builds, runs and regenerates when its data changes."""
    # Makefile generators refuse '"' in a path (test_makefiles_build_or_refuse_at_configure).
    model_dir = HOSTILE_DIR if generator == "Ninja" else HOSTILE_DIR.replace('"q" ', "")
    src, build, models = _hostile_project(tmp_path, model_dir, HOSTILE_DATA)
    project = Project.__new__(Project)
    project.src, project.build_dir, project.generator = src, build, generator
    conf = project.configure()
    assert conf.returncode == 0, conf.stdout
    proc, generated = project.build()
    assert generated == ["add"]
    run = subprocess.run([build / "app"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.split() == ["1", "3", "5", "7"], run
    assert project.build()[1] == []  # up to date: every DEPENDS names a real file
    data = models / HOSTILE_DATA
    data.write_bytes(bytes(data.read_bytes()))  # the same bytes, newer: DEPENDS sees the data file
    os.utime(data, (time.time() + 5, time.time() + 5))
    assert project.build()[1] == ["add"]


@pytest.mark.parametrize(
    "model_dir, location, message",
    [
        ("trailing\\", "w.bin", "SRC"),
        ("plain", "w;x.bin", "w;x.bin: CMake cannot take a path with ';'"),
        ("plain", "w.bin\\", "w.bin\\: CMake cannot take a path with '\\'"),
        ("plain", "w[.bin", "unbalanced '['"),
        ("plain", "w$<1:x>.bin", "'$<'"),
    ],
)
def test_paths_cmake_cannot_carry_are_refused_in_one_line(tmp_path, model_dir, location, message):
    src, build, _ = _hostile_project(tmp_path, model_dir, location)
    project = Project.__new__(Project)
    project.src, project.build_dir, project.generator = src, build, GENERATORS[0]
    conf = project.configure()
    assert conf.returncode != 0
    assert "Traceback" not in conf.stdout and "Parse error" not in conf.stdout, conf.stdout
    # One message (CMake wraps it over lines): the words, not CMake's layout.
    error = " ".join(conf.stdout[conf.stdout.index("ireegen_add_model(add): ") :].split("Call Stack")[0].split())
    assert message in error and "CMake cannot take a path with" in error, conf.stdout


# Text that Make reads itself in a rule's targets and prerequisites.
MAKE_HOSTILE_DIRS = ["colon: space", 'quote"d', 'both: "q"']


@pytest.mark.skipif("Unix Makefiles" not in GENERATORS, reason="needs make")
@pytest.mark.parametrize("model_dir", MAKE_HOSTILE_DIRS)
def test_makefiles_build_or_refuse_at_configure(tmp_path, model_dir):
    """A model directory Make cannot carry in a rule (`: `, `"`) either builds
    with Unix Makefiles or is refused at configure in one line."""
    src, build, _ = _hostile_project(tmp_path, model_dir, "w.bin")
    project = Project.__new__(Project)
    project.src, project.build_dir, project.generator = src, build, "Unix Makefiles"
    conf = project.configure()
    if conf.returncode != 0:
        assert "Traceback" not in conf.stdout, conf.stdout
        # One message (CMake wraps it over lines): the words, not CMake's layout.
        error = " ".join(conf.stdout.split("Call Stack")[0].split())
        assert "ireegen_add_model(add): " in error, conf.stdout
        assert "Unix Makefiles cannot carry" in error and "-G Ninja" in error, conf.stdout
        return
    proc, generated = project.build()
    assert generated == ["add"], proc.stdout
    run = subprocess.run([build / "app"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.split() == ["1", "3", "5", "7"], run
