"""What a loaded model contains that IREE's optional rewrites act on:
convolutions, channels-first (NCHW) convolutions, matmuls.  `emit --tune` (config/tuning.py) compiles a
candidate only for a model it can change."""

from __future__ import annotations

import re

# Op names, by feature, in every input dialect a model reaches IREE in
# (ONNX arrives lowered to linalg).
_PATTERNS = {
    "convolutions": re.compile(
        r"^(linalg\.(\w+_)?conv_\w+|linalg\.conv\w*|torch\.aten\.(_?convolution|conv\w+)"
        r"|stablehlo\.convolution|mhlo\.convolution|tosa\.(conv2d|conv3d|depthwise_conv2d|transpose_conv2d))$"
    ),
    # Channels-first: what IREE's channels-last preprocessing transposes
    # (linalg's nchw/ngchw forms; torch's convolutions are channels-first).
    "nchw-convolutions": re.compile(
        r"^(linalg\.(depthwise_)?conv_\dd_n(g)?chw\w*|torch\.aten\.(_?convolution|conv\w+)"
        r"|stablehlo\.convolution|mhlo\.convolution)$"
    ),
    "contractions": re.compile(
        r"^(linalg\.(batch_)?(matmul|matvec|vecmat)\w*|linalg\.contract|torch\.aten\.(mm|bmm|matmul|linear|addmm)"
        r"|stablehlo\.dot(_general)?|mhlo\.dot(_general)?|tosa\.matmul)$"
    ),
}


def op_names(model) -> set:
    """The names of every operation in `model` (a frontend.models.LoadedModel)."""
    from iree.compiler import ir

    names = set()

    def visit(op):
        names.add(op.name)
        return ir.WalkResult.ADVANCE

    with model.context:
        model.module.operation.walk(visit)
    return names


def model_features(model) -> set:
    """{"convolutions", "nchw-convolutions", "contractions"} or a subset:
    what `model` holds.  A convolution is a contraction too."""
    names = op_names(model)
    found = {feature for feature, pattern in _PATTERNS.items() if any(pattern.match(n) for n in names)}
    if "convolutions" in found:
        found.add("contractions")
    return found
