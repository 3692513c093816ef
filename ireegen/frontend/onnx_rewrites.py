"""Graph rewrites around IREE 3.13 bugs in ONNX lowering: each pattern that
IREE miscompiles or rejects is replaced, where it matches, by an equivalent
form that IREE compiles.  Each rewrite has a reproducer that still fails
with the raw compiler (tests/test_iree_bugs.py) and a row in
docs/known-iree-issues.md; the rewrites applied are listed in the manifest
(`onnx_rewrites`), and emit's verification checks the result like any other.

The table, REWRITES: rows of onnx_nodes.Rewrite (name, roots, function).
A function takes the model, its static shapes ({value name: dims}, from
onnx's shape inference) and its known values ({name: TensorProto}, the
initializers) and rewrites every match in place; it returns how many nodes
it rewrote.  Its roots are the op types of the nodes it replaces: the
rewrites run while the graph holds a root of some row (REWRITTEN_OPS, read
off the rows).
"""

from __future__ import annotations

import numpy as np

from . import onnx_ml_rewrites
from .onnx_conv1d_rewrites import CONV1D_REWRITES
from .onnx_decimate_rewrites import DECIMATE_REWRITES
from .onnx_fold import declare_initializers, static_shapes
from .onnx_nodes import (
    MIN_DEFAULT_OPSET,
    NodeBuilder,
    Rewrite,
    add_const,
    default_opset,
    fresh_name,
    known_arrays,
    node_attrs,
    rewrite_nodes,
)
from .onnx_qdq_rewrites import identical_qdq_around_data_movement, quantize_before_data_movement
from .onnx_rnn_rewrites import rnn_cells_unrolled, rnn_directions_as_forward
from .onnx_speed_rewrites import LAYOUT_REWRITES, SPEED_REWRITES
from .onnx_stable_rewrites import reduce_log_sum_exp_stable


def strided_conv_single_window(model, shapes: dict, values: dict) -> int:
    """A Conv with stride > 1 along an axis whose output length is 1
    (x [1, 64, 2], kernel 3, stride 2, pads 1: one window): IREE 3.13's
    lowering infers the wrong input extent ("inferred input/output operand
    #1 has shape's dimension #2 to be 4, but found 3").  Rewritten as an
    explicit zero Pad, a Slice to the one window, and the Conv with stride 1
    and no pads along that axis."""
    from onnx import helper

    graph = model.graph

    def rewrite(node, out_nodes) -> bool:
        if node.op_type != "Conv" or node.domain not in ("", "ai.onnx"):
            return False
        a = node_attrs(node)
        x, w = node.input[0], node.input[1]
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET") or x not in shapes or node.output[0] not in shapes:
            return False
        in_dims, out_dims = shapes[x], shapes[node.output[0]]
        spatial = len(in_dims) - 2
        # kernel_shape is optional (torch.export's exporter leaves it out): else the weight's dims.
        w_dims = list(values[w].dims) if w in values else shapes.get(w)
        kernel = list(a.get("kernel_shape") or (w_dims or [None, None] + [None] * spatial)[2:])
        strides = list(a.get("strides") or [1] * spatial)
        dilations = list(a.get("dilations") or [1] * spatial)
        pads = list(a.get("pads") or [0] * (2 * spatial))
        axes = [i for i in range(spatial) if strides[i] > 1 and out_dims[2 + i] == 1]
        if not axes or None in kernel:
            return False
        prefix = f"{node.name or 'conv'}/ireegen.single_window"
        value = x
        if any(pads):
            full = [0, 0] + pads[:spatial] + [0, 0] + pads[spatial:]
            padded = fresh_name(graph, f"{prefix}/padded", out_nodes)
            out_nodes.append(
                helper.make_node("Pad", [value, add_const(graph, f"{prefix}/pads", np.array(full, np.int64))], [padded])
            )
            value = padded
        window = [dilations[i] * (kernel[i] - 1) + 1 for i in axes]
        sliced = fresh_name(graph, f"{prefix}/window", out_nodes)
        out_nodes.append(
            helper.make_node(
                "Slice",
                [
                    value,
                    add_const(graph, f"{prefix}/starts", np.zeros(len(axes), np.int64)),
                    add_const(graph, f"{prefix}/ends", np.array(window, np.int64)),
                    add_const(graph, f"{prefix}/axes", np.array([2 + i for i in axes], np.int64)),
                ],
                [sliced],
            )
        )
        new_strides = [1 if i in axes else s for i, s in enumerate(strides)]
        kept = {k: v for k, v in a.items() if k not in ("pads", "strides", "auto_pad")}
        out_nodes.append(
            helper.make_node(
                "Conv",
                [sliced, *node.input[1:]],
                list(node.output),
                name=node.name,
                strides=new_strides,
                pads=[0] * (2 * spatial),
                **kept,
            )
        )
        return True

    return rewrite_nodes(graph, rewrite)


def reflect_pad_as_slices(model, shapes: dict, values: dict) -> int:
    """A reflect Pad (`[1, 576]` padded by 64 on the last axis): IREE 3.13's
    lowering gets the slice extents wrong ("inferred input/output operand #0
    has shape's dimension #0 to be greater than or equal to 64, but found
    57").  Rewritten as a Concat of the reversed edge Slices and the input."""
    from onnx import helper, numpy_helper

    graph = model.graph

    def rewrite(node, out_nodes) -> bool:
        a = node_attrs(node) if node.op_type == "Pad" else {}
        mode = a.get("mode", b"constant")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        if (
            node.op_type != "Pad"
            or node.domain not in ("", "ai.onnx")
            or mode != "reflect"
            or len(node.input) < 2
            or node.input[1] not in values
            or (len(node.input) > 3 and node.input[3])
            or node.input[0] not in shapes
        ):
            return False
        dims = shapes[node.input[0]]
        pads = numpy_helper.to_array(values[node.input[1]]).astype(np.int64).tolist()
        rank = len(dims)
        if (
            len(pads) != 2 * rank
            or min(pads) < 0
            or any(pads[i] >= dims[i] or pads[rank + i] >= dims[i] for i in range(rank))
        ):
            return False
        prefix = f"{node.name or 'pad'}/ireegen.reflect"
        value = node.input[0]
        for axis in range(rank):
            before, after = pads[axis], pads[rank + axis]
            if not before and not after:
                continue
            parts = []
            if before:  # x[before], ..., x[1]
                parts.append(_reversed_slice(graph, out_nodes, value, axis, before, 0, prefix))
            parts.append(value)
            if after:  # x[-2], ..., x[-1 - after]
                parts.append(_reversed_slice(graph, out_nodes, value, axis, -2, -2 - after, prefix))
            joined = fresh_name(graph, f"{prefix}/axis{axis}", out_nodes)
            out_nodes.append(helper.make_node("Concat", parts, [joined], axis=axis))
            value = joined
        out_nodes.append(helper.make_node("Identity", [value], list(node.output), name=node.name))
        return True

    return rewrite_nodes(graph, rewrite)


def _reversed_slice(graph, out_nodes, value, axis, start, end, prefix) -> str:
    from onnx import helper

    out = fresh_name(graph, f"{prefix}/edge", out_nodes)
    out_nodes.append(
        helper.make_node(
            "Slice",
            [
                value,
                add_const(graph, f"{prefix}/start", np.array([start], np.int64)),
                add_const(graph, f"{prefix}/end", np.array([end], np.int64)),
                add_const(graph, f"{prefix}/axis", np.array([axis], np.int64)),
                add_const(graph, f"{prefix}/step", np.array([-1], np.int64)),
            ],
            [out],
        )
    )
    return out


def array_feature_extractor_as_gather(model, shapes: dict, values: dict) -> int:
    """`ai.onnx.ml.ArrayFeatureExtractor(X, indices)`, which skl2onnx puts
    after every classifier to turn the argmax into a class label: IREE 3.13
    has no lowering for it ("does not support this op").  Rewritten as the
    default-domain ops it means: a Gather of the flattened indices along
    X's last axis (and, for a 1-D X, the leading 1 the op adds)."""
    from onnx import helper, numpy_helper

    graph = model.graph

    def rewrite(node, out_nodes) -> bool:
        x = node.input[0] if node.input else ""
        rank = len(shapes[x]) if x in shapes else (numpy_helper.to_array(values[x]).ndim if x in values else None)
        if node.op_type != "ArrayFeatureExtractor" or node.domain != "ai.onnx.ml" or not rank:
            return False
        prefix = f"{node.name or 'extract'}/ireegen.gather"
        flat = fresh_name(graph, f"{prefix}/indices", out_nodes)
        out_nodes.append(
            helper.make_node(
                "Reshape", [node.input[1], add_const(graph, f"{prefix}/flat", np.array([-1], np.int64))], [flat]
            )
        )
        if rank == 1:
            gathered = fresh_name(graph, f"{prefix}/row", out_nodes)
            out_nodes.append(helper.make_node("Gather", [x, flat], [gathered], axis=0))
            axes = add_const(graph, f"{prefix}/axes", np.array([0], np.int64))
            out_nodes.append(helper.make_node("Unsqueeze", [gathered, axes], list(node.output), name=node.name))
        else:
            out_nodes.append(helper.make_node("Gather", [x, flat], list(node.output), name=node.name, axis=rank - 1))
        return True

    return rewrite_nodes(graph, rewrite)


def linear_classifier_as_gemm(model, shapes: dict, values: dict) -> int:
    """`ai.onnx.ml.LinearClassifier`, skl2onnx's form of a LogisticRegression
    (or any linear classifier with one score per class): no lowering in IREE
    3.13.  Rewritten as a Gemm (scores = X W^T + b), its post-transform
    (Softmax, Sigmoid or none), and the label as the class of the largest
    score.  Only integer class labels and one score per class (not the
    binary form with a single score row)."""
    from onnx import helper

    graph = model.graph
    transforms = {"NONE": None, "SOFTMAX": "Softmax", "LOGISTIC": "Sigmoid"}

    def rewrite(node, out_nodes) -> bool:
        a = node_attrs(node) if node.op_type == "LinearClassifier" else {}
        post = a.get("post_transform", b"NONE")
        post = post.decode() if isinstance(post, bytes) else post
        labels = list(a.get("classlabels_ints") or [])
        coef = np.asarray(a.get("coefficients") or [], np.float32)
        intercepts = np.asarray(a.get("intercepts") or [], np.float32)
        x = node.input[0] if node.input else ""
        if (
            node.op_type != "LinearClassifier"
            or node.domain != "ai.onnx.ml"
            or post not in transforms
            or len(labels) < 2
            or coef.size % len(labels)
            or intercepts.size not in (0, len(labels))
            or x not in shapes
            or len(shapes[x]) != 2
            or coef.size != len(labels) * shapes[x][1]
        ):
            return False
        prefix = f"{node.name or 'linear'}/ireegen.gemm"
        weights = add_const(graph, f"{prefix}/weights", coef.reshape(len(labels), -1))
        bias = add_const(graph, f"{prefix}/bias", intercepts if intercepts.size else np.zeros(len(labels), np.float32))
        cast = fresh_name(graph, f"{prefix}/x", out_nodes)
        out_nodes.append(helper.make_node("Cast", [x], [cast], to=1))
        scores = fresh_name(graph, f"{prefix}/scores", out_nodes)
        out_nodes.append(helper.make_node("Gemm", [cast, weights, bias], [scores], transB=1))
        label_out = node.output[0] if node.output else ""
        score_out = node.output[1] if len(node.output) > 1 else ""
        if label_out:
            best = fresh_name(graph, f"{prefix}/best", out_nodes)
            out_nodes.append(helper.make_node("ArgMax", [scores], [best], axis=1, keepdims=0))
            classes = add_const(graph, f"{prefix}/classes", np.array(labels, np.int64))
            out_nodes.append(helper.make_node("Gather", [classes, best], [label_out], axis=0))
        if score_out:
            op = transforms[post]
            if op == "Softmax":
                out_nodes.append(helper.make_node(op, [scores], [score_out], axis=-1))
            elif op:
                out_nodes.append(helper.make_node(op, [scores], [score_out]))
            else:
                out_nodes.append(helper.make_node("Identity", [scores], [score_out]))
        return True

    return rewrite_nodes(graph, rewrite)


def normalizer_as_reductions(model, shapes: dict, values: dict) -> int:
    """`ai.onnx.ml.Normalizer` (skl2onnx puts an L1 one after a
    LinearClassifier's probabilities): no lowering in IREE 3.13.  Rewritten
    as each row divided by its L1 norm, L2 norm or maximum."""
    from onnx import helper

    graph = model.graph

    def rewrite(node, out_nodes) -> bool:
        norm = node_attrs(node).get("norm", b"MAX") if node.op_type == "Normalizer" else b""
        norm = norm.decode() if isinstance(norm, bytes) else norm
        x = node.input[0] if node.input else ""
        if node.op_type != "Normalizer" or node.domain != "ai.onnx.ml" or norm not in ("L1", "L2", "MAX"):
            return False
        if x not in shapes or len(shapes[x]) != 2:
            return False
        prefix = f"{node.name or 'normalize'}/ireegen.norm"
        axes = add_const(graph, f"{prefix}/axes", np.array([1], np.int64))
        value = fresh_name(graph, f"{prefix}/x", out_nodes)
        out_nodes.append(helper.make_node("Cast", [x], [value], to=1))
        total = fresh_name(graph, f"{prefix}/total", out_nodes)
        if norm == "MAX" and default_opset(model) >= 18:  # axes became an input
            out_nodes.append(helper.make_node("ReduceMax", [value, axes], [total], keepdims=1))
        elif norm == "MAX":
            out_nodes.append(helper.make_node("ReduceMax", [value], [total], axes=[1], keepdims=1))
        else:
            part = fresh_name(graph, f"{prefix}/part", out_nodes)
            out_nodes.append(
                helper.make_node("Abs" if norm == "L1" else "Mul", [value] * (1 if norm == "L1" else 2), [part])
            )
            if norm == "L1":
                out_nodes.append(helper.make_node("ReduceSum", [part, axes], [total], keepdims=1))
            else:
                squares = fresh_name(graph, f"{prefix}/squares", out_nodes)
                out_nodes.append(helper.make_node("ReduceSum", [part, axes], [squares], keepdims=1))
                out_nodes.append(helper.make_node("Sqrt", [squares], [total]))
        out_nodes.append(helper.make_node("Div", [value, total], list(node.output), name=node.name))
        return True

    return rewrite_nodes(graph, rewrite)


def pointwise_conv_on_one_pixel_as_matmul(model, shapes: dict, values: dict) -> int:
    """A 1x1 Conv with a bias on a one-pixel input (`[1, 6, 1, 1]`, the
    squeeze-excite block after a GlobalAveragePool): with
    `--iree-global-opt-use-im2col-for-convs`, IREE 3.13 makes it a
    matmul_24x1x6 whose bias copy lands outside the workgroup loop ("write
    affecting operations on global resources are restricted to workgroup
    distributed contexts"), and the whole model fails to compile.  It is a
    matrix product: rewritten as a Reshape to [N, C], a MatMul with the
    transposed weights, the Add of the bias and a Reshape back to
    [N, M, 1, 1]."""
    from onnx import helper, numpy_helper

    graph = model.graph
    # The weights: initializers, or Constant nodes (PaddlePaddle's exports).
    known = known_arrays(graph, values)
    builders = {}  # one for the walk: the graph's names read once

    def rewrite(node, out_nodes) -> bool:
        a = node_attrs(node) if node.op_type == "Conv" else {}
        x = node.input[0] if node.input else ""
        w = node.input[1] if len(node.input) > 1 else ""
        dims = shapes.get(x)
        weights = numpy_helper.to_array(known[w]) if w in known and node.op_type == "Conv" else None
        if (
            node.op_type != "Conv"
            or node.domain not in ("", "ai.onnx")
            or a.get("group", 1) != 1
            or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET", b"VALID", "VALID")
            or any(a.get("pads") or ())
            or not dims
            or len(dims) < 3
            or any(d != 1 for d in dims[2:])
            or not isinstance(dims[0], int)
            or weights is None
            or weights.ndim != len(dims)
            or any(k != 1 for k in weights.shape[2:])
            or weights.shape[1] != dims[1]
            or weights.dtype != np.float32
        ):
            return False
        n, channels, features = dims[0], weights.shape[1], weights.shape[0]
        b = builders.setdefault(id(out_nodes), NodeBuilder(graph, out_nodes, ""))
        b.prefix = f"{node.name or 'conv'}/ireegen.matmul"
        rows = b.op("Reshape", x, b.const("flat", np.array([n, channels], np.int64)), out=b.name("rows"))
        kernel = b.const("weights", weights.reshape(features, channels).T)
        product = b.op("MatMul", rows, kernel, out=b.name("product"))
        if len(node.input) > 2 and node.input[2]:
            product = b.op("Add", product, node.input[2], out=b.name("biased"))
        shape = np.array([n, features] + [1] * (len(dims) - 2), np.int64)
        b.keep(helper.make_node("Reshape", [product, b.const("shape", shape)], list(node.output), name=node.name))
        return True

    return rewrite_nodes(graph, rewrite)


REWRITES = (
    Rewrite("strided-conv-single-window", ("Conv",), strided_conv_single_window),
    Rewrite("reflect-pad-as-slices", ("Pad",), reflect_pad_as_slices),
    Rewrite("reduce-log-sum-exp-stable", ("ReduceLogSumExp",), reduce_log_sum_exp_stable),
    # Scaler first: the ml ops after it need the shape of its result.
    Rewrite("scaler-as-arithmetic", ("Scaler",), onnx_ml_rewrites.scaler_as_arithmetic),
    Rewrite("array-feature-extractor-as-gather", ("ArrayFeatureExtractor",), array_feature_extractor_as_gather),
    Rewrite("linear-classifier-as-gemm", ("LinearClassifier",), linear_classifier_as_gemm),
    Rewrite("normalizer-as-reductions", ("Normalizer",), normalizer_as_reductions),
    Rewrite("linear-regressor-as-gemm", ("LinearRegressor",), onnx_ml_rewrites.linear_regressor_as_gemm),
    Rewrite(
        "tree-ensemble-classifier-as-traversal",
        ("TreeEnsembleClassifier",),
        onnx_ml_rewrites.tree_ensemble_classifier_as_traversal,
    ),
    Rewrite(
        "tree-ensemble-regressor-as-traversal",
        ("TreeEnsembleRegressor",),
        onnx_ml_rewrites.tree_ensemble_regressor_as_traversal,
    ),
    Rewrite("svm-regressor-as-kernels", ("SVMRegressor",), onnx_ml_rewrites.svm_regressor_as_kernels),
    Rewrite("svm-classifier-as-votes", ("SVMClassifier",), onnx_ml_rewrites.svm_classifier_as_votes),
    Rewrite("rnn-cells-unrolled", ("GRU", "LSTM", "RNN"), rnn_cells_unrolled),
    Rewrite("rnn-directions-as-forward", ("GRU", "LSTM", "RNN"), rnn_directions_as_forward),
    Rewrite("pointwise-conv-on-one-pixel-as-matmul", ("Conv",), pointwise_conv_on_one_pixel_as_matmul),
    # Not an IREE bug: an exact simplification of QDQ graphs (onnx_qdq_rewrites.py).
    Rewrite(
        "identical-qdq-around-data-movement",
        ("DequantizeLinear", "QuantizeLinear"),
        identical_qdq_around_data_movement,
    ),
    Rewrite("quantize-before-data-movement", ("QuantizeLinear",), quantize_before_data_movement),
)

# Decimation first: it takes the depthwise Convs strided along one axis
# (its measured choice), depthwise-conv-as-taps the rest, in the same round.
# The NHWC layout before both: it takes a depthwise-separable CNN's Convs whole.
SPEED_TABLES = (LAYOUT_REWRITES, DECIMATE_REWRITES, SPEED_REWRITES, CONV1D_REWRITES)

# The op types some row replaces, with or without the speed rewrites: while
# the graph holds none, no rewrite can match.
REWRITTEN_OPS = frozenset(op for table in (REWRITES, *SPEED_TABLES) for row in table for op in row.roots)


MAX_ROUNDS = 4  # a rewrite can give the next one the shape it needs (an ml op's result)


def apply_rewrites(model, speed: bool = True) -> list:
    """Applies the table, then (if `speed`) SPEED_TABLES, to `model` in
    place, again while a round rewrote something (a later row's replacement
    can give an earlier row the static shape it needs); returns
    [{"rewrite": name, "nodes": count}] of those that matched, in the
    table's order."""
    from onnx import helper

    default = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if default is not None and default < MIN_DEFAULT_OPSET:
        return []  # the replacements use the input forms of Pad, Unsqueeze and ReduceSum (opset 13)
    table = (*REWRITES, *(row for speed_table in SPEED_TABLES for row in speed_table)) if speed else REWRITES
    counts = {}
    shapes = None  # inferred again only after a rewrite changed the graph
    for _ in range(MAX_ROUNDS):
        before = sum(counts.values())
        for row in table:
            if not any(n.op_type in REWRITTEN_OPS for n in model.graph.node):
                break
            if shapes is None:
                shapes = static_shapes(model)
                values = {t.name: t for t in model.graph.initializer}
            count = row.function(model, shapes, values)
            if count:
                shapes = None
                counts[row.name] = counts.get(row.name, 0) + count
                if default is None:  # an ai.onnx.ml-only model: its replacements are default-domain ops
                    model.opset_import.append(helper.make_opsetid("", MIN_DEFAULT_OPSET))
                    default = MIN_DEFAULT_OPSET
        if sum(counts.values()) == before:
            break
    if counts:
        declare_initializers(model)
    return [{"rewrite": row.name, "nodes": counts[row.name]} for row in table if row.name in counts]
