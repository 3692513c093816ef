"""`ireegen run`: build an emitted runtimeless C library into a small runner
program (for the host, cross-compiled and run under qemu-user, or for a
bare-metal Cortex-M board under qemu-system-arm) and call its functions on
numpy inputs, as `iree-run-module` does for VM modules."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ireegen.cgen.c_api import build_functions
from ireegen.cgen.naming import check_name
from ireegen.cgen.render import banner, render
from ireegen.common.errors import RunError, UsageError
from ireegen.common.resources import cmake_dir
from ireegen.common.untrusted import deadline_message, tool_deadline
from ireegen.frontend.dtypes import as_signature_dtype, numpy_dtype
from ireegen.frontend.signature import Function
from ireegen.output.layout import c_sources
from ireegen.output.outputs import MANIFEST, read_manifest_path

from .baremetal import LinkError, link_placed
from .toolchains import Toolchain, toolchain_for

# The flags the CI proof asks for: the emitted C must be clean under them.
STRICT_CFLAGS = ("-std=c11", "-Wall", "-Wextra", "-Werror", "-O2")
RUNNER_SOURCE = "ireegen_runner.c"
# The pthreads pool a runner built with threads links (NAME_PARALLEL_FOR).
THREAD_POOL_SOURCE = "threads/ireegen_thread_pool.c"


@dataclass
class Runner:
    """A built runner program for one emitted directory."""

    outdir: Path
    manifest: dict
    functions: dict  # name -> Function
    program: Path
    toolchain: Toolchain
    build_dir: Path
    threads: int = 1  # the pool size each call spreads workgroups over (1: none)

    def call(
        self,
        function: str,
        inputs,
        misaligned: bool = False,
        aligned_io_arena: bool = False,
        repeat: int = 1,
        wrapper=(),
        timeout: float = 600,
    ) -> tuple:
        """Runs `function` on `inputs`; returns (outputs, nanoseconds per call
        or None).  `wrapper` prefixes the command (valgrind, say)."""
        fn = find_function(self.functions, function)
        arrays = check_inputs(fn, inputs)
        workdir = Path(tempfile.mkdtemp(prefix="call-", dir=self.build_dir))
        try:
            files = []
            for i, a in enumerate(arrays):
                path = workdir / f"in{i}.bin"
                path.write_bytes(a.tobytes())
                files.append(path)
            outs = [workdir / f"out{i}.bin" for i in range(len(fn.outputs))]
            options = (["--misaligned"] if misaligned else []) + (["--aligned-io-arena"] if aligned_io_arena else [])
            options += ["--repeat", str(repeat)] if repeat > 1 else []
            options += ["--threads", str(self.threads)] if self.threads != 1 else []
            # A bare-metal program opens its files over semihosting, relative
            # to the emulator's directory: short names, no spaces.
            names = [p.name if self.toolchain.bare_metal else str(p) for p in files + outs]
            cmd = [*wrapper, *self.toolchain.run_command(self.program, [*options, function, *names])]
            try:
                proc = subprocess.run(
                    cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, cwd=workdir
                )
            except subprocess.TimeoutExpired:
                raise RunError(f"{self.program.name} did not finish in {timeout:g} s: {' '.join(cmd)}") from None
            if proc.returncode != 0:
                raise RunError(proc.stdout.strip() or f"{self.program.name} exited with {proc.returncode}")
            ns = None
            for line in proc.stdout.splitlines():
                if line.startswith("ns_per_call "):
                    ns = float(line.split()[1])
            results = []
            for v, path in zip(fn.outputs, outs):
                data = np.frombuffer(path.read_bytes(), dtype=numpy_dtype(v.dtype))
                results.append(data.reshape(v.shape) if v.is_tensor else data.reshape(())[()])
            return results, ns
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


def manifest_functions(manifest: dict) -> dict:
    """name -> Function, from an emitted directory's manifest."""
    return {f["name"]: Function.from_json(f) for f in manifest["functions"]}


def find_function(functions: dict, name: str) -> Function:
    fn = functions.get(name)
    if fn is None:
        raise UsageError(f"--function {name}: no such function (there are {', '.join(functions)})")
    return fn


def check_inputs(fn: Function, inputs) -> list:
    """The inputs as contiguous arrays of exactly the signature's types."""
    if len(inputs) != len(fn.inputs):
        raise UsageError(f"@{fn.name} takes {len(fn.inputs)} inputs, got {len(inputs)}")
    out = []
    for i, (v, x) in enumerate(zip(fn.inputs, inputs)):
        a = as_signature_dtype(np.asarray(x), v.dtype)
        want = numpy_dtype(v.dtype)
        shape = tuple(v.shape) if v.is_tensor else ()
        if a.dtype != want or a.shape != shape:
            raise UsageError(
                f"@{fn.name} input {i} ({v.name}): expected {want} {list(shape)}, got {a.dtype} {list(a.shape)}"
            )
        out.append(np.array(a, order="C"))  # (np.ascontiguousarray makes 0-d arrays 1-d)
    return out


def load_manifest(outdir) -> dict:
    outdir = Path(outdir)
    path = read_manifest_path(outdir)  # rolls back a commit a crash interrupted
    if not path.is_file():
        raise UsageError(f"{outdir}: no {MANIFEST} (not an ireegen output directory)")
    try:
        manifest = json.loads(path.read_text())
    except ValueError as e:
        raise UsageError(f"{path}: not valid JSON ({e})") from None
    if manifest.get("execution_model") != "runtimeless":
        raise UsageError(
            f"{outdir}: `ireegen run` runs runtimeless C; this directory is "
            f"{manifest.get('execution_model')} (run its module with iree-run-module)"
        )
    return manifest


def _manifest_name(manifest: dict, outdir: Path) -> str:
    """The model name the runner's C is written with: held to --name's
    rules, since a manifest is whatever sits in the directory."""
    name = manifest.get("name")
    try:
        return check_name(name if isinstance(name, str) else "")
    except UsageError as e:
        reason = str(e).split(": ", 1)[-1]
        raise UsageError(f"{outdir / MANIFEST}: its name {name!r} {reason}") from None


def build_runner(
    outdir,
    build_dir=None,
    cc: str | None = None,
    emulator: str | None = None,
    cflags=STRICT_CFLAGS,
    extra_cflags=(),
    threads: int = 1,
) -> Runner:
    """Compiles the emitted sources and a runner with the toolchain of the
    directory's target triple.  `threads` other than 1 builds it with
    NAME_PARALLEL_FOR and the pthreads pool and runs every call on that many
    threads, on a target with an OS (bare metal stays on one)."""
    outdir = Path(outdir).resolve()
    manifest = load_manifest(outdir)
    target = manifest["target"]
    toolchain = toolchain_for(
        target["triple"], cc, emulator, target.get("cpu"), cpu_features=target.get("features", "")
    )
    build_dir = Path(build_dir).resolve() if build_dir else Path(tempfile.mkdtemp(prefix="ireegen-runner-"))
    try:
        build_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--build-dir {build_dir}: cannot create it ({e.strerror or e})") from None
    name = _manifest_name(manifest, outdir)
    functions = manifest_functions(manifest)
    cfunctions = build_functions(name, list(functions.values()), str(outdir))
    runner_c = build_dir / RUNNER_SOURCE
    runner_c.write_text(
        render(
            "runner.c.j2",
            banner=banner(MANIFEST),
            name=name,
            macro=name.upper(),
            header=f"{name}.h",
            functions=cfunctions,
            max_values=max([len(f.inputs) + len(f.outputs) for f in functions.values()] + [1]),
        )
    )
    roles = {f["role"]: f["path"] for f in manifest["files"]}
    # C and, with --data-format asm, NAME_constants.S: -I{outdir} is also how
    # the assembler finds the NAME_constants.bin it .incbin's.
    sources = [outdir / f for f in c_sources(roles)]
    program = build_dir / f"{name}_runner"
    libraries = [f"-l{lib}" for lib in manifest["runtimeless"]["link_libraries"]]
    if toolchain.bare_metal:
        threads = 1
    pool = cmake_dir() / THREAD_POOL_SOURCE
    threaded = (f"-D{name.upper()}_PARALLEL_FOR", f"-I{pool.parent}", "-pthread") if threads != 1 else ()
    pool_sources = (pool,) if threads != 1 else ()

    def link(support, link_flags, defines):
        """Compiles and links the runner; its failure output, None when it linked."""
        full = [
            *(toolchain.cc, *toolchain.cflags, *cflags, *extra_cflags, *defines, *threaded, f"-I{outdir}"),
            str(runner_c),
            *map(str, (*sources, *pool_sources, *support, outdir / roles["executables-object"])),
            *(*link_flags, "-o", str(program), *libraries),
        ]
        deadline = tool_deadline()
        try:
            proc = subprocess.run(
                full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", timeout=deadline
            )
        except subprocess.TimeoutExpired:
            raise UsageError(deadline_message(full[0], f"building the runner of {name}", deadline)) from None
        return None if proc.returncode == 0 else f"$ {' '.join(full)}\n{proc.stdout}"

    if toolchain.bare_metal:
        semihosted = ("-DIREEGEN_RUNNER_SEMIHOSTED",)
        try:
            link_placed(
                toolchain.core,
                build_dir,
                name,
                lambda support, flags, defines: link(support, flags, (*semihosted, *defines)),
            )
        except LinkError as e:
            raise RunError(f"building the runner failed:\n{e}") from None
    else:
        failure = link((), toolchain.link_flags, ())
        if failure is not None:
            raise RunError(f"building the runner failed:\n{failure}")
    return Runner(outdir, manifest, functions, program, toolchain, build_dir, threads)


def built_runner_in(outdir, build_dir) -> Runner | None:
    """The runner that build_runner left in `build_dir` for `outdir`, run on
    one thread (a runner built with threads runs on one without --threads),
    without compiling anything; None when there is none."""
    outdir = Path(outdir).resolve()
    manifest = load_manifest(outdir)
    name = _manifest_name(manifest, outdir)
    program = Path(build_dir).resolve() / f"{name}_runner"
    if not program.is_file():
        return None
    target = manifest["target"]
    toolchain = toolchain_for(target["triple"], cpu=target.get("cpu"), cpu_features=target.get("features", ""))
    return Runner(outdir, manifest, manifest_functions(manifest), program, toolchain, program.parent)


NPY_MAGIC = b"\x93NUMPY"


def starts_with(path: Path, magic: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(magic)) == magic
    except OSError:
        return False


def numpy_reason(e: Exception) -> str:
    """numpy's complaint about a file, without its advice to unpickle it."""
    text = str(e)
    return "it holds pickled objects, which ireegen never loads" if "pickle" in text else text


def parse_input(text: str, value, where: str):
    """An --input: `@file.npy`, or a number for a scalar argument."""
    if text.startswith("@"):
        path = Path(text[1:])
        if not path.is_file():
            raise UsageError(f"{where}: {path}: no such file")
        if not starts_with(path, NPY_MAGIC):
            raise UsageError(f"{where}: {path}: not a .npy file (no .npy header); save the array with numpy.save")
        try:
            a = np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError) as e:
            raise UsageError(f"{where}: {path}: not a readable .npy file ({numpy_reason(e)})") from None
        return a
    if value.is_tensor:
        raise UsageError(f"{where}: {value.name} is a tensor; pass it as @file.npy")
    try:
        dtype = numpy_dtype(value.dtype)
        return np.array(
            float(text) if value.dtype in ("float16", "bfloat16", "float32", "float64") else int(text, 0), dtype=dtype
        )
    except ValueError:
        raise UsageError(f"{where}: {text!r} is not a {value.dtype} number") from None
