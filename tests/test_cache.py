"""`ireegen emit --cache URL` against a real nginx WebDAV server: misses
upload, hits write byte-identical outputs without compiling, and every
fault (corrupt blob, truncated entry, unreachable server) is a warning and
a local build.  Needs Debian's nginx (.ci/run installs it)."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cache_server import (
    NGINX,
    free_port,
    hostile_cache,
    logging_compiler,
    nginx_cache,
    put_entry,
    read_entry,
    rewrite_manifest,
)
from conftest import SAMPLES

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx)")

MODEL = SAMPLES / "simple_mul" / "simple_mul.mlir"
# A writer's and a trusting reader's cache key (docs/cache.md: who can poison what).
KEY = "tests-cache-key-0123456789abcdef"
SIGNED = {"IREEGEN_CACHE_KEY": KEY}


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


def checkout(root: Path, name: str = "simple_mul.mlir", model: Path = MODEL) -> Path:
    """A copy of the model in its own directory, as another checkout has it."""
    root.mkdir(parents=True)
    shutil.copy(model, root / name)
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
    args = ("--cache", cache.url)
    first = emit(checkout(tmp_path / "a" / "src"), tmp_path / "a" / "out", compiler_log, *args, env=SIGNED)
    assert "from the cache" not in first.stdout and first.compiles > 0
    assert first.stderr == ""
    puts = cache.puts()
    assert {r[1].split("/")[1] for r in puts} == {"ac", "cas"}
    second = emit(checkout(tmp_path / "b" / "x" / "y"), tmp_path / "b" / "out", compiler_log, *args, env=SIGNED)
    assert f"from the cache at {cache.url}, signed (verified against async" in second.stdout, second.stdout
    assert second.compiles == 0 and second.stderr == ""
    assert tree(tmp_path / "a" / "out") == tree(tmp_path / "b" / "out")
    assert cache.puts() == puts  # the hit uploaded nothing
    # Without the key the same entry is rebuilt here: its compile without the reference's, not called verified.
    third = emit(checkout(tmp_path / "c"), tmp_path / "c" / "out", compiler_log, *args)
    assert f"from the cache at {cache.url}, rebuilt here with the same bytes (not verified here" in third.stdout
    assert "verified against" not in third.stdout and 0 < third.compiles < first.compiles and third.stderr == ""
    assert tree(tmp_path / "a" / "out") == tree(tmp_path / "c" / "out") and cache.puts() == puts


def test_the_environment_variable_and_cmake_style_reuse(cache, compiler_log, tmp_path):
    env = {"IREEGEN_CACHE": cache.url + "/", **SIGNED}
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
def test_cmake_builds_of_two_checkouts_share_the_cache(cache, compiler_log, tmp_path, monkeypatch):
    from test_cmake import ADD, SIMPLE, Project

    monkeypatch.setenv("IREEGEN_CACHE_KEY", KEY)  # the emits inherit the build's environment
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
    emit(onnx_checkout(tmp_path / "a"), tmp_path / "out1", compiler_log, *args, env=SIGNED)
    hit = emit(onnx_checkout(tmp_path / "b" / "c"), tmp_path / "out2", compiler_log, *args, env=SIGNED)
    assert "from the cache" in hit.stdout and hit.compiles == 0
    assert tree(tmp_path / "out1") == tree(tmp_path / "out2")
    # The same .onnx beside other weights is another key.
    (tmp_path / "d").mkdir()
    shutil.copy(tmp_path / "a" / "mlp.onnx", tmp_path / "d" / "mlp.onnx")
    shutil.copy(onnx_checkout(tmp_path / "e", 0.5).with_name("mlp.weights"), tmp_path / "d" / "mlp.weights")
    miss = emit(tmp_path / "d" / "mlp.onnx", tmp_path / "out3", compiler_log, *args, env=SIGNED)
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


# -- who can poison what: a writer with the key, an attacker without it ------

MLP = SAMPLES / "mlp" / "mlp.mlir"


@pytest.fixture(scope="module")
def signed_entries(server, compiler_log, tmp_path_factory):
    """The store after a writer with the key emitted simple_mul and the MLP
    (both as `sm`, so the same file names): {model: (key, entry, files)}."""
    root = tmp_path_factory.mktemp("writer")
    server.clear()
    entries = {}
    for model in (MODEL, MLP):
        emit(checkout(root / model.stem, model.name, model), root / f"{model.stem}.out", compiler_log,
             "--no-verify", "--cache", server.url, env=SIGNED)  # fmt: skip
        key = json.loads((root / f"{model.stem}.out" / "manifest.json").read_text())["content_key"]
        entries[model.stem] = (key, *read_entry(server.store, key))
    return entries


def constructor(files: dict) -> dict:
    """sm.c with a constructor that leaves a mark when the output is built and run."""
    c = files["sm.c"] + b"\n__attribute__((constructor)) static void sm_pwn(void) { __builtin_trap(); }\n"
    return {**files, "sm.c": c}


def flipped_weights(files: dict) -> dict:
    """The constants with every float's sign flipped."""
    data = bytearray(files["sm_constants.bin"])
    for i in range(3, len(data), 4):
        data[i] ^= 0x80
    return {**files, "sm_constants.bin": bytes(data)}


ATTACKS = {
    # An attacker who can PUT rewrites simple_mul's entry consistently: new
    # blobs, their hashes in the entry and in a canonical manifest.
    "constructor": ("simple_mul", lambda entries: constructor(entries["simple_mul"][2])),
    "flipped-weights": ("mlp", lambda entries: flipped_weights(entries["mlp"][2])),
    # The MLP's output, signed by the writer, relabelled under simple_mul's key.
    "relabelled": ("simple_mul", lambda entries: entries["mlp"][2]),
}


@pytest.mark.parametrize("reader", ["unsigned", "signed"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_poisoned_entry_is_never_installed(cache, signed_entries, compiler_log, tmp_path, attack, reader):
    model_stem, poison = ATTACKS[attack]
    key, entry, files = signed_entries[model_stem]
    for k, e, f in signed_entries.values():
        put_entry(cache.store, k, e, f)
    poisoned = rewrite_manifest(poison(signed_entries), content_key=key)
    # The attacker keeps the writer's tag: it has no key to make another.
    put_entry(cache.store, key, entry, poisoned)
    model = MODEL if model_stem == "simple_mul" else MLP
    out = tmp_path / "out"
    proc = emit(checkout(tmp_path / "src", model.name, model), out, compiler_log, "--no-verify", "--cache",
                cache.url, env=SIGNED if reader == "signed" else None)  # fmt: skip
    assert "from the cache" not in proc.stdout
    (warning,) = proc.stderr.splitlines()
    if reader == "signed":
        assert warning.endswith("has a tag that does not match with the cache key; not installed, compiling")
    else:
        assert warning.endswith("is not what this emit builds; not installed, verifying the local build")
    assert tree(out) == {n: b for n, b in files.items()}, "OUTDIR is the local build"
    # The local build replaced the poisoned entry.
    assert read_entry(cache.store, key)[1] == files


def test_a_tag_made_with_another_key_is_refused(cache, signed_entries, compiler_log, tmp_path):
    key, entry, files = signed_entries["simple_mul"]
    put_entry(cache.store, key, entry, files)
    wrong = {"IREEGEN_CACHE_KEY": "another-key-of-the-same-length!!"}
    proc = emit(checkout(tmp_path / "src"), tmp_path / "out", compiler_log, "--no-verify", "--cache", cache.url,
                "--cache-mode", "read", env=wrong)  # fmt: skip
    assert "from the cache" not in proc.stdout and "tag that does not match" in proc.stderr


def test_a_key_file_signs_and_bad_keys_are_one_line(cache, compiler_log, tmp_path):
    (tmp_path / "key").write_text(KEY + "\n")
    args = ("--no-verify", "--cache", cache.url, "--cache-key-file", tmp_path / "key")
    emit(checkout(tmp_path / "a"), tmp_path / "out1", compiler_log, *args)
    hit = emit(checkout(tmp_path / "b"), tmp_path / "out2", compiler_log, *args)
    assert ", signed (not verified: --no-verify)" in hit.stdout and hit.compiles == 0
    (tmp_path / "short").write_text("abc\n")
    os.mkfifo(tmp_path / "fifo")
    for bad, message in [
        (["--cache-key-file", tmp_path / "short"], "a cache key has at least 16 bytes"),
        (["--cache-key-file", tmp_path / "fifo"], "the cache key must be a regular file"),
        (["--cache-key-file", tmp_path / "none"], "cannot read the cache key"),
        (["--cache-timeout", "0"], "--cache-timeout 0.0: expected a positive number"),
    ]:
        proc = subprocess.run(
            [sys.executable, "-m", "ireegen", "emit", str(MODEL), "-o", str(tmp_path / "x"), "--cache", cache.url]
            + list(map(str, bad)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and message in proc.stderr, proc.stderr


# -- the cached manifest: every field checked before OUTDIR is written -------


def _lookup(cache_url, key, entry, **options):
    from ireegen.output.cache import Cache

    names = [f["path"] for f in entry["files"] if f["path"] != "manifest.json"]
    expect = {"source": entry["source"], "verify": entry["verify"]}
    return Cache(cache_url, **options).lookup(key, names, expect, "sm")


BAD_MANIFESTS = {
    "name missing": lambda m: m.pop("name"),
    "files not a list": lambda m: m.update(files={"sm.c": "x"}),
    "a file path outside": lambda m: m["files"][0].update(path="../../evil.c"),
    "a hash not hex": lambda m: m["files"][0].update(sha256="Z" * 64),
    "verification a string": lambda m: m.update(verification="yes"),
    "error not a number": lambda m: m.update(
        verification={"verified": True, "functions": {"f": {"outputs": {"o": {"max_abs_error": "0"}}}}}
    ),
    "another output name": lambda m: m.update(name="other"),
}


@pytest.mark.parametrize("damage", sorted(BAD_MANIFESTS))
def test_a_bad_cached_manifest_is_one_warning(cache, signed_entries, capsys, damage):
    key, entry, files = signed_entries["simple_mul"]
    manifest = json.loads(files["manifest.json"])
    BAD_MANIFESTS[damage](manifest)
    bad = {**files, "manifest.json": (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()}
    put_entry(cache.store, key, entry, bad)
    assert _lookup(cache.url, key, entry) is None
    (warning,) = capsys.readouterr().err.splitlines()
    assert f"the manifest of {key[:12]} is unusable (" in warning and warning.endswith("); compiling")


def test_server_text_is_printed_without_control_characters(cache, signed_entries, compiler_log, tmp_path):
    """A writer's not_exercised record with an escape sequence and a newline
    (installed from a rebuilt hit: it is the writer's text) prints escaped."""
    key, entry, files = signed_entries["simple_mul"]
    manifest = json.loads(files["manifest.json"])
    manifest["verification"] = {"verified": True, "not_exercised": {"predict\x1b[31m\nX": "why\x07"}}
    put_entry(cache.store, key, entry, {**files, "manifest.json": (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()})  # fmt: skip
    proc = emit(checkout(tmp_path / "src"), tmp_path / "out", compiler_log, "--no-verify", "--cache", cache.url)
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout + proc.stderr
    assert len(proc.stdout.splitlines()) == 1


# -- a misbehaving server: deadlines, caps, redirects, credentials -----------


@pytest.fixture
def hostile():
    with hostile_cache() as h:
        yield h


ENTRY = {"source": {"file": "m.mlir", "sha256": "0" * 64}, "verify": {"enabled": False}}


def _hostile_lookup(url, key="k" * 64, **options):
    from ireegen.output.cache import Cache

    return Cache(url, **options).lookup(key, ["sm.c"], ENTRY, "sm")


def test_a_server_that_drips_trips_the_total_deadline(hostile, capsys):
    hostile.answer("/ac/", "drip", interval=0.2)  # each byte well inside any per-read timeout
    start = time.monotonic()
    assert _hostile_lookup(hostile.url, deadline=1.0) is None
    assert time.monotonic() - start < 3
    (warning,) = capsys.readouterr().err.splitlines()
    assert warning == f"ireegen: warning: cache {hostile.url} is unreachable (no answer within 1 s); compiling locally"


def test_an_endless_body_stops_at_the_cap(hostile, capsys):
    import resource

    hostile.answer("/ac/", "endless")
    assert _hostile_lookup(hostile.url) is None
    assert "is unusable (too long); compiling" in capsys.readouterr().err
    # A blob: read to the size its entry lists, plus one byte.
    entry = {"ireegen_cache": 1, "content_key": "k" * 64, **ENTRY}
    entry["files"] = [{"path": p, "sha256": "a" * 64, "size": 1 << 20} for p in ("sm.c", "manifest.json")]
    hostile.answer("/ac/", "body", body=json.dumps(entry).encode())
    hostile.answer("/cas/", "endless")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert _hostile_lookup(hostile.url, deadline=5.0) is None
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 << 10  # kB
    (warning,) = capsys.readouterr().err.splitlines()
    assert "sm.c of kkkkkkkkkkkk is longer than the 1048576 bytes its entry lists" in warning
    # The cap on a whole entry.
    assert _hostile_lookup(hostile.url, max_bytes=1 << 20) is None
    assert "lists more than the 1048576 bytes --cache-max-bytes allows" in capsys.readouterr().err


def test_a_redirect_to_another_origin_is_not_followed(hostile, capsys):
    with hostile_cache() as elsewhere:
        hostile.answer("/ac/", "redirect", to=f"{elsewhere.url}/steal?x")
        url = hostile.url.replace("http://", "http://alice:s3cr%23t@")
        assert _hostile_lookup(url) is None
        assert elsewhere.seen == []  # nothing reached the other origin
    (warning,) = capsys.readouterr().err.splitlines()
    assert f"a redirect to another origin, {elsewhere.url}/steal?x, not followed" in warning
    assert "s3cr" not in warning and "alice" not in warning
    # On the same origin it is followed, with the credentials.
    hostile.seen.clear()
    hostile.answer("/ac/", "redirect", to="/moved/ac/x")
    assert _hostile_lookup(url) is None
    assert [(m, p) for m, p, _ in hostile.seen] == [("GET", f"/ac/{'k' * 64}"), ("GET", "/moved/ac/x")]
    assert all(h.get("Authorization") == "Basic YWxpY2U6czNjciN0" for _, _, h in hostile.seen)


@pytest.mark.parametrize(
    "url",
    [
        "http://alice:s3cr#t@127.0.0.1:9/",
        "http://alice:s3cr/t@127.0.0.1:9/",
        "http://alice:s3cr?t@127.0.0.1:9/",
        "http://alice:s3cret@[::1:9/",
        "http://[::1/",
        "http://alice:s3cret@127.0.0.1:port/",
    ],
)
def test_a_malformed_url_is_one_line_without_the_password(tmp_path, url):
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", str(MODEL), "-o", str(tmp_path / "out"), "--cache", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("ireegen: error: --cache ") and "s3cr" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_emit_goes_on_without_a_dripping_cache(hostile, compiler_log, tmp_path):
    hostile.answer("/", "drip", interval=0.3)
    start = time.monotonic()
    proc = emit(checkout(tmp_path / "src"), tmp_path / "out", compiler_log, "--no-verify", "--cache", hostile.url,
                "--cache-timeout", "1")  # fmt: skip
    (warning,) = proc.stderr.splitlines()  # the upload does not try again
    assert warning.endswith("is unreachable (no answer within 1 s); compiling locally")
    assert proc.compiles > 0 and (tmp_path / "out" / "manifest.json").exists()
    assert time.monotonic() - start < 60
