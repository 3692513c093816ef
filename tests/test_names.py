"""Names are derived from what the templates define: every model function
whose C names would clash with the generated glue is refused with the
function named (before compiling, in the VM modes), and awkward but legal
names give C that compiles warning-free (runtimeless always; the VM modes,
built with CMake and run, when IREERuntime_DIR names an IREE runtime)."""

import os
import shutil
import subprocess

import pytest

from ireegen.cgen.symbols import clashes, defined_names
from ireegen.cli import main

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
@pytest.mark.skipif(not os.environ.get("IREERuntime_DIR"), reason="needs IREERuntime_DIR (an IREE runtime C SDK)")
@pytest.mark.parametrize(
    "em,mf", [(em, mf) for em in ("async", "inline-static", "inline-dynamic") for mf in ("vmfb", "emitc")]
)
def test_awkward_legal_names_build_warning_free_and_run_in_vm_modes(tmp_path, em, mf):
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
    configure = configure_args(tmp_path, build)
    for cmd in (configure, [configure[0], "--build", build]):
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.returncode == 0, proc.stdout
    run = subprocess.run([build / "use"], capture_output=True, text=True, timeout=60)
    if hits_known_runtime_bug(em, run):
        pytest.xfail(KNOWN_RUNTIME_BUG_REASON)
    assert run.returncode == 0, run.stderr
