"""Names are derived from what the templates define: every model function
whose C names would clash with the generated glue is refused with the
function named (before compiling, in the VM modes), and awkward but legal
names give C that compiles warning-free (runtimeless always; the VM modes,
built with CMake and run, when IREERuntime_DIR names an IREE runtime).
Outside text (file, graph and function names, assert messages) stays data
in every generated file (cgen/text.py), and graph names that are not C
identifiers give working C."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ireegen.cgen.symbols import clashes, defined_names, external_definitions
from ireegen.cli import main

ROOT_SAMPLES = Path(__file__).resolve().parent.parent / "samples"

CLASHING = [
    "report",
    "create_device",
    "create_loader",
    "create_modules",
    "create_hal_module",
    "push_tensor",
    "read_tensor",
]
LEGAL = [
    "create_device2",
    "invoke",
    "arena",
    "status",
    "model",
    "t2",
    "main",
    "memcpy",
    "error",
    "size",
    "initialize_x",
    "report_",
    "last_error_message",
    "f",
    "g_invoke2",
    "function_names",
]


def _model(path, names):
    body = "".join(
        f"func.func @{n}(%a: tensor<4xf32>) -> tensor<4xf32> {{\n"
        f"  %0 = arith.mulf %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}}\n"
        for n in names
    )
    path.write_text(body)
    return path


def _emit(capsys, model, out, *flags):
    status = main(["emit", str(model), "-o", str(out), "--name", "m", *flags])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("fn", CLASHING)
def test_vm_glue_clashes_are_refused_before_compiling(tmp_path, capsys, fn):
    status, err = _emit(capsys, _model(tmp_path / "x.mlir", ["ok", fn]), tmp_path / "out")
    assert status == 2 and f"function @{fn} " in err and "rename the function" in err, err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


def test_function_next_to_its_invoke_helper(tmp_path, capsys):
    status, err = _emit(capsys, _model(tmp_path / "x.mlir", ["f", "f_invoke"]), tmp_path / "out")
    assert status == 2 and "@f_invoke" in err and "m_f_invoke" in err, err


def test_runtimeless_initialize_is_refused(tmp_path, capsys):
    status, err = _emit(
        capsys, _model(tmp_path / "x.mlir", ["initialize"]), tmp_path / "out", "--execution-model", "runtimeless"
    )
    assert status == 2 and "function @initialize " in err and "m_initialize" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "file_name,words",
    [
        ("iree_model.mlir", ["'iree_model'", "iree_ prefix", "--name"]),
        ("a" * 200 + ".mlir", ["200 characters", "at most 64"]),
    ],
)
def test_derived_names_follow_the_name_rules(tmp_path, capsys, file_name, words):
    status = main(["emit", str(_model(tmp_path / file_name, ["f"])), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and all(w in err for w in words), err


def test_scanner_sees_what_templates_define():
    text = (
        "#define M_A 1\ntypedef struct m_t { int x; } m_t;\nstatic int m_report(int a,\n    int b) {\n"
        "  return a;\n}\nint m_f(int a);\nint m_f(int a) { return a; }\nstatic const char* const m_names[2] = {\n"
        '  "a", "b"};\n#ifdef __cplusplus\nextern "C" {\n#endif\n#define M_B 2\n'
    )
    assert [n for n, _, _, _ in defined_names(text)] == ["M_A", "m_t", "m_report", "m_f", "m_names", "M_B"]
    # Alternatives in the branches of one #if are not clashes; the same name twice in one branch is.
    assert not clashes({"a.c": "#ifdef X\n#define m_fail(a) a\n#else\n#define m_fail(a) 0\n#endif\n"})
    assert clashes({"a.c": "#ifdef X\n#define m_fail(a) a\n#define m_fail(a) 0\n#endif\n"})
    assert clashes({"a.c": text, "b.c": "int m_report(void) { return 0; }\n#define M_A 1\n"}) == {
        "m_report": ["a.c", "b.c"]
    }


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_awkward_legal_names_compile_warning_free_runtimeless(tmp_path, capsys):
    out = tmp_path / "out"
    status, err = _emit(capsys, _model(tmp_path / "x.mlir", LEGAL), out, "--execution-model", "runtimeless")
    assert status == 0, err
    (tmp_path / "use.c").write_text('#include "m.h"\nint main(void) { return (int)M_EXPORT_COUNT - 15; }\n')
    for src in ("m.c", "m_constants.S", str(tmp_path / "use.c")):
        proc = subprocess.run(
            ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", src, "-I", str(out), "-o", os.devnull],
            cwd=out,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr


# In the VM modes `report_` is refused: its C name is the glue's m_report.
VM_LEGAL = [n for n in LEGAL if n != "report_"]


@pytest.mark.runtime
@pytest.mark.parametrize(
    "em,mf", [(em, mf) for em in ("async", "inline-static", "inline-dynamic") for mf in ("vmfb", "emitc")]
)
def test_awkward_legal_names_build_warning_free_and_run_in_vm_modes(tmp_path, iree_runtime_dir, em, mf):
    from test_runtime_c import KNOWN_RUNTIME_BUG_REASON, configure_args, hits_known_runtime_bug

    _model(tmp_path / "x.mlir", VM_LEGAL)
    calls = "".join(
        f'  if (m_{n}(model, in, out) != 0) return fail(model, "{n}");\n'
        f'  for (int i = 0; i < 4; ++i) if (out[i] != in[i] * in[i]) return fail(model, "{n} value");\n'
        for n in VM_LEGAL
    )
    (tmp_path / "use.c").write_text(
        '#include <stdio.h>\n#include "m.h"\n'
        "static int fail(m_t* model, const char* what) {\n"
        '  fprintf(stderr, "%s: %s\\n", what, m_last_error(model));\n  m_destroy(model);\n  return 1;\n}\n'
        "int main(void) {\n  m_t* model = NULL;\n"
        "  iree_status_t status = m_create(iree_allocator_system(), &model);\n"
        "  if (!iree_status_is_ok(status)) return (int)iree_status_consume_code(status);\n"
        "  const float in[4] = {1.5f, -2.0f, 3.0f, 0.5f};\n  float out[4];\n"
        + calls
        + "  m_destroy(model);\n  return 0;\n}\n"
    )
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(names C)\nfind_package(ireegen CONFIG REQUIRED)\n"
        f"ireegen_add_model(lib SRC x.mlir NAME m EXECUTION_MODEL {em} MODULE_FORMAT {mf})\n"
        "add_executable(use use.c)\ntarget_link_libraries(use PRIVATE lib)\n"
        "target_compile_options(lib PRIVATE -Wall -Wextra -Werror)\n"
        "target_compile_options(use PRIVATE -Wall -Wextra -Werror)\n"
    )
    build = tmp_path / "build"
    configure = configure_args(iree_runtime_dir, tmp_path, build)
    for cmd in (configure, [configure[0], "--build", build]):
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.returncode == 0, proc.stdout
    run = subprocess.run([build / "use"], capture_output=True, text=True, timeout=60)
    if hits_known_runtime_bug(em, run):
        pytest.xfail(KNOWN_RUNTIME_BUG_REASON)
    assert run.returncode == 0, run.stderr


# Graph names PyTorch users meet that are not C identifiers.
GRAPH_NAMES = ["torch-jit-export", "model v1.2", "123abc", "modèle", 'say "hi"', "back\\slash"]


def _graph_model(tmp_path, graph):
    pytest.importorskip("onnx")
    from test_symbols import add_model

    return add_model(tmp_path / "g.onnx", 2.0, graph)


def _print_literal_program(tmp_path, literal, name="literal"):
    """Compiles (under -Werror) and runs a C program printing a string
    literal's bytes in hex: what the C compiler makes of it."""
    src = tmp_path / f"{name}.c"
    src.write_text(
        "#include <stdio.h>\n"
        f"static const char s[] = {literal};\n"
        "int main(void) {\n"
        '  for (size_t i = 0; i + 1 < sizeof s; ++i) printf("%02x", (unsigned char)s[i]);\n'
        "  return 0;\n}\n"
    )
    exe = tmp_path / name
    subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", str(src), "-o", str(exe)], check=True)
    return bytes.fromhex(subprocess.run([str(exe)], stdout=subprocess.PIPE, text=True, check=True).stdout)


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
@pytest.mark.parametrize("graph", GRAPH_NAMES)
def test_non_identifier_graph_names_runtimeless(tmp_path, capsys, graph):
    """Emitted (and verified against async, which builds and calls the C),
    then built under -Werror and called from a program of our own."""
    out = tmp_path / "out"
    status, err = _emit(capsys, _graph_model(tmp_path, graph), out, "--execution-model", "runtimeless")
    assert status == 0, err
    import json

    manifest = json.loads((out / "manifest.json").read_text())
    (fn,) = manifest["functions"]
    assert fn["name"] == graph  # the model's own name, for humans
    assert all(q.startswith("m__") for q in manifest["static_library_queries"])
    (tmp_path / "use.c").write_text(
        '#include <stdio.h>\n#include "m.h"\n'
        "static _Alignas(64) uint8_t arena[M_ARENA_SIZE > 0 ? M_ARENA_SIZE : 1];\n"
        "int main(void) {\n  m_t model;\n"
        "  if (!iree_status_is_ok(m_initialize(&model, arena, sizeof arena))) return 2;\n"
        "  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};\n  float y[4];\n"
        f"  if ({fn['c_symbol']}(&model, x, y) != 0) return 3;\n"
        '  for (int i = 0; i < 4; ++i) printf("%g\\n", (double)y[i]);\n  return 0;\n}\n'
    )
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(out)]
    sources = [str(tmp_path / "use.c"), "m.c", "m_constants.S", "m_executables.o"]
    subprocess.run(["cc", *flags, *sources, "-lm", "-o", str(tmp_path / "use")], cwd=out, check=True)
    run = subprocess.run([str(tmp_path / "use")], stdout=subprocess.PIPE, text=True, check=True)
    assert [float(v) for v in run.stdout.split()] == [3.0, 4.0, 5.0, 6.0]


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
@pytest.mark.parametrize("graph", GRAPH_NAMES)
def test_non_identifier_graph_names_async_lookup(tmp_path, capsys, graph):
    """The glue looks the function up by a C string literal: compiled under
    -Werror, its bytes are the module's own `module.function` name (the
    glue itself needs the IREE SDK to compile, which CI does not have)."""
    import iree.runtime as rt

    out = tmp_path / "out"
    status, err = _emit(capsys, _graph_model(tmp_path, graph), out, "--execution-model", "async")
    assert status == 0, err
    module = rt.VmModule.copy_buffer(rt.VmInstance(), (out / "m.vmfb").read_bytes())
    (function,) = [f for f in module.function_names if not f.startswith("__")]
    assert function == graph
    literals = re.findall(r'^\s*("m__module\..*"),$', (out / "m.c").read_text(), re.M)
    assert len(literals) == 1, literals
    assert _print_literal_program(tmp_path, literals[0]) == f"{module.name}.{function}".encode()


HOSTILE_TEXT = [
    "x\n__attribute__((constructor)) static void pwn(void) { }\n//",
    "trailing backslash \\",
    "close */ comment /* open",
    "trigraph ??/\nint pwn;",
    "cr\rline\u2028sep\u2029and \u202e bidi \u200b zero-width é 😀",
    'quote " and \\" and \\x41 and \\101 and ??= and \x00 nul',
]


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_text_rule_keeps_outside_text_data(tmp_path, text):
    """cgen/text.py: a comment stays one comment (gcc with -trigraphs, so
    `??/` would be a backslash), and a string literal holds exactly the
    text's UTF-8 bytes."""
    from ireegen.cgen.render import banner
    from ireegen.cgen.text import c_comment, c_string_literal

    comment = c_comment(text)
    assert comment.isascii() and comment.isprintable() and "*/" not in comment and "??" not in comment
    assert not comment.endswith("\\")
    src = tmp_path / "c.c"
    src.write_text(f"{banner(text)}\n// {comment}\n/* {comment} */\nint only_this;\n")
    subprocess.run(
        ["cc", "-std=c11", "-trigraphs", "-Wall", "-Wextra", "-Werror", "-c", str(src), "-o", str(tmp_path / "c.o")],
        check=True,
    )
    nm = subprocess.run(["nm", "-g", "--defined-only", "-P", str(tmp_path / "c.o")], stdout=subprocess.PIPE, text=True)
    assert [line.split()[0] for line in nm.stdout.splitlines()] == ["only_this"]
    # The banner may wrap (c_layout.comment), but every line stays a comment.
    assert all(line.startswith("// ") for line in banner(text).splitlines())
    assert _print_literal_program(tmp_path, c_string_literal(text)) == text.encode("utf-8", "surrogatepass")


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
@pytest.mark.parametrize("suffix", [".mlir", ".onnx"])
def test_model_file_name_cannot_become_code(tmp_path, capsys, suffix):
    """The model's file name is in every file's banner (and, for ONNX, in the
    imported program's locations): a name with a newline, a quote and a
    constructor stays a comment, and the library builds."""
    from ireegen.cgen.render import banner

    name = 'x\n__attribute__((constructor)) static void pwn(void) { } "q" \\'
    if suffix == ".onnx":
        pytest.importorskip("onnx")
        from test_symbols import add_model

        model = add_model(tmp_path / f"{name}.onnx", 2.0, "main_graph")
    else:
        model = _model(tmp_path / f"{name}.mlir", ["f"])
    out = tmp_path / "out"
    status = main(["emit", str(model), "-o", str(out), "--name", "m", "--execution-model", "runtimeless"])
    err = capsys.readouterr().err
    assert status == 0, err
    head = banner(model.name)  # wrapped to the column limit: every line a `//` comment
    assert "pwn" in head and all(line.startswith("// ") for line in head.splitlines())
    for f in ("m.c", "m.h", "m_constants.S"):
        text = (out / f).read_text()
        assert text.startswith(head) and "constructor" not in text[len(head) :], f
    assert "constructor" not in "".join(n for t in [(out / "m.c").read_text()] for n, *_ in defined_names(t))


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_values_named_like_the_bodies_locals(tmp_path, capsys):
    """Inputs and outputs named after every name a function body declares
    or uses (naming.reserved_parameters, read off the templates) emit
    runtimeless C that builds and verifies, `state` among them (issue 20)."""
    from ireegen.cgen.naming import reserved_parameters

    names = sorted(n for n in reserved_parameters() if n.isidentifier())
    assert {"state", "arena", "result", "next", "constants"} <= set(names)
    body = "".join(
        f'func.func @f{i}(%a: tensor<4xf32> {{iree.abi.name = "{n}"}}) -> (tensor<4xf32> {{iree.abi.name = "{n}"}}) {{\n'
        f"  %0 = arith.mulf %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}}\n"
        for i, n in enumerate(names)
    )
    (tmp_path / "x.mlir").write_text(body)
    status, err = _emit(capsys, tmp_path / "x.mlir", tmp_path / "out", "--execution-model", "runtimeless")
    assert status == 0, err


@pytest.mark.parametrize("graph", ["torch-jit-export", "evil\n#error pwned\n*/ \\"])
def test_emitc_refuses_function_names_that_are_not_identifiers(tmp_path, capsys, graph):
    """IREE's EmitC writes function names into C raw (known-iree-issues #7)."""
    model = _graph_model(tmp_path, graph)
    status, err = _emit(capsys, model, tmp_path / "out", "--module-format", "emitc", "--no-workarounds")
    assert status == 2 and "--module-format emitc refused" in err and "not a C identifier" in err, err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


def test_scanner_sees_indented_and_attributed_definitions():
    """symbols.py: a definition is one wherever its line starts, behind
    __attribute__((...)), and not inside an open parenthesis or a macro body."""
    text = (
        ' __attribute__((constructor)) static void pwn(void) { system("x"); }\n'
        "\tint m_x = 1;\n"
        "int m_f(int a,\n        int (*cb)(int), char c) {\n  return a;\n}\n"
        "#define M_CALL(a) \\\n   m_f(a, 0, 0) { }\n"
    )
    assert [(n, k) for n, k, _, _ in defined_names(text)] == [
        ("pwn", "function"),
        ("m_x", "object"),
        ("m_f", "function"),
        ("M_CALL", "macro"),
    ]
    assert external_definitions(text) == ["m_f", "m_x"]
    assert clashes({"a.c": text, "b.c": "static void pwn(void) {}\n"}) == {"pwn": ["a.c", "b.c"]}


ASSERT_MODEL = r"""
func.func @f(%n: i32, %a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i32
  %ok = arith.cmpi sgt, %n, %c0 : i32
  cf.assert %ok, "n must be > 0\0A*/ int pwn; /* \22quoted\22 \5C ??/ mod\C3\A8le"
  %0 = arith.mulf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_assert_message_is_data_in_runtimeless_c(tmp_path, capsys):
    """A cf.assert message (the model's text) reaches the caller byte for
    byte through NAME_last_error(), and never becomes C."""
    (tmp_path / "x.mlir").write_text(ASSERT_MODEL)
    out = tmp_path / "out"
    status, err = _emit(capsys, tmp_path / "x.mlir", out, "--execution-model", "runtimeless")
    assert status == 0, err
    (tmp_path / "use.c").write_text(
        '#include <stdio.h>\n#include "m.h"\n'
        "static _Alignas(64) uint8_t arena[M_ARENA_SIZE > 0 ? M_ARENA_SIZE : 1];\n"
        "int main(void) {\n  m_t model;\n"
        "  if (!iree_status_is_ok(m_initialize(&model, arena, sizeof arena))) return 2;\n"
        "  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};\n  float y[4];\n"
        "  if (m_f(&model, 0, x, y) == 0) return 3;\n"
        '  for (const char* c = m_last_error(&model); *c; ++c) printf("%02x", (unsigned char)*c);\n'
        "  return 0;\n}\n"
    )
    flags = ["-std=c11", "-trigraphs", "-Wall", "-Wextra", "-Werror", "-I", str(out)]
    sources = [str(tmp_path / "use.c"), "m.c", "m_constants.S", "m_executables.o"]
    subprocess.run(["cc", *flags, *sources, "-lm", "-o", str(tmp_path / "use")], cwd=out, check=True)
    run = subprocess.run([str(tmp_path / "use")], stdout=subprocess.PIPE, text=True, check=True)
    message = 'n must be > 0\n*/ int pwn; /* "quoted" \\ ??/ modèle'
    assert bytes.fromhex(run.stdout).decode() == f"@f: {message}"


def test_executable_names_from_prefixed_functions_are_renamed_too(tmp_path, capsys):
    """A function called `m__a b` in model m still gives an identifier."""
    (tmp_path / "x.mlir").write_text(
        'func.func @"m__a b"(%a: tensor<4xf32>) -> tensor<4xf32> {\n'
        "  %0 = arith.mulf %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
    )
    status, err = _emit(capsys, tmp_path / "x.mlir", tmp_path / "out", "--execution-model", "runtimeless")
    assert status == 0, err
    import json

    queries = json.loads((tmp_path / "out" / "manifest.json").read_text())["static_library_queries"]
    assert queries == ["m__m_a_b_dispatch_0_library_query"]


def test_model_path_that_is_not_utf8_is_refused_in_one_line(tmp_path, capsys):
    raw = os.fsencode(tmp_path) + b"/bad\xffname.mlir"
    with open(raw, "w") as f:
        f.write((ROOT_SAMPLES / "simple_mul" / "simple_mul.mlir").read_text())
    status = main(["emit", os.fsdecode(raw), "-o", str(tmp_path / "out"), "--name", "m"])
    err = capsys.readouterr().err
    assert status == 2 and "bad\\xffname.mlir: the model's path is not valid UTF-8" in err, err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()
