"""Benchmark: what `emit --tune` picks on convolutional models, how much
faster the choice runs than today's flags, and what the search costs at
emit.  Each model is emitted runtimeless with --tune off and with the given
levels (a fresh tuning directory, so every level searches); the figures are
the candidates' own (CPU time per call on this machine, median of the
alternating rounds), read from the manifest.  Prints figures; asserts
nothing.

    python benchmarks/tuning.py MODEL[:NAME=DIMS,...] ... [--levels quick full] [--target-cpu host] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402


def _model_arg(text: str) -> tuple:
    path, _, shapes = text.partition(":")
    pinned = {}
    for item in filter(None, shapes.split(",")):
        name, _, dims = item.partition("=")
        pinned[name] = tuple(int(d) for d in dims.split("x"))
    return Path(path), pinned


def _timed_emit(model, shapes, outdir, config, level) -> tuple:
    start = time.monotonic()
    result = emit(model, outdir, config, input_shapes=shapes or None, tune=level)
    return result, time.monotonic() - start


def _show(ns) -> str:
    return "-" if ns is None else (f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} µs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", type=_model_arg)
    parser.add_argument("--levels", nargs="+", default=["quick", "full"])
    parser.add_argument("--target-cpu")
    parser.add_argument("--json")
    args = parser.parse_args()
    config = make_config("runtimeless", target_cpu=args.target_cpu)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ireegen-tuning-bench-") as tmp:
        tmp = Path(tmp)
        for model, shapes in args.models:
            _, off_seconds = _timed_emit(model, shapes, tmp / f"{model.stem}-off", config, "off")
            for level in args.levels:
                os.environ["IREEGEN_TUNING_DIR"] = str(tmp / f"records-{model.stem}-{level}")
                result, seconds = _timed_emit(model, shapes, tmp / f"{model.stem}-{level}", config, level)
                section = result.manifest["tuning"]
                figures = {c["name"]: c.get("figure") for c in section["candidates"]}
                row = {
                    "model": model.name,
                    "target_cpu": config.target.cpu,
                    "level": level,
                    "candidates": section["candidates"],
                    "choice": section["choice"],
                    "speedup": section.get("speedup"),
                    "emit_seconds_off": round(off_seconds, 1),
                    "emit_seconds": round(seconds, 1),
                    "search_seconds": section.get("search_seconds"),
                }
                rows.append(row)
                print(f"{model.name} ({config.target.cpu}), --tune {level}:")
                for c in section["candidates"]:
                    status = "" if c["status"] == "ok" else f"  {c['status']}: {c.get('note', '')[:110]}"
                    print(f"  {c['name']:34} {_show(figures.get(c['name'])):>10}{status}")
                print(
                    f"  chose {section['choice']} ({section.get('speedup') or 1:.2f}x baseline); emit took "
                    f"{seconds:.1f} s against {off_seconds:.1f} s with --tune off "
                    f"(search {section.get('search_seconds')} s)"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
