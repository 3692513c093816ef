"""Command line: `python -m ireegen {emit,info,parity,run,size,resolve} ...`, `--cmake-dir`, `--bazel-dir`,
`--version`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ireegen import __version__
from ireegen.common.errors import IreegenError, UsageError, disk_full, message_lines, printable
from ireegen.config.modes import DATA_FORMATS, EXECUTABLE_FORMATS, EXECUTION_MODELS, MODULE_FORMATS


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # exit status 2 with a one-line reason, as argparse does
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_mode_args(p) -> None:
    p.add_argument(
        "--execution-model",
        default="async",
        help=f"one of {', '.join(EXECUTION_MODELS)} (default async, IREE's async-internal)",
    )
    p.add_argument(
        "--executable-format",
        default=None,
        help=f"one of {', '.join(EXECUTABLE_FORMATS)} (default embedded-elf; vmvx for inline-static, "
        "static-library for runtimeless)",
    )
    p.add_argument(
        "--module-format", default=None, help=f"one of {', '.join(MODULE_FORMATS)} (default vmfb; runtimeless has none)"
    )
    p.add_argument(
        "--data-format",
        default=None,
        help=f"one of {', '.join(DATA_FORMATS)}: how the runtimeless constants and the vmfb module "
        "bytes are written; asm (default) is a .S that .incbin's a binary file beside it and needs a "
        "GNU-style assembler (gcc, clang); c is a C array for any compiler (default for *-msvc triples)",
    )
    p.add_argument("--target-triple", help="LLVM target triple of the executables (default: the host's)")
    p.add_argument(
        "--target-cpu",
        help="target CPU (default on x86_64: x86-64-v3, AVX2 and FMA; 'generic' for any CPU of the triple; "
        "'host' for this machine)",
    )
    p.add_argument("--target-cpu-features", help="target CPU features, e.g. +avx2 (default none)")
    p.add_argument(
        "--optimize-for",
        default="speed",
        choices=("speed", "size"),
        help="size: smaller kernels, more instructions (one 32-bit lane per vector); default speed",
    )
    p.add_argument(
        "--tune",
        metavar="LEVEL",
        help="off, quick or full: with --optimize-for speed, try IREE configurations on the model "
        "(im2col, channels-last, data tiling), verify and time each, keep the fastest "
        "(default quick, or $IREEGEN_TUNE; docs/tuning.md)",
    )
    p.add_argument(
        "--iree-flag",
        action="append",
        default=[],
        metavar="FLAG",
        help="pass FLAG to iree-compile (repeatable), e.g. --iree-flag=--iree-opt-level=O3 "
        "or --iree-flag --iree-opt-level=O3",
    )
    p.add_argument("--iree-compile", help="path of another iree-compile (default: the installed package's)")


def _add_threads_arg(p) -> None:
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="async: the generated create's default worker count, which NAME_options_t overrides at run time: "
        "1 runs dispatches on the calling thread (local-sync), N > 1 on N threads of IREE's task executor, "
        "0 on one per core (default 1; docs/c-api.md)",
    )


def _add_input_shape_arg(p) -> None:
    p.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="NAME=DIMS",
        help="pin the symbolic dimensions of ONNX input NAME, e.g. image=1x1x28x28 (repeatable)",
    )
    p.add_argument(
        "--input-value",
        action="append",
        default=[],
        metavar="NAME=V[,V...]",
        help="make ONNX input NAME a constant with these values, e.g. sr=16000; it leaves the C API (repeatable)",
    )


def _add_kernels_arg(p) -> None:
    p.add_argument(
        "--kernels",
        type=Path,
        metavar="SPEC",
        help="link your own C kernels into the executables: SPEC is a JSON file naming the C sources, "
        "the transform-dialect match spec and C flags per target (docs/kernels.md)",
    )


def _add_cache_args(p) -> None:
    p.add_argument(
        "--cache",
        metavar="URL",
        help="shared output cache, Bazel's HTTP remote-cache layout (default: $IREEGEN_CACHE; docs/cache.md)",
    )
    p.add_argument(
        "--cache-mode",
        choices=("readwrite", "read"),
        help="read: use the cache but never upload, for CI consumers (default: $IREEGEN_CACHE_MODE or readwrite)",
    )
    p.add_argument(
        "--cache-key-file",
        metavar="FILE",
        help="the cache's HMAC key: uploads are signed, and a signed hit is installed without a rebuild "
        "(default: $IREEGEN_CACHE_KEY_FILE, or the key itself in $IREEGEN_CACHE_KEY; docs/cache.md)",
    )
    p.add_argument(
        "--cache-recheck",
        action="store_true",
        help="rebuild every hit here and install it only when the bytes are the same, signed or not "
        "(default: $IREEGEN_CACHE_RECHECK=1; a hit that is not signed is always rebuilt)",
    )
    p.add_argument(
        "--cache-timeout",
        type=float,
        metavar="SECONDS",
        help="total deadline of one cache request, connect to last byte (default: $IREEGEN_CACHE_TIMEOUT or 30)",
    )
    p.add_argument(
        "--cache-max-bytes",
        type=int,
        metavar="N",
        help="the most bytes one cache entry's files may take together (default: $IREEGEN_CACHE_MAX_BYTES or 2^30)",
    )


def _cache_from_args(args):
    import os

    from_env = args.cache is None
    url = os.environ.get("IREEGEN_CACHE", "") if from_env else args.cache
    if not url:
        return None  # --cache '' turns the cache off
    from ireegen.output.cache import DEADLINE_SECONDS, MAX_BYTES, Cache, key_from

    mode = args.cache_mode or os.environ.get("IREEGEN_CACHE_MODE") or "readwrite"
    key_file, key_origin = args.cache_key_file, "--cache-key-file"
    if key_file is None:
        key_file, key_origin = os.environ.get("IREEGEN_CACHE_KEY_FILE"), "IREEGEN_CACHE_KEY_FILE"
    recheck = args.cache_recheck or _env_flag("IREEGEN_CACHE_RECHECK")
    return Cache(
        url,
        mode,
        deadline=_cache_number(args.cache_timeout, "--cache-timeout", "IREEGEN_CACHE_TIMEOUT", float, DEADLINE_SECONDS),
        max_bytes=_cache_number(args.cache_max_bytes, "--cache-max-bytes", "IREEGEN_CACHE_MAX_BYTES", int, MAX_BYTES),
        key=key_from(key_origin, key_file, "IREEGEN_CACHE_KEY", os.environ.get("IREEGEN_CACHE_KEY")),
        recheck=recheck,
        url_origin="IREEGEN_CACHE" if from_env else "--cache",
        mode_origin="--cache-mode" if args.cache_mode else "IREEGEN_CACHE_MODE",
    )


def _env_flag(variable: str) -> bool:
    import os

    value = os.environ.get(variable, "")
    if value not in ("", "0", "1"):
        raise UsageError(f"{variable} {printable(value)}: expected 1 or 0")
    return value == "1"


def _cache_number(value, option: str, variable: str, kind, default):
    """A positive limit of the cache from `option`, else `variable`, else `default`."""
    import math
    import os

    origin = option
    if value is None:
        text = os.environ.get(variable)
        if not text:
            return default
        origin = variable
        try:
            value = kind(text)
        except ValueError:
            raise UsageError(f"{variable} {printable(text)}: expected a positive number") from None
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{origin} {value}: expected a positive number")
    return value


def _input_shapes(args) -> dict:
    from ireegen.frontend.onnx_import import parse_input_shapes

    return parse_input_shapes(getattr(args, "input_shape", None))


def _input_values(args) -> dict:
    from ireegen.frontend.onnx_import import parse_input_values

    return parse_input_values(getattr(args, "input_value", None))


_EXIT_CODES_PARITY = """exit status:
  0  every execution model matches async within the tolerances
  1  a mismatch, or a mode failed to compile or run (the table says which)
  2  bad arguments or model (a one-line message)"""

_EXIT_CODES_RUN = """exit status:
  0  the call succeeded; results printed or written
  1  the runner failed to build or the call returned an error
  2  bad arguments, directory or inputs (a one-line message)"""


def join_separated_values(argv: list, options=("--iree-flag",)) -> list:
    """`--iree-flag --x=y` (the value is itself a flag, which argparse would
    take for an option of ireegen's) becomes `--iree-flag=--x=y`."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in options and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ireegen", description="Generate C libraries from IREE models.")
    parser.add_argument("--version", action="version", version=f"ireegen {__version__}")
    parser.add_argument("--cmake-dir", action="store_true", help="print the folder of ireegenConfig.cmake and exit")
    parser.add_argument(
        "--bazel-dir", action="store_true", help="print the Bazel repository with ireegen_model() and exit"
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    emit = sub.add_parser("emit", help="compile a model and write its C library")
    emit.add_argument("model", help="the model: .mlir, .mlirbc, .onnx or .tflite")
    emit.add_argument("-o", "--output-dir", required=True, help="directory to write (created if needed)")
    emit.add_argument("--name", help="C prefix of every symbol (default: from the model's file name)")
    _add_input_shape_arg(emit)
    _add_mode_args(emit)
    _add_threads_arg(emit)
    emit.add_argument(
        "--no-verify",
        action="store_true",
        help="do not run the emitted code against async before writing it (default: verify, and "
        "refuse with exit status 1 if any output differs)",
    )
    emit.add_argument(
        "--verify-strict",
        action="store_true",
        help="refuse (exit status 1) when a function's outputs never moved across the inputs tried, "
        "so that verification proved nothing about it (default: a warning, and the summary says "
        "'not exercised')",
    )
    emit.add_argument(
        "--no-workarounds",
        action="store_true",
        help="compile exactly as iree-compile would, without ireegen's workarounds for IREE bugs "
        "(to reproduce a bug; verification still checks the result)",
    )
    emit.add_argument(
        "--verify-inputs",
        type=Path,
        metavar="X.npz",
        help="verify on these inputs instead of drawn ones (arrays named <input> or "
        "<function>.<input>): for models that only accept some input values, such as sizes or "
        "scales",
    )
    emit.add_argument(
        "--verify-seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the verification's generated inputs (default: %(default)s)",
    )
    emit.add_argument(
        "--verify-rtol",
        type=float,
        default=1e-4,
        metavar="R",
        help="relative tolerance of the verification (default: %(default)s)",
    )
    emit.add_argument(
        "--verify-atol",
        type=float,
        default=1e-5,
        metavar="A",
        help="absolute tolerance of the verification, relative to each output's largest magnitude "
        "(default: %(default)s)",
    )
    _add_kernels_arg(emit)
    emit.add_argument(
        "--quantized-io",
        action="store_true",
        help="QDQ ONNX models: take and return the int8 tensors of the model's first QuantizeLinear and "
        "last DequantizeLinear, their scale and zero point in the header, as TFLite Micro's models do "
        "(docs/kernels-int8.md)",
    )
    emit.add_argument(
        "--max-detections",
        metavar="N",
        help="detectors: bound the selected indices of the model's NonMaxSuppression to N rows, the valid "
        "count in an extra output <name>_count, the other rows zero (docs/detectors.md); "
        "default: the most the model can select",
    )
    emit.add_argument(
        "--no-builtin-kernels",
        action="store_true",
        help="do not link ireegen's own int8 kernels, which are on by default for QDQ int8 ONNX models "
        "on a Cortex-M or bare-metal RV32 (docs/kernels-int8.md)",
    )
    _add_cache_args(emit)

    resolve = sub.add_parser(
        "resolve", help="(for ireegen's CMake functions) validate options, print what CMake needs (data, not code)"
    )
    resolve.add_argument("--name", required=True)
    resolve.add_argument("-o", "--output-dir", required=True)
    resolve.add_argument("--src", help="the model, to list the files it reads (an ONNX model's external data)")
    _add_input_shape_arg(resolve)
    _add_mode_args(resolve)
    _add_threads_arg(resolve)
    _add_kernels_arg(resolve)

    par = sub.add_parser(
        "parity",
        help="check that the execution models give the same answers as async",
        description="Compiles MODEL in several execution models, runs each on the same inputs and compares "
        "every output with async. Exit status: 0 every mode agrees; 1 a mode computes different numbers, "
        "fails at run time, or ireegen itself failed for it; 2 a usage error, or a mode that does not "
        "compile or is refused (the other modes still run).",
    )
    par.add_argument("model", help="the model: .mlir, .mlirbc, .onnx or .tflite")
    par.add_argument(
        "--execution-models",
        default="async,inline-static,inline-dynamic",
        help="comma-separated, from async, inline-static, inline-dynamic, runtimeless "
        "(default: the first three; async is always the reference)",
    )
    par.add_argument("--function", help="only this function (default: every exported function)")
    par.add_argument(
        "--inputs",
        metavar="X.npz",
        help="inputs as an .npz with arrays named <function>.<input> (or <input>, or input<i>, "
        "when the model has one function; names as `ireegen info` shows them); every key must "
        "match and every input be there. Default: seeded random inputs, redrawn until async's "
        "outputs are not degenerate",
    )
    par.add_argument(
        "--expected",
        metavar="REF.npz",
        help="reference outputs, <function>.<output> (or <output>): every mode, async included, "
        "is also compared with them",
    )
    par.add_argument(
        "--save-outputs",
        metavar="DIR",
        help="write every mode's outputs as DIR/<mode>/<function>.<output>.npy (and the inputs used as DIR/inputs/...)",
    )
    par.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance (default: %(default)s)")
    par.add_argument("--atol", type=float, default=1e-6, help="absolute tolerance (default: %(default)s)")
    par.add_argument("--seed", type=int, default=0, help="seed of the generated inputs (default: %(default)s)")
    par.add_argument(
        "--reference",
        default="async",
        choices=("async", "onnxruntime"),
        help="what every mode is also compared with: async (default), or ONNX Runtime for an .onnx model",
    )
    _add_input_shape_arg(par)
    _add_kernels_arg(par)
    par.add_argument("--json", metavar="REPORT", help="also write the report as JSON")
    par.add_argument("--iree-flag", action="append", default=[], metavar="FLAG", help="pass FLAG to iree-compile")
    par.add_argument("--iree-compile", help="iree-compile of the IREE release to check (default: installed)")
    par.add_argument("--iree-runtime-bin", help="directory with that release's iree-run-module")
    par.add_argument("--iree-venv", help="a virtual environment with that release's iree-base-compiler/runtime")
    par.add_argument(
        "--no-workarounds",
        action="store_true",
        help="compile exactly as iree-compile would, without ireegen's workarounds and refusals",
    )
    par.add_argument(
        "--target-triple",
        help="runtimeless only: build and run its C for this triple "
        "(e.g. thumbv7em-none-eabihf, run under qemu-system-arm); the other modes run on the host",
    )
    par.add_argument("--target-cpu", help="runtimeless only: target CPU (e.g. cortex-m55)")
    par.add_argument("--emulator", help="runtimeless only: command that runs target programs")

    run = sub.add_parser(
        "run",
        help="build an emitted runtimeless directory for its target and call a function",
        epilog=_EXIT_CODES_RUN,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("outdir", help="a directory written by `emit --execution-model runtimeless`")
    run.add_argument("--function", required=True, help="the exported function to call (see `ireegen info OUTDIR`)")
    run.add_argument(
        "--input",
        action="append",
        default=[],
        help="@x.npy, or a number for a scalar, in order; or NAME=@x.npy with the input's name (repeatable)",
    )
    run.add_argument("--output", action="append", default=[], help="@y.npy to write a result to (repeatable)")
    run.add_argument("--cc", help="C compiler (default: cc, or the target's Debian cross gcc)")
    run.add_argument(
        "--emulator",
        help="command that runs target programs (default: qemu-user for foreign Linux "
        "targets; for Cortex-M, qemu-system-arm -M <board of the core> -nographic)",
    )
    run.add_argument("--build-dir", help="where to build the runner (default: a temporary directory)")
    run.add_argument("--misaligned", action="store_true", help="pass tensors that are not 64-byte aligned")

    size = sub.add_parser("size", help="print a runtimeless model's flash and RAM on its target")
    size.add_argument("outdir", help="a directory written by `emit --execution-model runtimeless`")
    size.add_argument(
        "--objects",
        nargs="+",
        default=[],
        metavar="OBJ",
        help="the built NAME.c/NAME_constants.c objects (default: compiled here at -Os)",
    )
    size.add_argument("--cc", help="C compiler (default: the target's, e.g. arm-none-eabi-gcc)")
    size.add_argument("--json", metavar="FILE", help="also write the figures as JSON")

    info = sub.add_parser("info", help="print the functions of a model or an emitted directory")
    info.add_argument("model_or_outdir")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.add_argument("--name", help="the C prefix to show names with (default: from the model's file name)")
    _add_input_shape_arg(info)
    return parser


def _config_from_args(args):
    from ireegen.config.modes import make_config

    return make_config(
        args.execution_model,
        args.executable_format,
        args.module_format,
        args.target_triple,
        args.target_cpu,
        args.target_cpu_features,
        args.optimize_for,
        args.data_format,
        getattr(args, "threads", 1),
    )


def _cmd_emit(args) -> int:
    from ireegen.check.verify import VerifyOptions
    from ireegen.compile.compiler import find_compiler
    from ireegen.emit import emit

    config = _config_from_args(args)
    if args.verify_strict and args.no_verify:
        raise UsageError("--verify-strict: makes verification stricter; it cannot go with --no-verify")
    input_shapes = _input_shapes(args)
    input_values = _input_values(args)
    cache = _cache_from_args(args)
    result = emit(
        args.model,
        args.output_dir,
        config,
        name=args.name,
        extra_flags=args.iree_flag,
        compiler=find_compiler(args.iree_compile),
        verify=VerifyOptions(
            not args.no_verify,
            args.verify_seed,
            args.verify_rtol,
            args.verify_atol,
            args.verify_inputs,
            args.verify_strict,
        ),
        apply_workarounds=not args.no_workarounds,
        input_shapes=input_shapes,
        input_values=input_values,
        cache=cache,
        kernels=args.kernels,
        tune=args.tune,
        builtin_kernels=not args.no_builtin_kernels,
        quantized_io=args.quantized_io,
        max_detections=args.max_detections,
    )
    section = result.manifest["verification"]
    origin = f" from the cache at {cache.label}, {result.cache_check}" if result.from_cache else ""
    checked = _verification_summary(section)
    compared = "functions" in section or section.get("not_exercised")  # the writer's record of a comparison
    if result.from_cache and "signed" not in result.cache_check and compared:
        checked = "not verified here: the entry is not signed"
    print(
        printable(f"ireegen: wrote {len(result.files)} files for {result.name} to {result.outdir}{origin} ({checked})")
    )
    if result.tuning:
        print(f"ireegen: {result.tuning}")
    for function, why in section.get("not_exercised", {}).items():
        print(
            printable(
                f"ireegen: warning: {args.model}: @{function} was not exercised by verification ({why}): "
                "the comparison with async proves nothing; give inputs that make its outputs move with "
                "--verify-inputs (CMake VERIFY_INPUTS), or make this an error with --verify-strict (VERIFY STRICT)"
            ),
            file=sys.stderr,
        )
    return 0


def _verification_summary(section: dict) -> str:
    if section.get("not_exercised"):
        idle = section["not_exercised"]
        return "not exercised: " + "; ".join(f"@{f} {why}" for f, why in idle.items())
    if not section.get("verified"):
        return "not verified: --no-verify"
    errors = [
        e
        for f in section.get("functions", {}).values()
        for o in f["outputs"].values()
        for e in (o["max_abs_error"], o.get("onnxruntime", {}).get("max_abs_error"))
        if e is not None
    ]
    if "functions" not in section:
        return "the reference configuration itself"
    worst = f"max abs error {max(errors):.3g}" if errors else "no outputs"
    twin = "" if section.get("ran_the_emitted_code", True) else f" as {section['ran']}"
    names = {"iree_defaults": "async", "onnxruntime": "ONNX Runtime"}
    used = [names.get(k, k) for k, v in section.get("references", {}).items() if v.get("used")]
    against = " and ".join(used) or "async"
    disagree = (
        "; IREE's defaults disagree with ONNX Runtime, see the manifest" if "references_disagree" in section else ""
    )
    return f"verified against {against}{twin}: {worst}{disagree}"


def _cmd_resolve(args) -> int:
    from ireegen.cmake_resolve import resolve
    from ireegen.compile.compile_model import check_extra_flags
    from ireegen.config.tuning import check_level

    config = _config_from_args(args)
    check_extra_flags(args.iree_flag)
    check_level(args.tune)
    input_shapes = _input_shapes(args)
    input_values = _input_values(args)
    if input_shapes or input_values:
        from ireegen.frontend.onnx_import import check_input_shapes

        if not args.src or Path(args.src).suffix != ".onnx":
            keyword = "INPUT_SHAPES (--input-shape)" if input_shapes else "INPUT_VALUES (--input-value)"
            raise UsageError(f"{keyword}: applies to .onnx models only")
        check_input_shapes(args.src, input_shapes, input_values)
    text = resolve(args.name, config, Path(args.output_dir), args.iree_compile, args.src, args.kernels)
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))  # UTF-8 whatever the locale: CMake reads it so
    sys.stdout.buffer.flush()
    return 0


def _cmd_parity(args) -> int:
    from ireegen.compile.compile_model import check_extra_flags
    from ireegen.parity import parity, toolchain_from, write_json

    if args.json and not Path(args.json).parent.is_dir():
        raise UsageError(f"--json {args.json}: directory {Path(args.json).parent} does not exist")
    toolchain = toolchain_from(args.iree_compile, args.iree_runtime_bin, args.iree_venv)
    report = parity(
        args.model,
        modes=[m.strip() for m in args.execution_models.split(",") if m.strip()],
        function=args.function,
        inputs_file=args.inputs,
        rtol=args.rtol,
        atol=args.atol,
        seed=args.seed,
        toolchain=toolchain,
        extra_flags=check_extra_flags(args.iree_flag),
        apply_workarounds=not args.no_workarounds,
        expected_file=args.expected,
        save_outputs=args.save_outputs,
        runtimeless_target={"triple": args.target_triple, "cpu": args.target_cpu, "emulator": args.emulator},
        input_shapes=_input_shapes(args),
        input_values=_input_values(args),
        reference=args.reference,
        kernels=args.kernels,
    )
    print(report.table())
    if args.json:
        try:
            write_json(report, args.json)
        except OSError as e:
            raise UsageError(f"--json {args.json}: cannot write it ({e.strerror or e})") from None
    return report.exit_code


def _cmd_run(args) -> int:
    import numpy as np

    from ireegen.cbuild.native_run import build_runner, find_function, load_manifest, manifest_functions, parse_input
    from ireegen.check.runners import RunError

    manifest = load_manifest(args.outdir)
    fn = find_function(manifest_functions(manifest), args.function)
    texts = _order_inputs(args.input, fn, manifest)
    inputs = [parse_input(t, v, f"--input {i}") for i, (t, v) in enumerate(zip(texts, fn.inputs))]
    if args.output and len(args.output) != len(fn.outputs):
        raise UsageError(f"--output: @{fn.name} has {len(fn.outputs)} results, got {len(args.output)}")
    for text in args.output:
        if not text.startswith("@"):
            raise UsageError(f"--output {text}: write results as @file.npy")
        parent = Path(text[1:]).parent
        if not parent.is_dir():
            raise UsageError(f"--output {text}: directory {parent} does not exist")
    build_dir = args.build_dir
    cleanup = None
    if build_dir is None:
        import tempfile

        cleanup = tempfile.TemporaryDirectory(prefix="ireegen-run-")
        build_dir = cleanup.name
    try:
        runner = build_runner(args.outdir, build_dir, args.cc, args.emulator)
        results, _ = runner.call(fn.name, inputs, misaligned=args.misaligned)
    except RunError as e:
        print(f"ireegen: error: {e}", file=sys.stderr)
        return 1
    finally:
        if cleanup:
            cleanup.cleanup()
    for i, r in enumerate(results):
        if args.output:
            try:
                np.save(args.output[i][1:], r)
            except OSError as e:
                raise UsageError(f"--output {args.output[i]}: cannot write it ({e.strerror or e})") from None
        else:
            print(f"result[{i}]: {r.dtype} {list(np.shape(r))}")
            print(np.array2string(np.asarray(r), threshold=64))
    return 0


def _cmd_size(args) -> int:
    from ireegen.cbuild.footprint import measure, table

    report = measure(args.outdir, args.objects, args.cc)
    print(table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


def _order_inputs(texts, fn, manifest) -> list:
    """--input values in the function's order: positional, or all as
    NAME=VALUE with the model's or the C name of each input."""
    names = {}
    entry = next((f for f in manifest["functions"] if f["name"] == fn.name), {"inputs": []})
    for i, v in enumerate(entry["inputs"]):
        names[v["name"]] = i
        names.setdefault(v.get("c_name", v["name"]), i)
    named = [t.partition("=") for t in texts]
    if texts and all(sep and key in names and not t.startswith("@") for t, (key, sep, _) in zip(texts, named)):
        ordered = [None] * len(fn.inputs)
        for key, _, value in named:
            if ordered[names[key]] is not None:
                raise UsageError(f"--input {key}=...: given twice")
            ordered[names[key]] = value
        missing = [v.name for v, t in zip(fn.inputs, ordered) if t is None]
        if missing:
            raise UsageError(f"--input: @{fn.name} also needs {', '.join(missing)}")
        return ordered
    if len(texts) != len(fn.inputs):
        raise UsageError(
            f"--input: @{fn.name} takes {len(fn.inputs)} inputs "
            f"({', '.join(v.name for v in fn.inputs)}), got {len(texts)}"
        )
    return list(texts)


def _cmd_info(args) -> int:
    from ireegen.cgen.c_api import build_functions
    from ireegen.cgen.naming import check_name, default_name
    from ireegen.frontend.signature import Function

    path = Path(args.model_or_outdir)
    if path.is_dir():
        from ireegen.output.outputs import read_manifest_path

        manifest_path = read_manifest_path(path)
        if not manifest_path.is_file():
            raise UsageError(f"{path}: is a directory without manifest.json (not an ireegen output)")
        try:
            manifest = json.loads(manifest_path.read_text())
            functions = [Function.from_json(f) for f in manifest["functions"]]
            name = manifest["name"]
        except (ValueError, KeyError, TypeError) as e:
            raise UsageError(f"{manifest_path}: not a valid ireegen manifest ({e})") from None
        target = manifest.get("target") or {}
        target_text = (
            (
                f", {target.get('triple')} (cpu {target.get('cpu')}"
                + (f", features {target['features']}" if target.get("features") else "")
                + ")"
            )
            if target
            else ""
        )
        header = (
            f"{manifest['name']}: {manifest['execution_model']}, {manifest['executable_format']}{target_text}, "
            f"{manifest['module_format'] or 'no VM module'}"
        )
    else:
        from ireegen.compile.compiler import find_compiler
        from ireegen.frontend.import_options import ImportOptions
        from ireegen.frontend.models import load_model

        name = check_name(args.name) if args.name else default_name(path)
        compiler = find_compiler() if path.suffix in (".onnx", ".tflite") else None
        functions = list(load_model(path, compiler, ImportOptions(_input_shapes(args), _input_values(args))).functions)
        header = f"{path} (C prefix {name})"
    c_functions = build_functions(name, functions, str(path))
    if args.json:
        print(json.dumps([f.to_json() for f in c_functions], indent=2))
        return 0
    print(header)
    for f in c_functions:
        call = "typed call" if f.typed else "buffer-view call (dynamic shapes)"
        print(f"  @{f.name}: C {f.symbol}(), macros {f.macro}_*, {call}")
        for kind, values in (("in ", f.inputs), ("out", f.outputs)):
            for v in values:
                shape = "x".join("?" if d is None else str(d) for d in v.value.shape) or "scalar"
                print(
                    f"    {kind} {v.source_name}: {v.value.dtype} [{shape}]  C {v.c_type} {v.name}, macros {v.macro}_*"
                )
    return 0


def _terminate(signum, frame):
    # Unwinds like an exception: staging directories are removed and a
    # running iree-compile is killed (compiler.run_killable).
    raise SystemExit(128 + signum)


def main(argv=None) -> int:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
        try:
            return _main(argv)
        finally:
            signal.signal(signal.SIGTERM, previous)
    return _main(argv)


def _main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(join_separated_values(list(sys.argv[1:] if argv is None else argv)))
    if args.cmake_dir:
        from ireegen.common.resources import cmake_dir

        print(cmake_dir())
        return 0
    if args.bazel_dir:
        from ireegen.common.resources import bazel_dir

        print(bazel_dir())
        return 0
    if not args.command:
        parser.print_help(sys.stderr)
        print("ireegen: error: a command is required (emit, info, parity, run, size)", file=sys.stderr)
        return 2
    try:
        commands = {
            "emit": _cmd_emit,
            "info": _cmd_info,
            "resolve": _cmd_resolve,
            "parity": _cmd_parity,
            "run": _cmd_run,
            "size": _cmd_size,
        }
        return commands[args.command](args)
    except IreegenError as e:
        print("ireegen: error: " + "\n".join(message_lines(e)), file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `ireegen info ... | head`: the reader left
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:  # BrokenPipeError is one too: it is handled above
        # A failed write() names no file: the directory the command writes to.
        full = disk_full(e, directory=getattr(args, "output_dir", None))
        if full is None:
            raise
        print("ireegen: error: " + "\n".join(message_lines(full)), file=sys.stderr)
        return full.exit_code
