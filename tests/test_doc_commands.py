"""Every command block of README.md and docs/*.md runs here, or says in the
Markdown, right above its fence, why it does not.

A fenced block whose language is a shell (`sh`, `bash`, `shell`,
`console`) is a command block; every fence names its language (`text` for
printed output), so no command block hides in an unlabelled one.  The
blocks of one file run in document order in one fresh directory laid out
as the checkout the docs speak from (a copy of `samples/`, the rest of the
checkout linked), so a tour's later blocks see its earlier outputs.  An
`sh` block runs under `bash -e -o pipefail`; a `console` block runs each
`$ ` line and treats the lines after it as its printed output.

Markers, HTML comments on the lines right above a fence:

- `<!-- not run: REASON -->`: a command block that cannot run here
  (hardware, a peer checkout, the network, a long benchmark: `slow: ...`);
  skipped with the reason.
- `<!-- needs: TOOL ... -->`: programs on PATH (or `py:MODULE`) the block
  needs; skipped when one is missing, failed instead with
  IREEGEN_REQUIRE_CROSS=1 (CI installs them all).
- `<!-- exit: N ... -->`: the exit status expected (one per `$ ` line of a
  `console` block; default 0).
- `<!-- output checked -->`: a `console` block whose printed lines must be
  what the commands print.
- `<!-- file: PATH -->`: a block of any language written to PATH in the
  directory before the next command block runs (a config the doc's
  commands read).
- `<!-- dir: PATH -->`: the block runs in PATH of the directory (a
  sample's README speaks from the sample's folder).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "samples").glob("*/README.md"))]
SHELLS = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[^\s`]*)")
MARKER = re.compile(r"^\s*<!--\s*(?P<key>[a-z][a-z ]*?)\s*(?::\s*(?P<value>.*?))?\s*-->\s*$")
MARKERS = {"not run", "needs", "exit", "output checked", "file", "dir"}
# benchmarks/render_docs.py's regions, which may wrap a block.
RENDERED = {"render"}
# Copied into the directory: the doc commands build in them.
COPIED = ("samples",)
# Linked: the doc commands only read them.
LINKED = ("docs", "tests", "cmake", "templates", "benchmarks", ".clang-format")
TIMEOUT_S = 300


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    markers: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list:
    """The fenced blocks of `doc` in order, with the markers right above each."""
    lines = doc.read_text().split("\n")
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        markers, k = {}, i - 1
        while k >= 0 and (mm := MARKER.match(lines[k])):
            markers[mm["key"]] = mm["value"]
            k -= 1
        body = "\n".join(
            line[indent:] if line[:indent] == " " * indent else line.lstrip() for line in lines[i + 1 : end]
        )
        found.append(Block(doc, i + 1, m["lang"], body + "\n", markers))
        i = end + 1
    return found


ALL = [b for doc in DOCS for b in blocks(doc)]
COMMANDS = [b for b in ALL if b.lang in SHELLS]


def test_every_fence_names_its_language():
    unlabelled = [b.name for b in ALL if not b.lang]
    assert not unlabelled, f"fences without a language (`text` for output, `sh` for commands): {unlabelled}"


def test_markers_are_known_and_sit_where_they_mean_something():
    wrong = []
    for b in ALL:
        for key, value in b.markers.items():
            if key in RENDERED:
                continue
            if key not in MARKERS:
                wrong.append(f"{b.name}: unknown marker <!-- {key} -->")
            elif key in ("not run", "needs", "exit", "file", "dir") and not value:
                wrong.append(f"{b.name}: <!-- {key}: ... --> needs a value")
            elif key != "file" and b.lang not in SHELLS:
                wrong.append(f"{b.name}: <!-- {key} --> on a {b.lang or 'unlabelled'} block")
            elif key == "output checked" and b.lang != "console":
                wrong.append(f"{b.name}: <!-- output checked --> needs a console block")
    assert not wrong, "\n".join(wrong)


_workdirs: dict = {}


def _workdir(doc: Path, factory) -> Path:
    """The directory of `doc`'s blocks, made on its first block."""
    if doc not in _workdirs:
        d = factory.mktemp(doc.stem)
        for name in COPIED:
            shutil.copytree(ROOT / name, d / name, ignore=shutil.ignore_patterns("build", "out", "bazel-*"))
        for name in LINKED:
            (d / name).symlink_to(ROOT / name)
        _workdirs[doc] = [d, set()]
    return _workdirs[doc]


def _missing(needs: str) -> list:
    missing = []
    for tool in needs.split():
        if tool.startswith("py:"):
            if importlib.util.find_spec(tool[3:]) is None:
                missing.append(tool)
        elif shutil.which(tool) is None:
            missing.append(tool)
    return missing


def _console(text: str) -> list:
    """(command, printed lines) per `$ ` line of a console block; a line
    ending in a backslash continues the command."""
    steps, lines = [], text.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            if not steps:
                raise AssertionError(f"console block starts with output, not a `$ ` line: {lines[i]!r}")
            steps[-1][1].append(lines[i])
            i += 1
            continue
        command = lines[i][2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command += "\n" + lines[i]
        steps.append((command, []))
        i += 1
    return steps


def _run(command: str, cwd: Path, strict: bool) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    shell = ["bash", "-e", "-o", "pipefail", "-c", command] if strict else ["bash", "-c", command]
    return subprocess.run(
        shell, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S
    )


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().split("\n")[-lines:])


# One document's blocks share a directory and run in order, so under
# pytest-xdist they stay on one worker (`--dist loadgroup`).
@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.name, marks=pytest.mark.xdist_group(b.doc.name)) for b in COMMANDS]
)
def test_doc_block(block, tmp_path_factory):
    if "not run" in block.markers:
        pytest.skip(f"not run: {block.markers['not run']}")
    missing = _missing(block.markers.get("needs") or "")
    if missing:
        if os.environ.get("IREEGEN_REQUIRE_CROSS"):
            pytest.fail(f"IREEGEN_REQUIRE_CROSS is set but {', '.join(missing)} is missing")
        pytest.skip(f"needs {', '.join(missing)}")
    workdir, written = _workdir(block.doc, tmp_path_factory)
    for b in blocks(block.doc):
        if b.line < block.line and "file" in b.markers and b.line not in written:
            path = workdir / b.markers["file"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(b.text)
            written.add(b.line)
    cwd = workdir / (block.markers.get("dir") or ".")
    exits = [int(s) for s in (block.markers.get("exit") or "0").split()]
    if block.lang != "console":
        assert len(exits) == 1, f"{block.name}: one exit status for an {block.lang} block"
        proc = _run(block.text, cwd, strict=True)
        assert proc.returncode == exits[0], f"{block.name}: exit {proc.returncode}\n{_tail(proc.stdout)}"
        return
    steps = _console(block.text)
    if exits == [0]:
        exits = [0] * len(steps)
    assert len(exits) == len(steps), f"{block.name}: {len(steps)} commands, {len(exits)} exit statuses"
    for (command, shown), want in zip(steps, exits):
        proc = _run(command, cwd, strict=False)
        assert proc.returncode == want, f"{block.name}: `{command}` exit {proc.returncode}\n{_tail(proc.stdout)}"
        if "output checked" in block.markers:
            printed = [line.rstrip() for line in proc.stdout.rstrip("\n").split("\n")]
            assert printed == [line.rstrip() for line in shown], f"{block.name}: `{command}` printed:\n{proc.stdout}"
