"""Small helpers of the ONNX graph rewrites (onnx_rewrites.py,
onnx_speed_rewrites.py): a node's attributes, a fresh value name, a new
initializer."""

from __future__ import annotations

import numpy as np


def attrs(node) -> dict:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def fresh(graph, base: str, pending=()) -> str:
    """A value name not used in `graph` or by the `pending` nodes."""
    used = {v for n in (*graph.node, *pending) for v in (*n.input, *n.output)} | {t.name for t in graph.initializer}
    used |= {v.name for v in graph.input}
    k = 0
    while f"{base}{k}" in used:
        k += 1
    return f"{base}{k}"


def const(graph, base: str, array) -> str:
    from onnx import numpy_helper

    name = fresh(graph, base)
    graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
    return name


def known_arrays(graph, values: dict) -> dict:
    """{name: TensorProto}: `values` (the initializers) and the Constant nodes' values."""
    known = dict(values)
    for n in graph.node:
        if n.op_type == "Constant" and len(n.output) == 1 and [a.name for a in n.attribute] == ["value"]:
            known[n.output[0]] = attrs(n)["value"]
    return known
