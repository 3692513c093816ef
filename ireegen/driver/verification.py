"""The verification stage: the driver builds what runs (the backend's
subject, or its twin) and compiles the async reference, then hands both to
check/verify.py to compare."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from ireegen.check.report import REFERENCE
from ireegen.check.subjects import module_subject
from ireegen.check.tflm import compare_with_tflm
from ireegen.check.verify import (
    NOT_VERIFIED,
    Verification,
    check_runs_here,
    compare_with_reference,
    reference_config,
    reference_failed,
    reference_itself,
)
from ireegen.common.errors import IreegenError
from ireegen.common.progress import progress
from ireegen.compile.compile_model import compile_model

from .backends import Built, EmitTwin, backend_for


class ReferenceCache:
    """The async reference of one model, compiled once for the several
    verifications of one emit (`--tune` verifies every candidate against
    the same reference), in a directory the caller owns and removes."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._modules: dict = {}

    def module(self, flags: list, compile_into: Callable[[Path], object]) -> Path:
        """The reference module compiled with `flags`; `compile_into(dir)`
        compiles it (a compile_model result) on first use."""
        key = tuple(flags)
        if key not in self._modules:
            workdir = self.directory / f"reference{len(self._modules) + 1}"
            workdir.mkdir(parents=True)
            progress("verifying", "compiling the async reference")
            self._modules[key] = workdir / compile_into(workdir).module_file
        return self._modules[key]


def _reference_module(built: Built, references: ReferenceCache) -> Path:
    """The async reference for this machine, compiled with the user's flags
    (not a tuning candidate's) and without --kernels."""
    request = built.request
    flags = list(request.extra_flags)
    try:
        return references.module(
            flags, lambda d: compile_model(built.model, request.name, reference_config(), flags, request.compiler, d)
        )
    except IreegenError as e:
        raise reference_failed(request.model_path, request.config, e) from None


def verify_built(built: Built, functions, given: dict, emit_twin: EmitTwin, references: ReferenceCache | None) -> dict:
    """The manifest's `verification` section of `built`, or VerificationError.
    `emit_twin` emits the twin a runtimeless target that cannot run here
    is verified as; `references` (None: one of its own) keeps the compiled
    reference for the next verification of the same model."""
    request = built.request
    if not request.verify.enabled:
        return dict(NOT_VERIFIED)
    check_runs_here(request.config)
    with tempfile.TemporaryDirectory(prefix="ireegen-verify-") as tmp:
        tmp = Path(tmp)
        (tmp / "subject").mkdir()
        ran = backend_for(request.config).subject(built, tmp / "subject", emit_twin)
        section = _against_iree(built, functions, given, ran, references, tmp)
        if Path(request.model_path).suffix == ".tflite":
            # A TFLite model's numbers are TFLite Micro's: the subject must equal them.
            section["tflite_micro"] = {
                f.function.name: compare_with_tflm(
                    request.model_path, f.function, ran.subject, request.verify.seed, given.get(f.function.name)
                )
                for f in functions
            }
        return section


def _against_iree(built: Built, functions, given: dict, ran, references: ReferenceCache | None, tmp: Path) -> dict:
    """The verification section of `ran` against the async reference."""
    request = built.request
    itself = reference_itself(ran, request.kernels is None and not request.candidate_flags)
    if itself is not None:
        return itself
    module = _reference_module(built, references or ReferenceCache(tmp))
    what = Verification(
        str(request.model_path),
        request.config,
        functions,
        request.verify,
        given,
        request.compiler.version,
        request.kernels.spec.path if request.kernels is not None else None,
    )
    return compare_with_reference(what, ran, module_subject(REFERENCE, module, None))
