"""pytest plugin (registered through the `pytest11` entry point).

    def test_my_model(ireegen_parity):
        ireegen_parity("model.mlir")                  # all three execution models
        ireegen_parity("model.mlir", modes=["async", "inline-static"], rtol=1e-4)

A relative model path is found beside the test file (as `open()` in a test
would not, but as a test's data files usually are); when no such file is
there, it is taken relative to the current directory.

The fixture fails the test with the parity table when the modes disagree.
`ireegen.parity.assert_parity` does the same outside the fixture.
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
    from ireegen.parity import assert_parity

    def check(model_path, **kwargs):
        __tracebackhide__ = True
        try:
            return assert_parity(resolve_model_path(model_path, request.path), **kwargs)
        except AssertionError as e:
            pytest.fail(str(e), pytrace=False)

    return check
