"""Arrays a user gives in .npz files: inputs (--inputs, --verify-inputs)
and expected outputs (--expected), matched strictly to a model's signature."""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ireegen.cbuild.native_run import NPY_MAGIC, check_inputs, numpy_reason, starts_with
from ireegen.common.errors import UsageError
from ireegen.common.untrusted import check_regular

ZIP_MAGIC = b"PK"
# What an .npz may unpack to, all arrays together, by the sizes its zip
# directory states (checked before a byte is inflated; reading stops there).
MAX_NPZ_BYTES = 256 << 20
MAX_NPZ_ARRAYS = 4096
_HEADER_READERS = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
}
# What a damaged or crafted archive raises while it is read.
_ARCHIVE_ERRORS = (
    OSError,
    ValueError,
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
    struct.error,
    NotImplementedError,
    RuntimeError,
    KeyError,
    OverflowError,
)


def _load_npz(path: Path, flag: str):
    if not path.exists():
        raise UsageError(f"{flag} {path}: not a readable .npz (no such file)")
    check_regular(path, f"{flag} {path}")  # a FIFO would block the read
    if starts_with(path, NPY_MAGIC):
        raise UsageError(f"{flag} {path}: is a single .npy array, not an .npz of named arrays")
    if not starts_with(path, ZIP_MAGIC):
        raise UsageError(f"{flag} {path}: not a readable .npz (no zip header); save the arrays with numpy.savez")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            total = sum(m.file_size for m in members)
            if len(members) > MAX_NPZ_ARRAYS or total > MAX_NPZ_BYTES:
                raise UsageError(
                    f"{flag} {path}: {len(members):,} arrays of {total:,} bytes unpacked; ireegen reads at most "
                    f"{MAX_NPZ_ARRAYS:,} arrays of {MAX_NPZ_BYTES:,} bytes"
                )
            arrays = {}
            for m in members:
                if not m.filename.endswith(".npy"):
                    raise UsageError(f"{flag} {path}: {m.filename[:80]!r} is not an .npy array; not an .npz")
                with archive.open(m) as f:
                    # The .npy header's shape must account for the member's
                    # stated size, so no array is read past what was checked.
                    version = np.lib.format.read_magic(f)
                    read_header = _HEADER_READERS.get(version)
                    if read_header is None:
                        raise UsageError(f"{flag} {path}: array {m.filename[:80]!r} has .npy version {version}")
                    shape, fortran, dtype = read_header(f)
                    stated = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                    if dtype.hasobject or stated != m.file_size - f.tell():
                        raise UsageError(
                            f"{flag} {path}: array {m.filename[:80]!r} says {stated:,} bytes of {dtype} but holds "
                            f"{m.file_size - f.tell():,}; not a readable .npz"
                        )
                    data = f.read(stated)
                    array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
                    arrays[m.filename[: -len(".npy")]] = array.copy()
            return arrays
    except UsageError:
        raise
    except _ARCHIVE_ERRORS as e:
        raise UsageError(f"{flag} {path}: not a readable .npz ({numpy_reason(e)[:200]})") from None


def _match_arrays(arrays: dict, functions, values_of, flag: str, what: str) -> dict:
    """Maps `<function>.<name>` keys (or `<name>` when the model has one
    function) to each function's values, strictly: every key must match, and
    a function gets all of its values or none."""
    single = len(functions) == 1
    out, used = {}, set()
    for f in functions:
        found = []
        for i, v in enumerate(values_of(f)):
            positional = f"{what[:-1]}{i}"  # input0, output1, ...: the names of models without names
            keys = (
                f"{f.name}.{v.name}",
                f"{f.name}.{positional}",
                v.name if single else None,
                positional if single else None,
            )
            for key in keys:
                if key is not None and key in arrays:
                    found.append(arrays[key])
                    used.add(key)
                    break
            else:
                found.append(None)
        present = [x is not None for x in found]
        if all(present):
            out[f.name] = found
        elif any(present):
            missing = [f"{f.name}.{v.name}" for v, x in zip(values_of(f), found) if x is None]
            raise UsageError(f"{flag}: has some {what} of @{f.name} but not {', '.join(missing)}")
    unknown = sorted(set(arrays) - used)
    if unknown:
        names = [f"{f.name}.{v.name}" for f in functions for v in values_of(f)]
        raise UsageError(
            f"{flag}: key {unknown[0]!r} names no {what[:-1]} of the model (expected keys like {', '.join(names[:6])})"
        )
    return out


def load_inputs(path: Path, functions, flag: str = "--inputs") -> dict:
    """An .npz with arrays named `<function>.<input>` (or `<input>` when the
    model has one function); function -> list of arrays, each checked
    against the input's type and shape."""
    out = _match_arrays(_load_npz(Path(path), flag), functions, lambda f: f.inputs, f"{flag} {path}", "inputs")
    for f in functions:
        if f.name not in out and f.inputs:
            raise UsageError(
                f"{flag} {path}: has no inputs for @{f.name} (add {', '.join(f'{f.name}.{v.name}' for v in f.inputs)})"
            )
        if f.name in out and all(v.is_static for v in f.inputs):
            try:
                out[f.name] = check_inputs(f, out[f.name])
            except UsageError as e:
                raise UsageError(f"{flag} {path}: {e}") from None
    return out


def load_expected(path: Path, functions) -> dict:
    """Reference outputs: `<function>.<output>` (or `<output>`); function -> list."""
    out = _match_arrays(
        _load_npz(Path(path), "--expected"), functions, lambda f: f.outputs, f"--expected {path}", "outputs"
    )
    if not out:
        raise UsageError(f"--expected {path}: holds no output of the model")
    return out
