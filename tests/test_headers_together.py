"""Headers of different models and modes in one translation unit, in any
order.  Without IREE's headers: two runtimeless headers together, and their
status shims used as IREE's are (iree_status_ignore returns a status).  With
IREE's headers (IREEGEN_IREE_INCLUDE, a directory holding iree/base/api.h,
else the runtime/src of the session's IREE runtime, tests/iree_runtime.py):
a runtimeless header before and after a VM-mode header."""

import itertools
import shutil
import subprocess

import pytest
from conftest import SAMPLES

from ireegen.cli import main

CC = shutil.which("cc")
USE = (
    "int main(void) {\n  iree_status_t status = iree_status_ignore(NULL);\n"
    "  return iree_status_is_ok(status) ? 0 : (int)iree_status_code(status);\n}\n"
)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("headers")
    for name, model, mode in (
        ("rla", "mlp/mlp.mlir", "runtimeless"),
        ("rlb", "simple_mul/simple_mul.mlir", "runtimeless"),
        ("vma", "simple_mul/simple_mul.mlir", "async"),
    ):
        assert (
            main(["emit", str(SAMPLES / model), "-o", str(root / name), "--name", name, "--execution-model", mode]) == 0
        )
    return root


def _compile(root, headers, *flags):
    tu = root / "tu.c"
    tu.write_text("".join(f'#include "{h}/{h}.h"\n' for h in headers) + USE)
    return subprocess.run(
        [
            CC,
            "-std=gnu11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
            str(root),
            *[f"-I{root / h}" for h in headers],
            *flags,
            str(tu),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_runtimeless_headers_together(outputs):
    for order in itertools.permutations(["rla", "rlb"]):
        proc = _compile(outputs, order)
        assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_runtimeless_and_vm_headers_in_any_order(outputs, iree_include_dir):
    include = iree_include_dir
    for order in itertools.permutations(["rla", "rlb", "vma"]):
        proc = _compile(outputs, order, "-isystem", str(include))
        assert proc.returncode == 0, (order, proc.stderr)
