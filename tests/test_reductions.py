"""Reductions, extrema, scans and softmax against torch: what the op table cannot say.

Named tuples as a whole, keyword forms and NumPy's names, out=, methods, nan and ties, zeros in products,
degrees of freedom, warnings, and properties (hypothesis) of softmax and logsumexp.
"""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from twins import assert_same, both, both_raise, leaf, normalise, to_numpy

NAN, INF = float("nan"), float("inf")


def plain(value):
    """``to_numpy`` of a result whose named tuples are read as plain tuples (values in order)."""
    return to_numpy(tuple(value) if isinstance(value, tuple) else value)


def m(L, dtype="float64"):
    return L.tensor([[1.0, -2.0, 3.0, 3.0], [4.0, 0.5, -6.0, 4.0]], dtype=getattr(L, dtype))


def gradients(program):
    """``program(lib, x)`` run on a leaf; its value and the gradient of its sum times fixed weights."""

    def run(L, values):
        x = leaf(L, values)
        y = program(L, x)
        weights = L.tensor(np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape)), dtype=L.float64)
        (grad,) = L.autograd.grad((y * weights).sum(), x)
        return y.detach(), grad

    return run


# ----------------------------------------------------------------- named tuples, plain tuples, out=


@pytest.mark.parametrize("expression", [
    "L.max(x, 1)", "x.min(0, keepdim=True)", "L.aminmax(x)", "x.aminmax(dim=1, keepdim=True)", "L.cummax(x, 1)",
    "x.cummin(0)", "L.max(x, dim=-1, keepdim=False)", "L.min(x, axis=1, keepdims=True)",
])
def test_several_results_come_as_torchs_named_tuples(expression):
    def program(L):
        result = eval(expression, {"L": L, "x": m(L)})
        fields = ("min", "max") if type(result).__name__ == "aminmax" else ("values", "indices")
        return type(result).__name__, [getattr(result, f) for f in fields], tuple(result), repr(result).split("(")[0]

    both(program, prepare=normalise)


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_and_std_mean_return_plain_tuples(name):
    both(lambda L: (type(getattr(L, name)(m(L), 1)).__name__, getattr(L, name)(m(L), 1)))


@pytest.mark.parametrize("expression", [
    "L.max(x, 1, out=(L.zeros(2), L.zeros(2, dtype=L.int64)))",
    "L.min(x, 0, True, out=(L.zeros(0), L.zeros(0, dtype=L.int64)))",
    "L.aminmax(x, dim=1, out=(L.zeros(2), L.zeros(2)))",
    "L.cummax(x, 1, out=(L.zeros(2, 4), L.zeros(2, 4, dtype=L.int64)))",
    "L.cummin(x, 0, out=(L.zeros(2, 4), L.zeros(2, 4, dtype=L.int64)))",
])
def test_out_pairs_are_filled_and_returned_as_torch(expression):
    def program(L):
        result = eval(expression, {"L": L, "x": m(L, "float32")})
        return type(result).__name__, tuple(result)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the resized outs
        both(program)


@pytest.mark.parametrize("expression", [
    "L.sum(x, (0, 1), out=o)", "L.mean(x, 1, out=o)", "L.all(x, out=L.zeros((), dtype=L.bool))",
    "L.any(x, 1, out=L.zeros(2, dtype=L.bool))", "L.amax(x, 1, out=o)", "L.amin(x, (0, 1), out=o)", "L.max(x, out=o)",
    "L.min(x, out=o)", "L.maximum(x, -x, out=o)", "L.fmin(x, -x, out=o)", "L.prod(x, 1, out=o)",
    "L.nansum(x, 1, out=o)", "L.nanmean(x, out=o)", "L.var(x, 1, out=o)", "L.std(x, out=o)",
"L.logsumexp(x, 1, out=o)", "L.cumsum(x, 1, out=o)",
    "L.cumprod(x, 0, out=o)", "L.logcumsumexp(x, 1, out=o)", "L.norm(x, 1, 1, out=o)",
])
def test_out_is_written_and_returned(expression):
    def program(L):
        o = L.zeros(0)
        result = eval(expression, {"L": L, "x": m(L, "float32"), "o": o})
        return result, (result is o) if not isinstance(result, tuple) else result[0] is o

    both(program)


def test_out_refuses_a_graph_as_torch():
    both_raise(lambda L: L.cumsum(leaf(L, [1.0, 2.0]), 0, out=L.zeros(2, dtype=L.float64)), RuntimeError,
               "don't support automatic differentiation")


# ----------------------------------------------------------------- keyword forms, NumPy's names, methods


@pytest.mark.parametrize("expression", [
    "L.max(input=x, dim=1)", "L.max(x, other=-x)", "L.max(x, x2=-x)", "x.max(other=-x)", "L.max(x, -x)",
    "L.argmax(x, axis=0, keepdims=True)", "L.argmin(input=x)", "L.prod(x, axis=1, keepdims=True)",
    "L.nansum(x, dim=(0, 1), keepdim=True)", "L.count_nonzero(x, axis=1)", "L.var(x, axis=0, correction=0)",
    "x.std(dim=1, keepdim=True, correction=2)", "L.var(x, 1, False, True)", "L.std(x, True)", "x.var(False)",
    "L.var_mean(x, dim=[0, 1], keepdims=True)", "L.logsumexp(x, axis=1)", "x.logsumexp(dim=(0, 1), keepdim=True)",
    "L.softmax(x, axis=0)", "x.softmax(-1, L.float32)", "L.log_softmax(x, 1, dtype=L.float32)",
    "L.cumsum(x, axis=1)", "x.cumprod(dim=0, dtype=L.float32)", "L.cummax(input=x, dim=1)",
    "L.logcumsumexp(x, dim=-1)", "L.maximum(input=x, other=-x)", "x.fmax(x2=-x)", "L.sum(x, dim=[1], dtype=L.float32)",
    "L.mean(x, (0, 1), True)", "L.all(x, (0, 1))", "L.any(x, [0], True)", "L.norm(x, p=None)", "L.norm(x, None, 1)",
])
def test_keyword_forms_and_numpy_names_as_torch(expression):
    both(lambda L: eval(expression, {"L": L, "x": m(L)}), prepare=plain)


@pytest.mark.parametrize("expression, error", [
    ("L.max(x, keepdim=True)", TypeError), ("L.max(x, 1, other=x)", TypeError), ("L.maximum(x, 2.0)", TypeError),
    ("L.var(x, 1, True, correction=0)", TypeError), ("L.prod(x, (0, 1))", TypeError),
    ("L.softmax(x.long(), 0)", NotImplementedError), ("L.log_softmax(x, 2)", IndexError),
    ("L.cummax(x, 2)", IndexError), ("L.cumsum(x, 1.5)", TypeError),
    ("L.max(x, out=L.zeros(2, dtype=L.int64))", RuntimeError),
    ("L.max(L.zeros(0, 3), 0)", IndexError), ("L.argmin(L.zeros(0, 3), 0)", IndexError),
    ("L.aminmax(L.zeros(2, 0), dim=1)", IndexError), ("L.std(x.int())", RuntimeError),
])
def test_bad_arguments_raise_torchs_errors(expression, error):
    both_raise(lambda L: eval(expression, {"L": L, "x": m(L)}), error)


def test_the_functions_are_tensor_methods_where_torch_has_them():
    names = ("max min argmax argmin aminmax maximum minimum fmax fmin prod nansum nanmean count_nonzero var std "
             "logsumexp softmax log_softmax cumsum cumprod cummax cummin logcumsumexp cumsum_ cumprod_").split()
    for name in names + ["var_mean", "std_mean"]:
        assert hasattr(ember.Tensor, name) == hasattr(torch.Tensor, name), name
        assert hasattr(ember, name) == hasattr(torch, name), name


# ----------------------------------------------------------------- nan, infinities and ties

NAN_ROWS = [[1.0, NAN, 3.0, NAN], [2.0, 5.0, 5.0, -1.0], [NAN, NAN, NAN, NAN]]


@pytest.mark.parametrize("expression", [
    "x.max()", "x.min()", "x.amax(1)", "x.max(1)", "x.min(1, keepdim=True)", "x.argmax(1)", "x.argmin()",
    "x.aminmax(dim=1)", "L.maximum(x, y)", "L.minimum(x, 2.0 * L.ones(4, dtype=L.float64))", "L.fmax(x, y)",
    "L.fmin(x, L.zeros(4, dtype=L.float64))", "x.nansum(1)", "x.nanmean(1)", "x.nansum()", "x.cummax(1)",
    "x.cummin(1)", "x.cumsum(1)", "x.logsumexp(1)", "x.softmax(1)", "x.logcumsumexp(1)",
])
def test_nan_propagates_or_is_skipped_as_torch(expression):
    def program(L):
        x = L.tensor(NAN_ROWS, dtype=L.float64)
        y = L.tensor(np.array(NAN_ROWS)[::-1, ::-1].copy())
        return eval(expression, {"L": L, "x": x, "y": y})

    both(program, prepare=plain)


@pytest.mark.parametrize("expression", [
    "x.logsumexp(1)", "x.softmax(1)", "x.log_softmax(1)", "x.logcumsumexp(1)", "x.max(1)", "x.cummax(1)",
])
def test_infinities_as_torch(expression):
    x = [[INF, 1.0, INF], [-INF, -INF, -INF], [-INF, 2.0, 0.0]]
    both(lambda L: eval(expression, {"L": L, "x": L.tensor(x)}), prepare=plain)


@pytest.mark.parametrize("expression", [
    "x.max()", "x.min()", "x.amax(1)", "x.max(1).values", "x.min(0).values", "x.aminmax(dim=1).max",
    "x.aminmax().min", "L.maximum(x, x.detach() * 0 + 3.0)", "L.minimum(x, x.detach() * 0 + 3.0)",
    "L.fmax(x, x.detach() * 0 + 3.0)", "L.fmin(x.detach() * 0 + 3.0, x)", "x.cummax(1).values",
    "x.cummin(0).values", "x.max(1, keepdim=True).values",
])
def test_ties_share_or_pick_the_gradient_as_torch(expression):
    """Whole-tensor max shares the gradient among ties; along a dim the chosen index takes it; maximum halves it."""
    values = [[3.0, 1.0, 3.0, 3.0], [2.0, 2.0, 0.0, 3.0]]
    both(lambda L: gradients(lambda L, x: eval(expression, {"L": L, "x": x}))(L, values))


@pytest.mark.parametrize("expression", ["x.max()", "x.max(1).values", "L.maximum(x, y)", "L.minimum(y, x)",
                                        "L.fmax(x, y)", "L.fmin(y, x)", "x.cummax(1).values", "x.nansum(0)"])
def test_gradients_at_nan_as_torch(expression):
    def program(L, x):
        y = L.tensor([[NAN, 0.0, 1.0], [2.0, NAN, 0.5]], dtype=L.float64)
        return eval(expression, {"L": L, "x": x, "y": y})

    both(lambda L: gradients(program)(L, [[1.0, NAN, NAN], [2.0, 1.0, NAN]]))


# ----------------------------------------------------------------- products with zeros


@pytest.mark.parametrize("values", [
    [[2.0, 0.0, 3.0], [0.0, 0.0, 4.0]], [[0.0, 1.5, -2.0], [3.0, 0.5, 2.0]], [[0.0, 0.0, 0.0], [1.0, 2.0, 0.0]],
])
@pytest.mark.parametrize("expression", ["x.prod()", "x.prod(1)", "x.prod(0, keepdim=True)", "x.cumprod(1)",
                                        "x.cumprod(0)"])
def test_products_with_zeros_have_torchs_first_and_second_derivatives(values, expression):
    def program(L):
        x = leaf(L, values)
        y = eval(expression, {"x": x})
        weights = L.tensor(np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape)), dtype=L.float64)
        (grad,) = L.autograd.grad((y * weights).sum(), x, create_graph=True)
        (second,) = L.autograd.grad((grad * L.arange(x.numel(), dtype=L.float64).reshape(2, 3)).sum(), x)
        return y.detach(), grad.detach(), second

    both(program)


ZERO_PATTERNS = {  # rows of 7: where the zeros stand decides which part of cumprod's gradient each element takes
    "one zero": [1.5, -2.0, 0.0, 0.5, 3.0, -1.0, 2.0],
    "several zeros": [2.0, 0.0, -1.5, 0.0, 3.0, 0.0, 0.5],
    "zero first and last": [0.0, 2.0, -0.5, 3.0, 1.5, -2.0, 0.0],
    "all zeros": [0.0] * 7,
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pattern", ZERO_PATTERNS)
def test_cumprod_gradient_with_zeros_is_torchs_along_either_dim_and_on_views(pattern, dtype):
    rows = np.array([ZERO_PATTERNS[pattern], ZERO_PATTERNS[pattern][::-1], np.linspace(-2.0, 2.0, 8)[1:]])

    def program(L):
        x = L.tensor(rows, dtype=getattr(L, dtype), requires_grad=True)
        weights = L.tensor(np.linspace(-1.0, 2.0, rows.size).reshape(rows.shape), dtype=getattr(L, dtype))
        along_rows = L.autograd.grad((L.cumprod(x, 1) * weights).sum(), x)[0]
        down_columns = L.autograd.grad((L.cumprod(x.mT, 0) * weights.mT).sum(), x)[0]  # a transposed view
        broadcast = L.autograd.grad(L.cumprod(x[:1].expand(4, 7), 1).sum(), x)[0]
        return along_rows, down_columns, broadcast

    both(program)


@pytest.mark.parametrize("shape", [(), (0, 4), (4, 0)])
def test_cumprod_gradient_of_zero_dims_and_empty_tensors_is_torchs(shape):
    def program(L):
        x = L.zeros(shape, dtype=L.float64, requires_grad=True)
        (grad,) = L.autograd.grad(L.cumprod(x, -1 if shape else 0).sum(), x)
        return grad

    both(program)


@pytest.mark.parametrize("pattern", ZERO_PATTERNS)
def test_cumprod_with_zeros_passes_gradcheck_and_gradgradcheck(pattern):
    x = ember.tensor([ZERO_PATTERNS[pattern], ZERO_PATTERNS[pattern][::-1]], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.cumprod(t, 1), (x,))
    assert ember.autograd.gradgradcheck(lambda t: ember.cumprod(t, 1), (x,))
    assert ember.autograd.gradgradcheck(lambda t: ember.cumprod(t, 0), (x,))


def test_cumprod_gradient_of_long_rows_with_zeros_is_torchs_in_float32():
    """Rows of 2,000 with a third of them zeros: each scan is split at its first zero, not taken n times."""
    values = np.random.default_rng(7).integers(-1, 2, (3, 2000)) * np.random.default_rng(8).uniform(0.5, 1.5, (3, 2000))
    values[:, :5] = np.abs(values[:, :5]) + 0.5  # some elements before the first zero

    def program(L):
        x = L.tensor(values, dtype=L.float32, requires_grad=True)
        L.cumprod(x, 1).backward(L.ones(3, 2000))
        return x.grad

    both(program)


def long_rows(dtype: str) -> np.ndarray:
    """Rows long enough for prod to halve them (odd lengths too); integers that overflow int64 and wrap."""
    rng = np.random.default_rng(5)
    if dtype in ("int64", "int32", "uint8"):
        return rng.integers(-9 if dtype != "uint8" else 0, 10, (3, 5, 77))
    if dtype == "bool":
        return rng.random((3, 5, 77)) > 0.01
    return 1 + 0.05 * rng.standard_normal((3, 5, 77))


@pytest.mark.parametrize("dtype", ["float64", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("expression", ["x.prod()", "x.prod(2)", "x.prod(-1, keepdim=True)", "x.prod(1)",
                                        "x[:, :, :64].prod(2)", "x[:, :, 1:].prod(2)", "x.transpose(0, 2).prod(0)",
                                        "x.transpose(0, 2).prod()", "x[0, 0].prod(0)", "x[0, 0, 0].prod()",
                                        "x[:, :, :0].prod(2)", "x[:, :0].prod()", "x.prod(2, dtype=L.float64)"])
def test_products_of_long_rows_as_torch(dtype, expression):
    values = long_rows(dtype)
    both(lambda L: eval(expression, {"L": L, "x": L.tensor(values).to(getattr(L, dtype))}))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_products_of_long_rows_in_small_floats_round_as_torchs(dtype):
    """Any order of a float product's multiplications adds up the same kind of rounding errors: against
    a long double reference, ember's errors over many rows are as large as torch's, no larger."""
    values = (1 + 0.05 * np.random.default_rng(6).standard_normal((400, 400))).astype(np.float32)

    def errors(L, dim):
        x = L.tensor(values).to(getattr(L, dtype))
        exact = np.prod(x.double().numpy().astype(np.longdouble), dim)
        return np.abs(x.prod(dim).double().numpy() - exact) / exact

    for dim in (0, 1):
        mine, theirs = errors(ember, dim), errors(torch, dim)
        assert mine.max() <= 1.25 * theirs.max() and np.sqrt(np.mean(mine ** 2)) <= 1.1 * np.sqrt(np.mean(theirs ** 2))
    assert np.isclose(ember.tensor(values).prod().item(), torch.tensor(values).prod().item(), rtol=1e-4)


def test_a_long_product_with_zeros_has_second_derivatives():
    values = 1 + 0.05 * np.random.default_rng(7).standard_normal((2, 40))
    values[0, 3] = values[1, 5] = values[1, 30] = 0.0
    x = ember.tensor(values, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: t.prod(1), (x,))
    assert ember.autograd.gradgradcheck(lambda t: t.prod(1), (x,))
    assert ember.autograd.gradgradcheck(lambda t: t[:, :36].prod(), (x,))


# ----------------------------------------------------------------- moments


@pytest.mark.parametrize("expression, op", [
    ("L.var(L.tensor(2.0))", "var"), ("L.std(L.ones(3, 1), 1)", "std"), ("L.var(L.ones(3), correction=3)", "var"),
    ("L.var_mean(L.ones(2, 2), 0, correction=5)", "var_mean"), ("L.std_mean(L.zeros(0))", "std_mean"),
    ("L.var(L.tensor([1.0, 2.0]), correction=2)", "var"), ("L.std(L.tensor([[1.0, 2.0]]), 1, correction=3.5)", "std"),
])
def test_no_degrees_of_freedom_give_inf_or_nan_with_torchs_warning(expression, op):
    def program(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = eval(expression, {"L": L})
        messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        assert len(messages) == 1 and messages[0].startswith(f"{op}(): degrees of freedom is <= 0"), messages
        return result

    both(program)


def test_std_of_equal_elements_has_a_zero_gradient_as_torch():
    both(lambda L: gradients(lambda L, x: x.std(1))(L, [[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]))


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_is_one_node_and_both_results_carry_gradients(name):
    def program(L):
        x = leaf(L, [[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
        spread, mean = getattr(L, name)(x, 1)
        (grad,) = L.autograd.grad((spread * L.tensor([1.0, -2.0], dtype=L.float64) + mean * 3).sum(), x,
                                  create_graph=True)
        (second,) = L.autograd.grad(grad.pow(2).sum(), x)
        return spread.grad_fn is mean.grad_fn, spread.grad_fn.name(), grad, second

    both(program)


def test_moments_of_large_offsets_are_accurate():
    """The deviations are taken from the mean, not from sums of squares (which would cancel)."""
    both(lambda L: L.var(L.tensor([1e8 + 1.0, 1e8 + 2.0, 1e8 + 3.0], dtype=L.float64)))


# ----------------------------------------------------------------- softmax and nn.functional


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, expected_dim", [((3,), 0), ((2, 3), 1), ((2, 3, 4), 0), ((2, 3, 4, 5), 1), ((), 0)])
def test_functional_softmax_without_dim_takes_torchs_legacy_dim_and_warns(name, shape, expected_dim):
    def program(L):
        x = L.tensor(np.arange(float(np.prod(shape))).reshape(shape) / 7)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = getattr(L.nn.functional, name)(x)
        assert [str(w.message) for w in caught] == [
            f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
            "argument."]
        assert caught[0].filename == __file__
        return result, getattr(L, name)(x, expected_dim)

    both(program)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_with_dtype_casts_first_and_records_the_cast(name):
    def program(L):
        x = L.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
        y = getattr(L.nn.functional, name)(x, 1, dtype=L.float64)
        y.backward(L.tensor([[1.0, 0.0], [0.5, -1.0]], dtype=L.float64))
        return y.dtype, y.grad_fn.name(), x.grad.dtype, x.grad

    both(program, prepare=normalise)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp", "logcumsumexp"])
def test_huge_inputs_do_not_overflow(name):
    def program(L):
        x = leaf(L, [[1000.0, 1001.0, -1000.0], [-1e4, 0.0, 1e4]])
        y = getattr(L, name)(x, 1)
        y.backward(L.ones_like(y))
        return y, x.grad

    both(program)


def test_half_logsumexp_rounds_each_step_as_torch():
    values = np.random.default_rng(0).uniform(-3, 3, (50, 6)).astype(np.float16)
    both(lambda L: (L.logsumexp(L.tensor(values), 1), L.logsumexp(L.tensor(values), 0, keepdim=True)))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_an_empty_integer_tensor_is_empty_as_torch(name):
    both(lambda L: getattr(L, name)(L.zeros(0, 3, dtype=L.int64), 1))


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.floats(-50, 50, allow_nan=False)), st.integers(-1, 0))
def test_softmax_is_normalised_and_log_softmax_is_its_log(values, dim):
    x = ember.tensor(values)
    probabilities = ember.softmax(x, dim)
    np.testing.assert_allclose(probabilities.sum(dim).numpy(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(ember.log_softmax(x, dim).exp().numpy(), probabilities.numpy(), rtol=1e-10, atol=1e-300)
    expected = torch.logsumexp(torch.tensor(values), dim).numpy()
    np.testing.assert_allclose(ember.logsumexp(x, dim).numpy(), expected, rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=5),
                  elements=st.sampled_from([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])), st.integers(-1, 0))
def test_scans_and_their_indices_equal_torchs(values, dim):
    """Integers-like values make ties and zeros likely: the indices and the gradients must still be torch's."""
    for name in ("cummax", "cummin"):
        mine, theirs = getattr(ember, name)(ember.tensor(values), dim), getattr(torch, name)(torch.tensor(values), dim)
        np.testing.assert_array_equal(mine.indices.numpy(), theirs.indices.numpy())
    for name in ("cumprod", "cumsum", "logcumsumexp"):
        (mine,), (theirs,) = [gradients(lambda L, x: getattr(L, name)(x, dim))(L, values)[1:] for L in (ember, torch)]
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


SIGNED = [[0.0, -0.0, 1.0, -0.0, NAN, 2.0, -NAN, 0.0], [-0.0, 0.0, -INF, INF, -0.0, -1.0, -1.0, 5.0]]


def signed_bits(value, nan_sign: bool = True):
    """A result's values as bit patterns (the sign of zero, and of NaN if ``nan_sign``), its indices as they are."""
    values, indices = value
    values = values.float().numpy()
    return np.where(np.isnan(values) & (not nan_sign), NAN, values).view(np.int32), indices.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("expression", ["x.cummax(1)", "x.cummin(1)", "x.cummax(0)", "x.cummin(0)",
                                        "x.t().cummax(0)", "x.t().cummin(1)"])
def test_running_extrema_take_the_last_of_equal_values_and_their_sign_as_torch(dtype, expression):
    """Among equal values (a -0 and a 0 too) the running extremum is the last met, the element itself; a NaN
    stays, with its own bits and index, until the next NaN (torch's bfloat16 cast drops a NaN's sign)."""
    def program(L):
        return signed_bits(eval(expression, {"x": L.tensor(SIGNED).to(getattr(L, dtype))}), dtype != "bfloat16")

    for theirs, mine in zip(program(torch), program(ember)):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (5,), (4, 6)])
def test_running_extrema_of_integers_and_odd_shapes_as_torch(dtype, shape):
    values = np.random.default_rng(1).integers(0, 4, shape)
    both(lambda L: [plain(f(L.tensor(values).to(getattr(L, dtype)), d)) for f in (L.cummax, L.cummin)
                    for d in range(-1, len(shape))], prepare=plain)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extrema_of_single_floats_have_torchs_gradient(name):
    """Ties and a NaN in float32, through the backward that sums each run of equal indices."""
    values = np.round(np.random.default_rng(2).standard_normal((6, 40))).astype(np.float32)
    values[2, 7] = NAN

    def program(L):
        x = L.tensor(values, requires_grad=True)
        result = getattr(L, name)(x.t(), 0).values
        (grad,) = L.autograd.grad((result * L.arange(240.0).reshape(40, 6)).sum(), x)
        return result.detach(), grad

    both(program)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extrema_have_double_derivatives(name):
    mine = ember.tensor([[0.3, 1.2, -0.5, 1.3, 2.0], [1.0, -1.0, 0.7, -2.0, 0.1]], dtype=ember.float64,
                        requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: getattr(ember, name)(t, 1).values, (mine,))
    assert ember.autograd.gradgradcheck(lambda t: getattr(ember, name)(t, 1).values, (mine,))


@pytest.mark.parametrize("name", ["maximum", "fmin"])
def test_changing_either_operand_of_maximum_is_refused_as_torch(name):
    """maximum saves both operands, as torch's does: changing even the constant one breaks the backward."""

    def program(L):
        x, other = leaf(L, [1.0, 5.0]), L.tensor([2.0, 3.0], dtype=L.float64)
        y = getattr(L, name)(x, other)
        other.add_(10.0)
        y.sum().backward()

    both_raise(program, RuntimeError, "modified by an inplace operation")


@pytest.mark.parametrize("expression", ["x.prod()", "x.nansum()", "x.max()", "x.var()", "x.std()", "x.logsumexp(0)",
                                        "x.cumprod(0)", "x.logcumsumexp(0)", "L.aminmax(x).max", "x.softmax(0)",
                                        "x.cummax(0).values"])
def test_a_changed_saved_input_or_result_is_refused_as_torch(expression):
    def program(L):
        x = leaf(L, [1.0, 2.0]) * 1
        y = eval(expression, {"L": L, "x": x})
        (x if "softmax" not in expression else y).mul_(2)
        y.sum().backward()

    both_raise(program, RuntimeError, "modified by an inplace operation")


@pytest.mark.parametrize("expression", ["x.max(0).values", "x.cumsum(0)", "x.sum()", "x.mean()"])
def test_a_changed_input_that_is_not_saved_is_no_error_as_torch(expression):
    def program(L):
        x = leaf(L, [1.0, 2.0])
        h = x * 1
        y = eval(expression, {"L": L, "x": h})
        h.mul_(2)
        y.sum().backward()
        return x.grad

    both(program)


@pytest.mark.parametrize("expression", ["L.var_mean(x, 1)[1]", "L.std_mean(x)[1]", "L.var_mean(x, 0)[0]",
                                        "L.aminmax(x, dim=1).max", "L.aminmax(x).min"])
def test_an_unused_result_adds_nothing_to_the_gradient(expression):
    """Only the used result of a two-result node counts (zeros for the other would meet the nan as nan)."""
    both(lambda L: gradients(lambda L, x: eval(expression, {"L": L, "x": x}))(L, [[1.0, NAN, 2.0], [0.5, 3.0, 1.0]]))


REDUCTIONS = {
    "sum": lambda L, x, dims, keep: L.sum(x, dims, keep), "mean": lambda L, x, dims, keep: L.mean(x, dims, keep),
    "nansum": lambda L, x, dims, keep: L.nansum(x, dims, keep), "amax": lambda L, x, dims, keep: L.amax(x, dims, keep),
    "var": lambda L, x, dims, keep: L.var(x, dims, keepdim=keep), "std": lambda L, x, dims, keep: L.std(x, dims, keep),
    "var_mean": lambda L, x, dims, keep: L.var_mean(x, dims, keepdim=keep, correction=0),
    "logsumexp": lambda L, x, dims, keep: L.logsumexp(x, dims, keep),
    "count_nonzero": lambda L, x, dims, keep: L.count_nonzero(x, dims),
    "all": lambda L, x, dims, keep: L.all(x, dims, keep), "any": lambda L, x, dims, keep: L.any(x, dims, keep),
    "prod": lambda L, x, dims, keep: L.prod(x, dims[0], keep),
    "max": lambda L, x, dims, keep: tuple(L.max(x, dims[0], keep)),
    "argmin": lambda L, x, dims, keep: L.argmin(x, dims[0], keep),
    "aminmax": lambda L, x, dims, keep: tuple(L.aminmax(x, dim=dims[0], keepdim=keep)),
    "softmax": lambda L, x, dims, keep: L.softmax(x, dims[0]), "cumsum": lambda L, x, dims, keep: L.cumsum(x, dims[0]),
    "cumprod": lambda L, x, dims, keep: L.cumprod(x, dims[0]),
    "cummin": lambda L, x, dims, keep: tuple(L.cummin(x, dims[0])),
    "logcumsumexp": lambda L, x, dims, keep: L.logcumsumexp(x, dims[0]),
}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(REDUCTIONS)), hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=3),
       st.data(), st.booleans())
def test_reductions_over_random_dims_equal_torchs(name, shape, data, keepdim):
    """Any shape (empty ones too), any set of dims, negative or not, with or without keepdim: torch's results or
    torch's error type, and the same gradient."""
    ndim = len(shape)
    dim = st.integers(-ndim, ndim - 1)
    dims = tuple(data.draw(st.lists(dim, min_size=1, max_size=ndim, unique_by=lambda d: d % ndim)))
    values = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([-2.0, -0.5, 0.0, 1.0, 1.5, 3.0])))
    outcomes = []
    for L in (torch, ember):
        x = L.tensor(values, requires_grad=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                result = REDUCTIONS[name](L, x, dims, keepdim)
        except Exception as error:
            outcomes.append(type(error))
            continue
        first = result[0] if isinstance(result, tuple) else result
        grad = None
        if first.requires_grad:
            weights = L.tensor(np.linspace(-1.0, 1.0, first.numel()).reshape(tuple(first.shape)))
            (grad,) = L.autograd.grad((first * weights).sum(), x)
        outcomes.append((plain(result), None if grad is None else grad.detach().numpy()))
    theirs, mine = outcomes
    if isinstance(theirs, type):
        assert mine is theirs or (isinstance(mine, type) and issubclass(mine, theirs)), (theirs, mine)
        return
    assert not isinstance(mine, type), f"torch gives a result, ember raises {mine.__name__}"
    assert_same(theirs[0], mine[0])
    assert (theirs[1] is None) == (mine[1] is None)
    if theirs[1] is not None:
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-10, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_in_place_scans_take_only_their_own_dtype_as_torch(name, dtype):
    def program(L):
        x = L.tensor([1.0, 2.0, 3.0])
        return getattr(x, name)(0, dtype=getattr(L, dtype))

    if dtype == "float32":
        both(program)
    else:
        both_raise(program, RuntimeError, "Bad in-place call")


def test_cumsum_with_a_dtype_sums_the_gradient_back_in_the_input_dtype():
    def program(L):
        x = leaf(L, [0.1, 0.2, 0.3, 1e-9])
        y = L.cumsum(x, 0, dtype=L.float32)
        (grad,) = L.autograd.grad(y, x, L.tensor([1.0, 1e8, -1e8, 1.0], dtype=L.float32))
        return y, grad

    both(program)


# ----------------------------------------------------------------- which error comes first (torch's argument parser)

FLOATS, INTS, BOOLS = [[1.0, 2.0], [3.0, 4.0]], [[1, 2], [3, 4]], [[True, False]]


@pytest.mark.parametrize("call", ["x.max(None)", "x.min(None)", "L.max(x, dim=None)", "L.min(x, None, True)",
                                  "x.max(dim=None)"])
@pytest.mark.parametrize("values", [FLOATS, INTS, BOOLS])
def test_max_and_min_refuse_an_explicit_dim_none(call, values):
    both_raise(lambda L: eval(call, {"L": L, "x": L.tensor(values)}), TypeError, "invalid combination of arguments")


@pytest.mark.parametrize("call", ["x.max()", "x.min()", "L.max(x)", "x.max(0).values", "L.min(x, -1, True).indices",
                                  "L.max(x, x)", "x.max(other=x)"])
def test_max_and_min_without_a_dim_or_with_one_as_torch(call):
    both(lambda L: eval(call, {"L": L, "x": L.tensor(FLOATS)}))


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_nanmean_refuses_a_dtype_that_is_no_float(dtype):
    both_raise(lambda L: L.tensor(FLOATS).nanmean(dtype=getattr(L, dtype)), RuntimeError,
               r"nanmean\(\): could not infer output dtype. Optional dtype must be either a floating point")


@pytest.mark.parametrize("values", [FLOATS, INTS, BOOLS])
def test_mean_with_keepdim_and_no_dim_is_a_type_error_whatever_the_dtype(values):
    both_raise(lambda L: L.tensor(values).mean(keepdim=True), TypeError, "mean()")


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("values", [FLOATS, BOOLS])
def test_argmax_refuses_a_tuple_dim_before_the_dtype(op, values):
    both_raise(lambda L: getattr(L.tensor(values), op)((0, 1)), TypeError, r"argument 'dim' .*must be int, not tuple")


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("call", ["x.{op}(None)", "x.{op}((0, 1))", "x.{op}(keepdim=True)"])
@pytest.mark.parametrize("values", [FLOATS, BOOLS])
def test_median_refuses_bad_dims_before_the_dtype(op, call, values):
    both_raise(lambda L: eval(call.format(op=op), {"x": L.tensor(values)}), TypeError, op)


@pytest.mark.parametrize("values", [FLOATS, INTS, BOOLS])
@pytest.mark.parametrize("p", [(0, 1), [1]])
def test_norm_refuses_a_p_that_is_no_number_before_the_dtype(values, p):
    both_raise(lambda L: L.norm(L.tensor(values), p), TypeError, "must be")


@pytest.mark.parametrize("p", [2, 1.5, True, np.float64(3.0), "fro", None])
def test_norm_takes_numbers_of_every_kind_as_torch(p):
    both(lambda L: L.norm(L.tensor([[3.0, -4.0], [1.0, 2.0]]), p))


# ----------------------------------------------------------------- layout of results of permuted inputs

_REDUCTIONS_OF_DIMS = {
    "sum": lambda p, d, k: p.sum(d, keepdim=k), "mean": lambda p, d, k: p.mean(d, keepdim=k),
    "prod": lambda p, d, k: p.prod(d[0], keepdim=k), "amax": lambda p, d, k: p.amax(d, keepdim=k),
    "amin": lambda p, d, k: p.amin(d, keepdim=k), "var": lambda p, d, k: p.var(d, keepdim=k),
    "std": lambda p, d, k: p.std(d, keepdim=k), "logsumexp": lambda p, d, k: p.logsumexp(d, keepdim=k),
    "nansum": lambda p, d, k: p.nansum(d, keepdim=k), "nanmean": lambda p, d, k: p.nanmean(d, keepdim=k),
    "all": lambda p, d, k: p.all(d[0], keepdim=k), "any": lambda p, d, k: p.any(d[0], keepdim=k),
    "count_nonzero": lambda p, d, k: p.count_nonzero(d), "norm": lambda p, d, k: p.norm(dim=d, keepdim=k),
    "aminmax": lambda p, d, k: p.aminmax(dim=d[0], keepdim=k).max,
    "var_mean": lambda p, d, k: ember_or_torch(p).var_mean(p, d, keepdim=k)[1],
}


def ember_or_torch(t):
    return ember if isinstance(t, ember.Tensor) else torch


@pytest.mark.parametrize("name", sorted(_REDUCTIONS_OF_DIMS))
@pytest.mark.parametrize("dims", [(1,), (2,), (1, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_of_a_permuted_tensor_are_row_major_as_torchs(name, dims, keepdim):
    """torch writes a reduction's result row-major whatever the input's layout (NumPy follows the input's), so
    that ``view`` of it works."""
    values = np.arange(1.0, 25.0).reshape(2, 3, 4)

    def program(L):
        result = _REDUCTIONS_OF_DIMS[name](L.tensor(values).permute(2, 0, 1), dims, keepdim)
        return result, result.is_contiguous(), result.view(-1)

    both(program)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_nansum_into_an_integer_dtype_counts_nan_as_zero_as_torch(dtype, dim):
    """The nans are dropped before the cast to ``dtype``: a nan made an integer is no 0 (NumPy's cast gives the
    dtype's lowest value)."""
    values = [[np.nan, 1.5, 2.0], [3.0, np.nan, -4.5]]
    both(lambda L: L.nansum(L.tensor(values), dim=dim, dtype=getattr(L, dtype)))
