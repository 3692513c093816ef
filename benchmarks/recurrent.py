"""Benchmark: recurrent layers (PyTorch GRU, LSTM and RNN exports, random
weights) through ireegen's generated code against ONNX Runtime, one thread,
with the rnn-steps-unrolled rewrite and without it (IREE's own loop).

    python benchmarks/recurrent.py [--models gru lstm rnn] [--rounds 5] [--seconds 0.3]

Per model one run, the measurements alternating --rounds times; the figure
is the median round's CPU time per call, as benchmarks/peers.py measures it:
- runtimeless: the emitted C through `ireegen run`'s runner, --repeat N
  calls minus one call, over N - 1;
- async: the emitted .vmfb under iree-benchmark-module --device=local-sync
  (the device the generated glue creates for one thread), its CPU time per
  iteration;
- ONNX Runtime: one intra-op thread, bound inputs, minus the Python loop's
  floor (benchmarks/peers.py).
"IREE's loop" is the same emit with --no-workarounds, which leaves out
ireegen's graph rewrites (for these forward, sequence-major exports, only
rnn-steps-unrolled would match).  Each runtimeless output is checked
against ONNX Runtime's before it is timed (max abs error within 1e-4 of
the output's largest magnitude).  Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from peers import OnnxRuntime, alternating_medians, per_call_cpu, python_loop_floor_ns  # noqa: E402
from runtimeless import benchmark_module_inputs, time_async  # noqa: E402

from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.check.runners import find_runtime_tools  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402

# name: (layer, input features, hidden size, steps, batch), then a Linear on the last step.
MODELS = {
    "gru": ("GRU", 40, 64, 50, 1),
    "lstm": ("LSTM", 64, 128, 32, 1),
    "rnn": ("RNN", 16, 32, 64, 2),
}
TOLERANCE = 1e-4


def export(name: str, path: Path) -> np.ndarray:
    """Writes the model to `path`; returns an input."""
    import torch

    layer, features, hidden, steps, batch = MODELS[name]
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = getattr(torch.nn, layer)(features, hidden, batch_first=True)
            self.head = torch.nn.Linear(hidden, 10)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.head(y[:, -1])

    x = torch.randn(batch, steps, features)
    torch.onnx.export(
        Net().eval(), (x,), str(path), input_names=["x"], output_names=["y"], opset_version=17, dynamo=False
    )
    return x.numpy()


def contenders(name: str, workdir: Path, x: np.ndarray, reference: list) -> dict:
    """{label: timer(repeat) -> ns per call}."""
    path = workdir / f"{name}.onnx"
    tool = find_runtime_tools().bin_dir / "iree-benchmark-module"
    flags = benchmark_module_inputs([x], workdir / "inputs")
    timers = {}
    for rewrites, label in ((False, "IREE's loop"), (True, "rnn-steps-unrolled")):
        for mode in ("runtimeless", "async"):
            outdir = workdir / f"{mode}-{rewrites}"
            emit(
                path,
                outdir,
                make_config(mode, "embedded-elf" if mode == "async" else None, target_cpu="host"),
                name=name,
                verify=False,
                tune="off",
                apply_workarounds=rewrites,
            )
            if mode == "runtimeless":
                runner = build_runner(outdir, workdir / f"runner-{rewrites}")
                got, _ = runner.call("main_graph", [x])
                error = max(float(np.abs(g - w).max() / np.abs(w).max()) for g, w in zip(got, reference))
                if error > TOLERANCE:
                    raise SystemExit(f"{name} runtimeless ({label}): max error {error:.3g} against ONNX Runtime")
                timers[f"runtimeless, {label}"] = lambda n, r=runner: per_call_cpu(
                    lambda k: r.call("main_graph", [x], repeat=k), n
                )
            else:
                vmfb = outdir / f"{name}.vmfb"
                timers[f"async, {label}"] = lambda n, v=vmfb: time_async(
                    tool, v, "main_graph", flags, n, clock="cpu_time"
                )
    return timers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.3, help="target time of one measurement")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ireegen-recurrent-") as tmp:
        workdir = Path(tmp)
        floor_ns = python_loop_floor_ns(workdir)
        print(
            "| model | ONNX Runtime | runtimeless, IREE's loop | runtimeless, unrolled | async, IREE's loop "
            "| async, unrolled |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for name in args.models:
            models = workdir / name
            models.mkdir()
            x = export(name, models / f"{name}.onnx")
            ort = OnnxRuntime(models / f"{name}.onnx")
            reference = ort.run([x])
            ort.bind([x])
            timers = {"ort": lambda n, ort=ort: ort.time(n) - floor_ns, **contenders(name, models, x, reference)}
            medians = alternating_medians(timers, args.rounds, args.seconds)
            ort_ns = medians["ort"]
            cells = [f"{ort_ns / 1e3:.0f} µs"]
            for label in (
                "runtimeless, IREE's loop",
                "runtimeless, rnn-steps-unrolled",
                "async, IREE's loop",
                "async, rnn-steps-unrolled",
            ):
                ns = medians[label]
                cells.append(f"{ns / 1e3:.0f} µs ({ns / ort_ns:.2f}x)")
            layer, features, hidden, steps, batch = MODELS[name]
            print(
                f"| {layer} {features}->{hidden}, {steps} steps, batch {batch} | " + " | ".join(cells) + " |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
