"""onnx_speed_rewrites' `depthwise-separable-as-nhwc`: a depthwise-separable
CNN (MobileNet V1/V2/V3-like: depthwise Convs next to pointwise 1x1 ones)
computed channels-last, so that the channels sit in the vector lanes.

ONNX's Conv is NCHW.  IREE 3.13 compiles MobileNetV2's pointwise Convs over
49 to 196 pixels into matmuls that vectorize badly without data tiling, and
with data tiling it packs each one's input in a scalar loop fused into the
depthwise dispatch before it (a fifth of the model's time, docs/peers.md).
Here every Conv the layout reaches is written as what it computes on an NHWC
tensor, [N, H, W, C]:
- a pointwise Conv (1x1, group 1, no pads): a MatMul of the [N*H*W, C]
  pixels by the [C, M] weights (a strided one first takes every s-th pixel);
- a depthwise Conv (group = C = M, at most depthwise_taps.MAX_TAPS taps):
  its kh x kw windows of the padded input (windows(): Slices with the
  stride as their step) times each tap's [C] weights along the last axis,
  summed;
- any other group-1 Conv (the image stem): im2col, its windows concatenated
  along the channels, times the [kh*kw*C, M] weights (at most MAX_COLUMNS
  floats of windows; on the graph's NCHW input, the windows are cut in NCHW
  and the columns transposed once);
- elementwise ops (Relu, Clip, HardSwish, HardSigmoid, Add, Mul, ...) and
  Concat over channels take NHWC operands (constants transposed), an
  inference BatchNormalization becomes x * s + t along the channels, and a
  GlobalAveragePool becomes a ReduceSum over H and W times 1/(H*W).
The graph's 4-D input is transposed to NHWC once; a value that leaves the
layout (a graph output, or the input of any other op, such as the Flatten
after the pool) is transposed back under its own name where it is first
needed.  Only a graph with both a depthwise and a pointwise Conv the layout
can take is rewritten (the class it is for); one without, such as
ResNet-18, keeps its form and the other rewrites.
"""

from __future__ import annotations

import numpy as np

from . import depthwise_taps
from .onnx_nodes import NodeBuilder, known_arrays, node_attrs, node_reads, static_conv2d

MAX_COLUMNS = 4 << 20  # floats of im2col windows (16 MiB), as conv1d-as-matmul

TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]
# Elementwise ops, whose result does not depend on the layout as long as
# every operand is in the same one (broadcasting included, operands of rank 4).
ELEMENTWISE = frozenset(
    (
        "Abs Add Clip Div Elu Erf Exp HardSigmoid HardSwish Identity LeakyRelu Max Min Mish Mul Neg "
        "PRelu Relu Selu Sigmoid Softplus Sqrt Sub Sum Tanh"
    ).split()
)


def _conv_form(conv) -> str | None:
    """Which NHWC form a static_conv2d() Conv takes: "pointwise",
    "depthwise", "im2col", or None (it stays an NCHW Conv)."""
    a, dims, out_dims, weights = conv
    channels, outputs, group = dims[1], out_dims[1], a.get("group", 1)
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET") or not depthwise_taps.supported(a):
        return None
    kernel = weights.shape[2:]
    if group == 1 and weights.shape[:2] == (outputs, channels):
        if kernel == (1, 1):
            pads, dilations = list(a.get("pads") or [0] * 4), list(a.get("dilations") or [1, 1])
            return "pointwise" if not any(pads) and dilations == [1, 1] else None
        columns = dims[0] * out_dims[2] * out_dims[3] * channels * int(np.prod(kernel))
        return "im2col" if columns <= MAX_COLUMNS else None
    depthwise = group == channels == outputs >= 2 and weights.shape[:2] == (channels, 1)
    return "depthwise" if depthwise and int(np.prod(kernel)) <= depthwise_taps.MAX_TAPS else None


def windows(b, x: str, dims, kernel, attrs: dict, out_hw) -> list:
    """The Conv's kh x kw windows of the NHWC `x` (dims [N, C, H, W] of its
    NCHW form) for a `kernel` (kh, kw) with output size `out_hw` (Ho, Wo), in
    tap order (row-major over the kernel), each [N, Ho, Wo, C]: Slices of the
    padded input, with the Conv's strides as their steps.  A pixel's
    channels stay contiguous, so unlike NCHW (depthwise_taps.windows) a
    strided window needs no split into stride phases."""
    (kh, kw), (height, width) = kernel, out_hw
    strides = list(attrs.get("strides") or [1, 1])
    dh, dw = list(attrs.get("dilations") or [1, 1])
    top, left, bottom, right = list(attrs.get("pads") or [0, 0, 0, 0])
    if any((top, left, bottom, right)):
        x = b.op("Pad", x, b.const("pads", np.array([0, top, left, 0, 0, bottom, right, 0], np.int64)))
    axes, steps = b.const("axes", np.array([1, 2], np.int64)), b.const("steps", np.array(strides, np.int64))
    span = np.array([(height - 1) * strides[0] + 1, (width - 1) * strides[1] + 1], np.int64)
    values = []
    for i in range(kh):
        for j in range(kw):
            starts = np.array([i * dh, j * dw], np.int64)
            values.append(b.op("Slice", x, b.const("starts", starts), b.const("ends", starts + span), axes, steps))
    return values


def depthwise_separable_as_nhwc(model, shapes: dict, values: dict) -> int:
    """Rewrites the graph channels-last when it has a depthwise and a
    pointwise Conv that can be; returns how many Convs it took."""
    graph = model.graph
    known = known_arrays(graph, values)
    convs = {}  # node index -> (static_conv2d(), form)
    for k, node in enumerate(graph.node):
        conv = static_conv2d(node, "Conv", known, shapes)
        form = conv and _conv_form(conv)
        if form:
            convs[k] = (conv, form)
    forms = {form for _, form in convs.values()}
    if not {"depthwise", "pointwise"} <= forms:
        return 0
    return _Layout(graph, shapes, known).rewrite(convs)


class _Layout:
    """One walk over the graph's nodes in order, keeping the NHWC form of
    each value the layout reached (`nhwc`) and which values exist in their
    own NCHW layout (`nchw`)."""

    def __init__(self, graph, shapes: dict, known: dict):
        self.graph, self.shapes, self.known = graph, shapes, known
        self.nhwc = {}  # value name -> its NHWC form's name
        self.nchw = {i.name for i in graph.input} | set(known) | {""}  # values present in their own layout
        self.out_nodes = []
        self.b = NodeBuilder(graph, self.out_nodes, "")  # one for the walk: its prefix names each node's

    def rewrite(self, convs: dict) -> int:
        count = 0
        for k, node in enumerate(list(self.graph.node)):
            self.b.prefix = f"{node.name or node.op_type}/ireegen.nhwc"
            taken = convs.get(k)
            if taken:
                self._conv(node, *taken)
                count += 1
            elif not self._layout_op(node):
                for name in node_reads(node):  # a Loop's body too
                    self._as_nchw(name)
                self.b.keep(node)
                self.nchw.update(node.output)
        for output in self.graph.output:
            self._as_nchw(output.name)
        del self.graph.node[:]
        self.graph.node.extend(self.out_nodes)
        return count

    def _as_nchw(self, name: str) -> None:
        """Makes `name` exist in its own (NCHW) layout, transposing its NHWC form back."""
        if name not in self.nchw and name in self.nhwc:
            self.b.op("Transpose", self.nhwc[name], out=name, perm=TO_NCHW)
            self.nchw.add(name)

    def _as_nhwc(self, name: str) -> str:
        """The NHWC form of the 4-D value `name`, transposing it when it has none."""
        if name not in self.nhwc:
            self.nhwc[name] = self.b.op("Transpose", name, perm=TO_NHWC)
        return self.nhwc[name]

    def _conv(self, node, conv, form: str) -> None:
        """Appends the NHWC form (`form`, from _conv_form) of the Conv `node`."""
        a, dims, out_dims, weights = conv
        b, (n, c, h, w), (_, m, ho, wo) = self.b, dims, out_dims
        if form == "im2col" and node.input[0] not in self.nhwc:
            x = None  # the image stem: its windows are cut from the NCHW input (_nchw_columns)
        else:
            x = self._as_nhwc(node.input[0])
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        if bias:
            self._as_nchw(bias)
        if form == "depthwise":
            kw = weights.shape[3]
            terms = [
                b.op("Mul", value, b.const("tap", weights[:, 0, k // kw, k % kw].copy()))
                for k, value in enumerate(windows(b, x, dims, weights.shape[2:], a, (ho, wo)))
            ]
            total = b.op("Sum", *terms, *([bias] if bias else []))
        else:
            if form == "pointwise":
                strides = list(a.get("strides") or [1, 1])
                if strides != [1, 1]:
                    x = b.op(
                        "Slice",
                        x,
                        b.const("starts", np.zeros(2, np.int64)),
                        b.const("ends", np.array([h, w], np.int64)),
                        b.const("axes", np.array([1, 2], np.int64)),
                        b.const("steps", np.array(strides, np.int64)),
                    )
                columns, depth = x, c
                matrix = weights[:, :, 0, 0].T
            else:
                depth = int(np.prod(weights.shape[2:])) * c  # tap-major, channels inner
                if x is None:
                    columns = self._nchw_columns(node.input[0], conv)
                else:
                    columns = b.op("Concat", *windows(b, x, dims, weights.shape[2:], a, (ho, wo)), axis=-1)
                matrix = weights.transpose(2, 3, 1, 0).reshape(depth, m)
            rows = b.op("Reshape", columns, b.const("rows_shape", np.array([n * ho * wo, depth], np.int64)))
            total = b.op("MatMul", rows, b.const("weights", np.ascontiguousarray(matrix)))
            if bias:
                total = b.op("Add", total, bias)
            total = b.op("Reshape", total, b.const("shape", np.array([n, ho, wo, m], np.int64)))
        self.nhwc[node.output[0]] = total

    def _nchw_columns(self, x: str, conv) -> str:
        """The im2col rows [N, Ho*Wo, kh*kw*C] of a Conv whose input `x` is
        only in NCHW (the image stem on the graph's input): the NCHW windows
        concatenated over channels, then one Transpose.  Transposing the
        3-channel input to NHWC instead ran at a few GB/s (MobileNetV2's
        stem: 2.7% of the model's time)."""
        a, dims, out_dims, weights = conv
        b, (n, _, ho, wo) = self.b, out_dims
        shifted, _ = depthwise_taps.windows(b, x, dims, weights.shape[2:], a, (ho, wo))
        stacked = b.op("Concat", *shifted, axis=1)
        depth = len(shifted) * dims[1]
        flat = b.op("Reshape", stacked, b.const("columns_shape", np.array([n, depth, ho * wo], np.int64)))
        return b.op("Transpose", flat, perm=[0, 2, 1])

    def _layout_op(self, node) -> bool:
        """Appends the NHWC form of an elementwise op, a channel Concat or a
        GlobalAveragePool that has an operand in NHWC; False for any other node."""
        if node.domain not in ("", "ai.onnx") or len(node.output) != 1 or not any(i in self.nhwc for i in node.input):
            return False
        out = node.output[0]
        if len(self.shapes.get(out) or []) != 4:
            return False
        b = self.b
        if node.op_type == "GlobalAveragePool":
            _, _, h, w = self.shapes[node.input[0]]  # as the output's: static
            total = b.op("ReduceSum", self.nhwc[node.input[0]], b.const("axes", np.array([1, 2], np.int64)), keepdims=1)
            self.nhwc[out] = b.op("Mul", total, b.const("scale", np.array(1.0 / (h * w), np.float32)))
            return True
        if node.op_type == "BatchNormalization":
            return self._batch_norm(node)
        if node.op_type == "Concat":
            axis = node_attrs(node).get("axis")
            if axis not in (1, -3) or not all(len(self.shapes.get(i) or []) == 4 for i in node.input):
                return False
            operands = [self._as_nhwc(i) for i in node.input]
            self.nhwc[out] = b.op("Concat", *operands, axis=3)
            return True
        if node.op_type not in ELEMENTWISE:
            return False
        if not all(self._takes(i) for i in node.input):
            return False
        operands = [self._operand(i) for i in node.input]
        self.nhwc[out] = b.op(node.op_type, *operands, **node_attrs(node))
        return True

    def _batch_norm(self, node) -> bool:
        """An inference BatchNormalization of an NHWC value, with constant
        parameters: x * s + t, with [C] s = scale / sqrt(var + eps) and
        t = bias - mean * s along the channel lanes."""
        from onnx import numpy_helper

        a = node_attrs(node)
        if len(node.input) != 5 or a.get("training_mode", 0) or not all(i in self.known for i in node.input[1:]):
            return False
        scale, bias, mean, var = (numpy_helper.to_array(self.known[i]).astype(np.float64) for i in node.input[1:])
        s = scale / np.sqrt(var + a.get("epsilon", 1e-5))
        b = self.b
        x = self._as_nhwc(node.input[0])
        scaled = b.op("Mul", x, b.const("bn_scale", s.astype(np.float32)))
        self.nhwc[node.output[0]] = b.op("Add", scaled, b.const("bn_shift", (bias - mean * s).astype(np.float32)))
        return True

    def _takes(self, name: str) -> bool:
        """Whether `name` can be an operand of an NHWC elementwise op: one
        in NHWC, a constant of rank up to 4, or a 4-D value."""
        if name == "" or name in self.nhwc:
            return True
        if name in self.known:
            return len(self.known[name].dims) <= 4
        return len(self.shapes.get(name) or []) == 4

    def _operand(self, name: str) -> str:
        """`name` as an operand of an NHWC elementwise op (_takes): its NHWC
        form, a constant (a scalar as it is, others transposed)."""
        from onnx import numpy_helper

        if name == "" or name in self.nhwc:
            return self.nhwc.get(name, name)
        if name in self.known:
            array = numpy_helper.to_array(self.known[name])
            if array.size == 1:
                return name
            nhwc = array.reshape((1,) * (4 - array.ndim) + array.shape).transpose(TO_NHWC)
            return self.b.const("operand", np.ascontiguousarray(nhwc))
        return self._as_nhwc(name)
