"""CI: the ONNX node tests, fixed subset (one test per operator, listed in
tests/onnx_conformance_status.json), in all four execution models, against
ONNX's reference outputs.  Each test's model goes in as `TEST.onnx`,
through ireegen's own ONNX import (ireegen/frontend/onnx_import.py).  See
tests/onnx_conformance.py.

Fails on any crash (a Python traceback from ireegen), wrong number or
generated-C build failure, and on any status that differs from the
committed file: a fix shows up as a change too, so that the file and
docs/onnx-conformance.md stay true.  CI (`IREEGEN_SUITE=ci`) runs the
tests of that subset whose name's CRC-32 is a multiple of
CI_CONFORMANCE_STRIDE (tests/conftest.py).  The pool has 2 workers.  Measured:
6.5 CPU-minutes (about 3.5 min on 2 idle cores; 8.1 when the import went
through the iree-import-onnx CLI), 16 min wall with 1 worker on 2 cores
with a load average of 5."""

import pytest

pytest.importorskip("onnx")

import onnx_conformance as oc  # noqa: E402
from conftest import CI_CONFORMANCE_STRIDE, ci_suite, stride_subset  # noqa: E402

REGENERATE = "python tests/onnx_conformance.py --subset all --write-status --write-doc"


@pytest.fixture(scope="module")
def run():
    committed = oc.load_status()
    names = committed["ci_subset"]
    if ci_suite():
        names = [name for name in names if stride_subset(name, CI_CONFORMANCE_STRIDE)]
    cases = oc.collect_cases(set(names))
    missing = sorted(set(names) - set(cases))
    assert not missing, f"this onnx ({oc.versions()['onnx_version']}) no longer generates {missing}; {REGENERATE}"
    return committed, oc.run_cases(cases, names, jobs=2)


def test_subset_is_fixed_and_large_enough():
    committed = oc.load_status()
    assert len(committed["ci_subset"]) >= 150
    assert all(name in committed["tests"] for name in committed["ci_subset"])


def test_no_crash_wrong_number_or_bad_c(run):
    _, results = run
    bad = [
        f"{name} {mode}: {r.status}: {r.reason}"
        for name, t in sorted(results.items())
        for mode, r in t.modes.items()
        if r.status in oc.FAILURES
    ]
    assert not bad, f"{len(bad)} test x mode failures:\n" + "\n".join(bad)


def test_statuses_are_the_committed_ones(run):
    committed, results = run
    diff = oc.status_diff(results, committed["tests"])
    assert not diff, (
        f"{len(diff)} statuses differ from tests/onnx_conformance_status.json (committed -> now).\n"
        f"If the change is intended, regenerate the file and docs/onnx-conformance.md:\n"
        f"    {REGENERATE}\n(or, for these tests only: python tests/onnx_conformance.py --tests NAME... "
        f"--write-status --write-doc)\n" + "\n".join(diff)
    )


def test_emit_cli_on_node_tests():
    """tests/onnx_emit_cli.py: the plain `ireegen emit TEST.onnx` on node
    tests, one IREE can lower and one it cannot (docs/onnx.md has the counts
    of a run over all of them)."""
    import onnx_emit_cli

    cases = oc.collect_cases({"test_abs", "test_adam"})
    ok = onnx_emit_cli.run_one("test_abs", cases["test_abs"].model, "async")
    assert ok["exit"] == 0 and not ok["traceback"], ok
    no = onnx_emit_cli.run_one("test_adam", cases["test_adam"].model, "async")
    assert no["exit"] == 2 and no["error_lines"] == 1 and not no["traceback"], no
    assert (
        "test_adam.onnx: node #1 (ai.onnx.preview.training.Adam): IREE's ONNX lowering does not support"
        in no["message"]
    )
    text, odd = onnx_emit_cli.summarize([ok, no])
    assert odd == 0 and "exit 0: 1, exit 2: 1; tracebacks: 0" in text
