"""What ireegen does to a model before IREE's importer sees it, as one
value handed from the driver down to the ONNX import (models.load_model,
onnx_import.lower_onnx and prepare_onnx)."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ImportOptions:
    # {ONNX input name: dims} from --input-shape: pins symbolic dimensions.
    input_shapes: dict | None = None
    # {ONNX input name: values} from --input-value: makes inputs constants.
    input_values: dict | None = None
    # The graph rewrites around IREE bugs (onnx_rewrites.py; off with --no-workarounds).
    onnx_rewrites: bool = True
    # The rewrites that trade memory for speed (off for a microcontroller).
    speed_rewrites: bool = True
    # --quantized-io: a QDQ model's float inputs and outputs cut to their int8 tensors (quantized_io.py).
    quantized_io: bool = False
    # --max-detections: the bound of a NonMaxSuppression's output (onnx_detections.py).
    max_detections: int | None = None
    # A .tflite model's int8 convolutions in the form the int8 kernels take (tflite_kernel_form.py).
    tflm_kernels: bool = False

    def as_exported(self) -> ImportOptions:
        """The same interface with none of ireegen's optional changes: what
        IREE's defaults are given as a reference."""
        return replace(self, onnx_rewrites=False, speed_rewrites=False, tflm_kernels=False)


DEFAULT = ImportOptions()
