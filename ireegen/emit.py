"""`ireegen emit`: a model in, a directory of C sources, module and manifest out."""

from __future__ import annotations

import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .c_api import build_functions
from .data_source import write_data_source
from .layout import link_libraries, output_files
from .compiler import Compiler, find_compiler
from .models import check_model_path, load_model
from .modes import Config
from .naming import check_name, default_name
from .outputs import MANIFEST, commit, sha256_of, staging_dir
from .errors import UsageError
from .compile_model import check_extra_flags, compile_model, vm_module_name
from .faults import fault_point
from .progress import progress
from .render import banner, preload, render
from .verify import VerifyOptions, load_verify_inputs, verify as verify_output
from .reproducible import content_key, source_json
from .symbols import check_generated
from .targets import check_target

RUNTIME_API = "IREE 3.12 and 3.13 (device groups, async proactor pools)"
ERROR_CAPACITY = 512
MODULE_DATA_ALIGNMENT = 64  # the bytecode module is used in place; IREE wants it 64-byte aligned

@dataclass
class EmitResult:
    outdir: Path
    name: str
    files: list = field(default_factory=list)
    manifest: dict = field(default_factory=dict)


def module_dependencies(module_path: Path, module_format: str) -> list:
    """The VM modules the compiled program imports (hal, hal_inline, vmvx ...)."""
    if module_format == "emitc":
        text = module_path.read_text()
        m = re.search(r"_dependencies_\[\] = \{(.*?)\};", text)
        return re.findall(r'\{"(\w+)", \d+\}', m.group(1)) if m else []
    from .runners import find_runtime_tools

    tool = find_runtime_tools().dump_module
    out = subprocess.run(
        [str(tool), "--output=metadata", str(module_path)], stdout=subprocess.PIPE, text=True, check=True
    ).stdout
    section = out.split("Module Dependencies:", 1)[1].split("\n\n", 1)[0] if "Module Dependencies:" in out else ""
    return re.findall(r"^\s+(\w+), version", section, re.M)


def _library_queries(header: Path) -> list:
    return re.findall(r"^(\w+_library_query)\(", header.read_text(), re.M)


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
) -> EmitResult:
    """Compiles `model_path` for `config` and writes the C library into
    `outdir`, after checking that it computes what async computes (verify.py;
    `verify=False` skips that).  `apply_workarounds=False` compiles exactly
    as iree-compile would, IREE's bugs included (verification still runs).
    `input_shapes` ({input name: dims}) pins symbolic dimensions of an ONNX model."""
    if not str(outdir).strip():
        raise UsageError("-o: the output directory is an empty path")
    model_path = check_model_path(model_path)
    name = check_name(name) if name is not None else default_name(model_path)
    extra_flags = check_extra_flags(extra_flags)
    outdir = Path(outdir)
    compiler = compiler or find_compiler()
    if not isinstance(verify, VerifyOptions):
        verify = VerifyOptions(enabled=bool(verify))
    check_target(config.target, compiler)

    model = load_model(model_path, input_shapes, compiler)
    functions = build_functions(name, model.functions, str(model_path))
    module_name = vm_module_name(name)
    if not config.execution_model.has_vm_module:
        from .runtimeless import check_functions

        check_functions(functions, str(model_path))

    if config.execution_model.has_vm_module:
        _check_vm_names(name, model_path, config, functions, module_name)
    verify_inputs = load_verify_inputs(verify, [f.function for f in functions])
    source = source_json(model_path, input_shapes)
    key = content_key(model_path, name, config, extra_flags, compiler, apply_workarounds, input_shapes, source)
    # The templates compile while iree-compile runs.
    templates = threading.Thread(target=preload, daemon=True)
    templates.start()
    with staging_dir(outdir) as staging:
        progress("compiling", f"{model_path.name} with iree-compile ({_summary(config)})")
        compiled = compile_model(model, name, config, extra_flags, compiler, staging, apply_workarounds)
        fault_point("after-compile")
        progress("rendering", "C sources")
        templates.join()
        files = output_files(name, config)
        module_file = compiled.module_file
        flags = compiled.flags
        extra_manifest = {}
        if not config.execution_model.has_vm_module:
            from .runtimeless import write_sources

            context = dict(_header_context(name, model_path, config), source=model_path.name)
            extra_manifest["runtimeless"] = write_sources(
                staging, name, files, functions, staging / module_file, context, link_libraries(config),
                config.data_format)
            dependencies, library_queries = [], extra_manifest["runtimeless"]["abi"]["library_queries"]
        else:
            static_object = files.get("executables-object")
            library_queries = _library_queries(staging / files["executables-header"]) if static_object else []
            dependencies = module_dependencies(staging / module_file, config.module_format)
            _write_vm_sources(staging, name, model_path, config, files, functions, module_name, dependencies,
                              library_queries, module_file)

        check_generated({f: (staging / f).read_text() for r, f in files.items() if r in _SCANNED_ROLES},
                        functions, name, str(model_path))
        fault_point("after-render")
        manifest = {
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
            "static_library_queries": library_queries,
            **extra_manifest,
            "functions": [fn.to_json() for fn in functions],
            "files": [
                {"path": f, "role": role, "sha256": sha256_of(staging / f)}
                for role, f in sorted(files.items(), key=lambda item: item[1])
            ],
        }
        manifest["verification"] = verify_output(model, model_path, name, config, staging, module_file, manifest,
                                                 functions, extra_flags, compiler, verify, apply_workarounds,
                                                 input_shapes, verify_inputs)
        progress("writing", str(outdir))
        commit(staging, outdir, list(files.values()), manifest)
    return EmitResult(outdir, name, sorted(files.values()) + [MANIFEST], manifest)


# Files whose file-scope names are checked for clashes (the byte blocks and
# the compiler's own EmitC are left out: their names are fixed suffixes
# naming.RESERVED_SUFFIXES keeps free, or contain `__`).
_SCANNED_ROLES = ("api-header", "runtime-source", "module-emitc-source", "executables-header", "abi-header")


def _check_vm_names(name, model_path, config, functions, module_name) -> None:
    """Renders the VM-mode glue before compiling (what the compile adds,
    dependencies and library queries, does not change its names) and
    refuses clashing names before any work is done."""
    files = output_files(name, config)
    context = _template_context(name, model_path, config, files, functions, module_name, [], [])
    texts = {files["api-header"]: render("api.h.j2", **context),
             files["runtime-source"]: render("runtime.c.j2", header=files["api-header"], **context)}
    check_generated(texts, functions, name, str(model_path))


def _header_context(name, model_path, config) -> dict:
    """What every mode's generated files open with."""
    return dict(banner=banner(model_path.name), guard=f"{name.upper()}_IREEGEN_H_", summary=_summary(config))


def _summary(config) -> str:
    target = config.target
    return (
        f"{config.execution_model.name} execution model, {config.executable_format.name} executables"
        + (f" for {target.triple} (cpu {target.cpu})" if target else "")
        + (f", {config.module_format} module" if config.module_format else ", no VM module")
    )


def _write_vm_sources(staging, name, model_path, config, files, functions, module_name, dependencies,
                      library_queries, module_file) -> None:
    context = _template_context(name, model_path, config, files, functions, module_name, dependencies, library_queries)
    header = files["api-header"]
    (staging / header).write_text(render("api.h.j2", **context))
    (staging / files["runtime-source"]).write_text(render("runtime.c.j2", header=header, **context))
    if config.module_format == "vmfb":
        data = (staging / module_file).read_bytes()
        write_data_source(
            staging, config.data_format, files["module-data-source"], files["module"], data,
            symbol=f"{name}_module_data", size_symbol=f"{name}_module_size", alignment=MODULE_DATA_ALIGNMENT,
            description=[f"The VM bytecode module of `{name}` ({len(data)} bytes), used in place."],
            section_macro=f"{name.upper()}_MODULE_DATA_SECTION", macro=name.upper(),
            c_template="module_data.c.j2", context=dict(context, size=len(data)), write_blob=False)
    else:
        text = render("module_emitc.c.j2", module_header=module_file, **context)
        (staging / files["module-emitc-source"]).write_text(text)


def _template_context(name, model_path, config, files, functions, module_name, dependencies, library_queries) -> dict:
    em = config.execution_model.name
    fmt = config.executable_format.name
    loader = em != "inline-static"
    needs_vmvx = "vmvx" in dependencies
    includes = ["iree/vm/api.h", "iree/modules/hal/types.h"]
    if config.module_format == "vmfb":
        includes.append("iree/vm/bytecode/module.h")
    else:
        includes.append(files["module-emitc"])
    if em == "async":
        includes += [
            "iree/async/frontier_tracker.h",
            "iree/async/util/proactor_pool.h",
            "iree/base/threading/numa.h",
            "iree/hal/drivers/local_sync/sync_device.h",
            "iree/modules/hal/module.h",
        ]
        register_types = ["iree_hal_module_register_all_types"]
    else:
        includes.append("iree/modules/hal/inline/module.h")
        register_types = ["iree_hal_module_register_inline_types"]
        if em == "inline-dynamic":
            includes.append("iree/modules/hal/loader/module.h")
            register_types.append("iree_hal_module_register_loader_types")
    if loader:
        includes.append(
            {
                "embedded-elf": "iree/hal/local/loaders/embedded_elf_loader.h",
                "static-library": "iree/hal/local/loaders/static_library_loader.h",
                "vmvx": "iree/hal/local/loaders/vmvx_module_loader.h",
            }[fmt]
        )
        if fmt == "static-library":
            includes.append(files["executables-header"])
    if needs_vmvx:
        includes.append("iree/modules/vmvx/module.h")
    return dict(
        _header_context(name, model_path, config),
        name=name,
        runtime_api=RUNTIME_API,
        functions=functions,
        any_typed=any(f.typed for f in functions),
        execution_model=em,
        executable_format=fmt,
        module_format=config.module_format,
        module_data_source=files.get("module-data-source"),
        vm_module_name=module_name,
        includes=includes,
        loader=loader,
        library_queries=library_queries,
        needs_vmvx_module=needs_vmvx,
        register_types=register_types,
        max_modules=4,
        error_capacity=ERROR_CAPACITY,
        vm_c_types={"i32": "int32_t", "i64": "int64_t", "f32": "float", "f64": "double"},
    )
