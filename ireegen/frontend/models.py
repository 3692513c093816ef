"""Loading a model file into MLIR and reading its exported signature.

This is the one place that knows model file formats: MLIR text (`.mlir`),
MLIR bytecode (`.mlirbc`), ONNX (`.onnx`, imported and lowered to the
input dialect by onnx_import.py) and TFLite (`.tflite`, translated to ONNX
by tflite_import.py, then lowered as ONNX).  Every format gives the same `LoadedModel`.

Names: an ONNX model's values keep their ONNX names; an MLIR function's
arguments and results take their `iree.abi.name` attribute where they have
one; anything else is input<i>/output<i>.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ireegen.common.errors import DiagnosticsError, UsageError

from .import_options import DEFAULT, ImportOptions
from .mlir_text import mlir_escaped
from .onnx_import import ImportFailure, lower_onnx
from .parse_guard import check_parses
from .signature import Function, function_from_types, with_source_types

SUPPORTED_SUFFIXES = (".mlir", ".mlirbc", ".onnx", ".tflite")

# The argument/result attribute that names a value in the C API.
NAME_ATTR = "iree.abi.name"


@dataclass
class LoadedModel:
    path: Path
    context: object  # iree.compiler.ir.Context
    module: object  # iree.compiler.ir.Module
    functions: tuple  # of signature.Function
    onnx_rewrites: tuple = ()  # of {"rewrite", "nodes"}: graph rewrites around IREE bugs (onnx_rewrites.py)
    bounded: tuple = ()  # of onnx_detections.BoundedOutput: outputs bounded by --max-detections or the model

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


def normalize_locations(ir_text: str, read_as: str, file_name: str) -> str:
    """Replaces the path the model was parsed from by its file name in every
    location of printed IR."""
    if read_as == file_name:
        return ir_text
    return ir_text.replace(f'loc("{mlir_escaped(read_as)}"', f'loc("{mlir_escaped(file_name)}"')


def check_model_path(path) -> Path:
    path = Path(path)
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        # Bytes that are not UTF-8 (Python keeps them as lone surrogates):
        # IREE takes paths as UTF-8, and no message could print the name.
        shown = str(path).encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
        raise UsageError(f"{shown}: the model's path is not valid UTF-8; rename the file") from None
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


def load_model(path, compiler=None, options: ImportOptions = DEFAULT) -> LoadedModel:
    """Parses (for ONNX: imports and lowers) the model and reads its public
    functions.  Parse errors become a UsageError carrying MLIR's own
    file:line diagnostics.  `compiler` (a compile.compiler.Compiler) lowers
    ONNX; an ONNX model needs one.  `options` (import_options.ImportOptions)
    are what ireegen does to an ONNX or TFLite model before IREE sees it;
    an MLIR model refuses those that need an ONNX graph."""
    path = check_model_path(path)
    size = path.stat().st_size
    if size == 0 or (size < 4096 and not path.read_bytes().strip()):
        raise UsageError(f"{path}: the model file is empty")
    if path.suffix == ".tflite":
        for flag, given in (
            ("--quantized-io", options.quantized_io),
            ("--input-shape", options.input_shapes),
            ("--input-value", options.input_values),
            ("--max-detections", options.max_detections),
        ):
            if given:
                raise UsageError(f"{flag}: applies to .onnx models; {path} is TFLite, whose interface is its own")
    if path.suffix in (".onnx", ".tflite"):
        return _load_onnx(path, compiler, options)
    if options.max_detections is not None:
        raise UsageError(f"--max-detections: applies to .onnx models; {path} is MLIR, whose shapes are its own")
    if options.quantized_io:
        raise UsageError(f"--quantized-io: applies to QDQ .onnx models; {path} is MLIR, whose types are its own")
    if options.input_shapes:
        raise UsageError(f"--input-shape: applies to .onnx models; {path} is MLIR, whose shapes are its own")
    if options.input_values:
        raise UsageError(
            f"--input-value: applies to .onnx models; {path} is MLIR: make the value a constant in the function"
        )
    check_parses(path)
    from iree.compiler import ir

    context = ir.Context()
    try:
        # parseFile keeps file:line:col locations for text and bytecode alike.
        module = ir.Module.parseFile(str(path), context)
    except ir.MLIRError as e:
        raise DiagnosticsError(f"{path}: malformed MLIR:", [_format_mlir_error(e)]) from None
    check_function_names(module, path)
    functions = read_functions(module, path)
    if not functions:
        raise UsageError(f"{path}: the module exports no public function")
    return LoadedModel(path, context, module, functions)


def _load_onnx(path: Path, compiler, options: ImportOptions) -> LoadedModel:
    from iree.compiler import ir

    if compiler is None:
        raise TypeError("load_model: an ONNX model needs the compiler that lowers it")
    text, onnx_sig = lower_onnx(path, compiler, options)
    context = ir.Context()
    try:
        module = ir.Module.parse(text, context)
    except ir.MLIRError as e:  # the lowering's own output: not the user's fault
        raise ImportFailure(
            f"{path}: IREE's ONNX lowering wrote MLIR it cannot read back:\n{_format_mlir_error(e)}"
        ) from None
    check_function_names(module, path, "the ONNX graph's name")
    functions = []
    for f in read_functions(module, path):
        if (
            f.name == onnx_sig.function
            and len(f.inputs) == len(onnx_sig.inputs)
            and len(f.outputs) == len(onnx_sig.outputs)
        ):
            f = Function(
                f.name,
                tuple(with_source_types(v, s.name, s.dtype, s.quantization) for v, s in zip(f.inputs, onnx_sig.inputs)),
                tuple(
                    with_source_types(v, s.name, s.dtype, s.quantization) for v, s in zip(f.outputs, onnx_sig.outputs)
                ),
            )
        functions.append(f)
    if not functions:
        raise UsageError(f"{path}: the ONNX graph became no public function")
    return LoadedModel(path, context, module, tuple(functions), onnx_sig.rewrites, onnx_sig.bounded)


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


# Bytes a function's name may have: IREE names executables and their
# temporary files after it (`<function>_dispatch_0...`), and a file name
# over 255 bytes makes iree-compile fail or crash ("File name too long").
MAX_SYMBOL_BYTES = 128
# What IREE's flag parser trims from a value: iree-run-module (verification,
# parity) cannot call a function whose name starts or ends with one.
_FLAG_TRIMMED = " \t\n\v\f\r"


def check_function_names(module, path, what: str = "") -> None:
    """Refuses a function whose name IREE's tools cannot take: too long
    for the files named after it, or with whitespace at either end."""
    for op in module.body.operations:
        if op.operation.name not in ("func.func", "util.func") or "sym_name" not in op.operation.attributes:
            continue
        name = _text(op.operation.attributes["sym_name"])
        size = len(name.encode("utf-8", "surrogatepass"))
        shown = f"@{name[:24]!r}{'...' if len(name) > 24 else ''}"
        whose = f"{what} (function {shown})" if what else f"function {shown}"
        if size > MAX_SYMBOL_BYTES:
            raise UsageError(
                f"{path}: {whose} is {size:,} bytes long; ireegen takes names of at most {MAX_SYMBOL_BYTES} bytes "
                "(IREE names files after them): rename it"
            )
        if name != name.strip(_FLAG_TRIMMED):
            raise UsageError(
                f"{path}: {whose} starts or ends with whitespace, which IREE's tools trim from a function name "
                "(they could not call it): rename it"
            )


def read_functions(module, path) -> tuple:
    """The public functions of a module (func.func and util.func), in order."""
    functions = []
    for op in module.body.operations:
        kind = op.operation.name
        if kind not in ("func.func", "util.func"):
            continue
        attrs = op.operation.attributes
        visibility = _text(attrs["sym_visibility"]) if "sym_visibility" in attrs else "public"
        if visibility != "public":
            continue
        # Declarations (external functions) are imports, not exports.
        if len(op.operation.regions) == 0 or len(op.operation.regions[0].blocks) == 0:
            continue
        name = _text(attrs["sym_name"])
        ftype = attrs["function_type"]
        ftype = ftype.value if hasattr(ftype, "value") else ftype
        functions.append(
            function_from_types(
                name,
                ftype.inputs,
                ftype.results,
                str(path),
                _value_names(attrs, "arg_attrs"),
                _value_names(attrs, "res_attrs"),
            )
        )
    return tuple(functions)


def _text(attr) -> str:
    """A string attribute's text as the model wrote it (`say "hi"`), not as
    MLIR prints it (`"say \\22hi\\22"`)."""
    value = getattr(attr, "value", None)
    return value if isinstance(value, str) else str(attr).strip('"')


def _value_names(attrs, key) -> list:
    """The `iree.abi.name` of each argument (arg_attrs) or result (res_attrs); None where unnamed."""
    if key not in attrs:
        return []
    names = []
    for d in attrs[key]:
        try:
            names.append(_text(d[NAME_ATTR]) if NAME_ATTR in d else None)
        except (TypeError, KeyError, ValueError):
            names.append(None)
    return names
