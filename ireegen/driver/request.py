"""What an emit was asked (EmitRequest), checked before any work, and the
variants the driver emits besides it (a tuning candidate, the verification
twin), made from the checked request with `dataclasses.replace`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ireegen.cbuild.int8_kernels import default_kernels
from ireegen.cbuild.kernels import kernel_link, kernel_toolchain
from ireegen.cgen.naming import check_name, default_name
from ireegen.check.tune import runner_dir
from ireegen.check.verify import VerifyOptions
from ireegen.common.errors import UsageError
from ireegen.compile.compile_model import check_extra_flags
from ireegen.compile.compiler import Compiler, find_compiler
from ireegen.compile.kernel_link import KernelLink
from ireegen.config.modes import Config
from ireegen.config.targets import check_target, resolve_host
from ireegen.config.tuning import check_level
from ireegen.frontend.kernel_spec import load_kernel_spec
from ireegen.frontend.models import check_model_path
from ireegen.frontend.onnx_detections import check_max_detections
from ireegen.frontend.onnx_import import model_dependencies
from ireegen.output.cache import Cache
from ireegen.output.layout import output_files
from ireegen.output.outputs import MANIFEST, check_emit_target


@dataclass(frozen=True)
class EmitRequest:
    """One emit: `model_path` compiled for `config` into `outdir`.

    `verify` (VerifyOptions, or a bool) checks the output against async
    before it is written.  `apply_workarounds=False` compiles exactly as
    iree-compile would, IREE's bugs included; a collection of workaround
    names applies only those.  `input_shapes` ({input name: dims}) pins
    symbolic dimensions of an ONNX model; `input_values` ({input name:
    values}) makes its inputs constants.  With a `cache` (output/cache.py),
    a cached output for the content key is written instead of compiling,
    and a compiled one is uploaded.  `kernels` (a --kernels SPEC path, or
    its KernelLink) links the user's own kernels into the executables
    (docs/kernels.md); without it, ireegen's own int8 kernels are linked
    for a QDQ int8 model on a Cortex-M or RV32, unless `builtin_kernels` is
    False (cbuild/int8_kernels.py).  `tune` (off, quick, full; None:
    config/tuning.py's default) chooses among IREE configurations by timing
    them (check/tune.py); `candidate_flags` are a tuning candidate's:
    compiled into the output, but not into the references it is verified
    against (driver/verification.py), nor into the key.  `quantized_io` gives a QDQ ONNX
    model the int8 inputs and outputs its QuantizeLinear and
    DequantizeLinear compute (frontend/quantized_io.py).  `max_detections`
    bounds the rows of an ONNX NonMaxSuppression's output (`--max-detections`,
    frontend/onnx_detections.py)."""

    model_path: Path | str
    outdir: Path | str
    config: Config
    name: str | None = None
    extra_flags: list = field(default_factory=list)
    compiler: Compiler | None = None
    verify: VerifyOptions | bool = True
    apply_workarounds: bool | tuple = True
    input_shapes: dict | None = None
    input_values: dict | None = None
    cache: Cache | None = None
    kernels: KernelLink | Path | str | None = None
    tune: str | None = None
    candidate_flags: list = field(default_factory=list)
    builtin_kernels: bool = True
    quantized_io: bool = False
    max_detections: int | None = None
    # Where verification builds the runtimeless runner (None: a temporary
    # directory): a tuning candidate's, kept for its timing.
    runner_dir: Path | None = None

    @property
    def compile_flags(self) -> list:
        """The extra iree-compile flags of the output: the user's, then the candidate's."""
        return [*self.extra_flags, *self.candidate_flags]


def prepare_kernels(spec_path, config: Config) -> KernelLink:
    """A --kernels SPEC, checked with the toolchain that builds it, before any work."""
    link = kernel_link(load_kernel_spec(spec_path))
    kernel_toolchain(config)
    return link


def checked(request: EmitRequest) -> EmitRequest:
    """`request` with every field checked and resolved, or a UsageError in
    one line: the model a readable path, the name a C prefix, the flags
    lists, `tune` a level, the compiler found, `verify` VerifyOptions,
    `kernels` a KernelLink or None.  Checking a checked request changes nothing."""
    if not str(request.outdir).strip():
        raise UsageError("-o: the output directory is an empty path")
    config = request.config
    model_path = check_model_path(request.model_path)
    name = check_name(request.name) if request.name is not None else default_name(model_path)
    extra_flags = check_extra_flags(request.extra_flags)
    candidate_flags = check_extra_flags(request.candidate_flags)
    tune = check_level(request.tune, config=config)
    max_detections = check_max_detections(request.max_detections)
    compiler = request.compiler or find_compiler()
    verify = (
        request.verify if isinstance(request.verify, VerifyOptions) else VerifyOptions(enabled=bool(request.verify))
    )
    check_target(config.target, compiler)
    # `host` is keyed and recorded as the CPU and features it resolves to.
    config = replace(config, target=resolve_host(config.target, compiler))
    kernels = request.kernels
    if kernels is not None and not isinstance(kernels, KernelLink):
        kernels = prepare_kernels(kernels, config)
    elif kernels is None and request.builtin_kernels:
        kernels = default_kernels(model_path, config)
    request = replace(
        request,
        model_path=model_path,
        outdir=Path(request.outdir),
        name=name,
        extra_flags=extra_flags,
        candidate_flags=candidate_flags,
        tune=tune,
        compiler=compiler,
        verify=verify,
        kernels=kernels,
        config=config,
        max_detections=max_detections,
    )
    check_emit_target(request.outdir, [*output_files(name, config).values(), MANIFEST], _inputs(request))
    return request


def _inputs(request: EmitRequest) -> list:
    """(what, path) of every file emit reads: no output may land on one."""
    inputs = [("the model", request.model_path)]
    if request.model_path.suffix == ".onnx":
        inputs += [("its external data file", f) for f in model_dependencies(request.model_path)[1:]]
    if request.verify.enabled and request.verify.inputs is not None:
        inputs.append(("--verify-inputs", Path(request.verify.inputs)))
    if request.kernels is not None:
        inputs += [("a --kernels file", f) for f in request.kernels.spec.files()]
    return inputs


def candidate_request(request: EmitRequest, flags, outdir: Path) -> EmitRequest:
    """A tuning candidate of the checked `request`: `flags` added, always
    verified, never cached or tuned, linking the kernels `request` links;
    its verification's runner is kept beside `outdir` for its timing."""
    return replace(
        request,
        outdir=outdir,
        runner_dir=runner_dir(outdir),
        verify=replace(request.verify, enabled=True),
        cache=None,
        tune="off",
        candidate_flags=flags,
        builtin_kernels=False,
    )


def twin_request(request: EmitRequest, config: Config, outdir: Path) -> EmitRequest:
    """The verification twin of the checked `request`: the same model and
    flags emitted for `config`, unverified, never cached or tuned.  The twin
    stands in for the emitted code, so it applies the workarounds `request`
    applies (under --no-workarounds, none: a bug they hide is then verified,
    not hidden)."""
    return replace(
        request,
        outdir=outdir,
        config=config,
        verify=VerifyOptions(enabled=False),
        cache=None,
        tune="off",
        builtin_kernels=False,
    )
