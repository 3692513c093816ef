"""The speed rewrite `depthwise-separable-as-nhwc` (ireegen/frontend/nhwc_layout.py):
random depthwise-separable CNNs (MobileNet V1/V2/V3-like blocks: any batch
and channel counts, 3x3 and 5x5 depthwise kernels, strides 1 and 2, uneven
pads, residual adds, squeeze-excite, HardSwish and Relu6, BatchNormalization, a channel Concat,
a MaxPool it does not take) rewritten channels-last compute what ONNX
Runtime computes for the model as written; one goes through IREE."""

import json

import numpy as np
import pytest
from conftest import run_cli

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


class _Graph:
    """A small ONNX graph under construction, with random weights."""

    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.k = rng, [], [], 0

    def name(self, base: str) -> str:
        self.k += 1
        return f"{base}{self.k}"

    def const(self, array) -> str:
        from onnx import numpy_helper

        name = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
        return name

    def op(self, op_type: str, *inputs: str, out: str = "", **attrs) -> str:
        from onnx import helper

        out = out or self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=self.name(op_type), **attrs))
        return out

    def conv(self, x: str, c: int, m: int, kernel: int, stride: int = 1, group: int = 1, pads=None) -> str:
        pads = pads if pads is not None else [kernel // 2] * 4
        w = self.const(self.rng.standard_normal((m, c // group, kernel, kernel)) / np.sqrt(c // group * kernel**2))
        bias = [self.const(self.rng.standard_normal(m) * 0.1)] if self.rng.integers(2) else []
        return self.op(
            "Conv", x, w, *bias, group=group, kernel_shape=[kernel, kernel], strides=[stride, stride], pads=pads
        )

    def batch_norm(self, x: str, c: int) -> str:
        scale, bias, mean = (self.const(self.rng.standard_normal(c)) for _ in range(3))
        return self.op(
            "BatchNormalization", x, scale, bias, mean, self.const(self.rng.uniform(0.5, 2, c)), epsilon=1e-3
        )

    def act(self, x: str) -> str:
        kind = int(self.rng.integers(3))
        if kind == 0:
            return self.op("Clip", x, self.const(0.0), self.const(6.0))  # Relu6
        return self.op("HardSwish", x) if kind == 1 else self.op("Relu", x)


def _random_mobilenet(seed: int):
    """(model, x): a stem, inverted-residual blocks, a head; what each block
    has is drawn from `seed`."""
    from onnx import helper

    rng = np.random.default_rng(seed)
    g = _Graph(rng)
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    h, w = int(rng.integers(7, 14)), int(rng.integers(7, 14))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    width = int(rng.integers(3, 9))
    value = g.act(g.conv("x", c, width, 3, stride=int(rng.integers(1, 3))))  # the image stem
    for _ in range(int(rng.integers(2, 4))):
        expanded = int(rng.integers(4, 20))
        out = int(rng.integers(3, 12))
        kernel, stride = int(rng.choice([3, 5])), int(rng.integers(1, 3))
        pads = [int(p) for p in rng.integers(0, kernel, 4)] if rng.integers(3) == 0 else None
        y = g.act(g.conv(value, width, expanded, 1))
        y = g.conv(y, expanded, expanded, kernel, stride, group=expanded, pads=pads)
        y = g.act(g.batch_norm(y, expanded) if rng.integers(2) else y)  # BatchNormalization left unfolded
        if rng.integers(2):  # squeeze-excite
            s = g.op("GlobalAveragePool", y)
            s = g.op("Relu", g.conv(s, expanded, 4, 1))
            y = g.op("Mul", y, g.op("HardSigmoid", g.conv(s, 4, expanded, 1), alpha=0.2, beta=0.5))
        if rng.integers(3) == 0:  # a per-channel scale, a constant of shape [C, 1, 1]
            y = g.op("Mul", y, g.const(rng.standard_normal((expanded, 1, 1))))
        y = g.conv(y, expanded, out, 1)
        if out == width and pads is None and stride == 1:
            y = g.op("Add", y, value)  # the residual
        value, width = y, out
    g.op("MaxPool", value, kernel_shape=[2, 2], pads=[0, 0, 1, 1], out="branch")  # not taken: back to NCHW
    joined = g.op("Concat", value, g.op("Relu", g.conv(value, width, 4, 1)), axis=1)  # over channels
    g.op("Relu", joined, out="features")
    pooled = g.op("Flatten", g.op("GlobalAveragePool", "features"))
    g.op("Gemm", pooled, g.const(rng.standard_normal((width + 4, 5))), g.const(rng.standard_normal(5)), out="logits")
    graph = helper.make_graph(
        g.nodes,
        "mobilenet",
        [helper.make_tensor_value_info("x", 1, list(x.shape))],
        [
            helper.make_tensor_value_info("logits", 1, None),
            helper.make_tensor_value_info("features", 1, None),  # a 4-D graph output, back in NCHW
            helper.make_tensor_value_info("branch", 1, None),
        ],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return onnx.shape_inference.infer_shapes(model, strict_mode=True), x  # the outputs' shapes too


def _run_ort(model, x):
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


@pytest.mark.parametrize("seed", range(12))
def test_random_depthwise_separable_cnns_match_onnxruntime(seed):
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    model, x = _random_mobilenet(seed)
    expected = _run_ort(model, x)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    applied = {r["rewrite"] for r in apply_rewrites(rewritten)}
    assert "depthwise-separable-as-nhwc" in applied, applied
    assert not {"Conv", "BatchNormalization"} & {node.op_type for node in rewritten.graph.node}
    got = _run_ort(rewritten, x)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


def test_depthwise_separable_cnn_through_iree(tmp_path):
    """One of them through IREE: emitted (verified), and against ONNX Runtime
    in async and runtimeless."""
    from ireegen.parity import parity

    model, x = _random_mobilenet(3)
    path = tmp_path / "mobilenet.onnx"
    onnx.save(model, str(path))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 0 and "verified against async" in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {"rewrite": "depthwise-separable-as-nhwc", "nodes": 8} in manifest["onnx_rewrites"]
    report = parity(
        path, modes=["async", "runtimeless"], inputs={"mobilenet": [x]}, reference="onnxruntime", rtol=1e-4, atol=1e-4
    )
    assert report.agrees and not report.compile_errors, report.table()


def test_only_a_depthwise_separable_graph_is_rewritten():
    """A graph with depthwise Convs but no pointwise one (or the reverse, a
    ResNet) keeps its layout: the other rewrites take its Convs."""
    from onnx import helper, numpy_helper

    from ireegen.frontend.nhwc_layout import depthwise_separable_as_nhwc

    for weights, group in (((8, 1, 3, 3), 8), ((8, 8, 1, 1), 1), ((8, 8, 3, 3), 1)):
        w = numpy_helper.from_array(np.ones(weights, np.float32), "w")
        pads = [weights[2] // 2] * 4
        graph = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["y"], group=group, kernel_shape=list(weights[2:]), pads=pads)],
            "conv",
            [helper.make_tensor_value_info("x", 1, [1, 8, 6, 6])],
            [helper.make_tensor_value_info("y", 1, [1, 8, 6, 6])],
            [w],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        assert depthwise_separable_as_nhwc(model, {"x": [1, 8, 6, 6], "y": [1, 8, 6, 6]}, {"w": w}) == 0
        assert [n.op_type for n in model.graph.node] == ["Conv"]
