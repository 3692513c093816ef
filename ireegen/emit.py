"""`ireegen emit`: a model in, a directory of C sources, module and manifest
out.  The driver runs the stages of ireegen/driver/ in order:

    checked request -> (the cache) -> loaded -> (the tuning search)
    -> compiled -> rendered by the execution model's backend
    -> verified -> committed
"""

from __future__ import annotations

import threading
from dataclasses import replace

from ireegen.cgen.render import preload
from ireegen.cgen.symbols import check_generated
from ireegen.cgen.vm_glue import SCANNED_ROLES, summary
from ireegen.common.clock import cpu_seconds
from ireegen.common.faults import fault_point
from ireegen.common.progress import progress
from ireegen.compile.compile_model import compile_model
from ireegen.driver.backends import Built, backend_for
from ireegen.driver.load import Loaded, load
from ireegen.driver.outputs import (
    EmitResult,
    cached,
    manifest_of,
    needs_rebuild,
    same_as_cached,
    write_cached,
    write_tuned,
)
from ireegen.driver.request import EmitRequest, checked, twin_request
from ireegen.driver.tuning import search
from ireegen.driver.verification import ReferenceCache, verify_built
from ireegen.output.cache import Hit, expectation, snapshot, warn
from ireegen.output.outputs import MANIFEST, commit, staging_dir

__all__ = ["EmitRequest", "EmitResult", "emit", "emit_request"]


def emit(model_path, outdir, config, **options) -> EmitResult:
    """Compiles `model_path` for `config` and writes the C library into
    `outdir`, after checking that it computes what async computes;
    `options` are EmitRequest's other fields (driver/request.py)."""
    return emit_request(EmitRequest(model_path, outdir, config, **options))


def emit_request(
    request: EmitRequest, references: ReferenceCache | None = None, loaded: Loaded | None = None
) -> EmitResult:
    """Runs one emit.  `references` (driver/verification.py) shares the
    async reference between the candidates of one tuning search, and
    `loaded` the model they all compile (imported once per search: a
    candidate's flags are iree-compile's, never the import's)."""
    started = cpu_seconds()  # tuning's budget counts CPU time from here
    request = checked(request)
    hit = None
    if request.cache is not None:
        # A signed hit is an earlier emit of exactly these inputs by a
        # writer holding the key, which passed every check below: it skips
        # them (and the model's import) too.  Any other hit is rebuilt here
        # (after the tuning search, which chooses the flags) and installed
        # only when the bytes are the same.
        hit, _source = cached(request)
        if hit is not None and not needs_rebuild(request, hit):
            return write_cached(request, hit, "signed")
    loaded = loaded or load(request)
    tuning = None
    if request.tune != "off":
        tuning = search(request, loaded, emit_request, started)
        request = replace(request, candidate_flags=tuning.flags)
        if tuning.output is not None:
            try:
                return write_tuned(request, loaded, tuning)
            finally:
                tuning.discard()
    return _build(request, loaded, tuning, references, hit)


def _build(
    request: EmitRequest, loaded: Loaded, tuning, references: ReferenceCache | None, hit: Hit | None = None
) -> EmitResult:
    """Compiles, renders and verifies the output in a staging directory, then
    commits it.  With a cache `hit` to re-check: when the compiled and
    rendered output is byte for byte the hit's, the hit is committed
    without verifying; otherwise it is refused and the local build goes on."""
    backend = backend_for(request.config)
    # The templates compile while iree-compile runs.
    templates = threading.Thread(target=preload, daemon=True)
    templates.start()
    with staging_dir(request.outdir) as staging:
        progress("compiling", f"{request.model_path.name} with iree-compile ({summary(request.config)})")
        compiled = compile_model(
            loaded.model,
            request.name,
            request.config,
            request.compile_flags,
            request.compiler,
            staging,
            request.apply_workarounds,
            request.kernels,
        )
        fault_point("after-compile")
        progress("rendering", "C sources")
        templates.join()
        rendered = backend.render(request, loaded.functions, loaded.module_name, compiled, staging)
        check_generated(
            {f: (staging / f).read_text() for r, f in rendered.files.items() if r in SCANNED_ROLES},
            loaded.functions,
            request.name,
            str(request.model_path),
        )
        fault_point("after-render")
        manifest = manifest_of(request, loaded, compiled, rendered, staging, tuning)
        files = list(rendered.files.values())
        if hit is not None:
            if same_as_cached(hit, staging, files, manifest):
                progress("writing", f"{request.outdir} from the cache, rebuilt here with the same bytes")
                commit(staging, request.outdir, files, hit.manifest)
                check = "signed, rebuilt here with the same bytes" if hit.signed else "rebuilt here with the same bytes"
                names = sorted(files) + [MANIFEST]
                return EmitResult(request.outdir, request.name, names, hit.manifest, from_cache=True, cache_check=check)
            warn(
                f"cache {request.cache.label}: the entry for {loaded.key[:12]} is not what this emit builds; "
                "not installed, verifying the local build"
            )
        built = Built(request, loaded.model, compiled, staging, manifest)

        def emit_twin(config, outdir) -> None:
            emit_request(twin_request(request, config, outdir))

        manifest["verification"] = verify_built(built, loaded.functions, loaded.verify_inputs, emit_twin, references)
        upload = snapshot(staging, files, manifest) if request.cache is not None else None
        progress("writing", str(request.outdir))
        commit(staging, request.outdir, files, manifest)
    if upload is not None:
        request.cache.store(loaded.key, upload, expectation(loaded.source, request.verify))
    summary_line = tuning.summary if tuning else ""
    return EmitResult(request.outdir, request.name, sorted(files) + [MANIFEST], manifest, tuning=summary_line)
