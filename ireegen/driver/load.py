"""The load stage: the checked request's model read, its C functions built
and checked for the execution-model family, and what the rest of the
emit needs to know about it (the --verify-inputs, the content key)."""

from __future__ import annotations

from dataclasses import dataclass

from ireegen.cbuild.int8_kernels import uses_tflm_kernels
from ireegen.cgen.c_api import build_functions
from ireegen.check.verify import load_verify_inputs
from ireegen.compile.compile_model import vm_module_name
from ireegen.compile.size_limits import check_tensor_sizes
from ireegen.frontend.import_options import ImportOptions
from ireegen.frontend.models import LoadedModel, load_model
from ireegen.output.reproducible import content_key, source_json

from .backends import backend_for
from .request import EmitRequest


@dataclass(frozen=True)
class Loaded:
    model: LoadedModel
    functions: list  # the C API's functions (cgen/c_api.py)
    module_name: str  # the VM module's name
    verify_inputs: dict  # --verify-inputs: function -> inputs
    source: dict  # the model as the manifest describes it
    key: str  # the content key (output/reproducible.py)

    @property
    def signatures(self) -> list:
        """The model's signature.Functions."""
        return [f.function for f in self.functions]


def key_of(request: EmitRequest, source: dict) -> str:
    """The content key of the checked `request`, whose model `source` describes."""
    kernel_spec = request.kernels.spec.to_json() if request.kernels else None
    return content_key(
        request.model_path,
        request.name,
        request.config,
        request.extra_flags,
        request.compiler,
        request.apply_workarounds,
        request.input_shapes,
        source,
        request.input_values,
        kernel_spec,
        tune=request.tune,
        quantized_io=request.quantized_io,
        max_detections=request.max_detections,
    )


def import_options(request: EmitRequest) -> ImportOptions:
    """What the frontend does to the request's model before IREE sees it."""
    target = request.config.target
    return ImportOptions(
        input_shapes=request.input_shapes,
        input_values=request.input_values,
        onnx_rewrites=request.apply_workarounds,
        # A microcontroller keeps its memory: no rewrite that trades it for speed.
        speed_rewrites=target is None or not target.microcontroller,
        quantized_io=request.quantized_io,
        max_detections=request.max_detections,
        tflm_kernels=uses_tflm_kernels(request.model_path, request.kernels),
    )


def load(request: EmitRequest) -> Loaded:
    """Reads the checked `request`'s model and refuses, before anything is
    compiled, what its configuration cannot take."""
    config, model_path = request.config, request.model_path
    model = load_model(model_path, request.compiler, import_options(request))
    check_tensor_sizes(model.functions, config, str(model_path))
    functions = build_functions(request.name, model.functions, str(model_path))
    module_name = vm_module_name(request.name)
    backend_for(config).check(request, functions, module_name)
    verify_inputs = load_verify_inputs(request.verify, [f.function for f in functions])
    source = source_json(model_path, request.input_shapes, request.input_values)
    return Loaded(model, functions, module_name, verify_inputs, source, key_of(request, source))
