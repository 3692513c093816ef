"""The table of IREE configurations `emit --tune` tries on a model.

Each candidate is a set of iree-compile flags added to the emit's own; it
applies to models that contain what it rewrites (a candidate that cannot
change a model is never compiled), and belongs to the `--tune` levels that
try it.  `emit` compiles every applicable candidate, verifies it as it
verifies its output, times it where the target runs and keeps the fastest
(ireegen/check/tune.py); docs/tuning.md has the figures behind the table.

Rows are data: a flag combination that wins on a model family is one more
row here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ireegen.common.errors import UsageError

from . import matmul_tiles

# --tune: off (today's flags, no search), quick (the few candidates that
# win most often, in the order of how often they won; CI runs it), full
# (every candidate).  quick's rows, in that order: im2col+data-tiling-codegen
# (the most frequent winner: MobileNetV2, the OCR classifier, silero-vad
# and a CRNN, docs/peers.md and docs/tuning.md), channels-last (the OCR
# detector), im2col (a CRNN at x86-64-v3), data-tiling-convolutions
# (ResNet-18 at host).  quick's time budget (check/tune.py) cuts the search
# at the end of that order, so the likelier winners come first; ORDERS
# below reorders and prunes it per kind of model.
LEVELS = ("off", "quick", "full")
DEFAULT_LEVEL = "quick"
# Overrides DEFAULT_LEVEL when no --tune is given (ireegen's own test suite
# sets it to off; its tuning tests say the level they test).
LEVEL_ENV = "IREEGEN_TUNE"

# What a model must contain for a candidate to change it: names of the
# features frontend/model_features.py finds in the model's IR.
ANY = "anything"
CONVOLUTIONS = "convolutions"
CONTRACTIONS = "contractions"  # matmuls and convolutions
NCHW_CONVOLUTIONS = "nchw-convolutions"  # what channels-last transposes (an NHWC model compiles the same)
# A matmul whose two operands are both computed from the inputs (no
# weights): attention's scores and its probabilities times V.
COMPUTED_CONTRACTIONS = "computed-contractions"
# A depthwise-separable CNN that ireegen computes channels-last
# (the depthwise-separable-as-nhwc rewrite, frontend/nhwc_layout.py).
DEPTHWISE_SEPARABLE_NHWC = "depthwise-separable-nhwc"
# Matmuls or convolutions compiled for a target of 16 float lanes (AVX-512),
# where ireegen's matmul tiles won (MobileNetV2, RegNetY, LRASPP at host);
# at 8 (x86-64-v3) they lost (MobileNetV2: 2.06x -> 2.43x ONNX Runtime's
# time), so they are not tried there.  A feature of the model and its
# target together (target_features below).
CONTRACTIONS_AT_16_LANES = "contractions-at-16-lanes"

_CHANNELS_LAST = (
    "--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))"
)
_IM2COL = "--iree-global-opt-use-im2col-for-convs"
_DATA_TILING = ("--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all")
# Data tiling of convolutions too (IREE tiles only matmuls by default): a
# winner at --target-cpu host that loses at x86-64-v3 (docs/tuning.md).
_DATA_TILING_CONVS = (
    *_DATA_TILING,
    "--iree-dispatch-creation-experimental-set-data-tiling-ops=matmul",
    "--iree-dispatch-creation-experimental-set-data-tiling-ops=convolution",
)


@dataclass(frozen=True)
class Candidate:
    name: str
    flags: tuple  # added to iree-compile's command line
    needs: str  # ANY, CONVOLUTIONS, NCHW_CONVOLUTIONS or CONTRACTIONS
    levels: tuple  # the --tune levels that try it
    what: str  # one line for the docs and the manifest


BASELINE = "baseline"

CANDIDATES = (
    Candidate(BASELINE, (), ANY, ("quick", "full"), "ireegen's flags for the configuration, nothing added"),
    Candidate(
        "im2col+data-tiling-codegen",
        (_IM2COL, _DATA_TILING[0]),
        # On a model without convolutions im2col changes nothing: this is
        # data tiling through codegen, which wins on models whose
        # convolutions ireegen rewrote to matmuls (MobileNetV2's).
        CONTRACTIONS,
        ("quick", "full"),
        "im2col (where there are convolutions), then packed (mmt4d) matmuls through IREE's codegen, no ukernels",
    ),
    Candidate(
        "matmul-tiles",
        (matmul_tiles.FLAG,),
        # IREE's own tiles of a matmul with few rows (MobileNetV2's 49)
        # re-read the weights per 16 rows and peel a remainder: all rows
        # per workgroup instead (config/matmul_tiles.py).
        CONTRACTIONS_AT_16_LANES,
        ("quick", "full"),
        "f32 matmuls tiled per shape class: all rows per workgroup, 7 or 8 rows by one or two vectors at a time",
    ),
    Candidate(
        "channels-last",
        (_CHANNELS_LAST,),
        NCHW_CONVOLUTIONS,
        ("quick", "full"),
        "NCHW convolutions transposed to NHWC (IREE's channels-last preprocessing)",
    ),
    Candidate(
        "im2col",
        (_IM2COL,),
        CONVOLUTIONS,
        ("quick", "full"),
        "convolutions as im2col + matmul, IREE's matmul codegen instead of its direct convolution",
    ),
    Candidate(
        "im2col+channels-last+data-tiling",
        (_IM2COL, _CHANNELS_LAST, *_DATA_TILING),
        NCHW_CONVOLUTIONS,
        ("full",),
        "all three: NHWC convolutions, im2col, then packed (mmt4d) matmuls with ukernels",
    ),
    Candidate(
        "im2col+channels-last",
        (_IM2COL, _CHANNELS_LAST),
        NCHW_CONVOLUTIONS,
        ("full",),
        "NHWC convolutions as im2col + matmul",
    ),
    Candidate(
        "im2col+data-tiling",
        (_IM2COL, *_DATA_TILING),
        CONVOLUTIONS,
        ("full",),
        "im2col, then packed (mmt4d) matmuls with ukernels",
    ),
    Candidate(
        "data-tiling-convolutions",
        _DATA_TILING_CONVS,
        CONVOLUTIONS,
        ("quick", "full"),
        "convolutions and matmuls on packed operands, with IREE's ukernels",
    ),
    Candidate(
        "data-tiling",
        _DATA_TILING,
        CONTRACTIONS,
        ("full",),
        "data tiling: matmuls on packed (mmt4d) operands, with IREE's ukernels",
    ),
)
BY_NAME = {c.name: c for c in CANDIDATES}


# What quick searches first on a kind of model, and what it leaves to full:
# the first row whose feature the model has applies.  `first` are tried
# right after the baseline, in that order, then the level's other rows in
# the table's order; `ruled_out` are not tried at quick (full tries every
# row).  From the figures of docs/peers.md and docs/tuning.md:
# - a transformer's matmuls (attention's scores, its MLP) want data tiling
#   (ViT 3.22x -> 1.19x ONNX Runtime's time, a BERT-base-shaped encoder
#   3.64x -> 1.22x): on a model without convolutions
#   im2col+data-tiling-codegen is data tiling alone;
# - a depthwise-separable CNN computed channels-last won with IREE's
#   channels-last where the rewrite leaves channels-first convolutions
#   (the OCR detector: channels-last applies only there), else with
#   im2col+data-tiling-codegen (MobileNetV2, the OCR classifier); its
#   pointwise convolutions, which ireegen makes matmuls, want the
#   matmul-tiles of config/matmul_tiles.py first (docs/tuning.md); im2col
#   and data-tiled convolutions lost on all three.
@dataclass(frozen=True)
class Order:
    feature: str
    first: tuple  # candidate names, tried right after the baseline
    ruled_out: tuple  # candidate names quick does not try on such a model
    why: str  # one line for the docs and the manifest


ORDERS = (
    Order(
        COMPUTED_CONTRACTIONS,
        ("im2col+data-tiling-codegen",),
        (),
        "attention's matmuls (two computed operands): data tiling first",
    ),
    Order(
        DEPTHWISE_SEPARABLE_NHWC,
        ("matmul-tiles", "channels-last", "im2col+data-tiling-codegen"),
        ("im2col", "data-tiling-convolutions"),
        "a depthwise-separable CNN computed channels-last: matmul tiles, channels-last, then data tiling; no im2col",
    ),
)


def order_for(features) -> Order | None:
    """The ORDERS row for a model with `features`, or None (the table's order)."""
    return next((o for o in ORDERS if o.feature in features), None)


def check_level(value: str | None, flag: str = "--tune", config=None) -> str:
    """The --tune level: `value`, else $IREEGEN_TUNE, else DEFAULT_LEVEL
    (off for a microcontroller `config`: the search chooses by time alone,
    and the fastest candidate can need several times the RAM and flash,
    docs/firmware.md)."""
    if value is None:
        default = "off" if config is not None and config.target is not None and config.target.microcontroller else None
        value, flag = os.environ.get(LEVEL_ENV) or default or DEFAULT_LEVEL, LEVEL_ENV
    if value not in LEVELS:
        raise UsageError(f"{flag} {value!r}: unknown tuning level; choose one of {', '.join(LEVELS)}")
    return value


def candidates_for(level: str, features) -> list:
    """The candidates `level` tries on a model with `features` (a set of
    the feature names above), in the order it tries them: baseline first,
    then, at quick, the ORDERS row's `first`; [] for off."""
    have = {ANY, *features}
    rows = [c for c in CANDIDATES if level in c.levels and c.needs in have]
    order = order_for(features) if level == "quick" else None
    if order is None:
        return rows
    rank = {name: i for i, name in enumerate((BASELINE, *order.first))}
    kept = [c for c in rows if c.name not in order.ruled_out]
    return sorted(kept, key=lambda c: rank.get(c.name, len(rank)))


def target_features(config, features) -> set:
    """The features of a model with `features` that its target `config`
    (a modes.Config) adds: CONTRACTIONS_AT_16_LANES."""
    wide = CONTRACTIONS in features and matmul_tiles.float_lanes(config.target) == matmul_tiles.MEASURED_LANES
    return {CONTRACTIONS_AT_16_LANES} if wide else set()


def untunable(config) -> str | None:
    """Why `config` (a modes.Config) is never tuned; None if it can be."""
    if config.target is None:
        return f"{config.executable_format.name} executables have no llvm-cpu flags to tune"
    if config.optimize_for != "speed":
        return f"--optimize-for {config.optimize_for}: tuning chooses for speed"
    return None
