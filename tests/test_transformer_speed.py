"""The transformer speed rewrite `matmul-columns-padded`
(ireegen/frontend/onnx_speed_rewrites.py): it matches a MatMul of two
computed operands whose column count is not a multiple of 16, only that,
and the rewritten model computes what ONNX Runtime computes for the model
as written, in the rewritten graph and through IREE."""

import json

import numpy as np
import pytest
from conftest import run_cli

from ireegen.frontend.onnx_rewrites import apply_rewrites
from ireegen.parity import parity

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

REWRITE = "matmul-columns-padded"


def _matmul_model(a_shape, b_shape, b_const=None):
    """y = MatMul(Transpose(a), b): a's last two axes swapped first, as
    attention's K^T is, so that both operands are computed; with `b_const`
    (an array) b is an initializer instead of an input."""
    from onnx import helper, numpy_helper

    perm = list(range(len(a_shape)))
    if len(perm) > 1:
        perm[-2:] = perm[-1], perm[-2]
    stored = [a_shape[p] for p in perm]
    inputs = [helper.make_tensor_value_info("a", 1, stored)]
    inits = []
    if b_const is None:
        inputs.append(helper.make_tensor_value_info("b", 1, list(b_shape)))
    else:
        inits.append(numpy_helper.from_array(b_const, "b"))
    nodes = [helper.make_node("Transpose", ["a"], ["at"], perm=perm), helper.make_node("MatMul", ["at", "b"], ["y"])]
    graph = helper.make_graph(nodes, "matmul", inputs, [helper.make_tensor_value_info("y", 1, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _run(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def _random_form(rng):
    """Attention-like shapes: 0 to 2 batch axes (broadcast on either side
    at random), M, K, and a column count N that is not a multiple of 16."""
    batch = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3)))]
    m, k = int(rng.integers(1, 40)), int(rng.integers(1, 70))
    n = int(rng.integers(4, 20)) * 16 + int(rng.integers(1, 16))
    a_batch = [d if rng.random() < 0.7 else 1 for d in batch]
    b_batch = batch[int(rng.integers(0, len(batch) + 1)) :]
    return [*a_batch, m, k], [*b_batch, k, n]


@pytest.mark.parametrize("seed", range(12))
def test_padded_matmul_on_random_forms_matches_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    a_shape, b_shape = _random_form(rng)
    model = _matmul_model(a_shape, b_shape)
    a_stored = [a_shape[p] for p in model.graph.node[0].attribute[0].ints]
    feeds = {
        "a": rng.standard_normal(a_stored).astype(np.float32),
        "b": rng.standard_normal(b_shape).astype(np.float32),
    }
    expected = _run(model, feeds)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert apply_rewrites(rewritten) == [{"rewrite": REWRITE, "nodes": 1}]
    pads = [n for n in rewritten.graph.node if n.op_type == "Pad"]
    assert len(pads) == 1
    got = _run(rewritten, feeds)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "a_shape, b_shape, constant",
    [
        ([2, 30, 64], [2, 64, 208], False),  # N a multiple of 16 already
        ([2, 30, 64], [2, 64, 50], False),  # fewer than 64 columns
        ([30, 64], [64, 197], True),  # a constant B: a layer's weights
    ],
    ids=["multiple-of-16", "few-columns", "constant-weights"],
)
def test_matmuls_outside_the_pattern_stay(a_shape, b_shape, constant):
    b = np.ones(b_shape, np.float32) if constant else None
    model = _matmul_model(a_shape, b_shape, b)
    assert REWRITE not in {r["rewrite"] for r in apply_rewrites(model)}
    assert [n.op_type for n in model.graph.node] == ["Transpose", "MatMul"]


def test_a_dynamic_sequence_stays():
    model = _matmul_model([2, 30, 64], [2, 64, 197])
    model.graph.input[1].type.tensor_type.shape.dim[2].dim_param = "seq"
    assert REWRITE not in {r["rewrite"] for r in apply_rewrites(model)}


@pytest.mark.full_suite  # an emit with verification and two parity builds: about 60 s on the shared 2-core machine
def test_attention_scores_through_iree(tmp_path):
    """Scores of 2 heads over 77 tokens (Q x K^T / sqrt(d), Softmax, x V):
    emit pads the scores' MatMul, verifies it, and async and runtimeless
    compute what ONNX Runtime computes for the model as written."""
    from onnx import helper, numpy_helper

    heads, seq, d = 2, 77, 16
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "attention",
        [helper.make_tensor_value_info(n, 1, [heads, seq, d]) for n in "qkv"],
        [helper.make_tensor_value_info("y", 1, [heads, seq, d])],
        [numpy_helper.from_array(np.array(d**-0.5, np.float32), "scale")],
    )
    path = tmp_path / "attention.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 0 and "verified against " in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {"rewrite": REWRITE, "nodes": 1} in manifest["onnx_rewrites"]
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((heads, seq, d)).astype(np.float32) for _ in "qkv"]
    report = parity(
        path,
        modes=["async", "runtimeless"],
        inputs={"attention": inputs},
        reference="onnxruntime",
        rtol=1e-5,
        atol=1e-5,
    )
    assert report.agrees and not report.compile_errors, report.table()
