"""Benchmark: emit time and error against ONNX Runtime on the model families
of issue 30, exported the way users export them: small transformer
encoders (BERT-, GPT-2- and ViT-shaped, built from torch.nn with random
weights), the same three from `transformers` (tiny configurations, random
weights), torchvision classifiers and
a segmenter with random weights, bidirectional GRU and LSTM, a 1-D
convolutional EEG-style CNN, a 1-D EEG U-Net, a CRNN and transformers'
wav2vec2, through PyTorch's TorchScript
exporter (dynamo=False) and its torch.export one (dynamo=True), at opset
17, or at the torch.export exporter's own opset (dynamo-default-opset).

Each export is emitted through the CLI (`python -m ireegen emit`), as a
user runs it, in each --modes execution model and at each --levels tuning
level, with an empty tuning directory (so quick searches).  A row records
the emit's wall time, its exit, the tuning choice and search time, and the
largest error against ONNX Runtime that the manifest's verification
measured, as a fraction of the output's range.  Rows are merged into
--json under --label (before/after a change), keyed by family, exporter,
mode and level; benchmarks/render_docs.py renders docs/tuning.md's table
from it.  Prints one line per emit; asserts nothing.

    python benchmarks/families.py [--families NAME ...] [--exporters torchscript dynamo]
        [--modes runtimeless async] [--levels off quick] [--label after] [--json docs/families.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# exporter -> (torch.onnx.export's dynamo, its opset_version; None: the exporter's default).
EXPORTERS = {"torchscript": (False, 17), "dynamo": (True, 17), "dynamo-default-opset": (True, None)}
EMIT_TIMEOUT = 1800


def _transformer(d: int, heads: int, layers: int, causal: bool, pre_norm: bool):
    import torch

    layer = torch.nn.TransformerEncoderLayer(
        d, heads, 2 * d, dropout=0.0, activation="gelu", batch_first=True, norm_first=pre_norm
    )
    return torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False), causal


def bert(torch):
    """A BERT-shaped encoder on input embeddings (what `inputs_embeds` takes)."""
    encoder, _ = _transformer(64, 2, 2, causal=False, pre_norm=False)

    class Bert(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.position = torch.nn.Parameter(torch.randn(1, 16, 64) * 0.02)
            self.norm = torch.nn.LayerNorm(64)
            self.encoder = encoder
            self.pooler = torch.nn.Linear(64, 64)

        def forward(self, x):
            h = self.encoder(self.norm(x + self.position))
            return torch.tanh(self.pooler(h[:, 0]))

    return Bert(), torch.randn(1, 16, 64)


def gpt2(torch):
    """A GPT-2-shaped decoder: pre-norm blocks, causal attention, a tied LM head."""
    encoder, _ = _transformer(64, 2, 2, causal=True, pre_norm=True)

    class Gpt2(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder
            self.norm = torch.nn.LayerNorm(64)
            self.head = torch.nn.Linear(64, 256, bias=False)
            self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(16))

        def forward(self, x):
            return self.head(self.norm(self.encoder(x, mask=self.mask, is_causal=True)))

    return Gpt2(), torch.randn(1, 16, 64)


def vit(torch):
    """A ViT-shaped classifier: 8x8 patches of a 32x32 image, a class token, two blocks."""
    encoder, _ = _transformer(64, 2, 2, causal=False, pre_norm=True)

    class Vit(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.patches = torch.nn.Conv2d(3, 64, 8, stride=8)
            self.cls = torch.nn.Parameter(torch.randn(1, 1, 64) * 0.02)
            self.position = torch.nn.Parameter(torch.randn(1, 17, 64) * 0.02)
            self.encoder = encoder
            self.norm = torch.nn.LayerNorm(64)
            self.head = torch.nn.Linear(64, 10)

        def forward(self, x):
            tokens = self.patches(x).flatten(2).transpose(1, 2)
            h = torch.cat([self.cls.expand(x.shape[0], -1, -1), tokens], 1) + self.position
            return self.head(self.norm(self.encoder(h))[:, 0])

    return Vit(), torch.randn(1, 3, 32, 32)


def _hf_config(name: str, **sizes):
    import transformers

    # The attention as written (eager): what the exporters see whatever the default kernel is.
    return getattr(transformers, name)(**sizes, attn_implementation="eager")


def bert_hf(torch):
    """transformers' BertForSequenceClassification: 2 layers, hidden 64, 2 heads, 16 token ids."""
    import transformers

    config = _hf_config(
        "BertConfig",
        vocab_size=512,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=64,
        num_labels=4,
    )
    net = transformers.BertForSequenceClassification(config)

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, input_ids):
            return self.net(input_ids=input_ids).logits

    return Logits(), torch.randint(0, 512, (1, 16))


def gpt2_hf(torch):
    """transformers' GPT2LMHeadModel: 2 layers, hidden 64, 2 heads, a 512-token vocabulary, 16 token ids and a mask."""
    import transformers

    config = _hf_config("GPT2Config", vocab_size=512, n_embd=64, n_layer=2, n_head=2, n_positions=64, use_cache=False)
    net = transformers.GPT2LMHeadModel(config)

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, input_ids, attention_mask):
            return self.net(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    # With the tokenizer's attention mask, as users export it: without one, transformers
    # looks for packed sequences with torch.diff, which the TorchScript exporter cannot export.
    return Logits(), (torch.randint(0, 512, (1, 16)), torch.ones(1, 16, dtype=torch.int64))


def vit_hf(torch):
    """transformers' ViTForImageClassification: 32x32 images, 8x8 patches, 2 layers, hidden 64, 10 classes."""
    import transformers

    config = _hf_config(
        "ViTConfig",
        image_size=32,
        patch_size=8,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        num_labels=10,
    )
    net = transformers.ViTForImageClassification(config)

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, pixel_values):
            return self.net(pixel_values=pixel_values).logits

    return Logits(), torch.randn(1, 3, 32, 32)


def _torchvision(name: str, size: int):
    def make(torch):
        import torchvision

        if name == "lraspp_mobilenet_v3_large":
            net = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)

            class Out(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = net

                def forward(self, x):
                    return self.net(x)["out"]

            return Out(), torch.randn(1, 3, size, size)
        return getattr(torchvision.models, name)(weights=None), torch.randn(1, 3, size, size)

    make.__doc__ = f"torchvision's {name}, random weights, 1x3x{size}x{size}"
    return make


def _rnn(cell: str):
    def make(torch):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = getattr(torch.nn, cell)(16, 32, num_layers=1, bidirectional=True, batch_first=True)
                self.head = torch.nn.Linear(64, 4)

            def forward(self, x):
                y, _ = self.rnn(x)
                return self.head(y)

        return Net(), torch.randn(1, 20, 16)

    make.__doc__ = f"a bidirectional torch.nn.{cell}, 16 features, 32 hidden, 20 steps, a linear head"
    return make


def eeg_cnn(torch):
    """A 1-D convolutional EEG classifier: 8 channels x 256 samples, three Conv1d blocks."""
    layers = []
    for cin, cout in ((8, 16), (16, 32), (32, 32)):
        layers += [torch.nn.Conv1d(cin, cout, 7, padding=3), torch.nn.BatchNorm1d(cout), torch.nn.ELU()]
        layers.append(torch.nn.MaxPool1d(2))
    net = torch.nn.Sequential(*layers, torch.nn.Flatten(), torch.nn.Linear(32 * 32, 5))
    return net, torch.randn(1, 8, 256)


def crnn(torch):
    """A CRNN text reader: conv blocks over a 1x32x100 image, a bidirectional LSTM over columns."""

    class Crnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Sequential(
                torch.nn.Conv2d(1, 16, 3, padding=1),
                torch.nn.ReLU(),
                torch.nn.MaxPool2d(2),
                torch.nn.Conv2d(16, 32, 3, padding=1),
                torch.nn.BatchNorm2d(32),
                torch.nn.ReLU(),
                torch.nn.MaxPool2d((2, 1)),
                torch.nn.Conv2d(32, 32, 3, padding=1),
                torch.nn.ReLU(),
                torch.nn.MaxPool2d((8, 1)),
            )
            self.rnn = torch.nn.LSTM(32, 32, bidirectional=True, batch_first=True)
            self.head = torch.nn.Linear(64, 37)

        def forward(self, x):
            f = self.conv(x).squeeze(2).transpose(1, 2)  # N, W, C
            y, _ = self.rnn(f)
            return self.head(y).log_softmax(-1)

    return Crnn(), torch.randn(1, 1, 32, 100)


def wav2vec2_hf(torch):
    """transformers' Wav2Vec2Model: 1,600 samples, two conv feature layers, a grouped positional conv, 2 layers, hidden 64."""
    import transformers

    config = _hf_config(
        "Wav2Vec2Config",
        conv_dim=(32, 32),
        conv_kernel=(10, 3),
        conv_stride=(5, 2),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
    )
    net = transformers.Wav2Vec2Model(config)

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, input_values):
            return self.net(input_values=input_values).last_hidden_state

    return Hidden(), torch.randn(1, 1600)


def eeg_unet(torch):
    """A 1-D U-Net over 4 channels x 512 samples: two levels down (Conv1d, BatchNorm, ReLU, MaxPool), transposed convolutions up, skip Concats."""

    def block(cin, cout):
        return torch.nn.Sequential(
            torch.nn.Conv1d(cin, cout, 5, padding=2),
            torch.nn.BatchNorm1d(cout),
            torch.nn.ReLU(),
            torch.nn.Conv1d(cout, cout, 5, padding=2),
            torch.nn.BatchNorm1d(cout),
            torch.nn.ReLU(),
        )

    class UNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.down1, self.down2, self.bottom = block(4, 16), block(16, 32), block(32, 64)
            self.up2, self.dec2 = torch.nn.ConvTranspose1d(64, 32, 2, stride=2), block(64, 32)
            self.up1, self.dec1 = torch.nn.ConvTranspose1d(32, 16, 2, stride=2), block(32, 16)
            self.head = torch.nn.Conv1d(16, 3, 1)

        def forward(self, x):
            a = self.down1(x)
            b = self.down2(torch.nn.functional.max_pool1d(a, 2))
            c = self.bottom(torch.nn.functional.max_pool1d(b, 2))
            d = self.dec2(torch.cat([self.up2(c), b], 1))
            return self.head(self.dec1(torch.cat([self.up1(d), a], 1)))

    return UNet(), torch.randn(1, 4, 512)


FAMILIES = {
    "bert": bert,
    "gpt2": gpt2,
    "vit": vit,
    "bert_hf": bert_hf,
    "gpt2_hf": gpt2_hf,
    "vit_hf": vit_hf,
    "mobilenet_v2": _torchvision("mobilenet_v2", 224),
    "regnet_y_400mf": _torchvision("regnet_y_400mf", 224),
    "lraspp": _torchvision("lraspp_mobilenet_v3_large", 224),
    "gru_bidirectional": _rnn("GRU"),
    "lstm_bidirectional": _rnn("LSTM"),
    "eeg_cnn1d": eeg_cnn,
    "crnn": crnn,
    "wav2vec2_hf": wav2vec2_hf,
    "eeg_unet1d": eeg_unet,
}


def export(family: str, exporter: str, path: Path) -> None:
    import torch

    torch.manual_seed(0)
    # The fused encoder-layer kernel of eval mode has no ONNX export: the layers as written.
    torch.backends.mha.set_fastpath_enabled(False)
    net, x = FAMILIES[family](torch)
    args = x if isinstance(x, tuple) else (x,)
    names = ["x"] if len(args) == 1 else [f"x{i}" for i in range(len(args))]
    dynamo, opset = EXPORTERS[exporter]
    net.eval()
    with torch.no_grad():
        torch.onnx.export(
            net, args, str(path), dynamo=dynamo, input_names=names, output_names=["y"], opset_version=opset
        )


def error_vs_onnxruntime(manifest: dict) -> float | None:
    """The largest |emitted - ONNX Runtime| over the outputs, as a fraction of each output's range."""
    worst = None
    for function in manifest.get("verification", {}).get("functions", {}).values():
        for out in function["outputs"].values():
            if "onnxruntime" not in out:
                continue
            low, high = out["range"]
            width = (high - low) or max(abs(low), abs(high)) or 1.0
            fraction = out["onnxruntime"]["max_abs_error"] / width
            worst = fraction if worst is None else max(worst, fraction)
    return worst


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def emit(model: Path, outdir: Path, mode: str, level: str, records: Path, log: Path | None = None) -> dict:
    env = dict(os.environ, IREEGEN_TUNING_DIR=str(records), IREEGEN_PROGRESS="1")
    env.pop("IREEGEN_TUNE", None)
    command = [sys.executable, "-m", "ireegen", "emit", str(model), "-o", str(outdir), "--execution-model", mode]
    command += ["--tune", level]
    start, cpu = time.monotonic(), _children_cpu()
    try:
        # Run outside any checkout: `-m` puts the working directory first on
        # sys.path, and PYTHONPATH says which ireegen is measured.
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=EMIT_TIMEOUT, cwd=outdir.parent)
        code, stderr = run.returncode, run.stderr
    except subprocess.TimeoutExpired:
        code, stderr = None, f"killed after {EMIT_TIMEOUT} s"
    seconds, cpu = time.monotonic() - start, _children_cpu() - cpu
    if log is not None:
        log.write_text(stderr)
    # CPU seconds (user + system, the emit and every process it ran): wall
    # time on a shared machine moves with its load, CPU time much less.
    row = {"emit_seconds": round(seconds, 1), "emit_cpu_seconds": round(cpu, 1), "exit": code}
    if code != 0:
        lines = [x for x in stderr.splitlines() if x.strip() and not x.startswith("ireegen: [")]
        row["error"] = (lines[-1] if lines else stderr.strip()[-300:])[:300]
        return row
    manifest = json.loads((outdir / "manifest.json").read_text())
    row["error_vs_onnxruntime"] = error_vs_onnxruntime(manifest)
    tuning = manifest.get("tuning") or {}
    if tuning.get("candidates"):
        row["choice"] = tuning["choice"]
        row["speedup"] = tuning.get("speedup")
        row["search_seconds"] = tuning.get("search_seconds")
        row["candidates"] = {
            c["name"]: c["status"] if c.get("figure") is None else c["figure"] for c in tuning["candidates"]
        }
    return row


def merge(path: Path, label: str, rows: list) -> None:
    data = json.loads(path.read_text()) if path.exists() else {"rows": []}
    keys = {(r["family"], r["exporter"], r["mode"], r["level"], label) for r in rows}
    data["rows"] = [
        r for r in data["rows"] if (r["family"], r["exporter"], r["mode"], r["level"], r["label"]) not in keys
    ]
    data["rows"] += [dict(r, label=label) for r in rows]
    data["rows"].sort(
        key=lambda r: (list(FAMILIES).index(r["family"]), r["exporter"], r["mode"], r["level"], r["label"])
    )
    data["machine"] = f"{platform.machine()}, {os.cpu_count()} cores"
    path.write_text(json.dumps(data, indent=1) + "\n")


def _seconds(row: dict | None) -> str:
    if row is None:
        return "-"
    if row.get("exit") != 0:
        return f"exit {row.get('exit')}"  # the error is in the JSON
    cpu = f" / {row['emit_cpu_seconds']:.0f} s CPU" if row.get("emit_cpu_seconds") is not None else ""
    return f"{row['emit_seconds']:.0f} s{cpu}"


def _choice(row: dict | None) -> str:
    if row is None or row.get("exit") != 0:
        return "-"
    if "choice" not in row:
        return "no candidate"
    untried = sum(v == "not tried" for v in row["candidates"].values())
    tried = f"{len(row['candidates']) - untried} of {len(row['candidates'])} tried"
    return f"{row['choice']}, {row.get('speedup') or 1:.2f}x ({tried})"


def table(data: dict) -> str:
    """The markdown table of a --json file: per export and mode, the untuned
    emit, quick before and after, and the error against ONNX Runtime."""
    rows = {(r["family"], r["exporter"], r["mode"], r["level"], r["label"]): r for r in data["rows"]}
    lines = [
        "| model | exporter | mode | `--tune off` | `quick` before | `quick` after | after / off, wall (CPU) "
        "| quick's choice after | error vs ONNX Runtime, of the range |",
        "|---|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for family, exporter, mode in dict.fromkeys((k[0], k[1], k[2]) for k in rows):
        off, before, after = (
            rows.get((family, exporter, mode, *k)) for k in (("off", "after"), ("quick", "before"), ("quick", "after"))
        )
        ratio = "-"
        if off and after and off.get("exit") == 0 and after.get("exit") == 0:
            ratio = f"{after['emit_seconds'] / off['emit_seconds']:.1f}x"
            if off.get("emit_cpu_seconds") and after.get("emit_cpu_seconds"):
                ratio += f" ({after['emit_cpu_seconds'] / off['emit_cpu_seconds']:.1f}x)"
        errors = [r["error_vs_onnxruntime"] for r in (off, after) if r and r.get("error_vs_onnxruntime") is not None]
        error = f"{max(errors):.1e}" if errors else "-"
        lines.append(
            f"| {family} | {exporter} | {mode} | {_seconds(off)} | {_seconds(before)} | {_seconds(after)} | {ratio} "
            f"| {_choice(after)} | {error} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", choices=list(FAMILIES), default=list(FAMILIES))
    parser.add_argument("--exporters", nargs="+", choices=list(EXPORTERS), default=["torchscript"])
    parser.add_argument("--modes", nargs="+", default=["runtimeless", "async"])
    parser.add_argument("--levels", nargs="+", default=["off", "quick"])
    parser.add_argument("--label", default="after")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="keep the exports and each emit's progress lines in this directory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ireegen-families-") as tmp:
        tmp = Path(tmp)
        models = args.keep or tmp
        models.mkdir(parents=True, exist_ok=True)
        for family in args.families:
            for exporter in args.exporters:
                model = models / f"{family}_{exporter}.onnx"
                rows = []
                if not model.exists():
                    try:
                        export(family, exporter, model)
                    except Exception as e:  # an exporter's failure is a row, not the end of the benchmark
                        line = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
                        print(f"{family} ({exporter}): not exported: {line}", flush=True)
                        continue
                for mode in args.modes:
                    for level in args.levels:
                        outdir = tmp / f"{family}-{exporter}-{mode}-{level}"
                        records = tmp / f"records-{family}-{exporter}-{mode}-{level}"
                        log = models / f"{family}_{exporter}_{mode}_{level}.log" if args.keep else None
                        row = emit(model, outdir, mode, level, records, log)
                        row = {"family": family, "exporter": exporter, "mode": mode, "level": level, **row}
                        rows.append(row)
                        print(json.dumps(row), flush=True)
                if args.json:
                    merge(args.json, args.label, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
