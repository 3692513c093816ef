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
