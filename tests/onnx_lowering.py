"""ONNX -> MLIR that ireegen reads today, in one place.

    lower_onnx("model.onnx", "model.mlir")

IREE's own importer (`iree-import-onnx`, shipped with iree-base-compiler,
needs the `onnx` package) writes the torch dialect; `iree-compile
--compile-to=input --iree-torch-emit-async-entry-points=false` lowers that to
the linalg/util input that `ireegen emit` takes.

ireegen takes `.onnx` itself (ireegen/frontend/onnx_import.py, which imports
in-process and adds node locations), and the conformance runner
(tests/onnx_conformance.py) goes through that path.  What still lowers
through this function: the committed samples/digits/digits.mlir
(samples/digits/make_digits.py; tests/test_digits.py checks it is exactly
what the CLI importer makes) and the peers benchmark (benchmarks/peers.py).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

LOWERING_FLAGS = ("--compile-to=input", "--iree-torch-emit-async-entry-points=false")


class LoweringError(Exception):
    """IREE could not import or lower the model; `stage` says which step."""

    def __init__(self, stage: str, message: str):
        super().__init__(f"{stage}: {message}")
        self.stage = stage  # "import" (iree-import-onnx) or "lower" (iree-compile --compile-to=input)
        self.message = message


def _tool(name: str) -> str:
    """The tool next to this Python (the venv's), else on PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else (shutil.which(name) or name)


def first_error(text: str) -> str:
    """The first line that says what went wrong."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[-1] if lines else ""


def _explain(text: str, returncode: int, tool: str) -> str:
    """The first error, naming the ONNX operator when the lowering has none for it."""
    if "Stack dump:" in text or returncode < 0:
        return f"{tool} crashed (exit status {returncode}, LLVM stack dump)"
    line = first_error(text) or f"exit status {returncode}"
    if "torch.operator" in line:
        op = re.search(r'torch\.operator"?\(?[^"]*"(onnx\.\w+)"', text) or re.search(r'"(onnx\.\w+)"', text)
        if op:
            return f"no lowering for {op.group(1)}: {line}"
    return line


def lower_onnx(onnx_path, mlir_path, timeout: float = 300) -> Path:
    """Writes the input-dialect MLIR of `onnx_path` to `mlir_path`; raises
    LoweringError with the tool's first error line."""
    onnx_path, mlir_path = Path(onnx_path), Path(mlir_path)
    torch_mlir = mlir_path.with_suffix(".torch.mlir")
    steps = (
        ("import", [_tool("iree-import-onnx"), str(onnx_path), "-o", str(torch_mlir)]),
        ("lower", [_tool("iree-compile"), str(torch_mlir), *LOWERING_FLAGS, "-o", str(mlir_path)]),
    )
    try:
        for stage, cmd in steps:
            try:
                proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise LoweringError(stage, f"timed out after {timeout:.0f} s") from None
            if proc.returncode != 0:
                raise LoweringError(stage, _explain(proc.stdout, proc.returncode, Path(cmd[0]).name))
    finally:
        torch_mlir.unlink(missing_ok=True)
    return mlir_path
