"""Detectors: a NonMaxSuppression whose output size depends on the data,
bounded so that every mode can build it (docs/detectors.md).

ONNX's NonMaxSuppression returns `selected_indices` [num_selected, 3]
(batch, class, box), num_selected known only once the scores are: IREE's
async lowering of such graphs fails, and runtimeless C refuses any result
whose size depends on the data.  `bound_detections` replaces each
NonMaxSuppression whose selected indices are a graph output by the same
greedy suppression written in static-shape ops that every mode compiles:

- rows: `selected_indices` becomes [rows, 3] int64, rows the most the model
  implies (batches x classes x min(max_output_boxes_per_class, boxes)) or
  `--max-detections`, whichever is smaller; a row past the count is all
  zeros, and when the model selects more than `rows` the first `rows` in
  ONNX Runtime's order are kept;
- count: a new int64 [1] graph output, `<selected_indices>_count`, the number
  of valid rows;
- order and arithmetic are ONNX Runtime's: per batch, per class, boxes in
  descending score, equal scores by ascending box index; a box is a
  candidate when its score is above score_threshold (every box without
  one); a candidate is dropped when its intersection over union with a box
  already selected for its class is above iou_threshold, computed as
  ONNX Runtime computes it for center_point_box 0 ([y1, x1, y2, x2], any
  diagonal corners) and 1 ([x_center, y_center, width, height]).

The suppression is one ONNX Loop: one step per box a class can select,
each the arg-max of the candidates' scores and the overlap of the box it
picks with every box, the state (the boxes still candidates, the picks and
whether each is one) carried from step to step, so the graph is the same
size at any step count.  What grows with the steps is the run time (each
step a pass over batches x classes x boxes) and, in runtimeless C, the code
(its interpreter unrolls the Loop, each step a few dispatch calls): steps
are bounded by MAX_STEPS and that work by MAX_STEP_WORK; a model that
implies more (an exporter's max_output_boxes_per_class of 2^63-1 over
thousands of boxes) is refused with --max-detections as the hint, since
that bounds the steps.  One whose output another node reads, or inside an If, is bounded
with the post-processing around it by onnx_bounded.py before this runs (its
NonMaxSuppression rows call `suppression` here).  A NonMaxSuppression that
takes neither form (thresholds computed at run time, shapes not static, in
a branch onnx_bounded.py does not inline) is refused in one line naming the
node: emitted as it is, it would fail in IREE or be refused by runtimeless
C with no word of the cause.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ireegen.common.errors import UsageError
from ireegen.common.resources import doc

from .containment import shown
from .onnx_nodes import (
    MIN_DEFAULT_OPSET,
    NodeBuilder,
    all_nodes,
    default_opset,
    fresh_name,
    known_arrays,
    node_attrs,
    node_reads,
    subgraphs,
)

NMS = "NonMaxSuppression"
# Suppression steps per NonMaxSuppression (the Loop's trip count): each
# step is some twenty ops over [batches, classes, boxes] at run time, and a
# few dispatch calls of runtimeless C.
MAX_STEPS = 2048
# steps x batches x classes x boxes: the elements the suppression's steps
# pass over at run time, at most.
MAX_STEP_WORK = 1 << 30
# --max-detections: rows of the bounded output, at most (float32 counts
# them exactly below 2^24, and the row selection is [rows, steps] wide).
MAX_DETECTIONS = 1 << 16
# Elements of the row selection's one-hot matrices ([rows, candidates] and
# [classes, classes], float32): 64 MB each at most.
MAX_MATRIX = 1 << 24
_COUNT_SUFFIX = "_count"


@dataclass(frozen=True)
class BoundedOutput:
    """A graph output whose size depended on the data, now `rows` long:
    `count` names the output holding how many rows are valid; the rest
    are `fill`.  `boxes` and `scores` name the NonMaxSuppression's inputs,
    graph outputs (or inputs) of their own, and the other fields its
    parameters: the selection is checked by running ONNX Runtime's
    NonMaxSuppression on them (check/verify.py), since a score or overlap
    within rounding of a threshold flips it between any two runtimes."""

    name: str
    count: str
    rows: int
    node: str  # the NonMaxSuppression it came from
    boxes: str
    scores: str
    center_point_box: int
    per_class: int
    iou: float
    score: float | None
    fill: int = 0
    selects: bool = field(default=True, repr=False)  # checked against ONNX Runtime's NonMaxSuppression


# Ops whose result is chosen by comparing computed values: a value within
# rounding of another's, or of a threshold, chooses other entries in two
# runtimes that both compute correctly.
RANK_OPS = ("NonMaxSuppression", "TopK", "ArgMax", "ArgMin")


def rank_selections(path) -> dict:
    """{op type: nodes} of RANK_OPS in the ONNX model at `path`, subgraphs
    included ({} for another format or a file onnx cannot read)."""
    if Path(path).suffix != ".onnx":
        return {}
    try:
        import onnx

        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - a model onnx cannot read has nothing to say here
        return {}
    counts = {}
    for node in all_nodes(model.graph):
        if node.op_type in RANK_OPS and node.domain in ("", "ai.onnx"):
            counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return counts


def check_max_detections(value) -> int | None:
    """`--max-detections N`: None, or a positive integer up to MAX_DETECTIONS."""
    if value is None:
        return None
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or not 0 < int(text) <= MAX_DETECTIONS:
        raise UsageError(
            f"--max-detections {str(value)[:40]!r}: expected a whole number of detections from 1 to {MAX_DETECTIONS}"
        )
    return int(text)


def node_text(node) -> str:
    return f"node {shown(node.name)} ({node.op_type})" if node.name else f"a {node.op_type} node"


def _scalar(known: dict, name: str, node, what: str, default):
    """The constant value of `node`'s optional input `name`, or `default` when absent."""
    from onnx import numpy_helper

    if not name:
        return default
    if name not in known:
        raise UsageError(f"{node_text(node)}: its {what} is computed at run time; ireegen needs it constant")
    array = numpy_helper.to_array(known[name]).reshape(-1)
    if array.size != 1:
        raise UsageError(f"{node_text(node)}: its {what} has {array.size} values, not one")
    return array[0]


@dataclass(frozen=True)
class Nms:
    """One NonMaxSuppression, read and checked."""

    node: object
    batches: int
    classes: int
    boxes: int
    per_class: int  # max_output_boxes_per_class, clamped at 0 as ONNX Runtime does
    iou: float
    score: float | None
    center_point_box: int


def read_nms(node, shapes: dict, known: dict) -> Nms:
    inputs = list(node.input) + [""] * (5 - len(node.input))
    center = int(node_attrs(node).get("center_point_box", 0))
    if center not in (0, 1):
        raise UsageError(f"{node_text(node)}: center_point_box is {center}; ONNX defines 0 and 1")
    boxes, scores = shapes.get(inputs[0]), shapes.get(inputs[1])
    if not boxes or not scores or len(boxes) != 3 or len(scores) != 3:
        raise UsageError(
            f"{node_text(node)}: its boxes and scores need static shapes [batches, boxes, 4] and "
            "[batches, classes, boxes] (pin the model's inputs with --input-shape)"
        )
    if boxes[2] != 4 or boxes[0] != scores[0] or boxes[1] != scores[2]:
        raise UsageError(f"{node_text(node)}: boxes {boxes} and scores {scores} do not fit each other")
    per_class = int(_scalar(known, inputs[2], node, "max_output_boxes_per_class", 0))
    iou = float(_scalar(known, inputs[3], node, "iou_threshold", 0.0))
    score = _scalar(known, inputs[4], node, "score_threshold", None)
    if not 0.0 <= iou <= 1.0:
        raise UsageError(f"{node_text(node)}: iou_threshold {iou:g} is outside [0, 1]")
    return Nms(
        node, boxes[0], scores[1], boxes[1], max(per_class, 0), iou, None if score is None else float(score), center
    )


def _consumers(graph, name: str) -> list:
    return [n for n in graph.node if name in node_reads(n)]


def _subgraph_nms(graph):
    """The first NonMaxSuppression inside a subgraph (an If's branch, a Loop's body), with its holder."""
    for n in graph.node:
        for g in subgraphs(n):
            inner = next((m for m in g.node if m.op_type == NMS), None) or _subgraph_nms(g)
            if inner is not None:
                return inner if isinstance(inner, tuple) else (inner, n)
    return None


def bound_detections(model, path, max_detections: int | None, shapes: dict) -> tuple:
    """Rewrites, in place, every NonMaxSuppression of `model` as the module
    docstring says; returns the BoundedOutput of each.  Refuses (UsageError,
    one line naming the node) one it cannot bound, and --max-detections on
    a model with nothing to bound."""
    graph = model.graph
    nested = _subgraph_nms(graph)
    if nested is not None:
        inner, holder = nested
        raise UsageError(
            f"{path}: {node_text(inner)} inside {node_text(holder)}: a NonMaxSuppression in a branch or loop "
            "has a result whose size depends on the data, which ireegen bounds only at the graph's top level "
            f"with its selected indices as a graph output ({doc('detectors.md')})"
        )
    found = [n for n in graph.node if n.op_type == NMS and n.domain in ("", "ai.onnx")]
    if not found:
        if max_detections is not None:
            raise UsageError(f"--max-detections: {path} has no NonMaxSuppression whose output it could bound")
        return ()
    if default_opset(model) < MIN_DEFAULT_OPSET:
        raise UsageError(
            f"{path}: {node_text(found[0])}: the model is opset {default_opset(model)}; ireegen bounds "
            f"NonMaxSuppression in opset {MIN_DEFAULT_OPSET} and later (upgrade it with onnx.version_converter)"
        )
    known = known_arrays(graph, {t.name: t for t in graph.initializer})
    outputs = {o.name: o for o in graph.output}
    plans = []
    for node in found:
        selected = node.output[0]
        readers = [n for n in _consumers(graph, selected) if n is not node]
        if selected not in outputs or readers:
            reader = f"are read by {node_text(readers[0])}" if readers else "are not a graph output"
            raise UsageError(
                f"{path}: {node_text(node)}: its selected indices {reader}; ireegen bounds a NonMaxSuppression "
                f"whose selected indices are a graph output ({doc('detectors.md')})"
            )
        try:
            nms = read_nms(node, shapes, known)
            plans.append((nms, plan_steps(nms, max_detections)))
        except UsageError as e:
            raise UsageError(f"{path}: {e}") from None
    bounded = []
    for nms, (rows, steps) in plans:
        bounded.append(_rewrite(model, nms, rows, steps, outputs[nms.node.output[0]]))
    return tuple(bounded)


def plan_steps(nms: Nms, max_detections: int | None) -> tuple:
    """(rows, steps) of the bounded NonMaxSuppression."""
    steps = min(nms.per_class, nms.boxes)
    implied = nms.batches * nms.classes * steps
    # One row at least: a model that can select nothing still has an output to write.
    rows = max(1, implied if max_detections is None else min(implied, max_detections))
    steps = min(steps, rows)
    if steps > MAX_STEPS:
        hint = (
            f"; give --max-detections N (ireegen's suppression takes at most {MAX_STEPS} steps per class)"
            if max_detections is None
            else f"; --max-detections {max_detections} is over the {MAX_STEPS} steps ireegen's suppression takes"
        )
        raise UsageError(
            f"{node_text(nms.node)}: up to {steps:,} boxes per class "
            f"(max_output_boxes_per_class {nms.per_class:,}, {nms.boxes:,} boxes){hint}"
        )
    groups = nms.batches * nms.classes
    if groups * groups > MAX_MATRIX or nms.boxes >= 1 << 24:
        raise UsageError(
            f"{node_text(nms.node)}: {nms.batches:,} batches x {nms.classes:,} classes x {nms.boxes:,} boxes; "
            f"ireegen bounds at most {int(MAX_MATRIX**0.5):,} batches x classes and 2^24 boxes"
        )
    if steps * groups * nms.boxes > MAX_STEP_WORK:
        hint = "; give a smaller --max-detections" if max_detections is not None else "; give --max-detections N"
        raise UsageError(
            f"{node_text(nms.node)}: {steps:,} steps over {groups:,} batches x classes of {nms.boxes:,} boxes is "
            f"over the {MAX_STEP_WORK:,} elements a run of ireegen's suppression may pass over{hint}"
        )
    if rows * groups * steps > MAX_MATRIX:
        hint = "; give a smaller --max-detections" if max_detections is not None else "; give --max-detections N"
        raise UsageError(
            f"{node_text(nms.node)}: {rows:,} rows from {groups * steps:,} candidates is over the "
            f"{MAX_MATRIX:,} elements ireegen's row selection may take{hint}"
        )
    return rows, steps


def _rewrite(model, nms: Nms, rows: int, steps: int, output) -> BoundedOutput:
    from onnx import TensorProto, helper

    graph, node = model.graph, nms.node
    selected = node.output[0]
    count = selected + _COUNT_SUFFIX
    if count in {o.name for o in graph.output} or count in {v for n in graph.node for v in n.output}:
        count = fresh_name(graph, count)
    out_nodes = []
    b = NodeBuilder(graph, out_nodes, f"{node.name or 'nms'}/ireegen.bounded", share_constants=True)
    suppression(b, nms, rows, steps, selected, count)
    index = list(graph.node).index(node)
    del graph.node[index]
    for offset, n in enumerate(out_nodes):
        graph.node.insert(index + offset, n)
    output.type.tensor_type.ClearField("shape")
    output.type.tensor_type.elem_type = TensorProto.INT64
    for d in (rows, 3):
        output.type.tensor_type.shape.dim.add().dim_value = d
    position = list(graph.output).index(output)
    added = [helper.make_tensor_value_info(count, TensorProto.INT64, [1])]
    # The boxes and scores the indices point into: the caller reads the
    # selected boxes from them.
    visible = {v.name for v in (*graph.output, *graph.input)}
    boxes, scores = node.input[0], node.input[1]
    shapes = {boxes: [nms.batches, nms.boxes, 4], scores: [nms.batches, nms.classes, nms.boxes]}
    added += [
        helper.make_tensor_value_info(v, TensorProto.FLOAT, shapes[v]) for v in (boxes, scores) if v not in visible
    ]
    for offset, value in enumerate(added):
        graph.output.insert(position + 1 + offset, value)
    return BoundedOutput(
        selected, count, rows, node.name, boxes, scores, nms.center_point_box, nms.per_class, nms.iou, nms.score
    )


def suppression(
    b: NodeBuilder, nms: Nms, rows: int, steps: int, selected: str, count: str, valid: str | None = None
) -> None:
    """Appends to `b` the ops of the bounded suppression (the module docstring);
    `valid` (bool, the scores' shape): the boxes that may be candidates at all
    (onnx_bounded.py: the padding of bounded boxes never is)."""
    from onnx import TensorProto, helper

    f32, i64 = np.float32, np.int64
    node = nms.node
    batches, classes, boxes = nms.batches, nms.classes, nms.boxes
    if steps == 0:  # max_output_boxes_per_class 0: ONNX Runtime selects nothing
        b.op("Identity", b.const("none", np.zeros((max(rows, 0), 3), i64)), out=selected)
        b.op("Identity", b.const("zero", np.zeros(1, i64)), out=count)
        return
    box_in, score_in = node.input[0], node.input[1]
    # Each box's edges and area, [batches, 1, boxes], as ONNX Runtime's SuppressByIOU computes them.
    cols = [
        b.op("Squeeze", b.op("Slice", box_in, *_slice(b, k)), b.const("axis2", np.array([2], i64))) for k in range(4)
    ]
    if nms.center_point_box == 0:  # [y1, x1, y2, x2], any diagonal corners
        x_min, x_max = b.op("Min", cols[1], cols[3]), b.op("Max", cols[1], cols[3])
        y_min, y_max = b.op("Min", cols[0], cols[2]), b.op("Max", cols[0], cols[2])
    else:  # [x_center, y_center, width, height]
        half_w = b.op("Div", cols[2], b.const("two", np.array(2, f32)))
        half_h = b.op("Div", cols[3], b.const("two", np.array(2, f32)))
        x_min, x_max = b.op("Sub", cols[0], half_w), b.op("Add", cols[0], half_w)
        y_min, y_max = b.op("Sub", cols[1], half_h), b.op("Add", cols[1], half_h)
    area = b.op("Mul", b.op("Sub", x_max, x_min), b.op("Sub", y_max, y_min))
    edges = [x_min, x_max, y_min, y_max, area]
    # Flat [batches * boxes] copies, gathered by batch * boxes + the box picked.
    flat_shape = b.const("flat", np.array([batches * boxes], i64))
    flat = [b.op("Reshape", e, flat_shape) for e in edges]
    batch_base = b.const("batch_base", (np.arange(batches, dtype=i64) * boxes).reshape(batches, 1, 1))
    unsqueezed = b.const("axis1", np.array([1], i64))
    edges = [b.op("Unsqueeze", e, unsqueezed) for e in edges]
    zero = b.const("zero_f", np.array(0, f32))
    positive_area = b.op("Greater", edges[4], zero)
    box_index = b.const("box_index", np.arange(boxes, dtype=i64))
    lowest = b.const("lowest", np.array(-np.inf, f32))
    iou_threshold = b.const("iou_threshold", np.array(nms.iou, f32))
    if nms.score is None:
        alive = b.op(
            "ConstantOfShape",
            b.const("scores_shape", np.array([batches, classes, boxes], i64)),
            value=_tensor(np.array([True])),
        )
    else:
        alive = b.op("Greater", score_in, b.const("score_threshold", np.array(nms.score, f32)))
    if valid is not None:
        alive = b.op("And", alive, valid)
    group = [batches, classes, steps]
    body_nodes: list = []
    s = b.nested(body_nodes)  # one step of the suppression, the Loop's body
    step, go, alive_in, picks_in, valids_in = (b.name(n) for n in ("step", "go", "alive", "picks", "valids"))
    masked = s.op("Where", alive_in, score_in, lowest)
    pick = s.op("ArgMax", masked, axis=2, keepdims=1)  # first of equal scores: the lowest index
    # The axes a Constant of the body: onnx's shape inference reads no outer value's data.
    axes = s.op("Constant", value=_tensor(np.array([2], i64)))
    left = s.op("ReduceSum", s.op("Cast", alive_in, to=1), axes, keepdims=1)
    # This step's pick and whether it is one, written at its index of [batches, classes, steps].
    here = s.op("Equal", b.const("step_index", np.arange(steps, dtype=i64)), step)
    picks_out = s.op("Where", here, pick, picks_in)
    valids_out = s.op("Where", here, s.op("Cast", s.op("Greater", left, zero), to=1), valids_in)
    at = s.op("Add", pick, batch_base)
    sel = [s.op("Gather", f, at, axis=0) for f in flat]  # [batches, classes, 1]
    ix = s.op("Sub", s.op("Min", sel[1], edges[1]), s.op("Max", sel[0], edges[0]))
    iy = s.op("Sub", s.op("Min", sel[3], edges[3]), s.op("Max", sel[2], edges[2]))
    inter = s.op("Mul", ix, iy)
    union = s.op("Sub", s.op("Add", sel[4], edges[4]), inter)
    overlap = s.op("Greater", s.op("Div", inter, union), iou_threshold)
    checks = [s.op("Greater", v, zero) for v in (ix, iy, inter, union, sel[4])]
    for c in (*checks, positive_area):
        overlap = s.op("And", overlap, c)
    picked = s.op("Equal", box_index, pick)
    alive_out = s.op("And", alive_in, s.op("Not", s.op("Or", overlap, picked)))
    go_out = s.op("Identity", go)
    body = helper.make_graph(
        body_nodes,
        "suppression_step",
        [
            helper.make_tensor_value_info(step, TensorProto.INT64, []),
            helper.make_tensor_value_info(go, TensorProto.BOOL, []),
            helper.make_tensor_value_info(alive_in, TensorProto.BOOL, [batches, classes, boxes]),
            helper.make_tensor_value_info(picks_in, TensorProto.INT64, group),
            helper.make_tensor_value_info(valids_in, TensorProto.FLOAT, group),
        ],
        [
            helper.make_tensor_value_info(go_out, TensorProto.BOOL, []),
            helper.make_tensor_value_info(alive_out, TensorProto.BOOL, [batches, classes, boxes]),
            helper.make_tensor_value_info(picks_out, TensorProto.INT64, group),
            helper.make_tensor_value_info(valids_out, TensorProto.FLOAT, group),
        ],
    )
    # Every step runs (the condition stays true): the trip count is static,
    # and the state is carried, so every shape is too.
    outputs = [b.name(n) for n in ("alive_left", "picks", "valids")]
    b.keep(
        helper.make_node(
            "Loop",
            [
                b.scalar("steps", steps, i64),
                b.scalar("true", True, np.bool_),
                alive,
                b.const("no_picks", np.zeros(group, i64)),
                b.const("no_valids", np.zeros(group, f32)),
            ],
            outputs,
            body=body,
        )
    )
    # Declared: onnx's shape inference gives a Loop's results their element types only, and IREE's
    # importer takes a result's type from here.
    b.graph.value_info.extend(
        helper.make_tensor_value_info(name, dtype, dims)
        for name, dtype, dims in zip(
            outputs,
            (TensorProto.BOOL, TensorProto.INT64, TensorProto.FLOAT),
            ([batches, classes, boxes], group, group),
        )
    )
    _compact(b, nms, rows, steps, outputs[1], outputs[2], selected, count)


def _compact(b: NodeBuilder, nms: Nms, rows: int, steps: int, picks, valid, selected: str, count: str) -> None:
    """Moves the valid (batch, class, step) rows to the front in that
    order, as ONNX Runtime lists them, by a one-hot matrix product: row j
    goes to the count of valid rows before its class, plus its step.
    `picks` (int64) and `valid` (float, 1.0 where selected) are
    [batches, classes, steps]."""
    f32, i64 = np.float32, np.int64
    batches, classes = nms.batches, nms.classes
    groups = batches * classes
    pick = b.op("Cast", picks, to=1)
    per_class = b.op(
        "Reshape",
        b.op("ReduceSum", valid, b.const("axes2", np.array([2], i64)), keepdims=0),
        b.const("groups", np.array([1, groups], i64)),
    )
    before = b.op("MatMul", per_class, b.const("earlier", np.triu(np.ones((groups, groups), f32), 1)))
    before = b.op("Reshape", before, b.const("group_shape", np.array([batches, classes, 1], i64)))
    position = b.op("Add", before, b.const("step", np.arange(steps, dtype=f32)))
    position = b.op(
        "Where",
        b.op("Greater", valid, b.const("half", np.array(0.5, f32))),
        position,
        b.const("nowhere", np.array(-1, f32)),
    )
    position = b.op("Reshape", position, b.const("flat_rows", np.array([1, groups * steps], i64)))
    to_row = b.op("Cast", b.op("Equal", b.const("row", np.arange(rows, dtype=f32).reshape(rows, 1)), position), to=1)
    batch = np.broadcast_to(np.arange(batches, dtype=f32).reshape(batches, 1, 1, 1), (batches, classes, steps, 1))
    klass = np.broadcast_to(np.arange(classes, dtype=f32).reshape(1, classes, 1, 1), (batches, classes, steps, 1))
    triples = b.op(
        "Concat",
        b.const("batch", np.ascontiguousarray(batch)),
        b.const("class", np.ascontiguousarray(klass)),
        b.op("Unsqueeze", pick, b.const("axis3", np.array([3], i64))),
        axis=3,
    )
    triples = b.op("Reshape", triples, b.const("triples", np.array([groups * steps, 3], i64)))
    b.op("Cast", b.op("MatMul", to_row, triples), to=7, out=selected)
    total = b.op("ReduceSum", valid, keepdims=0)
    total = b.op("Min", total, b.const("rows", np.array(rows, f32)))
    b.op("Reshape", b.op("Cast", total, to=7), b.const("one", np.array([1], i64)), out=count)


def _slice(b: NodeBuilder, k: int) -> tuple:
    i64 = np.int64
    return (
        b.const("start", np.array([k], i64)),
        b.const("end", np.array([k + 1], i64)),
        b.const("axis2", np.array([2], i64)),
    )


def _tensor(array):
    from onnx import numpy_helper

    return numpy_helper.from_array(array)
