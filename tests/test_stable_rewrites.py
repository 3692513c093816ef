"""reduce-log-sum-exp-stable (ireegen/frontend/onnx_stable_rewrites.py):
IREE 3.13 lowers ReduceLogSumExp as log(sum(exp(x))), which overflows to
+-inf on inputs ONNX Runtime reduces to finite numbers (an input of 100).
The rewritten graph equals ONNX Runtime on random forms (opsets, axes as
attribute or input, keepdims, noop_with_empty_axes, infinities, float16 and
double) and on large inputs, and IREE compiles it to the right numbers
where the op as written gives inf (docs/known-iree-issues.md section 13)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import bare_iree_output, onnxruntime_output

from ireegen.frontend.onnx_fold import static_shapes
from ireegen.frontend.onnx_stable_rewrites import reduce_log_sum_exp_stable

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

DTYPES = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16, TensorProto.DOUBLE: np.float64}


def _model(shape, axes, keepdims, opset, elem=TensorProto.FLOAT, noop=None):
    attrs = {"keepdims": keepdims}
    inputs, inits = ["x"], []
    if opset >= 18:
        if axes is not None:
            inputs.append("axes")
            inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        if noop is not None:
            attrs["noop_with_empty_axes"] = noop
    elif axes is not None:
        attrs["axes"] = axes
    node = helper.make_node("ReduceLogSumExp", inputs, ["y"], name="lse", **attrs)
    reduced = set(range(len(shape))) if axes is None and not noop else {a % len(shape) for a in axes or ()}
    out = [1 if i in reduced else d for i, d in enumerate(shape) if keepdims or i not in reduced]
    graph = helper.make_graph(
        [node],
        "lse",
        [helper.make_tensor_value_info("x", elem, shape)],
        [helper.make_tensor_value_info("y", elem, out)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _rewritten(model, expected=1):
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    count = reduce_log_sum_exp_stable(copy, static_shapes(copy), {t.name: t for t in copy.graph.initializer})
    assert count == expected
    assert any(n.op_type == "ReduceLogSumExp" for n in copy.graph.node) == (not expected)
    return copy


def _reference(model, x):
    """ONNX Runtime on the model in double: its float16 kernel overflows as IREE's does."""
    wide = onnx.ModelProto()
    wide.CopyFrom(model)
    for value in (*wide.graph.input, *wide.graph.output):
        value.type.tensor_type.elem_type = TensorProto.DOUBLE
    return onnxruntime_output(wide, x.astype(np.float64)).astype(x.dtype)


def _random_form(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    shape = [int(d) for d in rng.integers(1, 6, rank)]
    opset = int(rng.choice([11, 13, 17, 18, 20]))
    axes = (
        None
        if rng.random() < 0.2
        else sorted({int(a) - rank * int(rng.integers(0, 2)) for a in rng.integers(0, rank, 2)})
    )
    noop = int(rng.integers(0, 2)) if opset >= 18 and axes is None else None
    elem = [TensorProto.FLOAT, TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16][int(rng.integers(0, 4))]
    x = rng.standard_normal(shape) * 4 + rng.choice([0.0, 100.0, -1000.0, 1e4])
    x = x.astype(DTYPES[elem])
    if x.size > 2 and rng.random() < 0.3:
        x.flat[int(rng.integers(0, x.size))] = rng.choice([np.inf, -np.inf])
    # An empty axes list with noop_with_empty_axes reduces nothing: left as written.
    return _model(shape, axes, int(rng.integers(0, 2)), opset, elem, noop), x, int(not noop)


@pytest.mark.parametrize("seed", range(40))
def test_random_forms_equal_onnxruntime(seed):
    model, x, expected = _random_form(seed)
    rewritten = _rewritten(model, expected)
    if not expected:
        return
    want = _reference(model, x)
    got = onnxruntime_output(rewritten, x)
    tol = 2e-3 if x.dtype == np.float16 else 1e-5
    np.testing.assert_allclose(
        got, want, rtol=tol, atol=tol * np.maximum(1, np.abs(want[np.isfinite(want)]).max(initial=1))
    )


def test_integer_and_empty_inputs_are_left_alone():
    for model in (_model([2, 3], [1], 0, 17, TensorProto.INT32), _model([2, 0], [1], 0, 17)):
        assert reduce_log_sum_exp_stable(model, static_shapes(model), {}) == 0


def test_iree_overflows_on_the_op_and_not_on_the_rewrite(tmp_path):
    model = _model([2, 197], [1], 0, 17)
    x = (np.random.default_rng(0).standard_normal((2, 197)) + 100).astype(np.float32)
    want = onnxruntime_output(model, x)
    assert np.isfinite(want).all()
    # The reproducer: IREE's lowering of the op as written.
    assert np.isinf(bare_iree_output(tmp_path, model, x)).all()
    np.testing.assert_allclose(bare_iree_output(tmp_path, _rewritten(model), x), want, rtol=1e-6)
