"""User errors and hostile inputs that must end in one line naming the thing
at fault and what to do, with exit status 2: never a traceback, a compiler
dump, numpy's advice or the wrong words (issue 19, item 9)."""

import ast
import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, run_cli

from ireegen.common.errors import UsageError
from ireegen.compile.size_limits import MAX_STATIC_BYTES, check_static_memory
from ireegen.frontend.parse_guard import MAX_NESTING, nesting_depth

SIMPLE_MUL = SAMPLES / "simple_mul" / "simple_mul.mlir"
MLP = SAMPLES / "mlp" / "mlp.mlir"


def one_line(proc, *needles):
    """Exit status 2, exactly one line on stderr, each needle in it."""
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr[-3000:]
    assert lines[0].startswith("ireegen: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _onnx_model(tmp_path, graph_name="g", dims=(2, 3)):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(dims))
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], graph_name, [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize(
    "shape,needle",
    [
        ("x=\u00b2x3", "ASCII digits"),  # superscript two: str.isdigit() says yes, int() says no
        ("x=\u0661x3", "ASCII digits"),  # Arabic-Indic one: int() reads it as 1
        ("x=9223372036854775808x3", "elements; an input may have at most 2147483647"),
        ("x=" + "9" * 5000, "ASCII digits"),  # longer than int() converts
        ("x=65536x65536", "4294967296 elements"),
    ],
)
def test_input_shape_takes_ascii_dimensions_that_fit(tmp_path, shape, needle):
    model = _onnx_model(tmp_path, dims=("n", 3))
    one_line(run_cli("emit", model, "-o", tmp_path / "out", "--input-shape", shape), "--input-shape", needle)
    assert not (tmp_path / "out").exists()


@contextlib.contextmanager
def _tiny_filesystem(where, size):
    where.mkdir()
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("no mount command")
    proc = subprocess.run([mount, "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {proc.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


@pytest.mark.parametrize("size", ["8k", "24k"])
def test_full_disk_under_outdir_says_so_in_one_line(tmp_path, size):
    with _tiny_filesystem(tmp_path / "small", size) as small:
        out = small / "out"
        proc = run_cli("emit", MLP, "-o", out, "--execution-model", "runtimeless")
        one_line(proc, "No space left on device", str(out))
        assert list(small.iterdir()) == []  # no half-written output, no staging left


def test_full_disk_under_tmpdir_says_so_in_one_line(tmp_path):
    """iree-lld writes its objects to TMPDIR and reports a truncated file, not
    ENOSPC: the message names TMPDIR all the same."""
    with _tiny_filesystem(tmp_path / "small", "8k") as small:
        env = dict(os.environ, TMPDIR=str(small))
        proc = subprocess.run(
            [*_python_m(), "emit", MLP, "-o", tmp_path / "out"], capture_output=True, text=True, env=env
        )
        one_line(proc, "No space left on device", str(small), "TMPDIR")
        assert not (tmp_path / "out").exists()


def _python_m():
    import sys

    return [sys.executable, "-m", "ireegen"]


@pytest.mark.parametrize("execution_model", ["async", "runtimeless"])
def test_a_tensor_that_cannot_exist_is_refused_before_compiling(tmp_path, execution_model):
    model = tmp_path / "big.mlir"
    t = "tensor<1099511627776xf32>"  # 2^40 floats: 4 TiB
    model.write_text(f"func.func @big(%x: {t}) -> {t} {{\n  %0 = arith.addf %x, %x : {t}\n  return %0 : {t}\n}}\n")
    line = one_line(
        run_cli("emit", model, "-o", tmp_path / "out", "--execution-model", execution_model, "--no-verify"),
        "@big",
        "4,398,046,511,104 bytes",
        "smaller static dimensions",
    )
    assert ("2 GiB" in line) == (execution_model == "runtimeless")
    assert not (tmp_path / "out").exists()


def test_a_static_arena_over_2_gib_is_refused():
    check_static_memory(MAX_STATIC_BYTES - 64, 64, "m.mlir")
    with pytest.raises(UsageError, match="2,147,483,648-byte arena"):
        check_static_memory(MAX_STATIC_BYTES + 1, 0, "m.mlir")


@pytest.mark.parametrize("kind", ["dangling", "looping", "dangling-parent"])
def test_an_outdir_symlink_that_leads_nowhere_is_named(tmp_path, kind):
    link = tmp_path / "link"
    if kind == "looping":
        (tmp_path / "other").symlink_to(link)
        link.symlink_to(tmp_path / "other")
        needle = "is a symbolic link loop"
    else:
        link.symlink_to(tmp_path / "nowhere" / "deeper")
        needle = "is a dangling symbolic link"
    out = link / "sub" if kind == "dangling-parent" else link
    one_line(run_cli("emit", SIMPLE_MUL, "-o", out, "--no-verify"), str(link), needle)
    assert not (tmp_path / "nowhere").exists()


def test_deeply_nested_mlir_is_called_too_deep_not_malformed(tmp_path):
    depth = 100_000
    model = tmp_path / "deep.mlir"
    model.write_text(
        "module attributes {x = " + "[" * depth + "]" * depth + "} {\n"
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n}\n"
    )
    line = one_line(run_cli("emit", model, "-o", tmp_path / "out"), "deep", "at most 1,000 levels")
    assert "malformed" not in line


def test_nesting_depth_skips_strings_comments_and_arrows():
    text = b'func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { "[[[[" // ((((\n return }'
    assert nesting_depth(text) == 2
    assert all(nesting_depth(p.read_bytes()) < MAX_NESTING // 10 for p in (ROOT / "tests" / "models").glob("*.mlir"))


def test_dynamic_shape_refusal_names_the_flag_and_the_cmake_argument(tmp_path):
    model = _onnx_model(tmp_path, dims=("batch", 3))
    one_line(
        run_cli("emit", model, "-o", tmp_path / "out", "--execution-model", "runtimeless"),
        "argument x has a dynamic shape",
        "--input-shape x=Nx3",
        "INPUT_SHAPES x=Nx3",
    )
    dynamic_batch = ROOT / "tests" / "models" / "dynamic_batch.mlir"
    one_line(
        run_cli("emit", dynamic_batch, "-o", tmp_path / "o2", "--execution-model", "runtimeless"),
        "dynamic shape",
        "static dimensions",
    )


@pytest.fixture(scope="module")
def simple_mul_runtimeless(tmp_path_factory):
    out = tmp_path_factory.mktemp("sm") / "out"
    assert run_cli("emit", SIMPLE_MUL, "-o", out, "--execution-model", "runtimeless").returncode == 0
    return out


def test_run_never_advises_unpickling(tmp_path, simple_mul_runtimeless):
    raw = tmp_path / "x.bin"
    raw.write_bytes(np.ones(4, np.float32).tobytes())
    pickled = tmp_path / "objects.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    for path, needle in ((raw, "save the array with numpy.save"), (pickled, "pickled objects")):
        line = one_line(
            run_cli("run", simple_mul_runtimeless, "--function", "simple_mul", f"--input=@{path}", f"--input=@{path}"),
            str(path),
            needle,
        )
        assert "allow_pickle" not in line and "pickle.load" not in line
    line = one_line(run_cli("emit", SIMPLE_MUL, "-o", tmp_path / "o", "--verify-inputs", raw), "numpy.savez")
    assert "allow_pickle" not in line


def test_a_5000_character_graph_name_is_refused_in_one_line(tmp_path):
    model = _onnx_model(tmp_path, graph_name="g" * 5000)
    one_line(run_cli("emit", model, "-o", tmp_path / "out", "--no-verify"), "graph's name", "5,000 bytes", "rename")
    assert not (tmp_path / "out").exists()


def test_install_hints_name_the_packages_the_extras_pin():
    """The hint names the package as pyproject.toml's extra pins it: right
    for a wheel and a checkout alike (ireegen is on no package index)."""
    tomllib = pytest.importorskip("tomllib")
    from ireegen.frontend.onnx_import import OPTIONAL_PACKAGES, install_hint

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, requirement in OPTIONAL_PACKAGES.items():
        assert extras[extra] == [requirement]
        assert install_hint(extra) == f"pip install '{requirement}'"


# Strings that name a docs/ page without doc(): generated text (it must not
# depend on where ireegen is installed), and message sites still to be
# converted, by file.
DOCS_NAMED_AS_TEXT = {
    "ireegen/common/resources.py": "doc() itself",
    "ireegen/compile/int8_match.py": "a comment in the generated match spec",
    "ireegen/cli.py": "help texts: a page's name, short enough for --help",
}


def _ireegen_modules():
    for path in sorted((ROOT / "ireegen").rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text())


def _docstrings(tree) -> set:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def test_messages_name_docs_pages_through_doc():
    """A docs/ page in a message is a path the user can open, in a checkout
    as in an installed wheel (which ships docs/): common.resources.doc() makes
    it.  Every page named so exists."""
    from ireegen.common.resources import doc

    by_hand, pages = set(), set()
    for name, tree in _ireegen_modules():
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if "docs/" in node.value and name not in DOCS_NAMED_AS_TEXT:
                    by_hand.add(f"{name}:{node.lineno}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "doc" and node.args:
                pages.add(node.args[0].value)
    assert not by_hand, "name the page with common.resources.doc()"
    assert pages
    for page in pages:
        assert Path(doc(page).partition("#")[0]).is_file(), page
