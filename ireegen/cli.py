"""Command line: `python -m ireegen {emit,info} ...` and `--cmake-dir`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import __version__
from .errors import IreegenError, UsageError
from .modes import EXECUTABLE_FORMATS, EXECUTION_MODELS, MODULE_FORMATS


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
    p.add_argument("--module-format", default=None,
                   help=f"one of {', '.join(MODULE_FORMATS)} (default vmfb; runtimeless has none)")
    p.add_argument("--target-triple", help="LLVM target triple of the executables (default: the host's)")
    p.add_argument("--target-cpu", help="target CPU (default generic; 'host' for this machine)")
    p.add_argument("--target-cpu-features", help="target CPU features, e.g. +avx2 (default none)")
    p.add_argument(
        "--iree-flag",
        action="append",
        default=[],
        metavar="FLAG",
        help="pass FLAG to iree-compile (repeatable), e.g. --iree-flag=--iree-opt-level=O3 "
        "or --iree-flag --iree-opt-level=O3",
    )
    p.add_argument("--iree-compile", help="path of another iree-compile (default: the installed package's)")


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
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    emit = sub.add_parser("emit", help="compile a model and write its C library")
    emit.add_argument("model", help="the model: .mlir or .mlirbc")
    emit.add_argument("-o", "--output-dir", required=True, help="directory to write (created if needed)")
    emit.add_argument("--name", help="C prefix of every symbol (default: from the model's file name)")
    _add_mode_args(emit)

    resolve = sub.add_parser("resolve", help="(for ireegen's CMake functions) validate options, print CMake set()s")
    resolve.add_argument("--name", required=True)
    resolve.add_argument("-o", "--output-dir", required=True)
    _add_mode_args(resolve)

    par = sub.add_parser("parity", help="check that the execution models give the same answers as async",
                         epilog=_EXIT_CODES_PARITY, formatter_class=argparse.RawDescriptionHelpFormatter)
    par.add_argument("model", help="the model: .mlir or .mlirbc")
    par.add_argument("--execution-models", default="async,inline-static,inline-dynamic",
                     help="comma-separated, from async, inline-static, inline-dynamic, runtimeless "
                     "(default: the first three; async is always the reference)")
    par.add_argument("--function", help="only this function (default: every exported function)")
    par.add_argument("--inputs", help=".npz with <function>.input<i> (or input<i>) arrays; default: seeded random")
    par.add_argument("--rtol", type=float, default=1e-5,
                     help="relative tolerance against async, as numpy.allclose (default 1e-5)")
    par.add_argument("--atol", type=float, default=1e-6,
                     help="absolute tolerance against async, as numpy.allclose (default 1e-6)")
    par.add_argument("--seed", type=int, default=0, help="seed of the generated inputs")
    par.add_argument("--json", metavar="REPORT", help="also write the report as JSON")
    par.add_argument("--iree-flag", action="append", default=[], metavar="FLAG", help="pass FLAG to iree-compile")
    par.add_argument("--iree-compile", help="iree-compile of the IREE release to check (default: installed)")
    par.add_argument("--iree-runtime-bin", help="directory with that release's iree-run-module")
    par.add_argument("--iree-venv", help="a virtual environment with that release's iree-base-compiler/runtime")
    par.add_argument("--no-workarounds", action="store_true",
                     help="compile exactly as iree-compile would, without ireegen's workarounds")

    run = sub.add_parser("run", help="build an emitted runtimeless directory for its target and call a function",
                         epilog=_EXIT_CODES_RUN, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("outdir", help="a directory written by `emit --execution-model runtimeless`")
    run.add_argument("--function", required=True, help="the exported function to call (see `ireegen info OUTDIR`)")
    run.add_argument("--input", action="append", default=[], help="@x.npy, or a number for a scalar (repeatable)")
    run.add_argument("--output", action="append", default=[], help="@y.npy to write a result to (repeatable)")
    run.add_argument("--cc", help="C compiler (default: cc, or the target's Debian cross gcc)")
    run.add_argument("--emulator", help="command that runs target programs (default: qemu-user for foreign targets)")
    run.add_argument("--build-dir", help="where to build the runner (default: a temporary directory)")
    run.add_argument("--misaligned", action="store_true", help="pass tensors that are not 64-byte aligned")

    info = sub.add_parser("info", help="print the functions of a model or an emitted directory")
    info.add_argument("model_or_outdir")
    info.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _config_from_args(args):
    from .modes import make_config

    return make_config(
        args.execution_model,
        args.executable_format,
        args.module_format,
        args.target_triple,
        args.target_cpu,
        args.target_cpu_features,
    )


def _cmd_emit(args) -> int:
    from .compiler import find_compiler
    from .emit import emit

    config = _config_from_args(args)
    result = emit(
        args.model,
        args.output_dir,
        config,
        name=args.name,
        extra_flags=args.iree_flag,
        compiler=find_compiler(args.iree_compile),
    )
    print(f"ireegen: wrote {len(result.files)} files for {result.name} to {result.outdir}")
    return 0


def _cmd_resolve(args) -> int:
    from .cmake_resolve import resolve
    from .compile_model import check_extra_flags

    config = _config_from_args(args)
    check_extra_flags(args.iree_flag)
    sys.stdout.write(resolve(args.name, config, Path(args.output_dir), args.iree_compile))
    return 0


def _cmd_parity(args) -> int:
    from .compile_model import check_extra_flags
    from .parity import parity, toolchain_from, write_json

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

    from .native_run import build_runner, find_function, load_manifest, manifest_functions, parse_input
    from .runners import RunError

    fn = find_function(manifest_functions(load_manifest(args.outdir)), args.function)
    if len(args.input) != len(fn.inputs):
        raise UsageError(f"--input: @{fn.name} takes {len(fn.inputs)} inputs, got {len(args.input)}")
    inputs = [parse_input(t, v, f"--input {i}") for i, (t, v) in enumerate(zip(args.input, fn.inputs))]
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


def _cmd_info(args) -> int:
    from .signature import Function

    path = Path(args.model_or_outdir)
    if path.is_dir():
        from .outputs import read_manifest_path

        manifest_path = read_manifest_path(path)
        if not manifest_path.is_file():
            raise UsageError(f"{path}: is a directory without manifest.json (not an ireegen output)")
        try:
            manifest = json.loads(manifest_path.read_text())
            functions = [Function.from_json(f) for f in manifest["functions"]]
        except (ValueError, KeyError, TypeError) as e:
            raise UsageError(f"{manifest_path}: not a valid ireegen manifest ({e})") from None
        target = manifest.get("target") or {}
        target_text = (f", {target.get('triple')} (cpu {target.get('cpu')}"
                       + (f", features {target['features']}" if target.get("features") else "") + ")") if target else ""
        header = (f"{manifest['name']}: {manifest['execution_model']}, {manifest['executable_format']}{target_text}, "
                  f"{manifest['module_format'] or 'no VM module'}")
    else:
        from .models import load_model

        functions = list(load_model(path).functions)
        header = str(path)
    if args.json:
        print(json.dumps([f.to_json() for f in functions], indent=2))
        return 0
    print(header)
    for f in functions:
        print(f"  @{f.name}")
        for kind, values in (("in ", f.inputs), ("out", f.outputs)):
            for v in values:
                shape = "x".join("?" if d is None else str(d) for d in v.shape) or "scalar"
                print(f"    {kind} {v.name}: {v.dtype} [{shape}]")
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
        from .resources import cmake_dir

        print(cmake_dir())
        return 0
    if not args.command:
        parser.print_help(sys.stderr)
        print("ireegen: error: a command is required (emit, info, parity, run, resolve)", file=sys.stderr)
        return 2
    try:
        commands = {"emit": _cmd_emit, "info": _cmd_info, "resolve": _cmd_resolve, "parity": _cmd_parity,
                    "run": _cmd_run}
        return commands[args.command](args)
    except IreegenError as e:
        print(f"ireegen: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `ireegen info ... | head`: the reader left
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
