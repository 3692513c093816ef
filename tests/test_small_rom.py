"""Boards whose code memory is smaller than a model's constants (issue 22):
the runner of `ireegen run`, parity and emit's verification puts the
constants in the board's larger memory (cbuild/baremetal.py's BOARDS: DDR on
the Cortex-M55's mps3-an547, PSRAM on the MPS2 boards), and a program that
fits no memory of the board is refused in one line.  The model is the MLPerf
Tiny autoencoder (1.06 MB of float weights), run against ONNX Runtime."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from test_firmware import _require_tools

from ireegen.cbuild import baremetal
from ireegen.cbuild.native_run import build_runner
from ireegen.common.errors import UsageError
from ireegen.config.modes import make_config
from ireegen.emit import emit

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import mlperf_tiny_models as mt  # noqa: E402


@pytest.fixture(scope="module")
def autoencoder(tmp_path_factory):
    import onnx

    path = tmp_path_factory.mktemp("ae") / "autoencoder.onnx"
    onnx.save(mt.build("autoencoder"), path)
    x = mt.sample_input("autoencoder")
    expected = ort.InferenceSession(str(path)).run(None, {"input": x})[0]
    return path, x, expected


def _section_address(cc_prefix: str, program: Path, section: str) -> int | None:
    out = subprocess.run([f"{cc_prefix}objdump", "-h", str(program)], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) > 4 and parts[1] == section:
            return int(parts[3], 16)
    return None


def test_m55_model_larger_than_the_itcm_emits_verifies_and_runs(tmp_path, autoencoder):
    _require_tools()
    path, x, expected = autoencoder
    assert path.stat().st_size > 2 * baremetal.BOARDS["mps3-an547"].rom.size
    proc = run_cli(
        "emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless", "--target-cpu", "cortex-m55"
    )
    assert proc.returncode == 0, proc.stderr
    assert "verified against async" in proc.stdout
    np.save(tmp_path / "x.npy", x)
    proc = run_cli(
        "run", tmp_path / "out", "--function", "autoencoder", "--input=@" + str(tmp_path / "x.npy"),
        "--output=@" + str(tmp_path / "y.npy"), "--build-dir", tmp_path / "build",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-4, atol=1e-5)
    ddr = baremetal.BOARDS["mps3-an547"].more[0]
    program = tmp_path / "build" / "autoencoder_runner"
    assert _section_address("arm-none-eabi-", program, baremetal.CONSTANTS_SECTION) == ddr.origin


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m33"])
def test_mps2_boards_move_constants_to_psram(tmp_path, autoencoder, monkeypatch, cpu):
    """The constants fit the MPS2 boards' 4 MiB code memory; shrunk to 512
    KiB in the table, they move to the PSRAM, whose address qemu maps."""
    _require_tools()
    path, x, expected = autoencoder
    emit(path, tmp_path / "out", make_config("runtimeless", target_cpu=cpu), name="autoencoder")
    runner = build_runner(tmp_path / "out", tmp_path / "build")
    assert _section_address("arm-none-eabi-", runner.program, baremetal.CONSTANTS_SECTION) is None
    machine = runner.toolchain.core.qemu_machine
    board = baremetal.BOARDS[machine]
    small = baremetal.Memory(board.rom.name, board.rom.origin, 512 * baremetal.KIB)
    monkeypatch.setitem(baremetal.BOARDS, machine, baremetal.Board(machine, small, board.ram, board.more))
    runner = build_runner(tmp_path / "out", tmp_path / "build-small")
    address = _section_address("arm-none-eabi-", runner.program, baremetal.CONSTANTS_SECTION)
    assert address == board.more[0].origin
    (y,), _ = runner.call("autoencoder", [x])
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def test_a_program_that_fits_no_memory_is_refused_in_one_line(tmp_path, autoencoder, monkeypatch):
    _require_tools()
    path, _, _ = autoencoder
    board = baremetal.BOARDS["mps3-an547"]
    tiny = baremetal.Memory("DDR", board.more[0].origin, 256 * baremetal.KIB)
    monkeypatch.setitem(baremetal.BOARDS, board.machine, baremetal.Board(board.machine, board.rom, board.ram, (tiny,)))
    with pytest.raises(UsageError) as e:
        emit(path, tmp_path / "out", make_config("runtimeless", target_cpu="cortex-m55"), name="autoencoder")
    message = str(e.value)
    assert isinstance(e.value, baremetal.DoesNotFit) and e.value.exit_code == 2
    assert "\n" not in message
    assert "mps3-an547" in message and "in ITCM 512 KiB" in message and "in DDR 256 KiB" in message
    assert not (tmp_path / "out").exists()
