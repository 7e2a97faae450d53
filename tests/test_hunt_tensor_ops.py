"""Mismatches with torch found by a bug hunt of the tensor ops (sorting, scans, pointwise edge cases).

Each test here failed before its fix: the order in which torch checks its arguments (so which error a bad
call gets), what torch does with 0-d and empty inputs that its kernels never see, and values torch computes
in single precision.
"""
import numpy as np
import pytest
import torch

import ember
from twins import both, both_raise, grad_fn_name

NAN, INF = float("nan"), float("inf")


def run(expression: str):
    return lambda L: eval(expression, {"L": L, "NAN": NAN, "INF": INF})


# ----------------------------------------------------------------- the order of the argument checks

ERRORS = [
    # torch parses q before it looks at the input: a list is a TypeError, whatever the input's dtype or size
    ("L.quantile(L.tensor([1, 2]), [0.5])", TypeError, r"quantile\(\)"),
    ("L.nanquantile(L.ones(3, dtype=L.float16), [0.5])", TypeError, r"nanquantile\(\)"),
    ("L.quantile(L.ones(0), [0.5], dim=0)", TypeError, r"quantile\(\)"),
    # a wrong dim is named before a bool dtype or a complex input is refused
    ("L.cumsum(L.ones(3), 1, dtype=L.bool)", IndexError, "Dimension out of range"),
    ("L.cumprod(L.tensor(2.), 1, dtype=L.bool)", IndexError, "Dimension out of range"),
    ("L.cummax(L.tensor([1j]), 1)", IndexError, "Dimension out of range"),
    ("L.cummin(L.tensor([1j]), -2)", IndexError, "Dimension out of range"),
    # in place on bools the running sum would be in bool, which torch has no kernel for
    ("L.tensor([True, False]).cumsum_(0)", NotImplementedError, "Bool"),
    ("L.tensor([[True]]).cumprod_(1)", NotImplementedError, "Bool"),
    # round with decimals (even 0) is the overload for floating point only, and decimals must be an int
    ("L.round(L.tensor([1, 2]), decimals=0)", NotImplementedError, "Long"),
    ("L.tensor([1, 2], dtype=L.uint8).round(decimals=0)", NotImplementedError, "Byte"),
    ("L.tensor([3]).round_(decimals=0)", NotImplementedError, "Long"),
    ("L.round(L.tensor([1.5]), decimals=None)", TypeError, "decimals"),
    ("L.round(L.tensor([1, 2]), decimals=1.0)", TypeError, "decimals"),
    ("L.special.round(L.tensor([1, 2]), decimals=None)", TypeError, "decimals"),
    ("L.special.round(L.tensor([1.5]), decimals=True)", TypeError, "decimals"),
]


@pytest.mark.parametrize("expression, error, fragment", ERRORS)
def test_errors_as_torch(expression, error, fragment):
    both_raise(run(expression), error, fragment)


# ----------------------------------------------------------------- inputs torch's kernels never see

QUIET = [
    # a 0-d or empty input is only copied: torch's refusal of bool sums lives in the kernel it skips
    "L.cumsum(L.tensor(3), 0, dtype=L.bool)",
    "L.cumprod(L.tensor(0.), -1, dtype=L.bool)",
    "L.cumsum(L.zeros(2, 0), 1, dtype=L.bool)",
    "L.cumprod(L.zeros(0), 0, dtype=L.bool)",
    "L.tensor(True).cumsum_(0)",
    "L.zeros(0, dtype=L.bool).cumprod_(0)",
    # cummax and cummin of an empty tensor check not even the dim
    "tuple(L.cummax(L.zeros(0), 1))",
    "tuple(L.cummin(L.zeros(2, 0), 5))",
    "tuple(L.cummax(L.zeros(0, dtype=L.int32), -3))",
]


@pytest.mark.parametrize("expression", QUIET)
def test_zero_dim_and_empty_inputs_as_torch(expression):
    both(run(expression))


def test_round_with_decimals_zero_is_torchs_other_overload():
    def program(L):
        x = L.tensor([0.5, 1.5, -2.5, 2.4], requires_grad=True)
        y = L.round(x, decimals=0)
        return y.detach(), grad_fn_name(y), grad_fn_name(L.round(x))

    both(program)


# ----------------------------------------------------------------- single precision

@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_trigamma_in_single_precision_is_torchs_at_and_near_the_poles(dtype):
    # torch computes polygamma(1, x) in single for single and half: sin(pi x) next to a pole is then far from
    # its double value (4% off at -2.9999), and at the pole finite (5.6e12 at -7), where double gives 1.3e31
    values = [-7.0, -3.0, -1.0, -2.9999, -0.5001, -2.5, 0.0, -0.0, 0.5, 3.0, 1e4, NAN, INF, -INF, -1e6,
              -4.023, -2.973, -0.9824]  # (the last three: a unit apart in half, rounded from double)

    def program(L):
        return L.polygamma(1, L.tensor(values, dtype=getattr(L, dtype)))

    expected = program(torch).numpy()
    actual = program(ember).numpy()
    assert actual.dtype == expected.dtype
    # to the last bit in half (single rounded once); in single NumPy's sin is not the C library's
    np.testing.assert_array_max_ulp(actual, expected, maxulp=0 if dtype == "float16" else 4)


def test_trigamma_of_integers_is_in_single_as_torch():
    both(lambda L: L.polygamma(1, L.tensor([-7, -3, 0, 1, 2, 5])))
