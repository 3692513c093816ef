"""Detectors (ireegen/frontend/onnx_detections.py, docs/detectors.md): a
NonMaxSuppression whose selected indices are a graph output is bounded in
static-shape ops.  The bounded graph computes, in ONNX Runtime, what ONNX
Runtime's own NonMaxSuppression computes (padded to the bound, with the
count), over box formats, thresholds, batches, classes and equal scores
(milliseconds per draw); a tiny YOLO-style detector emits in runtimeless
and async, verified against ONNX Runtime; what cannot be bounded is refused
in one line naming the node, and a bad --max-detections naming the flag."""

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from detector_models import (
    bare_nms,
    nms_gathered,
    nms_in_if,
    random_boxes,
    random_corner_boxes,
    random_scores,
    ssd_postprocess,
    yolo_export_tail,
    yolo_head,
    yolo_preds,
)

from ireegen.check.subjects import bounded_as
from ireegen.check.verify import _both_disagree
from ireegen.common.errors import UsageError
from ireegen.frontend.import_options import ImportOptions
from ireegen.frontend.onnx_bounded import ranked_topk
from ireegen.frontend.onnx_import import prepare_onnx
from ireegen.frontend.onnx_nodes import NodeBuilder

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

DRAWS = 40


def _session(model):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


FORMS = {
    "corners": dict(center=0),
    "center": dict(center=1),
    "no-score-threshold": dict(score=None),
    "no-thresholds": dict(iou=None, score=None),
    "batches-classes": dict(batches=2, classes=3, boxes=10),
    "one-per-class": dict(per_class=1),
    "iou-zero": dict(iou=0.0),
    "per-class-over-boxes": dict(per_class=50, boxes=6),
    "per-class-zero": dict(per_class=0),
}


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("form", FORMS, ids=str)
def test_bounded_nms_selects_what_onnxruntime_selects(tmp_path, form, ties):
    options = dict(batches=1, classes=2, boxes=12, per_class=5, iou=0.5, score=0.3, center=0) | FORMS[form]
    path = tmp_path / "nms.onnx"
    bare_nms(path, **options)
    model, _, _, bounded = prepare_onnx(path)
    (bound,) = bounded
    assert [o.name for o in model.graph.output] == ["selected", "selected_count"]
    reference, ours = _session(str(path)), _session(model.SerializeToString())
    rng = np.random.default_rng(len(form) + ties)
    batches, classes, boxes = options["batches"], options["classes"], options["boxes"]
    for _ in range(DRAWS):
        feeds = {
            "boxes": random_boxes(rng, batches, boxes, options["center"]),
            "scores": random_scores(rng, batches, classes, boxes, ties),
        }
        want_rows, want_count = bounded_as(reference.run(None, feeds)[0], bound)
        rows, count = ours.run(None, feeds)
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(count, want_count)


@pytest.mark.parametrize("limit", [1, 4, 7])
def test_max_detections_keeps_the_first_rows_in_onnxruntime_order(tmp_path, limit):
    path = tmp_path / "nms.onnx"
    bare_nms(path, batches=2, classes=2, boxes=10, per_class=4, score=None)
    model, _, _, (bound,) = prepare_onnx(path, ImportOptions(max_detections=limit))
    assert bound.rows == limit
    reference, ours = _session(str(path)), _session(model.SerializeToString())
    rng = np.random.default_rng(limit)
    for _ in range(DRAWS):
        feeds = {"boxes": random_boxes(rng, 2, 10, 0), "scores": random_scores(rng, 2, 2, 10)}
        full = reference.run(None, feeds)[0]
        rows, count = ours.run(None, feeds)
        assert count[0] == min(len(full), limit)
        np.testing.assert_array_equal(rows, bounded_as(full, bound)[0])


def test_the_yolo_head_exposes_its_boxes_and_scores(tmp_path):
    path = tmp_path / "yolo.onnx"
    yolo_head(path)
    model, _, _, (bound,) = prepare_onnx(path, ImportOptions(onnx_rewrites=False))
    assert [o.name for o in model.graph.output] == ["selected", "selected_count", "boxes", "scores"]
    assert (bound.rows, bound.boxes, bound.scores, bound.center_point_box) == (30, "boxes", "scores", 1)
    reference, ours = _session(str(path)), _session(model.SerializeToString())
    rng = np.random.default_rng(0)
    for k in range(DRAWS):
        image = {"image": (rng.standard_normal((1, 3, 32, 32)) * (1 + k % 5)).astype(np.float32)}
        rows, count, _, _ = ours.run(None, image)
        want_rows, want_count = bounded_as(reference.run(None, image)[0], bound)
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(count, want_count)


def _bounded_equals_onnxruntime(tmp_path, write, seed):
    """The model `write` saves, bounded, gives ONNX Runtime's rows (padded
    as the bound pads them) and count on random 8-box, 2-class draws; returns
    the bound."""
    path = tmp_path / "model.onnx"
    write(path)
    model, _, _, (bound,) = prepare_onnx(path)
    reference, ours = _session(str(path)), _session(model.SerializeToString())
    rng = np.random.default_rng(seed)
    for _ in range(DRAWS):
        feeds = {"boxes": random_boxes(rng, 1, 8, 0), "scores": random_scores(rng, 1, 2, 8)}
        rows, count = ours.run(None, feeds)
        want_rows, want_count = bounded_as(reference.run(None, feeds)[0], bound)
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(count, want_count)
    return bound


def test_selected_indices_read_by_a_gather_are_bounded(tmp_path):
    # A YOLO export's form: the box column of the selection, read by a Gather.
    bound = _bounded_equals_onnxruntime(tmp_path, nms_gathered, 2)
    assert (bound.name, bound.count, bound.rows) == ("box_index", "box_index_count", 10)


def test_nms_in_an_if_on_an_empty_input_is_bounded(tmp_path):
    # The If tests a static input with elements: its else branch is always taken.
    bound = _bounded_equals_onnxruntime(tmp_path, nms_in_if, 1)
    assert (bound.name, bound.rows) == ("selected", 10)


def test_a_threshold_computed_at_run_time_is_refused_naming_the_node(tmp_path):
    from onnx import TensorProto, helper

    path = tmp_path / "nms.onnx"
    bare_nms(path)
    model = onnx.load(str(path))
    model.graph.initializer.remove(next(t for t in model.graph.initializer if t.name == "iou"))
    model.graph.input.append(helper.make_tensor_value_info("iou", TensorProto.FLOAT, [1]))
    onnx.save(model, str(path))
    with pytest.raises(UsageError) as e:
        prepare_onnx(path)
    assert str(e.value) == (
        f"{path}: node nms (NonMaxSuppression): its iou_threshold is computed at run time; ireegen needs it constant"
    )


def test_an_unbounded_per_class_count_gets_the_max_detections_hint(tmp_path):
    path = tmp_path / "nms.onnx"
    bare_nms(path, boxes=3000, per_class=2**62)
    with pytest.raises(
        UsageError, match=r"node nms \(NonMaxSuppression\): up to 3,000 boxes per class.*--max-detections"
    ):
        prepare_onnx(path)
    (bound,) = prepare_onnx(path, ImportOptions(max_detections=20))[3]
    assert bound.rows == 20


def test_the_suppression_is_one_loop_whatever_its_steps(tmp_path):
    sizes = {}
    for per_class in (3, 200):
        path = tmp_path / f"nms{per_class}.onnx"
        bare_nms(path, boxes=200, per_class=per_class)
        model = prepare_onnx(path)[0]
        (loop,) = [n for n in model.graph.node if n.op_type == "Loop"]
        assert (
            onnx.numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == loop.input[0])) == per_class
        )
        sizes[per_class] = (len(model.graph.node), len(loop.attribute[0].g.node))
    assert sizes[3] == sizes[200]


def test_suppression_work_over_the_bound_gets_the_max_detections_hint(tmp_path):
    path = tmp_path / "nms.onnx"
    bare_nms(path, classes=16, boxes=80_000, per_class=1000)  # 1,000 steps over 16 x 80,000 boxes
    with pytest.raises(
        UsageError, match=r"1,000 steps over 16 batches x classes of 80,000 boxes .*--max-detections N$"
    ):
        prepare_onnx(path)
    (bound,) = prepare_onnx(path, ImportOptions(max_detections=100))[3]
    assert bound.rows == 100


def test_a_row_selection_too_large_gets_the_max_detections_hint(tmp_path):
    path = tmp_path / "nms.onnx"
    bare_nms(path, classes=80, boxes=200, per_class=100)  # 8,000 rows from 8,000 candidates
    with pytest.raises(UsageError, match=r"8,000 rows from 8,000 candidates .*; give --max-detections N$"):
        prepare_onnx(path)
    (bound,) = prepare_onnx(path, ImportOptions(max_detections=100))[3]
    assert bound.rows == 100


@pytest.mark.parametrize("value", ["0", "99999999", "٣"])
def test_a_bad_max_detections_is_refused_naming_the_flag(tmp_path, value):
    path = tmp_path / "nms.onnx"
    bare_nms(path)
    result = run_cli("emit", path, "-o", tmp_path / "out", f"--max-detections={value}")
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "--max-detections" in result.stderr
    assert not (tmp_path / "out").exists()


def test_max_detections_on_a_model_without_nms_is_refused(tmp_path):
    from onnx import TensorProto, helper

    path = tmp_path / "relu.onnx"
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    result = run_cli("emit", path, "-o", tmp_path / "out", "--max-detections", "5", "--no-verify")
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "--max-detections" in result.stderr
    assert "no NonMaxSuppression" in result.stderr


@pytest.fixture(scope="module")
def yolo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("yolo") / "yolo.onnx"
    yolo_head(path, per_class=2)
    return path


def _emitted_verified(model: Path, out: Path, mode: str, bounded: dict, *flags) -> dict:
    """`ireegen emit` of `model` in `mode` (`--tune off`) verifies against
    ONNX Runtime, whose outputs in `bounded` ({output: {rows, count}}) it
    bounds as ireegen does; returns the manifest's verification."""
    result = run_cli("emit", model, "-o", out, "--execution-model", mode, "--tune", "off", *flags)
    assert result.returncode == 0, result.stderr
    verification = json.loads((out / "manifest.json").read_text())["verification"]
    assert verification["verified"] and verification["references"]["onnxruntime"]["used"]
    assert verification["references"]["onnxruntime"]["bounded"] == bounded
    return verification


# About 20 s of CPU each (two compiles and the runs): the full suite's.
@pytest.mark.full_suite
@pytest.mark.parametrize("mode", ["runtimeless", "async"])
def test_a_tiny_detector_emits_verified_against_onnxruntime(tmp_path, yolo, mode):
    out = tmp_path / mode
    bounded = {"selected": {"rows": 3, "count": "selected_count"}}
    verification = _emitted_verified(yolo, out, mode, bounded, "--max-detections", "3")
    outputs = verification["functions"]["detector"]["outputs"]
    assert sorted(outputs) == ["boxes", "scores", "selected", "selected_count"]
    assert any("NonMaxSuppression on each run's own boxes and scores" in n for n in verification["notes"])
    header = (out / "yolo.h").read_text()
    assert "// selected: tensor<3x3xi64>" in header and "// selected_count: tensor<1xi64>" in header


# torchvision's SSD post-processing (tests/detector_models.py): NonZero,
# TopK on a data-dependent k, Concat, an If with NonMaxSuppression inside,
# a Slice of what it keeps.
SSD_DRAWS = 60


def _ssd_feeds(rng, k, anchors=16, classes=3):
    scores = rng.random((anchors, classes)) ** (1 + k % 7)  # from none above the threshold to most
    if k % 5 == 0:
        scores = rng.integers(0, 4, (anchors, classes)) / 4  # equal scores
    if k % 6 == 3:
        scores = scores * 0.5  # none above the threshold: ONNX Runtime takes the If's empty branch
    return {"boxes": random_corner_boxes(rng, anchors), "scores": scores.astype(np.float32)}


@pytest.mark.parametrize("limit", [None, 4])
def test_ssd_postprocessing_is_bounded_to_onnxruntime_results(tmp_path, limit):
    path = tmp_path / "ssd.onnx"
    ssd_postprocess(path)
    model, _, _, bounded = prepare_onnx(path, ImportOptions(max_detections=limit))
    rows = 6 if limit is None else limit  # the Slice keeps 6
    assert [(b.name, b.count, b.rows) for b in bounded] == [
        ("det_boxes", "det_boxes_count", rows),
        ("det_scores", "det_scores_count", rows),
        ("det_labels", "det_labels_count", rows),
    ]
    reference, ours = _session(str(path)), _session(model.SerializeToString())
    rng = np.random.default_rng(limit or 0)
    seen = set()
    for k in range(SSD_DRAWS):
        feeds = _ssd_feeds(rng, k)
        got = ours.run(None, feeds)
        for want, (values, count) in zip(reference.run(None, feeds), zip(got[0::2], got[1::2])):
            padded, want_count = bounded_as(want, bounded[0])
            np.testing.assert_array_equal(values, padded)
            np.testing.assert_array_equal(count, want_count)
        seen.add(int(got[1][0]))
    assert {0, rows} <= seen  # the empty If branch's case and a full bound both drawn


def _reductions(path) -> None:
    """Opset 18: x's entries above 0.5 (NonZero, Gather), their top 3 (TopK), and
    reductions of them: ReduceMax with no axes and noop_with_empty_axes (ONNX:
    the identity), ReduceMax with no axes (over all), ReduceMin of the int64
    indices, and a ReduceMin of their shape with noop_with_empty_axes, whose
    value a ConstantOfShape takes."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [
        helper.make_node("Greater", ["x", "half"], ["keep"]),
        helper.make_node("NonZero", ["keep"], ["nz"]),
        helper.make_node("Squeeze", ["nz", "axes0"], ["at"]),
        helper.make_node("Gather", ["x", "at"], ["kept"], axis=0),
        helper.make_node("TopK", ["kept", "three"], ["top", "top_at"], axis=0),
        helper.make_node("ReduceMax", ["kept"], ["same"], noop_with_empty_axes=1),
        helper.make_node("ReduceMax", ["kept"], ["largest"], keepdims=0),
        helper.make_node("ReduceMin", ["at"], ["first"], keepdims=0),
        helper.make_node("Shape", ["kept"], ["shape"]),
        helper.make_node("ReduceMin", ["shape"], ["same_shape"], noop_with_empty_axes=1),
        helper.make_node(
            "ConstantOfShape", ["same_shape"], ["sevens"], value=numpy_helper.from_array(np.array([7], np.int64))
        ),
    ]
    init = [
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.array([0], np.int64), "axes0"),
        numpy_helper.from_array(np.array([3], np.int64), "three"),
    ]
    outputs = [
        helper.make_tensor_value_info("top", TensorProto.FLOAT, ["n"]),
        helper.make_tensor_value_info("same", TensorProto.FLOAT, ["n"]),
        helper.make_tensor_value_info("largest", TensorProto.FLOAT, []),
        helper.make_tensor_value_info("first", TensorProto.INT64, []),
        helper.make_tensor_value_info("sevens", TensorProto.INT64, ["n"]),
    ]
    graph = helper.make_graph(
        nodes, "reductions", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [12])], outputs, init
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_reductions_of_a_bounded_tensor_follow_onnx(tmp_path):
    path = tmp_path / "reductions.onnx"
    _reductions(path)
    model, _, _, bounded = prepare_onnx(path)
    # noop_with_empty_axes: `kept` and its shape as they are
    assert [(b.name, b.rows) for b in bounded] == [("top", 3), ("same", 12), ("sevens", 12)]
    reference, ours = _session(str(path)), _session(model.SerializeToString())
    names = [o.name for o in model.graph.output]
    rng, checked = np.random.default_rng(0), 0
    for k in range(DRAWS):
        x = {"x": (rng.random(12) * (0.8 + k % 4 * 0.2)).astype(np.float32)}
        if (x["x"] > 0.5).sum() < 3:
            continue  # ONNX Runtime's TopK needs 3 entries
        checked += 1
        got = dict(zip(names, ours.run(None, x)))
        want = dict(zip(["top", "same", "largest", "first", "sevens"], reference.run(None, x)))
        for bound in bounded:
            padded, count = bounded_as(want[bound.name], bound)
            np.testing.assert_array_equal(got[bound.name], padded)
            np.testing.assert_array_equal(got[bound.count], count)
        for name in ("largest", "first"):
            np.testing.assert_array_equal(got[name], want[name])
    assert checked > DRAWS // 2


def _refused_ssd(tmp_path, change) -> str:
    path = tmp_path / "ssd.onnx"
    ssd_postprocess(path)
    model = onnx.load(str(path))
    change(model)
    onnx.save(model, str(path))
    with pytest.raises(UsageError) as e:
        prepare_onnx(path)
    assert "\n" not in str(e.value)
    return str(e.value)


def test_an_op_reading_a_bounded_tensor_that_is_not_bounded_is_refused_naming_it(tmp_path):
    def gather_elements(model):
        next(n for n in model.graph.node if n.name == "c1_pick").op_type = "GatherElements"

    message = _refused_ssd(tmp_path, gather_elements)
    assert "node c1_pick (GatherElements): it reads a tensor whose size depends on the data" in message


def test_a_slice_not_from_the_start_of_a_bounded_axis_is_refused(tmp_path):
    def from_one(model):
        model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([1], np.int64), "one_start"))
        node = next(n for n in model.graph.node if n.name == "keep_first")
        node.input[1] = "one_start"

    message = _refused_ssd(tmp_path, from_one)
    assert "node keep_first (Slice): ireegen bounds a slice [0:end] of a bounded axis" in message


def test_an_else_branch_not_empty_with_the_tested_tensor_is_refused(tmp_path):
    def constant_else(model):
        node = next(n for n in model.graph.node if n.op_type == "If")
        branch = next(a.g for a in node.attribute if a.name == "else_branch")
        del branch.node[:]
        branch.node.append(
            onnx.helper.make_node(
                "Constant", [], ["kept"], value=onnx.numpy_helper.from_array(np.zeros(3, np.int64)), name="three"
            )
        )

    message = _refused_ssd(tmp_path, constant_else)
    assert "the If on whether 'all_boxes' is empty" in message


@pytest.fixture(scope="module")
def ssd(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ssd") / "ssd.onnx"
    ssd_postprocess(path)
    return path


# Each a compile and the runs: the full suite's.
@pytest.mark.full_suite
@pytest.mark.parametrize("mode", ["runtimeless", "async"])
def test_ssd_postprocessing_emits_verified_against_onnxruntime(tmp_path, ssd, mode):
    out = tmp_path / mode
    bounded = {f"det_{n}": {"rows": 6, "count": f"det_{n}_count"} for n in ("boxes", "scores", "labels")}
    _emitted_verified(ssd, out, mode, bounded)
    header = (out / "ssd.h").read_text()
    assert "// det_boxes: tensor<6x4xf32>" in header and "// det_labels_count: tensor<1xi64>" in header


@pytest.fixture(scope="module")
def torchvision_ssd_model(tmp_path_factory) -> Path:
    pytest.importorskip("torchvision")
    from detector_models import torchvision_ssd

    path = tmp_path_factory.mktemp("tv_ssd") / "tv_ssd.onnx"
    torchvision_ssd(path)
    return path


# Importing torch and exporting take most of its half minute here: the full suite's.
@pytest.mark.full_suite
def test_a_torchvision_ssd_export_is_bounded_to_onnxruntime_results(torchvision_ssd_model):
    model, _, _, bounded = prepare_onnx(torchvision_ssd_model)
    assert [(b.name, b.rows) for b in bounded] == [("boxes", 8), ("scores", 8), ("labels", 8)]
    reference, ours = _session(str(torchvision_ssd_model)), _session(model.SerializeToString())
    rng = np.random.default_rng(0)
    for k in range(DRAWS // 4):
        image = {"image": (rng.random((1, 3, 64, 64)) * (k % 4)).astype(np.float32)}  # k % 4 == 0: equal scores
        got = ours.run(None, image)
        for bound, want, values, count in zip(bounded, reference.run(None, image), got[0::2], got[1::2]):
            padded, want_count = bounded_as(want, bound)
            np.testing.assert_array_equal(count, want_count)
            if bound.name == "labels":
                np.testing.assert_array_equal(values, padded)
            else:  # the backbone's rewrites round differently in ONNX Runtime
                np.testing.assert_allclose(values, padded, rtol=1e-5, atol=1e-5)


# The export, a compile and the runs: the full suite's.
@pytest.mark.full_suite
@pytest.mark.parametrize("mode", ["runtimeless", "async"])
def test_a_torchvision_ssd_export_emits_verified_against_onnxruntime(tmp_path, torchvision_ssd_model, mode):
    bounded = {n: {"rows": 8, "count": f"{n}_count"} for n in ("boxes", "scores", "labels")}
    _emitted_verified(torchvision_ssd_model, tmp_path / mode, mode, bounded)


def test_a_yolo_export_with_nms_is_bounded_to_onnxruntime_results(tmp_path):
    # Ultralytics' export(nms=True): NonZero, class-offset boxes by an Expand to the count, the box
    # column of the selection, and a Pad to max_det by amounts computed from the count: a static output.
    path = tmp_path / "yolo_tail.onnx"
    yolo_export_tail(path)
    model, _, _, bounded = prepare_onnx(path)
    assert bounded == () and [
        (o.name, [d.dim_value for d in o.type.tensor_type.shape.dim]) for o in model.graph.output
    ] == [("output0", [1, 5, 6])]
    reference, ours = _session(str(path)), _session(model.SerializeToString())
    rng = np.random.default_rng(0)
    counts = set()
    for k in range(DRAWS):
        feeds = yolo_preds(rng, k)
        want = reference.run(None, feeds)[0]
        np.testing.assert_array_equal(ours.run(None, feeds)[0], want)
        counts.add(int((np.abs(want[0]).sum(axis=1) > 0).sum()))
    assert {0, 5} < counts  # nothing above the threshold, a full max_det, and some between


def test_max_detections_under_a_fixed_size_output_is_refused_naming_the_flag(tmp_path):
    # The export pads its selection to max_det rows (5 here): a smaller --max-detections would leave
    # zeros where the model has detections, so it is refused before compiling; max_det itself is not.
    path = tmp_path / "yolo_tail.onnx"
    yolo_export_tail(path)
    with pytest.raises(UsageError, match=r"--max-detections 2 keeps fewer detections than node .*\(Pad\)"):
        prepare_onnx(path, ImportOptions(max_detections=2))
    result = run_cli("emit", path, "-o", tmp_path / "out", "--max-detections", "2")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "out").exists()
    model, _, _, _ = prepare_onnx(path, ImportOptions(max_detections=5))
    assert [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim] == [1, 5, 6]


# A NonZero's indices come from a scatter, linear in its elements: YOLOv8 at 640 masks 8,400
# anchors, SSDlite 3,234 per class, small heads a few dozen.
@pytest.mark.parametrize("size", [9000, 3234, 37, 1])
def test_a_nonzero_is_bounded_by_a_scatter_in_onnx_order(tmp_path, size):
    from onnx import TensorProto, helper

    path = tmp_path / "nonzero.onnx"
    graph = helper.make_graph(
        [
            helper.make_node("Greater", ["x", "t"], ["mask"]),
            helper.make_node("NonZero", ["mask"], ["where_t"]),
            helper.make_node("Transpose", ["where_t"], ["where"], perm=[1, 0]),
            helper.make_node("TopK", ["x", "k"], ["best", "best_index"]),  # NonZero is bounded beside a TopK
        ],
        "nonzero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [size])],
        [
            helper.make_tensor_value_info("where", TensorProto.INT64, ["n", 1]),
            helper.make_tensor_value_info("best", TensorProto.FLOAT, [min(2, size)]),
        ],
        [
            onnx.numpy_helper.from_array(np.array(0.9, np.float32), "t"),
            onnx.numpy_helper.from_array(np.array([min(2, size)], np.int64), "k"),
        ],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    model, _, _, (bound,) = prepare_onnx(path)
    assert (bound.name, bound.rows) == ("where", size) and "ScatterElements" in {n.op_type for n in model.graph.node}
    reference, ours = _session(str(path)), _session(model.SerializeToString())
    rng = np.random.default_rng(0)
    for scale in (0.0, 0.5, 0.95, 1.0, 2.0):  # from no element above 0.9 to every one
        feeds = {"x": (rng.random(size) * scale + (scale == 2.0)).astype(np.float32)}
        where, count = ours.run(None, feeds)[:2]
        want = reference.run(None, feeds)[0]
        np.testing.assert_array_equal(count, [len(want)])
        np.testing.assert_array_equal(where[: len(want)], want)
        assert not where[len(want) :].any()


# Two compiles and the runs per mode: the full suite's.
@pytest.mark.full_suite
@pytest.mark.parametrize("mode", ["runtimeless", "async"])
def test_a_yolo_export_tail_emits_verified_against_onnxruntime(tmp_path, mode):
    path = tmp_path / "yolo_tail.onnx"
    yolo_export_tail(path)
    out = tmp_path / mode
    result = run_cli("emit", path, "-o", out, "--execution-model", mode, "--tune", "off")
    assert result.returncode == 0, result.stderr
    verification = json.loads((out / "manifest.json").read_text())["verification"]
    assert verification["verified"] and verification["references"]["onnxruntime"]["used"]
    assert "bounded" not in verification["references"]["onnxruntime"]  # output0 is static as exported
    outputs = next(iter(verification["functions"].values()))["outputs"]
    assert outputs["output0"]["onnxruntime"]["max_abs_error"] <= 1e-5
    assert "not_exercised" not in verification


def test_a_refusal_both_runtimes_share_names_the_rank_selections_of_the_model(tmp_path):
    """Where IREE's defaults and the subject both disagree with ONNX Runtime,
    a model that selects by comparing computed values (here a
    NonMaxSuppression inside an If) is refused with that cause and the
    --verify-inputs hint; one that selects nothing keeps the IREE clause."""
    detector = tmp_path / "if.onnx"
    nms_in_if(detector)
    clause = _both_disagree(str(detector))
    assert "NonMaxSuppression x1" in clause and "--verify-inputs" in clause, clause
    plain = tmp_path / "plain.onnx"
    h, f32 = onnx.helper, onnx.TensorProto.FLOAT
    graph = h.make_graph(
        [h.make_node("Relu", ["x"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", f32, [2])],
        [h.make_tensor_value_info("y", f32, [2])],
    )
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), plain)
    assert _both_disagree(str(plain)).endswith("so IREE itself computes this model differently")


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("largest", [1, 0])
def test_a_topk_by_ranks_equals_onnxruntime_topk_with_ties_and_infinities(tmp_path, axis, largest):
    """The bounded TopK's ranked form (onnx_bounded.ranked_topk) against
    ONNX Runtime's TopK: values and indices, ties in index order, +-inf."""
    h, f32, i64 = onnx.helper, onnx.TensorProto.FLOAT, onnx.TensorProto.INT64
    shape, k = (5, 7, 6), 4
    out_shape = [k if d == axis else s for d, s in enumerate(shape)]
    graph = h.make_graph(
        [],
        "g",
        [h.make_tensor_value_info("x", f32, list(shape))],
        [h.make_tensor_value_info(n, t, out_shape) for n, t in (("values", f32), ("indices", i64))],
    )
    nodes = []
    ranked_topk(NodeBuilder(graph, nodes, "topk"), "x", shape, axis, k, largest, "values", "indices")
    graph.node.extend(nodes)
    ranked = tmp_path / "ranked.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), ranked)
    plain = h.make_graph(
        [
            h.make_node("Constant", [], ["k"], value=onnx.numpy_helper.from_array(np.array([k], np.int64))),
            h.make_node("TopK", ["x", "k"], ["values", "indices"], axis=axis, largest=largest),
        ],
        "g",
        list(graph.input),
        list(graph.output),
    )
    reference = tmp_path / "topk.onnx"
    onnx.save(h.make_model(plain, opset_imports=[h.make_opsetid("", 17)]), reference)
    rng = np.random.default_rng(axis * 2 + largest)
    for _ in range(20):
        x = rng.integers(-3, 4, shape).astype(np.float32)  # many ties
        x[rng.random(shape) < 0.1] = np.inf
        x[rng.random(shape) < 0.1] = -np.inf
        got = ort.InferenceSession(str(ranked)).run(None, {"x": x})
        want = ort.InferenceSession(str(reference)).run(None, {"x": x})
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
