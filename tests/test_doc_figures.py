"""The figures in the docs are what the benchmarks' JSON renders
(benchmarks/render_docs.py), and the cheap ones in that JSON are what the
tools print today: the sample MLP's `ireegen size` on the Cortex-M4F and
the M55 (benchmarks/footprint.json).  Instructions per inference vary
between runs and are not compared."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import footprint  # noqa: E402
import render_docs  # noqa: E402

# The figures that do not vary between runs.
STABLE = ("flash", "ram", "flash_no_error_messages", "flash_of_error_messages", "printed", "size")


def test_every_marked_region_and_chart_is_what_the_json_renders():
    found = render_docs.differences()
    assert not found, "run python benchmarks/render_docs.py:\n" + "\n".join(found)


def test_every_region_names_a_known_renderer_format_and_figure():
    for doc in render_docs.DOCS:
        text = doc.read_text()
        for m in render_docs.FIGURE.finditer(text):
            assert m["format"] in render_docs.FORMATS, f"{doc.name}: {m[0]}"
            render_docs.lookup(m["file"], m["key"])
        for m in render_docs.BLOCK.finditer(text):
            assert m["args"].split()[0] in render_docs.RENDERERS, f"{doc.name}: {m[0][:80]}"


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
@pytest.mark.parametrize("cpu,goal", [("cortex-m4", "speed"), ("cortex-m4", "size"), ("cortex-m55", "speed")])
def test_footprint_json_is_what_ireegen_size_prints(cpu, goal, tmp_path):
    recorded = footprint.load_json()["mlp"][cpu][goal]
    now = footprint.figures(cpu, goal, tmp_path, verify=False)
    assert {k: now[k] for k in STABLE} == {k: recorded[k] for k in STABLE}, (
        "run python benchmarks/footprint.py --json benchmarks/footprint.json, then python benchmarks/render_docs.py"
    )
