"""`--kernels SPEC`: a user's own kernels, read and checked before any work.

SPEC is a JSON file (docs/kernels.md):

    {
      "ireegen_kernels": 1,
      "sources": ["scale_add.c"],
      "headers": ["scale_add.h"],
      "match": "scale_add.match.mlir",
      "cflags": {"*": ["-O2"], "cortex-m": ["-O3"]}
    }

Everything in it is untrusted data.  Every path is relative and stays inside
SPEC's directory (containment.contained_file, the rule external data
follows); the C flags are checked against a small grammar (`_FLAG_FORMS`):
a flag that could load code into the C compiler, write a file or read one
(-fplugin, -o, -specs, @file, -I) is refused.  Each error is one line that
names SPEC and the key at fault.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.resources import doc
from ireegen.common.untrusted import load_json, read_regular
from ireegen.config.cores import ARCH_ORDER

from .containment import contained_file, shown
from .parse_guard import MAX_NESTING, nesting_depth

FORMAT_VERSION = 1

# Target families a flag list may name, by what a triple's architecture is.
# "*" applies to every target; a family's own flags come after it.
FAMILIES = ("*", "x86_64", "aarch64", "riscv64", "armv7", "cortex-m", "riscv32")

# What a C flag may look like: optimization, preprocessor symbols, language
# standard, machine options, code generation switches and warnings.  No
# value holds a path, a comma (-Wl,...) or an `=` a driver reads files from.
_FLAG_FORMS = (
    r"-O(?:[0-3sgz]|fast)?",
    r"-[DU][A-Za-z_][A-Za-z0-9_]*(?:=[A-Za-z0-9_.+-]*)?",
    r"-std=[a-z0-9+]+",
    r"-m[a-z0-9][a-z0-9+._=-]*",
    r"-f(?:no-)?[a-z0-9][a-z0-9-]*",
    r"-W(?:no-)?[a-z0-9][a-z0-9=-]*",
)
_FLAG = re.compile("|".join(f"(?:{form})" for form in _FLAG_FORMS))
# -f options that run or write something beside the compile.
_FORBIDDEN_F = ("-fplugin", "-fdump", "-fprofile", "-fauto-profile", "-fcallgraph-info", "-fcoverage", "-fopt-info")

_KEYS = {
    "ireegen_kernels": "the format version, 1",
    "sources": "the kernels' C sources",
    "headers": "headers the sources include (the build depends on them)",
    "match": "the transform-dialect spec that rewrites matched ops into calls",
    "cflags": "C flags by target family",
}
_MAX_FILES = 256
_MAX_SPEC_BYTES = 1 << 20
_MAX_MATCH_BYTES = 64 << 20


@dataclass(frozen=True)
class KernelSpec:
    path: Path  # SPEC itself
    sources: tuple  # Paths of the C sources, inside SPEC's directory
    headers: tuple  # Paths of the headers
    match: Path  # the transform-dialect spec
    cflags: dict  # family -> tuple of flags

    @property
    def directory(self) -> Path:
        return self.path.parent

    def files(self) -> list:
        """Every file the kernels are made from: SPEC first."""
        return [self.path, self.match, *self.sources, *self.headers]

    def relative(self, path: Path) -> str:
        return path.relative_to(self.directory).as_posix()

    def flags_for(self, family: str) -> list:
        return [*self.cflags.get("*", ()), *self.cflags.get(family, ())]

    def to_json(self) -> dict:
        """SPEC by content, its files by name relative to SPEC (path-independent)."""
        return {
            "spec": {"name": self.path.name, "sha256": _sha256(self.path)},
            "files": [{"name": self.relative(f), "sha256": _sha256(f)} for f in self.files()[1:]],
        }


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def target_family(triple: str) -> str:
    """The key of a triple's flags in "cflags"."""
    arch = triple.split("-", 1)[0]
    if arch in ARCH_ORDER:
        return "cortex-m"
    if arch.startswith("armv7"):
        return "armv7"
    return arch


def _fail(spec: Path, key: str, what: str):
    raise UsageError(f'{spec}: "{key}": {what}')


def _file(spec: Path, key: str, value, suffixes: tuple) -> Path:
    if not isinstance(value, str):
        _fail(spec, key, f"expected a file name relative to {spec.name}, got {shown(json.dumps(value))[:80]}")
    if not value.endswith(suffixes):
        _fail(spec, key, f"{shown(value)} is not a {' or '.join(suffixes)} file")
    return contained_file(spec, value, f'"{key}" file', "kernel spec")


def _files(spec: Path, key: str, value, suffixes: tuple, required: bool) -> tuple:
    if value is None and not required:
        return ()
    if not isinstance(value, list) or (required and not value):
        _fail(spec, key, f"expected a {'non-empty ' if required else ''}list of file names")
    if len(value) > _MAX_FILES:
        _fail(spec, key, f"{len(value)} files; at most {_MAX_FILES}")
    paths = tuple(_file(spec, key, v, suffixes) for v in value)
    seen = set()
    for v, p in zip(value, paths):
        real = p.resolve()
        if real in seen:
            _fail(spec, key, f"{shown(v)} is listed twice")
        seen.add(real)
    return paths


def check_flag(spec: Path, key: str, flag) -> str:
    if not isinstance(flag, str):
        _fail(spec, key, f"expected C flags as strings, got {shown(json.dumps(flag))[:80]}")
    if not _FLAG.fullmatch(flag) or flag.startswith(_FORBIDDEN_F):
        _fail(
            spec,
            key,
            f"{shown(flag)}: not a C flag ireegen passes on (it takes -O, -D/-U, -std=, -m, -f and -W options "
            f"without paths; {doc('kernels.md')})",
        )
    return flag


def _cflags(spec: Path, value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail(spec, "cflags", 'expected an object: target family -> list of flags, e.g. {"*": ["-O2"]}')
    out = {}
    for family, flags in value.items():
        key = f"cflags.{family}"
        if family not in FAMILIES:
            _fail(spec, "cflags", f"{shown(family)}: not a target family; the families are {', '.join(FAMILIES)}")
        if not isinstance(flags, list):
            _fail(spec, key, "expected a list of flags")
        out[family] = tuple(check_flag(spec, key, f) for f in flags)
    return out


def load_kernel_spec(path) -> KernelSpec:
    """Reads and checks SPEC; every problem is a UsageError naming SPEC and the key."""
    spec = Path(path)
    if not str(path).strip():
        raise UsageError("--kernels: the kernel spec is an empty path")
    if spec.is_dir():
        raise UsageError(f"--kernels {spec}: is a directory; give the kernel spec file (JSON)")
    data = read_regular(spec, f"--kernels {spec}", _MAX_SPEC_BYTES)
    try:
        doc = load_json(data, f"{spec}: not a JSON kernel spec")
    except UsageError as e:
        if "nested" in str(e):
            raise UsageError(f"{spec}: not a kernel spec (JSON nested too deep)") from None
        raise
    if not isinstance(doc, dict):
        raise UsageError(f"{spec}: a kernel spec is a JSON object with the keys {', '.join(_KEYS)}")
    for key in doc:
        if key not in _KEYS:
            _fail(spec, shown(key)[:80], f"unknown key; the keys are {', '.join(_KEYS)}")
    version = doc.get("ireegen_kernels")
    if type(version) is not int or version != FORMAT_VERSION:
        _fail(spec, "ireegen_kernels", f"expected {FORMAT_VERSION} (the version of this format)")
    if "match" not in doc:
        _fail(spec, "match", "missing: the transform-dialect spec that rewrites ops into kernel calls")
    return KernelSpec(
        spec,
        _files(spec, "sources", doc.get("sources"), (".c",), True),
        _files(spec, "headers", doc.get("headers"), (".h",), False),
        _match(spec, doc["match"]),
        _cflags(spec, doc.get("cflags")),
    )


def _match(spec: Path, value) -> Path:
    """The match spec: MLIR text (UTF-8, no NUL) nested no deeper than the
    MLIR parser takes, checked before IREE reads it."""
    path = _file(spec, "match", value, (".mlir",))
    data = read_regular(path, f'{spec}: "match" file {shown(value)}', _MAX_MATCH_BYTES)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        _fail(spec, "match", f"{shown(value)} is not UTF-8 text (byte {e.start}); a match spec is MLIR text")
    if b"\0" in data:
        _fail(spec, "match", f"{shown(value)} holds a NUL byte; a match spec is MLIR text")
    depth = nesting_depth(data)
    if depth > MAX_NESTING:
        _fail(spec, "match", f"{shown(value)} nests {depth:,} levels deep; MLIR's parser takes at most {MAX_NESTING:,}")
    return path
