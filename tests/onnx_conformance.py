"""The ONNX operator suite as a conformance test of every execution model.

    python tests/onnx_conformance.py [--subset ci|all] [--jobs N] [--tests NAME ...]
                                     [--write-status] [--write-doc] [--results FILE]

For every node test that onnx's generators produce
(`onnx.backend.test.case.node.collect_testcases()`: model, inputs and
reference outputs in memory, no data files), it writes the model to
`TEST.onnx` and hands that file to ireegen as it is: ireegen's own ONNX path
(ireegen/frontend/onnx_import.py: shape inference, IREE's in-process importer,
`iree-compile --compile-to=input`, and for a model older than opset 17 that
IREE cannot take as it is, the upgrade to 17 and a second try) imports and
lowers it, exactly as for `ireegen emit TEST.onnx`.  It runs the model in async, inline-static,
inline-dynamic and runtimeless through ireegen's parity code path
(ireegen.parity: the same compile `emit` does, workarounds included) on the
test's own inputs, and compares every output with ONNX's reference, with
ONNX's backend-test tolerances (the test's rtol/atol, 1e-3/1e-7 by default,
for floats; exact for integers and booleans).  An import or lowering that
IREE cannot do is ireegen's ImportFailure (a one-line error, exit status 2
from the CLI): `import-failure`.  tests/onnx_emit_cli.py runs the CLI
itself, `ireegen emit TEST.onnx`, on every node test.

Each test x mode gets one status (STATUSES below).  Every mode, async
included, runs through iree-run-module or the runtimeless runner in a child
process, so a crash in IREE's runtime cannot take the runner down.

--write-status rewrites tests/onnx_conformance_status.json with the statuses
of the tests that ran (tests not run keep theirs); --write-doc regenerates
docs/onnx-conformance.md from that file.  After a change that fixes (or
breaks) tests, regenerate both with

    python tests/onnx_conformance.py --subset all --write-status --write-doc

and commit them.  tests/test_onnx_conformance.py runs the CI subset and fails
on any crash, wrong number, C build failure, or status that differs from the
committed file.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODES = ("async", "inline-static", "inline-dynamic", "runtimeless")
STATUS_FILE = ROOT / "tests" / "onnx_conformance_status.json"
DOC_FILE = ROOT / "docs" / "onnx-conformance.md"

# Every status a test x mode can get, in the order the document lists them.
STATUSES = {
    "pass": "the mode's outputs equal ONNX's reference (within the test's tolerance)",
    "refused": "ireegen refused the model with a one-line reason (exit status 2)",
    "import-failure": "IREE's ONNX importer, or its lowering to the input dialect, failed in ireegen's ONNX "
    "path (a one-line error, exit status 2)",
    "compile-failure": "iree-compile failed for this execution model",
    "c-build-failure": "ireegen's generated C did not compile (-Wall -Wextra -Werror)",
    "run-error": "the compiled module or runtimeless program failed at run time",
    "iree-wrong": "IREE's own async run computes other numbers than ONNX's reference, and this mode agrees "
    "with async: a bug in IREE's import or compiler, not in ireegen",
    "verify-refused": "it computes other numbers than async (an IREE bug in this execution model): parity "
    "reports the mismatch, and `emit` refuses it at verification (exit status 1), so ireegen "
    "never ships it",
    "wrong": "it ran and computed numbers (or shapes) other than ONNX's reference and than async's, and emit's "
    "verification would not catch it",
    "crash": "a Python traceback from ireegen, or a child process that died",
}
# What CI never accepts, whatever the committed file says.
FAILURES = ("crash", "wrong", "c-build-failure")
# async's "wrong" is IREE's: async is IREE's own runtime path, which ireegen only configures.

# Operators whose outputs are random: their values cannot match numpy's
# reference, so only the outputs' shapes are compared (as ONNX Runtime's own
# backend-test filters do).
RANDOM_OPS = {"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"}

# The CI subset: one test per ONNX operator (the first by name, expanded
# function bodies excluded), capped at CI_SIZE.
CI_SIZE = 200


# ---------------------------------------------------------------------------
# The test cases


@dataclass
class Case:
    name: str
    op_type: str
    model: bytes  # serialized onnx.ModelProto
    inputs: list
    outputs: list
    rtol: float
    atol: float


def collect_cases(names=None) -> dict:
    """name -> Case, from onnx's generators (about 20 s for all of them)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            found = collect_testcases(None)
    cases = {}
    for c in found:
        if names is not None and c.name not in names:
            continue
        inputs, outputs = (_arrays(x) for x in c.data_sets[0])
        nodes = c.model.graph.node
        cases[c.name] = Case(
            c.name,
            nodes[0].op_type if nodes else "",
            c.model.SerializeToString(),
            list(inputs),
            list(outputs),
            float(c.rtol),
            float(c.atol),
        )
    return dict(sorted(cases.items()))


def _arrays(values) -> list:
    """Test data as numpy arrays (some generators give TensorProtos)."""
    from onnx import TensorProto, numpy_helper

    return [numpy_helper.to_array(v) if isinstance(v, TensorProto) else v for v in values]


def ci_subset(cases: dict) -> list:
    """One test per operator, the first by name; no `_expanded` bodies."""
    chosen = {}
    for name, case in sorted(cases.items()):
        if "_expanded" in name or not case.op_type:
            continue
        chosen.setdefault(case.op_type, name)
    return sorted(chosen.values())[:CI_SIZE]


# ---------------------------------------------------------------------------
# One test


@dataclass
class ModeResult:
    status: str
    reason: str = ""

    def to_json(self) -> dict:
        return {"status": self.status, "reason": self.reason} if self.reason else {"status": self.status}


@dataclass
class TestResult:
    name: str
    modes: dict = field(default_factory=dict)  # mode -> ModeResult
    seconds: float = 0.0  # wall time
    cpu_seconds: float = 0.0  # CPU time of the worker and its children: what it costs an idle machine

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "seconds": round(self.seconds, 2),
            "cpu_seconds": round(self.cpu_seconds, 2),
            "modes": {m: r.to_json() for m, r in self.modes.items()},
        }


def one_line(text: str, limit: int = 160) -> str:
    text = re.sub(r"/tmp/[^\s:]*/", "", str(text))  # temporary paths say nothing
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    # Prefer the line that says what went wrong.
    for line in lines:
        if re.search(r"\berror\b", line, re.I) and not line.startswith("command:"):
            lines = [line]
            break
    line = lines[0]
    return line if len(line) <= limit else line[: limit - 3] + "..."


def crash_reason(e: BaseException) -> str:
    """The exception and the innermost ireegen frame it came from."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "ireegen" in f.filename] or traceback.extract_tb(
        e.__traceback__
    )[-1:]
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return one_line(f"{type(e).__name__}: {e}{where}")


def to_signature(x: np.ndarray, dtype: str) -> np.ndarray:
    """A test input in the type the lowered function takes: the same bits
    when only the signedness differs (IREE's import makes uint8 int8)."""
    x = np.asarray(x)
    want = np.dtype(dtype)
    if x.dtype == want:
        return x
    if x.dtype.kind in "iu" and want.kind in "iu" and x.dtype.itemsize == want.itemsize:
        return x.view(want)
    return x.astype(want)


def judge(got, want, rtol: float, atol: float, shapes_only: bool = False) -> ModeResult:
    """One mode's outputs against ONNX's reference outputs."""
    if shapes_only:
        shapes = [np.asarray(g).shape for g in got]
        if shapes == [np.asarray(w).shape for w in want]:
            return ModeResult("pass", "random operator: output shapes compared, not values")
        return ModeResult("wrong", f"random operator: output shapes {shapes}")
    if len(got) != len(want):
        return ModeResult("wrong", f"{len(got)} outputs, ONNX has {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if w.dtype == object or w.dtype.kind in "SU":
            return ModeResult("wrong", f"output {i}: string outputs cannot be compared")
        if g.shape != w.shape:
            return ModeResult("wrong", f"output {i}: shape {list(g.shape)}, ONNX has {list(w.shape)}")
        if g.dtype.kind in "iu" and w.dtype.kind in "iu" and g.dtype.itemsize == w.dtype.itemsize:
            g = g.view(w.dtype)  # signedness lost in the import: the same bits
        if w.dtype.kind in "fc" or g.dtype.kind in "fc":
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            if not np.allclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True):
                bad = ~np.isclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True)
                err = np.abs(g64 - w64)[bad]
                err = err[~np.isnan(err)]
                worst = f"max abs err {err.max():.3g}" if err.size else "NaN where ONNX has a number or back"
                return ModeResult("wrong", f"output {i}: {int(bad.sum())} of {w.size} values off ({worst})")
        elif not np.array_equal(g.astype(np.int64), w.astype(np.int64)):
            bad = g.astype(np.int64) != w.astype(np.int64)
            return ModeResult("wrong", f"output {i}: {int(bad.sum())} of {w.size} values differ")
    return ModeResult("pass")


def run_modes(
    model_path: Path,
    inputs: list,
    outputs: list,
    rtol: float,
    atol: float,
    modes,
    workdir: Path,
    shapes_only: bool = False,
) -> dict:
    """Loads `model_path` (a `.onnx`: imported and lowered by ireegen) and
    compiles it for each mode with ireegen's parity code path, runs it on
    `inputs` and judges it against `outputs`; mode -> ModeResult."""
    from ireegen.check.runners import RunError, find_runtime_tools
    from ireegen.common.errors import CompileError, IreegenError
    from ireegen.compile.compiler import find_compiler
    from ireegen.frontend.models import load_model
    from ireegen.frontend.onnx_import import ImportFailure
    from ireegen.parity import IreegenFailure, ParityRequest, Toolchain, prepare_mode

    # Every mode runs in a child process (iree-run-module, or the runtimeless runner).
    toolchain = Toolchain(find_compiler(), find_runtime_tools())
    results = {}
    async_outputs = None
    try:
        model = load_model(model_path, compiler=toolchain.compiler)
    except ImportFailure as e:  # IREE's importer or lowering: what IREE cannot take
        return {m: ModeResult("import-failure", one_line(e)) for m in modes}
    except IreegenError as e:
        return {m: ModeResult("refused", one_line(e)) for m in modes}
    except Exception as e:  # noqa: BLE001 - a traceback is what we are looking for
        return {m: ModeResult("crash", crash_reason(e)) for m in modes}
    function = model.functions[0]
    if len(model.functions) != 1:
        return {m: ModeResult("refused", f"{len(model.functions)} public functions, expected 1") for m in modes}
    if len(function.inputs) != len(inputs):
        return {
            m: ModeResult(
                "import-failure", f"lowered function takes {len(function.inputs)} inputs, the test gives {len(inputs)}"
            )
            for m in modes
        }
    args = [to_signature(x, v.dtype) for x, v in zip(inputs, function.inputs)]
    for mode in modes:
        modedir = workdir / mode
        modedir.mkdir()
        try:
            prepared = prepare_mode(mode, model, ParityRequest(model_path, toolchain=toolchain), modedir)
        except IreegenFailure as e:  # ireegen's own C did not build
            results[mode] = ModeResult("c-build-failure", one_line(str(e).split("\n", 2)[-1]))
            continue
        except CompileError as e:
            results[mode] = ModeResult("compile-failure", one_line(e))
            continue
        except IreegenError as e:
            text = str(e)
            status = "c-build-failure" if text.startswith("building the runner failed") else "refused"
            if status == "c-build-failure":
                text = text.split("\n", 2)[-1]
            results[mode] = ModeResult(status, one_line(text))
            continue
        except Exception as e:  # noqa: BLE001
            results[mode] = ModeResult("crash", crash_reason(e))
            continue
        try:
            got = prepared.run(function, args)
        except RunError as e:
            results[mode] = ModeResult("run-error", one_line(e))
            continue
        except IreegenError as e:
            results[mode] = ModeResult("refused", one_line(e))
            continue
        except Exception as e:  # noqa: BLE001
            results[mode] = ModeResult("crash", crash_reason(e))
            continue
        results[mode] = judge(got, outputs, rtol, atol, shapes_only)
        if mode == "async":
            async_outputs = got
        if results[mode].status != "wrong":
            continue
        if mode == "async":
            # async is IREE's own compiler and runtime, which ireegen only configures.
            results[mode].status = "iree-wrong"
        elif (
            results.get("async", ModeResult("")).status == "iree-wrong"
            and judge(got, async_outputs, rtol, atol).status == "pass"
        ):
            results[mode].status = "iree-wrong"  # wrong exactly as IREE's async is
        elif async_outputs is not None and judge(got, async_outputs, rtol, atol, shapes_only).status != "pass":
            # What parity reports as a mismatch, emit refuses: its verification
            # runs the same code against async before writing anything.
            results[mode] = ModeResult("verify-refused", results[mode].reason)
    return results


def run_case(case: Case, modes=MODES) -> TestResult:
    """Writes the test's model to TEST.onnx and runs that file in every
    mode through ireegen's own ONNX path; never raises."""
    start, cpu_start = time.monotonic(), cpu_time()
    result = TestResult(case.name)
    with tempfile.TemporaryDirectory(prefix=f"onnx-{case.name[:40]}-") as tmp:
        tmp = Path(tmp)
        onnx_path = tmp / f"{case.name}.onnx"
        onnx_path.write_bytes(case.model)  # the serialized ModelProto, as onnx.save writes it
        try:
            result.modes = run_modes(
                onnx_path,
                case.inputs,
                case.outputs,
                case.rtol,
                case.atol,
                modes,
                tmp,
                shapes_only=case.op_type in RANDOM_OPS,
            )
        except Exception as e:  # noqa: BLE001 - the runner's own bug, reported per test
            result.modes = {m: ModeResult("crash", crash_reason(e)) for m in modes}
    result.seconds = time.monotonic() - start
    result.cpu_seconds = cpu_time() - cpu_start
    return result


def cpu_time() -> float:
    """CPU seconds of this process and its finished children."""
    import resource

    return sum(
        u.ru_utime + u.ru_stime
        for u in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


# ---------------------------------------------------------------------------
# Many tests, in a pool of processes


_CASES: dict = {}  # the worker's cases, collected once per spawned worker


def _worker(name: str, modes) -> dict:
    if name not in _CASES:
        _CASES.update(collect_cases())
    return run_case(_CASES[name], modes).to_json()


def result_from_json(d: dict) -> TestResult:
    return TestResult(
        d["name"],
        {m: ModeResult(r["status"], r.get("reason", "")) for m, r in d["modes"].items()},
        d.get("seconds", 0.0),
        d.get("cpu_seconds", 0.0),
    )


def run_cases(
    cases: dict, names, jobs: int = 2, modes=MODES, progress=None, results_file=None, run_missing: bool = True
) -> dict:
    """name -> TestResult for `names`, `jobs` at a time.  A test whose child
    process dies is retried alone; if it dies again it is a crash in every
    mode.  With `results_file`, results are appended as JSON lines as they
    come, and tests already in it are not run again (resume)."""
    global _CASES
    _CASES = cases
    done = {}
    if results_file and Path(results_file).exists():
        for line in Path(results_file).read_text().splitlines():
            if line.strip():
                r = result_from_json(json.loads(line))
                if r.name in names and set(r.modes) == set(modes):
                    done[r.name] = r
    out = open(results_file, "a") if results_file else None

    def record(r: TestResult) -> None:
        done[r.name] = r
        if out:
            out.write(json.dumps(r.to_json()) + "\n")
            out.flush()
        if progress:
            progress(r, len(done), len(names))

    todo = [n for n in names if n not in done] if run_missing else []
    retry = []
    # spawn, not fork: a process that has used MLIR's Python bindings has
    # their threads, and a forked child of it can deadlock on their locks.
    context = __import__("multiprocessing").get_context("spawn")
    try:
        with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(_worker, n, modes): n for n in todo}
            for f in cf.as_completed(futures):
                try:
                    record(result_from_json(f.result()))
                except cf.process.BrokenProcessPool:
                    retry.append(futures[f])
        for name in retry:  # alone, in a fresh process each
            with cf.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                try:
                    record(result_from_json(pool.submit(_worker, name, modes).result()))
                except cf.process.BrokenProcessPool:
                    record(TestResult(name, {m: ModeResult("crash", "the test's process died") for m in modes}))
    finally:
        if out:
            out.close()
    return {n: done[n] for n in names if n in done}


# ---------------------------------------------------------------------------
# The committed statuses and the document


def load_status(path=STATUS_FILE) -> dict:
    if not Path(path).exists():
        return {"ci_subset": [], "tests": {}}
    return json.loads(Path(path).read_text())


def statuses_of(results: dict) -> dict:
    """name -> {mode: {"status", "reason"?}}, as the status file keeps them."""
    return {n: {m: r.to_json() for m, r in t.modes.items()} for n, t in sorted(results.items())}


def write_status(results: dict, ci: list, meta: dict, path=STATUS_FILE) -> None:
    """Updates the statuses of the tests in `results` and the keys in `meta`;
    the other tests and keys keep theirs."""
    data = load_status(path)
    tests = dict(data.get("tests", {}))
    tests.update(statuses_of(results))
    kept = {k: v for k, v in data.items() if k not in ("about", "ci_subset", "tests")}
    data = {
        "about": "Statuses of the ONNX node tests per execution model; regenerate with "
        "`python tests/onnx_conformance.py --subset all --write-status --write-doc`.",
        **kept,
        **meta,
        "ci_subset": ci,
        "tests": dict(sorted(tests.items())),
    }
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def status_diff(results: dict, committed: dict) -> list:
    """Lines `test mode: committed -> now` for every difference."""
    lines = []
    for name, t in sorted(results.items()):
        was = committed.get(name)
        for mode, r in t.modes.items():
            before = was.get(mode, {}).get("status") if was else None
            if before != r.status:
                lines.append(
                    f"{name} {mode}: {before or 'not in the file'} -> {r.status}"
                    + (f" ({r.reason})" if r.reason else "")
                )
    return lines


def counts(tests: dict) -> dict:
    """mode -> status -> number of tests."""
    out = {m: Counter() for m in MODES}
    for modes in tests.values():
        for m, r in modes.items():
            out[m][r["status"]] += 1
    return out


def render_doc(data: dict) -> str:
    tests = data["tests"]
    c = counts(tests)
    lines = [
        "# ONNX operator conformance",
        "",
        "<!-- Generated by tests/onnx_conformance.py --write-doc from tests/onnx_conformance_status.json; "
        "do not edit. -->",
        "",
        f"The ONNX node tests ({len(tests)} of the {data.get('generated', '?')} that onnx "
        f"{data.get('onnx_version', '?')}'s own generators make: `onnx.backend.test.case.node.collect_testcases()`"
        "), each written to `TEST.onnx` and handed to ireegen as it is: ireegen's own ONNX path "
        "(ireegen/frontend/onnx_import.py, the one `ireegen emit TEST.onnx` takes: shape inference, IREE's in-process "
        "importer, `iree-compile --compile-to=input`, and for a model older than opset 17 that IREE cannot "
        "take as it is, the upgrade to 17 and a second try) imports and lowers it; "
        "it is run in each execution model through ireegen's parity code path on the test's own inputs, and "
        "compared with ONNX's reference outputs (the test's rtol/atol, 1e-3/1e-7 unless the test says "
        "otherwise, for floats; exact for integers and booleans).",
        "",
        f"IREE {data.get('iree_version', '?')}. The last run took {data.get('cpu_minutes', '?')} CPU-minutes for "
        f"{data.get('tests_run', '?')} tests (half that in wall time on 2 idle cores; the pool runs 2 tests at a "
        "time). Regenerate:",
        "",
        "    python tests/onnx_conformance.py --subset all --write-status --write-doc",
        "",
        f"CI (tests/test_onnx_conformance.py) runs a fixed subset of {len(data.get('ci_subset', []))} tests, "
        "one per operator, and fails on any crash, wrong number or C build failure, and on any status that "
        "differs from the committed file.",
        "",
        *(
            [
                f"**Partial run**: {len(tests)} of {data.get('generated')} tests have a status (the CI subset first, "
                "then in name order); the command above fills in the rest.",
                "",
            ]
            if data.get("generated") and len(tests) < data["generated"]
            else []
        ),
        "## Summary",
        "",
        "| status | meaning | " + " | ".join(MODES) + " |",
        "|---|---|" + "---:|" * len(MODES),
    ]
    for s, meaning in STATUSES.items():
        lines.append(f"| {s} | {meaning} | " + " | ".join(str(c[m][s]) for m in MODES) + " |")
    lines.append("| total | | " + " | ".join(str(sum(c[m].values())) for m in MODES) + " |")
    passed = {m: {n for n, t in tests.items() if t.get(m, {}).get("status") == "pass"} for m in MODES}
    lines += ["", "Passes of async that another mode does not pass:", ""]
    for m in MODES[1:]:
        missing = sorted(passed["async"] - passed[m])
        by_status = Counter(tests[n][m]["status"] for n in missing)
        lines.append(
            f"- {m}: {len(missing)}"
            + (" (" + ", ".join(f"{k} {v}" for k, v in by_status.most_common()) + ")" if missing else "")
        )
    lines += ["", "## Most common reasons", ""]
    reasons, modes_of = Counter(), {}
    for t in tests.values():
        seen = set()
        for m, r in t.items():
            if r["status"] != "pass":
                key = (r["status"], _reason_key(r.get("reason", "")))
                modes_of.setdefault(key, set()).add(m)
                if key not in seen:
                    reasons[key] += 1
                    seen.add(key)
    lines += ["| status | modes | tests | reason (first line, numbers and names blurred) |", "|---|---|---:|---|"]
    for (s, reason), n in reasons.most_common(40):
        modes = ", ".join(m for m in MODES if m in modes_of[(s, reason)])
        lines.append(f"| {s} | {'all' if modes == ', '.join(MODES) else modes} | {n} | {_cell(reason)} |")
    lines += [
        "",
        "## Every test",
        "",
        "A cell is the status; reasons for the first non-passing mode are in the last column.",
        "",
        "| test | " + " | ".join(MODES) + " | reason |",
        "|---|" + "---|" * len(MODES) + "---|",
    ]
    for name, t in tests.items():
        reason = next((f"{m}: {t[m].get('reason', '')}" for m in MODES if m in t and t[m]["status"] != "pass"), "")
        lines.append(
            f"| {name} | " + " | ".join(t.get(m, {}).get("status", "-") for m in MODES) + f" | {_cell(reason)} |"
        )
    return "\n".join(lines) + "\n"


def _reason_key(reason: str) -> str:
    """A reason with the test-specific details (names, numbers, IR) blurred, to group by."""
    r = re.sub(r"test_\w+", "TEST", reason)
    r = re.sub(r"no lowering for onnx\.\w+:.*", "no lowering for the ONNX operator", r)
    r = re.split(r": %|: \"| \(| that was explicitly", r)[0]
    r = re.sub(r"\d+", "N", r)
    return r[:120]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:160]


# ---------------------------------------------------------------------------


def versions() -> dict:
    import onnx

    from ireegen.compile.compiler import find_compiler

    return {"onnx_version": onnx.__version__, "iree_version": find_compiler().version.split(" @")[0]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subset", choices=("ci", "all"), default="ci")
    parser.add_argument("--tests", nargs="+", metavar="NAME", help="only these tests (overrides --subset)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated (default: all four)")
    parser.add_argument("--results", type=Path, help="append results here as JSON lines; resume from it")
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="run nothing: take the results already in --results (e.g. of an interrupted run)",
    )
    parser.add_argument("--write-status", action="store_true", help=f"update {STATUS_FILE.relative_to(ROOT)}")
    parser.add_argument("--write-doc", action="store_true", help=f"regenerate {DOC_FILE.relative_to(ROOT)}")
    parser.add_argument("--doc-only", action="store_true", help="only regenerate the document from the file")
    args = parser.parse_args(argv)
    modes = tuple(m for m in args.modes.split(",") if m)
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"--modes: unknown {', '.join(unknown)}; choose from {', '.join(MODES)}")
    if args.doc_only:
        DOC_FILE.write_text(render_doc(load_status()))
        print(f"wrote {DOC_FILE}")
        return 0

    start = time.monotonic()
    cases = collect_cases()
    ci = ci_subset(cases)
    if args.tests:
        missing = [n for n in args.tests if n not in cases]
        if missing:
            parser.error(f"--tests: no such test {', '.join(missing)}")
        names = args.tests
    else:
        names = ci if args.subset == "ci" else list(cases)
    print(
        f"{len(names)} tests ({len(cases)} generated, CI subset {len(ci)}), modes {', '.join(modes)}, "
        f"{args.jobs} jobs; collected in {time.monotonic() - start:.0f} s",
        flush=True,
    )

    def progress(r: TestResult, n: int, total: int) -> None:
        cells = " ".join(f"{m}={x.status}" for m, x in r.modes.items())
        print(f"[{n}/{total}] {r.name} ({r.seconds:.1f} s, cpu {r.cpu_seconds:.1f} s) {cells}", flush=True)

    if args.no_run and not args.results:
        parser.error("--no-run needs --results FILE")
    results = run_cases(cases, names, args.jobs, modes, progress, args.results, run_missing=not args.no_run)
    elapsed = time.monotonic() - start
    committed = load_status().get("tests", {})
    table = counts(statuses_of(results))
    cpu = sum(r.cpu_seconds for r in results.values())
    print(
        f"\n{len(results)} tests in {elapsed / 60:.1f} min wall ({args.jobs} jobs); "
        f"{cpu / 60:.1f} CPU-min in the tests ({cpu / 60 / args.jobs:.1f} min on {args.jobs} idle cores)"
    )
    print(f"{'status':<16}" + "".join(f"{m:>16}" for m in modes))
    for s in STATUSES:
        print(f"{s:<16}" + "".join(f"{table[m][s]:>16}" for m in modes))
    diff = status_diff(results, committed)
    print(f"\n{len(diff)} statuses differ from {STATUS_FILE.relative_to(ROOT)}" + (":" if diff else ""))
    for line in diff[:200]:
        print("  " + line)
    if args.write_status:
        meta = versions()
        meta["generated"] = len(cases)
        if len(results) == len(cases):  # the cost of a full run; a partial run keeps the last full one's
            meta["tests_run"] = len(results)
            meta["cpu_minutes"] = round(cpu / 60, 1)
        write_status(results, ci, meta)
        print(f"wrote {STATUS_FILE}")
    if args.write_doc:
        DOC_FILE.write_text(render_doc(load_status()))
        print(f"wrote {DOC_FILE}")
    bad = sum(table[m][s] for m in modes for s in FAILURES)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
