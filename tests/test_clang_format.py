"""The generated C is clang-format-clean in IREE's style (the repository's
.clang-format: Google) for short and very long model, function and input
names, in every execution model and data format; ireegen lays it out
itself (ireegen/cgen/c_layout.py), so the output does not depend on
clang-format being installed.  Left out: the EmitC module header
(NAME_module.h) and the static library's header (NAME_executables.h),
which are iree-compile's text, not ireegen's; the byte tables inside the
generated data sources are fenced with `// clang-format off/on`."""

import random
import shutil
import subprocess

import pytest
from conftest import ROOT

from ireegen.cgen import c_layout
from ireegen.cli import main

pytestmark = pytest.mark.skipif(shutil.which("clang-format") is None, reason="needs clang-format")

STYLE = f"--style=file:{ROOT / '.clang-format'}"
LONG_MODEL = "a_model_name_of_the_longest_kind_ireegen_allows_sixty_four_chars"
LONG_FUNCTION = "a_function_name_that_is_longer_than_any_line_should_be_for_sure"
LONG_INPUT = "an_input_name_much_longer_than_anyone_would_reasonably_choose"

# Names the emitted files are checked under: (model name, function, input).
NAMES = {"short": ("m", "f", "x"), "long": (LONG_MODEL, LONG_FUNCTION, LONG_INPUT)}

# (execution model, extra flags): every execution model, both module
# formats, both data formats.
MODES = {
    "async": ("async", []),
    "async-emitc": ("async", ["--module-format", "emitc"]),
    "async-c-data": ("async", ["--data-format", "c"]),
    "async-threads": ("async", ["--threads", "2"]),  # the task executor's glue
    "inline-static": ("inline-static", []),
    "inline-dynamic": ("inline-dynamic", []),
    "inline-dynamic-emitc": ("inline-dynamic", ["--module-format", "emitc"]),
    "runtimeless-c": ("runtimeless", ["--data-format", "c"]),
    "runtimeless-asm": ("runtimeless", ["--data-format", "asm"]),
}

# What ireegen does not lay out: iree-compile's own C.
NOT_OURS = ("_module.h", "_executables.h")


def _model(function: str, input_name: str, vm: bool) -> str:
    """Two named inputs, a named and an unnamed result, a weight; in the VM
    modes also a dynamic-shape function (the buffer-view call) and scalars."""
    text = (
        f'func.func @{function}(%a: tensor<4xf32> {{iree.abi.name = "{input_name}"}},\n'
        f'    %b: tensor<2x4xf32> {{iree.abi.name = "{input_name}_2"}})\n'
        f'    -> (tensor<2x4xf32> {{iree.abi.name = "{input_name}_out"}}, tensor<4xf32>) {{\n'
        "  %w = arith.constant dense<[1.5, -2.0, 3.25, 0.5]> : tensor<4xf32>\n"
        "  %0 = arith.mulf %a, %w : tensor<4xf32>\n"
        "  %1 = tensor.empty() : tensor<2x4xf32>\n"
        "  %2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,\n"
        '      affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}\n'
        "      ins(%b, %0 : tensor<2x4xf32>, tensor<4xf32>) outs(%1 : tensor<2x4xf32>) {\n"
        "    ^bb0(%x: f32, %y: f32, %o: f32):\n"
        "      %s = arith.addf %x, %y : f32\n"
        "      linalg.yield %s : f32\n"
        "  } -> tensor<2x4xf32>\n"
        "  return %2, %0 : tensor<2x4xf32>, tensor<4xf32>\n"
        "}\n"
    )
    if vm:
        text += (
            f'func.func @{function}_dynamic(%a: tensor<?xf32> {{iree.abi.name = "{input_name}"}}, %s: f32)\n'
            f'    -> (tensor<?xf32> {{iree.abi.name = "{input_name}_out"}}, f32) {{\n'
            "  %0 = arith.mulf %a, %a : tensor<?xf32>\n"
            "  %1 = arith.mulf %s, %s : f32\n"
            "  return %0, %1 : tensor<?xf32>, f32\n"
            "}\n"
        )
    return text


@pytest.fixture(scope="session")
def emitted(tmp_path_factory):
    """OUTDIR of each (mode, names), emitted once per session."""
    root = tmp_path_factory.mktemp("clang_format")
    out = {}
    for mode, (execution_model, flags) in MODES.items():
        for size, (name, function, input_name) in NAMES.items():
            model = root / f"{size}-{mode}.mlir"
            model.write_text(_model(function, input_name, execution_model != "runtimeless"))
            outdir = root / f"{size}-{mode}"
            args = ["emit", str(model), "-o", str(outdir), "--name", name, "--no-verify"]
            status = main([*args, "--execution-model", execution_model, *flags])
            assert status == 0, (mode, size)
            out[mode, size] = outdir
    return out


def _unformatted(path):
    """clang-format's changes to `path`, as a diff ("" when clean)."""
    result = subprocess.run(["clang-format", STYLE, "--dry-run", "-Werror", str(path)], capture_output=True, text=True)
    return "" if result.returncode == 0 else result.stderr[:3000]


@pytest.mark.parametrize("size", NAMES)
@pytest.mark.parametrize("mode", MODES)
def test_generated_c_is_clang_format_clean(emitted, mode, size):
    outdir = emitted[mode, size]
    files = sorted(p for p in outdir.iterdir() if p.suffix in (".c", ".h") and not p.name.endswith(NOT_OURS))
    assert any(p.suffix == ".c" for p in files) and any(p.suffix == ".h" for p in files)
    problems = {p.name: _unformatted(p) for p in files}
    assert not any(problems.values()), "\n".join(f"{k}:\n{v}" for k, v in problems.items() if v)


def test_stateful_runtimeless_is_clang_format_clean(tmp_path):
    """A model with state (initializers, globals, state versions) under the
    longest name."""
    outdir = tmp_path / "out"
    model = ROOT / "tests" / "models" / "stateful.mlir"
    args = ["emit", str(model), "-o", str(outdir), "--name", LONG_MODEL, "--no-verify"]
    assert main([*args, "--execution-model", "runtimeless"]) == 0
    files = [p for p in outdir.iterdir() if p.suffix in (".c", ".h") and not p.name.endswith(NOT_OURS)]
    problems = {p.name: _unformatted(p) for p in files}
    assert not any(problems.values()), "\n".join(f"{k}:\n{v}" for k, v in problems.items() if v)


def test_the_byte_tables_are_fenced(emitted):
    """The bytes are the only region clang-format is told to skip."""
    for key in (("async-c-data", "long"), ("runtimeless-c", "long")):
        for path in emitted[key].glob("*.c"):
            text = path.read_text()
            assert text.count("// clang-format off") == text.count("// clang-format on") <= 1, path


def _identifier(rng, longest):
    return "".join(rng.choice("abcdefghjk_") for _ in range(rng.randint(1, longest))).strip("_") or "x"


def _argument(rng, longest, declaration):
    if declaration:
        kind = rng.choice(["int", "const float*", "iree_allocator_t", "m_t*", "iree_vm_list_t**"])
        return f"{kind} {_identifier(rng, longest)}"
    pick = rng.random()
    if pick < 0.2:
        return "&" + _identifier(rng, longest)
    if pick < 0.3:
        return "model->" + _identifier(rng, longest)
    if pick < 0.4:
        return f'IREE_SV("{_identifier(rng, 40)}")'
    if pick < 0.5:
        return '"' + " ".join(_identifier(rng, 12) for _ in range(rng.randint(1, 8))) + '"'
    if pick < 0.55:
        return "(float)" + _identifier(rng, longest)
    return _identifier(rng, longest)


@pytest.mark.parametrize("scale", [1, 2.5])
def test_layout_agrees_with_clang_format(scale):
    """c_layout's declarations and calls, for random names and argument
    lists (scale 2.5: names longer than a line), are what clang-format
    makes of them."""
    rng = random.Random(int(scale * 10))
    longest = int(40 * scale)
    cases = []
    for i in range(300):
        kind = rng.choice(["declaration", "definition", "call", "assignment", "return", "status"])
        count = rng.randint(0 if kind == "call" else 1, 7)
        if kind in ("declaration", "definition"):
            params = [_argument(rng, longest, True) for _ in range(count)]
            ret = rng.choice(["int", "static iree_status_t", "iree_status_t", "void"])
            name = "f_" + _identifier(rng, int(70 * scale))
            text = c_layout.declaration(ret, name, params, ";" if kind == "declaration" else " {")
            cases.append(text + ("\n  x = 1;\n  return;\n}" if kind == "definition" else ""))
            continue
        depth = rng.choice([1, 2, 3])
        lead = {
            "call": "",
            "assignment": f"iree_vm_list_t* {_identifier(rng, 20)} = ",
            "return": "return ",
            "status": "status = ",
        }[kind]
        args = [_argument(rng, longest, False) for _ in range(count)]
        body = c_layout.call(2 * depth, "g_" + _identifier(rng, int(60 * scale)), args, lead=lead)
        opening = "".join(f"{'  ' * d}if (c) {{\n{'  ' * (d + 1)}x = 1;\n" for d in range(1, depth))
        closing = "".join(f"{'  ' * d}}}\n" for d in reversed(range(1, depth)))
        cases.append(f"void f{i}(void) {{\n  x = 1;\n{opening}{body}\n{closing}}}")
    source = "\n\n".join(cases) + "\n"
    formatted = subprocess.run(
        ["clang-format", STYLE, "--assume-filename=x.c"], input=source, capture_output=True, text=True, check=True
    ).stdout
    differing = [
        (ours, theirs) for ours, theirs in zip(source.split("\n\n"), formatted.split("\n\n")) if ours != theirs
    ]
    assert not differing, (
        f"{len(differing)} of {len(cases)} differ; the first:\n{differing[0][0]}\n---\n{differing[0][1]}"
    )


def test_comments_and_defines_agree_with_clang_format():
    rng = random.Random(5)
    blocks = []
    for _ in range(100):
        words = [_identifier(rng, rng.choice([8, 8, 30, 90])) for _ in range(rng.randint(1, 30))]
        blocks.append(c_layout.comment(" ".join(words)) + "\nint x;")
        blocks.append(c_layout.define(_identifier(rng, 120).upper() or "X", str(rng.randint(0, 10**6))))
    source = "\n\n".join(blocks) + "\n"
    formatted = subprocess.run(
        ["clang-format", STYLE, "--assume-filename=x.c"], input=source, capture_output=True, text=True, check=True
    ).stdout
    assert formatted == source


def test_braced_arrays_agree_with_clang_format():
    cases = []
    for length in range(20, 90):
        for values in (["4"], ["2", "4"], ["1", "3", "224", "224"]):
            name = "x" * length + "_shape"
            array = c_layout.braced_variable(2, "static const iree_hal_dim_t", name, f"[{len(values)}]", values)
            cases.append(f"void f(void) {{\n{array}\n  x = 1;\n}}")
    source = "\n".join(cases) + "\n"
    formatted = subprocess.run(
        ["clang-format", STYLE, "--assume-filename=x.c"], input=source, capture_output=True, text=True, check=True
    ).stdout
    assert formatted == source


def test_a_long_braced_array_is_laid_out_without_recursion():
    """Thousands of values (a detector's constants): the layout search takes
    each state once, without recursion, and packs the values in order
    within the column limit (clang-format itself lays out a list this long
    in aligned columns, which is why the generated tables are fenced)."""
    rng = random.Random(7)
    values = [f"{rng.uniform(-1, 1):.6g}f" for _ in range(3000)]
    array = c_layout.braced_variable(2, "static const float", "model_anchors", f"[{len(values)}]", values)
    lines = array.split("\n")
    assert lines[0].startswith("  static const float model_anchors[3000] = {")
    assert all(len(line) <= c_layout.COLUMNS for line in lines)
    assert array.split("{", 1)[1].replace("\n", " ").split() == [v + "," for v in values[:-1]] + [values[-1] + "};"]
