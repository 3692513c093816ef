"""The C glue of the VM execution models (async, inline-static,
inline-dynamic): the typed header and the runtime source that load the
module and call its functions, and the module bytes as a data source."""

from __future__ import annotations

from ireegen.cgen.data_source import DataSource, write_data_source
from ireegen.cgen.render import banner, render
from ireegen.cgen.symbols import check_generated
from ireegen.output.layout import output_files

RUNTIME_API = "IREE 3.12 and 3.13 (device groups, async proactor pools)"
ERROR_CAPACITY = 512
# The task executor's headers: async glue emitted with --threads other than 1
# (with 1 it creates only local-sync devices and links no task driver).
TASK_EXECUTOR_INCLUDES = ["iree/hal/drivers/local_task/task_device.h", "iree/task/executor.h", "iree/task/topology.h"]
MODULE_DATA_ALIGNMENT = 64  # the bytecode module is used in place; IREE wants it 64-byte aligned

# Files whose file-scope names are checked for clashes (the byte blocks and
# the compiler's own EmitC are left out: their names are fixed suffixes
# naming.RESERVED_SUFFIXES keeps free, or contain `__`).
SCANNED_ROLES = ("api-header", "runtime-source", "module-emitc-source", "executables-header", "abi-header")


def check_vm_names(name, model_path, config, functions, module_name) -> None:
    """Renders the VM-mode glue before compiling (what the compile adds,
    dependencies and library queries, does not change its names) and
    refuses clashing names before any work is done."""
    files = output_files(name, config)
    context = _template_context(name, model_path, config, files, functions, module_name, [], [])
    texts = {
        files["api-header"]: render("api.h.j2", **context),
        files["runtime-source"]: render("runtime.c.j2", header=files["api-header"], **context),
    }
    check_generated(texts, functions, name, str(model_path))


def header_context(name, model_path, config) -> dict:
    """What every mode's generated files open with."""
    return dict(banner=banner(model_path.name), guard=f"{name.upper()}_IREEGEN_H_", summary=summary(config))


def summary(config) -> str:
    target = config.target
    return (
        f"{config.execution_model.name} execution model, {config.executable_format.name} executables"
        + (f" for {target.triple} (cpu {target.cpu})" if target else "")
        + (f", {config.module_format} module" if config.module_format else ", no VM module")
    )


def write_vm_sources(
    staging, name, model_path, config, files, functions, module_name, dependencies, library_queries, module_file
) -> None:
    context = _template_context(name, model_path, config, files, functions, module_name, dependencies, library_queries)
    header = files["api-header"]
    (staging / header).write_text(render("api.h.j2", **context))
    (staging / files["runtime-source"]).write_text(render("runtime.c.j2", header=header, **context))
    if config.module_format == "vmfb":
        data = (staging / module_file).read_bytes()
        spec = DataSource(
            symbol=f"{name}_module_data",
            size_symbol=f"{name}_module_size",
            alignment=MODULE_DATA_ALIGNMENT,
            description=[f"The VM bytecode module of `{name}` ({len(data)} bytes), used in place."],
            section_macro=f"{name.upper()}_MODULE_DATA_SECTION",
            macro=name.upper(),
            c_template="module_data.c.j2",
            write_blob=False,
        )
        source, blob = files["module-data-source"], files["module"]
        write_data_source(staging, config.data_format, source, blob, data, spec, dict(context, size=len(data)))
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
        if config.threads != 1:
            includes += TASK_EXECUTOR_INCLUDES
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
        header_context(name, model_path, config),
        name=name,
        runtime_api=RUNTIME_API,
        functions=functions,
        any_typed=any(f.typed for f in functions),
        execution_model=em,
        executable_format=fmt,
        module_format=config.module_format,
        threads=config.threads,
        task_executor=config.threads != 1,
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
