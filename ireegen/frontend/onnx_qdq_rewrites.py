"""Rewrites of QDQ (quantize_static) graphs that leave the int8 values as
they are and take work out of the compiled program.

onnxruntime's quantizer puts a QuantizeLinear -> DequantizeLinear pair on
every tensor, also around the ops that only move data (Flatten, Reshape,
Transpose...): DequantizeLinear -> Flatten -> QuantizeLinear with the same
scale and zero point.  ONNX Runtime drops such pairs when it fuses the
graph; IREE keeps them, and compiles a dequantize, the move and a quantize
into a dispatch of its own, which calls the C library's roundf, fminf and
fmaxf on a microcontroller.  The rewrite moves the op onto the int8 tensor.

It is exact: with one scale s and zero point z, quantize(dequantize(q)) is
q for every q, since (q - z) * s / s is within 255 * 2^-23 of the integer
q - z, and rounding brings it back.  Same shape as onnx_rewrites.REWRITES.
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import known_arrays, outer_reads

# Ops that move or relabel elements and change none (their first input is
# the data; the rest, where there are any, are shapes or axes).
DATA_MOVEMENT_OPS = ("Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Identity")
QUANTIZED_TYPES = (np.int8, np.uint8)


def _quantization(node, known: dict):
    """(scale, zero point) of a per-tensor Quantize/DequantizeLinear whose
    scale and 8-bit zero point are constants, or None.  The zero point's
    dtype is the quantized tensor's (without one, a DequantizeLinear's input
    could be int32)."""
    from onnx import numpy_helper

    if node.domain not in ("", "ai.onnx") or len(node.input) < 2 or len(node.output) != 1:
        return None
    if any(a.name not in ("axis",) for a in node.attribute):  # block_size, output_dtype, saturate
        return None
    if len(node.input) != 3 or not all(n in known for n in node.input[1:]):
        return None
    scale, zero = (numpy_helper.to_array(known[n]) for n in node.input[1:])
    if scale.size != 1 or scale.dtype != np.float32 or zero.size != 1 or zero.dtype.type not in QUANTIZED_TYPES:
        return None
    return scale.reshape(()), zero.reshape(())


def _same(a, b) -> bool:
    (sa, za), (sb, zb) = a, b
    return sa.tobytes() == sb.tobytes() and za.dtype == zb.dtype and za.tobytes() == zb.tobytes()


def _forget_types(graph, changed=()) -> None:
    """Drops the inferred types (value_info) of values no node produces any
    longer and of the `changed` ones; shape inference gives them again."""
    produced = {out for node in graph.node for out in node.output} - set(changed)
    kept = [v for v in graph.value_info if v.name in produced]
    del graph.value_info[:]
    graph.value_info.extend(kept)


def _uses_and_producers(graph) -> tuple:
    """({value: how many node inputs read it, graph outputs and what a
    subgraph reads counting 2 so that they are never taken away}, {value:
    the node producing it})."""
    uses: dict = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
        for name in outer_reads(node):
            uses[name] = uses.get(name, 0) + 2
    for output in graph.output:
        uses[output.name] = uses.get(output.name, 0) + 2
    return uses, {out: node for node in graph.node for out in node.output}


def identical_qdq_around_data_movement(model, shapes: dict, values: dict) -> int:
    """DequantizeLinear -> (Flatten, Reshape, Squeeze, Unsqueeze, Transpose
    or Identity) -> QuantizeLinear, with the same constant per-tensor scale
    and zero point, each value used only by the next node and none a graph
    output: the op is applied to the int8 tensor, and both nodes go."""
    del shapes
    graph = model.graph
    known = known_arrays(graph, values)
    uses, producer = _uses_and_producers(graph)
    dropped, replaced = set(), {}
    for quantize in graph.node:
        if quantize.op_type != "QuantizeLinear" or not quantize.input:
            continue
        move = producer.get(quantize.input[0])
        if move is None or move.op_type not in DATA_MOVEMENT_OPS or move.domain not in ("", "ai.onnx"):
            continue
        dequantize = producer.get(move.input[0]) if move.input else None
        if dequantize is None or dequantize.op_type != "DequantizeLinear" or id(dequantize) in dropped:
            continue
        if uses.get(move.input[0]) != 1 or uses.get(move.output[0]) != 1 or len(move.output) != 1:
            continue
        q, dq = _quantization(quantize, known), _quantization(dequantize, known)
        if q is None or dq is None or not _same(q, dq):
            continue
        dropped.update((id(dequantize), id(quantize)))
        replaced[id(move)] = (dequantize.input[0], quantize.output[0])
    if not replaced:
        return 0
    kept = []
    for node in graph.node:
        if id(node) in dropped:
            continue
        if id(node) in replaced:
            source, result = replaced[id(node)]
            node.input[0] = source
            node.output[0] = result
        kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    _forget_types(graph)
    return len(replaced)


def quantize_before_data_movement(model, shapes: dict, values: dict) -> int:
    """(Flatten, Reshape, Squeeze, Unsqueeze, Transpose or Identity) ->
    QuantizeLinear with a constant per-tensor scale and zero point, the op's
    result used only by the quantize: the quantize first, then the op on the
    int8 tensor.  Exact (the quantize is elementwise), and a quarter of the
    bytes to move; a model's float input reshaped before its quantization
    (the keyword spotting model's [1, 49, 10, 1] to [1, 1, 49, 10]) is then
    quantized where it enters, which the int8 kernels' quantize takes."""
    del shapes
    graph = model.graph
    known = known_arrays(graph, values)
    uses, producer = _uses_and_producers(graph)
    moved = {}  # id(move) -> quantize
    for quantize in graph.node:
        if quantize.op_type != "QuantizeLinear" or not quantize.input or _quantization(quantize, known) is None:
            continue
        move = producer.get(quantize.input[0])
        if move is None or move.op_type not in DATA_MOVEMENT_OPS or move.domain not in ("", "ai.onnx"):
            continue
        if len(move.output) != 1 or uses.get(move.output[0]) != 1 or not move.input:
            continue
        moved[id(move)] = quantize
    if not moved:
        return 0
    kept, taken, changed = [], {id(q) for q in moved.values()}, []
    for node in graph.node:
        if id(node) in taken:
            continue
        quantize = moved.get(id(node))
        if quantize is not None:
            # x -> move -> t -> quantize -> y   becomes   x -> quantize -> t -> move -> y
            x, t, y = node.input[0], node.output[0], quantize.output[0]
            quantize.input[0], quantize.output[0] = x, t
            node.input[0], node.output[0] = t, y
            kept.extend((quantize, node))
            changed.append(t)
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    _forget_types(graph, changed)
    return len(moved)
