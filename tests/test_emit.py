"""`ireegen emit` end to end with the real compiler: every combination's
outputs, the manifest against what iree.runtime reflects, the numbers the
modules compute, determinism."""

import hashlib
import json

import numpy as np
import pytest
from conftest import run_cli, sample_cases
from test_modes import all_combinations

from ireegen.check.runners import run_in_process, run_with_tool
from ireegen.frontend.signature import Function, function_from_declaration

CASES = sample_cases()
COMBINATIONS = list(all_combinations())


def _id(c):
    return "-".join(c)


@pytest.fixture(scope="module")
def emitted(tmp_path_factory):
    """Emits every sample in every combination once; {(sample, combo): outdir}."""
    cache = {}

    def get(sample, combo):
        key = (sample, combo)
        if key not in cache:
            em, fmt, mf = combo
            out = tmp_path_factory.mktemp(f"{sample}-{_id(combo)}")
            model = CASES[sample][0]
            proc = run_cli(
                "emit", model, "-o", out, "--execution-model", em, "--executable-format", fmt, "--module-format", mf
            )
            assert proc.returncode == 0, proc.stderr
            cache[key] = out
        return cache[key]

    return get


def reflected_functions(vmfb):
    import iree.runtime as rt

    module = rt.VmModule.mmap(rt.VmInstance(), str(vmfb))
    out = []
    for name in module.function_names:
        decl = module.lookup_function(name).reflection.get("iree.abi.declaration")
        if decl:
            out.append(function_from_declaration(decl))
    return out


@pytest.mark.parametrize("combo", COMBINATIONS, ids=_id)
@pytest.mark.parametrize("sample", sorted(CASES))
def test_outputs_and_manifest(emitted, sample, combo):
    em, fmt, mf = combo
    out = emitted(sample, combo)
    manifest = json.loads((out / "manifest.json").read_text())
    name = sample
    expected = {f"{name}.h", f"{name}.c"}
    expected |= {f"{name}.vmfb", f"{name}_module_data.S"} if mf == "vmfb" else {f"{name}_module.h", f"{name}_module.c"}
    if fmt == "static-library":
        expected |= {f"{name}_executables.o", f"{name}_executables.h"}
    assert {f["path"] for f in manifest["files"]} == expected
    assert set(p.name for p in out.iterdir()) == expected | {"manifest.json"}
    for f in manifest["files"]:
        assert hashlib.sha256((out / f["path"]).read_bytes()).hexdigest() == f["sha256"]
    assert (manifest["execution_model"], manifest["executable_format"], manifest["module_format"]) == combo
    assert manifest["iree"]["compiler_version"].startswith("3.")
    assert (manifest["target"] is None) == (fmt == "vmvx")
    # The manifest's signature is the one the compiled async module reflects.
    async_out = emitted(sample, ("async", "embedded-elf", "vmfb"))
    reflected = reflected_functions(async_out / f"{name}.vmfb")
    assert [Function.from_json(f) for f in manifest["functions"]] == reflected
    if mf == "vmfb":
        assert reflected_functions(out / f"{name}.vmfb") == reflected
    header = (out / f"{name}.h").read_text()
    assert header.startswith("// DO NOT EDIT")
    fn = manifest["functions"][0]
    for v in fn["inputs"] + fn["outputs"]:
        macro = f"{fn['c_symbol'].upper()}_{v['name'].upper()}"
        size = int(np.prod(v["shape"])) * np.dtype(v["dtype"]).itemsize
        assert f"#define {macro}_SIZE_BYTES {size}\n" in header
    if fmt == "static-library":
        assert manifest["static_library_queries"]
        assert all(q in (out / f"{name}_executables.h").read_text() for q in manifest["static_library_queries"])


RUNNABLE = [c for c in COMBINATIONS if c[2] == "vmfb" and c[1] != "static-library"]


@pytest.mark.parametrize("combo", RUNNABLE, ids=_id)
@pytest.mark.parametrize("sample", sorted(CASES))
def test_emitted_module_computes_numpy_reference(emitted, sample, combo):
    """async in-process through iree.runtime; inline through iree-run-module
    (the Python runtime cannot load inline modules)."""
    model, function, inputs, expected = CASES[sample]
    vmfb = emitted(sample, combo) / f"{sample}.vmfb"
    if combo[0] == "async":
        results = run_in_process(vmfb, function, inputs)
    else:
        results = run_with_tool(vmfb, function, inputs, len(expected))
    assert len(results) == len(expected)
    for got, want in zip(results, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "combo",
    [
        ("async", "embedded-elf", "vmfb"),
        ("inline-static", "vmvx", "emitc"),
        ("inline-dynamic", "static-library", "vmfb"),
    ],
    ids=_id,
)
def test_emit_is_deterministic(tmp_path, combo):
    model = CASES["mlp"][0]
    em, fmt, mf = combo
    outs = []
    for i in range(2):
        out = tmp_path / f"run{i}"
        proc = run_cli(
            "emit", model, "-o", out, "--execution-model", em, "--executable-format", fmt, "--module-format", mf
        )
        assert proc.returncode == 0, proc.stderr
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outs[0].keys() == outs[1].keys()
    for name in outs[0]:
        assert outs[0][name] == outs[1][name], f"{name} differs between two emits"


def test_reemit_removes_files_of_the_previous_mode(tmp_path):
    model = CASES["simple_mul"][0]
    assert run_cli("emit", model, "-o", tmp_path, "--executable-format", "static-library").returncode == 0
    assert (tmp_path / "simple_mul_executables.o").exists()
    assert run_cli("emit", model, "-o", tmp_path, "--module-format", "emitc").returncode == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {"simple_mul.h", "simple_mul.c", "simple_mul_module.h", "simple_mul_module.c", "manifest.json"}


def test_info_on_model_and_outdir(emitted):
    out = emitted("mlp", ("async", "embedded-elf", "vmfb"))
    for target in (CASES["mlp"][0], out):
        proc = run_cli("info", target)
        assert proc.returncode == 0, proc.stderr
        assert "@predict" in proc.stdout
        assert "in  input0: float32 [2x8]" in proc.stdout
        assert "out output0: float32 [2x4]" in proc.stdout
    proc = run_cli("info", "--json", out)
    assert json.loads(proc.stdout)[0]["outputs"][0]["shape"] == [2, 4]
