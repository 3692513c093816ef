"""Each row of the graph rewrite tables names its roots (the op types of the
nodes it replaces), and apply_rewrites runs the tables only while the graph
holds one (REWRITTEN_OPS, read off the rows).  A row whose function takes
an op its roots do not name would never run on a graph without its roots:
here every row gets a graph it rewrites, and the same graph with its roots'
nodes renamed to an op type no row knows must then be left alone."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_rnn_models import RnnForm, write_rnn_model

from ireegen.frontend.onnx_fold import static_shapes
from ireegen.frontend.onnx_ml_rewrites import REWRITTEN_FORMS
from ireegen.frontend.onnx_rewrites import REWRITES, REWRITTEN_OPS, SPEED_TABLES

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

ROWS = {row.name: row for table in (REWRITES, *SPEED_TABLES) for row in table}
NOT_A_ROOT = "IreegenNotARoot"


def _saved(tmp_path, build, *args) -> onnx.ModelProto:
    """A model the test modules' builders save to a file."""
    path = tmp_path / "model.onnx"
    build(path, *args)
    return onnx.load(str(path))


def _models(tmp_path) -> dict:
    """{row name: a model the row rewrites, or a list of them}, from the models of the rows' own tests."""
    import test_attention_rewrites
    import test_depthwise_pad_producer
    import test_iree_bugs
    import test_nhwc_layout
    import test_onnx_conv1d_rewrites
    import test_onnx_decimate_rewrites
    import test_onnx_qdq_rewrites
    import test_onnx_speed_rewrites
    import test_pointwise_conv_matmul
    import test_resize_matmul
    import test_stable_rewrites
    import test_transformer_speed

    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    models = {
        case: helper.make_model(graph, opset_imports=opsets, ir_version=8)
        for case, (graph, _, _) in test_iree_bugs._onnx_bug_models().items()
        if "/" not in case
    }
    # One model per op that moves data: the root is the quantize (and the
    # dequantize), whichever op sits between.
    quantization = (np.float32(0.05), np.int8(3))
    qdq = test_onnx_qdq_rewrites
    models["identical-qdq-around-data-movement"] = [qdq._model(op, quantization, quantization)[0] for op in qdq.MOVES]
    models["quantize-before-data-movement"] = [
        qdq._model(op, None, quantization, move_first=True)[0] for op in qdq.MOVES
    ]
    speed = test_onnx_speed_rewrites
    models["depthwise-conv-as-taps"] = speed._random_conv(np.random.default_rng(0), 0, True)[0]
    models["conv-as-im2col-matmul"] = speed._random_conv(np.random.default_rng(0), 0, False)[0]
    models["grouped-conv-as-batched-matmul"] = speed._random_grouped_conv(np.random.default_rng(0))[0]
    models["conv-transpose-as-matmul"] = speed._random_conv_transpose(np.random.default_rng(0), 0)[0]
    models["pointwise-conv-as-matmul"] = test_pointwise_conv_matmul._random_pointwise(1)[0]
    models["linear-resize-as-matmuls"] = test_resize_matmul._random_resize(0)[0]
    models["depthwise-separable-as-nhwc"] = test_nhwc_layout._random_mobilenet(3)[0]
    models["depthwise-pad-in-producer"] = test_depthwise_pad_producer._nhwc_blocks(0)
    decimated = [((5, 5), (2, 2, 2, 2), (1, 1), (2, 1), True)]
    models["strided-depthwise-conv-as-decimated-taps"] = _saved(
        tmp_path, test_onnx_decimate_rewrites._model, 2, 6, 40, 14, decimated
    )
    conv1d = [(7, 3, 2, 2, (2, 0), True, None)]
    models["conv1d-as-matmul"] = _saved(tmp_path, test_onnx_conv1d_rewrites._conv1d_model, 3, 5, 23, conv1d, 1)
    rnn = (RnnForm("GRU", "bidirectional"), RnnForm("LSTM", "reverse"), RnnForm("RNN", layout=1))
    models["rnn-directions-as-forward"] = [_saved(tmp_path, write_rnn_model, form) for form in rnn]
    cells = (RnnForm("GRU", sequence_lens=(5, 3)), RnnForm("LSTM", peepholes=True), RnnForm("RNN", clip=0.5))
    models["rnn-cells-unrolled"] = [_saved(tmp_path, write_rnn_model, form) for form in cells]
    steps = (RnnForm("GRU", linear_before_reset=1), RnnForm("LSTM", initial_h=True), RnnForm("RNN"))
    models["rnn-steps-unrolled"] = [_saved(tmp_path, write_rnn_model, form) for form in steps]
    models["reduce-log-sum-exp-stable"] = test_stable_rewrites._model([2, 5], [1], 0, 17)
    models["matmul-columns-padded"] = test_transformer_speed._matmul_model([2, 30, 64], [2, 64, 197])
    models["softmax-as-lane-reductions"] = test_attention_rewrites._model([2, 77, 77])
    models["matmul-rows-padded"] = test_attention_rewrites._block(77, 16, 32)
    return models


def _apply(row, model, shapes) -> int:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return row.function(copy, shapes, {t.name: t for t in copy.graph.initializer})


def test_every_row_takes_only_its_roots(tmp_path):
    models = _models(tmp_path)
    assert set(models) == set(ROWS), "a row without a model here: add one"
    for name, model in [(name, m) for name, ms in models.items() for m in (ms if isinstance(ms, list) else [ms])]:
        row = ROWS[name]
        shapes = static_shapes(model)  # of the model as written: the renamed ops keep their shapes
        assert _apply(row, model, shapes) > 0, f"{name}: its model is not rewritten"
        renamed = onnx.ModelProto()
        renamed.CopyFrom(model)
        for node in renamed.graph.node:
            if node.op_type in row.roots:
                node.op_type = NOT_A_ROOT
        assert _apply(row, renamed, shapes) == 0, f"{name} rewrites an op its roots {row.roots} do not name"


def test_rewritten_ops_are_the_rows_roots():
    assert REWRITTEN_OPS == {op for row in ROWS.values() for op in row.roots}
    assert len(ROWS) == sum(len(table) for table in (REWRITES, *SPEED_TABLES)), "two rows of one name"


def test_every_ai_onnx_ml_root_has_its_refusal_text():
    """unrewritten_ml_node names the form each rewritten ai.onnx.ml op takes (REWRITTEN_FORMS)."""
    ml_roots = {op for op in REWRITTEN_OPS if onnx.defs.has(op, "ai.onnx.ml")}
    assert ml_roots == set(REWRITTEN_FORMS)
