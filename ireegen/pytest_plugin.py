"""pytest plugin (registered through the `pytest11` entry point).

    def test_my_model(ireegen_parity):
        ireegen_parity("model.mlir")                  # all three execution models
        ireegen_parity("model.mlir", modes=["async", "inline-static"], rtol=1e-4)

The fixture fails the test with the parity table when the modes disagree.
`ireegen.parity.assert_parity` does the same outside the fixture.
"""

import pytest


@pytest.fixture
def ireegen_parity():
    from .parity import assert_parity

    def check(model_path, **kwargs):
        __tracebackhide__ = True
        try:
            return assert_parity(model_path, **kwargs)
        except AssertionError as e:
            pytest.fail(str(e), pytrace=False)

    return check
