"""The padding and stride of each 2-D convolution of an ONNX model, and
the strides of its average pools.

The int8 match spec (compile/int8_match.py) matches a convolution's padding
and stride exactly, one matcher per form; the committed spec holds the
common forms, and emit adds the forms a model needs that it lacks.  This
reads those forms off the model's Conv nodes: (top, left, bottom, right)
padding and one stride for both axes.  A Conv the kernels do not take
(a stride per axis, a dilation) is left out: IREE's own code computes it.
So is auto_pad SAME_UPPER / SAME_LOWER: IREE's import writes that padding
as a fill and a copy, not as the `tensor.pad` the spec matches (measured
with IREE 3.13), so no matcher would apply.

The model is data: only the attributes' integer values are read, checked to
be small non-negative numbers, and nothing of them becomes text but those
integers.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class KernelGeometry:
    """What the int8 match spec matches exactly, read off one model."""

    convs: list  # sorted [(pads (top, left, bottom, right), stride)]
    pool_strides: list  # sorted strides


def _conv_form(node):
    """(pads, stride) of a 2-D Conv the kernels take, else None."""
    strides = _ints(node, "strides", [1, 1])
    dilations = _ints(node, "dilations", [1, 1])
    if len(strides) != 2 or strides[0] != strides[1] or any(d != 1 for d in dilations):
        return None
    stride = strides[0]
    auto_pad = _string(node, "auto_pad", "NOTSET")
    if auto_pad not in ("NOTSET", "VALID"):
        return None
    pads = _ints(node, "pads", [0, 0, 0, 0]) if auto_pad == "NOTSET" else [0, 0, 0, 0]
    if len(pads) != 4 or not 1 <= stride <= MAX_STRIDE or not all(0 <= p <= MAX_PAD for p in pads):
        return None
    return tuple(int(p) for p in pads), int(stride)


def _pool_stride(node):
    """The stride of a 2-D AveragePool the kernel takes (one stride for both
    axes, no padding), else None.  Keras's AveragePooling2D(pool_size=k)
    strides by k by default, so a pool over the whole last map usually
    strides by its window."""
    strides = _ints(node, "strides", [1, 1])
    pads = _ints(node, "pads", [0, 0, 0, 0])
    if len(strides) != 2 or strides[0] != strides[1] or any(pads) or _string(node, "auto_pad", "NOTSET") != "NOTSET":
        return None
    return int(strides[0]) if 1 <= strides[0] <= MAX_STRIDE else None


# op_type -> (KernelGeometry field, the node's form or None)
_FORMS = {"Conv": ("convs", _conv_form), "AveragePool": ("pool_strides", _pool_stride)}


def kernel_geometry(model_path: Path) -> KernelGeometry:
    """The convolution forms and average pool strides of the model, in one
    pass over its nodes (the spec matches each exactly)."""
    import onnx

    return model_kernel_geometry(onnx.load(str(model_path), load_external_data=False))


def model_kernel_geometry(model) -> KernelGeometry:
    """kernel_geometry() of an ONNX ModelProto."""
    found = {field: set() for field, _ in _FORMS.values()}
    for node in model.graph.node:
        if node.op_type in _FORMS and node.domain in ("", "ai.onnx"):
            field, form_of = _FORMS[node.op_type]
            form = form_of(node)
            if form is not None:
                found[field].add(form)
    return KernelGeometry(**{field: sorted(forms) for field, forms in found.items()})


def conv_geometries(model_path: Path) -> list:
    """Sorted [(pads (top, left, bottom, right), stride)] of the model's 2-D
    Convs with one stride for both axes and no dilation."""
    return kernel_geometry(model_path).convs


def model_conv_geometries(model) -> list:
    """conv_geometries() of an ONNX ModelProto."""
    return model_kernel_geometry(model).convs


def pool_strides(model_path: Path) -> list:
    """Sorted strides of the model's 2-D AveragePools with one stride for
    both axes and no padding (the pools the int8 average pool kernel takes)."""
    return kernel_geometry(model_path).pool_strides
