"""The plain CLI on every ONNX node test:

    python tests/onnx_emit_cli.py [--tests NAME ...] [--jobs N] [--results FILE] [--execution-model M]

writes each node test's model (onnx.backend.test.case.node.collect_testcases(),
as tests/onnx_conformance.py collects them) to `TEST.onnx` and runs

    python -m ireegen emit TEST.onnx -o OUT --execution-model async

in a child process, with emit's default verification.  What it asks: does
the command exit 0, or 1 or 2 with a one-line message, and never with a
Python traceback?  It prints the counts of exit statuses and the most common
one-line reasons of 1 and 2, and exits 1 if any run printed a traceback (or
died of a signal, or exited with another status).  A node test whose name is
too long for a C name (over 64 characters) is refused with "pass --name"; it
is then run again with `--name` (its name cut to 64), and counted both ways.

With --results FILE each result is appended as a JSON line and tests already
in the file are not run again (resume).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import onnx_conformance as oc  # noqa: E402

TIMEOUT = 1200  # seconds for one emit (the slowest node tests compile in a few minutes)


# A default name (the file name) longer than this is refused ("pass --name");
# some node tests' names are (naming.MAX_NAME_LENGTH).
MAX_NAME_LENGTH = 64


def emit_cli(path: Path, outdir: Path, execution_model: str, *options) -> dict:
    """`python -m ireegen emit PATH -o OUTDIR --execution-model M [options]`:
    {exit, traceback, message, error_lines}."""
    cmd = [
        sys.executable,
        "-m",
        "ireegen",
        "emit",
        str(path),
        "-o",
        str(outdir),
        "--execution-model",
        execution_model,
        *options,
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=path.parent)
        code, stderr = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as e:
        code, stderr = "timeout", e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [i for i, line in enumerate(lines) if line.startswith("ireegen: error:")]
    # The error line (with the first diagnostic when it ends with a colon,
    # as a compile failure's does), else the last line (a traceback's exception).
    message = lines[errors[0]] if errors else (lines[-1] if lines else "")
    if errors and message.endswith(":") and errors[0] + 1 < len(lines):
        message += " " + lines[errors[0] + 1].strip()
    return {
        "exit": code,
        "traceback": "Traceback (most recent call last)" in stderr,
        "message": oc.one_line(message, 300),
        "error_lines": len(errors),
    }


def run_one(name: str, model: bytes, execution_model: str) -> dict:
    """Runs the CLI on one test: {name, seconds, exit, traceback, message,
    error_lines}.  A test whose file name is too long for a C name is
    refused (exit 2, "pass --name"); it is then run again with --name, and
    that run's result is under "with_name"."""
    import onnx

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"emit-{name[:40]}-") as tmp:
        path = Path(tmp) / f"{name}.onnx"
        onnx.save(onnx.load_from_string(model), path)
        result = {"name": name, **emit_cli(path, Path(tmp) / "out", execution_model)}
        if result["exit"] == 2 and len(name) > MAX_NAME_LENGTH and "pass --name" in result["message"]:
            result["with_name"] = emit_cli(
                path, Path(tmp) / "out", execution_model, "--name", name[:MAX_NAME_LENGTH].rstrip("_")
            )
    result["seconds"] = round(time.monotonic() - start, 2)
    return result


def blur(message: str) -> str:
    """A one-line error with the test's details (names, ops, numbers, IR) blurred, to group by."""
    r = message.removeprefix("ireegen: error: ")
    r = re.sub(r"test_\w+", "TEST", r)
    r = re.sub(
        r"(the model|node '[^']*') \([\w.]+\): (IREE's ONNX lowering does not support this op as used "
        r"here) \(.*\)$",
        r"\1 (OP): \2",
        r,
    )
    r = re.sub(r"node '[^']*'", "node 'NAME'", r)
    r = re.split(r": %| \"|: \"| that was explicitly", r)[0]
    r = re.sub(r"\d+", "N", r)
    return r[:150]


def summarize(results: list) -> tuple:
    """(text, number of runs that are not 0/1/2 with a one-line message)."""

    def odd(r):
        return r["traceback"] or r["exit"] not in (0, 1, 2) or (r["exit"] in (1, 2) and r["error_lines"] != 1)

    renamed = [r for r in results if "with_name" in r]
    # The test's outcome: with --name where the file name was too long.
    final = [dict(r["with_name"], name=r["name"]) if "with_name" in r else r for r in results]
    bad = [r for r in results + [dict(r["with_name"], name=r["name"]) for r in renamed] if odd(r)]
    out = []
    for title, rs in (("the plain command", results), ("with --name where the file name is too long", final)):
        by_exit = Counter(str(r["exit"]) for r in rs)
        out.append(
            f"{len(rs)} tests, {title}: "
            + ", ".join(f"exit {k}: {v}" for k, v in sorted(by_exit.items()))
            + f"; tracebacks: {sum(r['traceback'] for r in rs)}"
        )
        if not renamed:
            break
    if renamed:
        out.append(
            f"({len(renamed)} file names longer than {MAX_NAME_LENGTH} characters: refused with "
            '"pass --name", then run with --name)'
        )
    for code in (1, 2):
        reasons = Counter(blur(r["message"]) for r in final if r["exit"] == code)
        if reasons:
            out.append(f"\nexit {code}, most common reasons (names and numbers blurred):")
            out += [f"  {n:5d}  {reason}" for reason, n in reasons.most_common(25)]
    if bad:
        out.append(f"\n{len(bad)} runs without a one-line message:")
        out += [f"  {r['name']}: exit {r['exit']}: {r['message']}" for r in bad[:100]]
    return "\n".join(out), len(bad)


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
    print(
        f"{len(names)} tests, {len(done)} already in {args.results}, {len(todo)} to run, {args.jobs} jobs", flush=True
    )
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
                print(
                    f"[{i}/{len(todo)}] {r['name']} exit {r['exit']} ({r['seconds']:.1f} s)"
                    + (" TRACEBACK" if r["traceback"] else "")
                    + (f": {r['message']}" if r["exit"] else "")
                    + (f" -- with --name: exit {r['with_name']['exit']}" if "with_name" in r else ""),
                    flush=True,
                )
    finally:
        if out:
            out.close()
    text, odd = summarize([done[n] for n in names if n in done])
    print("\n" + text)
    return 1 if odd else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
