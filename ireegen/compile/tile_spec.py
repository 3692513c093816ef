"""The matmul tile spec (config/matmul_tiles.py) written where iree-compile
reads it: into the compile's working directory, when the compile's flags
name it (the `matmul-tiles` tuning candidate)."""

from __future__ import annotations

from pathlib import Path

from ireegen.config.matmul_tiles import FLAG, SPEC_FILE, match_rows
from ireegen.config.modes import Target

from .mlir_templates import render


def spec_text(target: Target | None) -> str:
    """The spec for `target`: one matcher per shape class."""
    return render("matmul_tiles.mlir.jinja", rows=match_rows(target))


def stage(flags, target: Target | None, workdir: Path) -> None:
    """Writes the spec into `workdir` if `flags` ask for it."""
    if FLAG in flags:
        (workdir / SPEC_FILE).write_text(spec_text(target))
