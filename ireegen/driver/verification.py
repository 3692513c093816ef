"""The verification stage: the driver builds what runs (the backend's
subject, or its twin) and the references it is compared with, then hands
them to check/verify.py to compare.

The references share nothing optional with what they check:
- IREE's defaults: the model imported with only the required
  transformations (the ONNX import and its opset upgrade, --input-shape,
  --input-value, --quantized-io, the bounds of a detector's outputs: they
  define the model's interface),
  compiled for async without --iree-flag, tuning flags, ireegen's ONNX
  rewrites, workarounds or kernels;
- ONNX Runtime, for an ONNX model when onnxruntime is installed (and the
  interface is the ONNX model's own: not under --quantized-io).
Both are built once per emit: every tuning candidate is compared with the
same references (ReferenceCache)."""

from __future__ import annotations

import hashlib
import importlib.util
import tempfile
from pathlib import Path

import numpy as np

from ireegen.check.report import REFERENCE
from ireegen.check.subjects import Subject, module_subject, onnxruntime_outputs
from ireegen.check.tflm import compare_with_tflm
from ireegen.check.verify import (
    INDEPENDENT,
    NOT_VERIFIED,
    References,
    Verification,
    check_runs_here,
    compare_with_reference,
    describe,
    reference_config,
    reference_failed,
    reference_itself,
)
from ireegen.common.clock import cpu_seconds
from ireegen.common.errors import IreegenError
from ireegen.common.progress import progress
from ireegen.compile.compile_model import compile_model
from ireegen.frontend.models import load_model
from ireegen.frontend.onnx_import import input_value_arrays

from .backends import Built, EmitTwin, backend_for
from .load import import_options
from .request import EmitRequest

IREE_DEFAULTS = "iree_defaults"


def _first_line(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    line = next((x for x in lines if "error:" in x), lines[0] if lines else type(error).__name__)
    return line[:300]


def _independent(request: EmitRequest, bounded: tuple = ()) -> tuple:
    """(ONNX Runtime as a Subject or None, its manifest entry); its outputs
    whose size depends on the data are given the `bounded` form."""
    if request.model_path.suffix != ".onnx":
        return None, {"used": False, "why": "not an ONNX model"}
    if importlib.util.find_spec("onnxruntime") is None:
        return None, {"used": False, "why": "onnxruntime is not installed"}
    if request.quantized_io:
        return None, {"used": False, "why": "--quantized-io changes the model's inputs and outputs"}
    import onnxruntime

    path = request.model_path
    fixed = input_value_arrays(path, request.input_shapes, request.input_values)
    subject = Subject(INDEPENDENT, lambda f, inputs: onnxruntime_outputs(path, f, inputs, fixed, bounded))
    entry = {"used": True, "version": onnxruntime.__version__, "provider": "CPUExecutionProvider"}
    if bounded:
        entry["bounded"] = {b.name: {"rows": b.rows, "count": b.count} for b in bounded}
    return subject, entry


def subject_is_iree_defaults(built: Built) -> bool:
    """Whether the emitted output is exactly what IREE's defaults compile:
    async for this machine, no extra flag, kernel, ONNX rewrite or workaround."""
    request = built.request
    return (
        request.config == reference_config()
        and not request.compile_flags
        and request.kernels is None
        and not built.model.onnx_rewrites
        and not built.compiled.workarounds
    )


class ReferenceCache:
    """The references of one model, built once for the several
    verifications of one emit (`--tune` verifies every candidate against
    the same references), in a directory the caller owns and removes."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._iree: tuple | None = None  # (module path or None, manifest entry)
        self._independent: tuple | None = None
        self._rewritten: tuple | None = None
        # CPU seconds spent building and running them (a tuning search's estimate leaves them out).
        self.seconds = 0.0
        self._outputs: dict = {}  # (reference, function, inputs' digest) -> outputs

    def remembered(self, subject: Subject) -> Subject:
        """`subject` (a reference) run once per function and inputs: every
        candidate of a search is compared on the same inputs, and a
        reference's outputs do not depend on the candidate."""

        def run(function, inputs):
            arrays = [np.asarray(x) for x in inputs]
            digest = tuple((a.dtype.str, a.shape, hashlib.sha256(a.tobytes()).hexdigest()) for a in arrays)
            key = (subject.label, function.name, digest)
            if key not in self._outputs:
                began = cpu_seconds()
                self._outputs[key] = subject.run(function, inputs)
                self.seconds += cpu_seconds() - began
            return [np.array(x, copy=True) for x in self._outputs[key]]

        return Subject(subject.label, run)

    def iree_defaults(self, built: Built) -> tuple:
        """(IREE's defaults' module or None, its manifest entry); compiled on first use."""
        if self._iree is None:
            began = cpu_seconds()
            self._iree = _compile_defaults(built, self.directory / "reference")
            self.seconds += cpu_seconds() - began
        return self._iree

    def rewritten(self, built: Built, entry: dict) -> tuple:
        """(IREE's defaults on the model as ireegen rewrote it, its manifest entry); compiled on first use."""
        if self._rewritten is None:
            began = cpu_seconds()
            self._rewritten = _compile_rewritten(built, self.directory / "rewritten", entry)
            self.seconds += cpu_seconds() - began
        return self._rewritten

    def independent(self, request: EmitRequest, bounded: tuple = ()) -> tuple:
        if self._independent is None:
            subject, entry = _independent(request, bounded)
            self._independent = (self.remembered(subject) if subject is not None else None, entry)
        return self._independent


def _compile_defaults(built: Built, workdir: Path) -> tuple:
    request = built.request
    entry = {
        "used": True,
        "what": describe(reference_config()) + ": IREE's default flags; no --iree-flag, tuning flag, "
        "ireegen rewrite, workaround or kernel",
        "compiler_version": request.compiler.version,
    }
    progress("verifying", "compiling the reference (async, IREE's defaults)")
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        model = built.model
        # The model as ireegen changed it (IREE-bug rewrites, a .tflite in the
        # int8 kernels' form) is loaded again without: a .tflite's exact
        # integer form computes TFLM's numbers, the kernels' QDQ form IREE's.
        if model.onnx_rewrites or import_options(request).tflm_kernels:
            model = load_model(request.model_path, request.compiler, import_options(request).as_exported())
        compiled = compile_model(model, request.name, reference_config(), [], request.compiler, workdir, False)
        return workdir / compiled.module_file, entry
    except IreegenError as e:
        return None, {**entry, "used": False, "error": _first_line(e)}


def _compile_rewritten(built: Built, workdir: Path, entry: dict) -> tuple:
    """IREE's defaults on the model as ireegen rewrote it: the reference
    when IREE's defaults do not compile the model as exported and no
    independent reference is here (the manifest says it shares the rewrites)."""
    request = built.request
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        compiled = compile_model(built.model, request.name, reference_config(), [], request.compiler, workdir, False)
    except IreegenError as e:
        raise reference_failed(request.model_path, request.config, e) from None
    shared = [r["rewrite"] for r in built.model.onnx_rewrites]
    return workdir / compiled.module_file, {
        **entry,
        "used": True,
        "shares_rewrites": shared,
        "note": "IREE's defaults do not compile the model as exported, and no independent reference is here: "
        "the reference shares ireegen's ONNX rewrites " + ", ".join(shared),
    }


def _references(built: Built, references: ReferenceCache) -> References:
    request = built.request
    independent, independent_entry = references.independent(request, built.model.bounded)
    if subject_is_iree_defaults(built):
        entry = {"used": True, "what": "the output itself: it is what IREE's defaults compile"}
        return References(None, independent, {IREE_DEFAULTS: entry, INDEPENDENT: dict(independent_entry)}, True)
    module, entry = references.iree_defaults(built)
    section = {IREE_DEFAULTS: dict(entry), INDEPENDENT: dict(independent_entry)}
    if module is None and independent is None:
        if not built.model.onnx_rewrites:
            raise reference_failed(request.model_path, request.config, IreegenError(entry["error"]))
        module, section[IREE_DEFAULTS] = references.rewritten(built, entry)
    iree = references.remembered(module_subject(REFERENCE, module, None)) if module is not None else None
    return References(iree, independent, section)


def verify_built(built: Built, functions, given: dict, emit_twin: EmitTwin, references: ReferenceCache | None) -> dict:
    """The manifest's `verification` section of `built`, or VerificationError.
    `emit_twin` emits the twin a runtimeless target that cannot run here
    is verified as; `references` (None: one of its own) keeps the built
    references for the next verification of the same model."""
    request = built.request
    if not request.verify.enabled:
        return dict(NOT_VERIFIED)
    check_runs_here(request.config)
    with tempfile.TemporaryDirectory(prefix="ireegen-verify-") as tmp:
        tmp = Path(tmp)
        (tmp / "subject").mkdir()
        ran = backend_for(request.config).subject(built, tmp / "subject", emit_twin)
        refs = _references(built, references or ReferenceCache(tmp))
        if refs.itself and refs.independent is None:
            section = reference_itself(ran, refs)
        else:
            what = Verification(
                str(request.model_path),
                request.config,
                functions,
                request.verify,
                given,
                request.compiler.version,
                request.kernels.spec.path if request.kernels is not None else None,
                built.model.bounded,
                tuple(request.compile_flags),
            )
            section = compare_with_reference(what, ran, refs)
        if Path(request.model_path).suffix == ".tflite":
            # A TFLite model's numbers are TFLite Micro's: the subject must equal them.
            section["tflite_micro"] = {
                f.function.name: compare_with_tflm(
                    request.model_path, f.function, ran.subject, request.verify.seed, given.get(f.function.name)
                )
                for f in functions
            }
        return section
