"""Writing OUTDIR: from the shared cache, from a tuning search's chosen
candidate, or from a staging directory the driver filled; and the
manifest that describes it."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ireegen import __version__
from ireegen.cgen.vm_glue import RUNTIME_API
from ireegen.check.tune import Tuning
from ireegen.common.errors import UsageError
from ireegen.common.progress import progress
from ireegen.compile.compile_model import CompiledModule
from ireegen.output.cache import Hit, expectation, snapshot, write_hit
from ireegen.output.layout import output_files
from ireegen.output.outputs import MANIFEST, commit, manifest_text, sha256_of, staging_dir
from ireegen.output.ownership import MARKER
from ireegen.output.reproducible import source_json

from .backends import Rendered
from .load import Loaded, key_of
from .request import EmitRequest


@dataclass
class EmitResult:
    outdir: Path
    name: str
    files: list = field(default_factory=list)
    manifest: dict = field(default_factory=dict)
    from_cache: bool = False
    cache_check: str = ""  # how a cached output was trusted: signed, rebuilt
    tuning: str = ""  # the tuning's one-line summary, "" when nothing was tried


def cached(request: EmitRequest) -> tuple:
    """(the cache's Hit for the checked `request` or None, the model's
    source description or None).  None on a miss, or when the model or a
    file it needs cannot be read (a local emit's checks then refuse it with
    their one line); nothing is written."""
    try:
        source = source_json(request.model_path, request.input_shapes, request.input_values)
    except (OSError, UsageError):
        return None, None
    expect = expectation(source, request.verify)
    if expect is None:
        return None, source
    names = list(output_files(request.name, request.config).values())
    return request.cache.lookup(key_of(request, source), names, expect, request.name), source


def needs_rebuild(request: EmitRequest, hit: Hit) -> bool:
    """Whether `hit` must be rebuilt here and compared before it is
    installed: it is not signed with the cache key, or --cache-recheck."""
    return request.cache.recheck or not hit.signed


def write_cached(request: EmitRequest, hit: Hit, check: str) -> EmitResult:
    """Writes OUTDIR from the checked `hit`; `check` says how it was
    trusted ("signed", "rebuilt here with the same bytes", or both)."""
    outdir = request.outdir
    with staging_dir(outdir) as staging:
        names = write_hit(hit, staging)
        progress("writing", f"{outdir} from the cache")
        commit(staging, outdir, names, hit.manifest)
    return EmitResult(outdir, request.name, names + [MANIFEST], hit.manifest, from_cache=True, cache_check=check)


def same_as_cached(hit: Hit, staging: Path, files: list, manifest: dict) -> bool:
    """Whether the output rebuilt here (`files` in `staging`, `manifest`
    without its verification) is byte for byte the cached `hit`."""
    if sorted(files) != sorted(n for n in hit.files if n != MANIFEST):
        return False
    if any((staging / name).read_bytes() != hit.files[name] for name in files):
        return False
    recorded = {k: v for k, v in hit.manifest.items() if k != "verification"}
    return manifest_text(manifest) == manifest_text(recorded)


def write_tuned(request: EmitRequest, loaded: Loaded, tuning: Tuning) -> EmitResult:
    """Writes the chosen candidate's output, emitted and verified during the
    search with exactly this emit's inputs and the candidate's flags, as
    this emit's: the same bytes a compile with those flags would give (the
    rebuild from the tuning record does that compile)."""
    manifest = json.loads((tuning.output / MANIFEST).read_text())
    names = [f["path"] for f in manifest["files"]]
    manifest = {**manifest, "content_key": loaded.key, "tuning": tuning.section}
    with staging_dir(request.outdir) as staging:
        for file in names:
            shutil.copyfile(tuning.output / file, staging / file)
        upload = snapshot(staging, names, manifest) if request.cache is not None else None
        progress("writing", str(request.outdir))
        commit(staging, request.outdir, names, manifest)
    if upload is not None:
        request.cache.store(loaded.key, upload, expectation(loaded.source, request.verify))
    return EmitResult(request.outdir, manifest["name"], sorted(names) + [MANIFEST], manifest, tuning=tuning.summary)


def manifest_of(
    request: EmitRequest, loaded: Loaded, compiled: CompiledModule, rendered: Rendered, staging: Path, tuning
) -> dict:
    """manifest.json of the output in `staging`, but its `verification`."""
    config, kernels, files = request.config, request.kernels, rendered.files
    return {
        **MARKER,
        "content_key": loaded.key,
        "ireegen_version": __version__,
        "name": request.name,
        "vm_module_name": loaded.module_name,
        "source": loaded.source,
        "execution_model": config.execution_model.name,
        "iree_execution_model": config.execution_model.iree_name,
        "executable_format": config.executable_format.name,
        "module_format": config.module_format,
        "data_format": config.data_format,
        "target": config.target.to_json() if config.target else None,
        "iree": {"compiler_version": request.compiler.version, "runtime_api": RUNTIME_API},
        "compile_flags": compiled.flags,
        "module_dependencies": rendered.dependencies,
        "iree_workarounds": compiled.workarounds,
        **({"tuning": tuning.section} if tuning is not None else {}),
        **({"onnx_rewrites": list(loaded.model.onnx_rewrites)} if loaded.model.onnx_rewrites else {}),
        **({"quantized_io": True} if request.quantized_io else {}),
        "static_library_queries": rendered.library_queries,
        **({"kernels": {**kernels.spec.to_json(), "dispatches": compiled.kernel_calls}} if kernels else {}),
        **rendered.manifest,
        "functions": [fn.to_json() for fn in loaded.functions],
        "files": [
            {"path": f, "role": role, "sha256": sha256_of(staging / f)}
            for role, f in sorted(files.items(), key=lambda item: item[1])
        ],
    }
