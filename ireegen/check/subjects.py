"""The things parity and verification run: a compiled VM module in a
child iree-run-module, a built runtimeless runner, or ONNX Runtime."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ireegen.check.runners import RunError, RuntimeTools, run_with_tool
from ireegen.common.errors import UsageError
from ireegen.frontend.onnx_import import install_hint
from ireegen.frontend.signature import Function


@dataclass
class Subject:
    """One thing to run: a mode's compiled module or built runner."""

    label: str
    run: Callable  # (Function, inputs) -> outputs; raises RunError


def module_subject(label: str, vmfb: Path, runtime: RuntimeTools | None, threads: int = 1) -> Subject:
    """A compiled VM module, run by iree-run-module in a child process on the
    device the async glue creates for `threads` workers (runners.device_flags)."""

    def run(function: Function, inputs):
        # The VM checks element types: hand it the module's (int8 for an ONNX
        # uint8 value, same bytes) and give the caller's dtype back.
        inputs = [_as_dtype(x, v.module_dtype) for x, v in zip(inputs, function.inputs)]
        results = run_with_tool(vmfb, function.name, inputs, function.outputs, runtime, threads=threads)
        return [_as_dtype(r, v.dtype) for r, v in zip(results, function.outputs)]

    return Subject(label, run)


def _as_dtype(x, dtype: str):
    """`x` reinterpreted as `dtype` when only the signedness differs."""
    if not isinstance(x, np.ndarray) or dtype == "bfloat16" or x.dtype == np.dtype(dtype):
        return x
    if x.dtype.kind in "iu" and np.dtype(dtype).kind in "iu" and x.dtype.itemsize == np.dtype(dtype).itemsize:
        return x.view(dtype)
    return x


def require_onnxruntime():
    try:
        import onnxruntime
    except ImportError:
        raise UsageError(
            f"--reference onnxruntime needs the onnxruntime package: {install_hint('onnxruntime')}"
        ) from None
    return onnxruntime


# ONNX Runtime's session config for the reference.  On x86-64 its QDQ fusion
# hands MLAS uint8 activations, and the int8 -> uint8 conversion skips a
# QuantizeLinear read by two DequantizeLinear (a residual block's input):
# every Conv and Add next to one then runs in float, whose sum rounds a value
# near a half either way, and a softmax after it turns that one step into
# several.  On ARM it runs its int8 operators there.  Allowing int8 makes it
# run them on every host, so the reference is what the fused QDQ operators
# compute wherever it runs (docs/kernels-int8.md, "Trained PyTorch ResNet-8s").
ONNXRUNTIME_CONFIG = {"session.qdqisint8allowed": "1"}


def onnxruntime_session(model):
    """An ONNX Runtime CPU session of the .onnx model (a path, or its bytes)
    as the reference runs it."""
    ort = require_onnxruntime()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    for key, value in ONNXRUNTIME_CONFIG.items():
        options.add_session_config_entry(key, value)
    return ort.InferenceSession(
        model if isinstance(model, bytes) else str(model), options, providers=["CPUExecutionProvider"]
    )


def onnxruntime_outputs(model_path, function: Function, inputs, fixed: dict | None = None, bounded=()) -> list:
    """The reference provider for --reference onnxruntime: runs the .onnx
    model in ONNX Runtime (CPU) on `inputs`, fed and read by ONNX name;
    `fixed` ({name: array}) feeds the inputs --input-value made constants;
    `bounded` (frontend/onnx_detections.BoundedOutput, onnx_bounded.BoundedTensor) are the outputs
    ireegen bounded: ONNX Runtime's are given the same form (bounded_as)."""
    require_onnxruntime()
    try:
        read = [n for b in bounded if b.selects for n in (b.boxes, b.scores)]
        model = _with_outputs(model_path, read) if read else None
        session = onnxruntime_session(model or model_path)
        feeds = {v.name: np.asarray(x) for v, x in zip(function.inputs, inputs)}
        feeds.update(fixed or {})
        counts = {b.count for b in bounded}
        names = [v.name for v in function.outputs if v.name not in counts]
        results = dict(zip(names, session.run(names, feeds)))
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own exception types
        raise RunError(
            f"onnxruntime: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}"
        ) from None
    for b in bounded:
        results[b.name], results[b.count] = bounded_as(results[b.name], b)
    return [results[v.name] for v in function.outputs]


def _with_outputs(model_path, names) -> bytes:
    """The model at `model_path`, serialized, with the values `names` (the
    boxes and scores a bounded NonMaxSuppression reads) as graph outputs too."""
    import onnx

    model = onnx.load(str(model_path))
    present = {v.name for v in (*model.graph.output, *model.graph.input)}
    for name in dict.fromkeys(names):
        if name not in present:
            model.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    return model.SerializeToString()


def bounded_as(rows, bound) -> tuple:
    """(rows, count) of an output whose size depends on the data, in the
    form ireegen bounds it to (a BoundedOutput): its first `bound.rows`
    rows, then `bound.fill`; the count of rows given as an int64 [1]."""
    rows = np.asarray(rows)
    count = min(rows.shape[0], bound.rows)
    padded = np.full((bound.rows, *rows.shape[1:]), bound.fill, rows.dtype)
    padded[:count] = rows[:count]
    return padded, np.array([count], np.int64)


def onnxruntime_selection(boxes, scores, bound) -> tuple:
    """(rows, count) that ONNX Runtime's NonMaxSuppression selects from
    `boxes` and `scores` with the parameters of `bound` (a BoundedOutput),
    in the bounded form (bounded_as)."""
    require_onnxruntime()
    from onnx import TensorProto, helper

    inputs = ["boxes", "scores", "max_output_boxes_per_class", "iou_threshold"]
    constants = [
        helper.make_tensor("max_output_boxes_per_class", TensorProto.INT64, [1], [bound.per_class]),
        helper.make_tensor("iou_threshold", TensorProto.FLOAT, [1], [bound.iou]),
    ]
    if bound.score is not None:
        inputs.append("score_threshold")
        constants.append(helper.make_tensor("score_threshold", TensorProto.FLOAT, [1], [bound.score]))
    node = helper.make_node("NonMaxSuppression", inputs, ["selected"], center_point_box=bound.center_point_box)
    graph = helper.make_graph(
        [node],
        "selection",
        [
            helper.make_tensor_value_info("boxes", TensorProto.FLOAT, list(np.shape(boxes))),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, list(np.shape(scores))),
        ],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, None)],
        constants,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    session = onnxruntime_session(model.SerializeToString())
    feeds = {"boxes": np.asarray(boxes, np.float32), "scores": np.asarray(scores, np.float32)}
    return bounded_as(session.run(None, feeds)[0], bound)


def runner_subject(label: str, runner) -> Subject:
    """A built runtimeless runner (native_run.Runner)."""
    return Subject(label, lambda function, inputs: runner.call(function.name, inputs)[0])
