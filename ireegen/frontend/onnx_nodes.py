"""Small helpers for building ONNX nodes in the graph rewrites
(onnx_rewrites.py, onnx_ml_rewrites.py, onnx_speed_rewrites.py): attributes as Python values, fresh
value names, constants as initializers, and a builder that appends nodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

MIN_DEFAULT_OPSET = 13  # the replacements' ops as written here


class Rewrite(NamedTuple):
    """A row of a graph rewrite table: its name (in the manifest's
    `onnx_rewrites`), its roots (the op types of the nodes it replaces, as
    an MLIR pattern names its root op) and its function, (model, shapes,
    values) -> how many nodes it rewrote.  In a graph without a node of its
    roots the function rewrites nothing (tests/test_onnx_rewrite_roots.py
    checks it on every row)."""

    name: str
    roots: tuple
    function: Callable


def node_attrs(node) -> dict:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def known_arrays(graph, values: dict) -> dict:
    """{name: TensorProto}: `values` (the initializers) and the Constant nodes' values."""
    known = dict(values)
    for n in graph.node:
        if n.op_type == "Constant" and len(n.output) == 1 and [a.name for a in n.attribute] == ["value"]:
            known[n.output[0]] = node_attrs(n)["value"]
    return known


def default_opset(model) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), MIN_DEFAULT_OPSET)


def elem_types(model) -> dict:
    """{value name: ONNX element type} from onnx's shape inference and the
    initializers; empty when the inference fails (nothing typed)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - no types: nothing rewrites
        return {}
    values = list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)
    types = {v.name: v.type.tensor_type.elem_type for v in values if v.type.HasField("tensor_type")}
    types.update({t.name: t.data_type for t in model.graph.initializer})
    return types


def subgraphs(node) -> list:
    """The graphs `node` holds as attributes (an If's branches, a Loop's or Scan's body)."""
    return [g for a in node.attribute for g in ([a.g] if a.HasField("g") else list(a.graphs))]


def all_nodes(graph):
    """The nodes of `graph` and of every subgraph in it (If branches, Loop
    and Scan bodies), at any depth, each before its subgraphs' nodes."""
    for node in graph.node:
        yield node
        for sub in subgraphs(node):
            yield from all_nodes(sub)


def outer_reads(node) -> list:
    """The names the subgraphs of `node` read from outside themselves, at
    any depth, in order: a value of the graph holding `node` (a Loop's body
    reading the scores its suppression ranks) is read by `node` as much as
    its inputs are.  Empty for a node without subgraphs."""
    reads = []
    for graph in subgraphs(node):
        inner = {v.name for v in graph.input} | {t.name for t in graph.initializer}
        for n in graph.node:
            reads.extend(v for v in (*n.input, *outer_reads(n)) if v and v not in inner)
            inner.update(n.output)
        reads.extend(v.name for v in graph.output if v.name not in inner)
    return list(dict.fromkeys(reads))


def node_reads(node) -> list:
    """The value names `node` reads: its inputs, then what its subgraphs read
    from outside (outer_reads).  A pass that asks which nodes read a value
    (to drop it, rename it, or move it into another layout) asks this, not
    `node.input`."""
    return [*node.input, *outer_reads(node)] if node.attribute else list(node.input)


def subgraph_names(node) -> set:
    """Every value name used inside the subgraphs of `node`, at any depth:
    names in use for a new value of the graph holding it (ONNX forbids an
    outer name that a subgraph declares again)."""
    names = set()
    for graph in subgraphs(node):
        names.update(v.name for v in (*graph.input, *graph.output))
        names.update(t.name for t in graph.initializer)
        for n in graph.node:
            names.update(n.input)
            names.update(n.output)
            if n.attribute:
                names |= subgraph_names(n)
    return names


def used_names(graph, pending=()) -> set:
    """The value names of `graph` and of the `pending` nodes, their subgraphs' included."""
    used = {t.name for t in graph.initializer} | {v.name for v in graph.input}
    for n in (*graph.node, *pending):
        used.update(n.input)
        used.update(n.output)
        if n.attribute:
            used |= subgraph_names(n)
    return used


def fresh_name(graph, base: str, pending=()) -> str:
    """A value name not used in `graph` or by the `pending` nodes."""
    used = used_names(graph, pending)
    k = 0
    while f"{base}{k}" in used:
        k += 1
    return f"{base}{k}"


def add_const(graph, base: str, array) -> str:
    from onnx import numpy_helper

    name = fresh_name(graph, base)
    graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
    return name


class NodeBuilder:
    """Appends nodes to `out_nodes` under a name prefix: `b.op("Add", x, y)`
    returns the new value's name; `b.const(name, array)` adds an initializer
    (with `share_constants`, each distinct array once).  The graph's names
    are read once; what other hands then append to `out_nodes` or to the
    graph's initializers and inputs is read from the tails that grew, and
    any other change of size (the graph's nodes, a list that shrank) reads
    every name again: a rewrite that adds thousands of nodes stays linear.
    A name is the one `fresh_name` gives.  `prefix` may change between
    nodes (one builder for a walk over the graph).  `nested` gives a builder
    for a subgraph's nodes (a Loop's body) that takes its names and
    constants from this one."""

    def __init__(self, graph, out_nodes: list, prefix: str, share_constants: bool = False):
        self.graph, self.out_nodes, self.prefix = graph, out_nodes, prefix
        self._used, self._sizes, self._next = set(), None, {}
        self._constants = {} if share_constants else None
        self._parent = None

    def nested(self, out_nodes: list) -> NodeBuilder:
        """A builder appending to `out_nodes` (the nodes of a subgraph this
        builder's graph will hold) under this one's prefix: its names are
        reserved here, so no value of the graph or of the subgraph shares
        one, and its constants are this graph's initializers (a subgraph
        reads them from outside, by name)."""
        child = NodeBuilder(self.graph, out_nodes, self.prefix)
        child._parent, child._constants = self, self._constants
        return child

    def _sizes_now(self) -> tuple:
        return len(self.graph.node), len(self.graph.initializer), len(self.graph.input), len(self.out_nodes)

    def _sync(self) -> None:
        if self._parent is not None:  # the names are the parent's
            return
        sizes = self._sizes_now()
        if self._sizes == sizes:
            return
        if self._sizes is None or sizes[0] != self._sizes[0] or any(a < b for a, b in zip(sizes, self._sizes)):
            self._used, self._next = used_names(self.graph, self.out_nodes), {}
        else:  # appended to: the names of the new entries
            _, inits, inputs, pending = self._sizes
            for n in self.out_nodes[pending:]:
                self._used.update(n.input)
                self._used.update(n.output)
                if n.attribute:
                    self._used |= subgraph_names(n)
            self._used.update(t.name for t in self.graph.initializer[inits:])
            self._used.update(v.name for v in self.graph.input[inputs:])
        self._sizes = sizes

    def _fresh(self, base: str) -> str:
        if self._parent is not None:
            return self._parent._fresh(base)
        self._sync()
        k = self._next.get(base, 0)
        while f"{base}{k}" in self._used:
            k += 1
        self._next[base] = k + 1
        name = f"{base}{k}"
        self._used.add(name)
        return name

    def name(self, base: str) -> str:
        """A fresh value name `{prefix}/{base}k`, for a node built by hand
        (one with several outputs) and added with `keep`."""
        return self._fresh(f"{self.prefix}/{base}")

    def keep(self, node) -> None:
        """Appends `node` as it is, its output names (and its subgraphs' names) counted as used."""
        self._sync()
        self.out_nodes.append(node)
        self._reserve(node.output)
        if node.attribute:
            self._reserve(subgraph_names(node))
        self._sizes = self._sizes_now()

    def _reserve(self, names) -> None:
        (self._parent or self)._used.update(names)

    def const(self, base: str, array) -> str:
        """An initializer of `array`, with at least one dimension."""
        return self._constant(base, np.ascontiguousarray(array))

    def scalar(self, base: str, value, dtype) -> str:
        """An initializer of `value` as `dtype`, a 0-d tensor for a scalar."""
        return self._constant(base, np.array(value, dtype))

    def _constant(self, base: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        key = (array.dtype.str, array.shape, array.tobytes())
        if self._constants is not None and key in self._constants:
            return self._constants[key]
        name = self._fresh(f"{self.prefix}/{base}")
        self.graph.initializer.append(numpy_helper.from_array(array, name))
        self._sizes = self._sizes_now()
        if self._constants is not None:
            self._constants[key] = name
        return name

    def op(self, op_type: str, *inputs: str, out: str | None = None, name: str = "", **attrs) -> str:
        from onnx import helper

        self._sync()
        out = out or self._fresh(f"{self.prefix}/{op_type.lower()}")
        self._reserve((out,))
        self.out_nodes.append(helper.make_node(op_type, list(inputs), [out], name=name, **attrs))
        self._sizes = self._sizes_now()
        return out


def rewrite_nodes(graph, rewrite) -> int:
    """Walks the graph's nodes in order: `rewrite(node, out_nodes)` either
    appends the node's replacement to `out_nodes` and returns True, or
    returns False and the node is kept as it is.  The graph's nodes become
    `out_nodes` when any was rewritten; returns how many were."""
    out_nodes, rewritten = [], 0
    for node in list(graph.node):
        if rewrite(node, out_nodes):
            rewritten += 1
        else:
            out_nodes.append(node)
    if rewritten:
        del graph.node[:]
        graph.node.extend(out_nodes)
    return rewritten


def static_conv2d(node, op_type: str, known: dict, shapes: dict):
    """(attributes, input dims, output dims, weights) of `node` when it is a
    2-D `op_type` (Conv or ConvTranspose) of the default domain, with one
    output, constant float32 4-D weights and static 4-D input and output
    shapes; None otherwise.  The speed rewrites start from this."""
    from onnx import numpy_helper

    if node.op_type != op_type or node.domain not in ("", "ai.onnx") or len(node.input) < 2 or len(node.output) != 1:
        return None
    dims, out_dims = shapes.get(node.input[0]), shapes.get(node.output[0])
    if node.input[1] not in known or not dims or len(dims) != 4 or not out_dims or len(out_dims) != 4:
        return None
    if not all(isinstance(d, int) and d > 0 for d in (*dims, *out_dims)):
        return None
    weights = numpy_helper.to_array(known[node.input[1]])
    if weights.dtype != np.float32 or weights.ndim != 4:
        return None
    return node_attrs(node), dims, out_dims, weights
