"""Runtimeless C: every static, straight-line corpus model built with gcc
-std=c11 -Wall -Wextra -Werror -O2, run, and compared with the async module
run through iree.runtime and with numpy; memcheck; cross builds under
qemu-user; the models it must refuse; its memory plan; its ABI check."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, run_cli
from test_parity import corpus

from ireegen.cbuild.native_run import STRICT_CFLAGS, build_runner
from ireegen.check.runners import RunError
from ireegen.config.modes import make_config
from ireegen.emit import emit
from ireegen.parity import parity

# Corpus models runtimeless C must refuse, and what the refusal names.
REFUSED = {
    "data_dependent_loop": ("@halve_until", "cf.cond_br", "a branch on a value only known at run time"),
    "dynamic_batch": ("@dense", "dynamic shape"),
    "unstructured_loop": ("@unstructured_loop", "cf.cond_br", "a branch on a value only known at run time"),
    "recurrent_loop": ("@recurrent_loop", "cf.cond_br", "a branch on a value only known at run time"),
}
ACCEPTED = sorted(set(corpus.CASES) - set(REFUSED))
CROSS_TRIPLES = ("aarch64-unknown-linux-gnu", "riscv64-unknown-linux-gnu")


def _first_calls(case):
    calls = {}
    for call in case.calls:
        calls.setdefault(call.function, call)
    return calls


@pytest.mark.parametrize("name", ACCEPTED)
def test_corpus_model_matches_async_and_numpy(name):
    case = corpus.CASES[name]
    calls = _first_calls(case)
    report = parity(
        case.path, modes=["runtimeless"], inputs={f: c.inputs for f, c in calls.items()}, rtol=case.rtol, atol=case.atol
    )
    assert report.exit_code == 0, report.table()
    for f, call in calls.items():
        got = report.results["runtimeless"][f]
        for actual, expected in zip(got, call.expected):
            corpus.compare(actual, expected, case.rtol, case.atol)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """name -> Runner, for the host, built once."""
    cache = {}

    def get(name, triple=None):
        key = (name, triple)
        if key not in cache:
            base = tmp_path_factory.mktemp(f"{name}-{triple or 'host'}")
            case = corpus.CASES[name]
            emit(case.path, base / "out", make_config("runtimeless", target_triple=triple), name=name)
            cache[key] = build_runner(base / "out", base / "build", extra_cflags=("-g",))
        return cache[key]

    return get


@pytest.mark.parametrize("name", ["cnn", "tensor_ops", "multi_output"])
def test_misaligned_tensors_are_staged_and_give_the_same_bits(built, name):
    runner = built(name)
    for call in corpus.CASES[name].calls:
        aligned, _ = runner.call(call.function, call.inputs)
        staged, _ = runner.call(call.function, call.inputs, misaligned=True)
        for a, b in zip(aligned, staged):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_aligned_io_arena_runs_aligned_tensors_and_refuses_others(built):
    runner = built("cnn")
    call = corpus.CASES["cnn"].calls[0]
    assert runner.manifest["runtimeless"]["arena"]["size_aligned_io"] < runner.manifest["runtimeless"]["arena"]["size"]
    out, _ = runner.call(call.function, call.inputs, aligned_io_arena=True)
    corpus.compare(out[0], call.expected[0], corpus.CASES["cnn"].rtol, corpus.CASES["cnn"].atol)
    with pytest.raises(RunError, match="is not aligned"):
        runner.call(call.function, call.inputs, aligned_io_arena=True, misaligned=True)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
@pytest.mark.parametrize("name", ["cnn", "tensor_ops", "multi_function", "stateful"])
def test_memcheck_is_clean(built, name):
    runner = built(name)
    wrapper = (
        "valgrind",
        "--tool=memcheck",
        "--error-exitcode=99",
        "--leak-check=full",
        "--errors-for-leak-kinds=all",
        "-q",
    )
    for call in corpus.CASES[name].calls:
        for misaligned in (False, True):
            out, _ = runner.call(call.function, call.inputs, misaligned=misaligned, wrapper=wrapper)
            for actual, expected in zip(out, call.expected):
                corpus.compare(actual, expected, corpus.CASES[name].rtol, corpus.CASES[name].atol)


def _cross_available(triple):
    from ireegen.cbuild.toolchains import toolchain_for
    from ireegen.common.errors import UsageError

    try:
        toolchain_for(triple)
        return True
    except UsageError as e:
        if os.environ.get("IREEGEN_REQUIRE_CROSS"):
            pytest.fail(f"IREEGEN_REQUIRE_CROSS is set but: {e}")
        return False


@pytest.mark.parametrize("triple", CROSS_TRIPLES)
@pytest.mark.parametrize("name", ACCEPTED)
def test_cross_build_runs_under_qemu(built, name, triple):
    if not _cross_available(triple):
        pytest.skip(f"no cross toolchain for {triple}")
    case = corpus.CASES[name]
    runner = built(name, triple)
    assert runner.toolchain.emulator, "a foreign target must run under an emulator"
    for call in case.calls:
        out, _ = runner.call(call.function, call.inputs, misaligned=(name == "cnn"))
        # Other targets may contract multiply-adds differently.
        for actual, expected in zip(out, call.expected):
            corpus.compare(actual, expected, max(case.rtol, 1e-4), max(case.atol, 1e-4))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_models_runtimeless_cannot_express_are_refused(tmp_path, name):
    out = tmp_path / "out"
    proc = run_cli("emit", corpus.CASES[name].path, "-o", out, "--execution-model", "runtimeless")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in REFUSED[name]:
        assert needle in proc.stderr, proc.stderr
    assert not out.exists() or not any(out.iterdir())


def test_emit_is_deterministic(tmp_path):
    path = corpus.CASES["cnn"].path
    for d in ("a", "b"):
        assert run_cli("emit", path, "-o", tmp_path / d, "--execution-model", "runtimeless").returncode == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes(), n


def test_generated_c_needs_no_iree_headers(built):
    runner = built("mlp")
    for f in runner.outdir.iterdir():
        if f.suffix in (".c", ".h"):
            text = f.read_text()
            # IREE's status API is used only when its headers happen to be
            # on the include path (so that VM-mode headers can follow).
            optional = '#if __has_include("iree/base/api.h")\n#include "iree/base/api.h"\n#endif\n'
            assert '#include "iree/' not in text.replace(optional, ""), f.name
            assert "malloc" not in text and "calloc" not in text, f.name
            assert text.startswith("// DO NOT EDIT"), f.name


def test_memory_plan_never_overlaps_live_buffers(built):
    for name in ACCEPTED:
        arena = built(name).manifest["runtimeless"]["arena"]
        assert arena["size_aligned_io"] <= arena["size"]
        # IREE's layout of its buffers cannot beat their liveness lower bound.
        assert arena.get("lower_bound", 0) <= arena["size_aligned_io"], name
        for fn, plan in arena["functions"].items():
            regions = plan["regions"]
            assert plan["size"] <= arena["size"]
            for r in regions:
                assert r["offset"] % arena["alignment"] == 0
                assert r["offset"] + r["size"] <= plan["size"], (name, fn, r)
                if r["role"] == "intermediate":
                    assert r["offset"] + r["size"] <= plan["size_aligned_io"], (name, fn, r)
            # Intermediates apart from intermediates, staging apart from staging
            # and from the byte ranges of the intermediates the steps touch
            # while it is live (staging may share an intermediate's other bytes).
            intermediates = [r for r in regions if r["role"] == "intermediate"]
            staging = [r for r in regions if r["role"] != "intermediate"]
            for r in plan["used"]:
                assert any(_within(r, i) for i in intermediates), (name, fn, r)
            for group, others in ((intermediates, []), (staging, plan["used"])):
                for i, a in enumerate(group):
                    for b in group[i + 1 :] + others:
                        assert not (_live_together(a, b) and _share_bytes(a, b)), (name, fn, a, b)


def _live_together(a, b) -> bool:
    return a["live"][0] <= b["live"][1] and b["live"][0] <= a["live"][1]


def _share_bytes(a, b) -> bool:
    return a["offset"] < b["offset"] + b["size"] and b["offset"] < a["offset"] + a["size"]


def _within(a, b) -> bool:
    return b["offset"] <= a["offset"] and a["offset"] + a["size"] <= b["offset"] + b["size"]


def test_arena_reuses_memory_on_a_deep_model(tmp_path):
    """Five chained matmuls: no more than two of the four 16 KiB
    intermediates are live at once (the fifth result is the caller's), so
    the arena needs 32 KiB, not the 64 KiB of all buffers."""
    body = [
        "  %c0 = arith.constant 0.0 : f32",
        "  %e = tensor.empty() : tensor<64x64xf32>",
        "  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>",
    ]
    prev = "%x"
    for i in range(5):
        body.append(
            f"  %m{i} = linalg.matmul ins({prev}, {prev} : tensor<64x64xf32>, tensor<64x64xf32>) "
            f"outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>"
        )
        prev = f"%m{i}"
    model = tmp_path / "deep.mlir"
    model.write_text(
        "func.func @deep(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
        + "\n".join(body)
        + f"\n  return {prev} : tensor<64x64xf32>\n}}\n"
    )
    emit(model, tmp_path / "out", make_config("runtimeless"), name="deep")
    arena = json.loads((tmp_path / "out" / "manifest.json").read_text())["runtimeless"]["arena"]["functions"]["deep"]
    assert arena["size_aligned_io"] <= 2 * 64 * 64 * 4 < arena["sum_of_buffers"], arena
    runner = build_runner(tmp_path / "out", tmp_path / "build")
    x = (np.random.default_rng(0).standard_normal((64, 64)) * 0.1).astype(np.float32)
    want = x
    for _ in range(5):
        want = want @ want
    got, _ = runner.call("deep", [x])
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-5)


def test_initialize_refuses_a_library_of_another_abi_version(tmp_path, monkeypatch):
    """The version check in NAME_initialize, against a stand-in library that
    reports version 7: the glue that looks the dispatch functions up, which
    an object ireegen cannot give direct names (direct_exports.py) gets."""
    import ireegen.compile.direct_exports

    monkeypatch.setattr(ireegen.compile.direct_exports, "alias_exports", lambda *args: None)
    emit(corpus.CASES["elementwise"].path, tmp_path / "out", make_config("runtimeless"), name="elementwise")
    runner = build_runner(tmp_path / "out", tmp_path / "build")
    assert runner.manifest["runtimeless"]["abi"]["direct_exports"] == []
    query = runner.manifest["runtimeless"]["abi"]["library_queries"][0]
    fake = tmp_path / "fake_library.c"
    fake.write_text(
        '#include "ireegen_executable_library.h"\n'
        'static const ireegen_library_header_t header = {7u, "future", 0, 0};\n'
        "static const ireegen_library_header_t* const header_ptr = &header;\n"
        f"const ireegen_library_header_t** {query}(uint32_t max_version, const ireegen_environment_t* env);\n"
        f"const ireegen_library_header_t** {query}(uint32_t max_version, const ireegen_environment_t* env) {{\n"
        "  (void)max_version; (void)env;\n"
        "  return (const ireegen_library_header_t**)&header_ptr;\n}\n"
    )
    main = tmp_path / "main.c"
    main.write_text(
        '#include <stdio.h>\n#include "elementwise.h"\n'
        "int main(void) {\n  elementwise_t* model = NULL;\n"
        "  iree_status_t status = elementwise_create(iree_allocator_system(), &model);\n"
        '  printf("%d\\n", (int)iree_status_code(status));\n  return 0;\n}\n'
    )
    out = runner.outdir
    program = tmp_path / "program"
    subprocess.run(
        [
            "cc",
            *STRICT_CFLAGS,
            f"-I{out}",
            str(main),
            str(out / "elementwise.c"),
            str(out / "elementwise_constants.S"),
            str(fake),
            "-o",
            str(program),
        ],
        check=True,
    )
    code = subprocess.run([str(program)], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    assert code == "18"  # IREE_STATUS_INCOMPATIBLE


def test_sample_main_builds_unchanged_against_runtimeless(tmp_path, built):
    """samples/mlp/main.c was written for the runtime-backed modes."""
    runner = built("mlp")  # the corpus MLP; the sample's main needs the sample model
    out = tmp_path / "out"
    emit(SAMPLES / "mlp" / "mlp.mlir", out, make_config("runtimeless"), name="mlp")
    program = tmp_path / "demo"
    subprocess.run(
        [
            "cc",
            *STRICT_CFLAGS,
            f"-I{out}",
            str(SAMPLES / "mlp" / "main.c"),
            str(out / "mlp.c"),
            str(out / "mlp_constants.S"),
            str(out / "mlp_executables.o"),
            "-lm",
            "-o",
            str(program),
        ],
        check=True,
    )
    printed = subprocess.run([str(program)], stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    from conftest import sample_cases

    _, _, _, expected = sample_cases()["mlp"]
    np.testing.assert_allclose(np.array(printed, np.float32), expected[0].ravel(), rtol=1e-5, atol=1e-6)
    assert runner.manifest["name"] == "mlp"


def test_run_cli(tmp_path):
    case = corpus.CASES["multi_function"]
    out = tmp_path / "out"
    assert run_cli("emit", case.path, "-o", out, "--execution-model", "runtimeless").returncode == 0
    call = next(c for c in case.calls if c.function == "scale")
    np.save(tmp_path / "x.npy", call.inputs[0])
    proc = run_cli(
        "run",
        out,
        "--function",
        "scale",
        "--input=@" + str(tmp_path / "x.npy"),
        f"--input={float(call.inputs[1])!r}",
        "--output=@" + str(tmp_path / "y.npy"),
    )
    assert proc.returncode == 0, proc.stderr
    corpus.compare(np.load(tmp_path / "y.npy"), call.expected[0], case.rtol, case.atol)
    # User mistakes: one clear line, exit 2.
    bad = [
        (["--function", "nope"], "--function nope"),
        (["--function", "scale", "--input=@" + str(tmp_path / "x.npy")], "takes 2 inputs"),
        (["--function", "scale", "--input=@" + str(tmp_path / "missing.npy"), "--input=1"], "no such file"),
        (["--function", "scale", "--input=@" + str(tmp_path / "x.npy"), "--input=abc"], "not a float32 number"),
    ]
    for args, needle in bad:
        proc = run_cli("run", out, *args)
        assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
    async_out = tmp_path / "async"
    assert run_cli("emit", case.path, "-o", async_out).returncode == 0
    proc = run_cli("run", async_out, "--function", "add")
    assert proc.returncode == 2 and "runs runtimeless C" in proc.stderr


def test_runtimeless_takes_no_module_format(tmp_path):
    proc = run_cli(
        "emit",
        ROOT / "samples" / "mlp" / "mlp.mlir",
        "-o",
        tmp_path,
        "--execution-model",
        "runtimeless",
        "--module-format",
        "emitc",
    )
    assert proc.returncode == 2 and "has no VM module" in proc.stderr


def test_address_and_undefined_behaviour_sanitizers_are_clean(tmp_path):
    """The generated C and the runner under ASan+UBSan, aligned and staged
    (the executables themselves are not instrumented)."""
    name = "tensor_ops"
    case = corpus.CASES[name]
    emit(case.path, tmp_path / "out", make_config("runtimeless"), name=name)
    try:
        runner = build_runner(
            tmp_path / "out",
            tmp_path / "build",
            extra_cflags=("-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"),
        )
    except RunError as e:
        if "sanitize" in str(e) and "cannot find" in str(e):
            pytest.skip("the C compiler has no sanitizer runtimes")
        raise
    for call in case.calls:
        for misaligned in (False, True):
            out, _ = runner.call(call.function, call.inputs, misaligned=misaligned)
            for actual, expected in zip(out, call.expected):
                corpus.compare(actual, expected, case.rtol, case.atol)


def test_share_lengths_one_table_for_equal_static_lengths():
    """Dispatches that bind the same static lengths share one file-scope
    table; a table used once, and lengths known only at run time, stay in
    their step (each dispatch step has a `lengths_table`, None for those)."""
    from ireegen.runtimeless.lower import share_lengths
    from ireegen.runtimeless.schedule import Sym
    from ireegen.runtimeless.steps import At, DispatchStep, FillStep

    def dispatch(*lengths):
        return DispatchStep("e", "q", 0, (1, 1, 1), (), (), tuple(lengths))

    steps = [
        dispatch(128, 512),
        FillStep(At("arena", 0, 4), 0, 4),
        dispatch(64),
        dispatch(128, 512),
        dispatch(Sym("n")),
        dispatch(64),
        dispatch(8, 8),
    ]
    tables = share_lengths(steps, "m")
    assert tables == [
        {"name": "m__binding_lengths_0", "lengths": [128, 512]},
        {"name": "m__binding_lengths_1", "lengths": [64]},
    ]
    assert [getattr(s, "lengths_table", None) for s in steps] == [
        "m__binding_lengths_0",
        None,
        "m__binding_lengths_1",
        "m__binding_lengths_0",
        None,
        "m__binding_lengths_1",
        None,
    ]
