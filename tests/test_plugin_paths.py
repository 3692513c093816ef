"""The pytest plugin in a user's project: registered as the docs say, it
finds a relative model beside the test file whatever the current directory,
and an editable install of ireegen gives no PytestAssertRewriteWarning."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_user_pytest

from ireegen.pytest_plugin import resolve_model_path

# What `import pytest` needs, linked into the sandboxed site directory.
PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "pygments")


def test_relative_model_beside_the_test_file(tmp_path):
    tests = tmp_path / "project" / "tests"
    tests.mkdir(parents=True)
    shutil.copy(SAMPLES / "simple_mul" / "simple_mul.mlir", tests / "model.mlir")
    (tests / "test_user.py").write_text(
        "def test_model(ireegen_parity):\n    assert ireegen_parity('model.mlir', modes=['async']).agrees\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_user_pytest(tests, cwd=elsewhere)
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


def _editable_install(site: Path, extra_entry_points: dict) -> None:
    """`site` as scikit-build-core's editable install of this checkout leaves
    site-packages: the finder module `_editable_skbc_ireegen.py` that a .pth
    imports at start-up, and a dist-info with pyproject.toml's entry points
    whose RECORD lists the finder; pytest's own packages linked beside."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    groups = {"console_scripts": project.get("scripts", {}), **project.get("entry-points", {})}
    for group, entries in extra_entry_points.items():
        groups[group] = {**groups.get(group, {}), **entries}
    dist = site / f"ireegen-{project['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ireegen\nVersion: {project['version']}\n")
    (dist / "entry_points.txt").write_text(
        "".join(f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in e.items()) + "\n" for g, e in groups.items() if e)
    )
    finder = "_editable_skbc_ireegen"
    (site / f"{finder}.py").write_text(f"import sys\n\nsys.path.append({str(ROOT)!r})\n")
    (site / f"{finder}.pth").write_text(f"import {finder}\n")
    files = [f"{finder}.py", f"{finder}.pth", *(f"{dist.name}/{n}" for n in ("METADATA", "entry_points.txt", "RECORD"))]
    (dist / "RECORD").write_text("".join(f"{f},,\n" for f in files))
    for name in PYTEST_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None:
            origin = Path(spec.origin)
            source = origin.parent if origin.name == "__init__.py" else origin
            (site / source.name).symlink_to(source)


@pytest.mark.parametrize(
    "extra_entry_points, warns",
    [
        ({}, False),  # ireegen as it is
        ({"pytest11": {"ireegen": "ireegen.pytest_plugin"}}, True),  # with the entry point it had: the warning
    ],
)
def test_no_assert_rewrite_warning_from_an_editable_install(tmp_path, extra_entry_points, warns):
    pytest.importorskip("tomllib")
    site = tmp_path / "site-packages"
    _editable_install(site, extra_entry_points)
    tests = tmp_path / "project" / "tests"
    tests.mkdir(parents=True)
    # The plugin is registered (its fixture's imports need more than this sandbox has).
    (tests / "test_user.py").write_text(
        "import ireegen.pytest_plugin as plugin\n\n\n"
        "def test_registered(pytestconfig):\n    assert pytestconfig.pluginmanager.is_registered(plugin)\n"
    )
    if not extra_entry_points:
        (tests / "conftest.py").write_text('pytest_plugins = ["ireegen.pytest_plugin"]\n')
    # -I -S: only the standard library and this site directory, as in a
    # virtual environment that has ireegen installed editable and pytest.
    code = (
        f"import site, sys; site.addsitedir({str(site)!r}); import pytest; "
        f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', {str(tests)!r}]))"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout
    assert "1 passed" in proc.stdout
    assert ("PytestAssertRewriteWarning" in proc.stdout) == warns, proc.stdout


def test_the_fixture_pins_onnx_input_shapes(ireegen_parity):
    """input_shapes=, as the docstring shows (`--input-shape image=1x64`)."""
    pytest.importorskip("onnx")
    report = ireegen_parity(SAMPLES / "digits" / "digits.onnx", modes=["async"], input_shapes={"image": (1, 64)})
    assert report.agrees
