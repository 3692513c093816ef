"""The tuning stage of `emit --tune`: every candidate emitted by the
driver, verified against one shared async reference, and timed
(check/tune.py)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from ireegen.check.tune import Tuning, tune

from .load import Loaded
from .request import EmitRequest, candidate_request
from .verification import ReferenceCache


def search(request: EmitRequest, loaded: Loaded, emit: Callable, started: float | None = None) -> Tuning:
    """The tuning of the checked `request`.  `emit(request, references,
    loaded)` is the driver: it emits each candidate from the model `loaded`
    imported once, verified against `references` built once.  `started`
    is common.clock.cpu_seconds() at the emit's start (the level's CPU-time
    budget counts from it)."""
    verify = request.verify
    given = loaded.verify_inputs if verify.enabled else {}
    with tempfile.TemporaryDirectory(prefix="ireegen-reference-") as reference_dir:
        references = ReferenceCache(Path(reference_dir))
        return tune(
            loaded.model,
            request.tune,
            request.config,
            loaded.key,
            loaded.signatures,
            given,
            verify.seed,
            lambda flags, outdir: emit(candidate_request(request, flags, outdir), references, loaded),
            keep_output=verify.enabled,  # under --no-verify, the output's verification section differs
            emit_started=started,
            shared_seconds=lambda: references.seconds,
        )
