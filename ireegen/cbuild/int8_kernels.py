"""ireegen's own int8 kernels (ireegen/kernels/int8/, docs/kernels-int8.md):
on by default for QDQ int8 ONNX models compiled for a Cortex-M.

They go through the `--kernels` mechanism like a user's (kernels.py,
compile/kernel_link.py), with one difference: a model none of whose ops
the spec matches is fine (IREE's own code stays), where a user's spec that
matches nothing is an error.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ireegen.common.resources import package_dir
from ireegen.compile import int8_match, int8_match_ops
from ireegen.compile.kernel_link import KernelLink
from ireegen.config.modes import Config
from ireegen.frontend.conv_geometry import kernel_geometry, model_conv_geometries
from ireegen.frontend.kernel_spec import load_kernel_spec, target_family
from ireegen.frontend.tflite_import import tflite_to_onnx
from ireegen.frontend.tflite_kernel_form import kernel_ops

from .kernels import kernel_link

# The spec per --optimize-for: the same match spec and entry points; for
# speed the DSP kernels at -O2, for size compact plain loops at -Os
# (convolution_small.c, fully_connected_small.c: docs/kernels-int8.md).
SPECS = {"speed": ("kernels", "int8", "kernels.json"), "size": ("kernels", "int8", "kernels.size.json")}
FAMILIES = ("cortex-m", "riscv32")  # target families the kernels are on by default for


def spec_path(optimize_for: str = "speed") -> Path:
    return package_dir().joinpath(*SPECS[optimize_for])


def is_qdq_int8(model_path: Path) -> bool:
    """An ONNX model with a QuantizeLinear or DequantizeLinear to or from int8."""
    if model_path.suffix != ".onnx":
        return False
    import onnx

    try:
        model = onnx.load(str(model_path), load_external_data=False)
    except Exception:  # noqa: BLE001 - not readable here: the import reports it in one line
        return False
    int8 = {i.name for i in model.graph.initializer if i.data_type == onnx.TensorProto.INT8}
    for node in model.graph.node:
        if node.op_type in ("QuantizeLinear", "DequantizeLinear") and len(node.input) > 2 and node.input[2] in int8:
            return True
    return False


def default_kernels(model_path: Path, config: Config) -> KernelLink | None:
    """The int8 kernels when they apply to this model and target, else None:
    for a .tflite source, with TFLite Micro's requantization (tflm_kernels)."""
    if config.target is None or target_family(config.target.triple) not in FAMILIES:
        return None
    if Path(model_path).suffix == ".tflite":
        return tflm_kernels(Path(model_path), config)
    if not is_qdq_int8(Path(model_path)):
        return None
    link = kernel_link(load_kernel_spec(spec_path(config.optimize_for)), require_match=False)
    return with_model_forms(link, Path(model_path))


def tflm_kernels(model_path: Path, config: Config) -> KernelLink | None:
    """The int8 kernels of a .tflite source: the same sources, with a match
    spec of the TFLM forms alone (compile/int8_match.py: tflm_spec), which
    calls the _tflm entry points (requantize_tflm.h); the load then writes
    the model's int8 convolutions and fully connected ops in the form that
    spec matches (frontend/tflite_kernel_form.py).  None for a model with
    none."""
    model = tflite_to_onnx(model_path, tflm_kernels=True)
    if not kernel_ops(model):
        return None
    link = kernel_link(load_kernel_spec(spec_path(config.optimize_for)), require_match=False)
    return dataclasses.replace(link, match_text=int8_match.tflm_spec(model_conv_geometries(model)), tflm=True)


def uses_tflm_kernels(model_path: Path, link: KernelLink | None) -> bool:
    """Whether emit loads `model_path` in the form of the TFLM kernels: a
    .tflite source with tflm_kernels()'s link (not a user's --kernels)."""
    return link is not None and link.tflm and Path(model_path).suffix == ".tflite"


def with_model_forms(link: KernelLink, model_path: Path) -> KernelLink:
    """`link` with a match spec that also has the convolution forms (padding,
    stride) and average pool strides of the model that the committed spec
    lacks: the transform dialect matches them exactly, one matcher per form."""
    geometry = kernel_geometry(model_path)
    extra = int8_match.geometry_forms(geometry.convs)
    strides = sorted(set(geometry.pool_strides) - set(int8_match_ops.POOL_STRIDES))
    if not extra and not strides:
        return link
    return dataclasses.replace(link, match_text=int8_match.spec(int8_match.forms() + extra, strides))
