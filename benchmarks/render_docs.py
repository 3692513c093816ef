"""Renders the figures of README.md and docs/*.md from the benchmarks' JSON
files, so that no measured figure in them is typed by hand.

Two kinds of marked region:

- a figure in running text or a table cell,
  `<!-- figure: FILE#KEY.PATH FORMAT -->3,184 B<!-- /figure -->`: the value
  at KEY.PATH in the JSON file FILE (relative to the checkout), written in
  FORMAT (a key of FORMATS);
  A KEY of `=NAME` is a figure computed from the whole file: DERIVED[NAME];
- a block (a table, a printed output),
  `<!-- render: NAME ARG... -->` ... `<!-- /render -->` on lines of their
  own: what RENDERERS[NAME](*ARGS) returns.

The MLPerf Tiny charts (docs/mlperf_tiny_CPU.svg) are rendered with them.

    python benchmarks/render_docs.py           # rewrite every region and chart
    python benchmarks/render_docs.py --check   # exit 1 naming each region or chart that differs

tests/test_doc_figures.py runs the check.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import tempfile
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import families  # noqa: E402
import mlperf_tiny  # noqa: E402
import real_models  # noqa: E402

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MLPERF_JSON = "docs/mlperf_tiny.json"
REAL_MODELS_JSON = "docs/real_models.json"
REAL_MODELS_THREADS_JSON = "docs/real_models_threads.json"
FOOTPRINT_JSON = "benchmarks/footprint.json"
FAMILIES_JSON = "docs/families.json"
MLPERF_CHARTS = {"cortex-m4": "docs/mlperf_tiny_cortex-m4.svg", "cortex-m55": "docs/mlperf_tiny_cortex-m55.svg"}

FIGURE = re.compile(r"<!-- figure: (?P<file>[^#\s]+)#(?P<key>\S+) (?P<format>\S+) -->(?P<text>.*?)<!-- /figure -->")
BLOCK = re.compile(r"^<!-- render: (?P<args>[^\n]*?) -->\n(?P<text>.*?)^<!-- /render -->$", re.M | re.S)

FORMATS = {
    "B": lambda v: f"{v:,} B",  # 3,184 B
    "n": lambda v: f"{v:,.0f}",  # 2,432
    "d": lambda v: f"{v}",  # 1884
    "x": lambda v: f"{v:.1f}x",  # 1.4x
    "x2": lambda v: f"{v:.2f}x",  # 1.51x
    "KB": lambda v: f"{v / 1000:.1f} KB",  # 3.2 KB
}


@cache
def load(file: str):
    return json.loads((ROOT / file).read_text())


def _onnx_passes(status: dict, *modes: str) -> int:
    """The ONNX node tests that every one of `modes` passes."""
    return sum(all(t[m]["status"] == "pass" for m in modes) for t in status["tests"].values())


# Figures computed from a whole JSON file (tests/onnx_conformance_status.json).
DERIVED = {
    "onnx_tests": lambda status: len(status["tests"]),
    "onnx_async_passes": lambda status: _onnx_passes(status, "async"),
    "onnx_runtimeless_and_async_passes": lambda status: _onnx_passes(status, "async", "runtimeless"),
}


def lookup(file: str, key: str):
    if key.startswith("="):
        return DERIVED[key[1:]](load(file))
    value = load(file)
    for part in key.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


# --- block renderers ------------------------------------------------------


def mlperf_tiny_table(cpu: str) -> str:
    """benchmarks/mlperf_tiny.py's table of `cpu`."""
    return mlperf_tiny.table(mlperf_tiny.measured(load(MLPERF_JSON)), cpu)


def mlperf_tiny_memory(cpu: str) -> str:
    return mlperf_tiny.memory_table(mlperf_tiny.measured(load(MLPERF_JSON)), cpu)


def footprint_table() -> str:
    """The README's footprint of the sample MLP beside its anchors."""
    f = load(FOOTPRINT_JSON)
    m4, m55, q = f["mlp"]["cortex-m4"], f["mlp"]["cortex-m55"], f["quoted"]
    n = FORMATS["n"]
    lines = [
        "| build | flash | RAM | instructions/inference |",
        "|---|---:|---:|---:|",
        f"| ireegen runtimeless, Cortex-M4F, `--optimize-for speed` | {m4['speed']['flash']:,} B "
        f"| {m4['speed']['ram']:,} B | {n(m4['speed']['instructions'])} |",
        f"| ireegen runtimeless, Cortex-M4F, `size` + `MLP_NO_ERROR_MESSAGES` | "
        f"{m4['size']['flash_no_error_messages']:,} B | {m4['size']['ram']:,} B | {n(m4['size']['instructions'])} |",
        f"| ireegen runtimeless, Cortex-M55 (MVE), `speed` | {m55['speed']['flash']:,} B | {m55['speed']['ram']:,} B "
        f"| {n(m55['speed']['instructions'])} |",
        f"| {q['emx-onnx-cgen']['label']} | {q['emx-onnx-cgen']['flash']:,} B | | "
        f"{n(q['emx-onnx-cgen']['instructions'])} |",
        f"| {q['iree-runtime']['label']} | {q['iree-runtime']['flash']:,} B | | |",
        f"| {q['onnx2c']['label']} | {q['onnx2c']['flash_text']:,} B text | | {q['onnx2c']['time']} |",
        f"| {q['cube-ai']['label']} | {q['cube-ai']['flash_text']:,} B text | | {q['cube-ai']['time']} |",
        f"| {q['executorch']['label']} | {q['executorch']['flash_approx']} | | |",
    ]
    return "\n".join(lines)


def footprint_vs_emx() -> str:
    """docs/firmware.md's sample MLP on the M4F against emx-onnx-cgen."""
    f = load(FOOTPRINT_JSON)
    m4, emx = f["mlp"]["cortex-m4"], f["quoted"]["emx-onnx-cgen"]
    lines = [
        "| sample MLP on Cortex-M4F | flash B | instructions/inference |",
        "|---|---:|---:|",
    ]
    for goal, label in (("speed", "`--optimize-for speed`"), ("size", "`--optimize-for size`")):
        insns = f"{m4[goal]['instructions']:,}"
        lines.append(f"| runtimeless, {label} | {m4[goal]['flash']:,} | {insns} |")
        lines.append(
            f"| runtimeless, {goal}, `MLP_NO_ERROR_MESSAGES` | {m4[goal]['flash_no_error_messages']:,} | {insns} |"
        )
    lines.append(f"| emx-onnx-cgen 1.4 (code and weights) | {emx['flash']:,} | {emx['instructions']:,} |")
    return "\n".join(lines)


# benchmarks/firmware.py's models: the label of a model's first row, then of the others.
FIRMWARE_LABELS = {
    "sample-mlp": ("samples/mlp (8-16-4)", "samples/mlp"),
    "sample-simple_mul": ("samples/simple_mul", "samples/simple_mul"),
    "mlp": ("corpus mlp (4x16 → 4x8)", "corpus mlp"),
    "cnn": ("corpus cnn (2x8x8x3)", "corpus cnn"),
    "depthwise_conv": ("corpus depthwise_conv", "corpus depthwise_conv"),
}
FIRMWARE_CORES = {"cortex-m4": "Cortex-M4F", "cortex-m55": "Cortex-M55, MVE"}


def firmware_table(cpu: str, columns: str) -> str:
    """benchmarks/firmware.py's rows of `cpu` (benchmarks/firmware_CPU.json):
    `full` with the flash of kernels, glue and constants, or `short`."""
    rows = load(f"benchmarks/firmware_{cpu}.json")
    full = columns == "full"
    head = f"| model ({FIRMWARE_CORES[cpu]}) | `--optimize-for` | flash B |"
    head += " kernels | glue | constants | RAM B (arena + instance + stack) |" if full else " RAM B |"
    lines = [head + " instructions/inference |", "|---|---|---:|" + ("---:|" * 4 if full else "---:|") + "---:|"]
    seen = set()
    for r in rows:
        label = FIRMWARE_LABELS[r["model"]][r["model"] in seen]
        seen.add(r["model"])
        flash = r["flash"]
        parts = f" {flash['executables']:,} | {flash['glue']:,} | {flash['constants']:,} |" if full else ""
        lines.append(
            f"| {label} | {r['optimize_for']} | {flash['total']:,} |{parts} {r['ram']['total']:,} | "
            f"{r['instructions']:,.0f} |"
        )
    return "\n".join(lines)


def size_printed(cpu: str, goal: str, outdir: str) -> str:
    """`ireegen size OUTDIR` and what it prints, as a console block."""
    printed = load(FOOTPRINT_JSON)["mlp"][cpu][goal]["printed"]
    return f"```console\n$ python -m ireegen size {outdir}\n{printed}```"


def real_models_section() -> str:
    """docs/peers.md's real-model figures, as benchmarks/real_models.py --doc writes them."""
    return real_models.doc_section(load(REAL_MODELS_JSON)).rstrip("\n")


def real_models_threads_section() -> str:
    """docs/peers.md's thread-count figures, as benchmarks/real_models.py --thread-counts --doc writes them."""
    return real_models.doc_section(load(REAL_MODELS_THREADS_JSON)).rstrip("\n")


def families_table() -> str:
    """docs/tuning.md's emit times and errors of the model families (benchmarks/families.py)."""
    return families.table(load(FAMILIES_JSON))


RENDERERS = {
    "families": families_table,
    "mlperf_tiny_table": mlperf_tiny_table,
    "mlperf_tiny_memory": mlperf_tiny_memory,
    "footprint_table": footprint_table,
    "footprint_vs_emx": footprint_vs_emx,
    "size_printed": size_printed,
    "real_models": real_models_section,
    "real_models_threads": real_models_threads_section,
    "firmware_table": firmware_table,
}


# --- regions --------------------------------------------------------------


def render(text: str) -> str:
    """`text` with every marked region rendered."""

    def figure(m: re.Match) -> str:
        value = FORMATS[m["format"]](lookup(m["file"], m["key"]))
        return m[0].replace(f"-->{m['text']}<!--", f"-->{value}<!--")

    def block(m: re.Match) -> str:
        name, *args = shlex.split(m["args"])
        return f"<!-- render: {m['args']} -->\n{RENDERERS[name](*args)}\n<!-- /render -->"

    return BLOCK.sub(block, FIGURE.sub(figure, text))


def regions(text: str) -> list:
    """(marker, text) of every region, inline and block."""
    return [(m[0].split("-->")[0] + "-->", m["text"]) for m in (*FIGURE.finditer(text), *BLOCK.finditer(text))]


def charts(directory: Path) -> dict:
    """The MLPerf Tiny charts rendered into `directory`: checkout path -> rendered file."""
    rows = mlperf_tiny.measured(load(MLPERF_JSON))
    out = {}
    for cpu, path in MLPERF_CHARTS.items():
        mlperf_tiny.chart(rows, cpu, directory / Path(path).name)
        out[path] = directory / Path(path).name
    return out


def differences() -> list:
    """Each region or chart whose text is not what the JSON renders."""
    found = []
    for doc in DOCS:
        text = doc.read_text()
        for (marker, old), (_, new) in zip(regions(text), regions(render(text))):
            if old != new:
                was, now = next((a, b) for a, b in zip(old.split("\n") + [""], new.split("\n") + [""]) if a != b)
                found.append(f"{doc.relative_to(ROOT)}: {marker} holds {was.strip()!r}, renders {now.strip()!r}")
    with tempfile.TemporaryDirectory() as tmp:
        for path, rendered in charts(Path(tmp)).items():
            if rendered.read_text() != (ROOT / path).read_text():
                found.append(f"{path}: not what {MLPERF_JSON} renders")
    return found


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a region or chart differs")
    args = p.parse_args()
    if args.check:
        found = differences()
        for line in found:
            print(line)
        return 1 if found else 0
    for doc in DOCS:
        text = doc.read_text()
        if render(text) != text:
            doc.write_text(render(text))
            print(f"rendered {doc.relative_to(ROOT)}")
    for path in charts(ROOT / "docs"):
        print(f"rendered {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
