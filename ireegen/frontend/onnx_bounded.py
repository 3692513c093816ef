"""Bounded tensors: a detector's post-processing whose sizes depend on the
data (NonZero, TopK on a data-dependent count, an If on an empty tensor,
a NonMaxSuppression inside it), rewritten in static-shape ops
(docs/detectors.md, "Post-processing whose sizes depend on the data").

A bounded value is a static tensor, its `cap` long along one axis, whose
first `count` entries along that axis are the value ONNX Runtime computes
and the rest zeros; `count` is an int64 scalar computed at run time.  A
shape computed from bounded values (Shape, Gather of it, Concat,
ReduceMin, ...) is followed symbolically: each of its entries a number or a
count.  The walk follows the graph in order; each node that reads a bounded
value or a symbolic shape is rewritten by its op's row of HANDLERS, and a
node no row takes is refused in one line naming it.  A bounded graph output
gets its cap as its static first dimension and `<name>_count` (int64 [1])
after it.

Rules the rows follow:
- NonZero of a static tensor: cap = its element count; the indices of its
  nonzero elements first, in ONNX order.
- TopK with k a count, or on a bounded axis: k = the cap of k (at most the
  axis' cap); the padding ranks last (-inf, or +inf for the smallest); the
  count is min(k, count); equal values in ascending index, as ONNX Runtime.
- Concat of bounded pieces along their bounded axis: the valid entries of
  each piece, in order, moved to the front (each output entry gathers its
  source by the pieces' running counts).
- Slice with start 0 and step 1 on a bounded axis: cap = min(end, cap),
  count = min(end, count).
- Gather by bounded indices, GatherND, elementwise ops, Reshape, Split,
  Unsqueeze, Squeeze, Transpose keep the bounded axis and its count.
- ReduceMax/ReduceMin over a bounded axis ignore the padding.
- an If whose condition is that a tensor has no elements, with a then
  branch of empty constants: the else branch is taken, provided each of its
  outputs is bounded by a count that is zero whenever the tested tensor's
  is (as ONNX Runtime's then branch is empty).
- NonMaxSuppression of bounded boxes and scores: onnx_detections' bounded
  suppression with the padding never a candidate; its steps and rows are
  the most a Slice of its selection keeps (torchvision's
  `keep[:detections_per_img]`), or --max-detections.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ireegen.common.errors import UsageError
from ireegen.common.resources import doc

from .onnx_detections import NMS, node_text, plan_steps, read_nms, suppression
from .onnx_fold import static_shapes
from .onnx_nodes import NodeBuilder, all_nodes, known_arrays, node_attrs, node_reads, subgraphs

# Elements of one compaction's comparison matrix ([cap, pieces]).
MAX_COMPARISONS = 1 << 26
# Elements of a NonZero's input: float32 counts them exactly below 2^24.
MAX_NONZERO = 1 << 23
# The axis of a TopK taken by ranks (ranked_topk): n^2 comparisons a row.
MAX_RANKED = 1 << 14
_COUNT_SUFFIX = "_count"
_INT_BITS = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Count:
    """A count computed at run time: `name` an int64 scalar, at most `cap`;
    `zero_with`: the counts whose zero makes this one zero."""

    name: str
    cap: int
    zero_with: frozenset = frozenset()
    # Computed from other counts: offset + sum(coef * count) over (count name, coef, count cap); empty for a count of its own.
    terms: tuple = ()
    offset: int = 0

    def linear(self) -> tuple:
        """(terms, offset): this count as offset + sum(coef * base count)."""
        return (self.terms, self.offset) if self.terms else (((self.name, 1, self.cap),), 0)

    def bounds(self) -> tuple:
        """The least and the most this count can be (each base count from 0 to its cap)."""
        terms, offset = self.linear()
        return (
            offset + sum(c * cap for _, c, cap in terms if c < 0),
            offset + sum(c * cap for _, c, cap in terms if c > 0),
        )


@dataclass(frozen=True)
class Bounded:
    """A bounded value: static `shape`, valid along `axis` up to `count`."""

    shape: tuple
    axis: int
    count: Count


@dataclass(frozen=True)
class BoundedTensor:
    """A graph output whose first dimension depended on the data, now
    `rows` long: `count` names the output holding how many rows are valid,
    the rest are `fill` (check/subjects.bounded_as pads ONNX Runtime's
    result the same way)."""

    name: str
    count: str
    rows: int
    fill: int = 0
    selects: bool = field(default=False, repr=False)  # not a NonMaxSuppression's selection


@dataclass
class _EmptyTest:
    count: Count


def needs_bounding(model) -> bool:
    """Whether the graph is a detector's post-processing this pass bounds: a
    NonMaxSuppression inside a branch or whose selected indices another node
    reads, or a NonZero in a graph with a TopK or NonMaxSuppression.  A
    NonZero alone keeps its dynamic result (async builds it as it is)."""
    graph = model.graph
    ops = {m.op_type for m in all_nodes(graph)}
    if "NonZero" in ops and ops & {"TopK", NMS}:
        return True
    selected = {n.output[0] for n in graph.node if n.op_type == NMS}
    if any(i in selected for n in graph.node for i in node_reads(n)):
        return True
    return any(m.op_type == NMS for n in graph.node for g in subgraphs(n) for m in all_nodes(g))


class _Walk:
    def __init__(self, model, path, max_detections):
        self.model, self.graph, self.path = model, model.graph, path
        self.max_detections = max_detections
        self.out_nodes: list = []
        self.b = NodeBuilder(self.graph, self.out_nodes, "ireegen.bounded", share_constants=True)
        self.bounded: dict = {}  # name -> Bounded
        self.sym: dict = {}  # name -> (list of int | Count, is_scalar)
        self.sym_shapes: dict = {}  # name -> the shape of a symbolic value of more than one dimension
        self.tests: dict = {}  # name -> _EmptyTest
        self.known = {
            k: _array(v) for k, v in known_arrays(self.graph, {t.name: t for t in self.graph.initializer}).items()
        }
        self.shapes: dict = {}
        self.sums: dict = {}  # tuple of count names -> Count of their sum
        self.demand: dict = {}  # NonMaxSuppression output -> rows a Slice keeps
        self.if_checks: dict = {}  # If output -> the value its condition tests
        self.used_nms = False
        self.nonzeros: dict = {}  # NonZero input -> its first NonZero's output
        self.nonneg: set = set()  # bounded integer values that are never negative (indices)
        self.user_cut = False  # --max-detections keeps fewer rows than a NonMaxSuppression can select

    # -- helpers -------------------------------------------------------
    def refuse(self, node, why: str):
        raise UsageError(
            f"{self.path}: {node_text(node)}: {why}; ireegen bounds the data-dependent sizes of NonZero, TopK, "
            f"Concat, Slice, Gather and NonMaxSuppression as detectors use them ({doc('detectors.md')})"
        )

    def shape(self, name: str, node) -> tuple:
        if name in self.bounded:
            return self.bounded[name].shape
        if name in self.known:
            return self.known[name].shape
        if name in self.shapes:
            return tuple(self.shapes[name])
        self.refuse(node, f"the shape of {name[:60]!r} is not static")

    def const_ints(self, name: str, node) -> list | None:
        if not name:
            return None
        if name not in self.known:
            self.refuse(node, f"its input {name[:60]!r} is computed at run time")
        return [int(v) for v in self.known[name].reshape(-1)]

    def valid(self, bnd: Bounded) -> str:
        """A bool mask broadcastable to `bnd.shape`: true on the valid entries."""
        b = self.b
        rank = len(bnd.shape)
        index = np.arange(bnd.shape[bnd.axis], dtype=np.int64).reshape([-1] + [1] * (rank - bnd.axis - 1))
        return b.op("Less", b.const("index", index), bnd.count.name)

    def zero_fill(self, value: str, bnd: Bounded, dtype) -> str:
        return self.b.op("Where", self.valid(bnd), value, self.b.scalar("zero", 0, dtype))

    def min_count(self, a: Count, k: int | Count) -> Count:
        if isinstance(k, int):
            if k >= a.cap:
                return a
            name = self.b.op("Min", a.name, self.b.scalar("k", k, np.int64))
            return Count(name, k, a.zero_with | {a.name})
        if k.name == a.name:
            return a
        return Count(self.b.op("Min", a.name, k.name), min(a.cap, k.cap), a.zero_with | k.zero_with | {a.name, k.name})

    def dtype(self, name: str):
        return self.dtypes.get(name, np.float32)

    # -- the walk ------------------------------------------------------
    def run(self) -> tuple:
        self._inline_empty_tests()
        self._drop_dead()
        self.shapes = static_shapes(self.model)
        self.dtypes = _dtypes(self.model)
        self._find_demands()
        for node in list(self.graph.node):
            self.visit(node)
            for out in (o for o in node.output if o in self.if_checks):
                self._check_if(out, self.if_checks[out])
        return self._finish()

    def _check_if(self, out_name: str, tested: str) -> None:
        got, want = self.bounded.get(out_name), self.bounded.get(tested)
        if want is None and tested in self.shapes and 0 not in self.shapes[tested]:
            return  # a static tensor with elements: the else branch is always taken
        if got is None or want is None or want.count.name not in got.count.zero_with | {got.count.name}:
            raise UsageError(
                f"{self.path}: the If on whether {tested[:60]!r} is empty: its else branch's {out_name[:60]!r} "
                f"is not empty whenever that tensor is, so the branch cannot stand for both "
                f"({doc('detectors.md')})"
            )

    def visit(self, node) -> None:
        touched = [i for i in node.input if i in self.bounded or i in self.sym or i in self.tests]
        if node.op_type == "NonZero" and not touched:
            return self._nonzero(node)
        if node.op_type == NMS and node.domain in ("", "ai.onnx"):
            touched = True
        if not touched:
            self.b.keep(node)
            if node.op_type in _CONST_OPS and all(i in self.known for i in node.input if i):
                self._fold(node)
            return
        handler = HANDLERS.get(node.op_type)
        if handler is None:
            self.refuse(node, "it reads a tensor whose size depends on the data")
        try:
            handler(self, node)
        except KeyError:  # an input of another kind than the row takes (a shape where a tensor goes)
            self.refuse(node, "it reads a value computed from the data in a form ireegen does not bound")
        for out in node.output:  # a shape whose entries are all numbers is a constant
            if out in self.sym and not any(isinstance(e, Count) for e in self.sym[out][0]):
                shape = self._sym_shape(out)
                entries, _ = self.sym.pop(out)
                self.sym_shapes.pop(out, None)
                self._known(node, np.array(entries, np.int64).reshape(shape), out)

    def _fold(self, node) -> None:
        from onnx.reference import ReferenceEvaluator

        try:
            values = ReferenceEvaluator(_one_node_model(node, self.model)).run(
                None, {i: self.known[i] for i in node.input if i}
            )
        except Exception:  # noqa: BLE001 - a node the evaluator cannot run stays unknown
            return
        for name, value in zip(node.output, values):
            self.known[name] = np.asarray(value)

    def _inline_empty_tests(self) -> None:
        """Each If on `Equal(ReduceProd(Shape(x)), 0)` or `Equal(Size(x), 0)` (through Casts) whose then
        branch gives empty constants becomes its else branch's nodes."""
        from onnx import helper

        graph = self.graph
        producer = {o: n for n in graph.node for o in n.output}
        nodes = []
        for node in graph.node:
            tested = _empty_test(node, producer, self.known) if node.op_type == "If" else None
            if tested is None:
                nodes.append(node)
                continue
            branches = {a.name: a.g for a in node.attribute}
            then_branch, else_branch = branches.get("then_branch"), branches.get("else_branch")
            if then_branch is None or else_branch is None or not _empty_constants(then_branch):
                nodes.append(node)
                continue
            inlined = list(else_branch.node)
            produced = {o for n in inlined for o in n.output}
            for inner, outer in zip(else_branch.output, node.output):
                self.if_checks[outer] = tested
                if inner.name not in produced:  # a value from outside the branch
                    inlined.append(helper.make_node("Identity", [inner.name], [outer], name=f"{node.name}/else"))
                    continue
                for n in inlined:  # the branch's value takes the If's output name
                    n.input[:] = [outer if i == inner.name else i for i in n.input]
                    n.output[:] = [outer if o == inner.name else o for o in n.output]
            nodes.extend(inlined)
        del graph.node[:]
        graph.node.extend(nodes)
        self.known = {k: _array(v) for k, v in known_arrays(graph, {t.name: t for t in graph.initializer}).items()}

    def _drop_dead(self) -> None:
        graph = self.graph
        live = {o.name for o in graph.output}
        kept = []
        for node in reversed(list(graph.node)):
            if any(o in live for o in node.output):
                kept.append(node)
                live.update(i for i in node_reads(node) if i)
        del graph.node[:]
        graph.node.extend(reversed(kept))

    def _find_demands(self) -> None:
        """For each NonMaxSuppression, the most rows a Slice [0:end] of its
        selection keeps, through the Gather of a column, Squeeze and Identity."""
        readers: dict = {}
        for n in self.graph.node:
            for i in node_reads(n):
                readers.setdefault(i, []).append(n)
        for nms in (n for n in self.graph.node if n.op_type == NMS):
            value = nms.output[0]
            while len(readers.get(value, [])) == 1:
                reader = readers[value][0]
                if reader.op_type == "Slice":
                    starts, ends = self.known.get(reader.input[1]), self.known.get(reader.input[2])
                    axes = self.known.get(reader.input[3]) if len(reader.input) > 3 and reader.input[3] else None
                    steps = self.known.get(reader.input[4]) if len(reader.input) > 4 and reader.input[4] else None
                    if (
                        starts is not None
                        and ends is not None
                        and starts.size == 1
                        and int(starts.reshape(-1)[0]) == 0
                        and (axes is None or int(axes.reshape(-1)[0]) == 0)
                        and (steps is None or int(steps.reshape(-1)[0]) == 1)
                        and int(ends.reshape(-1)[0]) > 0
                    ):
                        self.demand[nms.output[0]] = int(ends.reshape(-1)[0])
                    break
                if reader.op_type not in ("Gather", "Squeeze", "Identity", "Unsqueeze"):
                    break
                if reader.op_type == "Gather" and int(node_attrs(reader).get("axis", 0)) != 1:
                    break
                value = reader.output[0]

    def _finish(self) -> tuple:
        from onnx import TensorProto, helper

        b, graph = self.b, self.graph
        results = []
        outputs = list(graph.output)
        for output in outputs:
            if output.name in self.sym or output.name in self.tests:
                self.refuse_output(output.name, "a shape computed from the data")
            bnd = self.bounded.get(output.name)
            if bnd is None:
                continue
            if bnd.axis != 0:
                self.refuse_output(output.name, f"bounded along axis {bnd.axis}, not its first")
            count = output.name + _COUNT_SUFFIX
            taken = {o.name for o in graph.output} | {v for n in (*graph.node, *self.out_nodes) for v in n.output}
            while count in taken:
                count += "_"
            b.op("Reshape", bnd.count.name, b.const("one", np.array([1], np.int64)), out=count)
            t = output.type.tensor_type
            t.ClearField("shape")
            for d in bnd.shape:
                t.shape.dim.add().dim_value = d
            position = list(graph.output).index(output)
            graph.output.insert(position + 1, helper.make_tensor_value_info(count, TensorProto.INT64, [1]))
            results.append(BoundedTensor(output.name, count, bnd.shape[0]))
        del graph.node[:]
        graph.node.extend(self.out_nodes)
        return tuple(results)

    def refuse_output(self, name: str, why: str):
        raise UsageError(f"{self.path}: graph output {name[:60]!r} is {why}; ireegen bounds a first dimension only")

    # -- rows ------------------------------------------------------------
    def _nonzero(self, node) -> None:
        b = self.b
        if node.input[0] in self.nonzeros:  # the same mask's indices, once
            first = self.nonzeros[node.input[0]]
            b.op("Identity", first, out=node.output[0])
            self.bounded[node.output[0]] = self.bounded[first]
            self.nonneg.add(node.output[0])
            return
        self.nonzeros[node.input[0]] = node.output[0]
        self.nonneg.add(node.output[0])
        shape = self.shape(node.input[0], node)
        total = int(np.prod(shape))
        if total == 0 or total > MAX_NONZERO:
            self.refuse(node, f"{total:,} elements; ireegen bounds a NonZero of 1 to {MAX_NONZERO:,}")
        flat = b.op("Reshape", node.input[0], b.const("flat", np.array([total], np.int64)))
        mask = b.op("Cast", b.op("Cast", flat, to=9), to=1)  # 1.0 where nonzero (NaN included), as ONNX
        running = b.op("CumSum", mask, self.b.scalar("axis0", 0, np.int64))
        count = b.op("Cast", b.op("ReduceSum", mask, keepdims=0), to=7)
        # Each element scattered to its place, the nonzero ones first in order (running - 1), the others
        # after them in order (count + index - running): a permutation, so no two land on one place, and
        # linear in the elements (SSDlite's 180 NonZero of 3,234 each).
        index = b.const("index_f", np.arange(total, dtype=np.float32))
        place = b.op(
            "Where",
            b.op("Greater", mask, b.scalar("half", 0.5, np.float32)),
            b.op("Sub", running, b.scalar("one_f", 1.0, np.float32)),
            b.op("Sub", b.op("Add", b.op("ReduceSum", mask, keepdims=1), index), running),
        )
        source = b.op(
            "ScatterElements",
            b.const("zeros_i", np.zeros(total, np.int64)),
            b.op("Cast", place, to=7),
            b.const("index_i", np.arange(total, dtype=np.int64)),
            axis=0,
        )
        rows = []
        stride = total
        for d in shape:
            stride //= d
            coord = b.op(
                "Mod", b.op("Div", source, self.b.scalar("stride", stride, np.int64)), self.b.scalar("dim", d, np.int64)
            )
            rows.append(b.op("Unsqueeze", coord, b.const("axis0v", np.array([0], np.int64))))
        indices = b.op("Concat", *rows, axis=0) if len(rows) > 1 else rows[0]
        bnd = Bounded((len(shape), total), 1, Count(count, total))
        b.op("Where", self.valid(bnd), indices, self.b.scalar("zero_i", 0, np.int64), out=node.output[0])
        self.bounded[node.output[0]] = bnd

    def _transpose(self, node) -> None:
        bnd = self.bounded[node.input[0]]
        perm = node_attrs(node).get("perm") or list(reversed(range(len(bnd.shape))))
        self.b.keep(node)
        self.bounded[node.output[0]] = Bounded(tuple(bnd.shape[p] for p in perm), list(perm).index(bnd.axis), bnd.count)

    def _gathernd(self, node) -> None:
        data, indices = node.input[0], node.input[1]
        if data in self.bounded or indices not in self.bounded or int(node_attrs(node).get("batch_dims", 0)):
            self.refuse(node, "ireegen bounds a GatherND of a static tensor by bounded indices")
        idx = self.bounded[indices]
        if idx.axis != 0 or len(idx.shape) != 2:
            self.refuse(node, "its indices are not [count, rank]")
        dshape = self.shape(data, node)
        out = self.b.op("GatherND", data, indices)
        bnd = Bounded((idx.shape[0], *dshape[idx.shape[1] :]), 0, idx.count)
        self.b.op("Identity", self.zero_fill(out, bnd, self.dtype(data)), out=node.output[0])
        self.bounded[node.output[0]] = bnd
        self.dtypes[node.output[0]] = self.dtype(data)

    def _gather(self, node) -> None:
        data, indices = node.input[0], node.input[1]
        axis = int(node_attrs(node).get("axis", 0))
        if data in self.sym:
            return self._sym_gather(node)
        dshape = self.shape(data, node)
        axis %= len(dshape)
        ishape = self.shape(indices, node)
        dbnd, ibnd = self.bounded.get(data), self.bounded.get(indices)
        if ibnd is None:
            values = self.const_ints(indices, node)
            if dbnd is not None and dbnd.axis == axis and any(v < 0 for v in values):
                self.refuse(node, "a negative index into a bounded axis")
        if dbnd is not None and ibnd is not None and dbnd.axis != axis:
            self.refuse(node, "both its data and its indices are bounded")
        if dbnd is not None and ibnd is not None and indices not in self.nonneg:
            self.refuse(node, "indices into a bounded axis that may be negative")
        out_shape = (*dshape[:axis], *ishape, *dshape[axis + 1 :])
        if ibnd is not None:
            bnd = Bounded(out_shape, axis + ibnd.axis, ibnd.count)
        elif dbnd.axis == axis:
            bnd = None  # constant indices into the valid entries: a static result
        else:
            moved = dbnd.axis if dbnd.axis < axis else dbnd.axis - 1 + len(ishape)
            bnd = Bounded(out_shape, moved, dbnd.count)
        self.dtypes[node.output[0]] = self.dtype(data)
        if bnd is None:
            self.b.keep(node)
            self.shapes[node.output[0]] = list(out_shape)
            return
        out = self.b.op("Gather", data, indices, axis=axis)
        self.b.op("Identity", self.zero_fill(out, bnd, self.dtype(data)), out=node.output[0])
        self.bounded[node.output[0]] = bnd
        if data in self.nonneg:
            self.nonneg.add(node.output[0])

    def _topk(self, node) -> None:
        from onnx import helper

        b = self.b
        x, k = node.input[0], node.input[1]
        attrs = node_attrs(node)
        if int(attrs.get("sorted", 1)) != 1:
            self.refuse(node, "an unsorted TopK's order is not defined")
        largest = int(attrs.get("largest", 1))
        shape = self.shape(x, node)
        axis = int(attrs.get("axis", -1)) % len(shape)
        xb = self.bounded.get(x)
        if xb is not None and xb.axis != axis:
            self.refuse(node, "its input is bounded along another axis")
        if k in self.sym:
            entries, _ = self.sym[k]
            if len(entries) != 1:
                self.refuse(node, "its k is not one value")
            k_value = entries[0]
        else:
            k_value = self.const_ints(k, node)[0]
        cap = k_value.cap if isinstance(k_value, Count) else k_value
        size = min(cap, shape[axis])
        if xb is not None:
            x = b.op("Where", self.valid(xb), x, self.b.scalar("pad", -np.inf if largest else np.inf, np.float32))
        values, indices = b.name("topk_values"), b.name("topk_indices")
        if shape[axis] <= MAX_RANKED:
            ranked_topk(b, x, shape, axis, size, largest, values, indices)
        else:
            self.b.keep(
                helper.make_node(
                    "TopK",
                    [x, b.const("k", np.array([size], np.int64))],
                    [values, indices],
                    axis=axis,
                    largest=largest,
                    sorted=1,
                )
            )
        count = xb.count if xb is not None else Count(self.b.scalar("n", shape[axis], np.int64), shape[axis])
        count = self.min_count(count, k_value)
        out_shape = tuple(size if d == axis else s for d, s in enumerate(shape))
        bnd = Bounded(out_shape, axis, count)
        if len(node.output) > 1:
            self.nonneg.add(node.output[1])
        for got, want, dtype in (
            (values, node.output[0], self.dtype(node.input[0])),
            (indices, node.output[1], np.int64),
        ):
            if want:
                b.op("Identity", self.zero_fill(got, bnd, dtype), out=want)
                self.bounded[want] = bnd
                self.dtypes[want] = dtype

    def _shape(self, node) -> None:
        if node.input[0] in self.sym:  # a shape's own shape is static
            attrs = node_attrs(node)
            dims = self._sym_shape(node.input[0])
            return self._known(node, np.array(dims[attrs.get("start", 0) : attrs.get("end", len(dims))], np.int64))
        bnd = self.bounded[node.input[0]]
        attrs = node_attrs(node)
        entries = [bnd.count if d == bnd.axis else s for d, s in enumerate(bnd.shape)]
        start, end = attrs.get("start", 0), attrs.get("end", len(entries))
        self.sym[node.output[0]] = (entries[start:end], False)

    def _constant_of_shape(self, node) -> None:
        entries, _ = self.sym[node.input[0]]
        counts = [d for d, e in enumerate(entries) if isinstance(e, Count)]
        if len(counts) != 1:
            self.refuse(node, "more than one of its dimensions depends on the data")
        axis = counts[0]
        shape = tuple(e.cap if isinstance(e, Count) else e for e in entries)
        value = node_attrs(node).get("value")
        array = _array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
        bnd = Bounded(shape, axis, entries[axis])
        full = self.b.const("full", np.full(shape, array[0], array.dtype))
        self.b.op("Identity", self.zero_fill(full, bnd, array.dtype), out=node.output[0])
        self.bounded[node.output[0]] = bnd
        self.dtypes[node.output[0]] = array.dtype.type

    def _sym_entries(self, name: str, node) -> tuple:
        if name in self.sym:
            return self.sym[name]
        values = self.const_ints(name, node)
        return values, self.known[name].ndim == 0

    def _sym_gather(self, node) -> None:
        entries, _ = self.sym[node.input[0]]
        index = self.known.get(node.input[1])
        if index is None or index.ndim > 1:
            self.refuse(node, "a shape indexed at run time")
        picked = [entries[int(i)] for i in index.reshape(-1)]
        self.sym[node.output[0]] = (picked, index.ndim == 0)

    def _sym_unsqueeze(self, node) -> None:
        if node.input[0] in self.bounded:
            return self._reshaped(node)
        entries, scalar = self.sym[node.input[0]]
        if not scalar:
            self.refuse(node, "a shape of more than one dimension")
        self.sym[node.output[0]] = (entries, False)

    def _sym_reduce(self, node) -> None:
        entries, _ = self._sym_entries(node.input[0], node)
        op = {"ReduceMin": min, "ReduceMax": max, "Min": min, "Max": max}[node.op_type]
        if node.op_type in ("Min", "Max"):
            entries = [e for i in node.input for e in self._sym_entries(i, node)[0]]
        statics = [e for e in entries if not isinstance(e, Count)]
        counts = [e for e in entries if isinstance(e, Count)]
        result: int | Count = op(statics) if statics else counts.pop(0)
        for c in counts:
            if op is min:
                result = self.min_count(c, result) if isinstance(result, int) else self.min_count(result, c)
            else:
                self.refuse(node, "the larger of two counts")
        keepdims = int(node_attrs(node).get("keepdims", 1)) if node.op_type.startswith("Reduce") else 1
        self.sym[node.output[0]] = ([result], not keepdims or node.op_type in ("Min", "Max"))

    def _sym_reduce_prod(self, node) -> None:
        entries, _ = self.sym[node.input[0]]
        counts = [e for e in entries if isinstance(e, Count)]
        statics = [e for e in entries if not isinstance(e, Count)]
        if len(counts) != 1 or any(s <= 0 for s in statics):
            self.refuse(node, "a product of counts")
        scale = int(np.prod(statics)) if statics else 1
        c = counts[0]
        name = self.b.op("Mul", c.name, self.b.scalar("k", scale, np.int64))
        self.sym[node.output[0]] = ([Count(name, c.cap * scale, c.zero_with | {c.name})], True)

    def _sym_concat(self, node) -> None:
        if any(i in self.bounded for i in node.input):
            return self._concat(node)
        entries = []
        for i in node.input:
            entries += list(self._sym_entries(i, node)[0])
        self.sym[node.output[0]] = (entries, False)

    def _reshaped(self, node) -> None:
        """Reshape, Unsqueeze, Squeeze, Flatten of a bounded value: the
        bounded axis must stay whole, with the same entries before it."""
        bnd = self.bounded.get(node.input[0])
        if bnd is None:
            if node.op_type == "Reshape" and node.input[0] in self.sym:
                entries, _ = self.sym[node.input[0]]
                target = self.const_ints(node.input[1], node)
                self.sym[node.output[0]] = (entries, target == [])
                return
            self.refuse(node, "a reshape to a shape computed from the data")
        if node.op_type == "Reshape" and node.input[1] in self.sym:
            entries, _ = self.sym[node.input[1]]
            target = [e.cap if isinstance(e, Count) else e for e in entries]
        elif node.op_type == "Reshape":
            target = self.const_ints(node.input[1], node)
        padded = np.zeros(bnd.shape, np.int8)
        if node.op_type == "Reshape":
            if 0 in target and not int(node_attrs(node).get("allowzero", 0)):
                target = [bnd.shape[d] if t == 0 else t for d, t in enumerate(target)]
            out_shape = padded.reshape(target).shape
        elif node.op_type == "Unsqueeze":
            axes = self.const_ints(node.input[1], node)
            out_shape = np.expand_dims(padded, [a % (len(bnd.shape) + len(axes)) for a in axes]).shape
        elif node.op_type == "Squeeze":
            axes = self.const_ints(node.input[1], node) if len(node.input) > 1 and node.input[1] else None
            if axes is None:
                axes = [d for d, s in enumerate(bnd.shape) if s == 1]
            if any(a % len(bnd.shape) == bnd.axis for a in axes):
                self.refuse(node, "it squeezes a bounded axis")
            out_shape = np.squeeze(padded, tuple(a % len(bnd.shape) for a in axes)).shape
        else:
            self.refuse(node, "it reshapes a bounded tensor")
        before = int(np.prod(bnd.shape[: bnd.axis]))
        after = int(np.prod(bnd.shape[bnd.axis + 1 :]))
        axis = next(
            (
                d
                for d, s in enumerate(out_shape)
                if s == bnd.shape[bnd.axis]
                and int(np.prod(out_shape[:d])) == before
                and int(np.prod(out_shape[d + 1 :])) == after
            ),
            None,
        )
        count = bnd.count
        if axis is None:
            axis, count = self._merged(node, bnd, out_shape)
        self.b.op("Reshape", node.input[0], self.b.scalar("shape", out_shape, np.int64), out=node.output[0])
        self.bounded[node.output[0]] = Bounded(tuple(out_shape), axis, count)
        self.dtypes[node.output[0]] = self.dtype(node.input[0])

    def _concat(self, node) -> None:
        b = self.b
        axis = int(node_attrs(node).get("axis", 0))
        pieces = [(i, self.bounded.get(i)) for i in node.input]
        rank = len(self.shape(pieces[0][0], node))
        axis %= rank
        bounds = [p for _, p in pieces if p is not None]
        dtype = self.dtype(node.input[0])
        self.dtypes[node.output[0]] = dtype
        if all(p.axis != axis for p in bounds):
            counts = {p.count for p in bounds}
            if len(counts) != 1 or any(p is None for _, p in pieces) or len({p.axis for p in bounds}) != 1:
                self.refuse(node, "it joins tensors bounded by different counts")
            shape = list(bounds[0].shape)
            shape[axis] = sum(p.shape[axis] for p in bounds)
            self.b.keep(node)
            self.bounded[node.output[0]] = Bounded(tuple(shape), bounds[0].axis, bounds[0].count)
            return
        if any(p is not None and p.axis != axis for _, p in pieces):
            self.refuse(node, "it joins tensors bounded along different axes")
        caps, counts = [], []
        for name, p in pieces:
            if p is None:
                size = self.shape(name, node)[axis]
                caps.append(size)
                counts.append(Count(self.b.scalar("n", size, np.int64), size))
            else:
                caps.append(p.shape[axis])
                counts.append(p.count)
        total_cap = sum(caps)
        if total_cap * len(caps) > MAX_COMPARISONS:
            self.refuse(node, f"{total_cap:,} entries from {len(caps)} pieces is over what ireegen compacts")
        key = tuple(c.name for c in counts)
        axis0 = b.const("axis0v", np.array([0], np.int64))
        vector = b.op("Concat", *[b.op("Unsqueeze", c.name, axis0) for c in counts], axis=0)
        if key not in self.sums:
            total = b.op("ReduceSum", vector, keepdims=0)
            zero_with = frozenset.intersection(*[c.zero_with | {c.name} for c in counts])
            self.sums[key] = Count(total, total_cap, zero_with)
        total = self.sums[key]
        padded = b.op("Concat", *node.input, axis=axis)
        ends = b.op("CumSum", vector, self.b.scalar("axis0", 0, np.int64))
        starts = b.op("Sub", ends, vector)
        slots = b.const("slots", np.arange(total_cap, dtype=np.int64).reshape(total_cap, 1))
        piece = b.op(
            "ReduceSum",
            b.op("Cast", b.op("GreaterOrEqual", slots, b.op("Unsqueeze", ends, axis0)), to=7),
            b.const("axes1", np.array([1], np.int64)),
            keepdims=0,
        )
        piece = b.op("Min", piece, self.b.scalar("last", len(caps) - 1, np.int64))
        offsets = b.const("offsets", np.concatenate([[0], np.cumsum(caps)[:-1]]).astype(np.int64))
        source = b.op(
            "Add",
            b.op("Gather", offsets, piece, axis=0),
            b.op("Sub", b.const("slot", np.arange(total_cap, dtype=np.int64)), b.op("Gather", starts, piece, axis=0)),
        )
        source = b.op(
            "Max",
            b.op("Min", source, self.b.scalar("last_slot", total_cap - 1, np.int64)),
            self.b.scalar("zero_i", 0, np.int64),
        )
        out = b.op("Gather", padded, source, axis=axis)
        shape = list(self.shape(node.input[0], node))
        shape[axis] = total_cap
        bnd = Bounded(tuple(shape), axis, total)
        b.op("Identity", self.zero_fill(out, bnd, dtype), out=node.output[0])
        self.bounded[node.output[0]] = bnd

    def _slice(self, node) -> None:
        bnd = self.bounded.get(node.input[0])
        if bnd is None:
            self.refuse(node, "a slice of a shape computed from the data")
        if any(i in self.bounded or i in self.sym for i in node.input[1:]):
            self.refuse(node, "its bounds are computed from the data")
        starts = self.const_ints(node.input[1], node)
        ends = self.const_ints(node.input[2], node)
        rank = len(bnd.shape)
        axes = (
            self.const_ints(node.input[3], node) if len(node.input) > 3 and node.input[3] else list(range(len(starts)))
        )
        steps = self.const_ints(node.input[4], node) if len(node.input) > 4 and node.input[4] else [1] * len(starts)
        shape, count = list(bnd.shape), bnd.count
        for start, end, axis, step in zip(starts, ends, axes, steps):
            axis %= rank
            if axis == bnd.axis:
                if start != 0 or step != 1 or end <= 0:
                    self.refuse(node, "ireegen bounds a slice [0:end] of a bounded axis")
                shape[axis] = min(end, shape[axis])
                count = self.min_count(count, end)
            else:
                shape[axis] = len(range(*slice(start, end, step).indices(shape[axis])))
        self.b.keep(node)
        self.bounded[node.output[0]] = Bounded(tuple(shape), bnd.axis, count)
        self.dtypes[node.output[0]] = self.dtype(node.input[0])

    def _split(self, node) -> None:
        bnd = self.bounded[node.input[0]]
        axis = int(node_attrs(node).get("axis", 0)) % len(bnd.shape)
        if axis == bnd.axis:
            self.refuse(node, "it splits a bounded axis")
        sizes = self.const_ints(node.input[1], node) if len(node.input) > 1 and node.input[1] else None
        if sizes is None:
            parts = len(node.output)
            sizes = [bnd.shape[axis] // parts] * parts
        self.b.keep(node)
        for out, size in zip(node.output, sizes):
            shape = list(bnd.shape)
            shape[axis] = size
            self.bounded[out] = Bounded(tuple(shape), bnd.axis, bnd.count)
            self.dtypes[out] = self.dtype(node.input[0])

    def _elementwise(self, node) -> None:
        if node.op_type == "Cast" and node.input[0] in self.sym:
            self.sym[node.output[0]] = self.sym[node.input[0]]
            return
        if node.op_type == "Cast" and node.input[0] in self.tests:
            self.tests[node.output[0]] = self.tests[node.input[0]]
            return
        if node.op_type == "Equal" and any(i in self.sym for i in node.input):
            return self._sym_equal(node)
        if node.op_type == "Where" and node.input[0] in self.known and any(i in self.sym for i in node.input[1:]):
            return self._sym_where(node)
        if node.op_type in _SYM_ARITHMETIC and not any(i in self.tests or i in self.bounded for i in node.input):
            return self._sym_arithmetic(node)
        if any(i in self.sym or i in self.tests for i in node.input):
            self.refuse(node, "arithmetic on a shape computed from the data")
        if (
            node.op_type in ("Div", "Mod")
            and node.input[1] in self.bounded
            and np.dtype(self.dtype(node.input[1])).kind in "iu"
        ):
            self.refuse(node, "an integer division by a bounded tensor")
        shapes = [self.shape(i, node) if i else () for i in node.input]
        rank = max(len(s) for s in shapes)
        bounds = [self.bounded[i] for i in node.input if i in self.bounded]
        if len({(len(p.shape) - p.axis, p.count) for p in bounds}) != 1:
            self.refuse(node, "its operands are bounded differently")
        first = bounds[0]
        axis = rank - (len(first.shape) - first.axis)
        for i, s in zip(node.input, shapes):
            if i and i not in self.bounded:
                d = len(s) - (rank - axis)
                if d >= 0 and s[d] != 1:
                    self.refuse(node, f"its static operand {i[:60]!r} spans a bounded axis")
        out_shape = tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
        dtype = _OUT_DTYPE.get(node.op_type) or self.dtype(next(i for i in node.input if i in self.bounded))
        if node.op_type == "Cast":
            dtype = _ONNX_NP.get(int(node_attrs(node)["to"]), np.float32)
        if node.op_type == "Where":
            dtype = self.dtype(node.input[1])
        bnd = Bounded(out_shape, axis, first.count)
        out = self.b.op(node.op_type, *node.input, **node_attrs(node))
        self.b.op("Identity", self.zero_fill(out, bnd, dtype), out=node.output[0])
        self.bounded[node.output[0]] = bnd
        self.dtypes[node.output[0]] = dtype

    def _empty_equal(self, node) -> None:
        a, c = node.input
        if c in self.sym:
            a, c = c, a
        entries, _ = self.sym[a]
        zero = self.known.get(c)
        if (
            len(entries) != 1
            or not isinstance(entries[0], Count)
            or zero is None
            or zero.size != 1
            or zero.reshape(-1)[0] != 0
        ):
            self.refuse(node, "a comparison of a count with anything but zero")
        self.tests[node.output[0]] = _EmptyTest(entries[0])

    def _axes(self, node) -> list:
        """A reduction's axes, from its input (opset 18) or its attribute; [] when it gives none."""
        if len(node.input) > 1 and node.input[1]:
            return self.const_ints(node.input[1], node)
        return list(node_attrs(node).get("axes") or [])

    def _reduce(self, node) -> None:
        if int(node_attrs(node).get("noop_with_empty_axes", 0)) and not self._axes(node):
            # ONNX: no axes with noop_with_empty_axes is the identity, not a reduction over every axis.
            return self._identity(_renamed(node, node.input[:1], "Identity"))
        if node.op_type == "ReduceProd":
            return self._sym_reduce_prod(node)
        if node.input[0] in self.sym:
            return self._sym_reduce(node)
        bnd = self.bounded[node.input[0]]
        attrs = node_attrs(node)
        axes = self._axes(node)
        rank = len(bnd.shape)
        axes = list(range(rank)) if not axes else [a % rank for a in axes]
        if bnd.axis not in axes:
            self.refuse(node, "a reduction along a static axis of a bounded tensor")
        dtype = np.dtype(self.dtype(node.input[0]))
        if dtype.kind not in "fiu":
            self.refuse(node, f"a {node.op_type} of {dtype.name} values")
        largest = node.op_type == "ReduceMax"
        if dtype.kind == "f":
            pad = self.b.scalar("pad", -np.inf if largest else np.inf, dtype)
        else:  # the padding is the identity of the reduction: the type's smallest or largest value
            pad = self.b.scalar("pad", np.iinfo(dtype).min if largest else np.iinfo(dtype).max, dtype)
        masked = self.b.op("Where", self.valid(bnd), node.input[0], pad)
        self.b.keep(_renamed(node, [masked, *node.input[1:]]))
        keepdims = int(attrs.get("keepdims", 1))
        self.shapes[node.output[0]] = [
            1 if d in axes else s for d, s in enumerate(bnd.shape) if keepdims or d not in axes
        ]
        self.dtypes[node.output[0]] = self.dtype(node.input[0])

    def _nms(self, node) -> None:
        boxes, scores = node.input[0], node.input[1]
        bb, sb = self.bounded.get(boxes), self.bounded.get(scores)
        if (bb is None) != (sb is None) or (
            bb is not None and (bb.axis != 1 or sb.axis != 2 or bb.count.name != sb.count.name)
        ):
            self.refuse(node, "ireegen bounds a NonMaxSuppression whose boxes and scores share one bounded box axis")
        if any(i in self.bounded or i in self.sym for i in node.input[2:]):
            self.refuse(node, "its parameters are computed from the data")
        shapes = {boxes: list(self.shape(boxes, node)), scores: list(self.shape(scores, node))}
        known = {k: _tensor(v) for k, v in self.known.items() if k in node.input[2:]}
        try:
            nms = read_nms(node, shapes, known)
            demand = self.demand.get(node.output[0])
            limit = self.max_detections if demand is None else min(demand, self.max_detections or demand)
            rows, steps = plan_steps(nms, limit)
        except UsageError as e:
            raise UsageError(f"{self.path}: {e}") from None
        if limit != demand:
            try:
                self.user_cut |= rows < plan_steps(nms, demand)[0]
            except UsageError:  # more rows than ireegen unrolls: the user's bound cuts them
                self.user_cut = True
        count_name = self.b.name("nms_count")
        valid = None
        if sb is not None:
            valid = self.b.op("Expand", self.valid(sb), self.b.scalar("scores_shape", sb.shape, np.int64))
        suppression(self.b, nms, rows, steps, node.output[0], count_name, valid)
        count = self.b.op("Squeeze", count_name, self.b.const("axis0v", np.array([0], np.int64)))
        zero_with = frozenset() if sb is None else sb.count.zero_with | {sb.count.name}
        self.bounded[node.output[0]] = Bounded((rows, 3), 0, Count(count, rows, zero_with))
        self.nonneg.add(node.output[0])
        self.dtypes[node.output[0]] = np.int64
        self.used_nms = True

    # -- counts in shapes: known results, moved entries, linear arithmetic --
    def _known(self, node, value: np.ndarray, out: str = "") -> None:
        """`node`'s output (`out`, or its first) is `value`, known at build time."""
        out = out or node.output[0]
        const = self.b.scalar("known", value, value.dtype) if value.ndim == 0 else self.b.const("known", value)
        self.b.op("Identity", const, out=out)
        self.known[out] = value
        self.dtypes[out] = value.dtype.type

    def _sym_shape(self, name: str) -> tuple:
        entries, scalar = self.sym[name]
        return self.sym_shapes.get(name, () if scalar else (len(entries),))

    def _sym_moved(self, node) -> None:
        """A Transpose, Slice, Squeeze, Unsqueeze or Reshape of a symbolic
        shape with constant parameters: the node run on the entries'
        positions says where each entry goes."""
        from onnx.reference import ReferenceEvaluator

        entries, _ = self.sym[node.input[0]]
        where = np.arange(len(entries), dtype=np.int64).reshape(self._sym_shape(node.input[0]))
        feeds = {node.input[0]: where, **{i: self.known[i] for i in node.input[1:] if i}}
        try:
            moved = ReferenceEvaluator(_one_node_model(node, self.model)).run(None, feeds)
        except Exception:  # noqa: BLE001 - a node the evaluator cannot run on positions is refused
            self.refuse(node, "a shape computed from the data moved in a way ireegen does not follow")
        for out, positions in zip(node.output, moved):
            positions = np.asarray(positions)
            self.sym[out] = ([entries[int(k)] for k in positions.reshape(-1)], positions.ndim == 0)
            self.sym_shapes[out] = positions.shape

    def _sym_values(self, name: str, node) -> tuple:
        """(entries, shape) of a symbolic or known input."""
        if name in self.sym:
            return self.sym[name][0], self._sym_shape(name)
        value = self.known.get(name)
        if value is None:
            self.refuse(node, f"its input {name[:60]!r} is computed at run time")
        return [int(v) for v in value.reshape(-1)], value.shape

    def _broadcast(self, node) -> tuple:
        """The inputs' entries broadcast to one shape: (shape, list of entry lists)."""
        values = [self._sym_values(i, node) for i in node.input]
        shape = tuple(np.broadcast_shapes(*[s for _, s in values]))
        picked = []
        for entries, s in values:
            where = np.broadcast_to(np.arange(len(entries)).reshape(s), shape).reshape(-1)
            picked.append([entries[int(k)] for k in where])
        return shape, picked

    def _set_sym(self, name: str, entries: list, shape: tuple) -> None:
        self.sym[name] = (entries, shape == ())
        self.sym_shapes[name] = shape

    def _sym_equal(self, node) -> None:
        """Equal of a shape with a constant: a count compared with a value
        it cannot take is false; only zero remains a question (an empty test)."""
        shape, (left, right) = self._broadcast(node)
        decided = []
        for a, c in zip(left, right):
            if isinstance(a, Count) == isinstance(c, Count):
                if isinstance(a, Count) or isinstance(c, Count):
                    return self._empty_equal(node)
                decided.append(a == c)
                continue
            count, value = (a, c) if isinstance(a, Count) else (c, a)
            low, high = count.bounds()
            if low <= value <= high:
                return self._empty_equal(node)
            decided.append(False)
        self._known(node, np.array(decided, np.bool_).reshape(shape))

    def _sym_where(self, node) -> None:
        shape, (cond, x, y) = self._broadcast(node)
        self._set_sym(node.output[0], [a if c else b for c, a, b in zip(cond, x, y)], shape)

    def _sym_arithmetic(self, node) -> None:
        """Add, Sub and Mul of shapes: each entry a number, or a count as a
        linear form over the counts it comes from (Mul by a number only)."""
        shape, (left, right) = self._broadcast(node)
        entries = []
        for a, c in zip(left, right):
            if not isinstance(a, Count) and not isinstance(c, Count):
                entries.append(int(_SYM_ARITHMETIC[node.op_type](a, c)))
                continue
            if node.op_type == "Mul" and isinstance(a, Count) and isinstance(c, Count):
                self.refuse(node, "a product of counts")
            entries.append(self._combined(node.op_type, a, c))
        self._set_sym(node.output[0], entries, shape)

    def _combined(self, op: str, a, c) -> Count | int:
        """The count `a op c`, computed at run time, with its linear form."""
        forms = [x.linear() if isinstance(x, Count) else ((), int(x)) for x in (a, c)]
        (ta, oa), (tc, oc) = forms
        if op == "Mul":
            (terms, offset), k = (forms[0], oc) if isinstance(a, Count) else (forms[1], oa)
            terms, offset = [(n, coef * k, cap) for n, coef, cap in terms], offset * k
        else:
            sign = 1 if op == "Add" else -1
            terms, offset = list(ta) + [(n, sign * coef, cap) for n, coef, cap in tc], oa + sign * oc
        merged: dict = {}
        for n, coef, cap in terms:
            merged[n] = (merged.get(n, (0, cap))[0] + coef, cap)
        terms = tuple((n, coef, cap) for n, (coef, cap) in sorted(merged.items()) if coef)
        if not terms:
            return offset
        names = [x.name if isinstance(x, Count) else self.b.scalar("k", int(x), np.int64) for x in (a, c)]
        low, high = Count("", 0, terms=terms, offset=offset).bounds()
        return Count(self.b.op(op, *names), high, frozenset(), terms, offset)

    def _merged(self, node, bnd: Bounded, out_shape: tuple) -> tuple:
        """A reshape that merges the bounded axis with the axes after it: the
        valid entries stay in front, count times the merged axes' size."""
        before = int(np.prod(bnd.shape[: bnd.axis]))
        for d, size in enumerate(out_shape):
            if int(np.prod(out_shape[:d])) != before or size % bnd.shape[bnd.axis]:
                continue
            scale = size // bnd.shape[bnd.axis]
            for j in range(bnd.axis + 1, len(bnd.shape) + 1):
                if int(np.prod(bnd.shape[bnd.axis + 1 : j])) == scale and int(np.prod(out_shape[d + 1 :])) == int(
                    np.prod(bnd.shape[j:])
                ):
                    count = bnd.count if scale == 1 else self._combined("Mul", bnd.count, scale)
                    if scale != 1:
                        count = Count(count.name, size, bnd.count.zero_with | {bnd.count.name}, *count.linear())
                    return d, count
        self.refuse(node, "it splits or merges a bounded axis")

    def _pad(self, node) -> None:
        """A constant Pad of a bounded value that pads its bounded axis after
        the count to a length known at build time (torch's pad to a maximum
        number of detections): a static result."""
        bnd = self.bounded.get(node.input[0])
        attrs = node_attrs(node)
        if bnd is None or attrs.get("mode", b"constant") not in (b"constant", "constant"):
            self.refuse(node, "ireegen bounds a constant Pad of a bounded tensor")
        if len(node.input) > 3 and node.input[3]:
            self.refuse(node, "a Pad of chosen axes of a bounded tensor")
        pads, _ = self._sym_values(node.input[1], node)
        rank = len(bnd.shape)
        before, after = pads[:rank], pads[rank:]
        if any(isinstance(p, Count) for d, p in enumerate(pads) if d % rank != bnd.axis) or before[bnd.axis] != 0:
            self.refuse(node, "it pads a bounded tensor by an amount computed from the data, or before its entries")
        length = bnd.count if not after[bnd.axis] else self._combined("Add", bnd.count, after[bnd.axis])
        if isinstance(length, Count):
            self.refuse(node, "the padded length depends on the data")
        if self.user_cut and bnd.count.cap < length:
            # A fixed-size output (an Ultralytics export's max_det rows) would hold fewer detections than the model's.
            raise UsageError(
                f"{self.path}: --max-detections {self.max_detections} keeps fewer detections than "
                f"{node_text(node)} pads to a fixed {length} entries, so that output would differ from the model's; "
                "leave --max-detections out for this model"
            )
        fill = (
            node.input[2]
            if len(node.input) > 2 and node.input[2]
            else self.b.scalar("zero", 0, self.dtype(node.input[0]))
        )
        # Every entry past the count reads as the pad value; the bounded axis then takes `length` entries.
        cap = bnd.shape[bnd.axis]
        grow = max(length - cap, 0)
        static = [0] * rank + [grow if d == bnd.axis else 0 for d in range(rank)]
        value = self.b.op("Where", self.valid(bnd), node.input[0], fill)
        value = self.b.op("Pad", value, self.b.const("pads", np.array(static, np.int64)), fill)
        value = self.b.op("Slice", value, *_slice_to(self.b, bnd.axis, length))
        others = [0 if d == bnd.axis else p for d, p in enumerate(before)] + [
            0 if d == bnd.axis else p for d, p in enumerate(after)
        ]
        self.b.op("Pad", value, self.b.const("pads", np.array(others, np.int64)), fill, out=node.output[0])
        shape = [length if d == bnd.axis else s + others[d] + others[d + rank] for d, s in enumerate(bnd.shape)]
        self.shapes[node.output[0]] = shape
        self.dtypes[node.output[0]] = self.dtype(node.input[0])

    def _expand(self, node) -> None:
        """Expand of a bounded value to a shape computed from its count."""
        bnd = self.bounded.get(node.input[0])
        entries, _ = self._sym_values(node.input[1], node)
        if bnd is None:
            self.refuse(node, "an Expand to a shape computed from the data")
        rank = max(len(entries), len(bnd.shape))
        axis = bnd.axis + rank - len(bnd.shape)
        at = entries[axis - (rank - len(entries))] if axis >= rank - len(entries) else 1
        if any(isinstance(e, Count) for d, e in enumerate(entries) if d != axis - (rank - len(entries))) or not (
            at == 1 or (isinstance(at, Count) and at.name == bnd.count.name)
        ):
            self.refuse(node, "an Expand of a bounded axis to another count")
        target = [e.cap if isinstance(e, Count) else e for e in entries]
        if at != 1:
            target[axis - (rank - len(entries))] = bnd.shape[bnd.axis]
        out_shape = tuple(np.broadcast_shapes(tuple(bnd.shape), tuple(target)))
        self.b.op("Expand", node.input[0], self.b.const("shape", np.array(target, np.int64)), out=node.output[0])
        self.bounded[node.output[0]] = Bounded(out_shape, axis, bnd.count)
        self.dtypes[node.output[0]] = self.dtype(node.input[0])

    def _identity(self, node) -> None:
        name = node.input[0]
        for table in (self.bounded, self.sym, self.tests, self.dtypes):
            if name in table:
                table[node.output[0]] = table[name]
        if name in self.nonneg:
            self.nonneg.add(node.output[0])
        if name not in self.sym and name not in self.tests:  # a shape or a test is followed, not computed
            self.b.keep(node)

    def _keeps_sign(self, node) -> None:
        """Transpose, Slice, Squeeze, Unsqueeze, Reshape, Split: indices stay indices."""
        if node.input[0] in self.sym and all(i in self.known for i in node.input[1:] if i):
            return self._sym_moved(node)
        STRUCTURAL[node.op_type](self, node)
        if node.input[0] in self.nonneg:
            self.nonneg.update(o for o in node.output if o in self.bounded)


_OUT_DTYPE = {
    "Greater": np.bool_, "Less": np.bool_, "Equal": np.bool_, "GreaterOrEqual": np.bool_, "LessOrEqual": np.bool_,
    "Not": np.bool_, "And": np.bool_, "Or": np.bool_, "Xor": np.bool_, "IsNaN": np.bool_, "IsInf": np.bool_,
}  # fmt: skip
_ONNX_NP = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64}
_ELEMENTWISE = (
    "Add", "Sub", "Mul", "Div", "Cast", "Greater", "Less", "Equal", "GreaterOrEqual", "LessOrEqual", "Where",
    "Clip", "Sigmoid", "Exp", "Log", "Min", "Max", "Not", "And", "Or", "Neg", "Abs", "Sqrt", "Relu", "Floor",
    "Ceil", "Round", "Mod", "Pow", "Tanh", "Softplus", "Xor", "IsNaN", "IsInf", "Sign", "Reciprocal",
)  # fmt: skip
_CONST_OPS = (
    "Unsqueeze", "Squeeze", "Reshape", "Concat", "Gather", "Cast", "Identity", "Shape", "Add", "Mul", "Sub",
    "ConstantOfShape", "Equal", "Where", "ReduceMax", "ReduceMin", "Slice", "Transpose", "Div",
)  # fmt: skip
# Arithmetic on shapes whose entries may be counts (linear in the counts).
_SYM_ARITHMETIC = {"Add": lambda a, c: a + c, "Sub": lambda a, c: a - c, "Mul": lambda a, c: a * c}


def _min_max(walk: _Walk, node) -> None:
    if any(i in walk.sym for i in node.input):
        return walk._sym_reduce(node)
    return walk._elementwise(node)


HANDLERS = {
    **{op: _Walk._elementwise for op in _ELEMENTWISE},
    "Min": _min_max,
    "Max": _min_max,
    "Transpose": _Walk._keeps_sign,
    "GatherND": _Walk._gathernd,
    "Gather": _Walk._gather,
    "TopK": _Walk._topk,
    "Shape": _Walk._shape,
    "ConstantOfShape": _Walk._constant_of_shape,
    "Unsqueeze": _Walk._keeps_sign,
    "Squeeze": _Walk._keeps_sign,
    "Reshape": _Walk._keeps_sign,
    "Concat": _Walk._sym_concat,
    "ReduceMin": _Walk._reduce,
    "ReduceMax": _Walk._reduce,
    "ReduceProd": _Walk._reduce,
    "Slice": _Walk._keeps_sign,
    "Split": _Walk._keeps_sign,
    NMS: _Walk._nms,
    "Pad": _Walk._pad,
    "Expand": _Walk._expand,
    "Identity": _Walk._identity,
}


STRUCTURAL = {
    "Transpose": _Walk._transpose,
    "Unsqueeze": _Walk._sym_unsqueeze,
    "Squeeze": _Walk._reshaped,
    "Reshape": _Walk._reshaped,
    "Slice": _Walk._slice,
    "Split": _Walk._split,
}


def bound_tensors(model, path, max_detections: int | None) -> tuple:
    """Rewrites `model` in place as the module docstring says; returns the
    BoundedTensor of each graph output bounded, and whether a
    NonMaxSuppression was bounded on the way."""
    walk = _Walk(model, path, max_detections)
    return walk.run(), walk.used_nms


def ranked_topk(b: NodeBuilder, x: str, shape: tuple, axis: int, k: int, largest: int, values: str, indices: str):
    """Appends to `b` a sorted TopK of `k` along `axis` of `x` (static
    `shape`) as ranks: entry i's rank is the count of entries ahead of it
    (greater, for the largest; less, for the smallest) plus the equal ones
    at a lower index, ONNX Runtime's order; the ranks are a permutation,
    so each entry scatters to its rank and the first `k` are kept.  The
    comparisons are elementwise and reduced in one pass, where IREE 3.13
    sorts a TopK's whole axis with one scalar compare-and-swap at a time."""
    i64 = np.int64
    n, rank_dims = shape[axis], len(shape)
    trailing = (1,) * (rank_dims - axis - 1)
    axis_j = b.const("axis_j", np.array([axis + 1], i64))  # the axis of the entries compared with entry i
    mine = b.op("Unsqueeze", x, axis_j)  # [.., n (i), 1, ..]
    theirs = b.op("Unsqueeze", x, b.const("axis_i", np.array([axis], i64)))  # [.., 1, n (j), ..]
    ahead = b.op("Greater" if largest else "Less", theirs, mine)
    lower = b.op(
        "Less",
        b.const("index_j", np.arange(n, dtype=np.int32).reshape(1, n, *trailing)),
        b.const("index_i", np.arange(n, dtype=np.int32).reshape(n, 1, *trailing)),
    )
    ahead = b.op("Or", ahead, b.op("And", b.op("Equal", theirs, mine), lower))
    rank = b.op("ReduceSum", b.op("Cast", ahead, to=6), axis_j, keepdims=0)  # int32: n is far below 2^31
    rank = b.op("Cast", rank, to=7)
    position = b.op(
        "Expand",
        b.const("positions", np.arange(n, dtype=i64).reshape(n, *trailing)),
        b.const("shape", np.array(shape, i64)),
    )
    window = (
        b.const("start", np.array([0], i64)),
        b.const("end", np.array([k], i64)),
        b.const("axis", np.array([axis], i64)),
    )
    b.op("Slice", b.op("ScatterElements", x, rank, x, axis=axis), *window, out=values)
    b.op("Slice", b.op("ScatterElements", position, rank, position, axis=axis), *window, out=indices)


def _slice_to(b: NodeBuilder, axis: int, length: int) -> tuple:
    """Slice's inputs for [0:length] along `axis`."""
    return (
        b.const("start", np.array([0], np.int64)),
        b.const("end", np.array([length], np.int64)),
        b.const("axis", np.array([axis], np.int64)),
    )


def _array(tensor):
    from onnx import numpy_helper

    return tensor if isinstance(tensor, np.ndarray) else numpy_helper.to_array(tensor)


def _tensor(array):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array))


def _renamed(node, inputs, op_type: str = ""):
    """`node` reading `inputs`; as `op_type` (without the node's attributes) when given."""
    from onnx import helper

    copy = helper.make_node(op_type or node.op_type, list(inputs), list(node.output), name=node.name)
    if not op_type:
        copy.attribute.extend(node.attribute)
    return copy


def _dtypes(model) -> dict:
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001
        inferred = model
    out = {}
    for v in (*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output):
        if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type in _ONNX_NP:
            out[v.name] = _ONNX_NP[v.type.tensor_type.elem_type]
    for t in model.graph.initializer:
        if t.data_type in _ONNX_NP:
            out[t.name] = _ONNX_NP[t.data_type]
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].HasField("t"):
            dt = n.attribute[0].t.data_type
            if dt in _ONNX_NP:
                out[n.output[0]] = _ONNX_NP[dt]
    return out


def _one_node_model(node, model):
    from onnx import helper

    graph = helper.make_graph(
        [node],
        "fold",
        [helper.make_empty_tensor_value_info(i) for i in node.input if i],
        [helper.make_empty_tensor_value_info(o) for o in node.output],
    )
    return helper.make_model(graph, opset_imports=list(model.opset_import))


def _empty_test(node, producer: dict, known: dict) -> str | None:
    """The tensor an If's condition tests for having no elements:
    Equal(ReduceProd(Shape(x)), 0) or Equal(Size(x), 0), through Casts; else None."""
    value = node.input[0]
    n = producer.get(value)
    while n is not None and n.op_type == "Cast":
        n = producer.get(n.input[0])
    if n is None or n.op_type != "Equal":
        return None
    a, c = n.input
    if a in known:
        a, c = c, a
    zero = known.get(c)
    if zero is None or _array(zero).size != 1 or _array(zero).reshape(-1)[0] != 0:
        return None
    prod = producer.get(a)
    if prod is not None and prod.op_type == "Size":
        return prod.input[0]
    if prod is None or prod.op_type != "ReduceProd" or (len(prod.input) > 1 and prod.input[1]):
        return None
    shape = producer.get(prod.input[0])
    if shape is None or shape.op_type != "Shape" or node_attrs(shape):
        return None
    return shape.input[0]


def _empty_constants(graph) -> bool:
    """Whether every output of `graph` is a Constant with no elements."""
    consts = {n.output[0]: n for n in graph.node if n.op_type == "Constant"}
    for o in graph.output:
        n = consts.get(o.name)
        if n is None or not n.attribute or not n.attribute[0].HasField("t") or _array(n.attribute[0].t).size != 0:
            return False
    return len(graph.node) == len(graph.output)
