"""A randomized test of the forms ireegen's int8 match spec accepts
(tests/int8_forms.py): seeded QDQ graphs of convolutions, depthwise
convolutions, pools, fully connected layers, Adds and softmaxes, quantized
by onnxruntime's quantize_static, emitted for the host with the int8
kernels (the portable C, with the model's own convolution and pool forms,
as on a Cortex-M) and compared with ONNX Runtime exactly: every output
element equal, on several random inputs.

The CI subset is one model of six forms (every kind of branch; one emit,
about a minute and a half); IREEGEN_INT8_FORMS_CASES=N adds a second fixed
model and N models of randomly drawn forms (seeds 0 to N-1) for a full
run."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("onnxruntime.quantization")
import int8_forms  # noqa: E402

# Every kind of branch (their shapes, pads, strides, activations and
# scales drawn from the seed); the fully connected layer is the softmax's.
SUBSET = {101: ("conv", "dwconv", "kerasavgpool", "maxpool", "softmax", "add")}
FULL = int(os.environ.get("IREEGEN_INT8_FORMS_CASES", "0"))
if FULL:
    SUBSET[102] = ("conv", "dwconv", "avgpool", "fc", "add", "avgpool")
CASES = [(seed, kinds) for seed, kinds in SUBSET.items()] + [(seed, None) for seed in range(FULL)]


@pytest.mark.parametrize("seed,kinds", CASES, ids=[str(seed) for seed, _ in CASES])
def test_matched_forms_equal_onnxruntime(tmp_path, seed, kinds):
    import onnx

    model, branches = int8_forms.quantized_case(seed, kinds)
    path = tmp_path / f"forms_{seed}.onnx"
    onnx.save(model, path)
    found = int8_forms.mismatches(path, branches, tmp_path / "out", runs=3, seed=seed)
    kernels = int8_forms.dispatched_kernels(tmp_path / "out")
    assert kernels, "no form of the model was matched"
    if seed == 101:  # the Keras pool (stride 8) and the Add and softmax in kernels, beside the two convolutions'
        assert {"ireegen_i8_global_average_pool", "ireegen_i8_add", "ireegen_i8_softmax"} <= set(kernels), kernels
    assert not found, "\n".join(f"{t}: run {r}, {n} differ, up to {s} steps" for t, r, n, s in found)
