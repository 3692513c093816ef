"""The content key of an emit: one hash of everything the output depends on,
so that a build cache can reuse an output directory made elsewhere.

Emitted bytes depend on the model's bytes (an ONNX model's external data
files included, --input-shape and --input-value), the
configuration (modes, target, --optimize-for, --data-format, --tune), the name, the
extra compiler flags, whether IREE workarounds apply, ireegen's version and
templates and the compiler's version, and on nothing else (not the model's
path, not OUTDIR, not the time): the tests in tests/test_reproducible.py
check that across checkouts and directories."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ireegen import __version__
from ireegen.common.resources import templates_dir
from ireegen.frontend.onnx_import import model_dependencies

from .outputs import sha256_of

KEY_SCHEMA = 4


def templates_sha256() -> str:
    """sha256 over the shipped templates: every file under templates_dir() by
    its relative path and its bytes, in sorted order, so it does not depend on
    where ireegen is installed (an editable install's edited template counts)."""
    root = templates_dir()
    digest = hashlib.sha256()
    for rel in sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()):
        data = (root / rel).read_bytes()
        digest.update(f"{rel}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def source_json(model_path, input_shapes=None, input_values=None) -> dict:
    """The model as the manifest describes it, and the key hashes it: its
    file name and sha256, an ONNX model's external data files (weights
    beside the .onnx), its pinned input shapes and its fixed input values."""
    model_path = Path(model_path)
    out = {"file": model_path.name, "sha256": sha256_of(model_path)}
    if model_path.suffix == ".onnx":
        data = model_dependencies(model_path)[1:]
        if data:
            out["external_data"] = [{"file": f.name, "sha256": sha256_of(f)} for f in data]
        if input_shapes:
            out["input_shapes"] = {k: list(v) for k, v in sorted(input_shapes.items())}
        if input_values:
            out["input_values"] = {k: list(v) for k, v in sorted(input_values.items())}
    return out


def content_key_inputs(
    source_sha256: str,
    name: str,
    config,
    extra_flags,
    compiler_version: str,
    apply_workarounds: bool = True,
    input_shapes: dict | None = None,
    external_data: dict | None = None,
    input_values: dict | None = None,
    kernels: dict | None = None,
    tune: str = "off",
    quantized_io: bool = False,
    max_detections: int | None = None,
) -> dict:
    # An option at its default adds nothing to the key (--kernels absent,
    # --tune off, --quantized-io absent): the key of an emit without it is
    # the key of an emit that never heard of it.  --kernels enters as SPEC
    # and every file it names, by content.
    extra = {"kernels": kernels} if kernels else {}
    if tune != "off":
        extra["tune"] = tune
    if quantized_io:  # absent without it, as --kernels and --tune
        extra["quantized_io"] = True
    if max_detections is not None:  # absent without it, as --quantized-io
        extra["max_detections"] = max_detections
    if config.threads != 1:  # absent at its default, as the options above
        extra["threads"] = config.threads
    return {
        **extra,
        "schema": KEY_SCHEMA,
        "source_sha256": source_sha256,
        "external_data_sha256": dict(sorted((external_data or {}).items())),
        "input_shapes": {k: list(v) for k, v in (input_shapes or {}).items()},
        "input_values": {k: list(v) for k, v in (input_values or {}).items()},
        "name": name,
        "execution_model": config.execution_model.name,
        "executable_format": config.executable_format.name,
        "module_format": config.module_format,
        "target": config.target.to_json() if config.target else None,
        "optimize_for": config.optimize_for,
        "data_format": config.data_format,
        "workarounds": apply_workarounds,
        "extra_flags": list(extra_flags),
        "ireegen_version": __version__,
        "templates_sha256": templates_sha256(),
        "compiler_version": compiler_version,
    }


def content_key(
    model_path,
    name,
    config,
    extra_flags,
    compiler,
    apply_workarounds=True,
    input_shapes=None,
    source: dict | None = None,
    input_values=None,
    kernels: dict | None = None,
    tune: str = "off",
    quantized_io: bool = False,
    max_detections: int | None = None,
) -> str:
    """sha256 over the canonical JSON of content_key_inputs(); `source` is
    source_json()'s description of the model, when the caller has it."""
    source = source or source_json(model_path, input_shapes, input_values)
    external_data = {d["file"]: d["sha256"] for d in source.get("external_data", [])}
    inputs = content_key_inputs(
        source["sha256"],
        name,
        config,
        extra_flags,
        compiler.version,
        apply_workarounds,
        input_shapes,
        external_data,
        input_values,
        kernels,
        tune,
        quantized_io,
        max_detections,
    )
    text = json.dumps(inputs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
