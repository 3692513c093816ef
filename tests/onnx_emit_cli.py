"""The plain CLI on every ONNX node test:

    python tests/onnx_emit_cli.py [--tests NAME ...] [--jobs N] [--results FILE] [--execution-model M]

writes each node test's model (onnx.backend.test.case.node.collect_testcases(),
as tests/onnx_conformance.py collects them) to `TEST.onnx` and runs

    python -m ireegen emit TEST.onnx -o OUT --execution-model async

in a child process, with emit's default verification.  What it asks: does
the command exit 0, or 1 or 2 with a one-line message, and never with a
Python traceback?  It prints the counts of exit statuses and the most common
one-line reasons of 1 and 2, and exits 1 if any run printed a traceback (or
died of a signal, or exited with another status).

With --results FILE each result is appended as a JSON line and tests already
in the file are not run again (resume).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import onnx_conformance as oc  # noqa: E402

TIMEOUT = 1200  # seconds for one emit (the slowest node tests compile in a few minutes)


def run_one(name: str, model: bytes, execution_model: str) -> dict:
    """Runs the CLI on one test; {name, exit, seconds, traceback, message}."""
    import onnx

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"emit-{name[:40]}-") as tmp:
        path = Path(tmp) / f"{name}.onnx"
        onnx.save(onnx.load_from_string(model), path)
        cmd = [sys.executable, "-m", "ireegen", "emit", str(path), "-o", str(Path(tmp) / "out"),
               "--execution-model", execution_model]
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT,
                                  cwd=tmp)
            code, stderr = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired as e:
            code, stderr = "timeout", (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) \
                else (e.stderr or "")
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ireegen: error:")]
    return {
        "name": name,
        "exit": code,
        "seconds": round(time.monotonic() - start, 2),
        "traceback": "Traceback (most recent call last)" in stderr,
        # the error line, else the last line (a traceback's exception)
        "message": oc.one_line(errors[0] if errors else (lines[-1] if lines else ""), 300),
        "error_lines": len(errors),
    }


def summarize(results: list) -> tuple:
    """(text, number of runs that are not 0/1/2 with a one-line message)."""
    by_exit = Counter(str(r["exit"]) for r in results)
    tracebacks = [r for r in results if r["traceback"]]
    odd = [r for r in results if r["traceback"] or r["exit"] not in (0, 1, 2)
           or (r["exit"] in (1, 2) and r["error_lines"] != 1)]
    out = [f"{len(results)} tests: " + ", ".join(f"exit {k}: {v}" for k, v in sorted(by_exit.items()))
           + f"; tracebacks: {len(tracebacks)}"]
    for code in (1, 2):
        reasons = Counter(oc._reason_key(r["message"].removeprefix("ireegen: error: "))
                          for r in results if r["exit"] == code)
        if reasons:
            out.append(f"\nexit {code}, most common reasons (names and numbers blurred):")
            out += [f"  {n:5d}  {reason}" for reason, n in reasons.most_common(25)]
    if odd:
        out.append(f"\n{len(odd)} runs without a one-line message:")
        out += [f"  {r['name']}: exit {r['exit']}: {r['message']}" for r in odd[:100]]
    return "\n".join(out), len(odd)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", nargs="+", metavar="NAME", help="only these tests (default: all)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--execution-model", default="async")
    parser.add_argument("--results", type=Path, help="append results here as JSON lines; resume from it")
    args = parser.parse_args(argv)

    cases = oc.collect_cases(set(args.tests) if args.tests else None)
    if args.tests:
        missing = sorted(set(args.tests) - set(cases))
        if missing:
            parser.error(f"--tests: no such test {', '.join(missing)}")
    names = list(cases)
    done = {}
    if args.results and args.results.exists():
        for line in args.results.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                if r["name"] in cases:
                    done[r["name"]] = r
    todo = [n for n in names if n not in done]
    print(f"{len(names)} tests, {len(done)} already in {args.results}, {len(todo)} to run, {args.jobs} jobs",
          flush=True)
    out = open(args.results, "a") if args.results else None
    try:
        # Threads are enough: each test's work is a child process.
        with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run_one, n, cases[n].model, args.execution_model) for n in todo]
            for i, f in enumerate(cf.as_completed(futures), 1):
                r = f.result()
                done[r["name"]] = r
                if out:
                    out.write(json.dumps(r) + "\n")
                    out.flush()
                print(f"[{i}/{len(todo)}] {r['name']} exit {r['exit']} ({r['seconds']:.1f} s)"
                      + (" TRACEBACK" if r["traceback"] else "") + (f": {r['message']}" if r["exit"] else ""),
                      flush=True)
    finally:
        if out:
            out.close()
    text, odd = summarize([done[n] for n in names if n in done])
    print("\n" + text)
    return 1 if odd else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
