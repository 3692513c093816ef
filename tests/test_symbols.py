"""Every global symbol a model's library defines starts with the model's
prefix (docs/c-api.md), in every execution model, executable format,
module format and data format, and two models whose graphs share a name
(torch.onnx.export calls every graph `main_graph`) link into one program
and each computes its own numbers.

What is checked where: `nm` over every object iree-compile writes and every
object built from the generated sources that builds without the IREE
runtime C SDK (runtimeless C, the data sources); the VM modes' runtime glue
and EmitC module need the SDK's headers, which CI does not install, so their
global definitions are read off the C text (symbols.external_definitions)."""

import shutil
import subprocess
import sys

import numpy as np
import pytest

from ireegen.cbuild.toolchains import toolchain_for
from ireegen.cgen.symbols import external_definitions
from ireegen.cli import main

pytest.importorskip("onnx")

# Global symbols the objects may define without the model's prefix, and why.
# (Undefined references, to libm or the IREE runtime, are not definitions
# and do not count.)
EXCEPTIONS = {
    # None today: every definition ireegen or iree-compile writes is
    # NAME_-prefixed or local.
}

WARNINGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"]


def add_model(path, constant, graph="main_graph"):
    """An ONNX model of one Add (y = x + constant), one executable."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    k = numpy_helper.from_array(np.full([4], constant, np.float32), "k")
    g = helper.make_graph([helper.make_node("Add", ["x", "k"], ["y"])], graph, [x], [y], [k])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {"net1": add_model(root / "net1.onnx", 1.0), "net2": add_model(root / "net2.onnx", 100.0)}


@pytest.fixture(scope="module")
def emitted(models, tmp_path_factory):
    """emit(name, *flags) -> OUTDIR, each configuration emitted once per module."""
    root = tmp_path_factory.mktemp("out")
    done = {}

    def emit(name, *flags):
        key = (name, flags)
        if key not in done:
            out = root / f"{name}-{len(done)}"
            status = main(["emit", str(models[name]), "-o", str(out), "--name", name, "--no-verify", *flags])
            assert status == 0, (name, flags)
            done[key] = out
        return done[key]

    return emit


def _nm_for(cc: str) -> str:
    nm = cc[: -len("gcc")] + "nm" if cc.endswith("gcc") else "nm"
    if shutil.which(nm) is None:
        pytest.skip(f"{nm} is not installed")
    return nm


def defined_globals(nm: str, obj) -> list:
    out = subprocess.run([nm, "-g", "--defined-only", "-P", str(obj)], stdout=subprocess.PIPE, text=True, check=True)
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def build_objects(outdir, cc="cc", cflags=()) -> list:
    """Compiles every generated source that needs no IREE runtime headers."""
    objects = []
    for src in sorted(outdir.iterdir()):
        if src.suffix not in (".c", ".S"):
            continue
        text = src.read_text()
        if "#include <iree/" in text or '#include "iree/' in text or src.name.endswith("_module.c"):
            continue  # the VM glue and EmitC module: read by external_definitions instead
        obj = src.with_suffix(src.suffix + ".o")
        subprocess.run([cc, *WARNINGS, *cflags, "-c", src.name, "-o", obj.name], check=True, cwd=outdir)
        objects.append(obj)
    return objects


def foreign_globals(name, outdir, cc="cc", cflags=()) -> dict:
    """{file: [global symbols it defines outside NAME_]} for an OUTDIR."""
    nm = _nm_for(cc)
    found = {}
    objects = [*outdir.glob("*_executables.o"), *build_objects(outdir, cc, cflags)]
    assert objects, f"nothing to check in {outdir}"
    for obj in objects:
        found[obj.name] = defined_globals(nm, obj)
    for src in [*outdir.glob("*.c"), *outdir.glob("*.h")]:
        found[src.name] = external_definitions(src.read_text())
    return {
        f: bad
        for f, symbols in found.items()
        if (bad := [s for s in symbols if not s.startswith(name + "_") and s not in EXCEPTIONS])
    }


VM_CONFIGS = [
    ("--execution-model", "async"),
    ("--execution-model", "async", "--threads", "2"),
    ("--execution-model", "async", "--data-format", "c"),
    ("--execution-model", "async", "--executable-format", "static-library"),
    ("--execution-model", "async", "--executable-format", "static-library", "--module-format", "emitc"),
    ("--execution-model", "inline-dynamic", "--executable-format", "static-library"),
    ("--execution-model", "inline-dynamic", "--executable-format", "static-library", "--module-format", "emitc"),
    ("--execution-model", "inline-static"),
]
RUNTIMELESS_CONFIGS = [
    ("--execution-model", "runtimeless"),
    ("--execution-model", "runtimeless", "--data-format", "c"),
]


@pytest.mark.parametrize("flags", RUNTIMELESS_CONFIGS + VM_CONFIGS, ids=" ".join)
def test_every_global_symbol_is_under_the_prefix(emitted, flags):
    out = emitted("net1", *flags)
    assert foreign_globals("net1", out) == {}


# Cross and bare-metal targets: the objects iree-compile writes for them, and
# the generated C built by their own compilers, read by their own nm.
RUNTIMELESS = ("--execution-model", "runtimeless")
VM_STATIC = ("--execution-model", "async", "--executable-format", "static-library")
CROSS = [
    ("aarch64-unknown-linux-gnu", None, RUNTIMELESS),
    ("aarch64-unknown-linux-gnu", None, VM_STATIC),
    ("riscv64-unknown-linux-gnu", None, RUNTIMELESS),
    ("riscv64-unknown-linux-gnu", None, VM_STATIC),
    (None, "cortex-m4", RUNTIMELESS),
]


@pytest.mark.parametrize(
    "triple, cpu, mode", CROSS, ids=lambda v: v if isinstance(v, str) else ("" if v is None else v[1])
)
def test_cross_objects_are_under_the_prefix(emitted, triple, cpu, mode):
    target = ["--target-triple", triple] if triple else ["--target-cpu", cpu]
    out = emitted("net1", *mode, *target)
    import json

    manifest = json.loads((out / "manifest.json").read_text())
    t = manifest["target"]
    try:
        toolchain = toolchain_for(t["triple"], cpu=t["cpu"], need_emulator=False, cpu_features=t["features"])
    except Exception as e:  # noqa: BLE001 - a missing cross compiler
        pytest.skip(str(e))
    assert foreign_globals("net1", out, toolchain.cc, toolchain.cflags) == {}


def _archive(name, outdir, cc="cc") -> str:
    """lib<name>.a of the model's objects, as a build system links it."""
    objects = [*outdir.glob("*_executables.o"), *build_objects(outdir, cc)]
    archive = outdir / f"lib{name}.a"
    archive.unlink(missing_ok=True)
    subprocess.run(["ar", "rcs", str(archive), *map(str, objects)], check=True)
    return str(archive)


TWO_MODELS_MAIN = r"""
#include <stdio.h>
#include "net1.h"
#include "net2.h"

#define BYTES(n) ((n) > 0 ? (n) : 1)
static _Alignas(64) uint8_t arena1[BYTES(NET1_ARENA_SIZE)];
static _Alignas(64) uint8_t arena2[BYTES(NET2_ARENA_SIZE)];

int main(void) {
  net1_t m1;
  net2_t m2;
  if (!iree_status_is_ok(net1_initialize(&m1, arena1, sizeof arena1))) return 2;
  if (!iree_status_is_ok(net2_initialize(&m2, arena2, sizeof arena2))) return 3;
  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  float y1[4], y2[4];
  if (net1_main_graph(&m1, x, y1) != 0) return 4;
  if (net2_main_graph(&m2, x, y2) != 0) return 5;
  for (int i = 0; i < 4; ++i) printf("%g %g\n", (double)y1[i], (double)y2[i]);
  return 0;
}
"""


@pytest.mark.parametrize("data_format", ["asm", "c"])
def test_two_main_graph_models_link_and_each_computes_its_own(emitted, tmp_path, data_format):
    """net1 is x+1 and net2 x+100, both graphs called main_graph; linked as
    static libraries (the linker takes the first definition of a symbol two
    archives share, silently)."""
    flags = ("--execution-model", "runtimeless", "--data-format", data_format)
    outs = {name: emitted(name, *flags) for name in ("net1", "net2")}
    main_c = tmp_path / "main.c"
    main_c.write_text(TWO_MODELS_MAIN)
    program = tmp_path / "two_models"
    archives = [_archive(name, out) for name, out in outs.items()]
    includes = [f"-I{out}" for out in outs.values()]
    subprocess.run(["cc", *WARNINGS, *includes, str(main_c), *archives, "-lm", "-o", str(program)], check=True)
    run = subprocess.run([str(program)], stdout=subprocess.PIPE, text=True)
    assert run.returncode == 0, run.returncode
    got = np.array([[float(v) for v in line.split()] for line in run.stdout.splitlines()])
    x = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(got[:, 0], x + 1)
    np.testing.assert_array_equal(got[:, 1], x + 100)


@pytest.mark.parametrize("flags", [c for c in VM_CONFIGS if "static-library" in c], ids=" ".join)
def test_two_main_graph_models_define_no_symbol_twice_in_vm_modes(emitted, flags):
    """The VM modes' objects of the two models (their runtime glue needs the
    IREE SDK, so they are not linked here): no defined global in common."""
    nm = _nm_for("cc")
    symbols = {}
    for name in ("net1", "net2"):
        out = emitted(name, *flags)
        names = [s for o in [*out.glob("*_executables.o"), *build_objects(out)] for s in defined_globals(nm, o)]
        names += [s for src in out.glob("*.[ch]") for s in external_definitions(src.read_text())]
        symbols[name] = set(names)
    assert symbols["net1"] and symbols["net2"]
    assert symbols["net1"] & symbols["net2"] == set()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
