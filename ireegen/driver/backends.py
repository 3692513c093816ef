"""One backend per execution-model family: the VM modes (a VM module and
its C glue) and runtimeless (plain C, no runtime).  Each checks the
model's functions before the compile, renders the C after it, and builds
what verification runs."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ireegen.cgen.naming import check_library_queries
from ireegen.cgen.vm_glue import check_vm_names, header_context, write_vm_sources
from ireegen.check.runners import find_runtime_tools
from ireegen.check.subjects import module_subject, runner_subject
from ireegen.check.verify import Ran, built_runner, runnable_twin, runtimeless_twin
from ireegen.common.errors import UsageError
from ireegen.common.progress import progress
from ireegen.common.untrusted import tool_deadline
from ireegen.compile.compile_model import CompiledModule, compile_model
from ireegen.config.modes import Config
from ireegen.frontend.models import LoadedModel
from ireegen.output.layout import link_libraries, output_files
from ireegen.output.outputs import MANIFEST, manifest_text
from ireegen.runtimeless.lower import check_functions, write_sources

from .request import EmitRequest


@dataclass(frozen=True)
class Rendered:
    """What rendering the C adds to the manifest."""

    files: dict  # role -> file name (output/layout.py)
    dependencies: list  # the VM modules the program imports
    library_queries: list  # the static library's query functions
    manifest: dict = field(default_factory=dict)  # the backend's own manifest sections


@dataclass(frozen=True)
class Built:
    """An emitted output in its staging directory, before verification."""

    request: EmitRequest  # checked
    model: LoadedModel
    compiled: CompiledModule
    staging: Path
    manifest: dict


# emit_twin(config, outdir): the same model emitted, unverified, for `config`.
EmitTwin = Callable[[Config, Path], None]


@dataclass(frozen=True)
class Backend:
    check: Callable  # (request, functions, module name) -> None; refuses before the compile
    render: Callable  # (request, functions, module name, compiled, staging) -> Rendered
    subject: Callable  # (Built, workdir, EmitTwin) -> Ran


def module_dependencies(module_path: Path, module_format: str) -> list:
    """The VM modules the compiled program imports (hal, hal_inline, vmvx ...),
    as iree-compile's EmitC C or iree-dump-module lists them."""
    if module_format == "emitc":
        text = module_path.read_text()
        m = re.search(r"_dependencies_\[\] = \{(.*?)\};", text)
        return re.findall(r'\{"(\w+)", \d+\}', m.group(1)) if m else []
    tool = find_runtime_tools().dump_module
    out = subprocess.run(
        [str(tool), "--output=metadata", str(module_path)],
        stdout=subprocess.PIPE,
        text=True,
        errors="replace",
        check=True,
        timeout=tool_deadline(),
    ).stdout
    section = out.split("Module Dependencies:", 1)[1].split("\n\n", 1)[0] if "Module Dependencies:" in out else ""
    return re.findall(r"^\s+(\w+), version", section, re.M)


def _library_queries(header: Path) -> list:
    # Every declaration in iree-compile's static library header, identifier or not: emit checks them.
    return re.findall(r"^([^\s/#].*?_library_query)\(", header.read_text(), re.M)


def _vm_check(request: EmitRequest, functions, module_name: str) -> None:
    check_vm_names(request.name, request.model_path, request.config, functions, module_name)


def _vm_render(request: EmitRequest, functions, module_name: str, compiled: CompiledModule, staging: Path) -> Rendered:
    name, config, model_path = request.name, request.config, request.model_path
    files = output_files(name, config)
    module_file = compiled.module_file
    static_object = files.get("executables-object")
    library_queries = _library_queries(staging / files["executables-header"]) if static_object else []
    check_library_queries(name, library_queries, str(model_path))
    dependencies = module_dependencies(staging / module_file, config.module_format)
    write_vm_sources(
        staging, name, model_path, config, files, functions, module_name, dependencies, library_queries, module_file
    )
    return Rendered(files, dependencies, library_queries)


def _vm_subject(built: Built, workdir: Path, emit_twin: EmitTwin) -> Ran:
    """The emitted module when it runs here, else its runnable twin compiled into `workdir`."""
    request = built.request
    config = request.config
    twin, reasons = runnable_twin(config)
    module = built.staging / built.compiled.module_file
    if twin != config:
        compiled = compile_model(
            built.model,
            request.name,
            twin,
            request.compile_flags,
            request.compiler,
            workdir,
            request.apply_workarounds,
            request.kernels,
        )
        module = workdir / compiled.module_file
    # On the device the glue creates by default: the task executor's workers
    # when --threads is not 1, so the threaded build is what is verified.
    return Ran(module_subject(config.execution_model.name, module, None, config.threads), twin, reasons)


def _runtimeless_check(request: EmitRequest, functions, module_name: str) -> None:
    check_functions(functions, str(request.model_path))


def _runtimeless_render(
    request: EmitRequest, functions, module_name: str, compiled: CompiledModule, staging: Path
) -> Rendered:
    name, config, model_path = request.name, request.config, request.model_path
    files = output_files(name, config)
    context = dict(header_context(name, model_path, config), source=model_path.name)
    section = write_sources(
        staging,
        name,
        files,
        functions,
        staging / compiled.module_file,
        context,
        link_libraries(config),
        config.data_format,
        compiled.lower_bounds,
        compiled.binding_access,
    )
    library_queries = section["abi"]["library_queries"]
    check_library_queries(name, library_queries, str(model_path))
    return Rendered(files, [], library_queries, {"runtimeless": section})


def _runtimeless_subject(built: Built, workdir: Path, emit_twin: EmitTwin) -> Ran:
    """The emitted C built into a runner (under the target's emulator), or,
    when the target's programs cannot run here, the twin emitted for this machine."""
    config = built.request.config
    (built.staging / MANIFEST).write_text(manifest_text(built.manifest))
    label = config.execution_model.name
    build = built.request.runner_dir or workdir / "build"
    progress("verifying", "building the emitted C into a runner")
    try:
        return Ran(runner_subject(label, built_runner(built.staging, build)), config, [])
    except UsageError as e:  # no cross compiler or emulator for the target here
        twin, reasons = runtimeless_twin(config, e)
    emit_twin(twin, workdir / "twin")
    return Ran(runner_subject(label, built_runner(workdir / "twin", workdir / "twin-build")), twin, reasons)


VM = Backend(_vm_check, _vm_render, _vm_subject)
RUNTIMELESS = Backend(_runtimeless_check, _runtimeless_render, _runtimeless_subject)
# Keyed by ExecutionModel.has_vm_module.
BACKENDS = {True: VM, False: RUNTIMELESS}


def backend_for(config: Config) -> Backend:
    return BACKENDS[config.execution_model.has_vm_module]
