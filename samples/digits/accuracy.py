"""Held-out accuracy of the digits model in every execution model, next to
scikit-learn's and ONNX Runtime's.

    python accuracy.py [--modes async,inline-static,inline-dynamic,runtimeless]

Each mode is compiled by `ireegen emit` from digits.mlir and run one image
per call, as main.c does: async in-process through iree.runtime, the inline
modes through iree-run-module (the Python runtime cannot load them), and
runtimeless through `ireegen run`'s runner (the emitted C built with cc).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import make_digits  # noqa: E402

FUNCTION = make_digits.MODEL_NAME
MODES = ("async", "inline-static", "inline-dynamic", "runtimeless")


def heldout():
    """(images as the model takes them [N,1,64] float32, labels [N])."""
    _, x_test, _, y_test = make_digits.split()
    return make_digits.scale(x_test).reshape(len(y_test), 1, -1), np.asarray(y_test)


def sklearn_predictions() -> np.ndarray:
    clf, (_, x_test, _, _) = make_digits.train()
    return clf.predict(make_digits.scale(x_test))


def onnxruntime_predictions(onnx_path=HERE / "digits.onnx") -> np.ndarray:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    images, _ = heldout()
    return np.array([int(np.argmax(session.run(None, {"image": x})[0])) for x in images])


def mode_predictions(mode: str, model=HERE / "digits.mlir", workdir=None) -> np.ndarray:
    """Compiles `model` with `ireegen emit` for `mode` and classifies every
    held-out image, one call each."""
    from ireegen.cbuild.native_run import build_runner
    from ireegen.check.runners import run_in_process, run_with_tool
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    images, _ = heldout()
    with tempfile.TemporaryDirectory(prefix=f"digits-{mode}-") as tmp:
        workdir = Path(workdir or tmp)
        result = emit(model, workdir / "out", make_config(mode), name="digits")
        if mode == "runtimeless":
            runner = build_runner(result.outdir, workdir / "build")
            call = lambda x: runner.call(FUNCTION, [x])[0]  # noqa: E731
        else:
            vmfb = result.outdir / "digits.vmfb"
            if mode == "async":
                call = lambda x: run_in_process(vmfb, FUNCTION, [x])  # noqa: E731
            else:
                call = lambda x: run_with_tool(vmfb, FUNCTION, [x], 1)  # noqa: E731
        return np.array([int(np.argmax(call(x)[0])) for x in images])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args()
    _, labels = heldout()
    rows = [("scikit-learn", sklearn_predictions()), ("ONNX Runtime", onnxruntime_predictions())]
    rows += [(f"ireegen {m}", mode_predictions(m)) for m in args.modes.split(",") if m]
    reference = rows[0][1]
    print(f"{'':<24} {'accuracy':>8} {'right':>9} {'same as scikit-learn':>21}")
    for label, predicted in rows:
        right = int((predicted == labels).sum())
        print(
            f"{label:<24} {right / len(labels):>8.4f} {right:>4}/{len(labels):<4} "
            f"{'yes' if np.array_equal(predicted, reference) else 'NO':>21}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
