"""check/compare.py's error columns: the relative error stays meaningful
where the reference is at or near zero (recurrent state, an empty detector
map), and the verdict is numpy.allclose's, whatever the columns say."""

import numpy as np
import pytest

from ireegen.check.compare import compare


def test_rel_err_at_zero_reference_is_in_units_of_atol():
    want = np.array([0.0, 1e-304, -1e-300, 2.0], np.float64)
    got = np.array([1e-7, 1e-7, -5e-7, 2.0 + 2e-6], np.float64)
    row = compare("f", "y", "runtimeless", got, want, rtol=1e-5, atol=1e-6)
    assert row.verdict == "ok"
    assert row.max_abs_error == pytest.approx(2e-6, rel=1e-6)
    # 5e-7 against a reference below atol: 0.5 atol; 2e-6 against 2.0: 1e-6.
    assert row.max_rel_error == pytest.approx(0.5)


def test_rel_err_is_relative_above_the_tolerance():
    want = np.array([0.0, 100.0, -4.0], np.float32)
    got = np.array([0.0, 101.0, -4.0], np.float32)
    row = compare("f", "y", "async", got, want, rtol=1e-5, atol=1e-6)
    assert row.verdict == "mismatch"
    assert row.max_rel_error == pytest.approx(0.01)


def test_rel_err_with_zero_atol_and_scaled_atol():
    want = np.array([0.0, 1000.0], np.float32)
    got = np.array([1e-3, 1000.0], np.float32)
    # atol 0: the floor is 1e-12 of the largest magnitude (1e-9), not the smallest float.
    row = compare("f", "y", "async", got, want, rtol=1e-5, atol=0.0)
    assert row.verdict == "mismatch" and row.max_rel_error == pytest.approx(1e6)
    # emit's verification scales atol by the largest magnitude: 1e-5 x 1000 = 0.01.
    row = compare("f", "y", "async", got, want, rtol=1e-4, atol=1e-5, scale_atol=True)
    assert row.verdict == "ok" and row.max_rel_error == pytest.approx(0.1)


def test_equal_and_nonfinite_outputs_have_no_error():
    want = np.array([0.0, np.nan, np.inf, 3.0], np.float32)
    row = compare("f", "y", "async", want.copy(), want, rtol=0, atol=0)
    assert row.verdict == "ok" and row.max_abs_error == 0 and row.max_rel_error == 0
