"""What an output directory holds for a configuration: file names by role,
and the IREE runtime CMake targets the generated sources link.  emit writes
exactly these files, and the CMake function declares exactly these outputs."""

from __future__ import annotations

from ireegen.config.modes import Config

# --data-format -> extension of the source that holds the constants / the
# module bytes.  asm sources .incbin their bytes from a file beside them:
# the runtimeless constants from NAME_constants.bin (role constants-blob),
# the module bytes from NAME.vmfb itself (role module).
DATA_SOURCE_EXTENSIONS = {"asm": ".S", "c": ".c"}


def output_files(name: str, config: Config) -> dict:
    """role -> file name, manifest.json excluded."""
    files = {"api-header": f"{name}.h", "runtime-source": f"{name}.c"}
    data_ext = DATA_SOURCE_EXTENSIONS.get(config.data_format)
    if not config.execution_model.has_vm_module:
        files["constants-source"] = f"{name}_constants{data_ext}"
        if config.data_format == "asm":
            files["constants-blob"] = f"{name}_constants.bin"
        files["abi-header"] = "ireegen_executable_library.h"
        files["executables-object"] = f"{name}_executables.o"
        return files
    if config.module_format == "vmfb":
        files["module"] = f"{name}.vmfb"
        files["module-data-source"] = f"{name}_module_data{data_ext}"
    else:
        files["module-emitc"] = f"{name}_module.h"
        files["module-emitc-source"] = f"{name}_module.c"
    if config.executable_format.name == "static-library":
        files["executables-object"] = f"{name}_executables.o"
        files["executables-header"] = f"{name}_executables.h"
    return files


def c_sources(files: dict) -> list:
    """The sources to compile, C and assembler (.S, by extension), in order."""
    roles = ("runtime-source", "constants-source", "module-data-source", "module-emitc-source")
    return [files[r] for r in roles if r in files]


def asm_sources(files: dict) -> list:
    return [f for f in c_sources(files) if f.endswith(DATA_SOURCE_EXTENSIONS["asm"])]


def data_blobs(files: dict) -> list:
    """The files the assembler sources .incbin: their compile depends on
    them, and the assembler finds them on the include path."""
    if not asm_sources(files):
        return []
    return [files[r] for r in ("constants-blob", "module") if r in files]


def runtime_targets(config: Config) -> list:
    """Targets of an installed IREE runtime (find_package(IREERuntime)) that
    the generated sources need; only these, so inline builds stay small."""
    if not config.execution_model.has_vm_module:
        return []  # runtimeless: no runtime at all
    targets = ["iree_base_base", "iree_vm_vm", "iree_hal_hal", "iree_modules_hal_types"]
    if config.module_format == "vmfb":
        targets.append("iree_vm_bytecode_module")
    else:
        targets += ["iree_vm_ops", "iree_vm_ops_emitc", "iree_vm_shims_emitc"]
    em = config.execution_model.name
    if em == "async":
        targets += [
            "iree_modules_hal_hal",
            "iree_hal_drivers_local_sync_sync_driver",
            "iree_async_util_proactor_pool",
            "iree_async_async",
        ]
        if config.threads != 1:  # the task executor (docs/c-api.md#threads)
            targets += ["iree_hal_drivers_local_task_task_driver", "iree_task_task"]
    else:
        targets.append("iree_modules_hal_inline_inline")
        if em == "inline-dynamic":
            targets.append("iree_modules_hal_loader_loader")
    if em != "inline-static":
        targets.append(
            {
                "embedded-elf": "iree_hal_local_loaders_embedded_elf_loader",
                "static-library": "iree_hal_local_loaders_static_library_loader",
                "vmvx": "iree_hal_local_loaders_vmvx_module_loader",
            }[config.executable_format.name]
        )
    if config.executable_format.name == "vmvx":
        targets.append("iree_modules_vmvx_vmvx")
    return targets


def link_libraries(config: Config) -> list:
    """System libraries the generated library needs (runtimeless: the
    executables call libm; the runtime targets bring their own)."""
    return [] if config.execution_model.has_vm_module else ["m"]
