"""Folding what an ONNX graph computes from constants, before import.

`--input-value` makes a configuration input a constant, but IREE's ONNX
importer folds nothing: an `If` on it stays an `If`, whose branches may give
results of different shapes (a speech model's 16 kHz and 8 kHz
sub-networks), which IREE's lowering cannot take, and the sizes an exporter
computes at run time (PyTorch's pads as Shape, Concat, Reshape, Slice ...)
stay dynamic.  So, before import, repeatedly until nothing changes:

- a node whose inputs are all known (initializers, `Constant` nodes, values
  folded before) is computed with onnx's reference evaluator and becomes an
  initializer;
- a `Reshape` to a shape with -1 or 0 in it gets the explicit shape that
  shape inference computed (IREE's lowering would make its size dynamic);
- a `Shape` of a value whose shape onnx's shape inference knows fully
  (the inputs' shapes pinned with `--input-shape`) becomes one;
- an `If` whose condition is known is replaced by the nodes of the branch it
  takes, its results renamed to the If's (and the taken branch is folded in
  turn).

Values that the graph returns, random ops and ops of other domains are left
alone.  `fold_known` runs only for models that have a top-level `If`,
inputs made constant, or static input shapes (pinned with `--input-shape`,
or declared so by the model) and a `Shape` or `Reshape` op (an LSTM
exporter's `ConstantOfShape` for its initial state; PyTorch's attention,
whose head split computes its sizes with Shape, Mod and Slice): any other
model imports as it was written.
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import rewrite_nodes, used_names

# Never folded: their value is not a function of their inputs.
NONDETERMINISTIC = frozenset(
    "Bernoulli Multinomial RandomNormal RandomNormalLike RandomUniform RandomUniformLike".split()
)
MAX_ROUNDS = 50
MAX_FOLDED_ELEMENTS = 1 << 24  # a result larger than this stays a node (64 MB of float32)


def needs_folding(model, input_values: dict, input_shapes: dict | None = None) -> bool:
    ops = {n.op_type for n in model.graph.node}
    shaped = bool(input_shapes) or _inputs_static(model)
    return bool(input_values) or "If" in ops or (shaped and bool({"Shape", "Reshape"} & ops))


def _inputs_static(model) -> bool:
    """Whether every graph input that is not an initializer has a fully
    static shape as the model declares it: shapes the exporter pinned are
    as known as the ones `--input-shape` pins."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in initializers]
    for v in inputs:
        t = v.type.tensor_type
        if not v.type.HasField("tensor_type") or not t.HasField("shape"):
            return False
        if any(not d.HasField("dim_value") or d.dim_value <= 0 for d in t.shape.dim):
            return False
    return bool(inputs)


def fold_known(model) -> int:
    """Folds `model.graph` in place (see the module docstring); returns the
    number of nodes folded or inlined."""
    from onnx import numpy_helper

    total = 0
    values = {t.name: t for t in model.graph.initializer}  # name -> TensorProto, decoded when used
    for _ in range(MAX_ROUNDS):
        changed = _fold_round(model, values, static_shapes(model), numpy_helper)
        if not changed:
            break
        total += changed
    total += _resolve_reshapes(model, values, static_shapes(model), numpy_helper)
    if total:
        declare_initializers(model)
    return total


def _resolve_reshapes(model, values: dict, shapes: dict, numpy_helper) -> int:
    """A Reshape to a known shape with -1 or 0 in it (PyTorch's `view(-1)`),
    of a value whose shape is known, gets the explicit shape: IREE's lowering
    otherwise gives its result a dynamic size."""
    graph = model.graph
    resolved = 0
    for node in graph.node:
        if node.op_type != "Reshape" or node.domain not in ("", "ai.onnx") or len(node.input) < 2:
            continue
        data, target = node.input[0], node.input[1]
        if target not in values or data not in shapes or node.output[0] not in shapes:
            continue
        want = numpy_helper.to_array(values[target]).ravel().tolist()
        if not any(d in (-1, 0) for d in want) or len(want) != len(shapes[node.output[0]]):
            continue
        explicit = numpy_helper.from_array(np.array(shapes[node.output[0]], np.int64), f"{target}/ireegen.explicit")
        if explicit.name in values or explicit.name in used_names(graph):
            continue
        values[explicit.name] = explicit
        graph.initializer.append(explicit)
        node.input[1] = explicit.name
        resolved += 1
    return resolved


def static_shapes(model) -> dict:
    """{value name: dims} for the values whose shapes onnx's shape inference knows fully."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 - no shapes: only values fold
        return {}
    shapes = {}
    for v in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        t = v.type.tensor_type
        if v.type.HasField("tensor_type") and t.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None for d in t.shape.dim]
            if None not in dims:
                shapes[v.name] = dims
    return shapes


def _fold_round(model, values: dict, shapes: dict, numpy_helper) -> int:
    graph = model.graph
    returned = {o.name for o in graph.output}

    def fold(node, out_nodes) -> bool:
        if node.domain not in ("", "ai.onnx") or node.op_type in NONDETERMINISTIC:
            return False
        if node.op_type == "If":
            cond = values.get(node.input[0])
            if cond is None or numpy_helper.to_array(cond).size != 1:
                return False
            taken = "then_branch" if bool(numpy_helper.to_array(cond).reshape(())) else "else_branch"
            out_nodes.extend(_inlined(node, next(a.g for a in node.attribute if a.name == taken), graph))
            return True
        if returned.intersection(node.output) or any(a.g.node for a in node.attribute if a.HasField("g")):
            return False
        results = None
        if node.op_type == "Shape" and node.input[0] in shapes:
            results = [_shape_value(node, shapes[node.input[0]])]
        elif all(v == "" or v in values for v in node.input):
            results = _evaluate(model, node, values, numpy_helper)
        if results is None or any(np.asarray(r).size > MAX_FOLDED_ELEMENTS for r in results):
            return False
        for name, result in zip(node.output, results):
            if name:
                tensor = numpy_helper.from_array(np.asarray(result), name)
                values[name] = tensor
                graph.initializer.append(tensor)
        return True

    return rewrite_nodes(graph, fold)


def _shape_value(node, dims: list):
    attrs = {a.name: a.i for a in node.attribute}
    rank = len(dims)
    start, end = attrs.get("start", 0), attrs.get("end", rank)
    return np.array(dims, np.int64)[slice(start, end)]


def _evaluate(model, node, values: dict, numpy_helper) -> list | None:
    """`node`'s results on its known inputs, or None if the reference
    evaluator cannot compute them."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    inits = [values[v] for v in dict.fromkeys(node.input) if v]
    outputs = [helper.make_empty_tensor_value_info(o) for o in node.output if o]
    graph = helper.make_graph([node], "fold", [], outputs, inits)
    probe = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    try:
        with np.errstate(all="ignore"):
            results = ReferenceEvaluator(probe).run(None, {})
    except Exception:  # noqa: BLE001 - an op or type the evaluator lacks: left to IREE
        return None
    if any(not isinstance(r, np.ndarray) and not np.isscalar(r) for r in results):
        return None  # a sequence or an optional: not a tensor
    # Every output position, "" ones included, for zip with node.output.
    it = iter(results)
    return [next(it) if o else None for o in node.output]


def _inlined(node, branch, graph) -> list:
    """The nodes that replace the `If` `node` taking `branch`: the branch's
    nodes, then an Identity from each branch result to the If's result of the
    same position; the branch's initializers join the graph's."""
    from onnx import helper

    graph.initializer.extend(branch.initializer)
    nodes = list(branch.node)
    for i, (result, out) in enumerate(zip(branch.output, node.output)):
        nodes.append(helper.make_node("Identity", [result.name], [out], name=f"{node.name}/taken{i}"))
    return nodes


def if_hint(model) -> str:
    """What would let the `If`s left in the graph fold: the graph inputs their
    conditions read by value (`--input-value`) or by shape (`--input-shape`)."""
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    inputs = {v.name for v in graph.input} - {t.name for t in graph.initializer}
    by_value, by_shape, seen = set(), set(), set()
    stack = [(n.input[0], False) for n in graph.node if n.op_type == "If"]
    while stack:
        value, shape_only = stack.pop()
        if (value, shape_only) in seen:
            continue
        seen.add((value, shape_only))
        if value in inputs:
            (by_shape if shape_only else by_value).add(value)
        elif value in producer:
            n = producer[value]
            stack.extend((v, shape_only or n.op_type == "Shape") for v in n.input)
    parts = []
    if by_value:
        parts.append(f"fix {', '.join(sorted(by_value))} with --input-value NAME=V")
    if by_shape - by_value:
        parts.append(f"pin the shape of {', '.join(sorted(by_shape - by_value))} with --input-shape")
    return "; an If whose condition is known at build time folds: " + " and ".join(parts) if parts else ""


def declare_initializers(model) -> None:
    """Before IR version 4 every initializer had to be a graph input too:
    gives the initializers folding and rewrites added an input of their own."""
    from onnx import helper

    if model.ir_version >= 4:
        return
    declared = {v.name for v in model.graph.input}
    for t in model.graph.initializer:
        if t.name not in declared:
            model.graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
