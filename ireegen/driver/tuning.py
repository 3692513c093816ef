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


def search(request: EmitRequest, loaded: Loaded, emit: Callable) -> Tuning:
    """The tuning of the checked `request`.  `emit(request, references)` is
    the driver: it emits each candidate, verified against `references`."""
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
            lambda flags, outdir: emit(candidate_request(request, flags, outdir), references),
            keep_output=verify.enabled,  # under --no-verify, the output's verification section differs
        )
