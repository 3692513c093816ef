"""Benchmark: transformer encoders (a small ViT and a BERT-base-shaped
encoder of two layers, random weights, seed 0) exported with both PyTorch
exporters, through ireegen's generated C against ONNX Runtime, one thread.

    python benchmarks/transformer_encoders.py [--models vit-ts vit-dynamo bert-ts bert-dynamo]
        [--flag-sets base data-tiling] [--modes runtimeless async] [--forms iree rewrites]
        [--without REWRITE ...] [--rounds 3] [--seconds 0.5]

The models (`pip install torch transformers`; nothing is downloaded):
- vit: transformers' ViTModel, hidden 192, 4 layers, 3 heads, MLP 768,
  224x224 images in 16x16 patches (197 tokens), no pooler;
- bert: transformers' BertModel, hidden 768, 2 layers, 12 heads, MLP 3072,
  128 tokens, a vocabulary of 8192 (BERT-base's 30522 only grows the
  embedding table), no pooler;
each exported with torch.onnx.export (`-ts`: TorchScript, opset 17) and
with dynamo=True (`-dynamo`: opset 18).

Each ireegen configuration is emitted at --target-cpu (host by default), --tune off,
with a flag set (--flag-sets: base, IREE's defaults; data-tiling,
--iree-opt-data-tiling, the flag `--tune quick`'s second candidate adds to
a model with matmuls; default, the default emit: `--tune quick`, verified,
its emit time and choice printed on stderr) and (--forms) with ireegen's graph rewrites
(`rewrites`) or without them (`iree`, "IREE's form": --no-workarounds, as
benchmarks/recurrent.py does); --without adds the form with ireegen's
rewrites but those named (a rewrite's before and after in one run).  Per model one run, the measurements alternating --rounds times;
the figure is the median round's CPU time per call, as benchmarks/peers.py
measures it:
- runtimeless: the emitted C through `ireegen run`'s runner, --repeat N
  calls minus one call, over N - 1;
- async: the emitted .vmfb under iree-benchmark-module --device=local-sync
  (the device the generated glue creates for one thread), CPU time per
  iteration;
- ONNX Runtime: one intra-op thread, all graph optimizations, bound inputs,
  minus the Python loop's floor (benchmarks/peers.py).
Each runtimeless output is checked against ONNX Runtime's before it is
timed (max abs error within 1e-3 of the output's largest magnitude).
Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from peers import OnnxRuntime, alternating_medians, per_call_cpu, python_loop_floor_ns  # noqa: E402
from runtimeless import benchmark_module_inputs, time_async  # noqa: E402

from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.check.runners import find_runtime_tools  # noqa: E402
from ireegen.common.clock import cpu_seconds  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402
from ireegen.frontend import onnx_rewrites  # noqa: E402

MODELS = ("vit-ts", "vit-dynamo", "bert-ts", "bert-dynamo")
FLAG_SETS = {"base": (), "data-tiling": ("--iree-opt-data-tiling",), "default": ()}
# Flag sets that are an emit's own choice: "default" is the default emit,
# `--tune quick` with its verification (an empty tuning directory is the
# caller's: IREEGEN_TUNING_DIR), the others `--tune off` without one.
TUNED = {"default": "quick"}
TOLERANCE = 1e-3
SEED = 0


def export(name: str, path: Path) -> list:
    """Writes model `name` to `path`; returns its inputs."""
    import torch
    from transformers import BertConfig, BertModel, ViTConfig, ViTModel

    family, exporter = name.split("-")
    torch.manual_seed(SEED)
    if family == "vit":
        config = ViTConfig(
            hidden_size=192, num_hidden_layers=4, num_attention_heads=3, intermediate_size=768, image_size=224
        )
        model = ViTModel(config, add_pooling_layer=False)
        x = torch.randn(1, 3, 224, 224)
    else:
        config = BertConfig(
            vocab_size=8192, hidden_size=768, num_hidden_layers=2, num_attention_heads=12, intermediate_size=3072
        )
        model = BertModel(config, add_pooling_layer=False)
        x = torch.randint(0, 8192, (1, 128))

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model.eval()

        def forward(self, x):
            return self.model(x, return_dict=False)[0]

    torch.onnx.export(
        Encoder().eval(),
        (x,),
        str(path),
        input_names=["x"],
        output_names=["y"],
        opset_version=17 if exporter == "ts" else 18,
        dynamo=exporter == "dynamo",
    )
    return [x.numpy()]


@contextlib.contextmanager
def rewrites_without(names: tuple):
    """ireegen's speed rewrites but those named, while in the block."""
    tables = onnx_rewrites.SPEED_TABLES
    onnx_rewrites.SPEED_TABLES = tuple(tuple(row for row in t if row.name not in names) for t in tables)
    try:
        yield
    finally:
        onnx_rewrites.SPEED_TABLES = tables


def contenders(name: str, workdir: Path, inputs: list, reference: list, args) -> dict:
    """{label: timer(repeat) -> ns per call}."""
    path = workdir / f"{name}.onnx"
    tool = find_runtime_tools().bin_dir / "iree-benchmark-module"
    flags = benchmark_module_inputs(inputs, workdir / "inputs")
    c_name = name.replace("-", "_")
    timers = {}
    for flag_set in args.flag_sets:
        forms = [(f == "rewrites", ()) for f in args.forms] + ([(True, tuple(args.without))] if args.without else [])
        for index, (rewrites, without) in enumerate(forms):
            form = "rewrites" if rewrites else "IREE's form"
            form += f" without {', '.join(without)}" if without else ""
            for mode in args.modes:
                label = f"{mode}, {flag_set}, {form}"
                outdir = workdir / f"{mode}-{flag_set}-{index}"
                start, cpu = time.perf_counter(), cpu_seconds()
                with rewrites_without(without):
                    result = emit(
                        path,
                        outdir,
                        make_config(mode, "embedded-elf" if mode == "async" else None, target_cpu=args.target_cpu),
                        name=c_name,
                        extra_flags=list(FLAG_SETS[flag_set]),
                        verify=flag_set in TUNED,
                        tune=TUNED.get(flag_set, "off"),
                        apply_workarounds=rewrites,
                    )
                emitted = f"emit {time.perf_counter() - start:.1f} s, {cpu_seconds() - cpu:.1f} s CPU"
                print(f"{name} {label}: {emitted}; {result.tuning or 'not tuned'}", file=sys.stderr, flush=True)
                if mode == "runtimeless":
                    runner = build_runner(outdir, workdir / f"runner-{flag_set}-{index}")
                    got, _ = runner.call("main_graph", inputs)
                    error = max(float(np.abs(g - w).max() / np.abs(w).max()) for g, w in zip(got, reference))
                    if error > TOLERANCE:
                        raise SystemExit(f"{name} {label}: max error {error:.3g} against ONNX Runtime")
                    timers[label] = lambda n, r=runner: per_call_cpu(
                        lambda k: r.call("main_graph", inputs, repeat=k), n
                    )
                else:
                    vmfb = outdir / f"{c_name}.vmfb"
                    timers[label] = lambda n, v=vmfb: time_async(tool, v, "main_graph", flags, n, clock="cpu_time")
    return timers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--flag-sets", nargs="+", default=list(FLAG_SETS), choices=list(FLAG_SETS))
    parser.add_argument("--modes", nargs="+", default=["runtimeless", "async"], choices=["runtimeless", "async"])
    parser.add_argument("--forms", nargs="+", default=["iree", "rewrites"], choices=["iree", "rewrites"])
    parser.add_argument("--target-cpu", default="host", help="CPU of IREE's executables (default host)")
    parser.add_argument("--without", nargs="+", default=[], help="also time the rewrites but these")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.5, help="target time of one measurement")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ireegen-transformers-") as tmp:
        workdir = Path(tmp)
        floor_ns = python_loop_floor_ns(workdir)
        print("| model | contender | ms per call | x ONNX Runtime |")
        print("|---|---|---:|---:|")
        for name in args.models:
            models = workdir / name
            models.mkdir()
            inputs = export(name, models / f"{name}.onnx")
            ort = OnnxRuntime(models / f"{name}.onnx")
            reference = ort.run(inputs)
            ort.bind(inputs)
            timers = {
                "ONNX Runtime": lambda n, ort=ort: ort.time(n) - floor_ns,
                **contenders(name, models, inputs, reference, args),
            }
            medians = alternating_medians(timers, args.rounds, args.seconds)
            ort_ns = medians["ONNX Runtime"]
            for label, ns in medians.items():
                print(f"| {name} | {label} | {ns / 1e6:.2f} | {ns / ort_ns:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
