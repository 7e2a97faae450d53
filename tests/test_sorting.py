"""Sorting, selection and counting against torch: what the op table cannot express.

Named tuples as a whole, keyword forms and methods, ``out=``, ties (compared index for index: stable sorts
as torch documents them; unstable sorts, topk, kthvalue, median and mode as torch's kernels leave them), NaN,
gradients of medians and quantiles, and random inputs (hypothesis).
"""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember._ops import sorting
from twins import both, both_raise, grad_fn_name, leaf, normalise

NAN = float("nan")
TIES = [[2.0, 1.0, 2.0, NAN, 1.0, 2.0, 3.0, NAN], [0.0, 0.0, -1.0, 5.0, 5.0, 0.0, NAN, -1.0]]


def ties(lib, dtype="float64"):
    return lib.tensor(TIES, dtype=getattr(lib, dtype))


# ----------------------------------------------------------------- named tuples, keywords, methods

NAMED = {
    "sort": lambda L, x: L.sort(x),
    "sort(dim=0, descending=True)": lambda L, x: L.sort(x, dim=0, descending=True),
    "x.sort(stable=True, descending=True)": lambda L, x: x.sort(stable=True, descending=True),
    "topk(k=3, largest=False)": lambda L, x: L.topk(x, k=3, largest=False),
    "x.topk(1, dim=0)": lambda L, x: x.topk(1, dim=0),
    "x.kthvalue(2, dim=0, keepdim=True)": lambda L, x: x.kthvalue(2, dim=0, keepdim=True),
    "median(dim=1)": lambda L, x: L.median(x, dim=1),
    "x.median(0, True)": lambda L, x: x.median(0, True),
    "x.nanmedian(dim=1)": lambda L, x: x.nanmedian(dim=1),
    "x.mode(dim=0)": lambda L, x: x.mode(dim=0),
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_tuples_are_torchs(name):
    """The type's name, its fields and its values (the indices only where the choice is documented)."""

    def program(lib):
        x = lib.tensor([[3.0, 1.0, 2.0, 7.0], [0.5, 4.0, -1.0, 2.5]])
        result = NAMED[name](lib, x)
        return type(result).__name__, result.values, result.indices, tuple(result), repr(result).split("(")[0]

    both(program, prepare=normalise)


@pytest.mark.parametrize("expression", [
    "x.sort(stable=True)", "x.sort(dim=0, stable=True, descending=True)", "L.sort(x, descending=True, stable=True)",
    "x.argsort(stable=True)", "L.argsort(x, dim=0, descending=True, stable=True)", "x.msort()",
    "x.sort(descending=True, stable=False)",
])
def test_stable_sorts_keep_ties_in_order_as_torch(expression):
    """torch documents its stable sort: equal elements (NaNs too) keep their order, ascending or descending."""
    both(lambda L: plain(eval(expression, {"L": L, "x": ties(L)})))


def plain(result):
    """A named tuple as a plain one (its fields' names are compared in test_named_tuples_are_torchs)."""
    return tuple(result) if isinstance(result, tuple) else result


@pytest.mark.parametrize("expression", [
    "x.topk(3).values", "x.topk(3, largest=False).values", "x.topk(2, 0).values", "x.kthvalue(7).values",
    "x.kthvalue(2, 0).values", "x.median()", "x.median(1).values", "x.median(1).indices", "x.nanmedian()",
    "x.nanmedian(1).values", "x.nanmedian(0).values", "x.quantile(0.5, 1)", "x.nanquantile(0.3, 1)",
    "x.nanquantile(L.tensor([0.25, 0.75], dtype=L.float64), 1, True)", "x.quantile(0.5, 0)",
])
def test_nan_is_the_largest_value_and_propagates_as_torch(expression):
    """NaN sorts last; median and quantile are NaN where a NaN is, nanmedian and nanquantile skip it.

    (median's index of NaN is the first NaN of its slice, as torch's.)"""
    both(lambda L: plain(eval(expression, {"L": L, "x": ties(L)})))


@pytest.mark.parametrize("expression", [
    "L.sort(L.tensor(2.5))", "L.topk(L.tensor(2.5), 1)", "L.topk(L.tensor(2.5), 0)",
    "L.topk(L.ones(4, 0, 2), 0, 1, sorted=False)", "L.topk(L.ones(4, 0, 2), 2, 0)", "L.kthvalue(L.tensor(2.5), 1)",
    "L.median(L.tensor(2.5), 0)", "L.mode(L.tensor(2.5))", "L.median(L.tensor(2.5))", "L.argsort(L.tensor(2.5))",
    "L.quantile(L.tensor(2.5), 0.5)", "L.median(L.ones(0))", "L.nanmedian(L.ones(0, 3))",
    "L.sort(L.tensor([True, False, True]))", "L.mode(L.tensor([True, False, True])).values",
    "L.median(L.tensor([4, 1, 3, 2], dtype=L.uint8))", "L.sort(L.tensor([1., NAN], dtype=L.float16), descending=True)",
    "L.median(L.ones(0, 3), 1)", "L.mode(L.ones(2, 0), 0)", "L.median(L.zeros(0, dtype=L.int64))",
    "L.unique(L.tensor(3))",
    "L.unique(L.tensor([NAN, 1., NAN]), return_counts=True)", "L.unique_consecutive(L.tensor([NAN, NAN, 1.]))",
    "L.unique(L.tensor([True, False, True]), return_inverse=True)",
    "L.bincount(L.tensor([1, 3, 1], dtype=L.uint8))", "L.bincount(L.tensor([1, 3]), L.tensor([1, 2], dtype=L.int32))",
    "L.bincount(L.zeros(0, dtype=L.int64), L.zeros(0), 3)", "L.topk(L.tensor([1., 3., 2.]), L.tensor(2))",
    "L.kthvalue(L.tensor([1., 3., 2.]), L.tensor(2))",
    "L.histc(L.tensor([NAN, 1., 2.]), 2, 0, 2)", "L.histc(L.tensor([1., 1.]), 3)", "L.histc(L.zeros(0), 2)",
    "L.searchsorted(L.tensor([1, 3, 5]), L.tensor(3))", "L.searchsorted(L.tensor([1., 3.]), L.tensor([NAN, 2.]))",
    "L.bucketize(L.tensor(2.), L.tensor([1., 2.]), right=True)", "L.searchsorted(L.tensor([1, 3, 5]), 4)",
    "L.searchsorted(L.tensor([1., 3., NAN]), L.tensor([NAN, 2., 5., float('inf')]))",
    "L.searchsorted(L.tensor([[1., NAN, 3.], [NAN, 1., 2.]]), L.tensor([[NAN, 2.], [1.5, 3.]]), right=True)",
    "L.bucketize(L.tensor([NAN, 2.]), L.tensor([1., NAN]))", "L.searchsorted(L.ones(0, 3), L.ones(0, 2))",
    "L.searchsorted(L.tensor([]), L.tensor([1., 2.]))", "L.histc(L.tensor([1e38, -1e38, 0.]), 3)",
    # bfloat16, whose NumPy sort mixes NaNs among the numbers
    "[t.float() for t in L.unique(L.tensor([2., NAN, -3., 1., -3., 0., NAN, 1.], dtype=L.bfloat16), "
    "return_inverse=True, return_counts=True)]",
    "[t.float() for t in L.unique(L.tensor([[2., NAN], [1., -3.], [2., NAN], [1., -3.]], dtype=L.bfloat16), dim=0, "
    "return_counts=True)]",
    "[t.float() for t in L.unique(L.arange(3000.).remainder(7).where(L.arange(3000) % 5 > 0, NAN).to(L.bfloat16), "
    "return_counts=True)]",
    # mixed dtypes compare in their promoted dtype: uint8 boundaries take -1 as 255, bool ones take ints
    "L.searchsorted(L.tensor([1., 2., 3.], dtype=L.bfloat16), L.tensor([2, 3], dtype=L.int32), right=True)",
    "L.searchsorted(L.tensor([1., 2., 3.], dtype=L.float16), L.tensor([1.5, 2.001], dtype=L.bfloat16))",
    "L.searchsorted(L.tensor([1, 2, 3]), L.tensor([2.5, -0.5]))", "L.searchsorted(L.tensor([1, 2, 3]), 2.5)",
    "L.searchsorted(L.tensor([1, 2, 3], dtype=L.uint8), -1)", "L.searchsorted(L.tensor([False, True]), 1)",
    "L.searchsorted(L.tensor([1, 2, 3], dtype=L.uint8), L.tensor(-1))",
    "L.searchsorted(L.tensor([[1, 2], [0, 5]], dtype=L.int8), L.tensor([[1.5], [4.]], dtype=L.float64))",
    "L.bucketize(L.tensor([True, False]), L.tensor([0, 1, 2], dtype=L.int16), out_int32=True)",
    "L.bucketize(L.tensor([-1, 2], dtype=L.int8), L.tensor([0., 1.5], dtype=L.bfloat16))",
    "L.unique(L.tensor([[NAN, 1.], [0., 0.], [2., 2.], [2., 1.], [NAN, 2.], [0., 0.]]), dim=0, return_inverse=True,"
    " return_counts=True)",
    "L.unique(L.tensor([[1., 0., NAN, 1.], [1., 0., 1., 1.]]), dim=1, return_counts=True)",
])
def test_corners_as_torch(expression):
    """0-d, empty, bool, half, unsigned and NaN inputs, and torch's dtypes for them."""
    both(lambda L: plain(eval(expression, {"L": L, "NAN": NAN})), prepare=normalise)


@pytest.mark.parametrize("expression", [
    "L.quantile(x, 0.4, dim=1, keepdim=True, interpolation='midpoint')", "x.quantile(q=0.4)",
    "L.nanquantile(input=x, q=0.9, dim=0)", "x.unique(sorted=True, return_inverse=True, return_counts=True)",
    "L.unique(x.round(), dim=1, return_counts=True)", "x.round().unique_consecutive(return_counts=True, dim=0)",
    "L.bincount(input=x.abs().long().flatten(), minlength=4)", "x.histc(bins=3, min=-1, max=1)",
    "L.searchsorted(x.sort().values, x, side='right')", "L.searchsorted(x.sort().values, x, out_int32=True)",
    "L.bucketize(x, boundaries=L.tensor([-1., 0., 1.]), right=True, out_int32=True)",
    "L.topk(x, 2, 1, False, True)", "L.msort(input=x)",
])
def test_keyword_and_method_forms_as_torch(expression):
    both(lambda L: plain(eval(expression, {"L": L, "x": L.tensor([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]])})),
         prepare=normalise)


# ----------------------------------------------------------------- out=

OUTS = {
    "sort": lambda L, x, o: L.sort(x, 0, out=(o(L), o(L, L.int64))),
    "topk": lambda L, x, o: L.topk(x, 1, out=(o(L), o(L, L.int64))),
    "kthvalue": lambda L, x, o: L.kthvalue(x, 2, 1, True, out=(o(L), o(L, L.int64))),
    "median": lambda L, x, o: L.median(x, 1, out=(o(L), o(L, L.int64))),
    "mode": lambda L, x, o: L.mode(x, out=(o(L), o(L, L.int64))),
    "msort": lambda L, x, o: L.msort(x, out=o(L)),
    "quantile": lambda L, x, o: L.quantile(x, 0.5, 1, out=o(L)),
    "histc": lambda L, x, o: L.histc(x, 4, out=o(L)),
    "searchsorted": lambda L, x, o: L.searchsorted(L.tensor([0., 1.]), x, out=o(L, L.int64)),
    "bucketize": lambda L, x, o: L.bucketize(x, L.tensor([0., 1.]), out=o(L, L.int64)),
}


@pytest.mark.parametrize("name", sorted(OUTS))
def test_out_receives_the_result_as_torch(name):
    def program(lib):
        x = lib.tensor([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]])
        given = []

        def out(L, dtype=None):
            given.append(L.zeros(0, dtype=dtype or L.float32))
            return given[-1]

        result = OUTS[name](lib, x, out)
        results = result if isinstance(result, tuple) else (result,)
        return [r is g for r, g in zip(results, given)], list(results)

    both(program)


# ----------------------------------------------------------------- gradients

@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_gradients_are_the_interpolation_weights_as_torch(interpolation):
    """With ties and several q at once, including q at the ends, to second order through a product."""

    def program(lib):
        x = leaf(lib, [[3.0, 1.0, 2.0, 2.0, 5.0], [0.0, 4.0, 4.0, -1.0, 2.5]])
        q = lib.tensor([0.0, 0.125, 0.5, 0.625, 1.0], dtype=lib.float64)
        y = lib.quantile(x * x, q, dim=1, interpolation=interpolation)
        (g,) = lib.autograd.grad((y * lib.arange(10.0, dtype=lib.float64).view(5, 2)).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return y, g, gg

    both(program)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "nearest"])
def test_quantile_gradients_reach_the_tied_elements_torchs_sort_puts_there(name, interpolation):
    """torch finds quantiles through its (unstable) sort: of equal elements, the gradient goes where it put them."""

    def program(lib):
        x = leaf(lib, np.where(np.arange(60) % 7 == 0, NAN, np.arange(60) * 37 % 5).reshape(2, 30))
        y = getattr(lib, name)(x, lib.tensor([0.1, 0.45, 0.8], dtype=lib.float64), 1, interpolation=interpolation)
        (lib.where(y == y, y, 0.0) * lib.arange(1.0, 7.0, dtype=lib.float64).view(3, 2)).sum().backward()
        return y, x.grad

    both(program)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("q_shape", [(), (3,)])
@pytest.mark.parametrize("dim", [None, 1])
def test_a_q_that_requires_grad_gets_its_gradient_as_torch(name, q_shape, dim):
    """A linear quantile moves with q (at the gap between its two elements, times the slice's length less one;
    not at all in a slice that a NaN makes NaN), to second order."""

    def program(lib):
        x = leaf(lib, [[3.0, 1.0, 2.0, 2.0, 5.0], [0.0, NAN, 4.0, -1.0, 2.5], [NAN] * 5])
        q = leaf(lib, np.linspace(0.2, 0.9, 3).reshape(q_shape) if q_shape else 0.35)
        y = getattr(lib, name)(x * x, q, dim)
        weights = lib.tensor(np.arange(1.0, 1.0 + y.numel()).reshape(tuple(y.shape)))
        gx, gq = lib.autograd.grad((lib.where(y == y, y, 0.0) * weights).sum(), (x, q), create_graph=True)
        (ggq,) = lib.autograd.grad((gx * gx).sum() + gq.sum(), q, allow_unused=True)
        return y, gx, gq, ggq

    both(program)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_quantiles_between_elements_are_torchs_to_the_last_bit(dtype):
    """torch interpolates from the nearer element with one rounding (a fused multiply-add); so does ember."""
    rng = np.random.default_rng(0)
    values, q = rng.normal(size=(7, 29)).astype(dtype), rng.random(50).astype(dtype)
    ours, theirs = [lib.nanquantile(lib.tensor(values), lib.tensor(q), dim=1).numpy() for lib in (ember, torch)]
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("expression", ["x.median(1).values", "x.sort(0).values", "x.topk(2).values",
                                        "x.kthvalue(2, 1).values", "x.mode(1).values", "x.quantile(0.3)"])
def test_the_input_may_change_in_place_after_the_forward_as_torch(expression):
    """Only the chosen indices are saved, so changing the input afterwards is no error, as in torch."""

    def program(lib):
        x = leaf(lib, [[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
        y = x * 1.0
        out = eval(expression, {"x": y})
        y.add_(1)
        out.sum().backward()
        return out, x.grad, grad_fn_name(out) if "quantile" not in expression else None

    both(program, prepare=normalise)


@pytest.mark.parametrize("expression", ["x.median()", "x.nanmedian()", "x.median(0).values", "x.nanmedian(0).values"])
def test_the_median_of_every_element_shares_its_gradient_among_ties_as_torch(expression):
    """median() and nanmedian() share the gradient evenly among the elements equal to the median (NaNs for a
    NaN median); along a dim the gradient goes to the one index chosen."""

    def program(lib):
        x = leaf(lib, [1.0, 2.0, NAN, 2.0, 3.0, 2.0, NAN])
        y = x * x
        out = eval(expression, {"x": y})
        (g,) = lib.autograd.grad(out, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        clean = leaf(lib, [1.0, 2.0, 2.0, 3.0])
        eval(expression, {"x": clean}).backward()
        return out, g, gg, clean.grad

    both(program)


def test_the_median_of_every_element_refuses_a_changed_input_as_torch():
    def program(lib):
        y = leaf(lib, [1.0, 2.0, 3.0]) * 1.0
        out = y.median()
        y.add_(1)
        out.backward()

    both_raise(program, RuntimeError, "modified by an inplace operation")


@pytest.mark.parametrize("expression", ["x.sort(1).values", "x.topk(2).values", "x.kthvalue(2).values",
                                        "x.median(1).values", "x.mode(1).values", "x.msort()"])
def test_the_gradient_of_a_selection_is_a_scatter_as_torch(expression):
    def program(lib):
        x = leaf(lib, [[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
        (g,) = lib.autograd.grad((eval(expression, {"x": x}) ** 2).sum(), x, create_graph=True)
        return grad_fn_name(g)

    both(program)


def test_indices_and_counts_carry_no_gradient():
    for lib in (torch, ember):
        x = leaf(lib, [3.0, 1.0, 2.0, 1.0])
        assert not x.sort().indices.requires_grad and not x.argsort().requires_grad
        assert not lib.histc(x, 3).requires_grad


# ----------------------------------------------------------------- errors

ERRORS = [
    ("L.topk(L.ones(3), 4)", RuntimeError, "k out of range"),
    ("L.topk(L.tensor([True]), 1)", RuntimeError, "bool"),
    ("L.kthvalue(L.ones(3), 4)", RuntimeError, "k out of range"),
    ("L.kthvalue(L.tensor(2.), 2)", RuntimeError, "k out of range"),
    ("L.kthvalue(L.tensor([True]), 1)", NotImplementedError, "Bool"),
    ("L.median(L.ones(0, 3), 0)", IndexError, "Expected reduction dim 0 to have non-zero size"),
    ("L.mode(L.ones(0, 3), 0)", IndexError, "Expected reduction dim 0 to have non-zero size"),
    ("L.nanmedian(L.tensor([True]))", NotImplementedError, "Bool"),
    ("L.quantile(L.ones(3), 1.5)", RuntimeError, r"q must be in the range \[0, 1\] but got 1.5"),
    ("L.nanquantile(L.ones(3), -0.5)", RuntimeError, r"quantile\(\) q must be in the range"),
    ("L.quantile(L.ones(3), L.tensor([0.5, 2.]))", RuntimeError, r"q values must be in the range \[0, 1\]"),
    ("L.quantile(L.ones(3), L.ones(1, 1))", RuntimeError, "q must be a scalar or 1D tensor"),
    ("L.quantile(L.ones(3, dtype=L.float16), 0.5)", RuntimeError, "must be either float or double dtype"),
    ("L.quantile(L.ones(3), 0.5, interpolation='cubic')", RuntimeError, "interpolation must be one of"),
    ("L.quantile(L.ones(0), 0.5)", RuntimeError, "input tensor must be non-empty"),
    ("L.bincount(L.tensor([1, -1]))", RuntimeError, "non-negative"),
    ("L.bincount(L.tensor([1, 2]), L.ones(3))", RuntimeError, "same length"),
    ("L.bincount(L.tensor([True]))", NotImplementedError, "Bool"),
    ("L.histc(L.ones(3), 3, 2, 1)", RuntimeError, "max must be larger than min"),
    ("L.histc(L.tensor([1., float('nan')]))", RuntimeError, "is not finite"),
    ("L.histc(L.tensor([1, 2]))", NotImplementedError, "not implemented for"),
    ("L.searchsorted(L.ones(2), L.ones(1), side='left', right=True)", RuntimeError, "side and right"),
    ("L.searchsorted(L.ones(2, 3), L.ones(3, 3))", RuntimeError, "first N-1 dimensions"),
    ("L.searchsorted(L.ones(2), L.ones(1), sorter=L.tensor([0, 5]))", RuntimeError, "sorter index out of range"),
    ("L.searchsorted(L.tensor([False, True]), L.tensor([True]))", NotImplementedError, "Bool"),
    ("L.searchsorted(L.tensor([False, True]), True)", NotImplementedError, "Bool"),
    ("L.bucketize(2j, L.tensor([1., 2.]))", NotImplementedError, "ComplexFloat"),
    ("L.bucketize(L.ones(2), L.ones(2, 2))", RuntimeError, "boundaries tensor must be 1 dimension"),
    ("L.unique(L.ones(0, 3), dim=1)", RuntimeError, "0 sized dimensions"),
    ("L.sort(L.ones(2), dim=1)", IndexError, "Dimension out of range"),
    ("L.median(L.ones(2), keepdim=True)", TypeError, "missing 1 required positional arguments"),
    ("L.topk(L.ones(2), 1, None)", TypeError, r"argument 'dim' \(position 3\) must be int, not NoneType"),
    ("L.kthvalue(L.ones(2), 1, None)", TypeError, r"argument 'dim' \(position 3\) must be int"),
    ("L.mode(L.ones(2), None)", TypeError, r"argument 'dim' \(position 2\) must be int"),
    ("L.nanmedian(L.ones(2), None)", TypeError, r"argument 'dim' \(position 2\) must be int"),
    ("L.median(L.ones(2), None)", TypeError, r"argument 'dim' \(position 2\) must be int"),
    ("L.sort(L.ones(2), None)", TypeError, "sort"),
    ("L.topk(L.ones(2), 1.5)", TypeError, r"topk\(\): argument 'k' \(position 2\) must be int, not float"),
    ("L.kthvalue(L.ones(2), 1.0)", TypeError, r"argument 'k' \(position 2\) must be int"),
    ("L.histc(L.ones(2), 2.5)", TypeError, r"histc\(\): argument 'bins' \(position 2\) must be int"),
    ("L.bincount(L.tensor([1]), minlength=2.5)", TypeError, r"bincount\(\): argument 'minlength' must be int"),
    ("L.quantile(L.ones(2), [0.5])", TypeError, r"quantile\(\) received an invalid combination of arguments"),
    ("L.argsort(L.ones(2), None)", TypeError, "argsort"),
]


@pytest.mark.parametrize("expression, error, fragment", ERRORS)
def test_errors_as_torch(expression, error, fragment):
    both_raise(lambda L: eval(expression, {"L": L}), error, fragment)


# ----------------------------------------------------------------- random inputs

def tie_heavy(draw, max_side: int = 6) -> np.ndarray:
    shape = draw(st.lists(st.integers(1, max_side), min_size=1, max_size=3 if max_side < 10 else 2))
    values = draw(st.lists(st.sampled_from([-1.0, 0.0, 0.5, 2.0, NAN]), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    return np.array(values).reshape(shape)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_selections_of_tie_heavy_inputs_are_torchs(data):
    """sort (stable or not), argsort, msort, topk (sorted or not), kthvalue, median, nanmedian and mode on few
    distinct values and NaNs: torch's values, and torch's indices, in torch's order."""
    array = tie_heavy(data.draw, data.draw(st.sampled_from([6, 40])))
    dim = data.draw(st.integers(-array.ndim, array.ndim - 1))
    size = array.shape[dim]
    k = data.draw(st.integers(1, size))
    descending, keepdim = data.draw(st.booleans()), data.draw(st.booleans())

    def program(lib):
        x = lib.tensor(array)
        return (tuple(x.sort(dim=dim, descending=descending, stable=True)), tuple(x.sort(dim, descending)),
                x.argsort(dim, descending), x.msort(), tuple(x.topk(k, dim)),
                tuple(x.topk(k, dim, largest=False)), tuple(x.topk(k, dim, descending, sorted=False)),
                tuple(x.kthvalue(k, dim, keepdim)),
                tuple(x.median(dim, keepdim)), tuple(x.nanmedian(dim)), x.median(), x.nanmedian(),
                tuple(x.mode(dim, keepdim)))

    both(program)


def mostly_distinct(rows: int, size: int) -> np.ndarray:
    """Distinct values, but for a few rows where values repeat and a few with NaNs (one all NaN)."""
    values = np.random.default_rng(3).permutation(rows * size).reshape(rows, size) / 7.0 - 50
    values[1, ::3] = values[1, 0]
    values[4] = np.round(values[4] / 40)
    values[5, 2::5] = NAN
    values[6] = NAN
    return values


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
@pytest.mark.parametrize("transposed", [False, True])
def test_order_statistics_among_distinct_and_tied_rows_are_torchs(dtype, transposed):
    """median, nanmedian and kthvalue pick the value by a partition and the index among equal values as
    torch's kernels: rows with and without ties, NaNs, a non-contiguous input and small float types."""
    array = mostly_distinct(9, 23)
    if dtype == "int64":
        array = np.nan_to_num(array, nan=7.0)

    def program(lib):
        x = lib.tensor(array).to(getattr(lib, dtype))
        x = x.t().contiguous().t() if transposed else x
        return [(values.double(), indices) for values, indices in (
            f(x) for f in (lambda x: x.median(1), lambda x: x.nanmedian(1), lambda x: x.median(0),
                           lambda x: x.kthvalue(1, 1), lambda x: x.kthvalue(12, 1, True),
                           lambda x: x.kthvalue(23, 1), lambda x: x.kthvalue(5, 0)))]

    both(program)


@pytest.mark.parametrize("expression", ["x.median(1).values", "x.nanmedian(0).values", "x.kthvalue(3, 1).values",
                                        "x.t().kthvalue(2, 1, True).values", "x.median()"])
def test_order_statistics_have_first_and_second_derivatives(expression):
    x = ember.tensor(np.random.default_rng(8).permutation(35).reshape(5, 7) / 7.0, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: eval(expression, {"x": t}), (x,))
    assert ember.autograd.gradgradcheck(lambda t: eval(expression, {"x": t}), (x,))


def test_bfloat16_with_nans_is_ordered_as_torch():
    """NumPy misorders bfloat16 around NaNs: every sort and selection orders it as float32 does."""
    values = mostly_distinct(9, 23)[:, :20]

    def program(lib):
        x = lib.tensor(values).to(lib.bfloat16)
        return [(r.double() if r.is_floating_point() else r) for r in (
            *x.sort(1), *x.sort(dim=0, descending=True, stable=True), x.argsort(1), x.msort(), *x.topk(2, 1),
            *x.topk(3, 1, largest=False), *x.topk(12, 1, sorted=False), *x.mode(1), *x.kthvalue(4, 1))]

    both(program)


def test_order_statistics_of_many_tied_rows_keep_the_stable_order():
    """Beyond the ties torch's selection is emulated for, kthvalue names the element a stable sort puts at k."""
    array = np.random.default_rng(4).integers(0, 50, (200, 400)).astype(np.float32)
    array[array == 3] = NAN
    order = np.argsort(array, 1, kind="stable")
    for k in (1, 7, 200, 400):
        assert np.array_equal(ember.kthvalue(ember.tensor(array), k, 1).indices.numpy(), order[:, k - 1])


def test_topk_of_many_tied_rows_keeps_the_stable_order():
    """Beyond the ties torch's selection is emulated for, topk's few of many keep the stable order (found by
    passes of argmax, not a full sort), NaN the largest value."""
    array = np.random.default_rng(4).integers(0, 50, (200, 400)).astype(np.float32)
    array[array == 3] = NAN
    for largest in (True, False):
        stable = sorting.stable_order(array, 1, descending=largest)
        for k in (1, 3, 6):
            assert np.array_equal(ember.topk(ember.tensor(array), k, 1, largest).indices.numpy(), stable[:, :k])


@pytest.mark.parametrize("k, dim", [(3, 1), (2, 0)])
def test_unsorted_topk_of_a_few_of_many_has_torchs_indices_where_one_slice_ties(k, dim):
    """torch's heap select sorts the few it keeps, ``sorted=False`` or not: only the tied slice needs its steps
    followed, however many slices there are."""
    array = np.random.default_rng(4).standard_normal((300, 200)).astype(np.float32)
    array[7] = np.round(array[7])
    array = array if dim == 1 else np.ascontiguousarray(array.T)

    def program(lib):
        return tuple(lib.topk(lib.tensor(array), k, dim, sorted=False))

    both(program)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64"])
@pytest.mark.parametrize("layout", ["random", "ascending", "descending", "with nan"])
def test_topk_heap_select_of_tied_slices_has_torchs_indices(layout, dtype):
    """k of 64 k or more is torch's heap select: the elements that cannot enter its heap are left out of the
    emulation, which must still follow it step by step (rows that keep improving, NaN, both directions)."""
    array = np.random.default_rng(12).integers(-6, 7, (6, 400)).astype(np.float64)
    if layout in ("ascending", "descending"):
        array = np.ascontiguousarray(np.sort(array, 1)[:, ::1 if layout == "ascending" else -1])
    if layout == "with nan" and dtype.startswith("float"):
        array[::2, ::37] = NAN

    def program(lib):
        x = lib.tensor(array).to(getattr(lib, dtype))
        return [*(lib.topk(x, 5, 1, largest, sorted=largest).indices for largest in (True, False)),
                lib.topk(x, 1, 1, False).indices, lib.topk(x.T, 3, 0).indices]  # .T: a transposed view

    both(program)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_quantiles_of_random_inputs_are_torchs(data):
    array = tie_heavy(data.draw)
    array = np.where(np.isnan(array), array, array + data.draw(st.floats(-1, 1)) * np.arange(array.size).reshape(
        array.shape) / 7)
    dim = data.draw(st.one_of(st.none(), st.integers(-array.ndim, array.ndim - 1)))
    qs = data.draw(st.lists(st.floats(0, 1), min_size=1, max_size=4))
    interpolation = data.draw(st.sampled_from(sorting._INTERPOLATIONS))
    keepdim = data.draw(st.booleans())

    def program(lib):
        x, q = lib.tensor(array), lib.tensor(qs, dtype=lib.float64)
        return (lib.quantile(x, q, dim, keepdim, interpolation=interpolation),
                lib.nanquantile(x, q[0].item(), dim, keepdim, interpolation=interpolation))

    both(program)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_counting_random_inputs_as_torch(data):
    """unique (with dim), unique_consecutive, bincount, histc, searchsorted and bucketize."""
    array = np.nan_to_num(tie_heavy(data.draw, 4), nan=1.0)
    dim = data.draw(st.one_of(st.none(), st.integers(-array.ndim, array.ndim - 1)))
    flat = (array.reshape(-1) * 2 + 2).astype(np.int64)
    bins = data.draw(st.integers(1, 7))
    low = data.draw(st.sampled_from([0.0, -1.0, 0.5]))

    def program(lib):
        x = lib.tensor(array)
        boundaries = lib.tensor(np.sort(array.reshape(-1)))
        return (lib.unique(x, return_inverse=True, return_counts=True, dim=dim),
                lib.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim),
                lib.bincount(lib.tensor(flat), lib.tensor(array.reshape(-1))), lib.bincount(lib.tensor(flat), None, 9),
                lib.histc(x, bins, low, 2.0 if low else 0.0), lib.searchsorted(boundaries, x),
                lib.searchsorted(boundaries, x, right=True), lib.bucketize(x, boundaries),
                lib.bucketize(x, boundaries, right=True))

    both(program)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_unique_slices_with_nan_as_torch(data):
    """unique along a dim sorts its slices lexicographically, comparison passing over NaNs, in torch's order."""
    array = tie_heavy(data.draw, 5)
    dim = data.draw(st.integers(-array.ndim, array.ndim - 1))
    both(lambda lib: (lib.unique(lib.tensor(array), return_inverse=True, return_counts=True, dim=dim),
                      lib.unique_consecutive(lib.tensor(array), return_inverse=True, return_counts=True, dim=dim)))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_rows_of_sorted_sequences_are_searched_row_by_row_as_torch(data):
    rows, length, count = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 5)), data.draw(st.integers(1, 4))
    sequence = np.sort(np.array(data.draw(st.lists(st.integers(0, 6), min_size=rows * length,
                                                    max_size=rows * length))).reshape(rows, length), axis=1)
    values = np.array(data.draw(st.lists(st.integers(-1, 7), min_size=rows * count,
                                         max_size=rows * count))).reshape(rows, count)
    order = np.argsort(np.random.default_rng(0).permutation(sequence.T).T, axis=1)
    shuffled = np.take_along_axis(sequence, np.argsort(order, axis=1), 1)

    def program(lib):
        seq, x = lib.tensor(sequence), lib.tensor(values)
        return (lib.searchsorted(seq, x), lib.searchsorted(seq, x, side="right"),
                lib.searchsorted(lib.tensor(shuffled), x, sorter=lib.tensor(order)))

    both(program)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, float("inf"), float("-inf")]),
                min_size=1, max_size=12),
       st.lists(st.sampled_from([-2.0, -0.5, 0.0, -0.0, 1.0, 3.0, 7.0, float("nan"), float("inf"), float("-inf")]),
                min_size=1, max_size=12),
       st.booleans(), st.sampled_from(["float32", "float64", "int64"]))
def test_search_of_one_sorted_row_is_the_binary_search_of_every_row(boundaries, values, right, dtype):
    """One sorted row without NaN goes to NumPy's search: positions, ties and NaN values as the general search's
    (the one that follows torch's steps, which other rows and unsorted or NaN boundaries take)."""
    from ember._ops.counting import _bisect

    if dtype == "int64":
        boundaries = [b for b in boundaries if np.isfinite(b)] or [0.0]
        values = [v for v in values if np.isfinite(v)] or [0.0]
    row = np.sort(np.array(boundaries, dtype))[None]
    data = np.array(values, dtype)[None]
    general = _bisect(np.concatenate([row, row]), np.concatenate([data, data]), right)[:1]
    np.testing.assert_array_equal(_bisect(row, data, right), general)
    expected = torch.searchsorted(torch.from_numpy(row[0]), torch.from_numpy(data[0]), right=right).numpy()
    np.testing.assert_array_equal(ember.searchsorted(ember.tensor(row[0]), ember.tensor(data[0]), right=right).numpy(),
                                  expected)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 16), st.integers(1, 5), st.booleans(), st.integers(0, 1),
       st.sampled_from(["float32", "float64", "int64", "uint8"]), st.booleans())
def test_topk_of_a_few_of_many_is_torchs(seed, k, largest, dim, dtype, special):
    """A few of many go by passes of argmax (argmin), or by partition where a value stands in the way: the values
    and indices are torch's, with ties, NaN, infinities and the extreme integers among the data."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 6, (7, 40)).astype(dtype) if dtype != "float32" else rng.standard_normal((7, 40))
    data = np.asarray(data, dtype)
    if special and data.dtype.kind == "f":
        data[rng.random(data.shape) < 0.1] = rng.choice([np.nan, np.inf, -np.inf])
    elif special:
        info = np.iinfo(data.dtype)
        data[rng.random(data.shape) < 0.1] = rng.choice([info.min, info.max])
    data = data if dim == 1 else data.T.copy()
    ours = ember.topk(ember.tensor(data), k, dim, largest)
    theirs = torch.topk(torch.from_numpy(data), k, dim, largest)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


@pytest.mark.parametrize("expression, index_dtype", [
    ("L.sort(x, out=out)", "int64"), ("L.topk(x, 2, out=out)", "int64"), ("L.kthvalue(x, 2, out=out)", "int64"),
    ("L.median(x, 0, out=out)", "int64"), ("L.nanmedian(x, 0, out=out)", "int64"), ("L.mode(x, out=out)", "int64"),
    ("L.frexp(x, out=out)", "int32"),
])
def test_named_results_written_into_out_are_named_as_torchs(expression, index_dtype):
    """torch names them ``<name>_out`` (sort_out ...); the tensors are out's own."""
    def program(L):
        out = (L.empty(0), L.empty(0, dtype=getattr(L, index_dtype)))
        result = eval(expression, {"L": L, "x": L.tensor([3.0, 1.0, 2.0, 1.0]), "out": out})
        return type(result).__name__, tuple(r is o for r, o in zip(result, out)), tuple(result)

    both(program)
