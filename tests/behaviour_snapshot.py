"""Behaviour snapshot of ireegen's command line: what a corpus of models
computes, and what ireegen says when it refuses, so that two trees (before and
after a refactor) can be compared.

    PYTHONPATH=... python tests/behaviour_snapshot.py record OUT_DIR [--subset ci|full] [--jobs N]
                                                        [--models-from SNAPSHOT] [--only SUBSTRING ...]
    python tests/behaviour_snapshot.py compare BEFORE_DIR AFTER_DIR
    python tests/behaviour_snapshot.py list [--subset ci|full]

To check another tree against a baseline, run this file with that tree's
ireegen on PYTHONPATH and the baseline's models:

    PYTHONPATH=/tmp/wt-env:/work/wt-X python tests/behaviour_snapshot.py record /tmp/after-X \
        --subset ci --models-from /tmp/corpus-before
    python tests/behaviour_snapshot.py compare /tmp/corpus-before /tmp/after-X

`record` uses only ireegen's command line (`python -m ireegen emit|run|info|size`,
with the ireegen that PYTHONPATH finds) and IREE's `iree-run-module`, never
ireegen's Python modules, so it runs the same on any tree.  The corpus is the
CASES table below: the samples in every execution model, tests/models/*.mlir,
a fixed subset of ONNX's node tests, the MLPerf Tiny models (benchmarks/
mlperf_tiny_models.py) on the host, Cortex-M4 (ireegen's int8 kernels),
Cortex-M55, bare-metal RV32 and AArch64 Linux, and bad inputs that ireegen
refuses.  Every case runs with `--tune off` except the TUNED ones.

Per case, OUT_DIR/<case>/ holds `out/` (what emit wrote), `inputs/` and
`outputs/` (.npy), and case.json: emit's exit status, its refusal (the whole
of stderr, ireegen's line and any compiler diagnostics after it, with the
snapshot's paths replaced by <out> and temporary directories by <tmp>), the
sha256 of every generated file, the sha256 of each top-level manifest key (ireegen_version left out), the verification section's
errors, and the outputs of running the generated code on fixed seeded inputs:
`ireegen run` for runtimeless (host, qemu-user or qemu-system), IREE's
`iree-run-module` for a VM module it can load (vmfb with embedded-elf or
vmvx on the host).  The C glue of the VM modes needs IREE's runtime C SDK,
which is not installed here: for those, and for emitc and static-library
modules, the file hashes and the verification's max errors against async are
what is recorded.  OUT_DIR/_models/ holds every model the cases read;
`--models-from` copies them from an earlier snapshot, so that both snapshots
compile the same bytes.

`compare` prints, per case, whether its files are identical, which files'
bytes changed and whether the computed numbers (run outputs, verification
errors) are bit-identical, and any refusal text or exit status that differs.
It exits 1 if any number, exit status or refusal text differs, else 0.  Only
the cases of AFTER's subset are compared.  The manifest's content_key covers
the sha256 of ireegen's templates, so a template edit changes manifest.json in
every case that emits (its content_key and files keys).  A
TUNED case whose tuner chose other flags (a choice that depends on timing) is
reported, and its numbers are compared only when both chose the same flags.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODES = ("async", "inline-static", "inline-dynamic", "runtimeless")
EMIT_TIMEOUT_S = 1800
RUN_TIMEOUT_S = 600
# Top-level manifest keys that differ between two trees without a change in behaviour.
VOLATILE_MANIFEST_KEYS = ("ireegen_version",)
# Environment variables that would make a case depend on the machine's state.
CLEARED_ENV = ("IREEGEN_CACHE", "IREEGEN_CACHE_MODE", "IREEGEN_TUNE", "IREEGEN_TUNING_DIR")


# ---------------------------------------------------------------------------
# The models: key -> (how it is made, argument)

TESTS_MODELS = sorted(p.stem for p in (ROOT / "tests" / "models").glob("*.mlir"))
MODELS_ASYNC_CI = ("cnn", "dynamic_batch", "mlp", "multi_output", "stateful")
MLPERF = ("ds_cnn", "resnet8", "mobilenet_v1", "autoencoder")
MLPERF_VARIANTS = tuple(f"{n}{v}" for n in MLPERF for v in ("", "_int8"))

# ONNX node tests: every sixth test of the committed CI subset
# (tests/onnx_conformance_status.json), 28 that pass and 5 that IREE cannot import.
ONNX_NODE_TESTS = (
    "test_abs",
    "test_affine_grid_2d",
    "test_argmax_default_axis_example",
    "test_attention_23_boolmask_fullymasked_row_nan_robustness",
    "test_bitcast_2d_float32_to_int32",
    "test_blackmanwindow",
    "test_center_crop_pad_crop",
    "test_constant_pad",
    "test_cumprod_1d",
    "test_div",
    "test_erf",
    "test_floor",
    "test_globalaveragepool",
    "test_gru_batchwise",
    "test_identity",
    "test_l1normalization_axis_0",
    "test_log",
    "test_matmul_1d_1d",
    "test_melweightmatrix",
    "test_mvn",
    "test_onehot_negative_indices",
    "test_qlinearconv",
    "test_reduce_l2_default_axes_keepdims_example",
    "test_reduce_prod_default_axes_keepdims_example",
    "test_resize_downsample_scales_cubic",
    "test_round",
    "test_selu",
    "test_sign",
    "test_softplus",
    "test_squeeze",
    "test_sum_example",
    "test_tfidfvectorizer_tf_batch_onlybigrams_skip0",
    "test_unique_bfloat16_sorted_without_axis",
)
ONNX_NODE_CI = ONNX_NODE_TESTS[::3]

SIMPLE_MUL_TEXT = (ROOT / "samples" / "simple_mul" / "simple_mul.mlir").read_text()
BIG_TENSOR = "tensor<1099511627776xf32>"

# Model texts of the refusal cases (tests/test_user_errors.py, test_cli_errors.py, test_messages.py).
MLIR_TEXTS = {
    "empty.mlir": "\n \n",
    "bad.mlir": SIMPLE_MUL_TEXT.replace("%arg0, %arg1 :", "%arg0, %undefined :"),
    "unlowerable.mlir": "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    '  %0 = "mystery.op"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n'
    "  return %0 : tensor<4xf32>\n}\n",
    "clash.mlir": "func.func @create(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n",
    "big.mlir": f"func.func @big(%x: {BIG_TENSOR}) -> {BIG_TENSOR} {{\n"
    f"  %0 = arith.addf %x, %x : {BIG_TENSOR}\n  return %0 : {BIG_TENSOR}\n}}\n",
    "deep.mlir": "module attributes {x = " + "[" * 100_000 + "]" * 100_000 + "} {\n"
    "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n}\n",
    "ident.mlir": "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
}
RAW_FILES = {"model.tflite": b"\x08\x01", "x.bin": np.ones(4, np.float32).tobytes()}


def _copy(source: str):
    return lambda path: shutil.copyfile(ROOT / source, path)


def _text(text: str):
    return lambda path: path.write_text(text)


def _raw(data: bytes):
    return lambda path: path.write_bytes(data)


def _relu_onnx(dims, graph_name="g"):
    def write(path):
        import onnx
        from onnx import TensorProto, helper

        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(dims))
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], graph_name, [x], [y])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.save(model, str(path))

    return write


def _string_normalizer_onnx(path):
    import onnx
    from onnx import TensorProto, helper

    node = helper.make_node("StringNormalizer", ["words"], ["norm"], name="normalize_words", case_change_action="LOWER")
    graph = helper.make_graph(
        [node],
        "text",
        [helper.make_tensor_value_info("words", TensorProto.STRING, [3])],
        [helper.make_tensor_value_info("norm", TensorProto.STRING, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _mlperf(name: str, int8: bool):
    def write(path):
        import onnx

        sys.path.insert(0, str(ROOT / "benchmarks"))
        import mlperf_tiny_models as mt

        onnx.save(mt.quantized(name) if int8 else mt.build(name), str(path))

    return write


# model file (under OUT_DIR/_models/) -> writer
MODEL_FILES = {
    "sample/mlp.mlir": _copy("samples/mlp/mlp.mlir"),
    "sample/digits.onnx": _copy("samples/digits/digits.onnx"),
    "sample/simple_mul.mlir": _copy("samples/simple_mul/simple_mul.mlir"),
    **{f"models/{m}.mlir": _copy(f"tests/models/{m}.mlir") for m in TESTS_MODELS},
    **{f"mlperf/{n}.onnx": _mlperf(n.removesuffix("_int8"), n.endswith("_int8")) for n in MLPERF_VARIANTS},
    **{f"bad/{name}": _text(text) for name, text in MLIR_TEXTS.items()},
    **{f"bad/{name}": _raw(data) for name, data in RAW_FILES.items()},
    "bad/dyn.onnx": _relu_onnx(("batch", 3)),
    "bad/shape.onnx": _relu_onnx(("n", 3)),
    "bad/longname.onnx": _relu_onnx((2, 3), graph_name="g" * 5000),
    "bad/text.onnx": _string_normalizer_onnx,
}
# onnx/TEST.onnx and onnx/TEST.inputs/: from onnx's generators (ONNX_NODE_TESTS).


# ---------------------------------------------------------------------------
# The cases


@dataclass(frozen=True)
class Case:
    name: str
    model: str  # file under OUT_DIR/_models/ (or one that does not exist)
    flags: tuple = ()
    ci: bool = True  # in the ci subset (every case is in full)
    tuned: bool = False  # runs the tuner: its flags depend on timing
    after: tuple = ()  # further commands on the emitted directory: argv tuples, "{out}" for OUTDIR
    size: bool = False  # also record `ireegen size OUTDIR`


def _mode(mode: str) -> tuple:
    return ("--execution-model", mode)


CPU_TARGETS = {  # label -> flags
    "host": (),
    "cortex-m4": ("--target-cpu", "cortex-m4"),
    "cortex-m55": ("--target-cpu", "cortex-m55"),
    "riscv32": ("--target-triple", "riscv32-unknown-elf"),
    "aarch64": ("--target-triple", "aarch64-unknown-linux-gnu"),
}
MCU = ("cortex-m4", "cortex-m55", "riscv32")

# (model, target, mode, extra flags, in ci): the MLPerf Tiny cases.
MLPERF_CASES = (
    [
        (m, "host", mode, (), m in ("ds_cnn", "ds_cnn_int8"))
        for m in MLPERF_VARIANTS
        for mode in ("runtimeless", "async")
    ]
    + [(m, cpu, "runtimeless", (), m in ("ds_cnn_int8", "autoencoder")) for m in MLPERF_VARIANTS for cpu in MCU[:2]]
    + [(m, "riscv32", "runtimeless", (), False) for m in ("ds_cnn_int8", "autoencoder")]
    + [(m, "aarch64", "runtimeless", (), False) for m in ("ds_cnn", "ds_cnn_int8")]
    + [("ds_cnn", "aarch64", "async", (), False)]
    + [
        ("ds_cnn_int8", "cortex-m4", "runtimeless", ("--optimize-for", "size"), False),
        ("ds_cnn_int8", "cortex-m4", "runtimeless", ("--no-builtin-kernels",), False),
        ("ds_cnn_int8", "cortex-m4", "runtimeless", ("--quantized-io",), True),
        ("ds_cnn_int8", "host", "runtimeless", ("--quantized-io",), False),
        ("ds_cnn_int8", "cortex-m55", "runtimeless", ("--optimize-for", "size"), False),
    ]
)
EXTRA_LABELS = {
    ("--optimize-for", "size"): "size",
    ("--no-builtin-kernels",): "nokernels",
    ("--quantized-io",): "qio",
    ("--module-format", "emitc"): "emitc",
    ("--executable-format", "static-library"): "staticlib",
    ("--executable-format", "vmvx"): "vmvx",
    ("--data-format", "c"): "cdata",
}
SAMPLE_VARIANTS = (  # (mode, extra flags) of samples/mlp beyond its four modes
    ("async", ("--module-format", "emitc")),
    ("async", ("--executable-format", "static-library")),
    ("async", ("--executable-format", "vmvx")),
    ("inline-dynamic", ("--executable-format", "static-library")),
    ("runtimeless", ("--data-format", "c")),
    ("runtimeless", ("--optimize-for", "size")),
)
OFF = ("--tune", "off")
NO_VERIFY = ("--no-verify",)

REFUSALS = (  # (case, model, flags): each refused, as the tests check
    ("missing_model", "bad/nope.mlir", ()),
    ("unsupported_format", "bad/model.tflite", ()),
    ("empty_model", "bad/empty.mlir", ()),
    ("malformed_mlir", "bad/bad.mlir", ()),
    ("unlowerable_op", "bad/unlowerable.mlir", ()),
    ("function_name_clash", "bad/clash.mlir", ()),
    ("too_deep_mlir", "bad/deep.mlir", ()),
    ("bad_target_triple", "sample/simple_mul.mlir", ("--target-triple", "aarch64")),
    ("unknown_target_triple", "sample/simple_mul.mlir", ("--target-triple", "mips-unknown-linux-gnu")),
    ("bad_target_cpu", "sample/simple_mul.mlir", ("--target-cpu", "skylak")),
    ("bad_target_cpu_cortex_m99", "sample/simple_mul.mlir", ("--target-cpu", "cortex-m99")),
    (
        "inconsistent_cortex_m_target",
        "sample/simple_mul.mlir",
        ("--target-triple", "thumbv7m-none-eabihf", "--target-cpu", "cortex-m3"),
    ),
    ("iree_flag_output_format", "sample/simple_mul.mlir", ("--iree-flag", "--output-format=vm-c")),
    ("iree_flag_execution_model", "sample/simple_mul.mlir", ("--iree-flag=--iree-execution-model=inline-static",)),
    ("iree_flag_no_dash", "sample/simple_mul.mlir", ("--iree-flag=nodash",)),
    ("name_too_long", "sample/simple_mul.mlir", ("--name", "n" * 300)),
    ("name_digit", "sample/simple_mul.mlir", ("--name", "9lives")),
    ("name_reserved", "sample/simple_mul.mlir", ("--name", "iree_model")),
    (
        "inline_static_static_library",
        "sample/simple_mul.mlir",
        (*_mode("inline-static"), "--executable-format", "static-library"),
    ),
    ("unknown_execution_model", "sample/simple_mul.mlir", _mode("eager")),
    ("unknown_module_format", "sample/simple_mul.mlir", ("--module-format", "so")),
    ("verify_inputs_not_npz", "sample/simple_mul.mlir", ("--verify-inputs", "_models/bad/x.bin")),
    ("input_shape_superscript", "bad/shape.onnx", ("--input-shape", "x=\u00b2x3")),
    ("input_shape_too_many_elements", "bad/shape.onnx", ("--input-shape", "x=65536x65536")),
    ("input_shape_int64_overflow", "bad/shape.onnx", ("--input-shape", "x=9223372036854775808x3")),
    ("input_shape_unknown_input", "sample/digits.onnx", ("--input-shape", "picture=1x64")),
    ("input_shape_bad_dims", "sample/digits.onnx", ("--input-shape", "image=1x")),
    ("unsupported_onnx_op", "bad/text.onnx", ()),
    ("long_graph_name", "bad/longname.onnx", NO_VERIFY),
    ("runtimeless_dynamic_onnx", "bad/dyn.onnx", _mode("runtimeless")),
    ("runtimeless_dynamic_mlir", "models/dynamic_batch.mlir", _mode("runtimeless")),
    ("huge_tensor_async", "bad/big.mlir", (*_mode("async"), *NO_VERIFY)),
    ("huge_arena_runtimeless", "bad/big.mlir", (*_mode("runtimeless"), *NO_VERIFY)),
    (
        "runtimeless_huge_arena_cortex_m4",
        "bad/big.mlir",
        (*_mode("runtimeless"), "--target-cpu", "cortex-m4", *NO_VERIFY),
    ),
    ("quantized_io_float_model", "mlperf/autoencoder.onnx", ("--quantized-io",)),
    ("emitc_with_loops", "models/data_dependent_loop.mlir", ("--module-format", "emitc")),
)
RUN_REFUSALS = (  # `ireegen run` on simple_mul's runtimeless directory
    ("run", "{out}", "--function", "nope"),
    ("run", "{out}", "--function", "simple_mul", "--input=@_models/bad/x.bin", "--input=@_models/bad/x.bin"),
    (
        "run",
        "{out}",
        "--function",
        "simple_mul",
        "--input=@_models/bad/missing.npy",
        "--input=@_models/bad/missing.npy",
    ),
    ("run", "{out}", "--function", "simple_mul", "--input=1"),
    ("run", "_models", "--function", "simple_mul"),
    ("info", "_models"),
)


def _label(flags: tuple) -> str:
    return f".{EXTRA_LABELS[flags]}" if flags else ""


def _cases() -> list:
    cases = []
    for mode in MODES:
        cases.append(Case(f"sample.mlp.{mode}", "sample/mlp.mlir", (*_mode(mode), *OFF)))
        cases.append(
            Case(f"sample.digits.{mode}", "sample/digits.onnx", (*_mode(mode), "--input-shape", "image=1x64", *OFF))
        )
    for mode, extra in SAMPLE_VARIANTS:
        cases.append(Case(f"sample.mlp.{mode}{_label(extra)}", "sample/mlp.mlir", (*_mode(mode), *extra, *OFF)))
    for model in TESTS_MODELS:
        for mode in MODES:
            ci = mode == "runtimeless" or (mode == "async" and model in MODELS_ASYNC_CI)
            cases.append(Case(f"models.{model}.{mode}", f"models/{model}.mlir", (*_mode(mode), *OFF), ci=ci))
    for test in ONNX_NODE_TESTS:
        for mode in ("async", "runtimeless"):
            cases.append(
                Case(f"onnx.{test}.{mode}", f"onnx/{test}.onnx", (*_mode(mode), *OFF), ci=test in ONNX_NODE_CI)
            )
    for model, target, mode, extra, ci in MLPERF_CASES:
        flags = (*_mode(mode), *CPU_TARGETS[target], *extra, *OFF)
        name = f"mlperf.{model}.{target}.{mode}{_label(extra)}"
        cases.append(Case(name, f"mlperf/{model}.onnx", flags, ci=ci, size=target in MCU))
    cases.append(
        Case("tuned.cnn.runtimeless", "models/cnn.mlir", (*_mode("runtimeless"), "--tune", "quick"), tuned=True)
    )
    cases.append(
        Case(
            "tuned.ds_cnn.host.async", "mlperf/ds_cnn.onnx", (*_mode("async"), "--tune", "quick"), ci=False, tuned=True
        )
    )
    for name, model, flags in REFUSALS:
        cases.append(Case(f"refusal.{name}", model, (*flags, *OFF)))
    cases.append(Case("refusal.run", "sample/simple_mul.mlir", (*_mode("runtimeless"), *OFF), after=RUN_REFUSALS))
    cases.append(Case("refusal.runtimeless_no_kernel", "bad/ident.mlir", (*_mode("runtimeless"), *OFF)))
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    return cases


CASES = _cases()


def select(subset: str, only=()) -> list:
    chosen = [c for c in CASES if subset == "full" or c.ci]
    return [c for c in chosen if not only or any(o in c.name for o in only)]


# ---------------------------------------------------------------------------
# Recording


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def array_hash(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    return sha256(f"{a.dtype.str}{a.shape}".encode() + a.tobytes())


def normalize(text: str, out_dir: Path) -> str:
    """Replaces the paths that differ between snapshots and trees."""
    for path, name in ((out_dir.resolve(), "<out>"), (ROOT, "<repo>")):
        text = text.replace(str(path), name)
    text = re.sub(r"/tmp/[A-Za-z0-9_.+-]*(?:tmp|ireegen)[A-Za-z0-9_.+-]*", "<tmp>", text)
    return re.sub(r"\btmp[a-z0-9_]{8}\b", "<tmp>", text)


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def write_models(out_dir: Path, cases: list, models_from: Path | None) -> dict:
    """Writes every model the cases read into OUT_DIR/_models/: {file: sha256}."""
    models = out_dir / "_models"
    models.mkdir(parents=True, exist_ok=True)
    wanted = {c.model for c in cases} | {f"bad/{name}" for name in RAW_FILES}
    onnx_tests = sorted(t for t in ONNX_NODE_TESTS if f"onnx/{t}.onnx" in wanted)
    if models_from is not None:
        shutil.copytree(models_from / "_models", models, dirs_exist_ok=True)
    else:
        for name in sorted(wanted & set(MODEL_FILES)):
            (models / name).parent.mkdir(parents=True, exist_ok=True)
            MODEL_FILES[name](models / name)
        if onnx_tests:
            (models / "onnx").mkdir(exist_ok=True)
            _write_onnx_node_tests(models / "onnx", onnx_tests)
    return {str(p.relative_to(models)): sha256(p.read_bytes()) for p in sorted(models.rglob("*")) if p.is_file()}


def _write_onnx_node_tests(models: Path, names: list) -> None:
    import warnings

    from onnx import TensorProto, numpy_helper
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            found = {c.name: c for c in collect_testcases(None) if c.name in names}
    for name in names:
        case = found[name]
        (models / f"{name}.onnx").write_bytes(case.model.SerializeToString())
        inputs = models / f"{name}.inputs"
        inputs.mkdir(exist_ok=True)
        for i, value in enumerate(case.data_sets[0][0]):
            array = numpy_helper.to_array(value) if isinstance(value, TensorProto) else np.asarray(value)
            np.save(inputs / f"{i}.npy", array, allow_pickle=False)


def _corpus_inputs() -> dict:
    """tests/models/corpus.py's first call of each function: {(model, function): [array]}."""
    sys.path.insert(0, str(ROOT / "tests" / "models"))
    import corpus

    calls = {}
    for name, case in corpus.CASES.items():
        for call in case.calls:
            calls.setdefault((name, call.function), [np.asarray(x) for x in call.inputs])
    return calls


def _known_inputs(case: Case, function: str, corpus_calls: dict, models: Path) -> list | None:
    folder, stem = case.model.split("/")[0], Path(case.model).stem
    if folder == "models" and (stem, function) in corpus_calls:
        return corpus_calls[(stem, function)]
    node = models / folder / f"{stem}.inputs"
    if folder == "onnx" and node.is_dir():
        return [np.load(p) for p in sorted(node.glob("*.npy"), key=lambda p: int(p.stem))]
    if folder == "mlperf":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import mlperf_tiny_models as mt

        return [mt.sample_input(stem.removesuffix("_int8"))]
    return None


def _random_input(spec: dict, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = [2 if d is None else d for d in spec["shape"]]
    dtype = np.dtype(spec["dtype"])
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    low = 0 if dtype.kind == "u" else -3
    return rng.integers(low, 4, shape).astype(dtype)


def _fits(array: np.ndarray, spec: dict) -> bool:
    shape = spec["shape"]
    return (
        array.dtype == np.dtype(spec["dtype"])
        and array.ndim == len(shape)
        and all(d is None or d == n for d, n in zip(shape, array.shape))
    )


def choose_inputs(case: Case, function: dict, corpus_calls: dict, models: Path) -> list:
    """Fixed inputs of one function: the model's own (corpus, node test,
    MLPerf sample) when they fit its signature, else seeded random ones."""
    specs = function["inputs"]
    known = _known_inputs(case, function["name"], corpus_calls, models)
    if known is not None and len(known) == len(specs) and all(_fits(a, s) for a, s in zip(known, specs)):
        return known
    seed = zlib.crc32(f"{case.model}/{function['name']}".encode())
    return [_random_input(s, seed + i) for i, s in enumerate(specs)]


def _argument(array: np.ndarray, path: Path, spec: dict, out_dir: Path) -> str:
    if spec.get("kind", "tensor") == "tensor":
        return f"--input=@{path.relative_to(out_dir)}"
    value = array.item()
    return f"--input={int(value) if isinstance(value, bool) else value}"


HOST_TRIPLE = f"{platform.machine()}-unknown-linux-gnu"


def runner_of(manifest: dict) -> tuple:
    """(runner, why not) for the emitted code of this manifest."""
    if manifest.get("execution_model") == "runtimeless":
        return "ireegen run", ""
    if manifest.get("module_format") != "vmfb":
        return None, f"module format {manifest.get('module_format')}: needs IREE's runtime C SDK"
    if manifest.get("executable_format") == "static-library":
        return None, "static-library executables: needs IREE's runtime C SDK"
    triple = (manifest.get("target") or {}).get("triple")
    if manifest.get("executable_format") != "vmvx" and triple != HOST_TRIPLE:
        return None, f"target {triple}: not the host"
    return "iree-run-module", ""


def _run(argv: list, cwd: Path, env: dict, timeout: int) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(argv, "timeout", e.stdout or "", f"timed out after {timeout} s")


def run_function(case_dir: Path, out_dir: Path, manifest: dict, function: dict, inputs: list, env) -> dict:
    runner, why = runner_of(manifest)
    fname = function["name"]
    ins = case_dir / "inputs"
    outs = case_dir / "outputs"
    ins.mkdir(exist_ok=True)
    outs.mkdir(exist_ok=True)
    record = {"inputs": [array_hash(a) for a in inputs], "runner": runner}
    if runner is None:
        record["not_run"] = why
        for i, a in enumerate(inputs):
            np.save(ins / f"{fname}.{i}.npy", a, allow_pickle=False)
        return record
    args = []
    for i, (a, spec) in enumerate(zip(inputs, function["inputs"])):
        path = ins / f"{fname}.{i}.npy"
        np.save(path, a, allow_pickle=False)
        args.append(_argument(a, path, spec, out_dir))
    results = [outs / f"{fname}.{i}.npy" for i in range(len(function["outputs"]))]
    for r in results:
        r.unlink(missing_ok=True)
    results_args = [f"--output=@{r.relative_to(out_dir)}" for r in results]
    out = (case_dir / "out").relative_to(out_dir)
    if runner == "ireegen run":
        build = case_dir / "build"
        argv = [sys.executable, "-m", "ireegen", "run", str(out), "--function", fname, *args, *results_args]
        argv += ["--build-dir", str(build.relative_to(out_dir))]
    else:
        vmfb = out / f"{manifest['name']}.vmfb"
        argv = ["iree-run-module", f"--module={vmfb}", "--device=local-sync", f"--function={fname}"]
        argv += [*args, *results_args]
    proc = _run(argv, out_dir, env, RUN_TIMEOUT_S)
    if runner == "ireegen run":
        shutil.rmtree(case_dir / "build", ignore_errors=True)
    record["exit"] = proc.returncode
    if proc.returncode != 0:
        record["error"] = normalize(last_line(proc.stderr), out_dir)
    record["outputs"] = [array_hash(np.load(r)) if r.is_file() else None for r in results]
    return record


def verification_numbers(manifest: dict) -> dict:
    v = manifest.get("verification") or {}
    numbers = {"verified": v.get("verified"), "ran": v.get("ran"), "notes": v.get("notes")}
    for fname, f in sorted((v.get("functions") or {}).items()):
        for oname, o in sorted((f.get("outputs") or {}).items()):
            numbers[f"{fname}.{oname}"] = [o.get("max_abs_error"), o.get("max_rel_error"), o.get("range")]
    return numbers


def record_case(case: Case, out_dir: Path, corpus_calls: dict, model_hashes: dict) -> dict:
    """Records one case; an error of this script is recorded as the case's result."""
    try:
        return _record_case(case, out_dir, corpus_calls, model_hashes)
    except Exception as e:  # one broken case must not stop the snapshot
        (out_dir / case.name).mkdir(parents=True, exist_ok=True)
        rec = {"case": case.name, "script_error": f"{type(e).__name__}: {normalize(str(e), out_dir)}"}
        (out_dir / case.name / "case.json").write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n")
        return {"case": case.name, "seconds": None, "exit": rec["script_error"]}


def _record_case(case: Case, out_dir: Path, corpus_calls: dict, model_hashes: dict) -> dict:
    case_dir = out_dir / case.name
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    env["IREEGEN_TUNING_DIR"] = str(case_dir / "tuning")
    out = case_dir / "out"
    model = f"_models/{case.model}"
    argv = [sys.executable, "-m", "ireegen", "emit", model, "-o", str(out.relative_to(out_dir)), *case.flags]
    start = time.monotonic()
    proc = _run(argv, out_dir, env, EMIT_TIMEOUT_S)
    (case_dir / "emit.stdout").write_text(normalize(proc.stdout, out_dir))
    (case_dir / "emit.stderr").write_text(normalize(proc.stderr, out_dir))
    rec = {
        "case": case.name,
        "emit": ["ireegen", "emit", model, "-o", "<case>/out", *case.flags],
        "model_sha256": model_hashes.get(case.model),
        "tuned": case.tuned,
        "exit": proc.returncode,
        "refusal": normalize(proc.stderr, out_dir).strip() if proc.returncode != 0 else None,
        "warnings": normalize(proc.stderr, out_dir).strip() if proc.returncode == 0 else None,
        # The tuner's summary line has its timings.
        "summary": None if case.tuned else normalize(last_line(proc.stdout), out_dir),
    }
    files = sorted(p for p in out.rglob("*") if p.is_file()) if out.is_dir() else []
    rec["files"] = {str(p.relative_to(out)): sha256(p.read_bytes()) for p in files}
    manifest_path = out / "manifest.json"
    if proc.returncode == 0 and manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text())
        kept = {k: v for k, v in manifest.items() if k not in VOLATILE_MANIFEST_KEYS}
        (case_dir / "manifest.normalized.json").write_text(json.dumps(kept, indent=2, sort_keys=True) + "\n")
        rec["manifest"] = {k: sha256(json.dumps(v, sort_keys=True).encode()) for k, v in sorted(kept.items())}
        rec["compile_flags"] = manifest.get("compile_flags")
        rec["verification"] = verification_numbers(manifest)
        runs = {}
        for function in manifest.get("functions", []):
            inputs = choose_inputs(case, function, corpus_calls, out_dir / "_models")
            runs[function["name"]] = run_function(case_dir, out_dir, manifest, function, inputs, env)
        rec["runs"] = runs
        info = _run(
            [sys.executable, "-m", "ireegen", "info", str(out.relative_to(out_dir)), "--json"], out_dir, env, 300
        )
        rec["info"] = {"exit": info.returncode, "sha256": sha256(normalize(info.stdout, out_dir).encode())}
        if case.size:
            size = _run([sys.executable, "-m", "ireegen", "size", str(out.relative_to(out_dir))], out_dir, env, 600)
            rec["size"] = {"exit": size.returncode, "text": normalize(size.stdout + size.stderr, out_dir).strip()}
    commands = []
    for command in case.after:
        argv = [a.replace("{out}", str(out.relative_to(out_dir))) for a in command]
        p = _run([sys.executable, "-m", "ireegen", *argv], out_dir, env, RUN_TIMEOUT_S)
        commands.append(
            {"argv": list(command), "exit": p.returncode, "refusal": normalize(last_line(p.stderr), out_dir)}
        )
    rec["commands"] = commands
    rec_seconds = round(time.monotonic() - start, 1)
    (case_dir / "case.json").write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n")
    return {"case": case.name, "seconds": rec_seconds, "exit": proc.returncode}


def record(args) -> int:
    out_dir = Path(args.out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    cases = select(args.subset, args.only)
    which = subprocess.run(
        [sys.executable, "-c", "import ireegen; print(ireegen.__file__)"],
        capture_output=True,
        text=True,
        cwd=out_dir,
    ).stdout.strip()
    print(f"recording {len(cases)} cases ({args.subset}) into {out_dir} with {which}", flush=True)
    start = time.monotonic()
    model_hashes = write_models(out_dir, cases, Path(args.models_from).resolve() if args.models_from else None)
    (out_dir / "models.json").write_text(json.dumps(model_hashes, indent=2, sort_keys=True) + "\n")
    corpus_calls = _corpus_inputs()
    print(f"models written in {time.monotonic() - start:.0f} s", flush=True)
    timings = []
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(record_case, c, out_dir, corpus_calls, model_hashes) for c in cases]
        for n, future in enumerate(cf.as_completed(futures), 1):
            t = future.result()
            timings.append(t)
            print(f"[{n}/{len(cases)}] {t['case']}: exit {t['exit']}, {t['seconds']} s", flush=True)
    total = round(time.monotonic() - start, 1)
    meta = {"subset": args.subset, "cases": [c.name for c in cases], "ireegen": which, "seconds": total}
    (out_dir / "snapshot.json").write_text(json.dumps(meta, indent=2) + "\n")
    (out_dir / "timings.json").write_text(json.dumps(sorted(timings, key=lambda t: t["case"]), indent=2) + "\n")
    print(f"recorded {len(cases)} cases in {total} s")
    return 0


# ---------------------------------------------------------------------------
# Comparing


def _load(snapshot: Path) -> dict:
    return {
        p.parent.name: json.loads(p.read_text())
        for p in sorted(snapshot.glob("*/case.json"))
        if not p.parent.name.startswith("_")
    }


def _numbers(rec: dict) -> dict:
    """What the case computed: run outputs and verification errors."""
    runs = {
        f: {k: r.get(k) for k in ("runner", "exit", "error", "outputs", "not_run")}
        for f, r in (rec.get("runs") or {}).items()
    }
    return {"runs": runs, "verification": rec.get("verification")}


def _max_difference(paths: tuple) -> str:
    try:
        b, a = (np.load(p) for p in paths)
    except (OSError, ValueError) as e:
        return f"cannot load: {e}"
    if b.shape != a.shape or b.dtype != a.dtype:
        return f"{b.dtype}{list(b.shape)} -> {a.dtype}{list(a.shape)}"
    diff = np.abs(b.astype(np.float64) - a.astype(np.float64))
    return f"max abs difference {np.nanmax(diff) if diff.size else 0:.3g}, {int(np.count_nonzero(b != a))} elements"


def _run_difference(function: str, before: dict | None, after: dict | None, dirs: tuple) -> str:
    """One line on how a function's run differs: which outputs, by how much."""
    if before is None or after is None:
        return f"run @{function}: {before} -> {after}"
    fields = [k for k in ("runner", "exit", "error", "not_run") if before.get(k) != after.get(k)]
    parts = [f"{k} {before.get(k)!r} -> {after.get(k)!r}" for k in fields]
    bo, ao = before.get("outputs") or [], after.get("outputs") or []
    for i, (b, a) in enumerate(zip(bo, ao)):
        if b != a:
            paths = tuple(d / "outputs" / f"{function}.{i}.npy" for d in dirs)
            parts.append(f"output {i} differs ({_max_difference(paths)})")
    if len(bo) != len(ao):
        parts.append(f"{len(bo)} outputs -> {len(ao)}")
    if before.get("inputs") != after.get("inputs"):
        parts.append("its inputs differ")
    return f"run @{function}: " + "; ".join(parts)


def compare_case(before: dict, after: dict, dirs: tuple) -> tuple:
    """(verdict, lines): verdict is identical, changed (bytes only) or differing."""
    problems, notes = [], []
    for key in ("script_error", "exit", "refusal"):
        if before.get(key) != after.get(key):
            problems.append(f"{key}: {before.get(key)!r} -> {after.get(key)!r}")
    if before.get("model_sha256") != after.get("model_sha256"):
        problems.append("the model differs: not comparable (record with --models-from)")
    bc, ac = before.get("commands", []), after.get("commands", [])
    for b, a in zip(bc, ac):
        if (b["exit"], b["refusal"]) != (a["exit"], a["refusal"]):
            problems.append(f"{' '.join(b['argv'][:2])}: {b['exit']} {b['refusal']!r} -> {a['exit']} {a['refusal']!r}")
    if len(bc) != len(ac):
        problems.append(f"{len(bc)} commands -> {len(ac)}")
    other_tuning = before.get("tuned") and before.get("compile_flags") != after.get("compile_flags")
    if other_tuning:
        notes.append("the tuner chose other flags (timing): numbers not compared")
    else:
        bn, an = _numbers(before), _numbers(after)
        for f in sorted(set(bn["runs"]) | set(an["runs"])):
            b, a = bn["runs"].get(f), an["runs"].get(f)
            if b != a:
                problems.append(_run_difference(f, b, a, dirs))
        if bn["verification"] != an["verification"]:
            for k in sorted(set(bn["verification"] or {}) | set(an["verification"] or {})):
                b, a = (bn["verification"] or {}).get(k), (an["verification"] or {}).get(k)
                if b != a:
                    problems.append(f"verification {k}: {b} -> {a}")
        ins_b = {f: r.get("inputs") for f, r in (before.get("runs") or {}).items()}
        ins_a = {f: r.get("inputs") for f, r in (after.get("runs") or {}).items()}
        if ins_b != ins_a:
            problems.append("the run inputs differ: not comparable")
    bf, af = before.get("files", {}), after.get("files", {})
    changed = sorted(f for f in set(bf) & set(af) if bf[f] != af[f])
    added, removed = sorted(set(af) - set(bf)), sorted(set(bf) - set(af))
    byte_lines = [f"changed {f}" for f in changed] + [f"added {f}" for f in added] + [f"removed {f}" for f in removed]
    if "manifest.json" in changed:
        keys = sorted(
            k
            for k in set(before.get("manifest", {})) | set(after.get("manifest", {}))
            if before.get("manifest", {}).get(k) != after.get("manifest", {}).get(k)
        )
        byte_lines.append(f"manifest keys that differ: {', '.join(keys) or 'none (only ireegen_version)'}")
    for key in ("summary", "warnings", "info", "size"):
        if before.get(key) != after.get(key):
            notes.append(f"{key}: {before.get(key)!r} -> {after.get(key)!r}")
    if problems:
        return "differing", problems + byte_lines + notes
    if before.get("tuned"):  # the manifest records the tuner's timings: its bytes are not compared
        return "identical", notes + [f"tuned, bytes not compared: {line}" for line in byte_lines]
    if byte_lines:
        ran = [r for r in (after.get("runs") or {}).values() if r.get("runner")]
        how = "run outputs bit-identical" if ran else "not runnable here: verification errors identical"
        if after.get("exit") != 0:
            how = "refused identically"
        return "changed", [f"bytes changed, {how}", *byte_lines, *notes]
    return "identical", notes


def compare(args) -> int:
    before, after = _load(Path(args.before)), _load(Path(args.after))
    counts = {"identical": 0, "changed": 0, "differing": 0}
    only_runs = 0
    # AFTER's subset decides what is compared: a ci snapshot against a full baseline.
    meta = Path(args.after) / "snapshot.json"
    names = set(json.loads(meta.read_text())["cases"]) if meta.is_file() else set(before) | set(after)
    skipped = len(set(before) - names)
    if skipped:
        print(f"{skipped} cases of {args.before} are not in {args.after}'s subset: not compared")
    for name in sorted(names):
        if name not in before or name not in after:
            counts["differing"] += 1
            print(f"DIFFERING {name}: only in {'after' if name in after else 'before'}, or not recorded")
            continue
        dirs = (Path(args.before) / name, Path(args.after) / name)
        verdict, lines = compare_case(before[name], after[name], dirs)
        counts[verdict] += 1
        if verdict == "changed" and not any(r.get("runner") for r in (after[name].get("runs") or {}).values()):
            only_runs += 1
        label = {"identical": "identical", "changed": "CHANGED BYTES", "differing": "DIFFERING"}[verdict]
        print(f"{label} {name}" + "".join(f"\n    {line}" for line in lines))
    total = sum(counts.values())
    print(
        f"{total} cases: {counts['identical']} identical bytes, {counts['changed']} changed bytes with identical "
        f"outputs ({only_runs} of them checked by verification errors or refusal only), "
        f"{counts['differing']} differing"
    )
    return 1 if counts["differing"] else 0


def list_cases(args) -> int:
    cases = select(args.subset, args.only)
    for c in cases:
        print(c.name, " ".join(["emit", f"_models/{c.model}", *c.flags]))
    kinds = {}
    for c in cases:
        kinds[c.name.split(".")[0]] = kinds.get(c.name.split(".")[0], 0) + 1
    print(f"{len(cases)} cases: " + ", ".join(f"{k} {v}" for k, v in kinds.items()))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record", help="emit and run the corpus, write the snapshot")
    r.add_argument("out_dir")
    r.add_argument("--subset", choices=("ci", "full"), default="ci")
    r.add_argument("--jobs", type=int, default=1)
    r.add_argument("--models-from", help="copy the models from this earlier snapshot instead of writing them")
    r.add_argument("--only", nargs="*", default=(), help="only the cases whose name contains one of these")
    c = sub.add_parser("compare", help="compare two snapshots")
    c.add_argument("before")
    c.add_argument("after")
    la = sub.add_parser("list", help="list the cases")
    la.add_argument("--subset", choices=("ci", "full"), default="ci")
    la.add_argument("--only", nargs="*", default=())
    args = p.parse_args(argv)
    return {"record": record, "compare": compare, "list": list_cases}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
