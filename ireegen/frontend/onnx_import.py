"""ONNX models: from a `.onnx` file to the input-dialect MLIR ireegen reads.

The steps, each refusing bad input with a one-line error that names the
user's file, flag or ONNX node:

1. load the protobuf with its external data (resolved beside the `.onnx`);
2. pin symbolic dimensions from `--input-shape NAME=DIMS`, and make the
   inputs given by `--input-value NAME=V[,V...]` constants;
3. infer shapes, then import into the torch dialect with IREE's importer
   (`iree.compiler.extras.onnx_importer`, in-process);
4. lower to the input dialect with `iree-compile --compile-to=input`;
5. if IREE could not import or lower a model older than MIN_OPSET, upgrade
   it to MIN_OPSET and do 3 and 4 again.  Not before: an upgrade can make
   a model that lowers as it is worse (Upsample-9 with a `scales` input
   becomes a Resize whose output size IREE computes at run time, which
   runtimeless C refuses).

The lowered module carries the ONNX node names as locations (never a file
path), so it is the same wherever the model or a temporary directory is.
Lowering makes integers signless (`ui8` becomes `i8`), so the signature is
read from the ONNX graph instead: `OnnxSignature` gives each input and output
its ONNX name and numpy dtype.
"""

from __future__ import annotations

import math
import re
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.progress import progress
from ireegen.common.untrusted import deadline_message, tool_deadline

from .containment import contained_file, shown
from .import_options import DEFAULT, ImportOptions
from .mlir_text import mlir_escaped
from .onnx_bounded import bound_tensors, needs_bounding
from .onnx_detections import bound_detections
from .onnx_fold import fold_known, if_hint, needs_folding, static_shapes
from .onnx_ml_rewrites import unrewritten_ml_node
from .onnx_nodes import MIN_DEFAULT_OPSET, all_nodes
from .onnx_rewrites import apply_rewrites
from .onnx_rnn_rewrites import malformed_rnn_node, unsupported_rnn_node
from .quantized_io import cut_quantized_io, dequantized_outputs
from .signature import Quantization
from .tflite_import import TFLITE_PACKAGE, TFLM_PACKAGE, interface_quantization, tflite_to_onnx

# Oldest default-domain opset whose ops IREE's ONNX lowering (torch-mlir)
# covers; an older model that IREE cannot take as it is is upgraded to it
# with onnx.version_converter and lowered again.
MIN_OPSET = 17

LOWERING_FLAGS = ("--compile-to=input", "--iree-torch-emit-async-entry-points=false", "--mlir-print-debuginfo")


# The optional dependencies, pinned as pyproject.toml's extras pin them
# (tests/test_messages.py compares the two).
OPTIONAL_PACKAGES = {
    "onnx": "onnx>=1.21",
    "onnxruntime": "onnxruntime>=1.18",
    "tflite": TFLITE_PACKAGE,
    "tflite-micro": TFLM_PACKAGE,
}


def install_hint(extra: str) -> str:
    """How to install an optional dependency: the package itself, which is
    right whether ireegen was installed from a wheel or from a checkout
    (ireegen is on no package index, so `pip install 'ireegen[onnx]'` would
    not find it)."""
    return f"pip install '{OPTIONAL_PACKAGES[extra]}'"


INSTALL_HINT = install_hint("onnx")


class ImportFailure(UsageError):
    """IREE's ONNX importer, or its lowering to the input dialect, could not
    take the model (exit status 2, like every refusal): the model uses what
    IREE 3.13 does not support, or IREE has a bug.  A class of its own so
    that callers (the conformance runner) can tell it from ireegen's refusals."""


# ONNX TensorProto element type -> numpy dtype string (the types the C API knows).
_ONNX_TO_NUMPY = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
    16: "bfloat16",
}

# Bytes per element of each of those types in a tensor's raw_data.
_ITEMSIZE = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2}


@dataclass(frozen=True)
class OnnxValue:
    name: str  # the ONNX graph's name of the input or output
    dtype: str | None  # numpy dtype string; None for a type the C API does not know
    quantization: object = None  # signature.Quantization: a quantized interface tensor, or a DequantizeLinear's output


@dataclass(frozen=True)
class OnnxSignature:
    function: str  # the MLIR function the graph became
    inputs: tuple  # of OnnxValue, graph inputs that are not initializers
    outputs: tuple  # of OnnxValue
    rewrites: tuple = ()  # of {"rewrite": name, "nodes": count}: onnx_rewrites.REWRITES applied
    bounded: tuple = ()  # of onnx_detections.BoundedOutput: outputs whose size depended on the data


def require_onnx():
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise UsageError(f"reading .onnx models needs the onnx package: {INSTALL_HINT}") from None
    return onnx


# A dimension of --input-shape: decimal, ASCII digits, short enough for int().
_DIM_RE = re.compile(r"[0-9]{1,19}", re.ASCII)
# Elements an input given by --input-shape may have: its byte size must fit
# the size_t and the signed index of a 32-bit target.
MAX_INPUT_ELEMENTS = 2**31 - 1


def parse_input_shapes(texts) -> dict:
    """`NAME=1x3x224x224` (repeatable) -> {NAME: (1, 3, 224, 224)}; `NAME=scalar` for rank 0."""
    shapes = {}
    for text in texts or ():
        name, sep, dims = str(text).rpartition("=")
        if not sep or not name:
            raise UsageError(f"--input-shape {text!r}: expected NAME=DIMS, e.g. image=1x1x28x28")
        if dims == "scalar":
            shape = ()
        else:
            parts = dims.split("x")
            # ASCII digits only: str.isdigit() also takes '²' and '١'.
            if not all(_DIM_RE.fullmatch(p) and int(p) > 0 for p in parts):
                raise UsageError(
                    f"--input-shape {text!r}: dimensions must be positive integers (ASCII digits) joined by x, "
                    "e.g. 1x1x28x28"
                )
            shape = tuple(int(p) for p in parts)
            if math.prod(shape) > MAX_INPUT_ELEMENTS:
                raise UsageError(
                    f"--input-shape {text!r}: {math.prod(shape)} elements; an input may have at most "
                    f"{MAX_INPUT_ELEMENTS} (what a 32-bit target and IREE's index type can hold)"
                )
        if name in shapes:
            raise UsageError(f"--input-shape {text!r}: {name} is given twice")
        shapes[name] = shape
    return shapes


_INT_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)
# A decimal number as C and Python write it, in ASCII digits only (Python's
# float() would also take other scripts' digits, "nan" and "1_000").
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
# Characters of one value: an int64 has 19 digits, a double's shortest form 24.
_MAX_VALUE_CHARS = 40


def parse_input_values(texts) -> dict:
    """`NAME=V[,V...]` (repeatable) -> {NAME: (V, ...)}, each V an int or a
    finite float as written (`16000`, `-1`, `0.5`, `1e-3`); the input's
    dtype and shape are checked against the model by `fix_input_values`."""
    values = {}
    for text in texts or ():
        name, sep, items = str(text).partition("=")
        if not sep or not name or not items:
            raise UsageError(f"--input-value {text[:80]!r}: expected NAME=V[,V...], e.g. sr=16000")
        parsed = []
        for item in items.split(","):
            item = item.strip()
            if len(item) > _MAX_VALUE_CHARS:
                raise UsageError(
                    f"--input-value {name[:80]!r}: a value of {len(item):,} characters; "
                    f"at most {_MAX_VALUE_CHARS} (an int64 or a double)"
                )
            if _INT_RE.fullmatch(item):
                parsed.append(int(item))
                continue
            number = float(item) if _FLOAT_RE.fullmatch(item) else None
            if number is None or number in (float("inf"), float("-inf")):
                raise UsageError(f"--input-value {text!r}: {item!r} is not a finite number")
            parsed.append(number)
        if name in values:
            raise UsageError(f"--input-value {text!r}: {name} is given twice")
        values[name] = tuple(parsed)
    return values


def _load(path: Path):
    onnx = require_onnx()
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as e:  # protobuf DecodeError and friends
        raise UsageError(f"{path}: not a readable ONNX model ({type(e).__name__}: {e})") from None
    check_text_fields(model, path)
    external_data_files(model, path)  # refuses what leaves the model's directory
    try:
        onnx.external_data_helper.load_external_data_for_model(model, str(path.parent))
    except Exception as e:
        raise UsageError(f"{path}: cannot read its external data ({type(e).__name__}: {e})") from None
    if not model.graph.output:
        raise UsageError(f"{path}: the ONNX graph has no outputs (an empty or truncated model?)")
    if not model.graph.name or model.graph.name.startswith("__"):
        model.graph.name = "main"
    unknown_negative_dims(model)
    return model


def check_text_fields(message, path: Path, where: str = "model") -> None:
    """Refuses, in one line naming the field, a model whose string fields
    (graph, node, tensor and attribute names, op types, domains ...) are not
    UTF-8: protobuf hands such a field over as bytes, which no later step
    expects.  Every string field of every nested message is checked."""
    stack = [(message, where)]
    while stack:
        msg, at = stack.pop()
        for field, value in msg.ListFields():
            if field.type not in (field.TYPE_STRING, field.TYPE_MESSAGE):
                continue
            # One value, or a repeated field's values.
            items = (value,) if isinstance(value, (str, bytes)) or hasattr(value, "ListFields") else tuple(value)
            if field.type == field.TYPE_STRING:
                if any(not isinstance(v, str) for v in items):
                    raise UsageError(f"{path}: {at}.{field.name} is not UTF-8 text; ONNX strings are UTF-8")
            elif field.type == field.TYPE_MESSAGE:
                stack.extend((item, f"{at}.{field.name}") for item in items if hasattr(item, "ListFields"))


def unknown_negative_dims(model) -> None:
    """Makes every negative `dim_value` an unknown dimension: PaddlePaddle's
    exporter writes an unknown size as `dim_value: -1`, which ONNX Runtime
    reads as unknown too (a size is never negative)."""
    values = list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info)
    for v in values:
        if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape"):
            for d in v.type.tensor_type.shape.dim:
                if d.HasField("dim_value") and d.dim_value < 0:
                    d.Clear()


def external_data_files(model, path: Path) -> list:
    """The files beside `path` that hold tensors of `model` (ONNX external
    data), each checked by containment.contained_file: relative, inside the
    model's directory after resolving symlinks, a regular file."""
    from onnx.external_data_helper import _get_all_tensors, uses_external_data

    files = []
    for t in _get_all_tensors(model):
        if uses_external_data(t):
            location = next((e.value for e in t.external_data if e.key == "location"), None)
            if location is None:
                raise UsageError(f"{path}: tensor {shown(t.name)} uses external data but names no location")
            f = contained_file(path, location)
            if f not in files:
                files.append(f)
    return files


def check_input_shapes(path, shapes: dict, values: dict | None = None) -> None:
    """Refuses --input-shape and --input-value arguments that do not fit the
    ONNX model at `path` (cheap: reads the graph, not the weights).  For
    configure time."""
    if not shapes and not values:
        return
    path = Path(path)
    model = _load_graph(path)
    inputs = [i.name for i in _effective_inputs(model)]
    for name in shapes:
        if name not in inputs:
            raise UsageError(f"--input-shape {name}: {path} has no input {name!r} (inputs: {', '.join(inputs)})")
    _pin_shapes(model, dict(shapes), path)
    fix_input_values(model, dict(values or {}), path)


def model_dependencies(path) -> list:
    """Files whose change changes the model: the .onnx and its external data
    (for CMake's DEPENDS).  Refuses a missing onnx package, so that CMake
    says so at configure time."""
    path = Path(path)
    return [path] + external_data_files(_load_graph(path), path)


def _load_graph(path: Path):
    """The model at `path` without its external weights (cheap)."""
    onnx = require_onnx()
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as e:
        raise UsageError(f"{path}: not a readable ONNX model ({type(e).__name__}: {e})") from None
    unknown_negative_dims(model)
    return model


def _effective_inputs(model) -> list:
    initializers = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initializers]


def _pin_shapes(model, shapes: dict, path: Path) -> None:
    inputs = {i.name: i for i in _effective_inputs(model)}
    for name, shape in shapes.items():
        if name not in inputs:
            raise UsageError(f"--input-shape {name}: {path} has no input {name!r} (inputs: {', '.join(inputs)})")
        tensor = inputs[name].type.tensor_type
        dims = tensor.shape.dim
        if tensor.HasField("shape") and len(dims) != len(shape):
            raise UsageError(f"--input-shape {name}: {path} declares {name} with rank {len(dims)}, not {len(shape)}")
        if tensor.HasField("shape"):
            for i, (d, want) in enumerate(zip(dims, shape)):
                if d.HasField("dim_value") and d.dim_value != want:
                    raise UsageError(
                        f"--input-shape {name}: dimension {i} of {name} is fixed at {d.dim_value} in {path}, not {want}"
                    )
        tensor.ClearField("shape")
        tensor.shape.SetInParent()  # rank 0 stays a shape with no dims, not "unknown"
        for want in shape:
            tensor.shape.dim.add().dim_value = want
    if shapes:
        # Shapes inferred for the old symbolic sizes would contradict the pinned ones.
        del model.graph.value_info[:]
        # Symbolic output dims become unknown, for shape inference to fill in.
        for out in model.graph.output:
            for d in out.type.tensor_type.shape.dim:
                if not d.HasField("dim_value"):
                    d.Clear()


def fix_input_values(model, values: dict, path: Path) -> dict:
    """Makes each input named in `values` ({name: (V, ...)}, from
    `--input-value`) a constant: the graph input becomes an initializer of its
    declared element type and (pinned) shape, so it leaves the C API and
    what depends on it (an `If` on a sample rate) folds at compile time.
    Returns {name: the numpy array it became}."""
    import numpy as np
    from onnx import numpy_helper

    inputs = {i.name: i for i in _effective_inputs(model)}
    arrays = {}
    for name, items in values.items():
        if name not in inputs:
            raise UsageError(f"--input-value {name}: {path} has no input {name!r} (inputs: {', '.join(inputs)})")
        tensor = inputs[name].type.tensor_type
        dtype = _ONNX_TO_NUMPY.get(tensor.elem_type) if inputs[name].type.HasField("tensor_type") else None
        if dtype is None or dtype == "bfloat16":
            raise UsageError(f"--input-value {name}: {name} is not a tensor of a numeric type --input-value can give")
        if not tensor.HasField("shape"):
            raise UsageError(f"--input-value {name}: {name} has no declared shape; give it with --input-shape too")
        shape = []
        for i, d in enumerate(tensor.shape.dim):
            if not d.HasField("dim_value"):
                raise UsageError(
                    f"--input-value {name}: dimension {i} of {name} is unknown; pin it with --input-shape too"
                )
            shape.append(d.dim_value)
        count = int(np.prod(shape, dtype=np.int64))
        if len(items) != count:
            dims = "x".join(map(str, shape)) or "scalar"
            raise UsageError(f"--input-value {name}: {name} is {dtype} [{dims}], {count} values; got {len(items)}")
        array = _typed_values(name, items, np.dtype(dtype)).reshape(shape)
        model.graph.initializer.append(numpy_helper.from_array(array, name))
        model.graph.input.remove(inputs[name])
        arrays[name] = array
    return arrays


def input_value_arrays(path, shapes: dict | None, values: dict | None) -> dict:
    """{name: numpy array} of the inputs `--input-value` fixes in the ONNX
    model at `path` (to feed ONNX Runtime, which runs the model as shipped)."""
    if not values:
        return {}
    path = Path(path)
    model = _load_graph(path)
    _pin_shapes(model, dict(shapes or {}), path)
    return fix_input_values(model, dict(values), path)


def _typed_values(name: str, items: tuple, dtype):
    """`items` as an array of `dtype`; refuses a value the type cannot hold
    exactly (a fraction for an integer, 300 for uint8, 2 for bool)."""
    import numpy as np

    if dtype.kind == "f":
        array = np.array(items, dtype=dtype)
        if not np.all(np.isfinite(array)):
            raise UsageError(f"--input-value {name}: a value overflows {dtype}")
        return array
    limits = (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    for v in items:
        if not isinstance(v, int) or not limits[0] <= v <= limits[1]:
            kind = "0 or 1" if dtype.kind == "b" else f"integers from {limits[0]} to {limits[1]}"
            raise UsageError(f"--input-value {name}: {v!r} is not a {dtype} value ({kind})")
    return np.array(items, dtype=dtype)


def _opset(model) -> int | None:
    """The model's default-domain opset."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def _upgrade_opset(model, failure: ImportFailure):
    """`model` at MIN_OPSET, after IREE failed to take it as it is
    (`failure`, re-raised if the upgrade fails)."""
    onnx = require_onnx()
    try:
        upgraded = onnx.version_converter.convert_version(model, MIN_OPSET)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ImportFailure(f"{failure}; upgrading the model to opset {MIN_OPSET} failed too: {first[:200]}") from None
    # The converter may change the interface (Scan 8 -> 9 drops the batch
    # dimension of every input and output): the C API would not be the model's.
    before, after = _interface(model), _interface(upgraded)
    if len(before) != len(after) or not all(_same_value(a, b) for a, b in zip(before, after)):

        def text(v):
            shape = "unknown shape" if v[2] is None else "[" + ", ".join(str(d) for d in v[2]) + "]"
            return f"{_ONNX_TO_NUMPY.get(v[1], f'type {v[1]}')} {shape}"

        changed = next(
            (
                f"{a[0]}: {text(a)} -> {b[0] + ': ' if b[0] != a[0] else ''}{text(b)}"
                for a, b in zip(before, after)
                if not _same_value(a, b)
            ),
            f"{len(before)} inputs and outputs -> {len(after)}",
        )
        raise ImportFailure(
            f"{failure}; upgrading the model to opset {MIN_OPSET} would change its inputs or outputs ({changed})"
        )
    return upgraded


def _same_value(before: tuple, after: tuple) -> bool:
    """Whether an input or output (`_interface`'s tuple) means the same to a
    caller after the opset upgrade: the same name, element type and rank, and
    each dimension the same where it was known.  An unknown dimension may come
    back under another name (`?` -> `unk__54`) or as the static size the
    pinned inputs imply (`?` -> 320): the converter's shape inference only
    says what the model computes.  A known size that changes, a dimension
    dropped or added, or a shape that becomes unknown is a real change."""
    (name_a, type_a, dims_a), (name_b, type_b, dims_b) = before, after
    if name_a != name_b or type_a != type_b:
        return False
    if dims_a is None:
        return True
    if dims_b is None or len(dims_a) != len(dims_b):
        return False
    return all(not isinstance(a, int) or a == b for a, b in zip(dims_a, dims_b))


def _interface(model) -> list:
    """(name, element type, shape) of each graph input and output."""

    def dims(v):
        t = v.type.tensor_type
        if not v.type.HasField("tensor_type") or not t.HasField("shape"):
            return None
        return tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim)

    return [
        (v.name, v.type.tensor_type.elem_type, dims(v))
        for v in list(_effective_inputs(model)) + list(model.graph.output)
    ]


# What ONNX's own shape inference says of an attribute out of its range (a
# Softmax axis of 9 on a rank-2 input): IREE's import is never given such a
# node (iree-compile spins on some of them).  Other inference errors leave
# the shapes to IREE, as before.
# A long import says how far it got every this many nodes.
_PROGRESS_NODES = 1000
_ATTRIBUTE_ERRORS = re.compile(r"must be in|out of range|[Ii]nvalid (?:axis|value)")


def _infer_shapes(model, path: Path):
    onnx = require_onnx()
    try:
        onnx.checker.check_model(model)
        try:
            return onnx.shape_inference.infer_shapes(model, data_prop=True, strict_mode=True)
        except onnx.shape_inference.InferenceError as e:
            text = " ".join(str(e).split())
            if _ATTRIBUTE_ERRORS.search(text):
                detail = " ".join(text.replace("[ShapeInferenceError]", "").replace("Inference error(s):", "").split())
                raise UsageError(f"{path}: a node's attribute is out of its range: {shown(detail)[:300]}") from None
        return onnx.shape_inference.infer_shapes(model, data_prop=True, strict_mode=False)
    except UsageError:
        raise
    except ValueError:
        # Over the 2 GB protobuf limit: import without inferred shapes.
        return model
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"{path}: not a valid ONNX model: {first}") from None


def _dtype(value_info) -> str | None:
    t = value_info.type
    if not t.HasField("tensor_type"):
        return None
    return _ONNX_TO_NUMPY.get(t.tensor_type.elem_type)


def _import_to_torch(model, path: Path) -> str:
    """The torch-dialect MLIR of `model`, with node names as locations."""
    from iree.compiler import ir
    from iree.compiler.extras import onnx_importer

    imported = [0]  # top-level nodes imported so far: the index of the next one
    total = len(model.graph.node)

    class _NamingImporter(onnx_importer.NodeImporter):
        """Says which node the importer could not take, and gives an unnamed
        node a location of its own (_file_locations makes it its number)."""

        __slots__ = ()

        def import_node(self, node):
            index, imported[0] = imported[0], imported[0] + 1
            if index and index % _PROGRESS_NODES == 0:
                progress("importing", f"{index:,} of {total:,} nodes")
            unnamed = not node.name
            if unnamed:
                node.name = f"{_UNNAMED}{index}"
            try:
                super().import_node(node)
            except (onnx_importer.OnnxImportError, NotImplementedError, KeyError, ValueError) as e:
                if unnamed:
                    node.name = ""
                raise ImportFailure(
                    f"{path}: {_node_text(model, index)}: IREE's ONNX importer cannot take it: "
                    f"{str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}"
                ) from None
            finally:
                if unnamed:
                    node.name = ""

    context = ir.Context()
    info = onnx_importer.ModelInfo(model)
    module = info.create_module(context=context).operation
    try:
        # The importer warns (Python warnings, on stderr) of values without a
        # type; a node it cannot take is refused in one line instead.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            importer = onnx_importer.NodeImporter.define_function(info.main_graph, module)
            importer.__class__ = _NamingImporter
            importer.import_all()
    except UsageError:
        raise
    except Exception as e:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ImportFailure(f"{path}: IREE's ONNX importer cannot take this model: {text}") from None
    return _file_locations(module.get_asm(enable_debug_info=True, large_elements_limit=None), model, path)


_NAME_LOC_RE = re.compile(r'loc\("((?:[^"\\]|\\.)*)"\)')
# The location name an unnamed node imports with, followed by its index;
# _file_locations makes it an empty name at the node's own line.
_UNNAMED = "ireegen.unnamed-node."


def _node_text(model, index: int) -> str:
    """`node 'fc1' (Gemm)`, or `node #3 (Gemm)` for an unnamed node (counted from 1)."""
    node = model.graph.node[index]
    domain = node.domain if node.domain not in ("", "ai.onnx") else ""
    op = f"{domain}.{node.op_type}" if domain else node.op_type
    return f"node {node.name!r} ({op})" if node.name else f"node #{index + 1} ({op})"


def _file_locations(text: str, model, path: Path) -> str:
    """Gives each node-name location a file location inside it,
    `loc("fc1"("model.onnx":<node number>:0))` (an unnamed node's name stays
    empty, with its own number): diagnostics then name the user's file, and
    IREE records a real line in the executables' source locations (from a
    bare name location it records an uninitialised one, which makes outputs
    differ from run to run)."""
    line_of = {}
    for i, node in enumerate(model.graph.node):
        line_of.setdefault(node.name, i + 1)
    file = mlir_escaped(path.name)

    def sub(m):
        name = m.group(1)
        if name.startswith(_UNNAMED) and name[len(_UNNAMED) :].isdigit():
            return f'loc(""("{file}":{int(name[len(_UNNAMED) :]) + 1}:0))'
        return f'loc("{name}"("{file}":{line_of.get(name, 0)}:0))'

    return _NAME_LOC_RE.sub(sub, text)


_ILLEGAL_OP_RE = re.compile(r"failed to legalize operation 'torch\.operator'.*?name = \"onnx\.(?P<op>[\w.]+)\"")
_NODE_RE = re.compile(r'loc\("(?P<node>(?:[^"\\]|\\.)*)"\(')
_LINE_RE = re.compile(r":(?P<line>\d+):0: error: ")


def _failed_node(stderr: str, model) -> int | None:
    """The index of the ONNX node a lowering diagnostic is about: from the
    location printed with the op, or from the node number _file_locations
    put in the line."""
    first_error = next((line for line in stderr.splitlines() if "error: " in line), "")
    m = _NODE_RE.search(first_error)
    if m and m.group("node"):
        name = m.group("node")
        return next((i for i, n in enumerate(model.graph.node) if n.name == name), None)
    m = _LINE_RE.search(first_error)
    if m and 0 < int(m.group("line")) <= len(model.graph.node):
        return int(m.group("line")) - 1
    return None


# One error of ONNX's strict shape inference: the node it names and what it says.
_INFERENCE_ERROR_RE = re.compile(r"\(op_type:(?P<op>[^,]*), node name: (?P<node>[^)]*)\): \[\w+\] (?P<what>[^\n]*)")


def _malformed(model, proto) -> str | None:
    """What ONNX's strict shape inference finds wrong with the node `proto`
    of `model` (inputs of ranks or shapes the op cannot take: an exporter's
    bug, which no runtime can run); None when it finds nothing there."""
    onnx = require_onnx()
    try:
        onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except onnx.shape_inference.InferenceError as e:
        for m in _INFERENCE_ERROR_RE.finditer(str(e)):
            if m.group("node") == proto.name and m.group("op") == proto.op_type:
                return m.group("what").strip()
    except Exception:  # anything else: no finding about this node
        return None
    return None


def _lowering_error(stderr: str, returncode: int, path: Path, model) -> ImportFailure:
    index = _failed_node(stderr, model)
    where = _node_text(model, index) if index is not None else "the model"
    wrong = _malformed(model, model.graph.node[index]) if index is not None and model.graph.node[index].name else None
    if wrong:
        return ImportFailure(
            f"{path}: {where}: the node is malformed, ONNX's shape inference rejects it: {shown(wrong)[:300]}"
        )
    m = _ILLEGAL_OP_RE.search(stderr)
    if m:
        proto = model.graph.node[index] if index is not None else None
        domain = proto.domain if proto is not None and proto.domain not in ("", "ai.onnx") else ""
        opset = next(
            (o.version for o in model.opset_import if o.domain in ((domain,) if domain else ("", "ai.onnx"))), 0
        )
        if index is None:
            where = f"the model ({domain + '.' if domain else ''}{m.group('op')})"
        elif proto.op_type != m.group("op"):  # an op of the node's expansion
            where = f"{where[:-1]}, its {m.group('op')})"
        hint = if_hint(model) if m.group("op") == "If" and not domain else ""
        return ImportFailure(
            f"{path}: {where}: IREE's ONNX lowering does not support this op "
            f"as used here ({domain + ' ' if domain else ''}opset {opset}){hint}"
        )
    if returncode < 0 or "Stack dump" in stderr:
        return ImportFailure(
            f"{path}: iree-compile crashed while lowering this ONNX model (exit status {returncode}); "
            "an IREE bug: simplify the model or report it with the .onnx file"
        )
    first = next((line for line in stderr.splitlines() if "error: " in line), None)
    if first:
        message = first.split("error: ", 1)[1]
        message = re.sub(r"\s*loc\(.*$", "", message)
        return ImportFailure(f"{path}: {where}: IREE's ONNX lowering failed: {message[:300]}")
    first = next((line for line in stderr.splitlines() if line.strip()), f"exit status {returncode}")
    return ImportFailure(f"{path}: IREE's ONNX lowering failed: {first.strip()[:300]}")


def prepare_onnx(
    path: Path,
    options: ImportOptions = DEFAULT,
) -> tuple:
    """Everything ireegen does to the ONNX model at `path` before IREE's
    importer sees it: (model, rewrites, quantization, bounded), every refusal a
    UsageError (or ImportFailure) in one line: lower_onnx's first half.
    `bounded` (onnx_detections.BoundedOutput) are the outputs whose size
    depended on the data, bounded by the model or `options.max_detections`: a
    required transformation, like --input-value (it defines the interface)."""
    if path.suffix == ".tflite":
        # A TFLite model comes in as the ONNX graph of its ops (tflite_import.py),
        # its integer interface tensors as they are.
        model = require_onnx() and tflite_to_onnx(path, options.tflm_kernels)
        quantization = {k: Quantization(*v) for k, v in interface_quantization(path).items()}
    else:
        model = _load(path)
        _check_structure(model, path)
    try:
        if path.suffix != ".tflite":
            _pin_shapes(model, dict(options.input_shapes or {}), path)
            fix_input_values(model, dict(options.input_values or {}), path)
            quantization = cut_quantized_io(model, path, _effective_inputs(model)) if options.quantized_io else {}
            quantization = {**dequantized_outputs(model), **quantization}
        if needs_folding(model, options.input_values, options.input_shapes):
            fold_known(model)
        bounded, bounded_nms = (), False
        if needs_bounding(model):
            bounded, bounded_nms = bound_tensors(model, path, options.max_detections)
        if (options.max_detections is not None and not bounded_nms) or any(
            n.op_type == "NonMaxSuppression" for n in all_nodes(model.graph)
        ):
            bounded += bound_detections(model, path, options.max_detections, static_shapes(model))
        malformed = malformed_rnn_node(model)
        if malformed:
            raise UsageError(f"{path}: {malformed}")
        rewrites = apply_rewrites(model, options.speed_rewrites) if options.onnx_rewrites else []
    except _MALFORMED as e:
        # The rewrites read the graph as ONNX defines it; a model the checks
        # above let through that still breaks them is malformed data.
        raise UsageError(f"{path}: a malformed ONNX model ({type(e).__name__}: {shown(str(e))[:160]})") from None
    left = unrewritten_ml_node(model) if options.onnx_rewrites else None
    if left:
        raise ImportFailure(f"{path}: {left}")
    if (_opset(model) or MIN_DEFAULT_OPSET) >= MIN_DEFAULT_OPSET:  # else refused once upgraded and rewritten
        _refuse_rnn_forms(model, path)
    return model, rewrites, quantization, bounded


# What reading a malformed graph raises in ireegen's own rewrites and numpy.
_MALFORMED = (ValueError, IndexError, KeyError, TypeError, OverflowError)


def _check_structure(model, path: Path) -> None:
    """ONNX's checker (node arity, attribute types, tensor fields) and every
    initializer's data against its dims, before ireegen's rewrites read the
    graph."""
    onnx = require_onnx()
    try:
        onnx.checker.check_model(model)
    except ValueError:
        return  # over protobuf's 2 GB: the checker cannot take it (as _infer_shapes)
    except Exception as e:  # onnx.checker.ValidationError and friends
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"{path}: not a valid ONNX model: {shown(first)[:200]}") from None
    for t in model.graph.initializer:
        if onnx.external_data_helper.uses_external_data(t) or t.data_type not in _ONNX_TO_NUMPY:
            continue
        count = math.prod(t.dims)
        if t.raw_data:
            fits = min(t.dims, default=0) >= 0 and len(t.raw_data) == count * _ITEMSIZE[t.data_type]
        else:  # typed fields: read them (small tensors) to see that they fit
            try:
                fits = onnx.numpy_helper.to_array(t).size == count
            except _MALFORMED:
                fits = False
        if not fits:
            raise UsageError(f"{path}: initializer {shown(t.name)[:80]}: its data does not fit its dims {list(t.dims)}")


def check_onnx(path) -> None:
    """Every check ireegen makes of the ONNX model at `path` before IREE's
    importer sees it (prepare_onnx, then ONNX's checker and strict shape
    inference); a refusal is one line.  tests/test_fuzz.py runs it on
    mutated models in-process."""
    path = Path(path)
    model = prepare_onnx(path)[0]
    _infer_shapes(model, path)


def lower_onnx(
    path: Path,
    compiler,
    options: ImportOptions = DEFAULT,
) -> tuple:
    """(input-dialect MLIR text, OnnxSignature) of the ONNX model at `path`,
    lowered by `compiler` (a compile.compiler.Compiler) after what `options`
    (import_options.ImportOptions) asks: shapes pinned, inputs made
    constants, int8 interface, NonMaxSuppression bounded, the rewrites."""
    path = Path(path)
    model, rewrites, quantization, bounded = prepare_onnx(path, options)
    try:
        return _lower(model, path, compiler, rewrites, quantization, bounded)
    except ImportFailure as e:
        version = _opset(model)
        if version is None or version >= MIN_OPSET:
            raise
        failure = e
    # IREE's lowering covers opset 17 and later: older ops may have no lowering.
    upgraded = _upgrade_opset(model, failure)
    if options.onnx_rewrites:  # a model below opset 13 is rewritten once upgraded
        rewrites = [*rewrites, *apply_rewrites(upgraded, options.speed_rewrites)]
    _refuse_rnn_forms(upgraded, path)
    try:
        return _lower(upgraded, path, compiler, rewrites, quantization, bounded)
    except ImportFailure as e:
        # Say what fails in the model as the user wrote it (the upgrade may add or renumber nodes).
        raise ImportFailure(f"{failure}; also after upgrading the model to opset {MIN_OPSET}") from e


def _refuse_rnn_forms(model, path: Path) -> None:
    """A GRU, LSTM or RNN that IREE's lowering computes wrongly (it does
    not reject it) is refused here, in one line naming the node and the
    attribute."""
    refused = unsupported_rnn_node(model)
    if refused:
        raise ImportFailure(f"{path}: {refused}")


def _lower(model, path: Path, compiler, rewrites=(), quantization=None, bounded=()) -> tuple:
    """Shape inference, IREE's import and the lowering of `model`: (MLIR
    text, OnnxSignature); `quantization` ({name: signature.Quantization})
    goes into the signature."""
    model = _infer_shapes(model, path)
    quantization = quantization or {}
    signature = OnnxSignature(
        model.graph.name,
        tuple(OnnxValue(i.name, _dtype(i), quantization.get(i.name)) for i in _effective_inputs(model)),
        tuple(OnnxValue(o.name, _dtype(o), quantization.get(o.name)) for o in model.graph.output),
        tuple(rewrites),
        tuple(bounded),
    )
    torch_mlir = _import_to_torch(model, path)
    # stdin and stdout: no file name can end up in the lowered module's locations.
    progress("lowering", f"{len(model.graph.node):,} nodes")
    deadline = tool_deadline()
    try:
        proc = subprocess.run(
            [compiler.path, "-", "-o", "-", *LOWERING_FLAGS],
            input=torch_mlir,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=deadline,
        )
    except subprocess.TimeoutExpired:
        raise UsageError(deadline_message(compiler.path, f"{path}: lowering the imported model", deadline)) from None
    if proc.returncode != 0:
        raise _lowering_error(proc.stderr, proc.returncode, path, model)
    return proc.stdout, signature
