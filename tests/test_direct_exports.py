"""The runtimeless glue calls IREE's dispatch functions by the global names
ireegen gives them in the executables object (ireegen/compile/direct_exports.py),
so that the library query and its tables stay out of the firmware."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import SAMPLES

from ireegen.compile.direct_exports import alias_exports
from ireegen.config.modes import make_config
from ireegen.emit import emit

MODEL = SAMPLES / "mlp" / "mlp.mlir"


def _globals(obj, nm="nm") -> list:
    out = subprocess.run([nm, "-g", "--defined-only", "-P", obj], stdout=subprocess.PIPE, text=True, check=True)
    return sorted(line.split()[0] for line in out.stdout.splitlines())


@pytest.fixture(scope="module")
def host_mlp(tmp_path_factory):
    out = tmp_path_factory.mktemp("direct") / "out"
    result = emit(MODEL, out, make_config("runtimeless"), name="mlp")
    assert result.manifest["verification"]["ran_the_emitted_code"]
    return out, result.manifest


def test_the_glue_calls_the_dispatch_functions_by_their_new_names(host_mlp):
    out, manifest = host_mlp
    abi = manifest["runtimeless"]["abi"]
    assert abi["direct_exports"] == ["mlp__export_0", "mlp__export_1"]
    assert _globals(out / "mlp_executables.o") == ["mlp__export_0", "mlp__export_1", abi["library_queries"][0]]
    glue = (out / "mlp.c").read_text()
    assert "library_query" not in glue
    assert "functions[2] = {mlp__export_0, mlp__export_1};" in " ".join(glue.split())
    # The dispatch function each name stands for is named in the glue.
    assert "// predict_dispatch_0_matmul_2x16x8_f32\nint mlp__export_0(" in glue


def test_objects_it_cannot_read_are_left_as_they_are(host_mlp, tmp_path):
    out, manifest = host_mlp
    query = manifest["runtimeless"]["abi"]["library_queries"]
    obj = tmp_path / "x.o"
    for data in (b"not an object", (out / "mlp_executables.o").read_bytes()):
        obj.write_bytes(data)
        # Not an ELF file; names given already; a query or an export the object lacks.
        for queries, exports in (
            (query, ["predict_dispatch_0_matmul_2x16x8_f32"]),
            (["other_library_query"], ["predict_dispatch_0_matmul_2x16x8_f32"]),
            (query, ["no_such_export"]),
            (query * 2, ["predict_dispatch_0_matmul_2x16x8_f32"]),
        ):
            assert alias_exports(obj, queries, exports, "mlp") is None
            assert obj.read_bytes() == data


@pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc"), reason="no arm-none-eabi-gcc")
def test_cortex_m_glue_links_without_the_library_tables(tmp_path):
    """On the M4 (ELF32, REL relocations, Thumb functions): verified under
    qemu by emit, and the firmware's --gc-sections drops the query."""
    from ireegen.cbuild.footprint import linked_sizes, measure

    out = tmp_path / "out"
    result = emit(MODEL, out, make_config("runtimeless", target_cpu="cortex-m4"), name="mlp")
    assert result.manifest["verification"]["ran_the_emitted_code"]
    assert result.manifest["runtimeless"]["abi"]["direct_exports"] == ["mlp__export_0", "mlp__export_1"]
    report = measure(out)
    executables = out / "mlp_executables.o"
    roots = [*result.manifest["runtimeless"]["abi"]["direct_exports"], *result.manifest["static_library_queries"]]
    whole, _ = linked_sizes("arm-none-eabi-gcc", ("-mcpu=cortex-m4", "-mthumb"), {"x": executables}, roots)
    assert report["flash"]["executables"] < whole["x"]["flash"]  # the query and its tables are left out
