"""A model reads nothing outside its own directory (issue 19, item 5): ONNX
external data locations that are absolute, climb out with `..`, or are
symlinks leaving the directory are refused in one line, with the same words
whether the target exists or not; a FIFO or a directory says what it is.
The loader, the content key and CMake's `ireegen resolve` share one rule."""

import os
import re

import numpy as np
import pytest
from conftest import ROOT, run_cli

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from ireegen.common.errors import UsageError  # noqa: E402
from ireegen.frontend.onnx_import import model_dependencies  # noqa: E402

WEIGHTS = np.arange(4, dtype=np.float32)


def add_model(location: str):
    """y = x + w, with w (4 floats) in external data at `location`."""
    w = numpy_helper.from_array(WEIGHTS, "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(WEIGHTS.nbytes))):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def write_model(directory, location, name="m.onnx"):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(add_model(location).SerializeToString())
    return path


def refusal(*args):
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0, proc.stderr
    return proc.stderr.strip()


@pytest.fixture
def secret(tmp_path):
    """A file outside the model's directory, 16 bytes like the weights."""
    path = tmp_path / "secret.bin"
    path.write_bytes(b"S" * WEIGHTS.nbytes)
    return path


def test_inside_data_is_read(tmp_path):
    model = write_model(tmp_path / "m", "sub/w.bin")
    (tmp_path / "m" / "sub").mkdir()
    (tmp_path / "m" / "sub" / "w.bin").write_bytes(WEIGHTS.tobytes())
    assert model_dependencies(model) == [model, tmp_path / "m" / "sub" / "w.bin"]
    proc = run_cli("info", model)
    assert proc.returncode == 0, proc.stderr
    # A link that stays inside is refused as a link, as onnx refuses it.
    (tmp_path / "m" / "link.bin").symlink_to("sub/w.bin")
    link = write_model(tmp_path / "m", "link.bin", "l.onnx")
    assert "link.bin is a symbolic link" in refusal("info", link)


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "dir-symlink"])
def test_outside_is_refused_with_the_same_words_whether_it_exists_or_not(tmp_path, secret, kind):
    messages = []
    for target in (secret, tmp_path / "nonexistent.bin"):
        d = tmp_path / f"{kind}-{target.stem}"
        if kind == "dotdot":
            location = os.path.relpath(target, d)
        elif kind == "absolute":
            location = str(target)
        elif kind == "symlink":
            location = "w.bin"
            d.mkdir()
            (d / "w.bin").symlink_to(target)
        else:  # a directory symlink on the way out
            location = f"up/{target.name}"
            d.mkdir()
            (d / "up").symlink_to(tmp_path)
        model = write_model(d, location)
        with pytest.raises(UsageError) as e:
            model_dependencies(model)  # what CMake's resolve lists as DEPENDS
        message = refusal("info", model)
        assert message.endswith(str(e.value))
        assert str(secret) not in message or kind == "absolute"
        messages.append(message.replace(target.name, "TARGET").replace(target.stem, "TARGET").replace(d.name, "D"))
    assert messages[0] == messages[1]
    word = "is absolute" if kind == "absolute" else "leads outside the model's directory"
    assert word in messages[0]


def test_fifo_and_directory_say_what_they_are(tmp_path):
    d = tmp_path / "m"
    fifo_model = write_model(d, "w.fifo", "fifo.onnx")
    os.mkfifo(d / "w.fifo")
    assert "w.fifo is a FIFO (named pipe), not a regular file" in refusal("info", fifo_model)
    dir_model = write_model(d, "wdir", "dir.onnx")
    (d / "wdir").mkdir()
    assert "wdir is a directory, not a regular file" in refusal("info", dir_model)
    missing = write_model(d, "gone.bin", "gone.onnx")
    assert "its external data file gone.bin is missing" in refusal("info", missing)


def test_control_characters_in_a_location_stay_one_line(tmp_path):
    model = write_model(tmp_path / "m", "../x\nINJECTED\r.bin")
    message = refusal("info", model)
    assert "leads outside" in message and "\\n" in message


def test_emit_and_resolve_refuse_before_any_work(tmp_path, secret):
    d = tmp_path / "m"
    d.mkdir()
    (d / "w.bin").symlink_to(secret)
    model = write_model(d, "w.bin")
    out = tmp_path / "out"
    message = refusal("emit", model, "-o", out, "--execution-model", "runtimeless")
    assert "leads outside the model's directory" in message and not out.exists()
    message = refusal("resolve", "--name", "m", "-o", out, "--src", model, "--execution-model", "runtimeless")
    assert "leads outside the model's directory" in message


def test_onnx_itself_refuses_an_outside_symlink(tmp_path, secret):
    """The second line of defence: onnx >= 1.21 (pyproject's floor;
    CVE-2026-27489) refuses an outside symlink on its own."""
    floors = re.findall(r'"onnx>=([0-9.]+)"', (ROOT / "pyproject.toml").read_text())
    assert floors and all(tuple(map(int, f.split("."))) >= (1, 21) for f in floors), floors
    d = tmp_path / "m"
    d.mkdir()
    (d / "w.bin").symlink_to(secret)
    model = add_model("w.bin")
    with pytest.raises(Exception) as e:
        onnx.external_data_helper.load_external_data_for_model(model, str(d))
    assert "symbolic link" in str(e.value), e.value
