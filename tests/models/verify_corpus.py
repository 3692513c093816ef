"""Compiles every corpus model in the three execution models (2 in parallel)
and checks every Call against its numpy reference.  Usage:
    python tests/models/verify_corpus.py [MODEL ...]
Writes /tmp/corpus/<model>-<mode>/ and /tmp/corpus/results.json."""

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import numpy as np  # noqa: E402
from corpus import CASES, compare  # noqa: E402

from ireegen.check.runners import run_in_process, run_with_tool  # noqa: E402

MODES = ["async", "inline-static", "inline-dynamic"]
only = sys.argv[1:] or list(CASES)
Path("/tmp/corpus").mkdir(exist_ok=True)
jobs = [(n, m) for n in only for m in MODES]


def compile_one(job):
    n, m = job
    out = Path(f"/tmp/corpus/{n}-{m}")
    t = time.time()
    p = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", str(CASES[n].path), "-o", str(out), "--execution-model", m],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=str(HERE.parent.parent),
    )
    return job, p.returncode, p.stdout, time.time() - t


T0 = time.time()
with ThreadPoolExecutor(2) as ex:
    comp = {r[0]: r[1:] for r in ex.map(compile_one, jobs)}
tc = time.time() - T0
results = {}
T1 = time.time()
for n, m in jobs:
    rc, log, dt = comp[(n, m)]
    case = CASES[n]
    if rc != 0:
        results[(n, m)] = "COMPILE FAIL: " + log.strip()[-1500:]
        continue
    vmfb = Path(f"/tmp/corpus/{n}-{m}/{n}.vmfb")
    errs = []
    for i, c in enumerate(case.calls):
        try:
            if m == "async":
                got = run_in_process(vmfb, c.function, c.inputs)
            else:
                got = run_with_tool(vmfb, c.function, c.inputs, len(c.expected))
            assert len(got) == len(c.expected), f"{len(got)} outputs, expected {len(c.expected)}"
            for j, (g, e) in enumerate(zip(got, c.expected)):
                try:
                    compare(g, e, case.rtol, case.atol)
                except AssertionError as ae:
                    raise AssertionError(f"output {j} (got dtype {np.asarray(g).dtype}): {ae}") from None
        except Exception as ex:
            errs.append(f"call {i} {c.function}: {type(ex).__name__}: {str(ex).strip()[:1500]}")
    results[(n, m)] = "ok" if not errs else "\n".join(errs)
    print(f"{n:22s} {m:15s} compile {dt:5.1f}s  {results[(n, m)].splitlines()[0][:150]}", flush=True)
tr = time.time() - T1
print(f"compile wall (2 parallel) {tc:.1f}s, compile cpu-sum {sum(v[2] for v in comp.values()):.1f}s, run {tr:.1f}s")
json.dump({f"{n}|{m}": v for (n, m), v in results.items()}, open("/tmp/corpus/results.json", "w"), indent=1)
