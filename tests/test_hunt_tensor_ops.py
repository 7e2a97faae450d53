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


# ----------------------------------------------------------------- gradients at the edges

def _gradient(L, program, values, dtype="float64"):
    x = L.tensor(values, dtype=getattr(L, dtype), requires_grad=True)
    y = program(L, x)
    weights = L.tensor(np.linspace(-1.0, 2.0, y.numel()), dtype=y.dtype)
    total = (y * weights).sum()
    (grad,) = L.autograd.grad(total.real if total.is_complex() else total, x)
    return grad


EXPONENTS = [-0.5, 0.0, 0.5, 2.0, -2.0, 1.0]


@pytest.mark.parametrize("base", ["0.", "0", "-2.", "L.zeros(6, dtype=L.float64)",
                                  "L.tensor([0., -0., 2., -2., 0., 1.])", "L.tensor(0.)"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_gradient_of_a_power_in_its_exponent_is_torchs(base, dtype):
    # torch's limit 0 where the base is 0 holds for exponents >= 0 alone: 0 ** -0.5 log 0 is inf * -inf = -inf;
    # and a negative number's log is nan even where its power is finite (-2 ** 2)
    both(lambda L: _gradient(L, lambda L, q: L.pow(eval(base, {"L": L}), q), EXPONENTS, dtype))


def test_the_gradient_of_a_complex_zero_power_is_zero_only_for_real_non_negative_exponents_as_torch():
    exponents = [-0.5, 0.0, 0.5 + 1j, 2.0, -2j, 1.0]
    both(lambda L: _gradient(L, lambda L, q: L.pow(0.0, q), exponents, "complex128"))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_power_rule_uses_torchs_power_of_the_exponent_less_one(dtype):
    # x ** 0.5 at -0: torch's x ** -0.5 is 1 / sqrt(-0) = -inf, NumPy's power of -0 to -0.5 is +inf
    both(lambda L: _gradient(L, lambda L, x: x ** 0.5, [-0.0, 0.0, 4.0, -1.0, 2.5], dtype))


# ----------------------------------------------------------------- medians of nothing, unique of half NaNs

@pytest.mark.parametrize("dtype", ["int8", "int16", "bool", "bfloat16"])
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_the_median_of_no_elements_is_torchs_nan_converted_to_the_dtype(op, dtype):
    # no kernel runs: int8 and int16 get 0 (not their smallest value), bool True, bfloat16 nan
    both(lambda L: getattr(L, op)(L.zeros(5, 0, dtype=getattr(L, dtype))).float())


@pytest.mark.parametrize("expression, error", [
    ("L.median(L.zeros(2, 0, dtype=L.bool), 1)", IndexError),  # the empty dim is named before the dtype
    ("L.nanmedian(L.ones(2, 3, dtype=L.uint32), 0)", NotImplementedError),
    ("L.median(L.ones(2, dtype=L.uint64))", NotImplementedError),
])
def test_the_median_refuses_as_torch(expression, error):
    both_raise(run(expression), error)


def test_unique_numbers_the_nans_of_half_in_the_order_of_torchs_sort():
    values = np.random.default_rng(5).integers(-3, 4, 53).astype(np.float64)
    values[::5] = np.nan
    values[1::7] = np.inf

    def program(L):
        return L.unique(L.tensor(values, dtype=L.float16), return_inverse=True, return_counts=True)

    both(program)


# ----------------------------------------------------------------- histc and searchsorted at the edges of a dtype

@pytest.mark.parametrize("expression", [
    "L.histc(L.tensor([-2e38, 2e38, 0.]), bins=4)",  # the data's range is wider than float32 holds
    "L.histc(L.tensor([1., 2.]), bins=4, min=-3e38, max=3e38)",
    "L.histc(L.tensor([0., 3e38, 1e38]), bins=4)",  # (only the positions overflow: bin 0, as before)
])
def test_histc_over_a_range_too_wide_for_the_dtype_counts_nothing_as_torch(expression):
    both(run(expression))


@pytest.mark.parametrize("expression", [
    "L.histc(L.tensor([1., 2.]), bins=2, min=-1e308, max=1e308)",
    "L.histc(L.tensor([1., 2.], dtype=L.float16), bins=4, min=-1e5, max=0)",
    "L.histc(L.tensor([], dtype=L.float16), min=-1e5, max=-1e5)",  # (no data: the bounds are used)
])
def test_histc_refuses_bounds_the_dtype_cannot_hold_as_torch(expression):
    both_raise(run(expression), RuntimeError, "without overflow")


def test_histc_takes_equal_bounds_out_of_range_as_the_data_range_as_torch():
    both(run("L.histc(L.tensor([-6e4, 6e4, 0.], dtype=L.float16), min=-1e5, max=-1e5)"))


@pytest.mark.parametrize("value", ["NAN", "L.tensor([NAN, 2.5], dtype=L.bfloat16)", "L.tensor(NAN)"])
def test_a_nan_is_searched_to_the_end_of_a_bfloat16_sequence_as_torch(value):
    both(run(f"L.searchsorted(L.tensor([1., 2., 2., 3.], dtype=L.bfloat16), {value})"))


@pytest.mark.parametrize("x, out", [("L.tensor([2.])", "float32"), ("L.tensor([2.], dtype=L.float16)", "float16"),
                                    ("L.tensor([2.])", "complex128"), ("L.tensor([1j])", "float64")])
def test_float_power_writes_only_into_an_out_of_its_result_dtype_as_torch(x, out):
    both_raise(run(f"L.float_power({x}, 2, out=L.empty(0, dtype=L.{out}))"), RuntimeError, "float_power")


@pytest.mark.parametrize("op, dtype", [("xlogy", "float16"), ("xlogy", "bfloat16"), ("xlogy", "float32"),
                                       ("xlog1py", "float16"), ("xlog1py", "bfloat16")])
def test_xlogy_is_torchs_to_the_bit(op, dtype):
    # half and bfloat16: torch rounds log(y) to the dtype before the product; float32: its log is correctly
    # rounded (NumPy's single log is not, at a tenth of these)
    x, y = np.meshgrid(np.linspace(-8, 8, 101, dtype=np.float32), np.linspace(-2, 10, 101, dtype=np.float32))

    def program(L):
        result = getattr(L.special, op)(L.tensor(x.ravel()).to(getattr(L, dtype)), L.tensor(y.ravel()).to(getattr(L, dtype)))
        return result.float()

    expected, actual = program(torch).numpy(), program(ember).numpy()
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_entr_is_torchs_to_the_bit(dtype):
    # torch rounds log(x) to the dtype before the product, as in xlogy
    values = np.concatenate([np.linspace(-1, 10, 1001), [0.0, -0.0, np.inf, np.nan, 1e-6]]).astype(np.float32)

    def program(L):
        return L.special.entr(L.tensor(values).to(getattr(L, dtype))).float()

    np.testing.assert_array_equal(program(ember).numpy(), program(torch).numpy())


@pytest.mark.parametrize("x, out", [("L.tensor([[1, 2], [3, 4]])", "float32"), ("L.tensor([2., 1.])", "float64"),
                                    ("L.tensor([True, False])", "int64")])
def test_msort_writes_only_into_an_out_of_its_dtype_as_torch(x, out):
    both_raise(run(f"L.msort({x}, out=L.empty(0, dtype=L.{out}))"), RuntimeError, "Expected out tensor to have dtype")


# ----------------------------------------------------------------- clamp's gradient with tensor bounds

CLAMP_POINTS = [(x, low, high) for x in (0.0, 2.0, 1.0, NAN, -INF) for low in (1.0, NAN, 3.0) for high in (1.5, NAN, 0.5, 1.0)]


@pytest.mark.parametrize("bounds", ["both", "min", "max"])
def test_clamp_gives_the_gradient_of_nan_and_tied_bounds_as_torch(bounds):
    # torch: x's where min <= x <= max (not where x or a bound is NaN), min's where x < min < max (none of the
    # three where x < min == max), max's where x > max or min > max
    xs, lows, highs = (list(v) for v in zip(*CLAMP_POINTS))

    def program(L):
        x, low, high = (L.tensor(v, dtype=L.float64, requires_grad=True) for v in (xs, lows, highs))
        y = {"both": lambda: L.clamp(x, low, high), "min": lambda: L.clamp(x, min=low),
             "max": lambda: L.clamp(x, max=high)}[bounds]()
        y.backward(L.tensor(np.linspace(-1.0, 2.0, len(xs)), dtype=L.float64))
        return y.detach(), [v.grad if v.grad is not None else v.detach() * 0 for v in (x, low, high)]

    both(program)


@pytest.mark.parametrize("op", ["i1", "i1e"])
def test_the_bessel_i1_gradients_at_nan_and_below_eps_are_torchs(op):
    # torch takes I1'(x) = I0(x) - I1(x) / x only where |x| > eps: a NaN (or tiny) x gets 1/2, and the second
    # derivative there is 0 (ember's formula gave inf at 1e-300 for i1e)
    values = [-2.5, -0.0, 0.0, 1e-300, -1e-17, 0.5, NAN, INF]

    def program(L):
        x = L.tensor(values, dtype=L.float64, requires_grad=True)
        (first,) = L.autograd.grad(getattr(L.special, op)(x).sum(), x, create_graph=True)
        (second,) = L.autograd.grad(first.sum(), x)
        return first.detach(), second

    both(program)


@pytest.mark.parametrize("p", [1, 2])
def test_the_gradient_of_mvlgamma_at_minus_zero_is_torchs(p):
    # torch adds x to -j/2 (j = 0 too): -0 becomes +0, where digamma is -inf (at -0 it is +inf)
    both(lambda L: _gradient(L, lambda L, x: L.mvlgamma(x, p), [-0.0, 0.0, 3.5, 1.25]))


@pytest.mark.parametrize("values", [[1.0, 0.0, INF], [1.0, INF, 0.0], [0.0, 0.0, NAN], [0.0, INF, 0.0], [INF, 0.0, 1.0],
                                    [2.0, -0.0, 3.0, 0.0, INF]])
def test_the_gradient_of_cumprod_with_zeros_and_infinities_is_torchs(values):
    # before the first zero the sum stops at it; at it, the product before it times the sum of the products after
    # it, up to the second zero: so an inf on the far side of a zero does not make the gradient nan
    both(lambda L: _gradient(L, lambda L, x: L.cumprod(x, 0), values))
