"""`ireegen emit --cache URL` against a real nginx WebDAV server: misses
upload, hits write byte-identical outputs without compiling, and every
fault (corrupt blob, truncated entry, unreachable server) is a warning and
a local build.  Needs Debian's nginx (.ci/run installs it)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cache_server import NGINX, free_port, logging_compiler, nginx_cache
from conftest import SAMPLES

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx)")

MODEL = SAMPLES / "simple_mul" / "simple_mul.mlir"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with nginx_cache(tmp_path_factory.mktemp("nginx")) as s:
        yield s


@pytest.fixture
def cache(server):
    server.clear()
    (server.root / "access.log").write_text("")
    return server


@pytest.fixture(scope="module")
def compiler_log(tmp_path_factory):
    """An iree-compile that logs each compile (cache_server.logging_compiler)."""
    return logging_compiler(tmp_path_factory.mktemp("compiler"))


def checkout(root: Path, name: str = "simple_mul.mlir") -> Path:
    """A copy of the model in its own directory, as another checkout has it."""
    root.mkdir(parents=True)
    shutil.copy(MODEL, root / name)
    return root / name


def emit(model, outdir, compiler_log, *args, env=None):
    wrapper, log = compiler_log
    log.write_text("")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("IREEGEN_CACHE")}
    environ.update(IREEGEN_IREE_COMPILE=str(wrapper), **(env or {}))
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", str(model), "-o", str(outdir), "--name", "sm"]
        + ["--execution-model", "runtimeless", *map(str, args)],
        capture_output=True,
        text=True,
        env=environ,
    )
    assert proc.returncode == 0, proc.stderr
    proc.compiles = len(log.read_text().splitlines())
    return proc


def tree(outdir: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(outdir.iterdir())}


def test_miss_uploads_then_another_checkout_hits_byte_identical(cache, compiler_log, tmp_path):
    first = emit(checkout(tmp_path / "a" / "src"), tmp_path / "a" / "out", compiler_log, "--cache", cache.url)
    assert "from the cache" not in first.stdout and first.compiles > 0
    assert first.stderr == ""
    puts = cache.puts()
    assert {r[1].split("/")[1] for r in puts} == {"ac", "cas"}
    second = emit(checkout(tmp_path / "b" / "x" / "y"), tmp_path / "b" / "out", compiler_log, "--cache", cache.url)
    assert f"from the cache at {cache.url}" in second.stdout, second.stdout
    assert "verified against async" in second.stdout
    assert second.compiles == 0 and second.stderr == ""
    assert tree(tmp_path / "a" / "out") == tree(tmp_path / "b" / "out")
    assert cache.puts() == puts  # the hit uploaded nothing


def test_the_environment_variable_and_cmake_style_reuse(cache, compiler_log, tmp_path):
    env = {"IREEGEN_CACHE": cache.url + "/"}
    emit(checkout(tmp_path / "a"), tmp_path / "out1", compiler_log, "--no-verify", env=env)
    hit = emit(checkout(tmp_path / "b"), tmp_path / "out2", compiler_log, "--no-verify", env=env)
    assert "from the cache" in hit.stdout and hit.compiles == 0
    assert "not verified" in hit.stdout


def test_other_verification_options_or_file_name_are_a_miss(cache, compiler_log, tmp_path):
    emit(checkout(tmp_path / "a"), tmp_path / "out1", compiler_log, "--no-verify", "--cache", cache.url)
    # A verified emit does not take an unverified output.
    verified = emit(checkout(tmp_path / "b"), tmp_path / "out2", compiler_log, "--cache", cache.url)
    assert "from the cache" not in verified.stdout and verified.compiles > 0
    # The model's file name is in the generated banners, so another name is another output.
    renamed = emit(checkout(tmp_path / "c", "other.mlir"), tmp_path / "out3", compiler_log, "--cache", cache.url)
    assert "from the cache" not in renamed.stdout and renamed.compiles > 0
    assert b"from other.mlir" in (tmp_path / "out3" / "sm.h").read_bytes()


def test_a_corrupt_blob_is_a_warning_and_a_local_build(cache, compiler_log, tmp_path):
    emit(checkout(tmp_path / "a"), tmp_path / "good", compiler_log, "--no-verify", "--cache", cache.url)
    blob = max((cache.store / "cas").iterdir(), key=lambda p: p.stat().st_size)
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0x20  # one bit, same size
    blob.write_bytes(bytes(data))
    fallback = emit(checkout(tmp_path / "b"), tmp_path / "out", compiler_log, "--no-verify", "--cache", cache.url)
    assert "from the cache" not in fallback.stdout and fallback.compiles > 0
    warnings = fallback.stderr.splitlines()
    assert len(warnings) == 1 and "does not match its sha256; compiling" in warnings[0], fallback.stderr
    assert tree(tmp_path / "out") == tree(tmp_path / "good")
    # The local build put the blob back: the next checkout hits.
    again = emit(checkout(tmp_path / "c"), tmp_path / "out2", compiler_log, "--no-verify", "--cache", cache.url)
    assert "from the cache" in again.stdout and again.stderr == ""
    assert tree(tmp_path / "out2") == tree(tmp_path / "good")


@pytest.mark.parametrize("damage", ["truncated", "missing-blob", "foreign-files", "huge-size"])
def test_a_bad_entry_is_a_miss_never_a_broken_outdir(cache, compiler_log, tmp_path, damage):
    emit(checkout(tmp_path / "a"), tmp_path / "good", compiler_log, "--no-verify", "--cache", cache.url)
    (entry,) = (cache.store / "ac").iterdir()
    if damage == "truncated":
        entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    elif damage == "missing-blob":
        next((cache.store / "cas").iterdir()).unlink()
    elif damage == "foreign-files":
        entry.write_text(entry.read_text().replace('"sm.c"', '"../../evil.c"'))
    else:  # a size no one should allocate
        data = json.loads(entry.read_text())
        data["files"][0]["size"] = 1 << 40
        entry.write_text(json.dumps(data))
    out = tmp_path / "out"
    fallback = emit(checkout(tmp_path / "b"), out, compiler_log, "--no-verify", "--cache", cache.url)
    assert "from the cache" not in fallback.stdout and fallback.compiles > 0
    assert len(fallback.stderr.splitlines()) == 1 and "compiling" in fallback.stderr, fallback.stderr
    assert tree(out) == tree(tmp_path / "good")
    assert not (tmp_path / "evil.c").exists()


def test_an_unreachable_server_is_a_warning_and_a_local_build(compiler_log, tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    proc = emit(checkout(tmp_path / "a"), tmp_path / "out", compiler_log, "--no-verify", "--cache", url)
    assert proc.compiles > 0 and (tmp_path / "out" / "manifest.json").exists()
    (warning,) = proc.stderr.splitlines()  # one warning: the upload does not try again
    assert warning.startswith(f"ireegen: warning: cache {url} is unreachable") and "compiling locally" in warning


def test_read_mode_never_uploads(cache, compiler_log, tmp_path):
    env = {"IREEGEN_CACHE_MODE": "read"}
    emit(checkout(tmp_path / "a"), tmp_path / "out1", compiler_log, "--no-verify", "--cache", cache.url, env=env)
    assert cache.puts() == [] and not (cache.store / "ac").exists()
    # A producer fills the cache; the read-only consumer hits.
    emit(checkout(tmp_path / "b"), tmp_path / "out2", compiler_log, "--no-verify", "--cache", cache.url)
    puts = len(cache.puts())
    hit = emit(
        checkout(tmp_path / "c"),
        tmp_path / "out3",
        compiler_log,
        "--no-verify",
        "--cache",
        cache.url,
        "--cache-mode",
        "read",
    )
    assert "from the cache" in hit.stdout and len(cache.puts()) == puts


def test_credentials_never_reach_a_message_or_the_manifest(cache, compiler_log, tmp_path):
    url = cache.url.replace("http://", "http://alice:s3cret@")
    first = emit(checkout(tmp_path / "a"), tmp_path / "out1", compiler_log, "--no-verify", "--cache", url)
    hit = emit(checkout(tmp_path / "b"), tmp_path / "out2", compiler_log, "--no-verify", "--cache", url)
    down = emit(
        checkout(tmp_path / "c"),
        tmp_path / "out3",
        compiler_log,
        "--no-verify",
        env={"IREEGEN_CACHE": f"http://alice:s3cret@127.0.0.1:{free_port()}"},
    )
    assert "from the cache at http://***@127.0.0.1" in hit.stdout
    assert "http://***@127.0.0.1" in down.stderr
    for proc in (first, hit, down):
        assert "s3cret" not in proc.stdout + proc.stderr
    for out in ("out1", "out2", "out3"):
        assert all(b"s3cret" not in data for data in tree(tmp_path / out).values())
    # The credentials went to the server as HTTP basic auth.
    assert {r[3] for r in cache.requests()} == {"alice"}


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/", "127.0.0.1:9090", "http://"])
def test_a_bad_url_is_refused_before_compiling(tmp_path, url):
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", str(MODEL), "-o", str(tmp_path / "out"), "--cache", url],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.startswith("ireegen: error: --cache ")
    assert len(proc.stderr.splitlines()) == 1 and not (tmp_path / "out").exists()


@pytest.mark.skipif(not shutil.which("cmake") or not shutil.which("ninja"), reason="needs cmake and ninja")
def test_cmake_builds_of_two_checkouts_share_the_cache(cache, compiler_log, tmp_path):
    from test_cmake import ADD, SIMPLE, Project

    wrapper, log = compiler_log
    outputs = []
    for checkout_dir in ("alice", "bob/work"):
        log.write_text("")
        p = Project(tmp_path / checkout_dir, "Ninja", {"m1": SIMPLE, "m2": ADD})
        p.write({m: "EXECUTION_MODEL runtimeless VERIFY OFF" for m in ("m1", "m2")})
        proc = p.configure(f"-DIREEGEN_CACHE={cache.url}", f"-DIREEGEN_IREE_COMPILE={wrapper}")
        assert proc.returncode == 0, proc.stdout
        build, generated = p.build()
        assert generated == ["m1", "m2"]
        outputs.append((build.stdout.count(f"from the cache at {cache.url}"), len(log.read_text().splitlines())))
        for m in ("m1", "m2"):
            outputs.append(tree(p.build_dir / "ireegen" / m))
    assert outputs[0][0] == 0 and outputs[0][1] >= 2  # alice compiled both
    assert outputs[3] == (2, 0)  # bob compiled nothing
    assert outputs[1:3] == outputs[4:6]  # and got the same bytes
    # A read-only consumer (IREEGEN_CACHE_MODE) compiles what is missing and uploads nothing.
    p = Project(tmp_path / "carol", "Ninja", {"m3": ADD})
    p.write({"m3": "EXECUTION_MODEL runtimeless VERIFY OFF"})
    puts = len(cache.puts())
    configure = p.configure(f"-DIREEGEN_CACHE={cache.url}", "-DIREEGEN_CACHE_MODE=read")
    assert configure.returncode == 0, configure.stdout
    assert p.build()[1] == ["m3"] and len(cache.puts()) == puts
    assert (p.build_dir / "ireegen" / "m3" / "manifest.json").exists()


@pytest.mark.parametrize(
    "env,message",
    [
        (
            {"IREEGEN_CACHE": "ftp://u:pw@h/"},
            "ireegen: error: IREEGEN_CACHE ftp://***@h/: expected an http:// or https:// URL",
        ),
        (
            {"IREEGEN_CACHE": "http://127.0.0.1:1", "IREEGEN_CACHE_MODE": "write"},
            "ireegen: error: IREEGEN_CACHE_MODE write: expected one of readwrite, read",
        ),
    ],
)
def test_the_environment_is_named_when_it_is_at_fault(tmp_path, env, message):
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", str(MODEL), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert proc.returncode == 2 and proc.stderr.splitlines() == [message]


def test_onnx_external_data_hits_across_checkouts_and_new_weights_miss(cache, compiler_log, tmp_path):
    onnx = pytest.importorskip("onnx")
    from test_onnx import _save, mlp_model

    def onnx_checkout(d, weights_scale=1.0):
        d.mkdir(parents=True)
        model = mlp_model()
        for init in model.graph.initializer:
            arr = onnx.numpy_helper.to_array(init) * weights_scale
            init.CopyFrom(onnx.numpy_helper.from_array(arr.astype(arr.dtype), init.name))
        save = dict(save_as_external_data=True, all_tensors_to_one_file=True, location="mlp.weights", size_threshold=0)
        _save(model, d / "mlp.onnx", **save)
        return d / "mlp.onnx"

    args = ("--input-shape", "image=2x64", "--no-verify", "--cache", cache.url)
    emit(onnx_checkout(tmp_path / "a"), tmp_path / "out1", compiler_log, *args)
    hit = emit(onnx_checkout(tmp_path / "b" / "c"), tmp_path / "out2", compiler_log, *args)
    assert "from the cache" in hit.stdout and hit.compiles == 0
    assert tree(tmp_path / "out1") == tree(tmp_path / "out2")
    # The same .onnx beside other weights is another key.
    (tmp_path / "d").mkdir()
    shutil.copy(tmp_path / "a" / "mlp.onnx", tmp_path / "d" / "mlp.onnx")
    shutil.copy(onnx_checkout(tmp_path / "e", 0.5).with_name("mlp.weights"), tmp_path / "d" / "mlp.weights")
    miss = emit(tmp_path / "d" / "mlp.onnx", tmp_path / "out3", compiler_log, *args)
    assert "from the cache" not in miss.stdout and miss.compiles > 0


def test_a_missing_verify_inputs_file_is_refused_as_without_a_cache(cache, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", str(MODEL), "-o", str(tmp_path / "out"), "--cache", cache.url]
        + ["--verify-inputs", str(tmp_path / "nothere.npz")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "nothere.npz" in proc.stderr


def test_a_missing_external_data_file_is_refused_as_without_a_cache(cache, tmp_path):
    pytest.importorskip("onnx")
    from test_onnx import _save, mlp_model

    save = dict(save_as_external_data=True, all_tensors_to_one_file=True, location="mlp.weights", size_threshold=0)
    model = _save(mlp_model(), tmp_path / "mlp.onnx", **save)
    (tmp_path / "mlp.weights").unlink()
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", str(model), "-o", str(tmp_path / "out"), "--cache", cache.url],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        f"ireegen: error: {model}: its external data file mlp.weights is missing (looked in {tmp_path})"
    ]


def test_a_hit_touches_only_ireegens_files(cache, compiler_log, tmp_path):
    emit(checkout(tmp_path / "a"), tmp_path / "good", compiler_log, "--no-verify", "--cache", cache.url)
    # Someone else's manifest.json in OUTDIR: refused before the lookup, left as it was.
    out = tmp_path / "theirs"
    out.mkdir()
    (out / "manifest.json").write_text('{"tool": "not ireegen"}\n')
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", str(checkout(tmp_path / "b")), "-o", str(out), "--name", "sm"]
        + ["--execution-model", "runtimeless", "--no-verify", "--cache", cache.url],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert (out / "manifest.json").read_text() == '{"tool": "not ireegen"}\n' and len(list(out.iterdir())) == 1
    # A hit into an earlier output replaces it like a local emit, keeping a file of the user's.
    (tmp_path / "good" / "notes.txt").write_text("mine\n")
    hit = emit(checkout(tmp_path / "c"), tmp_path / "good", compiler_log, "--no-verify", "--cache", cache.url)
    assert "from the cache" in hit.stdout and (tmp_path / "good" / "notes.txt").read_text() == "mine\n"
