"""Benchmark: torch.nn.GRU, LSTM and RNN (bidirectional, two layers,
batch_first both ways) exported by both of PyTorch's ONNX exporters
(TorchScript, dynamo=False; torch.export, dynamo=True, with onnxscript),
each checked against ONNX Runtime in async and runtimeless.  Prints one
line per export: the rewrites ireegen applied and each mode's largest
error relative to the output's range, or why it could not be exported or
was refused.

    python benchmarks/rnn_exports.py [--out DIR]
"""

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from rnn_forms import mode_cells  # noqa: E402

from ireegen.common.errors import IreegenError  # noqa: E402
from ireegen.parity import parity  # noqa: E402

SEQ, BATCH, FEATURES, HIDDEN = 5, 2, 3, 4
MODES = ("async", "runtimeless")


def export(cell: str, batch_first: bool, dynamo: bool, path: Path) -> np.ndarray:
    """Writes the export to `path`; returns its input."""
    import torch

    torch.manual_seed(0)
    layer = getattr(torch.nn, cell)(FEATURES, HIDDEN, num_layers=2, bidirectional=True, batch_first=batch_first)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = layer

        def forward(self, x):
            y, _ = self.rnn(x)
            return y

    x = torch.randn((BATCH, SEQ, FEATURES) if batch_first else (SEQ, BATCH, FEATURES))
    torch.onnx.export(Net().eval(), (x,), str(path), dynamo=dynamo, input_names=["x"], output_names=["y"])
    return x.numpy()


def measure(path: Path, x: np.ndarray) -> str:
    import onnx

    try:
        report = parity(path, modes=list(MODES), inputs={onnx.load(str(path)).graph.name: [x]}, reference="onnxruntime")
    except IreegenError as e:
        return f"refused: {str(e).splitlines()[0]}"
    return mode_cells(report, list(MODES), lambda against: against == "onnxruntime")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="keep the exports here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        for cell in ("GRU", "LSTM", "RNN"):
            for batch_first in (False, True):
                for dynamo in (False, True):
                    name = f"{cell.lower()}_bi2{'_bf' if batch_first else ''}_{'dynamo' if dynamo else 'torchscript'}"
                    path = out / f"{name}.onnx"
                    try:
                        x = export(cell, batch_first, dynamo, path)
                    except Exception as e:  # an exporter's failure is a row, not the end of the run
                        print(f"{name}: export failed: {str(e).splitlines()[0][:200]}", flush=True)
                        continue
                    print(f"{name}: {measure(path, x)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
