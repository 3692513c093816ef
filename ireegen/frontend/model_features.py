"""What a loaded model contains that IREE's optional rewrites act on:
convolutions, channels-first (NCHW) convolutions, matmuls, matmuls of two
computed operands (attention), and whether ireegen computes it
channels-last as a depthwise-separable CNN.  `emit --tune`
(config/tuning.py) compiles a candidate only for a model it can change,
and orders its search by these."""

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


# The ONNX rewrite that makes a depthwise-separable CNN channels-last
# (frontend/nhwc_layout.py), and the feature it gives the model.
_REWRITE_FEATURES = {"depthwise-separable-as-nhwc": "depthwise-separable-nhwc"}


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


def _computed_contraction(model) -> bool:
    """Whether a matmul of `model` has two operands computed from its
    functions' arguments (attention's Q x K^T and P x V), rather than a
    weight: every value that depends on a block argument is followed
    forward, in the order the ops are defined."""
    from iree.compiler import ir

    computed = set()
    found = []
    pattern = _PATTERNS["contractions"]

    def visit(op):
        operands = list(op.operands)
        if any(isinstance(v, ir.BlockArgument) or v in computed for v in operands):
            computed.update(op.results)
            if pattern.match(op.name) and len(operands) >= 2:
                a, b = operands[0], operands[1]
                if all(isinstance(v, ir.BlockArgument) or v in computed for v in (a, b)):
                    found.append(op.name)
                    return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    with model.context:
        model.module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(found)


def model_features(model) -> set:
    """{"convolutions", "nchw-convolutions", "contractions",
    "computed-contractions", "depthwise-separable-nhwc"} or a subset: what
    `model` holds.  A convolution is a contraction too."""
    names = op_names(model)
    found = {feature for feature, pattern in _PATTERNS.items() if any(pattern.match(n) for n in names)}
    if "convolutions" in found:
        found.add("contractions")
    if "contractions" in found and _computed_contraction(model):
        found.add("computed-contractions")
    rewrites = {r["rewrite"] for r in model.onnx_rewrites}
    found.update(feature for rewrite, feature in _REWRITE_FEATURES.items() if rewrite in rewrites)
    return found
