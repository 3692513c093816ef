"""`--quantized-io`: a QDQ model's int8 interface, as TFLite Micro's models have.

onnxruntime's `quantize_static` writes a model that takes and returns float:
its first op quantizes the input (QuantizeLinear) and its last dequantizes
the output (DequantizeLinear).  Cut there, the caller passes and gets the
int8 (or uint8) tensors, quantizes and dequantizes them itself with the
scale and zero point the header states, and the model needs no room for
the float tensors.

- A float graph input is cut when every path from it through layout ops
  (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Identity: they move
  elements without changing them, so they commute with quantization) ends
  in a QuantizeLinear with a constant per-tensor scale and zero point, the
  same for all of them: the input becomes that type, each QuantizeLinear
  an Identity.
- A float graph output is cut when it is a DequantizeLinear's output with a
  constant per-tensor scale and zero point (or that, through layout ops
  nothing else reads): the DequantizeLinear becomes an Identity and the
  output is its int8 input.
- A float input or output that cannot be cut that way is refused in one
  line that names it: the flag promises an int8 interface, and a float
  tensor left in it would be a surprise.  Inputs and outputs of other types
  (indices, sizes) are left as they are.

`dequantized_outputs` also finds, without cutting, the float outputs that a
DequantizeLinear produces: emit's verification compares them within one
quantization step (docs/kernels-int8.md).
"""

from __future__ import annotations

import functools

from ireegen.common.errors import UsageError

from .containment import shown
from .signature import Quantization

# Ops that move elements without changing them: quantizing before or after
# is the same.  (op type -> index of the data input)
LAYOUT_OPS = {"Reshape": 0, "Flatten": 0, "Squeeze": 0, "Unsqueeze": 0, "Transpose": 0, "Identity": 0}
# ONNX element types of a quantized interface tensor -> numpy dtype
QUANTIZED_TYPES = {3: "int8", 2: "uint8"}
_FLOAT_TYPES = (1, 10, 11, 16)  # float, float16, double, bfloat16


def _constants(model) -> dict:
    """{name: numpy array} of the initializers and Constant nodes' values
    that a QuantizeLinear or DequantizeLinear takes as its scale or zero
    point (only those: a model's weights are not copied)."""
    from onnx import numpy_helper

    wanted = {
        name for n in model.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear") for name in n.input[1:3]
    }
    out = {t.name: t for t in model.graph.initializer if t.name in wanted}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output and node.output[0] in wanted:
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:
                out[node.output[0]] = value
    return {k: numpy_helper.to_array(t) for k, t in out.items()}


def _per_tensor(node, constants: dict, types=None) -> Quantization | None:
    """The per-tensor int8 or uint8 quantization of a QuantizeLinear or
    DequantizeLinear whose scale and zero point are constants; None
    otherwise.  `types()` ({value: ONNX element type}) gives a
    DequantizeLinear's input type when it has no zero point."""
    import numpy as np

    if len(node.input) < 2 or node.input[1] not in constants:
        return None
    if any(a.name == "block_size" and a.i for a in node.attribute):
        return None
    scale = np.asarray(constants[node.input[1]])
    if scale.size != 1 or scale.dtype != np.float32 or not np.isfinite(scale).all() or float(scale.ravel()[0]) <= 0:
        return None
    if len(node.input) > 2 and node.input[2]:
        zero = constants.get(node.input[2])
        if zero is None or np.asarray(zero).size != 1:
            return None
        zero = np.asarray(zero)
        dtype = str(zero.dtype)
    else:
        zero = np.zeros((), np.uint8)
        if node.op_type == "DequantizeLinear":
            dtype = QUANTIZED_TYPES.get(types().get(node.input[0]) if types else None, "")
        else:
            to = next((a.i for a in node.attribute if a.name == "output_dtype"), 0)
            dtype = QUANTIZED_TYPES.get(to, "uint8" if not to else "")
    if dtype not in QUANTIZED_TYPES.values():
        return None
    return Quantization(float(scale.ravel()[0]), int(zero.ravel()[0]), dtype)


def _consumers(model) -> dict:
    """{value name: [nodes that read it]}, subgraphs' reads of outer values
    counted as their parent node's."""
    out: dict = {}

    def reads(graph):
        names = set()
        for n in graph.node:
            names.update(n.input)
            for a in n.attribute:
                for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    names |= reads(g)
        return names

    for node in model.graph.node:
        names = set(node.input)
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                names |= reads(g)
        for name in names:
            if name:
                out.setdefault(name, []).append(node)
    return out


def _elem_type(value_info) -> int | None:
    t = value_info.type
    return t.tensor_type.elem_type if t.HasField("tensor_type") else None


def _input_cut(model, name: str, consumers: dict, constants: dict, outputs: set):
    """(quantization, the QuantizeLinear nodes, the layout ops' outputs between) of
    input `name`, or a string saying why it cannot be cut."""
    quants, layout, found = [], [], []
    todo, seen = [name], set()
    while todo:
        value = todo.pop()
        if value in seen:
            return f"goes through a cycle at {shown(value)}"
        seen.add(value)
        if value in outputs:
            return f"is also a graph output{'' if value == name else f' (through {shown(value)})'}"
        readers = consumers.get(value, [])
        if not readers:
            return "is read by no QuantizeLinear" if value == name else f"reaches {shown(value)}, which nothing reads"
        for node in readers:
            if node.op_type == "QuantizeLinear" and list(node.input).count(value) == 1 and node.input[0] == value:
                q = _per_tensor(node, constants)
                if q is None:
                    return f"is quantized by {_node(node)} with a scale or zero point that is not a constant per-tensor int8 or uint8 one"
                quants.append(node)
                found.append(q)
            elif node.op_type in LAYOUT_OPS and list(node.input).count(value) == 1 and node.input[0] == value:
                layout.extend(node.output)
                todo.extend(node.output)
            else:
                return f"is read by {_node(node)}, not only by QuantizeLinear (through layout ops)"
    if any(q != found[0] for q in found):
        return "is quantized with different scales or zero points"
    return found[0], quants, layout


def _output_cut(name: str, producers: dict, constants: dict, types):
    """(quantization, the DequantizeLinear node, the values from `name` back to
    its output) of output `name`, or a string saying why it is not one."""
    value, chain = name, []
    while value not in chain:  # a malformed graph may loop
        chain.append(value)
        node = producers.get(value)
        if node is None:
            return "is not computed by a DequantizeLinear"
        if node.op_type == "DequantizeLinear":
            q = _per_tensor(node, constants, types)
            if q is None:
                return f"is dequantized by {_node(node)} with a scale or zero point that is not a constant per-tensor int8 or uint8 one"
            return q, node, chain
        if node.op_type not in LAYOUT_OPS or not node.input:
            return f"is computed by {_node(node)}, not by a DequantizeLinear"
        value = node.input[LAYOUT_OPS[node.op_type]]
    return f"goes through a cycle at {shown(value)}"


def _shared(chain: list, consumers: dict) -> str | None:
    """Why a cut output's values cannot become int8: another node reads one."""
    for i, value in enumerate(chain):
        readers = consumers.get(value, [])
        if len(readers) > (1 if i else 0):
            return (
                "is read by other nodes too" if i == 0 else f"goes through {shown(value)}, which other nodes read too"
            )
    return None


def _node(node) -> str:
    return f"node {shown(node.name)} ({node.op_type})" if node.name else f"an unnamed {node.op_type} node"


def _to_identity(node) -> None:
    data = node.input[0]
    del node.input[:]
    node.input.append(data)
    del node.attribute[:]
    node.op_type, node.domain = "Identity", ""


def cut_quantized_io(model, path, effective_inputs) -> dict:
    """Makes every float input and output of `model` (a ModelProto, changed
    in place) its quantized tensor, as the module docstring says; returns
    {name: Quantization} of the values cut.  Refuses (UsageError) a float
    input or output that cannot be cut."""
    constants = _constants(model)
    consumers = _consumers(model)
    producers = {o: n for n in model.graph.node for o in n.output}
    types = functools.cache(lambda: _value_types(model))  # only a DequantizeLinear without zero point needs them
    outputs = {o.name for o in model.graph.output}
    cut, dropped = {}, set()
    for value in effective_inputs:
        if _elem_type(value) not in _FLOAT_TYPES:
            continue
        found = _input_cut(model, value.name, consumers, constants, outputs)
        if isinstance(found, str):
            raise UsageError(f"{path}: --quantized-io: input {shown(value.name)} {found}, so it cannot take int8")
        q, quants, layout = found
        for node in quants:
            _to_identity(node)
        value.type.tensor_type.elem_type = _onnx_type(q.dtype)
        dropped.update(layout)
        cut[value.name] = q
    for value in model.graph.output:
        if _elem_type(value) not in _FLOAT_TYPES:
            continue
        found = _output_cut(value.name, producers, constants, types)
        if not isinstance(found, str):
            found = _shared(found[2], consumers) or found
        if isinstance(found, str):
            raise UsageError(f"{path}: --quantized-io: output {shown(value.name)} {found}, so it cannot give int8")
        q, node, layout = found
        _to_identity(node)
        value.type.tensor_type.elem_type = _onnx_type(q.dtype)
        dropped.update(layout)
        cut[value.name] = q
    # The float types inferred for values between a cut and its layout ops
    # are int8 now: shape inference fills them in again.
    kept = [v for v in model.graph.value_info if v.name not in dropped]
    del model.graph.value_info[:]
    model.graph.value_info.extend(kept)
    return cut


def _value_types(model) -> dict:
    """{value name: ONNX element type} as shape inference sees them."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # noqa: BLE001 - too large or invalid: the import says so later
        inferred = model
    values = list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)
    out = {v.name: _elem_type(v) for v in values}
    out.update({t.name: t.data_type for t in model.graph.initializer})
    return out


def _onnx_type(dtype: str) -> int:
    return {v: k for k, v in QUANTIZED_TYPES.items()}[dtype]


def dequantized_outputs(model) -> dict:
    """{output name: Quantization} of the float outputs a DequantizeLinear
    with a constant per-tensor scale computes (through layout ops)."""
    constants = _constants(model)
    producers = {o: n for n in model.graph.node for o in n.output}
    types = functools.cache(lambda: _value_types(model))  # only a DequantizeLinear without zero point needs them
    out = {}
    for value in model.graph.output:
        if _elem_type(value) not in _FLOAT_TYPES:
            continue
        found = _output_cut(value.name, producers, constants, types)
        if not isinstance(found, str):
            out[value.name] = found[0]
    return out
