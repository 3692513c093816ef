"""`ireegen resolve`: what the CMake function needs to know at configure
time, from the same tables emit uses, printed as CMake `set()` commands.

It validates the options (so a bad combination is a configure-time error
naming the argument) and lists the outputs, C sources, runtime targets and
the files a regeneration depends on.  It never compiles anything.
"""

from __future__ import annotations

from pathlib import Path

from ireegen.cgen.naming import check_name
from ireegen.common.resources import package_dir, templates_dir
from ireegen.compile.compiler import find_compiler
from ireegen.config.modes import Config
from ireegen.output.layout import asm_sources, c_sources, data_blobs, link_libraries, output_files, runtime_targets
from ireegen.output.outputs import MANIFEST


def _cmake_list(values) -> str:
    for v in values:
        if ";" in str(v) or '"' in str(v):
            raise ValueError(f'path with ; or " cannot pass through CMake: {v}')
    return ";".join(str(v) for v in values)


def generator_files() -> list:
    """The files whose change means generated code may change: ireegen's own
    sources and templates."""
    files = (
        sorted(package_dir().rglob("*.py")) + sorted(templates_dir().glob("*.j2")) + sorted(templates_dir().glob("*.h"))
    )
    return [p.as_posix() for p in files]


def compiler_files(compiler_path: str) -> list:
    """Files that change when the IREE compiler is upgraded."""
    path = Path(compiler_path).resolve()
    files = [path]
    lib = path.parent / "libIREECompiler.so"
    if lib.exists():
        files.append(lib)
    return [p.as_posix() for p in files]


def model_files(src) -> list:
    """The files a model is read from: the model, and an ONNX model's external data."""
    if not src:
        return []
    src = Path(src)
    if src.suffix == ".onnx":
        from ireegen.frontend.onnx_import import model_dependencies

        return [p.as_posix() for p in model_dependencies(src)]
    return [src.as_posix()]


def resolve(name: str, config: Config, outdir: Path, compiler_path: str | None, src=None) -> str:
    check_name(name)
    outdir = Path(outdir)
    files = output_files(name, config)
    compiler = find_compiler(compiler_path)
    values = {
        "NAME": name,
        "EXECUTION_MODEL": config.execution_model.name,
        "EXECUTABLE_FORMAT": config.executable_format.name,
        "MODULE_FORMAT": config.module_format or "no VM module",
        "TARGET_TRIPLE": config.target.triple if config.target else "",
        "OUTPUTS": _cmake_list(
            [(outdir / f).as_posix() for f in sorted(files.values())] + [(outdir / MANIFEST).as_posix()]
        ),
        "SOURCES": _cmake_list([(outdir / f).as_posix() for f in c_sources(files)]),
        "DATA_FORMAT": config.data_format or "",
        "ASM_SOURCES": _cmake_list([(outdir / f).as_posix() for f in asm_sources(files)]),
        "DATA_BLOBS": _cmake_list([(outdir / f).as_posix() for f in data_blobs(files)]),
        "OBJECTS": _cmake_list([(outdir / files[r]).as_posix() for r in ("executables-object",) if r in files]),
        "RUNTIME_TARGETS": _cmake_list(runtime_targets(config)),
        "LINK_LIBRARIES": _cmake_list(link_libraries(config)),
        "GENERATOR_FILES": _cmake_list(generator_files()),
        "COMPILER_FILES": _cmake_list(compiler_files(compiler.path)),
        "COMPILER_VERSION": compiler.version,
        "MODEL_FILES": _cmake_list(model_files(src)),
    }
    return "".join(f'set(_IREEGEN_{k} "{v}")\n' for k, v in values.items())
