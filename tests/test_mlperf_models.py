"""The MLPerf Tiny model builders of benchmarks/mlperf_tiny_models.py: valid
ONNX at opset 17, the published layer counts and parameter sizes, the same
bytes from the same seed, and QDQ int8 versions that ONNX Runtime runs close
to the float ones."""

import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxruntime.quantization")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import mlperf_tiny_models as mt  # noqa: E402

# (convolutions, dense layers, float parameters) of each architecture.
SHAPES = {
    "ds_cnn": (9, 1, 22_604),
    "resnet8": (9, 1, 77_706),
    "mobilenet_v1": (27, 1, 210_850),
    "autoencoder": (0, 10, 265_864),
}


@pytest.mark.parametrize("name", sorted(mt.MODELS))
def test_architecture(name):
    model = mt.build(name)
    ops = [n.op_type for n in model.graph.node]
    params = sum(onnx.numpy_helper.to_array(t).size for t in model.graph.initializer if t.data_type == 1)
    assert (ops.count("Conv"), ops.count("Gemm"), params) == SHAPES[name]
    assert "BatchNormalization" not in ops
    assert model.opset_import[0].version == 17
    assert model.SerializeToString() == mt.build(name).SerializeToString()
    assert model.SerializeToString() != mt.build(name, seed=1).SerializeToString()


@pytest.mark.parametrize("name", ["ds_cnn", "autoencoder"])
def test_int8_close_to_float(name):
    x = mt.sample_input(name)
    q = mt.quantized(name)
    ops = {n.op_type for n in q.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    scales = [t for t in q.graph.initializer if t.name.endswith("_scale")]
    assert scales and all(onnx.numpy_helper.to_array(t).size == 1 for t in scales)  # per tensor
    run = lambda m: ort.InferenceSession(m.SerializeToString()).run(None, {"input": x})[0]  # noqa: E731
    y, yq = run(mt.build(name)), run(q)
    assert (
        y.shape
        == yq.shape
        == tuple(mt.build(name).graph.output[0].type.tensor_type.shape.dim[i].dim_value for i in range(2))
    )
    assert np.abs(y - yq).max() < 0.1 * np.abs(y).max()
    assert not np.array_equal(y, yq)
