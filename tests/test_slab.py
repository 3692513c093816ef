"""runtimeless/slab.py: IREE's transient slab split back into its buffers
(reads joined with the writes they read), and staging of unaligned caller
tensors in the arena bytes no step touches at the time: the rules on
synthetic schedules, and QDQ int8
convolution chains of random shapes whose input copy fits in the bytes the
later, larger layers use, so the arena needs no room for it: each run with
aligned and unaligned tensors gives the same bits, ONNX Runtime's int8
outputs (ireegen's int8 kernels, here on the host), and an arena no
larger than without staging, within 1.15x the liveness lower bound."""

import json

import numpy as np
import pytest

from ireegen.cbuild.int8_kernels import spec_path
from ireegen.cbuild.native_run import build_runner
from ireegen.config.modes import make_config
from ireegen.emit import emit
from ireegen.runtimeless import arena, slab
from ireegen.runtimeless.schedule import Alloc, Buf, Dispatch, Fill, FunctionSchedule

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def test_staging_shares_only_bytes_untouched_while_it_is_live():
    slab_alloc = Alloc(1, "transient", 4096)
    region = arena.Region("buffer1", 4096, 0, 3, "intermediate", offset=0)
    accesses = [
        (0, Buf(slab_alloc, 0, 1024)),  # the first layer's output
        (1, Buf(slab_alloc, 0, 1024)),
        (1, Buf(slab_alloc, 1024, 3072)),  # a larger layer, after the input's last reader
        (2, Buf(slab_alloc, 1024, 3072)),
    ]
    result = Buf(slab_alloc, 0, 64)
    used = slab.used_ranges(accesses, {1: region}, [result], end=4)
    assert [(r.offset, r.size, r.first, r.last) for r in used] == [
        (0, 64, 4, 4),
        (0, 1024, 0, 1),
        (1024, 3072, 1, 2),
    ]
    # An input read by step 0 fits after the first layer's output; one read
    # until step 1 does not fit in the slab at all.
    early = arena.Region("input0", 2048, -1, 0, "input-staging")
    late = arena.Region("input1", 2048, -1, 1, "input-staging")
    assert arena.plan([early], 64, placed=used) == 1024 + 2048
    assert arena.plan([late], 64, placed=used) == 4096 + 2048
    # An output copy written at step 3 may share every range last touched
    # before, but not the result's own range.
    out = arena.Region("output0", 1024, 3, 4, "output-staging")
    arena.plan([out], 64, placed=used)
    assert out.offset == 64


def _dispatch(*bindings):
    return Dispatch("exe", "f", (1, 1, 1), [], list(bindings))


def _split(steps, modes, results, size=4096):
    """Splits a schedule over one slab; `modes` per Dispatch, as the stream
    phase prints them.  Returns the new schedule."""
    fs = FunctionSchedule("f", [], steps, results)
    access = {"f": [[(m, b.offset, b.length) for m, b in zip(ms, s.bindings)] for ms, s in zip(modes, (s for s in steps if isinstance(s, Dispatch)))]}  # fmt: skip
    new, _ = slab.split(fs, access, 100)
    return new


def test_the_slab_splits_into_its_values_and_reads_stay_with_their_writes():
    s = Alloc(1, "transient", 4096)
    c = Alloc(2, "constant", 64, data=bytes(64))
    steps = [
        _dispatch(Buf(c, 0, 64), Buf(s, 0, 1024)),  # A: written whole
        _dispatch(Buf(s, 512, 512), Buf(s, 1024, 1024)),  # reads part of A, writes B
        _dispatch(Buf(s, 1024, 1024), Buf(s, 0, 256)),  # reads B, writes C over A's bytes
        _dispatch(Buf(s, 0, 256), Buf(s, 2048, 64)),  # reads C, writes the result
    ]
    modes = [("ro", "wo"), ("ro", "wo"), ("ro", "wo"), ("ro", "wo")]
    new = _split(steps, modes, [Buf(s, 2048, 64)])
    pieces = [[b.alloc for b in st.bindings if b.alloc.kind == "transient"] for st in new.steps]
    a, b, c2, r = pieces[0][0], pieces[1][1], pieces[2][1], pieces[3][1]
    assert pieces[1][0] is a and pieces[2][0] is b and pieces[3][0] is c2 and new.results[0].alloc is r
    assert len({id(x) for x in (a, b, c2, r)}) == 4  # C reuses A's bytes in IREE's layout: a value of its own
    assert (a.size, b.size, c2.size, r.size) == (1024, 1024, 256, 64)
    assert new.steps[1].bindings[0].offset == 512  # the part of A it reads, at its place in A
    # A read-write binding and a partial overwrite keep everything they read together.
    steps = [
        _dispatch(Buf(s, 0, 1024)),  # writes A
        _dispatch(Buf(s, 0, 256)),  # overwrites A's first quarter
        _dispatch(Buf(s, 0, 1024), Buf(s, 1024, 64)),  # reads all of A: both writes
    ]
    new = _split(steps, [("wo",), ("rw",), ("ro", "wo")], [Buf(s, 1024, 64)])
    assert new.steps[0].bindings[0].alloc is new.steps[1].bindings[0].alloc is new.steps[2].bindings[0].alloc
    # Not split where the stream phase's dispatches do not match the schedule's.
    fs = FunctionSchedule("f", [], steps, [Buf(s, 1024, 64)])
    assert slab.split(fs, {"f": [[("wo", 0, 1024)]]}, 100)[0] is fs
    # A fill is a write.
    steps = [Fill(Buf(s, 0, 128), 0, 4), _dispatch(Buf(s, 0, 128), Buf(s, 128, 64))]
    new = _split(steps, [("ro", "wo")], [Buf(s, 128, 64)])
    assert new.steps[0].target.alloc is new.steps[1].bindings[0].alloc is not new.results[0].alloc


def _qdq_chain(path, seed):
    """Conv (3x3 or 1x1, padding 0 or 1) + ReLU layers of random widths,
    the first and the last narrow, the two between wider than the float
    input and output, quantized per tensor
    with onnxruntime's quantize_static."""
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng(seed)
    cin, h, w = int(rng.integers(2, 5)), int(rng.integers(9, 17)), int(rng.integers(9, 17))
    nodes, inits, x, c = [], [], "x", cin
    widths = [int(rng.integers(2, 5))] + [int(rng.integers(28, 41)) for _ in range(2)] + [int(rng.integers(2, 5))]
    for i, cout in enumerate(widths):
        k = int(rng.choice([1, 3]))
        stride = 1
        pad = int(rng.integers(0, 2)) if k == 3 else 0
        inits += [
            numpy_helper.from_array(
                (rng.standard_normal((cout, c, k, k)) * (2 / (c * k * k)) ** 0.5).astype(np.float32), f"w{i}"
            ),  # fmt: skip
            numpy_helper.from_array((rng.standard_normal(cout) * 0.1).astype(np.float32), f"b{i}"),
        ]
        nodes.append(
            helper.make_node(
                "Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[k, k], strides=[stride] * 2, pads=[pad] * 4
            )  # fmt: skip
        )
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        x, c = f"r{i}", cout
    shape = [1, cin, h, w]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    float_path = path.with_name(f"float-{path.name}")
    onnx.save(model, float_path)
    samples = [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(samples)

        def get_next(self):
            x = next(self.it, None)
            return None if x is None else {"x": x}

    quantize_static(
        str(float_path), str(path), Reader(), quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=False,
    )  # fmt: skip
    return path, shape, rng


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_qdq_model_stages_its_input_inside_the_arena(tmp_path, seed):
    path, shape, rng = _qdq_chain(tmp_path / "chain.onnx", seed)
    # ireegen's int8 kernels (the default on a Cortex-M), here on the host.
    emit(path, tmp_path / "out", make_config("runtimeless"), name="chain", kernels=spec_path())
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    a = manifest["runtimeless"]["arena"]
    assert "--iree-scheduling-optimize-bindings=false" in manifest["compile_flags"]
    assert a["lower_bound"] <= a["size_aligned_io"] <= 1.15 * a["lower_bound"], a
    staging = [r for r in a["functions"]["chain"]["regions"] if r["role"].endswith("-staging")]
    assert sorted(r["role"] for r in staging) == ["input-staging", "output-staging"], staging
    assert a["size"] == a["size_aligned_io"], a["functions"]["chain"]["regions"]
    runner = build_runner(tmp_path / "out", tmp_path / "build")
    session = ort.InferenceSession(str(path))
    for _ in range(2):
        x = rng.standard_normal(shape).astype(np.float32)
        aligned, _ = runner.call("chain", [x])
        staged, _ = runner.call("chain", [x], misaligned=True)
        assert np.asarray(aligned[0]).tobytes() == np.asarray(staged[0]).tobytes()
        want = session.run(None, {"x": x})[0]
        assert np.array_equal(np.asarray(aligned[0]).reshape(want.shape), want)
