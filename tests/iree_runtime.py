"""The IREE runtime C SDK the tests of the VM modes link, built once.

Where it comes from, in order:
  1. IREERuntime_DIR: a runtime's lib/cmake/IREE, used as it is;
  2. IREE's runtime source archive (IREEGEN_IREE_SOURCE_ARCHIVE, else
     ../shared/iree-runtime/iree-runtime-src.tar.xz next to the checkout, as
     in CI): unpacked and built into IREEGEN_IREE_RUNTIME_CACHE (default
     ~/.cache/ireegen/iree-runtime), under a folder named by the archive's
     sha256, so a build tree is made once per archive and reused by every
     later session.  Configured as cmake/ireegenRuntime.cmake configures
     IREE; only the runtime targets the generated code links are built.
Without either, `runtime_dir()` is None and the tests skip with SKIP_REASON.
"""

import hashlib
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from ireegen.output.ownership import sha256_of

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ARCHIVE = ROOT.parent / "shared" / "iree-runtime" / "iree-runtime-src.tar.xz"
SKIP_REASON = (
    "no IREE runtime: set IREERuntime_DIR to a runtime's lib/cmake/IREE, or IREEGEN_IREE_SOURCE_ARCHIVE to "
    "IREE's runtime source archive (docs/iree-runtime.md)"
)

# IREE's options, as cmake/ireegenRuntime.cmake sets them for a FetchContent build.
IREE_OPTIONS = {
    "IREE_BUILD_COMPILER": "OFF",
    "IREE_BUILD_TESTS": "OFF",
    "IREE_BUILD_BENCHMARKS": "OFF",
    "IREE_BUILD_SAMPLES": "OFF",
    "IREE_BUILD_DOCS": "OFF",
    "IREE_BUILD_PYTHON_BINDINGS": "OFF",
    "IREE_BUILD_BINDINGS_TFLITE": "OFF",
    "IREE_BUILD_BINDINGS_TFLITE_JAVA": "OFF",
    "IREE_ENABLE_LIBBACKTRACE": "OFF",
    "IREE_HAL_DRIVER_VULKAN": "OFF",
    "IREE_HAL_DRIVER_DEFAULTS": "OFF",
    "IREE_HAL_EXECUTABLE_LOADER_DEFAULTS": "OFF",
    "IREE_HAL_EXECUTABLE_PLUGIN_DEFAULTS": "OFF",
    "IREE_HAL_DRIVER_LOCAL_SYNC": "ON",
    "IREE_HAL_DRIVER_LOCAL_TASK": "ON",
    "IREE_HAL_EXECUTABLE_LOADER_EMBEDDED_ELF": "ON",
    "IREE_HAL_EXECUTABLE_LOADER_SYSTEM_LIBRARY": "ON",
    "IREE_HAL_EXECUTABLE_LOADER_VMVX_MODULE": "ON",
}

# The runtime targets of every mode (ireegen.output.layout.runtime_targets)
# that have something to build; iree_vm_impl is what iree_vm_vm links.
BUILD_TARGETS = [
    "iree_base_base",
    "iree_vm_impl",
    "iree_hal_hal",
    "iree_modules_hal_types",
    "iree_vm_bytecode_module",
    "iree_modules_hal_hal",
    "iree_hal_drivers_local_sync_sync_driver",
    "iree_hal_drivers_local_task_task_driver",
    "iree_task_task",
    "iree_async_util_proactor_pool",
    "iree_async_async",
    "iree_modules_hal_inline_inline",
    "iree_modules_hal_loader_loader",
    "iree_hal_local_loaders_embedded_elf_loader",
    "iree_hal_local_loaders_static_library_loader",
    "iree_hal_local_loaders_vmvx_module_loader",
    "iree_modules_vmvx_vmvx",
]


def source_archive() -> Path | None:
    """IREE's runtime source archive, when there is one (set empty, the
    variable says there is none)."""
    named = os.environ.get("IREEGEN_IREE_SOURCE_ARCHIVE")
    if named is not None:
        return Path(named) if named else None
    return DEFAULT_ARCHIVE if DEFAULT_ARCHIVE.is_file() else None


def _cache_root() -> Path:
    named = os.environ.get("IREEGEN_IREE_RUNTIME_CACHE")
    return Path(named) if named else Path.home() / ".cache" / "ireegen" / "iree-runtime"


def _run(args, log: Path):
    with open(log, "a") as out:
        proc = subprocess.run([str(a) for a in args], stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"building the IREE runtime failed: {' '.join(map(str, args))}; see {log}")


def build_from_archive(archive: Path) -> Path:
    """The build tree of the runtime from `archive` (built now if it is not
    yet); returns its lib/cmake/IREE."""
    # The folder names the archive and what is built from it, so a build
    # with other options or targets is never taken for this one.
    recipe = hashlib.sha256(repr((sorted(IREE_OPTIONS.items()), BUILD_TARGETS)).encode()).hexdigest()
    home = _cache_root() / f"{sha256_of(archive)[:16]}-{recipe[:8]}"
    build = home / "build"
    config_dir = build / "lib" / "cmake" / "IREE"
    if (home / "built").is_file():
        return config_dir
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(home, filter="data")
    log = home / "build.log"
    options = [f"-D{k}={v}" for k, v in IREE_OPTIONS.items()]
    _run(["cmake", "-G", "Ninja", "-S", home / "iree", "-B", build, "-DCMAKE_BUILD_TYPE=Release", *options], log)
    _run(["cmake", "--build", build, "--target", *BUILD_TARGETS], log)
    (home / "built").write_text(str(archive) + "\n")
    return config_dir


def include_dir(config_dir: Path) -> Path | None:
    """IREE's runtime headers (runtime/src) beside a build tree made here."""
    src = config_dir.parents[3] / "iree" / "runtime" / "src"
    return src if (src / "iree" / "base" / "api.h").is_file() else None


def runtime_dir() -> Path | None:
    """IREERuntime_DIR for the tests, or None (they skip with SKIP_REASON)."""
    named = os.environ.get("IREERuntime_DIR")
    if named:
        return Path(named)
    archive = source_archive()
    if archive is None or not shutil.which("cmake") or not shutil.which("ninja"):
        return None
    return build_from_archive(archive)


if __name__ == "__main__":
    # .ci/run: build the runtime before the tests, and say how long it took.
    import time

    start = time.monotonic()
    found = runtime_dir()
    print(f"IREE runtime: {found or SKIP_REASON} ({time.monotonic() - start:.0f} s)")
