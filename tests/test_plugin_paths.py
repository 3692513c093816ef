"""The pytest fixture finds a relative model beside the test file, whatever
the current directory; the editable install's rewrite warning is filtered."""

import shutil
import subprocess
import sys

from conftest import SAMPLES

from ireegen.pytest_plugin import resolve_model_path


def test_relative_model_beside_the_test_file(tmp_path):
    tests = tmp_path / "project" / "tests"
    tests.mkdir(parents=True)
    shutil.copy(SAMPLES / "simple_mul" / "simple_mul.mlir", tests / "model.mlir")
    (tests / "test_user.py").write_text(
        "def test_model(ireegen_parity):\n    assert ireegen_parity('model.mlir', modes=['async']).agrees\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=elsewhere,
    )
    assert proc.returncode == 0, proc.stdout
    assert "1 passed" in proc.stdout


def test_resolution_rules(tmp_path, monkeypatch):
    test_file = tmp_path / "t" / "test_x.py"
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.mlir").write_text("")
    (tmp_path / "b.mlir").write_text("")
    monkeypatch.chdir(tmp_path)
    assert resolve_model_path("a.mlir", test_file) == tmp_path / "t" / "a.mlir"
    assert str(resolve_model_path("b.mlir", test_file)) == "b.mlir"  # only in the current directory
    assert resolve_model_path(tmp_path / "b.mlir", test_file) == tmp_path / "b.mlir"
