"""Benchmark: the shared output cache (docs/cache.md) at monorepo scale.

Generates N small models (distinct weights, so distinct content keys),
starts nginx (WebDAV) on 127.0.0.1, and builds them twice from two
checkouts at different paths: cold (empty cache, fresh build directory)
and warm (the cache the cold build filled, another fresh build directory).
For CMake (ireegen_add_model GENERATE_ONLY, -DIREEGEN_CACHE) and for Bazel
(ireegen_model, --remote_cache), each build reports its wall time, how
many times iree-compile ran (a logging wrapper counts them), and the
bytes that crossed the cache server (its access log).

    python benchmarks/cache.py [--models 50] [--jobs 2] [--skip-bazel] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from cache_server import logging_compiler, nginx_cache  # noqa: E402

MODEL = """\
func.func @scale_shift(%x: tensor<8xf32>) -> tensor<8xf32> {{
  %w = arith.constant dense<[{w}]> : tensor<8xf32>
  %b = arith.constant dense<[{b}]> : tensor<8xf32>
  %0 = arith.mulf %x, %w : tensor<8xf32>
  %1 = arith.addf %0, %b : tensor<8xf32>
  return %1 : tensor<8xf32>
}}
"""


def write_models(src: Path, n: int) -> list:
    names = []
    for i in range(n):
        w = ", ".join(f"{(i + 1) * 0.5 + j * 0.125:.4f}" for j in range(8))
        b = ", ".join(f"{i * 0.01 - j * 0.25:.4f}" for j in range(8))
        name = f"m{i:03d}"
        (src / f"{name}.mlir").write_text(MODEL.format(w=w, b=b))
        names.append(name)
    return names


def compiler_runs(log: Path) -> int:
    """iree-compile runs on a model (a verified runtimeless emit runs it
    twice: the emitted configuration and async, the reference)."""
    return len(log.read_text().splitlines()) if log.exists() else 0


def traffic(server, since: int) -> dict:
    reqs = server.requests()[since:]
    return {
        "requests": len(reqs),
        "bytes_down": sum(int(r[4]) for r in reqs if r[0] == "GET"),
        "bytes_up": sum(int(r[5]) for r in reqs if r[0] == "PUT"),
        "ac_hits": sum(1 for r in reqs if r[0] == "GET" and r[1].startswith("/ac/") and r[2] == "200"),
    }


def cmake_build(checkout: Path, names: list, server, wrapper, log, jobs: int) -> dict:
    src = checkout / "src"
    src.mkdir(parents=True)
    write_models(src, len(names))
    lines = ["cmake_minimum_required(VERSION 3.21)", "project(bench NONE)", "find_package(ireegen CONFIG REQUIRED)"]
    lines += [f"ireegen_add_model({n} SRC {n}.mlir EXECUTION_MODEL runtimeless GENERATE_ONLY)" for n in names]
    (src / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    cmake_dir = subprocess.run(
        [sys.executable, "-m", "ireegen", "--cmake-dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(
        ["cmake", "-G", "Ninja", "-S", src, "-B", checkout / "build", f"-Direegen_DIR={cmake_dir}"]
        + [f"-DIREEGEN_PYTHON_EXECUTABLE={sys.executable}", f"-DIREEGEN_CACHE={server.url}"]
        + [f"-DIREEGEN_IREE_COMPILE={wrapper}"],
        capture_output=True,
        check=True,
    )
    log.write_text("")
    since = len(server.requests())
    start = time.perf_counter()
    proc = subprocess.run(["cmake", "--build", checkout / "build", "-j", str(jobs)], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stdout[-3000:])
    return {
        "wall_s": round(wall, 1),
        "iree_compile_runs": compiler_runs(log),
        "emits_from_cache": proc.stdout.count("from the cache at"),
        **traffic(server, since),
    }


def bazel_build(checkout: Path, names: list, server, wrapper, log, jobs: int, user_root: Path) -> dict:
    shutil.copytree(ROOT / "bazel", checkout / "bazel")
    ws = checkout / "ws"
    ws.mkdir()
    write_models(ws, len(names))
    rules = ROOT / "samples" / "bazel"
    (ws / "WORKSPACE").write_text((rules / "WORKSPACE").read_text().replace("../../bazel", "../bazel"))
    (ws / ".bazelrc").write_text((rules / ".bazelrc").read_text())
    build = ['load("@ireegen//:defs.bzl", "ireegen_model")']
    build += [f'ireegen_model(name = "{n}", src = "{n}.mlir", execution_model = "runtimeless")' for n in names]
    (ws / "BUILD").write_text("\n".join(build) + "\n")
    startup = [f"--output_user_root={user_root}", "--host_jvm_args=-Xmx1g", "--max_idle_secs=60"]
    flags = [f"--jobs={jobs}", f"--@ireegen//:python={sys.executable}", f"--remote_cache={server.url}"]
    flags += [f"--action_env=IREEGEN_IREE_COMPILE={wrapper}"]
    if os.environ.get("PYTHONPATH"):
        flags.append(f"--action_env=PYTHONPATH={os.environ['PYTHONPATH']}")
    # The server's start and the analysis are not the cache's to win or lose.
    subprocess.run(["bazel", *startup, "build", *flags, "--nobuild", "//:all"], cwd=ws, capture_output=True)
    log.write_text("")
    since = len(server.requests())
    start = time.perf_counter()
    proc = subprocess.run(["bazel", *startup, "build", *flags, "//:all"], cwd=ws, capture_output=True, text=True)
    wall = time.perf_counter() - start
    subprocess.run(["bazel", *startup, "shutdown"], cwd=ws, capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return {"wall_s": round(wall, 1), "iree_compile_runs": compiler_runs(log), **traffic(server, since)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", type=int, default=50)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--skip-bazel", action="store_true")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    names = [f"m{i:03d}" for i in range(args.models)]
    results = {"models": args.models, "jobs": args.jobs}
    # The emits of both checkouts hold the key: uploads are signed and a
    # signed hit is installed without a rebuild (docs/cache.md).
    os.environ.setdefault("IREEGEN_CACHE_KEY", "ireegen-cache-benchmark-key-0001")
    with tempfile.TemporaryDirectory(prefix="ireegen-cache-bench-") as tmp:
        tmp = Path(tmp)
        wrapper, log = logging_compiler(tmp)
        with nginx_cache(tmp / "nginx") as server:
            results["cmake"] = {
                "cold": cmake_build(tmp / "cmake-a", names, server, wrapper, log, args.jobs),
                "warm": cmake_build(tmp / "elsewhere" / "cmake-b", names, server, wrapper, log, args.jobs),
            }
            print(json.dumps(results["cmake"]), file=sys.stderr)
            if not args.skip_bazel and shutil.which("bazel"):
                server.clear()
                user_root = tmp / "bazel-root"
                results["bazel"] = {
                    "cold": bazel_build(tmp / "bazel-a", names, server, wrapper, log, args.jobs, user_root),
                    "warm": bazel_build(
                        tmp / "elsewhere" / "bazel-b", names, server, wrapper, log, args.jobs, user_root
                    ),
                }
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
