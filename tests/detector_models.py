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
