"""The Bazel rules (bazel/, `python -m ireegen --bazel-dir`) on Debian's
Bazel 4.2.3: samples/bazel builds, verifies and runs (data_format c and asm); a clean build of a
second checkout (another output base) takes the ireegen action from a
remote cache (nginx); the declared outputs are ireegen's own layout.

One Bazel server per checkout, small (--jobs 2, -Xmx1g), shut down after;
Bazel's first start is slow, so the workspace builds once per session."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cache_server import NGINX, nginx_cache
from conftest import ROOT, run_cli, sample_cases

from ireegen.output.bazel_layout import starlark

BAZEL = shutil.which("bazel")
needs_bazel = pytest.mark.skipif(not BAZEL or not NGINX, reason="needs bazel (bazel-bootstrap) and nginx")


def test_layout_bzl_is_generated_from_the_layout_table():
    assert (ROOT / "bazel" / "layout.bzl").read_text() == starlark(), (
        "bazel/layout.bzl is stale: run `python -m ireegen.output.bazel_layout`"
    )


def test_bazel_dir_is_a_repository_with_the_rules():
    proc = run_cli("--bazel-dir")
    assert proc.returncode == 0
    d = Path(proc.stdout.strip())
    for f in ("WORKSPACE", "BUILD", "defs.bzl", "layout.bzl", "rules_cc/cc/defs.bzl", "rules_java/java/defs.bzl"):
        assert (d / f).is_file(), f


class Checkout:
    """samples/bazel and bazel/ copied to `root`, as a checkout has them."""

    def __init__(self, root: Path, user_root: Path):
        self.root = root
        shutil.copytree(ROOT / "bazel", root / "bazel")
        shutil.copytree(
            ROOT / "samples" / "bazel", root / "samples" / "bazel", ignore=shutil.ignore_patterns("bazel-*")
        )
        self.workspace = root / "samples" / "bazel"
        self.user_root = user_root

    def bazel(self, command, *args):
        startup = [f"--output_user_root={self.user_root}", "--host_jvm_args=-Xmx1g", "--max_idle_secs=120"]
        flags = []
        if command == "build":
            flags = ["--jobs=2", f"--@ireegen//:python={sys.executable}"]
            if os.environ.get("PYTHONPATH"):  # a worktree's ireegen, as the tests run it
                flags.append(f"--action_env=PYTHONPATH={os.environ['PYTHONPATH']}")
        return subprocess.run(
            [BAZEL, *startup, command, *flags, *args],
            cwd=self.workspace,
            capture_output=True,
            text=True,
            timeout=900,
        )


def spawns(log: Path) -> list:
    """The spawns of an --execution_log_json_file (concatenated JSON objects)."""
    decoder, text, out, i = json.JSONDecoder(), log.read_text(), [], 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            break
        obj, i = decoder.raw_decode(text, i)
        out.append(obj)
    return out


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """Checkout A builds cold against an empty remote cache; checkout B, at
    another path (so another output base), builds clean against it."""
    tmp = tmp_path_factory.mktemp("bazel")
    user_root = tmp / "user_root"
    results = {}
    with nginx_cache(tmp / "nginx") as server:
        for label, path in (("a", tmp / "a"), ("b", tmp / "elsewhere" / "b")):
            co = Checkout(path, user_root)
            log = tmp / f"{label}.exec.json"
            try:
                build = co.bazel("build", f"--remote_cache={server.url}", f"--execution_log_json_file={log}", "//:all")
                assert build.returncode == 0, build.stderr[-4000:]
                run = {
                    demo: subprocess.run([co.workspace / "bazel-bin" / demo], capture_output=True, text=True)
                    for demo in ("simple_mul_demo", "mlp_demo")
                }
                bad = None
                if label == "a":
                    bad_pkg = co.workspace / "bad"
                    bad_pkg.mkdir()
                    (bad_pkg / "BUILD").write_text(
                        'load("@ireegen//:defs.bzl", "ireegen_model")\n'
                        'ireegen_model(name = "m", src = "//:simple_mul.mlir", execution_model = "runtimeless",'
                        ' module_format = "vmfb")\n'
                    )
                    bad = co.bazel("build", "//bad:m")
                    results["onnx"] = _onnx_builds(co)
                    results["kernels"] = _kernel_builds(co)
                results[label] = (co, build, run, spawns(log), bad)
            finally:
                co.bazel("shutdown")
        results["requests"] = server.requests()
    return results


def _onnx_builds(co):
    """An ONNX model with its weights in an external data file, declared
    (model_data) and not: (build with, build without)."""
    try:
        from test_onnx import _save, mlp_model
    except ImportError:  # no onnx here: the ONNX tests skip
        return None
    pkg = co.workspace / "onnx"
    pkg.mkdir()
    save = dict(save_as_external_data=True, all_tensors_to_one_file=True, location="mlp.weights", size_threshold=0)
    _save(mlp_model(), pkg / "mlp.onnx", **save)
    (pkg / "BUILD").write_text(
        'load("@ireegen//:defs.bzl", "ireegen_model")\n'
        'ireegen_model(name = "net", src = "mlp.onnx", model_data = ["mlp.weights"],'
        ' input_shapes = ["image=2x64"], execution_model = "runtimeless")\n'
        'ireegen_model(name = "undeclared", src = "mlp.onnx",'
        ' input_shapes = ["image=2x64"], execution_model = "runtimeless")\n'
        'ireegen_model(name = "vad", src = "vad.onnx", input_values = ["sr=16000"], execution_model = "runtimeless")\n'
    )
    from test_onnx_shipped import branching_model

    _save(branching_model(), pkg / "vad.onnx")
    return co.bazel("build", "//onnx:net"), co.bazel("build", "//onnx:undeclared"), co.bazel("build", "//onnx:vad")


def _kernel_builds(co):
    """samples/custom_kernel's model and kernel spec, its files declared
    (kernel_files) and not: (build with, build without)."""
    pkg = co.workspace / "kernels"
    shutil.copytree(ROOT / "samples" / "custom_kernel", pkg / "src")
    (pkg / "BUILD").write_text(
        'load("@ireegen//:defs.bzl", "ireegen_model")\n'
        'FILES = ["src/scale_kernel.c", "src/scale_kernel.h", "src/scale.match.mlir"]\n'
        'ireegen_model(name = "scale", src = "src/scale.mlir", kernels = "src/kernels.json", kernel_files = FILES,'
        ' execution_model = "runtimeless")\n'
        'ireegen_model(name = "undeclared", model_name = "scale2", src = "src/scale.mlir",'
        ' kernels = "src/kernels.json", execution_model = "runtimeless")\n'
        'cc_binary(name = "scale_demo", srcs = ["src/main.c"], deps = [":scale"])\n'
    )
    return co.bazel("build", "//kernels:scale_demo"), co.bazel("build", "//kernels:undeclared")


def _emit_spawns(spawn_list, model):
    return [
        s
        for s in spawn_list
        if s.get("mnemonic") == "IreegenEmit" and any(f"/{model}_ireegen/" in o["path"] for o in s["actualOutputs"])
    ]


@needs_bazel
def test_the_sample_workspace_builds_verifies_and_runs(builds):
    co, build, run, spawn_list, _ = builds["a"]
    assert build.stdout.count("verified against async: max abs error") == 2, build.stdout
    demo = run["simple_mul_demo"]
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.splitlines() == ["-2 * 3 = -6", "-0.5 * 3.25 = -1.625", "1 * 3.5 = 3.5", "2.5 * 3.75 = 9.375"]
    # The MLP's weights come from the .incbin of data_format asm: numpy's logits.
    assert run["mlp_demo"].returncode == 0, run["mlp_demo"].stderr
    expected = sample_cases()["mlp"][3][0]  # for x[i] = i * 0.25 - 2, as mlp_main.c has it
    logits = np.array([float(v) for v in run["mlp_demo"].stdout.split()], np.float32)
    np.testing.assert_allclose(logits, expected.reshape(-1), rtol=1e-5, atol=1e-5)
    for model, blobs in (("simple_mul", []), ("mlp", ["mlp_constants.bin"])):
        (emit,) = _emit_spawns(spawn_list, model)
        assert not emit["remoteCacheHit"]
        # Its declared outputs are exactly what emit wrote (manifest.json lists them).
        outdir = co.workspace / "bazel-bin" / f"{model}_ireegen"
        manifest = json.loads((outdir / "manifest.json").read_text())
        declared = sorted(Path(o["path"]).name for o in emit["actualOutputs"])
        assert declared == sorted([f["path"] for f in manifest["files"]] + ["manifest.json"])
        assert sorted(p.name for p in outdir.iterdir()) == declared
        assert set(blobs) <= set(declared)
        # Inputs: the model only (no globbing of the source tree).
        assert [Path(i["path"]).name for i in emit["inputs"]] == [f"{model}.mlir"]


@needs_bazel
def test_a_clean_build_elsewhere_gets_the_ireegen_action_from_the_remote_cache(builds):
    _, build, run, spawn_list, _ = builds["b"]
    for model in ("simple_mul", "mlp"):
        (emit,) = _emit_spawns(spawn_list, model)
        assert emit["remoteCacheHit"], emit
    assert "remote cache hit" in build.stderr
    for demo, proc in run.items():
        assert proc.returncode == 0 and proc.stdout == builds["a"][2][demo].stdout
    assert any(r[0] == "GET" and r[1].startswith("/ac/") and r[2] == "200" for r in builds["requests"])


@needs_bazel
def test_onnx_external_data_is_a_declared_input(builds):
    if builds.get("onnx") is None:
        pytest.skip("onnx is not installed")
    declared, undeclared, _ = builds["onnx"]
    assert declared.returncode == 0, declared.stderr[-3000:]
    assert "verified against async" in declared.stdout
    # The sandbox shows the action only its declared inputs: without
    # model_data the weights are not there, and emit says so.
    assert undeclared.returncode != 0
    assert "its external data file mlp.weights is missing" in undeclared.stdout + undeclared.stderr


@needs_bazel
def test_a_kernel_spec_and_its_files_are_declared_inputs(builds):
    co = builds["a"][0]
    declared, undeclared = builds["kernels"]
    assert declared.returncode == 0, declared.stderr[-3000:]
    assert "verified against async" in declared.stdout
    manifest = json.loads((co.workspace / "bazel-bin" / "kernels" / "scale_ireegen" / "manifest.json").read_text())
    kernels = manifest["kernels"]
    assert [f["name"] for f in kernels["files"]] == ["scale.match.mlir", "scale_kernel.c", "scale_kernel.h"]
    assert [d["kernels"] for d in kernels["dispatches"]] == [["scale_mul_f32"]]
    demo = subprocess.run([co.workspace / "bazel-bin" / "kernels" / "scale_demo"], capture_output=True, text=True)
    assert demo.returncode == 0, demo.stderr
    # Without kernel_files the action does not see the sources, and emit says which.
    assert undeclared.returncode != 0
    assert "scale_kernel.c" in undeclared.stdout + undeclared.stderr


@needs_bazel
def test_input_values_fix_a_configuration_input(builds):
    if builds.get("onnx") is None:
        pytest.skip("onnx is not installed")
    co, vad = builds["a"][0], builds["onnx"][2]
    assert vad.returncode == 0, vad.stderr[-3000:]
    manifest = json.loads((co.workspace / "bazel-bin" / "onnx" / "vad_ireegen" / "manifest.json").read_text())
    assert manifest["source"]["input_values"] == {"sr": [16000]}
    assert [v["name"] for v in manifest["functions"][0]["inputs"]] == ["x"]


@needs_bazel
def test_an_impossible_combination_fails_at_analysis_with_ireegens_message(builds):
    bad = builds["a"][4]
    assert bad.returncode != 0
    assert "ireegen_model(m): --module-format vmfb: --execution-model runtimeless has no VM module" in bad.stderr


# samples/mlp through Bazel with the session's IREE runtime SDK
# (tests/iree_runtime.py, the one CI builds) as @iree_runtime: a VM mode of
# each module format, built in one workspace and run.
SDK_MODES = {"mlp_async": ("async", ""), "mlp_inline": ("inline-static", "emitc")}

# An SDK written by hand, laid out as an installed prefix (paths under
# ${_IMPORT_PREFIX}, the locations in a per-configuration file): a target
# Bazel can take, and package entries that must never become code or
# options (each refused when used).
HOSTILE_TARGETS = """\
get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_FILE}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
add_library(good STATIC IMPORTED)
set_target_properties(good PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_IMPORT_PREFIX}/include"
  INTERFACE_COMPILE_DEFINITIONS "GOOD_SCALE=3"
  INTERFACE_LINK_LIBRARIES "Threads::Threads"
)
add_library(quote STATIC IMPORTED)
set_target_properties(quote PROPERTIES
  IMPORTED_LOCATION_RELEASE "/x"); fail("injected"); x = ("/lib.a"
)
add_library(option INTERFACE IMPORTED)
set_target_properties(option PROPERTIES
  INTERFACE_COMPILE_DEFINITIONS "X=1 -fplugin=/tmp/evil.so"
)
add_library(flag INTERFACE IMPORTED)
set_target_properties(flag PROPERTIES
  INTERFACE_COMPILE_OPTIONS "-fplugin=/tmp/evil.so"
)
"""
HOSTILE_RELEASE = """\
set_property(TARGET good APPEND PROPERTY IMPORTED_CONFIGURATIONS RELEASE)
set_target_properties(good PROPERTIES
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libgood.a"
  )
"""


def _hand_written_sdk(prefix: Path):
    """An installed prefix with one archive, its header and the package."""
    package = prefix / "lib" / "cmake" / "IREE"
    package.mkdir(parents=True)
    (prefix / "include").mkdir()
    (prefix / "include" / "good.h").write_text("int good_scale(int x);\n")
    (prefix / "good.c").write_text('#include "good.h"\nint good_scale(int x) { return x * GOOD_SCALE; }\n')
    subprocess.run(
        ["cc", "-c", "-DGOOD_SCALE=3", "-I", prefix / "include", prefix / "good.c", "-o", prefix / "good.o"], check=True
    )
    subprocess.run(["ar", "rcs", prefix / "lib" / "libgood.a", prefix / "good.o"], check=True)
    (package / "IREERuntimeConfig.cmake").write_text('include("${CMAKE_CURRENT_LIST_DIR}/IREETargets-Runtime.cmake")\n')
    (package / "IREETargets-Runtime.cmake").write_text(HOSTILE_TARGETS)
    (package / "IREETargets-Runtime-release.cmake").write_text(HOSTILE_RELEASE)


@pytest.fixture(scope="module")
def sdk_build(tmp_path_factory, iree_runtime_dir):
    """The workspace built once: (workspace, build, {demo: run}, {label: build of a refused target})."""
    if not BAZEL:
        pytest.skip("needs bazel (bazel-bootstrap)")
    tmp = tmp_path_factory.mktemp("bazel_sdk")
    shutil.copytree(ROOT / "bazel", tmp / "bazel")
    ws = tmp / "ws"
    ws.mkdir()
    for f in ("main.c", "mlp.mlir"):
        shutil.copy(ROOT / "samples" / "mlp" / f, ws / f)
    shutil.copy(ROOT / "samples" / "bazel" / ".bazelrc", ws / ".bazelrc")
    _hand_written_sdk(tmp / "hostile")
    (ws / "good_main.c").write_text(
        '#include <stdio.h>\n#include "good.h"\nint main(void) { printf("%d %d\\n", good_scale(14), GOOD_SCALE); }\n'
    )
    (ws / "WORKSPACE").write_text(
        'workspace(name = "sdk_test")\n'
        'local_repository(name = "ireegen", path = "../bazel")\n'
        'local_repository(name = "rules_cc", path = "../bazel/rules_cc")\n'
        'local_repository(name = "rules_java", path = "../bazel/rules_java")\n'
        'load("@ireegen//:runtime.bzl", "ireegen_iree_runtime")\n'
        f"ireegen_iree_runtime(name = {json.dumps('iree_runtime')}, path = {json.dumps(str(iree_runtime_dir))})\n"
        f"ireegen_iree_runtime(name = {json.dumps('hostile')}, path = {json.dumps(str(tmp / 'hostile'))})\n"
    )
    rules = ['load("@ireegen//:defs.bzl", "ireegen_model")']
    for name, (mode, module_format) in SDK_MODES.items():
        rules += [
            f'ireegen_model(name = "{name}", model_name = "mlp", src = "mlp.mlir", execution_model = "{mode}",'
            f' module_format = "{module_format}")',
            f'cc_binary(name = "{name}_demo", srcs = ["main.c"], copts = ["-Wall", "-Wextra", "-Werror"],'
            f' deps = [":{name}"])',
        ]
    # The prefix itself as the path (not its lib/cmake/IREE).
    rules.append('cc_binary(name = "good_demo", srcs = ["good_main.c"], deps = ["@hostile//:good"])')
    (ws / "BUILD").write_text("\n".join(rules) + "\n")
    co = Checkout.__new__(Checkout)
    co.workspace, co.user_root = ws, tmp / "user_root"
    try:
        build = co.bazel("build", "//:all")
        runs = {
            name: subprocess.run([ws / "bazel-bin" / f"{name}_demo"], capture_output=True, text=True)
            for name in [*SDK_MODES, "good"]
        }
        refused = {
            label: co.bazel("build", label)
            for label in (
                "@iree_runtime//:flatcc_runtime",
                "@hostile//:quote",
                "@hostile//:option",
                "@hostile//:flag",
            )
        }
    finally:
        co.bazel("shutdown")
    return ws, build, runs, refused


@pytest.mark.parametrize("name", sorted(SDK_MODES))
def test_the_vm_modes_link_a_prebuilt_runtime_sdk(sdk_build, name):
    ws, build, runs, _ = sdk_build
    assert build.returncode == 0, build.stderr[-4000:]
    assert build.stdout.count("verified against async") == len(SDK_MODES), build.stdout
    run = runs[name]
    assert run.returncode == 0, run.stderr
    expected = sample_cases()["mlp"][3][0]  # for x[i] = i * 0.25 - 2, as main.c has it
    logits = np.array([float(v) for v in run.stdout.split()], np.float32)
    np.testing.assert_allclose(logits, expected.reshape(-1), rtol=1e-5, atol=1e-5)
    # The generated library links the SDK's archives, not a copy of its sources.
    mode, module_format = SDK_MODES[name]
    files = sorted(p.name for p in (ws / "bazel-bin" / f"{name}_ireegen").iterdir())
    assert ("mlp_module.c" in files) == (module_format == "emitc"), files


def test_a_runtime_target_the_sdk_lacks_or_cannot_give_fails_naming_it(sdk_build):
    refused = sdk_build[3]
    missing = refused["@iree_runtime//:flatcc_runtime"]
    assert missing.returncode != 0
    assert "ireegen_iree_runtime(iree_runtime): the SDK has no " in missing.stderr
    assert "(flatcc_runtime was not built)" in missing.stderr
    # Package entries are data: the BUILD file the rule wrote still loads
    # (the good target links into good_demo: its archive, header and
    # definition, found under the installed prefix), and each entry it
    # cannot take is refused.
    good = sdk_build[2]["good"]
    assert good.returncode == 0 and good.stdout == "42 3\n", (good.stdout, good.stderr)
    for label, why in (
        ("quote", 'the SDK has no /x"); fail("injected"); x = ("/lib.a (quote was not built)'),
        ("option", 'option has the compile definition "X=1 -fplugin=/tmp/evil.so"'),
        ("flag", 'flag has the compile option "-fplugin=/tmp/evil.so"'),
    ):
        proc = refused[f"@hostile//:{label}"]
        assert proc.returncode != 0
        assert f"ireegen_iree_runtime(hostile): {why}" in proc.stderr, proc.stderr[-3000:]
        assert "Error in fail: injected" not in proc.stderr
