"""onnx_speed_rewrites' `linear-resize-as-matmuls`: a bilinear Resize of an
NCHW tensor (a segmentation head's upsampling: LRASPP's x8 to the image
size) as two MatMuls with constant interpolation matrices.

IREE 3.13 compiles a linear Resize into a gather per output pixel at
about 2.4x ONNX Runtime's time (LRASPP's 21 channels from 28x28 to 224x224:
6.8 ms against 2.8 ms; docs/peers.md, "Bilinear upsampling").  Linear
interpolation is separable: each output row is a weighted sum of at most
two input rows, so the Resize is Rh @ X @ Rw^T per image and channel, with
Rh [Hout, H] and Rw [Wout, W] holding each output coordinate's two weights
(ONNX's coordinate transformations, clamped at the edges as ONNX's linear
mode does).  Most of their entries are zero: the products do more
multiply-adds than the gathers, but as matrix products IREE runs them near
its peak.  An axis whose size does not change and whose scale is 1 keeps
its values and gets no product.
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, known_arrays, node_attrs, rewrite_nodes

# Output coordinate -> input coordinate, per coordinate_transformation_mode
# (ONNX's Resize), for an axis of `size` -> `out` with scale `scale`.
TRANSFORMS = {
    "half_pixel": lambda x, size, out, scale: (x + 0.5) / scale - 0.5,
    "pytorch_half_pixel": lambda x, size, out, scale: (x + 0.5) / scale - 0.5 if out > 1 else np.zeros_like(x),
    "align_corners": lambda x, size, out, scale: x * (size - 1) / (out - 1) if out > 1 else np.zeros_like(x),
    "asymmetric": lambda x, size, out, scale: x / scale,
}


def interpolation(size: int, out: int, scale: float, mode: str) -> np.ndarray:
    """The [out, size] float32 matrix of linear interpolation along one axis."""
    coords = np.clip(TRANSFORMS[mode](np.arange(out, dtype=np.float64), size, out, scale), 0, size - 1)
    low = np.floor(coords).astype(np.int64)
    high = np.minimum(low + 1, size - 1)
    frac = coords - low
    matrix = np.zeros((out, size), np.float64)
    np.add.at(matrix, (np.arange(out), low), 1 - frac)
    np.add.at(matrix, (np.arange(out), high), frac)
    return matrix.astype(np.float32)


def _text(value, default: str) -> str:
    value = value if value is not None else default
    return value.decode() if isinstance(value, bytes) else value


def _float_values(model) -> set:
    """The names of the graph's float32 values (inputs, initializers and
    what shape inference types)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - no types: nothing is taken
        return set()
    graph = inferred.graph
    typed = (*graph.value_info, *graph.input, *graph.output)
    names = {v.name for v in typed if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
    return names | {t.name for t in graph.initializer if t.data_type == onnx.TensorProto.FLOAT}


def linear_resize_as_matmuls(model, shapes: dict, values: dict) -> int:
    """Rewrites each Resize of a static 4-D float tensor in `linear` mode
    that scales only H and W, with a coordinate transformation of
    TRANSFORMS; returns how many.  Figures: docs/peers.md, "Bilinear
    upsampling"."""
    from onnx import numpy_helper

    graph = model.graph
    if not any(node.op_type == "Resize" for node in graph.node):
        return 0
    known = known_arrays(graph, values)
    floats = _float_values(model)

    def rewrite(node, out_nodes) -> bool:
        if node.op_type != "Resize" or node.domain not in ("", "ai.onnx") or len(node.output) != 1:
            return False
        if node.input[0] not in floats:  # the products are float32 (an image's uint8 Resize stays)
            return False
        a = node_attrs(node)
        dims, out_dims = shapes.get(node.input[0]) if node.input else None, shapes.get(node.output[0])
        mode = _text(a.get("coordinate_transformation_mode"), "half_pixel")
        if (
            _text(a.get("mode"), "nearest") != "linear"
            or mode not in TRANSFORMS
            or a.get("antialias", 0)
            or "axes" in a
            or _text(a.get("keep_aspect_ratio_policy"), "stretch") != "stretch"
            or not dims
            or not out_dims
            or len(dims) != 4
            or len(out_dims) != 4
            or not all(isinstance(d, int) and d > 0 for d in (*dims, *out_dims))
            or list(dims[:2]) != list(out_dims[:2])
        ):
            return False
        scales = node.input[2] if len(node.input) > 2 else ""
        if scales:  # the scales as given drive the coordinates (ONNX); sizes: out / size
            if scales not in known:
                return False
            given = numpy_helper.to_array(known[scales]).astype(np.float64)
            if given.shape != (4,) or list(given[:2]) != [1, 1] or not all(given > 0):
                return False
            factors = list(given[2:])
        else:
            factors = [out_dims[k] / dims[k] for k in (2, 3)]
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'resize'}/ireegen.resize")
        (h, w), (ho, wo) = dims[2:], out_dims[2:]
        same_h, same_w = (h == ho and factors[0] == 1), (w == wo and factors[1] == 1)
        rows = None if same_h else b.const("rows", interpolation(h, ho, factors[0], mode))
        cols = None if same_w else b.const("cols", np.ascontiguousarray(interpolation(w, wo, factors[1], mode).T))
        x = node.input[0]
        if rows is None and cols is None:
            b.op("Identity", x, out=node.output[0], name=node.name)
            return True
        # The cheaper order: multiply-adds of widening first against heightening first.
        width_first = h * w * wo + ho * h * wo <= ho * h * w + ho * w * wo
        steps = [("cols", cols), ("rows", rows)] if width_first else [("rows", rows), ("cols", cols)]
        steps = [(kind, m) for kind, m in steps if m is not None]
        for k, (kind, matrix) in enumerate(steps):
            last = {"out": node.output[0], "name": node.name} if k == len(steps) - 1 else {}
            x = b.op("MatMul", x, matrix, **last) if kind == "cols" else b.op("MatMul", matrix, x, **last)
        return True

    return rewrite_nodes(graph, rewrite)
