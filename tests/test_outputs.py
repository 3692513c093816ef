"""The output directory is replaced as a whole or not at all: killed at every
phase of an emit, with read-only and immutable files in the old output, as a
mount point, interrupted during the compile, and by concurrent emits."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SAMPLES

from ireegen.cli import main
from ireegen.common.faults import POINTS
from ireegen.output.outputs import STAGING_PREFIX
from ireegen.output.ownership import record_written

SIMPLE = SAMPLES / "simple_mul" / "simple_mul.mlir"
MLP = SAMPLES / "mlp" / "mlp.mlir"
OLD = ("--executable-format", "embedded-elf")
NEW = ("--executable-format", "static-library")  # a different set of files


def emit(out, *flags, env=None, model=SIMPLE):
    return subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", str(model), "-o", str(out), *flags],
        capture_output=True,
        text=True,
        env=dict(os.environ, **(env or {})),
    )


def snapshot(out):
    return {p.name: p.read_bytes() for p in sorted(Path(out).iterdir()) if not p.name.startswith(".")}


def assert_consistent(out):
    """manifest.json, when present, lists exactly the files present, with
    their hashes; returns the manifest (or None)."""
    files = snapshot(out)
    if "manifest.json" not in files:
        return None
    manifest = json.loads(files.pop("manifest.json"))
    assert {f["path"] for f in manifest["files"]} == set(files)
    for f in manifest["files"]:
        assert hashlib.sha256(files[f["path"]]).hexdigest() == f["sha256"], f["path"]
    return manifest


def staging_dirs(out):
    return [p for p in Path(out).iterdir() if p.name.startswith(STAGING_PREFIX)]


@pytest.fixture(scope="module")
def old_and_new(tmp_path_factory):
    """The two complete outputs the crash tests go between."""
    base = tmp_path_factory.mktemp("ref")
    for which, flags in (("old", OLD), ("new", NEW)):
        assert emit(base / which, *flags).returncode == 0
    return snapshot(base / "old"), snapshot(base / "new")


def restore(out, files):
    """`files` in OUTDIR as an earlier emit there left them, with ireegen's
    record outside OUTDIR of having written them."""
    out.mkdir()
    for name, data in files.items():
        (out / name).write_bytes(data)
    record_written(out, {name: hashlib.sha256(data).hexdigest() for name, data in files.items()})


def tree(out):
    """Every entry under `out`, staging directories included: path -> bytes (None for a directory)."""
    return {
        p.relative_to(out).as_posix(): (None if p.is_dir() else p.read_bytes()) for p in sorted(Path(out).rglob("*"))
    }


@pytest.mark.parametrize("point", POINTS)
def test_killed_at_every_phase(tmp_path, old_and_new, point, capsys):
    old, new = old_and_new
    out = tmp_path / "out"
    restore(out, old)  # what an earlier emit left
    proc = emit(out, *NEW, env={"IREEGEN_FAULT": point})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # Right after the crash: never a manifest that lies.
    assert_consistent(out)
    # A reader neither recovers nor deletes: it says what happened.
    before = tree(out)
    status = main(["info", str(out)])
    if (out / "manifest.json").exists():
        assert status == 0
    else:
        assert status == 2 and "an emit into it was interrupted" in capsys.readouterr().err
    assert tree(out) == before
    # The next emit rolls an interrupted commit back (or keeps a finished
    # one) before anything else: killed right after, it leaves exactly that.
    assert emit(out, *NEW, env={"IREEGEN_FAULT": "after-staging"}).returncode == -signal.SIGKILL
    assert snapshot(out) == (new if point == "commit-done" else old)
    assert len(staging_dirs(out)) == 1  # the second emit's own
    if point == "commit-file-more":  # and the next emit works
        assert emit(out, *NEW).returncode == 0
        assert snapshot(out) == new and staging_dirs(out) == []


def test_killed_before_any_output_leaves_staging_that_next_emit_removes(tmp_path):
    out = tmp_path / "out"
    proc = emit(out, *NEW, env={"IREEGEN_FAULT": "after-compile"})
    assert proc.returncode == -signal.SIGKILL
    assert len(staging_dirs(out)) == 1 and assert_consistent(out) is None
    assert emit(out, *OLD).returncode == 0
    assert staging_dirs(out) == [] and assert_consistent(out)["executable_format"] == "embedded-elf"


def test_read_only_and_immutable_old_files(tmp_path, old_and_new):
    old, new = old_and_new
    out = tmp_path / "out"
    restore(out, old)
    (out / "simple_mul.c").chmod(0o444)
    assert emit(out, *NEW).returncode == 0  # replacing a read-only file needs a writable directory only
    assert snapshot(out) == new
    # An immutable file (chattr +i; root only) cannot be moved: the emit fails
    # cleanly and the previous output stays complete.
    if subprocess.run(["chattr", "+i", str(out / "simple_mul.h")], stderr=subprocess.DEVNULL).returncode != 0:
        pytest.skip("chattr +i not permitted here")
    try:
        proc = emit(out, *OLD)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert "cannot replace the previous output" in proc.stderr and proc.stderr.count("\n") == 1
        assert snapshot(out) == new and staging_dirs(out) == []
    finally:
        subprocess.run(["chattr", "-i", str(out / "simple_mul.h")])


def test_outdir_is_a_mount_point(tmp_path, old_and_new):
    old, new = old_and_new
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)], stderr=subprocess.DEVNULL
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        for flags, expected in ((OLD, old), (NEW, new)):
            proc = emit(mnt, *flags)
            assert proc.returncode == 0, proc.stderr
            assert snapshot(mnt) == expected
    finally:
        subprocess.run(["umount", str(mnt)])


def test_immutable_outdir_is_a_one_line_error(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    if subprocess.run(["chattr", "+i", str(out)], stderr=subprocess.DEVNULL).returncode != 0:
        pytest.skip("chattr +i not permitted here")
    try:
        proc = emit(out, *OLD)
    finally:
        subprocess.run(["chattr", "-i", str(out)])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "cannot write there" in proc.stderr and proc.stderr.count("\n") == 1


def _children(pid, command: str = ""):
    """The processes `pid` started (those running `command`, when given)."""
    out = subprocess.run(["ps", "-eo", "pid,ppid,comm"], stdout=subprocess.PIPE, text=True).stdout
    rows = [line.split() for line in out.splitlines()[1:]]
    return [int(r[0]) for r in rows if int(r[1]) == pid and (not command or r[2:] == [command])]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_signal_during_compile_stops_iree_compile(tmp_path, sig):
    out = tmp_path / "out"
    # The emit pauses once the compile is done, so that it is still running when the signal
    # comes, however soon the compile ends on a loaded machine: it must not end in exit 0.
    env = dict(os.environ, IREEGEN_FAULT="after-compile:sleep=60")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ireegen", "emit", str(MLP), "-o", str(out), "--execution-model", "inline-dynamic"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # SIGINT as a terminal delivers it, even when this test runs where it is ignored (a
        # non-interactive shell's background job), a disposition the emit would inherit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    compiles = []
    while not compiles and time.monotonic() < deadline and proc.poll() is None:
        compiles = _children(proc.pid, "iree-compile")
        time.sleep(0.02)
    assert compiles, "iree-compile never started"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err
    time.sleep(0.5)
    for pid in compiles:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2], (
            "iree-compile kept running"
        )
    if sig != signal.SIGKILL:
        assert proc.returncode in (128 + sig, 130, -sig)
        assert not out.exists()  # this emit created it and made nothing
    else:
        assert emit(out, *OLD).returncode == 0 and staging_dirs(out) == []


def test_concurrent_emits(tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, IREEGEN_FAULT="commit-file:sleep=0.3")
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ireegen",
                "emit",
                str(SIMPLE),
                "-o",
                str(out),
                "--name",
                f"model{i}",
                *(OLD if i % 2 else NEW),
            ],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(4)
    ]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    manifest = assert_consistent(out)
    assert manifest is not None and staging_dirs(out) == []
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


# ---------------------------------------------------------------------------
# Only what ireegen wrote is touched (issue 19, item 6): ownership.py.


def one_line_refusal(proc):
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    return proc.stderr


def test_foreign_manifest_is_never_trusted(tmp_path):
    """Another tool's manifest.json listing the user's files: emit refuses
    before compiling; nothing is deleted or overwritten."""
    out = tmp_path / "out"
    out.mkdir()
    files = {
        "manifest.json": json.dumps({"files": [{"path": "main.c"}, {"path": "CMakeLists.txt"}]}).encode(),
        "main.c": b"int main(void) { return 0; }\n",
        "CMakeLists.txt": b"project(mine C)\n",
    }
    for name, data in files.items():
        (out / name).write_bytes(data)
    err = one_line_refusal(emit(out, *OLD))
    assert "manifest.json is not ireegen's" in err
    assert snapshot(out) == files and staging_dirs(out) == []
    # A manifest.json that is a symlink is not ireegen's either (and is not followed).
    (out / "manifest.json").unlink()
    (out / "manifest.json").symlink_to(tmp_path / "elsewhere.json")
    assert "manifest.json is not ireegen's (a symbolic link)" in one_line_refusal(emit(out, *OLD))
    assert not (tmp_path / "elsewhere.json").exists()


def test_users_file_with_an_output_name_is_not_overwritten(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "simple_mul.c").write_text("/* mine */\n")
    err = one_line_refusal(emit(out, *OLD))
    assert "simple_mul.c is there and no ireegen manifest.json there lists it" in err
    assert snapshot(out) == {"simple_mul.c": b"/* mine */\n"}


def test_only_unchanged_files_are_replaced_or_deleted(tmp_path, old_and_new):
    old, new = old_and_new
    out = tmp_path / "out"
    restore(out, new)  # NEW has two files OLD has not
    stale = out / "simple_mul_executables.h"
    stale.write_bytes(stale.read_bytes() + b"// my note\n")
    assert emit(out, *OLD).returncode == 0
    # The edited stale file stays, unlisted; the unchanged one went.
    assert stale.read_bytes().endswith(b"// my note\n")
    assert not (out / "simple_mul_executables.o").exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["generator"] == "ireegen" and manifest["manifest_schema"] == 1
    assert {f["path"] for f in manifest["files"]} == set(old) - {"manifest.json"}
    # An edited file that emit would replace: refused, left as it is.
    source = out / "simple_mul.c"
    source.write_bytes(source.read_bytes() + b"// edited\n")
    err = one_line_refusal(emit(out, *OLD))
    assert "simple_mul.c is there and it was changed after ireegen wrote it" in err
    assert source.read_bytes().endswith(b"// edited\n")


def _plant_journal(out, replace: dict):
    """A leftover staging directory with ireegen's marks and a journal."""
    staging = out / f"{STAGING_PREFIX}999999-planted"
    (staging / ".old").mkdir(parents=True)
    (staging / ".owner").write_bytes(b"ireegen staging directory\n")
    (staging / ".journal.json").write_text(
        json.dumps({"generator": "ireegen", "manifest_schema": 1, "replace": replace, "remove": []})
    )
    return staging


def test_readers_never_recover_and_recovery_deletes_only_recorded_bytes(tmp_path):
    out = tmp_path / "out"
    assert emit(out, "--execution-model", "runtimeless").returncode == 0
    victim = out / "victim.txt"
    victim.write_text("the user's\n")
    _plant_journal(out, {"victim.txt": "0" * 64})
    import numpy as np
    from conftest import run_cli

    x = tmp_path / "x.npy"
    np.save(x, np.arange(4, dtype=np.float32))
    before = tree(out)
    for args in (
        ["info", out],
        ["run", out, "--function", "simple_mul", f"--input=@{x}", f"--input=@{x}"],
        ["size", out],
    ):
        proc = run_cli(*args)
        assert proc.returncode == 0, proc.stderr
        assert tree(out) == before, args
    # The next emit recovers; the journal's hash is not the victim's: it stays.
    assert emit(out, "--execution-model", "runtimeless").returncode == 0
    assert victim.read_text() == "the user's\n" and staging_dirs(out) == []


def test_planted_symlinks_never_lead_outside(tmp_path):
    out, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    assert emit(out, *OLD).returncode == 0
    (out / f"{STAGING_PREFIX}1-link").symlink_to(outside)
    dangling = out / f"{STAGING_PREFIX}2-dangling"
    dangling.mkdir()
    (dangling / ".owner").symlink_to(outside / "created-by-owner")
    (dangling / ".journal.json").symlink_to(outside / "journal")
    for args in (["info", str(out)], ["emit", str(SIMPLE), "-o", str(out), *NEW]):
        proc = subprocess.run([sys.executable, "-m", "ireegen", *args], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert list(outside.iterdir()) == [], args
    # Not ireegen's: left alone, not deleted either.
    assert (out / f"{STAGING_PREFIX}1-link").is_symlink() and (dangling / ".owner").is_symlink()


def _onnx_with_data(directory, location):
    onnx = pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = directory / "add.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, location=location, size_threshold=0)
    return path


def test_outputs_never_overwrite_inputs(tmp_path):
    """Emitting into the model's own directory, whose data file has the name
    of an output: refused before compiling, the data intact."""
    model = _onnx_with_data(tmp_path, "add_constants.bin")
    data = (tmp_path / "add_constants.bin").read_bytes()
    err = one_line_refusal(emit(tmp_path, "--execution-model", "runtimeless", model=model))
    assert "would write add_constants.bin over its external data file" in err
    assert (tmp_path / "add_constants.bin").read_bytes() == data
    # The verify inputs too (an .npz may have any name).
    out = tmp_path / "out"
    out.mkdir()
    import numpy as np

    inputs = out / "simple_mul.vmfb"
    with open(inputs, "wb") as f:
        np.savez(f, a=np.ones(4, np.float32), b=np.ones(4, np.float32))
    err = one_line_refusal(emit(out, "--verify-inputs", inputs))
    assert "would write simple_mul.vmfb over --verify-inputs" in err


@pytest.mark.parametrize("kind", ["dangling", "loop", "dangling-parent"])
def test_outdir_symlink_that_leads_nowhere_says_so(tmp_path, kind):
    link = tmp_path / "link"
    if kind == "loop":
        (tmp_path / "other").symlink_to(link)
        link.symlink_to(tmp_path / "other")
    else:
        link.symlink_to(tmp_path / "missing")
    out = link / "sub" if kind == "dangling-parent" else link
    err = one_line_refusal(emit(out, *OLD))
    assert ("symbolic link loop" if kind == "loop" else "a dangling symbolic link") in err
    assert f"{link} is a" in err and "File exists" not in err


def test_planted_manifest_cannot_make_emit_delete_user_files(tmp_path):
    """A manifest.json with ireegen's marker listing the user's own files
    with their true sha256 is no proof: only ireegen's record outside OUTDIR
    lets a stale file go (output/ownership.py)."""
    out = tmp_path / "out"
    out.mkdir()
    users = {"LICENSE": b"MIT License\n", "main.c": b"int main(void) { return 0; }\n"}
    for name, data in users.items():
        (out / name).write_bytes(data)
    planted = {
        "generator": "ireegen",
        "manifest_schema": 1,
        "files": [{"path": n, "sha256": hashlib.sha256(d).hexdigest(), "role": "header"} for n, d in users.items()],
    }
    (out / "manifest.json").write_text(json.dumps(planted))
    assert emit(out, *OLD).returncode == 0
    for name, data in users.items():
        assert (out / name).read_bytes() == data
    # The same names after a real emit there: ireegen's record lists only
    # what it wrote, so the user's files still stay on the next emit.
    assert emit(out, *NEW).returncode == 0
    for name, data in users.items():
        assert (out / name).read_bytes() == data
