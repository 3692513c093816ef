"""Small detection graphs for tests/test_detectors.py and docs/detectors.md:
a YOLO-style head whose boxes and scores feed ONNX's NonMaxSuppression (as
exports with NMS in the graph do), the bare NonMaxSuppression, and the
forms ireegen refuses (inside an If, its indices read by a Gather)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _nms_constants(per_class, iou, score) -> tuple:
    """(NonMaxSuppression's inputs after boxes and scores, their initializers)."""
    names, tensors = [], []
    for name, value, dtype in (("max", per_class, np.int64), ("iou", iou, np.float32), ("score", score, np.float32)):
        if value is None:
            break
        names.append(name)
        tensors.append(numpy_helper.from_array(np.array([value], dtype), name))
    return names, tensors


def _model(nodes, inputs, outputs, initializers, opset=17):
    model = helper.make_model(
        helper.make_graph(nodes, "detector", inputs, outputs, initializers),
        opset_imports=[helper.make_opsetid("", opset)],
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def bare_nms(path, batches=1, classes=2, boxes=12, per_class=5, iou=0.5, score=0.3, center=0, opset=17):
    """NonMaxSuppression alone: boxes [batches, boxes, 4] and scores [batches, classes, boxes] are the inputs."""
    names, constants = _nms_constants(per_class, iou, score)
    node = helper.make_node(
        "NonMaxSuppression", ["boxes", "scores", *names], ["selected"], center_point_box=center, name="nms"
    )
    inputs = [
        helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [batches, boxes, 4]),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, [batches, classes, boxes]),
    ]
    outputs = [helper.make_tensor_value_info("selected", TensorProto.INT64, ["num_selected", 3])]
    onnx.save(_model([node], inputs, outputs, constants, opset), str(path))


def yolo_head(path, classes=3, size=32, per_class=10, iou=0.5, score=0.3, seed=0):
    """A tiny YOLO-style detector: two convolutions give, per cell of a
    (size/4)^2 grid, a box [x_center, y_center, width, height] in pixels and
    a score per class; NonMaxSuppression (center_point_box 1) selects."""
    rng = np.random.default_rng(seed)
    cells = (size // 4) ** 2
    names, constants = _nms_constants(per_class, iou, score)
    init = [
        numpy_helper.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32), "w1"),
        numpy_helper.from_array((rng.standard_normal((4 + classes, 8, 4, 4)) * 0.5).astype(np.float32), "w2"),
        numpy_helper.from_array(np.array([1, 4 + classes, cells], np.int64), "shape"),
        numpy_helper.from_array(np.array([0], np.int64), "at0"),
        numpy_helper.from_array(np.array([4], np.int64), "at4"),
        numpy_helper.from_array(np.array([4 + classes], np.int64), "at_end"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array(float(size), np.float32), "pixels"),
        *constants,
    ]
    nodes = [
        helper.make_node("Conv", ["image", "w1"], ["c1"], pads=[1, 1, 1, 1], name="stem"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
        helper.make_node("Conv", ["r1", "w2"], ["head"], strides=[4, 4], name="head"),
        helper.make_node("Reshape", ["head", "shape"], ["flat"], name="flatten"),
        helper.make_node("Slice", ["flat", "at0", "at4", "axis1"], ["raw_boxes"], name="box_slice"),
        helper.make_node("Sigmoid", ["raw_boxes"], ["unit_boxes"], name="box_sigmoid"),
        helper.make_node("Mul", ["unit_boxes", "pixels"], ["pixel_boxes"], name="box_scale"),
        helper.make_node("Transpose", ["pixel_boxes"], ["boxes"], perm=[0, 2, 1], name="box_transpose"),
        helper.make_node("Slice", ["flat", "at4", "at_end", "axis1"], ["raw_scores"], name="score_slice"),
        helper.make_node("Sigmoid", ["raw_scores"], ["scores"], name="score_sigmoid"),
        helper.make_node(
            "NonMaxSuppression", ["boxes", "scores", *names], ["selected"], center_point_box=1, name="nms"
        ),
    ]
    inputs = [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size])]
    outputs = [helper.make_tensor_value_info("selected", TensorProto.INT64, ["num_selected", 3])]
    onnx.save(_model(nodes, inputs, outputs, init), str(path))


def nms_in_if(path):
    """torchvision's batched_nms form: NonMaxSuppression in the else branch of an If on the box count."""
    names, constants = _nms_constants(5, 0.5, None)
    inner = helper.make_node("NonMaxSuppression", ["boxes", "scores", *names], ["kept"], name="inner_nms")
    then_branch = helper.make_graph(
        [helper.make_node("Constant", [], ["none"], value=numpy_helper.from_array(np.zeros((0, 3), np.int64)))],
        "empty",
        [],
        [helper.make_tensor_value_info("none", TensorProto.INT64, [0, 3])],
    )
    else_branch = helper.make_graph(
        [inner], "nms", [], [helper.make_tensor_value_info("kept", TensorProto.INT64, ["n", 3])]
    )
    nodes = [
        helper.make_node("Size", ["boxes"], ["size"], name="size"),
        helper.make_node("Equal", ["size", "zero"], ["empty"], name="is_empty"),
        helper.make_node(
            "If", ["empty"], ["selected"], then_branch=then_branch, else_branch=else_branch, name="batched_nms"
        ),
    ]
    inputs = [
        helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 8, 4]),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2, 8]),
    ]
    outputs = [helper.make_tensor_value_info("selected", TensorProto.INT64, ["n", 3])]
    init = [*constants, numpy_helper.from_array(np.array(0, np.int64), "zero")]
    onnx.save(_model(nodes, inputs, outputs, init), str(path))


def nms_gathered(path):
    """NonMaxSuppression whose indices a Gather reads (the selected boxes' column)."""
    names, constants = _nms_constants(5, 0.5, 0.1)
    nodes = [
        helper.make_node("NonMaxSuppression", ["boxes", "scores", *names], ["selected"], name="nms"),
        helper.make_node("Gather", ["selected", "two"], ["box_index"], axis=1, name="pick_box"),
    ]
    inputs = [
        helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 8, 4]),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2, 8]),
    ]
    outputs = [helper.make_tensor_value_info("box_index", TensorProto.INT64, ["n"])]
    init = [*constants, numpy_helper.from_array(np.array(2, np.int64), "two")]
    onnx.save(_model(nodes, inputs, outputs, init), str(path))


def random_boxes(rng, batches, boxes, center):
    """Overlapping boxes in [0, 18) as `center` lays them out."""
    corner = rng.uniform(0, 12, (batches, boxes, 2)).astype(np.float32)
    size = rng.uniform(0.5, 6, (batches, boxes, 2)).astype(np.float32)
    if center:
        data = np.concatenate([corner + size / 2, size], axis=2)
    else:  # [y1, x1, y2, x2], corners in either order
        far = corner + size
        swap = rng.random((batches, boxes, 1)) < 0.3
        data = np.concatenate([np.where(swap, far, corner), np.where(swap, corner, far)], axis=2)
    return data.astype(np.float32)


def random_scores(rng, batches, classes, boxes, ties=False):
    """Scores in [0, 1); with `ties`, five values only, so that equal scores are common."""
    if ties:
        return (rng.integers(0, 5, (batches, classes, boxes)) / 4).astype(np.float32)
    return rng.random((batches, classes, boxes)).astype(np.float32)


# The scene detector of docs/detectors.md: anchors of ANCHOR pixels every
# STRIDE pixels; a class per colour channel, scored by the channel's mean
# over the anchor.
SCENE = 64
STRIDE = 4
ANCHOR = 12


def scene_detector(path, per_class=4, iou=0.1, score=0.5):
    """A detector that finds red, green and blue squares: each anchor's
    score for a class is a sigmoid of that colour's mean over it (an
    AveragePool), its box the anchor moved by a small convolution of the
    image (a regression head), [x_center, y_center, width, height]."""
    grid = (SCENE - ANCHOR) // STRIDE + 1
    cells = grid * grid
    centres = np.arange(grid, dtype=np.float32) * STRIDE + ANCHOR / 2
    cy, cx = np.meshgrid(centres, centres, indexing="ij")
    anchors = np.stack([cx.ravel(), cy.ravel(), np.full(cells, ANCHOR), np.full(cells, ANCHOR)], axis=1)
    rng = np.random.default_rng(0)
    names, constants = _nms_constants(per_class, iou, score)
    init = [
        numpy_helper.from_array(anchors.T.reshape(1, 4, cells).astype(np.float32), "anchors"),
        numpy_helper.from_array((rng.standard_normal((4, 3, ANCHOR, ANCHOR)) * 0.01).astype(np.float32), "w_box"),
        numpy_helper.from_array(np.array([1, 4, cells], np.int64), "box_shape"),
        numpy_helper.from_array(np.array([1, 3, cells], np.int64), "score_shape"),
        numpy_helper.from_array(np.array(12.0, np.float32), "sharpness"),
        numpy_helper.from_array(np.array(0.35, np.float32), "middle"),
        *constants,
    ]
    nodes = [
        helper.make_node("Conv", ["image", "w_box"], ["offsets"], strides=[STRIDE, STRIDE], name="box_head"),
        helper.make_node("Reshape", ["offsets", "box_shape"], ["flat_offsets"], name="box_flatten"),
        helper.make_node("Add", ["anchors", "flat_offsets"], ["moved"], name="box_decode"),
        helper.make_node("Transpose", ["moved"], ["boxes"], perm=[0, 2, 1], name="box_transpose"),
        helper.make_node(
            "AveragePool",
            ["image"],
            ["means"],
            kernel_shape=[ANCHOR, ANCHOR],
            strides=[STRIDE, STRIDE],
            name="score_head",
        ),
        helper.make_node("Reshape", ["means", "score_shape"], ["flat_means"], name="score_flatten"),
        helper.make_node("Sub", ["flat_means", "middle"], ["centred"], name="score_centre"),
        helper.make_node("Mul", ["centred", "sharpness"], ["logits"], name="score_sharpen"),
        helper.make_node("Sigmoid", ["logits"], ["scores"], name="score_sigmoid"),
        helper.make_node(
            "NonMaxSuppression", ["boxes", "scores", *names], ["selected"], center_point_box=1, name="nms"
        ),
    ]
    inputs = [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, SCENE, SCENE])]
    outputs = [helper.make_tensor_value_info("selected", TensorProto.INT64, ["num_selected", 3])]
    onnx.save(_model(nodes, inputs, outputs, init), str(path))


def scene(seed=0):
    """A synthetic scene: dim noise and coloured squares of 10 to 20 pixels, some overlapping."""
    rng = np.random.default_rng(seed)
    image = (rng.random((1, 3, SCENE, SCENE)) * 0.15).astype(np.float32)
    for channel, (y, x, side) in zip(
        (0, 1, 2, 0, 2), ((6, 8, 16), (30, 36, 20), (40, 6, 14), (44, 44, 12), (10, 40, 18))
    ):
        image[0, channel, y : y + side, x : x + side] = 0.9
    return image


def ssd_postprocess(path, anchors=16, classes=3, topk=5, detections=6, score=0.5, iou=0.5):
    """torchvision's SSD post-processing as torch.onnx.export writes it
    (opset 17): per class, the scores above `score` (NonZero, GatherND),
    their top min(topk, count) (TopK) and boxes (Gather), labels
    (ConstantOfShape); all classes joined (Concat); batched_nms (an If on
    the joined boxes being empty, NonMaxSuppression on boxes moved apart by
    class inside); the first `detections` kept (Slice).  Inputs: boxes
    [anchors, 4] (x1, y1, x2, y2), scores [anchors, classes]; outputs
    boxes, scores, labels, each [n, ...]."""
    i64, f32 = np.int64, np.float32
    init = [
        numpy_helper.from_array(np.array(score, f32), "score_threshold"),
        numpy_helper.from_array(np.array([topk], i64), "topk"),
        numpy_helper.from_array(np.array(0, i64), "zero"),
        numpy_helper.from_array(np.array([0], i64), "axes0"),
        numpy_helper.from_array(np.array([1], i64), "axes1"),
        numpy_helper.from_array(np.array([1], i64), "one_shape"),
        numpy_helper.from_array(np.array([detections], i64), "detections"),
        numpy_helper.from_array(np.array([2], i64), "column"),
    ]
    nodes, boxes_k, scores_k, labels_k = [], [], [], []
    for c in range(1, classes):  # class 0 is the background, as torchvision's
        p = f"c{c}_"
        init.append(numpy_helper.from_array(np.array(c, i64), p + "index"))
        nodes += [
            helper.make_node("Gather", ["scores", p + "index"], [p + "s"], axis=1, name=p + "column"),
            helper.make_node("Greater", [p + "s", "score_threshold"], [p + "keep"], name=p + "greater"),
            helper.make_node("NonZero", [p + "keep"], [p + "nz"], name=p + "nonzero"),
            helper.make_node("Transpose", [p + "nz"], [p + "nzt"], perm=[1, 0], name=p + "transpose"),
            helper.make_node("GatherND", [p + "s", p + "nzt"], [p + "sk"], name=p + "gather_scores"),
            helper.make_node("NonZero", [p + "keep"], [p + "nz2"], name=p + "nonzero2"),
            helper.make_node("Transpose", [p + "nz2"], [p + "nzt2"], perm=[1, 0], name=p + "transpose2"),
            helper.make_node("GatherND", ["boxes", p + "nzt2"], [p + "bk"], name=p + "gather_boxes"),
            helper.make_node("Shape", [p + "sk"], [p + "shape"], name=p + "shape"),
            helper.make_node("Gather", [p + "shape", "zero"], [p + "n"], axis=0, name=p + "size"),
            helper.make_node("Unsqueeze", [p + "n", "axes0"], [p + "n1"], name=p + "unsqueeze"),
            helper.make_node("Concat", ["topk", p + "n1"], [p + "both"], axis=0, name=p + "concat"),
            helper.make_node("ReduceMin", [p + "both"], [p + "k0"], keepdims=0, name=p + "min"),
            helper.make_node("Reshape", [p + "k0", "one_shape"], [p + "k"], name=p + "reshape"),
            helper.make_node("TopK", [p + "sk", p + "k"], [p + "top", p + "at"], axis=-1, name=p + "topk"),
            helper.make_node("Gather", [p + "bk", p + "at"], [p + "boxes"], axis=0, name=p + "pick"),
            helper.make_node("Shape", [p + "top"], [p + "top_shape"], name=p + "top_shape"),
            helper.make_node(
                "ConstantOfShape",
                [p + "top_shape"],
                [p + "labels"],
                value=numpy_helper.from_array(np.array([c], i64)),
                name=p + "labels",
            ),
        ]
        boxes_k.append(p + "boxes")
        scores_k.append(p + "top")
        labels_k.append(p + "labels")
    nodes += [
        helper.make_node("Concat", boxes_k, ["all_boxes"], axis=0, name="join_boxes"),
        helper.make_node("Concat", scores_k, ["all_scores"], axis=0, name="join_scores"),
        helper.make_node("Concat", labels_k, ["all_labels"], axis=0, name="join_labels"),
        helper.make_node("Shape", ["all_boxes"], ["joined_shape"], name="joined_shape"),
        helper.make_node("ReduceProd", ["joined_shape"], ["joined_size"], keepdims=0, name="joined_size"),
        helper.make_node("Equal", ["joined_size", "zero"], ["empty"], name="is_empty"),
    ]
    inner = [
        helper.make_node("ReduceMax", ["all_boxes"], ["max_coordinate"], keepdims=0, name="max_coordinate"),
        helper.make_node("Cast", ["all_labels"], ["labels_f"], to=TensorProto.FLOAT, name="labels_f"),
        helper.make_node("Constant", [], ["one_f"], value=numpy_helper.from_array(np.array(1.0, f32)), name="one_f"),
        helper.make_node("Add", ["max_coordinate", "one_f"], ["spread"], name="spread"),
        helper.make_node("Mul", ["labels_f", "spread"], ["offsets"], name="offsets"),
        helper.make_node("Unsqueeze", ["offsets", "axes1"], ["offsets_col"], name="offsets_col"),
        helper.make_node("Add", ["all_boxes", "offsets_col"], ["boxes_for_nms"], name="boxes_for_nms"),
        helper.make_node("Unsqueeze", ["boxes_for_nms", "axes0"], ["nms_boxes"], name="nms_boxes"),
        helper.make_node("Unsqueeze", ["all_scores", "axes0"], ["scores_1"], name="scores_1"),
        helper.make_node("Unsqueeze", ["scores_1", "axes0"], ["nms_scores"], name="nms_scores"),
        helper.make_node(
            "Constant", [], ["per_class"], value=numpy_helper.from_array(np.array([2**63 - 1], i64)), name="per_class"
        ),
        helper.make_node("Constant", [], ["iou"], value=numpy_helper.from_array(np.array([iou], f32)), name="iou"),
        helper.make_node(
            "NonMaxSuppression", ["nms_boxes", "nms_scores", "per_class", "iou"], ["selected"], name="inner_nms"
        ),
        helper.make_node("Gather", ["selected", "column"], ["kept_col"], axis=1, name="kept_col"),
        helper.make_node("Squeeze", ["kept_col", "axes1"], ["kept"], name="kept"),
    ]
    then_branch = helper.make_graph(
        [helper.make_node("Constant", [], ["none"], value=numpy_helper.from_array(np.zeros((0,), i64)), name="none")],
        "empty",
        [],
        [helper.make_tensor_value_info("none", TensorProto.INT64, [0])],
    )
    else_branch = helper.make_graph(inner, "nms", [], [helper.make_tensor_value_info("kept", TensorProto.INT64, ["n"])])
    nodes += [
        helper.make_node(
            "If", ["empty"], ["keep"], then_branch=then_branch, else_branch=else_branch, name="batched_nms"
        ),
        helper.make_node("Slice", ["keep", "axes0", "detections", "axes0"], ["keep_first"], name="keep_first"),
        helper.make_node("Gather", ["all_boxes", "keep_first"], ["det_boxes"], axis=0, name="det_boxes"),
        helper.make_node("Gather", ["all_scores", "keep_first"], ["det_scores"], axis=0, name="det_scores"),
        helper.make_node("Gather", ["all_labels", "keep_first"], ["det_labels"], axis=0, name="det_labels"),
    ]
    inputs = [
        helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [anchors, 4]),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, [anchors, classes]),
    ]
    outputs = [
        helper.make_tensor_value_info("det_boxes", TensorProto.FLOAT, ["n", 4]),
        helper.make_tensor_value_info("det_scores", TensorProto.FLOAT, ["n"]),
        helper.make_tensor_value_info("det_labels", TensorProto.INT64, ["n"]),
    ]
    onnx.save(_model(nodes, inputs, outputs, init), str(path))


def random_corner_boxes(rng, anchors):
    """Overlapping boxes [x1, y1, x2, y2] in [0, 18)."""
    corner = rng.uniform(0, 12, (anchors, 2)).astype(np.float32)
    return np.concatenate([corner, corner + rng.uniform(0.5, 6, (anchors, 2))], axis=1).astype(np.float32)


def torchvision_ssd(path, size=64, classes=4, topk=10, detections=8, score=0.2):
    """A small torchvision SSD (two strided convolutions as its backbone,
    random weights, seed 0) exported by torch.onnx.export (opset 17) as
    users export torchvision's detectors: its post-processing is
    torchvision's own (NonZero, TopK, batched_nms in an If)."""
    import collections

    import torch
    from torchvision.models.detection.anchor_utils import DefaultBoxGenerator
    from torchvision.models.detection.ssd import SSD

    class Backbone(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(3, 8, 3, stride=4, padding=1)
            self.b = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1)
            self.out_channels = [8, 8]

        def forward(self, x):
            a = torch.relu(self.a(x))
            return collections.OrderedDict([("0", a), ("1", torch.relu(self.b(a)))])

    torch.manual_seed(0)
    model = SSD(
        Backbone(),
        DefaultBoxGenerator([[2], [2]]),
        (size, size),
        num_classes=classes,
        topk_candidates=topk,
        detections_per_img=detections,
        score_thresh=score,
    ).eval()
    torch.onnx.export(
        model,
        (torch.rand(1, 3, size, size),),
        str(path),
        opset_version=17,
        input_names=["image"],
        output_names=["boxes", "scores", "labels"],
        dynamo=False,
    )


def yolo_export_tail(path, classes=3, anchors=24, size=32, max_det=5, conf=0.25, iou=0.7):
    """An Ultralytics YOLOv8 export's post-processing (`export(nms=True)`), op
    for op as torch.onnx writes it, on the head's output `preds` [1, 4 +
    classes, anchors] (boxes x, y, w, h in pixels, then class scores): the
    best class per anchor, the anchors above `conf` (NonZero, GatherND),
    boxes scaled and moved apart by class (an Expand to a shape computed from
    the count), class-agnostic NonMaxSuppression, the box column of the
    selection (Gather, Squeeze) cut to `max_det`, the detections [x, y, w, h,
    score, class] flattened and padded to max_det rows (a Pad by amounts
    computed from the count), written into `output0` [1, max_det, 6] by a
    ScatterND."""
    i64, f32 = np.int64, np.float32
    init, nodes = [], []

    def c(name, value, dtype=i64):
        init.append(numpy_helper.from_array(np.array(value, dtype), name))
        return name

    def n(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    big = np.iinfo(np.int64).max
    t = n("Transpose", ["preds"], "t", perm=[0, 2, 1])
    box = n("Slice", [t, c("s0", [0]), c("s4", [4]), c("ax2", [2])], "box_all")
    score = n("Slice", [t, "s4", c("s_end", [4 + classes]), "ax2"], "score_all")
    extra = n("Slice", [t, "s_end", c("s_extra", [4 + classes]), "ax2"], "extra_all")
    best = n("ReduceMax", [score], "best_all", axes=[-1], keepdims=0)
    label = n("ArgMax", [score], "label_all", axis=-1, keepdims=0)
    zero = c("batch0", 0)
    box, label, best, extra = (n("Gather", [v, zero], v + "_0", axis=0) for v in (box, label, best, extra))
    mask = n("Greater", [best, c("conf", conf, f32)], "mask")
    picked = []
    for k, v in enumerate((box, best, label, extra)):  # one NonZero per masked tensor, as exported
        where = n("Transpose", [n("NonZero", [mask], f"nz{k}")], f"nz{k}_t", perm=[1, 0])
        picked.append(n("GatherND", [v, where], f"{v}_kept"))
    box, best, label, extra = picked
    scale = n("Cast", [n("ReduceMax", [c("imgsz", [size, size])], "imgsz_max", keepdims=0)], "imgsz_f", to=1)
    nmsbox = n("Mul", [n("Div", [box, scale], "unit_box"), c("one_f", 1.0, f32)], "nmsbox")
    # cls.reshape(-1, 1).expand(nmsbox.shape[0], 4): torch's expand, -1 entries taken from the input.
    count = n("Gather", [n("Shape", [label], "label_shape"), c("at0", 0)], "n")
    column = n("Reshape", [label, n("Concat", [n("Unsqueeze", [count, c("u0", [0])], "n_1"), c("one", [1])], "col_shape", axis=0)], "label_col")  # fmt: skip
    wanted = n("Reshape", [n("Concat", ["n_1", c("four", [4])], "exp_cat", axis=0), c("minus1", [-1])], "exp_shape")
    ones = n("ConstantOfShape", [n("Shape", [wanted], "exp_rank")], "exp_ones", value=numpy_helper.from_array(np.array([1], i64)))  # fmt: skip
    is_minus = n("Equal", [wanted, n("Mul", [ones, c("m1", -1)], "minus_ones")], "is_minus")
    offsets = n("Expand", [column, n("Where", [is_minus, ones, wanted], "exp_final")], "offsets")
    front = n("Slice", [nmsbox, "s0", "four", c("ax1", [1]), c("step1", [1])], "front")
    moved = n("Add", [front, n("Mul", [n("Cast", [offsets], "offsets_f", to=1), "one_f"], "offsets_px")], "moved")
    rest = n("Slice", [nmsbox, "four", c("end", [big]), "ax1", "step1"], "rest")
    nmsbox = n("Concat", [moved, rest], "nms_boxes", axis=-1)
    boxes3 = n("Cast", [n("Unsqueeze", [nmsbox, "u0"], "boxes3u")], "boxes3", to=1)
    scores3 = n("Cast", [n("Unsqueeze", [n("Unsqueeze", [best, "u0"], "scores2"), "u0"], "scores3u")], "scores3", to=1)
    names = [boxes3, scores3, c("max_out", [big]), c("iou", [iou], f32)]
    keep = n(
        "Squeeze",
        [n("Gather", [n("NonMaxSuppression", names, "nms"), c("two", [2])], "nms_col", axis=1), "ax1"],
        "keep",
    )
    keep = n("Slice", [keep, "s0", c("max_det", [max_det]), "u0", "step1"], "keep_cut")
    parts = [
        n("Gather", [box, keep], "det_box", axis=0),
        n("Reshape", [n("Gather", [best, keep], "det_score1", axis=0), c("col", [-1, 1])], "det_score"),
        n("Cast", [n("Reshape", [n("Gather", [label, keep], "det_label1", axis=0), "col"], "det_label2")], "det_label", to=1),
        n("Gather", [extra, keep], "det_extra", axis=0),
    ]  # fmt: skip
    dets = n("Concat", parts, "dets", axis=-1)
    width = n("Gather", [n("Shape", [dets], "dets_shape"), c("at1", 1)], "width", axis=0)
    rows = n("Gather", [n("Shape", [dets], "dets_shape2"), "at0"], "rows", axis=0)
    missing = n("Mul", [n("Sub", [c("max_det_s", max_det), rows], "missing_rows"), width], "missing")
    flat = n("Reshape", [dets, "minus1"], "dets_flat")
    pads = n("Concat", [c("zero1", [0]), n("Unsqueeze", [missing, "u0"], "missing_1")], "pads_a", axis=0)
    filler = n("ConstantOfShape", [n("Sub", [c("two_s", [2]), n("Shape", [pads], "pads_len")], "fill_len")], "fill", value=numpy_helper.from_array(np.array([0], i64)))  # fmt: skip
    pads = n("Concat", [n("Cast", [pads], "pads_b", to=7), filler], "pads_c", axis=0)
    pads = n("Reshape", [pads, c("pairs", [-1, 2])], "pads_pairs")
    pads = n("Slice", [pads, c("rev_start", [-1]), c("rev_end", [-big]), "u0", c("rev_step", [-1])], "pads_rev")
    pads = n("Cast", [n("Reshape", [n("Transpose", [pads], "pads_t", perm=[1, 0]), "minus1"], "pads_flat")], "pads", to=7)  # fmt: skip
    padded = n("Pad", [flat, pads, ""], "padded", mode="constant")
    grid = n("Concat", [c("max_det_1", [max_det]), n("Unsqueeze", [width, "u0"], "width_1")], "grid", axis=0)
    padded = n("Expand", [n("Reshape", [padded, grid], "padded_2d"), c("grid_static", [max_det, 6])], "padded_e")
    update = n("Reshape", [padded, c("batch_shape", [1, max_det, 6])], "update")
    out = n("ScatterND", [c("zeros", np.zeros((1, max_det, 6)), f32), c("row0", [[0]]), update], "scattered")
    n("Slice", [out, "s0", c("bs", [1]), "u0", "step1"], "output0")
    inputs = [helper.make_tensor_value_info("preds", TensorProto.FLOAT, [1, 4 + classes, anchors])]
    outputs = [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, max_det, 6])]
    onnx.save(_model(nodes, inputs, outputs, init), str(path))


def yolo_preds(rng, k, classes=3, anchors=24, size=32):
    """The head's output for yolo_export_tail: overlapping boxes in pixels,
    class scores from none above the threshold to most, equal ones every
    fifth draw."""
    xy = rng.uniform(4, size - 4, (1, 2, anchors))
    wh = rng.uniform(2, 12, (1, 2, anchors))
    scores = rng.random((1, classes, anchors)) ** (1 + 4 * (k % 6))
    if k % 5 == 0:
        scores = rng.integers(0, 3, (1, classes, anchors)) / 2
    if k % 7 == 3:
        scores = scores * 0.2  # none above the threshold: nothing to select
    return {"preds": np.concatenate([xy, wh, scores], axis=1).astype(np.float32)}
