"""Progress goes to stderr only on a terminal (or IREEGEN_PROGRESS=1)."""

import os
import pty
import subprocess
import sys

from conftest import SAMPLES

SIMPLE = SAMPLES / "simple_mul" / "simple_mul.mlir"


def test_quiet_when_not_a_terminal(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", SIMPLE, "-o", tmp_path / "o"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "IREEGEN_PROGRESS"},
    )
    assert proc.returncode == 0 and proc.stderr == ""


def test_phases_on_a_terminal(tmp_path):
    main_fd, child_fd = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", SIMPLE, "-o", tmp_path / "o"],
        stdout=subprocess.PIPE,
        stderr=child_fd,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "IREEGEN_PROGRESS"},
    )
    os.close(child_fd)
    err = os.read(main_fd, 65536).decode()
    os.close(main_fd)
    assert proc.returncode == 0
    for phase in ("compiling: simple_mul.mlir", "rendering", "writing"):
        assert phase in err, err
