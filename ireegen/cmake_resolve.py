"""`ireegen resolve`: what the CMake function needs to know at configure
time, from the same tables emit uses.

It validates the options (so a bad combination is a configure-time error
naming the argument) and lists the outputs, C sources, runtime targets and
the files a regeneration depends on.  It never compiles anything.

The answer is data, never CMake code: `ireegenAddModel.cmake` reads it with
`file(STRINGS)` and nothing evaluates it.  The format (FORMAT, first line):

    ireegen-resolve 1
    NAME=mlp                 a value
    OUTPUTS=                 a list: KEY= starts it empty,
    OUTPUTS+=/b/out/mlp.c    and each KEY+= line adds one item

A value is printable text (UTF-8) after the first `=`; `%`, `;`, `[`, `]`
and `\\` are written as `%25`, `%3B`, `%5B`, `%5D` and `%5C` (so that no line
means anything to CMake's list splitting), and the reader decodes them.
Paths end up in CMake lists and in OUTPUT/DEPENDS, where CMake gives `;`,
`\\`, unbalanced brackets and `$<` a meaning of their own: a path with one of
those, or with a control character, is refused in one line naming it.
`${VAR}`, `$ENV{VAR}`, `"` and spaces pass through as they are.
"""

from __future__ import annotations

from pathlib import Path

from ireegen.cgen.naming import check_name
from ireegen.common.errors import UsageError
from ireegen.common.resources import package_dir, templates_dir
from ireegen.compile.compiler import find_compiler
from ireegen.compile.kernel_link import check_config
from ireegen.config.modes import Config
from ireegen.frontend.containment import shown
from ireegen.frontend.kernel_spec import load_kernel_spec
from ireegen.frontend.onnx_import import model_dependencies
from ireegen.output.layout import asm_sources, c_sources, data_blobs, link_libraries, output_files, runtime_targets
from ireegen.output.outputs import MANIFEST

FORMAT = "ireegen-resolve 1"

# Characters a value line must not show raw, and how it shows them.
_ENCODED = {"%": "%25", ";": "%3B", "[": "%5B", "]": "%5D", "\\": "%5C"}


def _encode(value: str) -> str:
    return "".join(_ENCODED.get(c, c) for c in value)


def _brackets_balance(text: str) -> bool:
    """As CMake's list splitting counts them: a `[` left open joins the next items."""
    depth = 0
    for c in text:
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
    return depth == 0


def cmake_path_problem(path: str) -> str | None:
    """Why CMake cannot carry `path` as one list item, OUTPUT or DEPENDS (None if it can)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "bytes that are not UTF-8"
    if not path.isprintable():
        return "a control character"
    for text, reason in (
        (";", "';' (CMake's list separator)"),
        ("\\", "'\\' (CMake reads it as a path separator)"),
        ("$<", "'$<' (a generator expression to CMake)"),
    ):
        if text in path:
            return reason
    if not _brackets_balance(path):
        return "an unbalanced '[' (CMake's list splitting would join it with the next item)"
    return None


def _cmake_paths(values, what: str) -> list:
    values = [str(v) for v in values]
    for v in values:
        problem = cmake_path_problem(v)
        if problem:
            raise UsageError(f"{what} {shown(v)}: CMake cannot take a path with {problem}; rename or move it")
    return values


def generator_files() -> list:
    """The files whose change means generated code may change: ireegen's own
    sources and templates."""
    files = (
        sorted(package_dir().rglob("*.py"))
        + sorted(templates_dir().glob("*.j2"))
        + sorted(templates_dir().glob("*.h"))
        + sorted(templates_dir().glob("mlir/*.jinja"))
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
        return [p.as_posix() for p in model_dependencies(src)]
    return [src.as_posix()]


def kernel_files(spec_path, config: Config) -> list:
    """--kernels SPEC (CMake KERNELS): SPEC and the files it names, checked as emit checks them."""
    if spec_path is None:
        return []
    check_config(config)
    return [p.as_posix() for p in load_kernel_spec(spec_path).files()]


def resolve(name: str, config: Config, outdir: Path, compiler_path: str | None, src=None, kernels=None) -> str:
    """The answer in FORMAT (the module docstring)."""
    check_name(name)
    if src:
        _cmake_paths([src], "SRC")
    _cmake_paths([outdir], "OUTPUT_DIR")
    outdir = Path(outdir)
    files = output_files(name, config)
    compiler = find_compiler(compiler_path)

    def paths(names):
        return _cmake_paths([(outdir / f).as_posix() for f in names], "OUTPUT_DIR")

    values = {
        "NAME": name,
        "EXECUTION_MODEL": config.execution_model.name,
        "EXECUTABLE_FORMAT": config.executable_format.name,
        "MODULE_FORMAT": config.module_format or "no VM module",
        "TARGET_TRIPLE": config.target.triple if config.target else "",
        "OUTPUTS": paths(sorted(files.values()) + [MANIFEST]),
        "SOURCES": paths(c_sources(files)),
        "DATA_FORMAT": config.data_format or "",
        "ASM_SOURCES": paths(asm_sources(files)),
        "DATA_BLOBS": paths(data_blobs(files)),
        "OBJECTS": paths([files[r] for r in ("executables-object",) if r in files]),
        "RUNTIME_TARGETS": list(runtime_targets(config)),
        "LINK_LIBRARIES": list(link_libraries(config)),
        "GENERATOR_FILES": _cmake_paths(generator_files(), "ireegen's own file"),
        "COMPILER_FILES": _cmake_paths(compiler_files(compiler.path), "the compiler's file"),
        "COMPILER_VERSION": compiler.version,
        "MODEL_FILES": _cmake_paths(model_files(src), "the model's file"),
        "KERNEL_FILES": _cmake_paths(kernel_files(kernels, config), "KERNELS file"),
    }
    lines = [FORMAT]
    for key, value in values.items():
        if isinstance(value, list):
            lines.append(f"{key}=")
            lines.extend(f"{key}+={_encode(v)}" for v in value)
        else:
            value = str(value)
            if not value.isprintable():
                raise UsageError(f"{key} {shown(value)}: a control character cannot pass to CMake")
            lines.append(f"{key}={_encode(value)}")
    return "".join(line + "\n" for line in lines)
