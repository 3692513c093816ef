"""pytest plugin: the `ireegen_parity` fixture.  Register it in your
project's top-level conftest.py:

    pytest_plugins = ["ireegen.pytest_plugin"]

(or run pytest with `-p ireegen.pytest_plugin`).  Then:

    def test_my_model(ireegen_parity):
        ireegen_parity("model.mlir")              # async, inline-static, inline-dynamic
        ireegen_parity("model.mlir", modes=["async", "runtimeless"], rtol=1e-4)
        ireegen_parity("model.onnx", input_shapes={"image": (1, 64)})

It takes `ireegen.parity.parity()`'s arguments: `modes` (default async,
inline-static and inline-dynamic, the VM modes; add "runtimeless" to check
the plain C too), `rtol`/`atol`, `function`, `inputs`/`inputs_file`,
`expected`/`expected_file`, `input_shapes` (an ONNX model's symbolic
dimensions, name -> dims, as `--input-shape`), `runtimeless_target`, ...

A relative model path is found beside the test file (as `open()` in a test
would not, but as a test's data files usually are); when no such file is
there, it is taken relative to the current directory.

The fixture fails the test with the parity table when the modes disagree.
`ireegen.parity.assert_parity` does the same outside the fixture.

There is no `pytest11` entry point on purpose: pytest marks every module of
a distribution with one for assertion rewriting, and an editable install's
finder module (`_editable_skbc_ireegen`, imported at start-up) then gets a
PytestAssertRewriteWarning in every run of every project.  Registered by
name, only this module is marked.
"""

from pathlib import Path

import pytest


def resolve_model_path(model_path, test_file) -> Path:
    path = Path(model_path)
    if path.is_absolute():
        return path
    beside = Path(test_file).parent / path
    return beside if beside.exists() or not path.exists() else path


@pytest.fixture
def ireegen_parity(request):
    # Here, not at load: loading the plugin must not cost pytest's start-up
    # the parity harness's imports (numpy, IREE) in every run.
    from ireegen.parity import assert_parity

    def check(model_path, **kwargs):
        __tracebackhide__ = True
        try:
            return assert_parity(resolve_model_path(model_path, request.path), **kwargs)
        except AssertionError as e:
            pytest.fail(str(e), pytrace=False)

    return check
