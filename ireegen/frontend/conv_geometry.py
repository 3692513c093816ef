"""The padding and stride of each 2-D convolution of an ONNX model.

The int8 match spec (compile/int8_match.py) matches a convolution's padding
and stride exactly, one matcher per form; the committed spec holds the
common forms, and emit adds the forms a model needs that it lacks.  This
reads those forms off the model's Conv nodes: (top, left, bottom, right)
padding and one stride for both axes.  A Conv the kernels do not take
(a stride per axis, a dilation, auto_pad SAME whose padding needs shapes
the model does not declare) is left out: IREE's own code computes it.

The model is data: only the attributes' integer values are read, checked to
be small non-negative numbers, and nothing of them becomes text but those
integers.
"""

from __future__ import annotations

from pathlib import Path

# Forms past these bounds are left to IREE's code: a padding or a stride
# this large is not a convolution the kernels were tested on.
MAX_PAD = 16
MAX_STRIDE = 8


def _ints(node, name: str, default: list) -> list:
    for a in node.attribute:
        if a.name == name:
            return list(a.ints)
    return default


def _string(node, name: str, default: str) -> str:
    for a in node.attribute:
        if a.name == name:
            return a.s.decode("utf-8", "replace")
    return default


def _spatial_shapes(model) -> dict:
    """value name -> (H, W) for the 4-D values whose shape shape inference
    knows (for auto_pad SAME)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - no shapes: auto_pad SAME convs are left out
        return {}
    shapes = {}
    for v in [*inferred.graph.input, *inferred.graph.value_info]:
        dims = v.type.tensor_type.shape.dim
        if len(dims) == 4 and all(d.HasField("dim_value") for d in dims[2:]):
            shapes[v.name] = (dims[2].dim_value, dims[3].dim_value)
    return shapes


def _same_pads(size: int, kernel: int, stride: int, upper: bool) -> tuple:
    """ONNX's auto_pad SAME_UPPER / SAME_LOWER padding of one axis."""
    out = -(-size // stride)
    total = max(0, (out - 1) * stride + kernel - size)
    small, large = total // 2, total - total // 2
    return (small, large) if upper else (large, small)


def conv_geometries(model_path: Path) -> list:
    """Sorted [(pads (top, left, bottom, right), stride)] of the model's 2-D
    Convs with one stride for both axes and no dilation."""
    import onnx

    model = onnx.load(str(model_path), load_external_data=False)
    weights = {i.name: list(i.dims) for i in model.graph.initializer}
    shapes = None
    out = set()
    for node in model.graph.node:
        if node.op_type != "Conv" or node.domain not in ("", "ai.onnx"):
            continue
        strides = _ints(node, "strides", [1, 1])
        dilations = _ints(node, "dilations", [1, 1])
        if len(strides) != 2 or strides[0] != strides[1] or any(d != 1 for d in dilations):
            continue
        stride = strides[0]
        auto_pad = _string(node, "auto_pad", "NOTSET")
        if auto_pad in ("NOTSET", "VALID"):
            pads = _ints(node, "pads", [0, 0, 0, 0]) if auto_pad == "NOTSET" else [0, 0, 0, 0]
        elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            shapes = _spatial_shapes(model) if shapes is None else shapes
            kernel = _ints(node, "kernel_shape", [])
            if len(kernel) != 2 and len(node.input) > 1:
                kernel = weights.get(node.input[1], [])[2:]
            if node.input[0] not in shapes or len(kernel) != 2:
                continue
            h, w = shapes[node.input[0]]
            upper = auto_pad == "SAME_UPPER"
            (top, bottom), (left, right) = (
                _same_pads(h, kernel[0], stride, upper),
                _same_pads(w, kernel[1], stride, upper),
            )
            pads = [top, left, bottom, right]
        else:
            continue
        if len(pads) != 4 or not 1 <= stride <= MAX_STRIDE or not all(0 <= p <= MAX_PAD for p in pads):
            continue
        out.add((tuple(int(p) for p in pads), int(stride)))
    return sorted(out)
