"""The tile sizes ireegen gives IREE's llvm-cpu matmuls, per shape class.

IREE 3.13 chooses a matmul's tiles from its shape alone, and for a few rows
(MobileNetV2's 7x7 feature maps: [49, 960] x [960, 160]) it distributes 16
rows per workgroup and vectorizes 7 at a time, so that every workgroup ends
in a peeled remainder and reads its slice of the weights again for each
16 rows.  A tuning spec (`--iree-codegen-tuning-spec-path`, a transform
dialect library that IREE's configuration pass runs on every dispatch)
sets the tiles of the matmuls it matches instead.  The classes below are
rows of that spec, tried in order (the first that matches applies):

- every workgroup takes all the rows (distribution 0 on M) and
  DISTRIBUTION_COLS columns, so the weights are read once;
- it computes `vector_rows` x (`vector_vectors` x the target's float
  lanes) at a time, one reduction step per multiply-add; the rows are a
  multiple of `vector_rows` (no remainder row is peeled), the columns a
  multiple of `cols_halves` half vectors (two-vector tiles only where they
  divide the columns: on 24 columns a 32-wide tile took 13x IREE's time;
  a one-vector tile over a multiple of half a vector peels one half);
- the shapes are bounded by what was measured (docs/tuning.md): beyond
  4096 rows (MobileNetV2's 12544) IREE's own tiles were as fast or faster.

The spec is a `--tune` candidate (config/tuning.py): it is verified and
timed like every other, and kept only where it is faster.  Everything in
the spec is an integer from this table or the target's lane count; nothing
read from a model reaches it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .modes import Target

# The spec's file, written into the compile's working directory
# (compile/tile_spec.py), and the flag that names it: iree-compile runs in
# that directory, so the path is relative and the same on every machine.
SPEC_FILE = "ireegen-matmul-tiles.mlir"
FLAG = f"--iree-codegen-tuning-spec-path={SPEC_FILE}"

# Columns per workgroup: a multiple of every class's vector tile.
DISTRIBUTION_COLS = 32
# The float lanes the classes were measured at (AVX-512): the tuning
# candidate is tried only there (config/tuning.py).
MEASURED_LANES = 16


@dataclass(frozen=True)
class TileClass:
    vector_rows: int  # rows per vector tile; the matmul's rows are a multiple of it
    vector_vectors: int  # the vector tile's columns, in vectors of the target's float lanes
    cols_halves: int  # the matmul's columns are a multiple of this many half vectors
    max_rows: int  # M at most this (the largest measured)
    max_depth: int  # K at most this


# Eight rows where they divide the matmul (784, 3136), else seven (the 7x7
# and 14x14 feature maps' 49 and 196); two vectors of columns where they
# divide it, else one (RegNetY's 104 and 440 columns: half a vector left).
CLASSES = (
    TileClass(8, 2, 4, 4096, 1024),
    TileClass(7, 2, 4, 4096, 1024),
    TileClass(8, 1, 1, 4096, 1024),
    TileClass(7, 1, 1, 4096, 1024),
)

# Float lanes per vector register, by the x86 feature that sets the width;
# other targets: 4 (NEON, SSE).
_X86_LANES = (("+avx512f", 16), ("+avx", 8))
# x86-64 levels by name (a named CPU without features gets the level's width).
_X86_LEVEL_LANES = {"x86-64-v4": 16, "x86-64-v3": 8, "x86-64-v2": 4, "x86-64": 4, "generic": 4}


def float_lanes(target: Target | None) -> int:
    """The f32 lanes of `target`'s widest vector register, as IREE's
    llvm-cpu backend vectorizes for it."""
    if target is None or not target.triple.startswith("x86_64"):
        return 4
    features = target.cpu_features.split(",")
    for feature, lanes in _X86_LANES:
        if feature in features:
            return lanes
    return _X86_LEVEL_LANES.get(target.cpu, 8)


@dataclass(frozen=True)
class MatchRow:
    """One matcher of the spec: the class's tiles in elements."""

    name: str
    rows_multiple: int
    cols_multiple: int
    max_rows: int
    max_depth: int
    distribution: tuple  # (M, N, K) tiles per workgroup; 0: all of it
    vector: tuple  # (M, N, K) vector tile
    reduction: tuple  # (M, N, K) reduction tile


def match_rows(target: Target | None) -> tuple:
    """The spec's matchers for `target`, in the order they are tried."""
    lanes = float_lanes(target)
    rows = []
    for c in CLASSES:
        cols = c.vector_vectors * lanes
        if DISTRIBUTION_COLS % cols:
            continue
        rows.append(
            MatchRow(
                f"match_matmul_rows{c.vector_rows}_cols{cols}",
                c.vector_rows,
                c.cols_halves * lanes // 2,
                c.max_rows,
                c.max_depth,
                (0, DISTRIBUTION_COLS, 0),
                (c.vector_rows, cols, 0),
                (0, 0, 1),
            )
        )
    return tuple(rows)
