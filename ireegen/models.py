"""Loading a model file into MLIR and reading its exported signature.

This is the one place that knows model file formats.  Today: MLIR text
(`.mlir`) and MLIR bytecode (`.mlirbc`); ONNX and PyTorch importers will add
a loader here that produces the same `LoadedModel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .parse_guard import check_parses
from .signature import Function, function_from_types

SUPPORTED_SUFFIXES = (".mlir", ".mlirbc")


@dataclass
class LoadedModel:
    path: Path
    context: object  # iree.compiler.ir.Context
    module: object  # iree.compiler.ir.Module
    functions: tuple  # of signature.Function

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise UsageError(
            f"{self.path}: no exported function @{name} (exported: {', '.join(f.name for f in self.functions)})"
        )

    def set_module_name(self, name: str) -> None:
        """Names the VM module; the compiler derives C symbols of EmitC and
        static-library outputs from it."""
        from iree.compiler import ir

        with self.context:
            self.module.operation.attributes["sym_name"] = ir.StringAttr.get(name)

    def write(self, path: Path) -> None:
        """Writes the (possibly rewritten) module as MLIR text with the original
        file locations, so compiler diagnostics still name the model.  Text,
        not bytecode: the bindings' bytecode writer drops dense_resource blobs.
        Locations name the model by its file name only, not by the path it
        was read from: the compiled module's bytes (debug info, error strings)
        must not depend on where the checkout lives."""
        import io

        text = io.StringIO()
        self.module.operation.print(file=text, enable_debug_info=True, large_elements_limit=None)
        with open(path, "w") as f:
            f.write(normalize_locations(text.getvalue(), str(self.path), self.path.name))


def _mlir_escaped(text: str) -> str:
    """A string as MLIR's printer writes it (llvm::printEscapedString)."""
    out = []
    for b in text.encode():
        c = chr(b)
        if c == "\\":
            out.append("\\\\")
        elif 0x20 <= b < 0x7F and c != '"':
            out.append(c)
        else:
            out.append("\\%02X" % b)
    return "".join(out)


def normalize_locations(ir_text: str, read_as: str, file_name: str) -> str:
    """Replaces the path the model was parsed from by its file name in every
    location of printed IR."""
    if read_as == file_name:
        return ir_text
    return ir_text.replace(f'loc("{_mlir_escaped(read_as)}"', f'loc("{_mlir_escaped(file_name)}"')


def check_model_path(path) -> Path:
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path}: no such model file")
    if not path.is_file():
        raise UsageError(f"{path}: is not a file")
    if path.suffix not in SUPPORTED_SUFFIXES:
        raise UsageError(
            f"{path}: unsupported model format {path.suffix or '(no suffix)'}; "
            f"expected one of {', '.join(SUPPORTED_SUFFIXES)}"
        )
    return path


def load_model(path) -> LoadedModel:
    """Parses the model and reads its public functions.  Parse errors become a
    UsageError carrying MLIR's own file:line diagnostics."""
    path = check_model_path(path)
    size = path.stat().st_size
    if size == 0 or (size < 4096 and not path.read_bytes().strip()):
        raise UsageError(f"{path}: the model file is empty")
    check_parses(path)
    from iree.compiler import ir

    context = ir.Context()
    try:
        # parseFile keeps file:line:col locations for text and bytecode alike.
        module = ir.Module.parseFile(str(path), context)
    except ir.MLIRError as e:
        raise UsageError(f"{path}: malformed MLIR:\n{_format_mlir_error(e)}") from None
    functions = read_functions(module, path)
    if not functions:
        raise UsageError(f"{path}: the module exports no public function")
    return LoadedModel(path, context, module, functions)


def _format_mlir_error(e) -> str:
    lines = []
    for d in getattr(e, "error_diagnostics", []) or []:
        lines.append(f"  {_format_location(d.location)}: error: {d.message}")
        for n in d.notes:
            lines.append(f"    {_format_location(n.location)}: note: {n.message}")
    return "\n".join(lines) or f"  {e}"


def _format_location(loc) -> str:
    text = str(loc)
    # loc("file.mlir":2:23) -> file.mlir:2:23, the form editors and compilers use.
    if text.startswith('loc("') and text.endswith(")"):
        file, _, rest = text[5:-1].partition('"')
        return file + rest
    return text


def read_functions(module, path) -> tuple:
    """The public functions of a module (func.func and util.func), in order."""
    functions = []
    for op in module.body.operations:
        kind = op.operation.name
        if kind not in ("func.func", "util.func"):
            continue
        attrs = op.operation.attributes
        visibility = str(attrs["sym_visibility"]).strip('"') if "sym_visibility" in attrs else "public"
        if visibility != "public":
            continue
        # Declarations (external functions) are imports, not exports.
        if len(op.operation.regions) == 0 or len(op.operation.regions[0].blocks) == 0:
            continue
        name = str(attrs["sym_name"]).strip('"')
        ftype = attrs["function_type"]
        ftype = ftype.value if hasattr(ftype, "value") else ftype
        functions.append(function_from_types(name, ftype.inputs, ftype.results, str(path)))
    return tuple(functions)
