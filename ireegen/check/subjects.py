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


def onnxruntime_session(model_path):
    """An ONNX Runtime CPU session of the .onnx model as the reference runs it."""
    ort = require_onnxruntime()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    for key, value in ONNXRUNTIME_CONFIG.items():
        options.add_session_config_entry(key, value)
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


def onnxruntime_outputs(model_path, function: Function, inputs, fixed: dict | None = None) -> list:
    """The reference provider for --reference onnxruntime: runs the .onnx
    model in ONNX Runtime (CPU) on `inputs`, fed and read by ONNX name;
    `fixed` ({name: array}) feeds the inputs --input-value made constants."""
    require_onnxruntime()
    try:
        session = onnxruntime_session(model_path)
        feeds = {v.name: np.asarray(x) for v, x in zip(function.inputs, inputs)}
        feeds.update(fixed or {})
        return session.run([v.name for v in function.outputs], feeds)
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own exception types
        raise RunError(
            f"onnxruntime: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}"
        ) from None


def runner_subject(label: str, runner) -> Subject:
    """A built runtimeless runner (native_run.Runner)."""
    return Subject(label, lambda function, inputs: runner.call(function.name, inputs)[0])
