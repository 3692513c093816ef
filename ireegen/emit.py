"""`ireegen emit`: a model in, a directory of C sources, module and manifest out."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from ireegen import __version__
from ireegen.cgen.c_api import build_functions
from ireegen.cgen.naming import check_library_queries, check_name, default_name
from ireegen.cgen.render import preload
from ireegen.cgen.symbols import check_generated
from ireegen.cgen.vm_glue import RUNTIME_API, SCANNED_ROLES, check_vm_names, header_context, summary, write_vm_sources
from ireegen.check.verify import ReferenceCache, VerifyOptions, load_verify_inputs
from ireegen.check.verify import verify as verify_output
from ireegen.common.errors import UsageError
from ireegen.common.faults import fault_point
from ireegen.common.progress import progress
from ireegen.compile.compile_model import check_extra_flags, compile_model, vm_module_name
from ireegen.compile.compiler import Compiler, find_compiler
from ireegen.compile.kernel_link import KernelLink
from ireegen.compile.size_limits import check_tensor_sizes
from ireegen.config.modes import Config
from ireegen.config.targets import check_target
from ireegen.config.tuning import check_level
from ireegen.frontend.models import check_model_path, load_model
from ireegen.output.cache import Cache, expectation, snapshot, write_hit
from ireegen.output.layout import link_libraries, output_files
from ireegen.output.outputs import MANIFEST, check_emit_target, commit, sha256_of, staging_dir
from ireegen.output.ownership import MARKER
from ireegen.output.reproducible import content_key, source_json


@dataclass
class EmitResult:
    outdir: Path
    name: str
    files: list = field(default_factory=list)
    manifest: dict = field(default_factory=dict)
    from_cache: bool = False
    tuning: str = ""  # the tuning's one-line summary, "" when nothing was tried


def prepare_kernels(spec_path, config: Config) -> KernelLink:
    """A --kernels SPEC, checked with the toolchain that builds it, before any work."""
    from ireegen.cbuild.kernels import kernel_link, kernel_toolchain
    from ireegen.frontend.kernel_spec import load_kernel_spec

    link = kernel_link(load_kernel_spec(spec_path))
    kernel_toolchain(config)
    return link


def module_dependencies(module_path: Path, module_format: str) -> list:
    """The VM modules the compiled program imports (hal, hal_inline, vmvx ...)."""
    if module_format == "emitc":
        text = module_path.read_text()
        m = re.search(r"_dependencies_\[\] = \{(.*?)\};", text)
        return re.findall(r'\{"(\w+)", \d+\}', m.group(1)) if m else []
    from ireegen.check.runners import find_runtime_tools

    tool = find_runtime_tools().dump_module
    out = subprocess.run(
        [str(tool), "--output=metadata", str(module_path)], stdout=subprocess.PIPE, text=True, check=True
    ).stdout
    section = out.split("Module Dependencies:", 1)[1].split("\n\n", 1)[0] if "Module Dependencies:" in out else ""
    return re.findall(r"^\s+(\w+), version", section, re.M)


def _library_queries(header: Path) -> list:
    # Every declaration, identifier or not: emit checks them.
    return re.findall(r"^([^\s/#].*?_library_query)\(", header.read_text(), re.M)


def _inputs(model_path: Path, verify: VerifyOptions, kernels=None) -> list:
    """(what, path) of every file emit reads: no output may land on one."""
    inputs = [("the model", model_path)]
    if model_path.suffix == ".onnx":
        from ireegen.frontend.onnx_import import model_dependencies

        inputs += [("its external data file", f) for f in model_dependencies(model_path)[1:]]
    if verify.enabled and verify.inputs is not None:
        inputs.append(("--verify-inputs", Path(verify.inputs)))
    if kernels is not None:
        inputs += [("a --kernels file", f) for f in kernels.spec.files()]
    return inputs


def _cached(cache, model_path, outdir, name, config, verify, input_shapes, input_values, key_of):
    """The EmitResult of writing OUTDIR from `cache`; None on a miss, or
    when the model or a file it needs cannot be read (a local emit's checks
    then refuse it with their one line).  `key_of(source)` is the emit's
    content key for the model's source description."""
    try:
        source = source_json(model_path, input_shapes, input_values)
    except (OSError, UsageError):
        return None
    expect = expectation(source, verify)
    if expect is None:
        return None
    key = key_of(source)
    hit = cache.lookup(key, list(output_files(name, config).values()), expect)
    if hit is None:
        return None
    with staging_dir(outdir) as staging:
        names = write_hit(hit, staging)
        progress("writing", f"{outdir} from the cache")
        commit(staging, outdir, names, hit.manifest)
    return EmitResult(outdir, name, names + [MANIFEST], hit.manifest, from_cache=True)


def _write_tuned(tuning, outdir: Path, key: str, cache, source: dict, verify) -> EmitResult:
    """Writes the chosen candidate's output, emitted and verified during the
    search with exactly this emit's inputs and the candidate's flags, as
    this emit's: the same bytes a compile with those flags would give (the
    rebuild from the tuning record does that compile)."""
    manifest = json.loads((tuning.output / MANIFEST).read_text())
    names = [f["path"] for f in manifest["files"]]
    manifest = {**manifest, "content_key": key, "tuning": tuning.section}
    with staging_dir(outdir) as staging:
        for file in names:
            shutil.copyfile(tuning.output / file, staging / file)
        upload = snapshot(staging, names, manifest) if cache is not None else None
        progress("writing", str(outdir))
        commit(staging, outdir, names, manifest)
    if upload is not None:
        cache.store(key, upload, expectation(source, verify))
    return EmitResult(outdir, manifest["name"], sorted(names) + [MANIFEST], manifest, tuning=tuning.summary)


def emit(
    model_path,
    outdir,
    config: Config,
    name: str | None = None,
    extra_flags=None,
    compiler: Compiler | None = None,
    verify: VerifyOptions | bool = True,
    apply_workarounds: bool = True,
    input_shapes: dict | None = None,
    input_values: dict | None = None,
    cache: Cache | None = None,
    kernels=None,
    tune: str | None = None,
    candidate_flags=(),
    builtin_kernels: bool = True,
    reference_cache=None,
    quantized_io: bool = False,
) -> EmitResult:
    """Compiles `model_path` for `config` and writes the C library into
    `outdir`, after checking that it computes what async computes (verify.py;
    `verify=False` skips that).  `apply_workarounds=False` compiles exactly
    as iree-compile would, IREE's bugs included (verification still runs).
    `input_shapes` ({input name: dims}) pins symbolic dimensions of an ONNX
    model; `input_values` ({input name: values}) makes its inputs constants.
    With a `cache` (output/cache.py), a cached output for the content key is
    written instead of compiling, and a compiled one is uploaded.  `kernels`
    (a --kernels SPEC path, or the KernelLink of one) links the user's own
    kernels into the executables (docs/kernels.md); without it, ireegen's
    own int8 kernels are linked for a QDQ int8 model on a Cortex-M or RV32, unless
    `builtin_kernels` is False (cbuild/int8_kernels.py).
    `tune` (off, quick, full; None: config/tuning.py's default) chooses
    among IREE configurations by timing them on the model (check/tune.py);
    `candidate_flags` are a tuning candidate's: compiled into the output, but
    not into the async reference it is verified against, nor into the key;
    `reference_cache` (check/verify.py) shares that reference between the
    candidates of one search.  `quantized_io` gives a QDQ ONNX model the
    int8 inputs and outputs its QuantizeLinear and DequantizeLinear
    compute (frontend/quantized_io.py, docs/kernels-int8.md)."""
    if not str(outdir).strip():
        raise UsageError("-o: the output directory is an empty path")
    model_path = check_model_path(model_path)
    name = check_name(name) if name is not None else default_name(model_path)
    extra_flags = check_extra_flags(extra_flags)
    candidate_flags = check_extra_flags(candidate_flags)
    tune = check_level(tune, config=config)
    outdir = Path(outdir)
    compiler = compiler or find_compiler()
    if not isinstance(verify, VerifyOptions):
        verify = VerifyOptions(enabled=bool(verify))
    check_target(config.target, compiler)
    if kernels is not None and not isinstance(kernels, KernelLink):
        kernels = prepare_kernels(kernels, config)
    elif kernels is None and builtin_kernels:
        from ireegen.cbuild.int8_kernels import default_kernels

        kernels = default_kernels(model_path, config)
    check_emit_target(outdir, [*output_files(name, config).values(), MANIFEST], _inputs(model_path, verify, kernels))

    def key_of(source: dict) -> str:
        kernel_spec = kernels.spec.to_json() if kernels else None
        return content_key(
            model_path,
            name,
            config,
            extra_flags,
            compiler,
            apply_workarounds,
            input_shapes,
            source,
            input_values,
            kernel_spec,
            tune=tune,
            quantized_io=quantized_io,
        )

    if cache is not None:
        # A hit is an earlier emit of exactly these inputs, which passed
        # every check below: it skips them (and the model's import) too.
        hit = _cached(cache, model_path, outdir, name, config, verify, input_shapes, input_values, key_of)
        if hit is not None:
            return hit

    # A microcontroller keeps its memory: no rewrite that trades it for speed.
    speed_rewrites = config.target is None or not config.target.microcontroller
    model = load_model(
        model_path,
        input_shapes,
        compiler,
        input_values,
        onnx_rewrites=apply_workarounds,
        speed_rewrites=speed_rewrites,
        quantized_io=quantized_io,
    )
    check_tensor_sizes(model.functions, config, str(model_path))
    functions = build_functions(name, model.functions, str(model_path))
    module_name = vm_module_name(name)
    if not config.execution_model.has_vm_module:
        from ireegen.runtimeless.lower import check_functions

        check_functions(functions, str(model_path))

    if config.execution_model.has_vm_module:
        check_vm_names(name, model_path, config, functions, module_name)
    verify_inputs = load_verify_inputs(verify, [f.function for f in functions])

    source = source_json(model_path, input_shapes, input_values)
    key = key_of(source)
    tuning = None
    if tune != "off":
        from ireegen.check.tune import tune as tune_model

        def emit_candidate(flags, candidate_outdir: Path) -> None:
            emit(
                model_path,
                candidate_outdir,
                config,
                name=name,
                extra_flags=extra_flags,
                compiler=compiler,
                verify=replace(verify, enabled=True),  # a candidate is always verified
                apply_workarounds=apply_workarounds,
                input_shapes=input_shapes,
                input_values=input_values,
                kernels=kernels,
                tune="off",
                candidate_flags=flags,
                builtin_kernels=False,  # `kernels` is already what this emit links
                reference_cache=references,  # one async reference for every candidate
                quantized_io=quantized_io,
            )

        given = verify_inputs if verify.enabled else {}
        with tempfile.TemporaryDirectory(prefix="ireegen-reference-") as reference_dir:
            references = ReferenceCache(Path(reference_dir))
            tuning = tune_model(
                model,
                tune,
                config,
                key,
                [f.function for f in functions],
                given,
                verify.seed,
                emit_candidate,
                keep_output=verify.enabled,  # under --no-verify, the output's verification section differs
            )
        candidate_flags = tuning.flags
        if tuning.output is not None:
            try:
                return _write_tuned(tuning, outdir, key, cache, source, verify)
            finally:
                tuning.discard()

    def emit_twin(twin: Config, twin_outdir: Path) -> None:
        emit(
            model_path,
            twin_outdir,
            twin,
            name=name,
            extra_flags=extra_flags,
            compiler=compiler,
            verify=VerifyOptions(enabled=False),
            input_shapes=input_shapes,
            input_values=input_values,
            kernels=kernels,
            tune="off",
            candidate_flags=candidate_flags,
            builtin_kernels=False,
            quantized_io=quantized_io,
        )

    # The templates compile while iree-compile runs.
    templates = threading.Thread(target=preload, daemon=True)
    templates.start()
    with staging_dir(outdir) as staging:
        progress("compiling", f"{model_path.name} with iree-compile ({summary(config)})")
        compiled = compile_model(
            model, name, config, [*extra_flags, *candidate_flags], compiler, staging, apply_workarounds, kernels
        )
        fault_point("after-compile")
        progress("rendering", "C sources")
        templates.join()
        files = output_files(name, config)
        module_file = compiled.module_file
        flags = compiled.flags
        extra_manifest = {}
        if not config.execution_model.has_vm_module:
            from ireegen.runtimeless.lower import write_sources

            context = dict(header_context(name, model_path, config), source=model_path.name)
            extra_manifest["runtimeless"] = write_sources(
                staging,
                name,
                files,
                functions,
                staging / module_file,
                context,
                link_libraries(config),
                config.data_format,
                compiled.lower_bounds,
                compiled.binding_access,
            )
            dependencies, library_queries = [], extra_manifest["runtimeless"]["abi"]["library_queries"]
            check_library_queries(name, library_queries, str(model_path))
        else:
            static_object = files.get("executables-object")
            library_queries = _library_queries(staging / files["executables-header"]) if static_object else []
            check_library_queries(name, library_queries, str(model_path))
            dependencies = module_dependencies(staging / module_file, config.module_format)
            write_vm_sources(
                staging,
                name,
                model_path,
                config,
                files,
                functions,
                module_name,
                dependencies,
                library_queries,
                module_file,
            )

        check_generated(
            {f: (staging / f).read_text() for r, f in files.items() if r in SCANNED_ROLES},
            functions,
            name,
            str(model_path),
        )
        fault_point("after-render")
        manifest = {
            **MARKER,
            "content_key": key,
            "ireegen_version": __version__,
            "name": name,
            "vm_module_name": module_name,
            "source": source,
            "execution_model": config.execution_model.name,
            "iree_execution_model": config.execution_model.iree_name,
            "executable_format": config.executable_format.name,
            "module_format": config.module_format,
            "data_format": config.data_format,
            "target": config.target.to_json() if config.target else None,
            "iree": {"compiler_version": compiler.version, "runtime_api": RUNTIME_API},
            "compile_flags": flags,
            "module_dependencies": dependencies,
            "iree_workarounds": compiled.workarounds,
            **({"tuning": tuning.section} if tuning is not None else {}),
            **({"onnx_rewrites": list(model.onnx_rewrites)} if model.onnx_rewrites else {}),
            **({"quantized_io": True} if quantized_io else {}),
            "static_library_queries": library_queries,
            **({"kernels": {**kernels.spec.to_json(), "dispatches": compiled.kernel_calls}} if kernels else {}),
            **extra_manifest,
            "functions": [fn.to_json() for fn in functions],
            "files": [
                {"path": f, "role": role, "sha256": sha256_of(staging / f)}
                for role, f in sorted(files.items(), key=lambda item: item[1])
            ],
        }
        manifest["verification"] = verify_output(
            model,
            model_path,
            name,
            config,
            staging,
            module_file,
            manifest,
            functions,
            [*extra_flags, *candidate_flags],
            compiler,
            verify,
            apply_workarounds,
            emit_twin,
            verify_inputs,
            kernels,
            reference_flags=extra_flags,
            reference_cache=reference_cache,
        )
        upload = snapshot(staging, list(files.values()), manifest) if cache is not None else None
        progress("writing", str(outdir))
        commit(staging, outdir, list(files.values()), manifest)
    if upload is not None:
        cache.store(key, upload, expectation(source, verify))
    return EmitResult(
        outdir, name, sorted(files.values()) + [MANIFEST], manifest, tuning=tuning.summary if tuning else ""
    )
