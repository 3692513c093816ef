"""Rewrites of the `ai.onnx.ml` ops that scikit-learn's converter
(skl2onnx) writes and IREE 3.13 cannot lower at all ("failed to legalize
operation 'torch.operator'"), into default-domain ops that compute the same
thing as ONNX Runtime.  Each applies only to the forms whose ONNX Runtime
semantics it reproduces; any other form stays as written, and IREE's
refusal names the node.

- Scaler: (X - offset) * scale.
- LinearRegressor: a Gemm.
- TreeEnsembleClassifier / TreeEnsembleRegressor (random forests, gradient
  boosting, decision trees): every tree walked at once, one level per step
  (Gather the node's feature and threshold, compare, Where to the child),
  for as many steps as the deepest tree; leaves point to themselves.  Then
  the leaf weights are gathered and summed over the trees.
- SVMRegressor: the kernel against every support vector, weighted and
  summed; SVMClassifier: the one-against-one votes of every pair of
  classes.
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, elem_types, node_attrs, rewrite_nodes

ML = "ai.onnx.ml"
FLOAT, DOUBLE = 1, 11
INTEGER_TYPES = (2, 3, 4, 5, 6, 7, 12, 13)  # cast to float, as ONNX Runtime reads them
BRANCH_OPS = {
    "BRANCH_LEQ": "LessOrEqual",
    "BRANCH_LT": "Less",
    "BRANCH_GTE": "GreaterOrEqual",
    "BRANCH_GT": "Greater",
    "BRANCH_EQ": "Equal",
}


def _text(value, default="") -> str:
    value = default if value is None else value
    return value.decode() if isinstance(value, bytes) else value


def _floats(a: dict, name: str) -> np.ndarray | None:
    """A float list attribute, or its `_as_tensor` form."""
    from onnx import numpy_helper

    if a.get(name) is not None:
        return np.asarray(a[name], np.float64)
    if a.get(f"{name}_as_tensor") is not None:
        return numpy_helper.to_array(a[f"{name}_as_tensor"]).astype(np.float64).ravel()
    return None


def _float_input(b: NodeBuilder, x: str, elem_types: dict) -> str | None:
    """`x` as float32 (integers cast, as ONNX Runtime does); None for double
    (ONNX Runtime keeps double precision there)."""
    t = elem_types.get(x)
    if t == FLOAT:
        return x
    if t in INTEGER_TYPES:
        return b.op("Cast", x, to=FLOAT)
    return None


def _rows(shapes: dict, x: str) -> tuple | None:
    dims = shapes.get(x)
    return tuple(dims) if dims is not None and len(dims) == 2 else None


def _rewrite_each(model, op_type: str, build) -> int:
    """Calls build(node, out_nodes, types) for each `ai.onnx.ml` `op_type`
    node, `types` being the model's element types ({value name: onnx type},
    inferred once, and only for a model that has such a node); a node for
    which it returns False is kept as written."""
    graph = model.graph
    types = None

    def rewrite(node, out_nodes) -> bool:
        nonlocal types
        if node.op_type != op_type or node.domain != ML:
            return False
        types = elem_types(model) if types is None else types
        mark, constants = len(out_nodes), len(graph.initializer)
        if build(node, out_nodes, types):
            return True
        del out_nodes[mark:]  # a form not reproduced: nothing of it stays
        del graph.initializer[constants:]
        return False

    return rewrite_nodes(graph, rewrite)


# ---------------------------------------------------------------------------
# Scaler, LinearRegressor


def scaler_as_arithmetic(model, shapes: dict, values: dict) -> int:
    """`Scaler` (skl2onnx's StandardScaler, MinMaxScaler, ...): (X - offset) * scale."""

    def build(node, out_nodes, types):
        a = node_attrs(node)
        x = node.input[0]
        rows = _rows(shapes, x)
        offset = np.asarray(a.get("offset") or [0.0], np.float32)
        scale = np.asarray(a.get("scale") or [1.0], np.float32)
        # ONNX Runtime requires as many offsets as scales: one, or one per column.
        if rows is None or offset.size != scale.size or offset.size not in (1, rows[1]):
            return False
        b = NodeBuilder(model.graph, out_nodes, f"{node.name or 'scaler'}/ireegen.scale")
        xf = _float_input(b, x, types)
        if xf is None:
            return False
        shifted = b.op("Sub", xf, b.const("offset", offset))
        b.op("Mul", shifted, b.const("scale", scale), out=node.output[0], name=node.name)
        return True

    return _rewrite_each(model, "Scaler", build)


def linear_regressor_as_gemm(model, shapes: dict, values: dict) -> int:
    """`LinearRegressor` (skl2onnx's LinearRegression, Ridge, Lasso, ...)
    with no post-transform: a Gemm, Y = X W^T + intercepts."""

    def build(node, out_nodes, types):
        a = node_attrs(node)
        x = node.input[0]
        rows = _rows(shapes, x)
        targets = int(a.get("targets", 1))
        coef = np.asarray(a.get("coefficients") or [], np.float32)
        intercepts = np.asarray(a.get("intercepts") or np.zeros(targets), np.float32)
        if (
            rows is None
            or _text(a.get("post_transform"), "NONE") != "NONE"
            or coef.size != targets * rows[1]
            or intercepts.size != targets
        ):
            return False
        b = NodeBuilder(model.graph, out_nodes, f"{node.name or 'linear'}/ireegen.gemm")
        xf = _float_input(b, x, types)
        if xf is None:
            return False
        weights = b.const("weights", coef.reshape(targets, rows[1]))
        b.op("Gemm", xf, weights, b.const("bias", intercepts), out=node.output[0], name=node.name, transB=1)
        return True

    return _rewrite_each(model, "LinearRegressor", build)


# ---------------------------------------------------------------------------
# Tree ensembles


class _Forest:
    """The trees of a TreeEnsemble* node as flat arrays over every node of
    every tree (index g): feature, threshold, true and false child (leaves
    point to themselves), plus the roots and the deepest path.  `error` says
    why the form is not one this rewrite reproduces."""

    def __init__(self, a: dict, features: int):
        self.error = ""
        tree_ids = list(a.get("nodes_treeids") or [])
        node_ids = list(a.get("nodes_nodeids") or [])
        modes = [_text(m) for m in a.get("nodes_modes") or []]
        thresholds = _floats(a, "nodes_values")
        feature_ids = list(a.get("nodes_featureids") or [])
        true_ids = list(a.get("nodes_truenodeids") or [])
        false_ids = list(a.get("nodes_falsenodeids") or [])
        count = len(tree_ids)
        tracks = list(a.get("nodes_missing_value_tracks_true") or [0] * count)
        if not count or any(len(v) != count for v in (node_ids, modes, feature_ids, true_ids, false_ids, tracks)):
            self.error = "node attributes of different lengths"
            return
        if thresholds is None or thresholds.size != count:
            self.error = "no threshold per node"
            return
        self.index = {(t, n): g for g, (t, n) in enumerate(zip(tree_ids, node_ids))}
        if len(self.index) != count:
            self.error = "a node id repeated in a tree"
            return
        branch_modes = {m for m in modes if m != "LEAF"}
        if len(branch_modes) > 1 or not branch_modes <= set(BRANCH_OPS):
            self.error = f"branch modes {sorted(branch_modes)}"
            return
        self.compare = BRANCH_OPS[branch_modes.pop()] if branch_modes else "LessOrEqual"
        self.feature = np.zeros(count, np.int64)
        self.threshold = thresholds.astype(np.float32)
        self.true_child = np.arange(count, dtype=np.int64)
        self.false_child = np.arange(count, dtype=np.int64)
        self.tracks_missing = np.asarray(tracks, bool)
        self.leaf = np.array([m == "LEAF" for m in modes])
        for g in range(count):
            if self.leaf[g]:
                continue
            t = tree_ids[g]
            yes, no = self.index.get((t, true_ids[g])), self.index.get((t, false_ids[g]))
            if yes is None or no is None or not 0 <= feature_ids[g] < features:
                self.error = f"node {node_ids[g]} of tree {t} points outside its tree or its input"
                return
            self.feature[g], self.true_child[g], self.false_child[g] = feature_ids[g], yes, no
        children = set(self.true_child[~self.leaf].tolist()) | set(self.false_child[~self.leaf].tolist())
        self.roots = [g for g in range(count) if g not in children]
        self.tree_of = np.asarray(tree_ids)
        if sorted(self.tree_of[self.roots].tolist()) != sorted(set(tree_ids)):
            self.error = "not one root per tree"
            return
        self.depth = self._depth()
        if self.depth is None:
            self.error = "a tree with a cycle"

    def _depth(self) -> int | None:
        depth, frontier, seen = 0, list(self.roots), set()
        while True:
            nxt = []
            for g in frontier:
                if g in seen:
                    return None
                seen.add(g)
                if not self.leaf[g]:
                    nxt += [int(self.true_child[g]), int(self.false_child[g])]
            if not nxt:
                return depth
            frontier, depth = nxt, depth + 1

    def leaf_weights(self, tree_ids, node_ids, ids, weights, width: int) -> np.ndarray | None:
        """[nodes, width] weights of each leaf per class or target, or None
        if an entry names a node that is not a leaf or an id out of range."""
        table = np.zeros((len(self.leaf), width), np.float32)
        for t, n, k, w in zip(tree_ids, node_ids, ids, weights):
            g = self.index.get((t, n))
            if g is None or not self.leaf[g] or not 0 <= k < width:
                return None
            table[g, k] += w
        return table

    def walk(self, b: NodeBuilder, x: str, rows: int) -> str:
        """The leaf index [rows, trees] each row of `x` reaches in each tree."""
        roots = np.asarray(self.roots, np.int64).reshape(1, -1)
        node = b.op("Expand", b.const("roots", roots), b.const("rows_by_trees", np.array([rows, roots.size], np.int64)))
        feature = b.const("feature", self.feature)
        threshold = b.const("threshold", self.threshold)
        true_child = b.const("true_child", self.true_child)
        false_child = b.const("false_child", self.false_child)
        tracks = b.const("tracks_missing", self.tracks_missing) if self.tracks_missing.any() else None
        for _ in range(self.depth):
            value = b.op("GatherElements", x, b.op("Gather", feature, node, axis=0), axis=1)
            taken = b.op(self.compare, value, b.op("Gather", threshold, node, axis=0))
            if tracks is not None:  # a missing value (NaN) goes where the node says
                missing = b.op("And", b.op("IsNaN", value), b.op("Gather", tracks, node, axis=0))
                taken = b.op("Or", taken, missing)
            node = b.op(
                "Where", taken, b.op("Gather", true_child, node, axis=0), b.op("Gather", false_child, node, axis=0)
            )
        return node

    def summed(self, b: NodeBuilder, leaves: str, table: np.ndarray) -> str:
        """Sum over the trees of each reached leaf's weights: [rows, width]."""
        gathered = b.op("Gather", b.const("leaf_weights", table), leaves, axis=0)  # [rows, trees, width]
        return b.op("ReduceSum", gathered, b.const("tree_axis", np.array([1], np.int64)), keepdims=0)


def _forest_of(node, shapes, types):
    """(attributes, _Forest, rows) of a tree-ensemble node over a float or
    integer [rows, features] input, or None."""
    a = node_attrs(node)
    rows = _rows(shapes, node.input[0])
    if rows is None or (types.get(node.input[0]) != FLOAT and types.get(node.input[0]) not in INTEGER_TYPES):
        return None
    forest = _Forest(a, rows[1])
    return None if forest.error else (a, forest, rows)


def _walked(model, node, out_nodes, types, forest, rows):
    """A builder for `node`'s replacement and the leaves its rows reach."""
    b = NodeBuilder(model.graph, out_nodes, f"{node.name or 'forest'}/ireegen.trees")
    return b, forest.walk(b, _float_input(b, node.input[0], types), rows[0])


def tree_ensemble_classifier_as_traversal(model, shapes: dict, values: dict) -> int:
    """`TreeEnsembleClassifier` with integer labels, in the two forms
    ONNX Runtime defines by argmax: more than two classes, each scored by
    some tree on every leaf of it (or given a base value); and two classes
    scored by one weight (class id 0: skl2onnx's binary forests and
    boosting), the label by that score against 0.5 (all weights
    non-negative: a probability) or 0, as ONNX Runtime does."""

    def build(node, out_nodes, types):
        found = _forest_of(node, shapes, types)
        if found is None:
            return False
        a, forest, rows = found
        labels = list(a.get("classlabels_int64s") or [])
        weights = _floats(a, "class_weights")
        ids = list(a.get("class_ids") or [])
        base = _floats(a, "base_values")
        base = np.zeros(0) if base is None else base
        post = _text(a.get("post_transform"), "NONE")
        if len(labels) < 2 or weights is None or len(ids) != weights.size:
            return False
        table = forest.leaf_weights(
            a.get("class_treeids") or [], a.get("class_nodeids") or [], ids, weights, len(labels)
        )
        if table is None:
            return False
        label_out, score_out = (list(node.output) + ["", ""])[:2]
        if len(labels) > 2:
            if not _scored_on_every_leaf(forest, a, ids, len(labels), base) or post not in (
                "NONE",
                "SOFTMAX",
                "LOGISTIC",
            ):
                return False
            b, leaves = _walked(model, node, out_nodes, types, forest, rows)
            classes = b.const("labels", np.asarray(labels, np.int64))
            scores = forest.summed(b, leaves, table)
            if base.size:
                scores = b.op("Add", scores, b.const("base", base.astype(np.float32)))
            if label_out:
                b.op("Gather", classes, b.op("ArgMax", scores, axis=1, keepdims=0), axis=0, out=label_out)
            if score_out:
                transform = {"NONE": ("Identity", {}), "SOFTMAX": ("Softmax", {"axis": 1}), "LOGISTIC": ("Sigmoid", {})}
                op, attrs = transform[post]
                b.op(op, scores, out=score_out, **attrs)
            return True
        # Two classes, one score (class id 0).
        positive = bool(weights.min() >= 0)
        if set(ids) != {0} or base.size > 1 or (positive and post != "NONE") or post not in ("NONE", "LOGISTIC"):
            return False
        b, leaves = _walked(model, node, out_nodes, types, forest, rows)
        score = forest.summed(b, leaves, table[:, :1])  # [rows, 1]
        if base.size:
            score = b.op("Add", score, b.const("base", base.astype(np.float32)))
        if label_out:
            cut = b.const("cut", np.array([0.5 if positive else 0.0], np.float32))
            wins = b.op("Squeeze", b.op("Greater", score, cut), b.const("column", np.array([1], np.int64)))
            first = b.const("negative", np.asarray(labels[:1], np.int64))
            second = b.const("positive", np.asarray(labels[1:2], np.int64))
            b.op("Where", wins, second, first, out=label_out)
        if score_out:
            if positive:  # a probability: [1 - p, p]
                other = b.op("Sub", b.const("one", np.array([1], np.float32)), score)
            else:  # a margin: [-s, s], through the logistic function if asked
                other = b.op("Neg", score)
            pair = b.op("Concat", other, score, axis=1)
            b.op("Sigmoid" if post == "LOGISTIC" else "Identity", pair, out=score_out)
        return True

    return _rewrite_each(model, "TreeEnsembleClassifier", build)


def _scored_on_every_leaf(forest: _Forest, a: dict, ids: list, classes: int, base) -> bool:
    """Whether every class is scored for every row: each class has a base
    value or a tree that scores it on all its leaves, and a tree scores a
    class on all its leaves or on none (ONNX Runtime's argmax skips a
    class no leaf reached scored)."""
    scored = {}
    for t, k in zip(a.get("class_treeids") or [], ids):
        scored.setdefault(t, set()).add(k)
    per_tree_leaves = {}
    for g in np.flatnonzero(forest.leaf):
        per_tree_leaves.setdefault(int(forest.tree_of[g]), []).append(g)
    entries = {}
    for t, n, k in zip(a.get("class_treeids") or [], a.get("class_nodeids") or [], ids):
        entries.setdefault((t, k), set()).add(forest.index[(t, n)])
    for (t, _k), leaves in entries.items():
        if len(leaves) != len(per_tree_leaves.get(t, [])):
            return False
    covered = set().union(*scored.values()) if scored else set()
    return base.size == classes or covered == set(range(classes))


def tree_ensemble_regressor_as_traversal(model, shapes: dict, values: dict) -> int:
    """`TreeEnsembleRegressor` summing or averaging its trees, with no
    post-transform (skl2onnx's forests, boosting and decision trees)."""

    def build(node, out_nodes, types):
        found = _forest_of(node, shapes, types)
        if found is None:
            return False
        a, forest, rows = found
        targets = int(a.get("n_targets", 1))
        weights = _floats(a, "target_weights")
        base = _floats(a, "base_values")
        base = np.zeros(0) if base is None else base
        aggregate = _text(a.get("aggregate_function"), "SUM")
        ids = list(a.get("target_ids") or [])
        if (
            weights is None
            or len(ids) != weights.size
            or aggregate not in ("SUM", "AVERAGE")
            or _text(a.get("post_transform"), "NONE") != "NONE"
            or base.size not in (0, targets)
        ):
            return False
        table = forest.leaf_weights(a.get("target_treeids") or [], a.get("target_nodeids") or [], ids, weights, targets)
        if table is None:
            return False
        if aggregate == "AVERAGE":
            table = table / np.float32(len(forest.roots))
        b, leaves = _walked(model, node, out_nodes, types, forest, rows)
        result = forest.summed(b, leaves, table)
        b.op(
            "Add",
            result,
            b.const("base", (base if base.size else np.zeros(targets)).astype(np.float32)),
            out=node.output[0],
            name=node.name,
        )
        return True

    return _rewrite_each(model, "TreeEnsembleRegressor", build)


# ---------------------------------------------------------------------------
# Support vector machines


def _kernel(b: NodeBuilder, kind: str, params, x: str, vectors: np.ndarray) -> str | None:
    """K(x, sv) for every row and support vector: [rows, vectors]."""
    gamma, coef0, degree = (list(params) + [0.0, 0.0, 3.0])[:3]
    sv = b.const("support_vectors", vectors.astype(np.float32))
    if kind == "RBF":  # exp(-gamma |x - sv|^2), the difference taken directly, as ONNX Runtime does
        rows = b.op("Unsqueeze", x, b.const("row_axis", np.array([1], np.int64)))
        diff = b.op("Sub", rows, sv)
        distance = b.op(
            "ReduceSum", b.op("Mul", diff, diff), b.const("feature_axis", np.array([2], np.int64)), keepdims=0
        )
        return b.op("Exp", b.op("Mul", distance, b.const("minus_gamma", np.array(-gamma, np.float32))))
    dot = b.op("Gemm", x, sv, transB=1)
    if kind == "LINEAR":
        return dot
    scaled = b.op(
        "Add",
        b.op("Mul", dot, b.const("gamma", np.array(gamma, np.float32))),
        b.const("coef0", np.array(coef0, np.float32)),
    )
    if kind == "POLY":
        return b.op("Pow", scaled, b.const("degree", np.array(degree, np.float32)))
    if kind == "SIGMOID":
        return b.op("Tanh", scaled)
    return None


def svm_regressor_as_kernels(model, shapes: dict, values: dict) -> int:
    """`SVMRegressor` (skl2onnx's SVR, NuSVR, OneClassSVM): the sum of
    coefficient x kernel over the support vectors, plus rho (one-class: its
    sign as +1 / -1); or, with no support vectors, a linear model."""

    def build(node, out_nodes, types):
        a = node_attrs(node)
        x = node.input[0]
        rows = _rows(shapes, x)
        coef = np.asarray(a.get("coefficients") or [], np.float32)
        supports = int(a.get("n_supports", 0))
        vectors = np.asarray(a.get("support_vectors") or [], np.float32)
        rho = np.asarray(a.get("rho") or [0.0], np.float32)
        kind = _text(a.get("kernel_type"), "LINEAR")
        if rows is None or _text(a.get("post_transform"), "NONE") != "NONE" or rho.size != 1:
            return False
        b = NodeBuilder(model.graph, out_nodes, f"{node.name or 'svm'}/ireegen.svm")
        xf = _float_input(b, x, types)
        if xf is None:
            return False
        if supports:
            if vectors.size != supports * rows[1] or coef.size != supports:
                return False
            k = _kernel(b, kind, a.get("kernel_params") or [], xf, vectors.reshape(supports, rows[1]))
            if k is None:
                return False
            score = b.op("MatMul", k, b.const("coefficients", coef.reshape(supports, 1)))
        else:
            if coef.size != rows[1]:
                return False
            score = b.op("MatMul", xf, b.const("coefficients", coef.reshape(rows[1], 1)))
        score = b.op("Add", score, b.const("rho", rho))
        if int(a.get("one_class", 0)):
            positive = b.op("Greater", score, b.const("zero", np.array(0, np.float32)))
            score = b.op(
                "Where", positive, b.const("plus", np.array(1, np.float32)), b.const("minus", np.array(-1, np.float32))
            )
        b.op("Identity", score, out=node.output[0], name=node.name)
        return True

    return _rewrite_each(model, "SVMRegressor", build)


# What ireegen rewrites of each ai.onnx.ml op (onnx_rewrites.REWRITES), for
# the refusal of a node left as written.
REWRITTEN_FORMS = {
    "ArrayFeatureExtractor": "an input of known rank",
    "LinearClassifier": "integer labels, one score per class",
    "Normalizer": "L1, L2 or MAX over the rows of a 2-D input",
    "Scaler": "a 2-D float or integer input, as many offsets as scales (one, or one per column)",
    "LinearRegressor": "no post-transform",
    "TreeEnsembleClassifier": "integer labels, one branch mode, float or integer input; more than two classes, "
    "or two scored by class id 0",
    "TreeEnsembleRegressor": "SUM or AVERAGE, no post-transform, one branch mode, float or integer input",
    "SVMRegressor": "no post-transform, a 2-D float or integer input",
    "SVMClassifier": "support vectors, integer labels, no probability model (prob_a), no post-transform",
}
HINTS = {
    "ZipMap": "convert the model without it (skl2onnx: options={id(model): {'zipmap': False}})",
}


def unrewritten_ml_node(model) -> str | None:
    """One line on the first `ai.onnx.ml` node left after the rewrites (IREE
    lowers none), or None."""
    for i, node in enumerate(model.graph.node):
        if node.domain != ML:
            continue
        name = node.name or f"#{i}"
        if node.op_type in HINTS:
            help_text = HINTS[node.op_type]
        elif node.op_type in REWRITTEN_FORMS:
            help_text = f"ireegen rewrites it only in this form: {REWRITTEN_FORMS[node.op_type]}"
        else:
            help_text = f"ireegen rewrites only {', '.join(sorted(REWRITTEN_FORMS))}"
        return f"node {name!r} (ai.onnx.ml.{node.op_type}): IREE 3.13 lowers no ai.onnx.ml op; {help_text}"
    return None


def svm_classifier_as_votes(model, shapes: dict, values: dict) -> int:
    """`SVMClassifier` with support vectors, integer labels and no
    probability model (skl2onnx's SVC, NuSVC): ONNX Runtime's one-against-one
    scheme.  Every pair of classes (i, j) scores the kernels of both
    classes' support vectors with its coefficients, plus its rho; a positive
    score is a vote for i, else for j; the label is the first class with the
    most votes, and the scores are the pairs' (two classes: -s and s)."""

    def build(node, out_nodes, types):
        a = node_attrs(node)
        x = node.input[0]
        rows = _rows(shapes, x)
        labels = list(a.get("classlabels_ints") or [])
        per_class = [int(v) for v in a.get("vectors_per_class") or []]
        coef = np.asarray(a.get("coefficients") or [], np.float32)
        vectors = np.asarray(a.get("support_vectors") or [], np.float32)
        rho = np.asarray(a.get("rho") or [], np.float32)
        classes, count = len(labels), sum(per_class)
        pairs = [(i, j) for i in range(classes) for j in range(i + 1, classes)]
        if (
            rows is None
            or classes < 2
            or a.get("prob_a")
            or _text(a.get("post_transform"), "NONE") != "NONE"
            or len(per_class) != classes
            or not count
            or vectors.size != count * rows[1]
            or coef.size != (classes - 1) * count
            or rho.size < len(pairs)
        ):
            return False
        starts = np.concatenate([[0], np.cumsum(per_class)[:-1]]).astype(int)
        coef = coef.reshape(classes - 1, count)
        # pair_coefficients[v, p]: support vector v's weight in pair p's score.
        pair_coefficients = np.zeros((count, len(pairs)), np.float32)
        for p, (i, j) in enumerate(pairs):
            mine, theirs = slice(starts[i], starts[i] + per_class[i]), slice(starts[j], starts[j] + per_class[j])
            pair_coefficients[mine, p] = coef[j - 1, mine]
            pair_coefficients[theirs, p] = coef[i, theirs]
        b = NodeBuilder(model.graph, out_nodes, f"{node.name or 'svc'}/ireegen.svc")
        xf = _float_input(b, x, types)
        if xf is None:
            return False
        k = _kernel(
            b, _text(a.get("kernel_type"), "LINEAR"), a.get("kernel_params") or [], xf, vectors.reshape(count, rows[1])
        )
        if k is None:
            return False
        scores = b.op(
            "Add", b.op("MatMul", k, b.const("pair_coefficients", pair_coefficients)), b.const("rho", rho[: len(pairs)])
        )
        label_out, score_out = (list(node.output) + ["", ""])[:2]
        if label_out:
            for_first = np.zeros((len(pairs), classes), np.float32)
            for_second = np.zeros((len(pairs), classes), np.float32)
            for p, (i, j) in enumerate(pairs):
                for_first[p, i], for_second[p, j] = 1, 1
            positive = b.op("Cast", b.op("Greater", scores, b.const("zero", np.array(0, np.float32))), to=FLOAT)
            negative = b.op("Sub", b.const("one", np.array(1, np.float32)), positive)
            votes = b.op(
                "Add",
                b.op("MatMul", positive, b.const("votes_first", for_first)),
                b.op("MatMul", negative, b.const("votes_second", for_second)),
            )
            best = b.op("ArgMax", votes, axis=1, keepdims=0)
            b.op("Gather", b.const("labels", np.asarray(labels, np.int64)), best, axis=0, out=label_out)
        if score_out:
            if classes == 2:
                b.op("Concat", b.op("Neg", scores), scores, axis=1, out=score_out)
            else:
                b.op("Identity", scores, out=score_out)
        return True

    return _rewrite_each(model, "SVMClassifier", build)
