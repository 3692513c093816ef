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
    out.mkdir()
    for name, data in files.items():
        (out / name).write_bytes(data)


@pytest.mark.parametrize("point", POINTS)
def test_killed_at_every_phase(tmp_path, old_and_new, point):
    old, new = old_and_new
    out = tmp_path / "out"
    restore(out, old)  # what an earlier emit left
    proc = emit(out, *NEW, env={"IREEGEN_FAULT": point})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # Right after the crash: never a manifest that lies.
    assert_consistent(out)
    # The next reader rolls an interrupted commit back (or keeps a finished one).
    assert main(["info", str(out)]) == 0
    assert snapshot(out) == (new if point == "commit-done" else old)
    assert staging_dirs(out) == []
    if point == "commit-file-more":  # and the next emit works
        assert emit(out, *NEW).returncode == 0
        assert snapshot(out) == new


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


def _children(pid):
    out = subprocess.run(["ps", "-eo", "pid,ppid,comm"], stdout=subprocess.PIPE, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines()[1:] if int(line.split()[1]) == pid]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_signal_during_compile_stops_iree_compile(tmp_path, sig):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ireegen", "emit", str(MLP), "-o", str(out), "--execution-model", "inline-dynamic"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    compiles = []
    while not compiles and time.monotonic() < deadline and proc.poll() is None:
        compiles = _children(proc.pid)
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
