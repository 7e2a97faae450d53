"""Twin tests (ember against torch) for the everyday functions of ``_ops/misc.py``, ``_ops/windows.py`` and
``_ops/inplace_forms.py`` that the op table cannot express: named-tuple and non-tensor results, keyword
forms, methods, warnings, memory sharing, and the in-place function forms."""
import array
import os
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from twins import both, both_raise, leaf, normalise

# ----------------------------------------------------------------- function forms of in-place methods

UNARY_INPLACE = (
    "abs_ acos_ arccos_ asin_ arcsin_ atan_ arctan_ atanh_ arctanh_ asinh_ arcsinh_ ceil_ cos_ cosh_ deg2rad_ "
    "erf_ erfc_ exp2_ exp_ expm1_ fix_ floor_ frac_ i0_ log10_ log1p_ log2_ log_ logit_ neg_ negative_ rad2deg_ "
    "reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ zero_ detach_ "
    "conj_physical_"
).split()


@pytest.mark.parametrize("name", UNARY_INPLACE)
def test_unary_function_form_changes_its_input_as_the_method(name):
    def program(lib):
        x = lib.tensor([0.25, 0.5, 0.75], dtype=lib.float64)
        result = getattr(lib, name)(x)
        return result is x, x

    both(program)


@pytest.mark.parametrize("name", ["acosh_", "arccosh_"])
def test_function_form_on_its_domain(name):
    both(lambda lib: getattr(lib, name)(lib.tensor([1.5, 3.0], dtype=lib.float64)))


@pytest.mark.parametrize("program", [
    lambda lib, x: lib.clamp_(x, -0.5, 0.5),
    lambda lib, x: lib.clamp_(x, min=0.0),
    lambda lib, x: lib.clip_(x, max=0.1),
    lambda lib, x: lib.clamp_max_(x, 0.2),
    lambda lib, x: lib.clamp_min_(x, 0.2),
    lambda lib, x: lib.fill_(x, 3.0),
    lambda lib, x: lib.xlogy_(x, lib.tensor([2.0, 3.0, 4.0], dtype=lib.float64)),
    lambda lib, x: lib.addmv_(x, lib.ones(3, 2, dtype=lib.float64), lib.tensor([1.0, 2.0], dtype=lib.float64)),
    lambda lib, x: lib.as_strided_(x, (2,), (1,)),
    lambda lib, x: lib.resize_as_(x, lib.ones(3)),
], ids=["clamp_", "clamp_min_kw", "clip_", "clamp_max_", "clamp_min_", "fill_", "xlogy_", "addmv_", "as_strided_",
        "resize_as_"])
def test_function_forms_with_arguments(program):
    def run(lib):
        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64)
        return program(lib, x), x

    both(run)


@pytest.mark.parametrize("name", ["gcd_", "lcm_"])
def test_integer_function_forms(name):
    def program(lib):
        x = lib.tensor([4, 6, 9])
        return getattr(lib, name)(x, lib.tensor([6, 4, 3])), x

    both(program)


def test_function_forms_take_input_by_keyword():
    both(lambda lib: (lib.sqrt_(input=lib.tensor([4.0])), lib.clamp_(input=lib.tensor([4.0]), max=1.0)))


def test_function_form_records_the_graph_as_the_method():
    def program(lib):
        x = leaf(lib, [0.5, 1.0])
        y = x * 2
        lib.sin_(y)
        y.sum().backward()
        return y, x.grad

    both(program)


def test_function_forms_dispatch_under_their_own_name():
    seen = []

    class Spy(ember.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Spy():
        ember.exp_(ember.ones(2))
    assert "exp_" in seen


# ----------------------------------------------------------------- identities and complex stand-ins


@pytest.mark.parametrize("name", ["real", "conj", "conj_physical", "resolve_conj", "resolve_neg", "positive"])
def test_identities_return_the_input_itself(name):
    both(lambda lib: (lambda x: getattr(lib, name)(x) is x)(lib.ones(2)))


@pytest.mark.parametrize("name", ["conj", "conj_physical", "resolve_conj", "resolve_neg", "positive", "is_conj",
                                  "is_neg", "angle", "fix", "is_signed"])
def test_methods_agree_with_functions(name):
    both(lambda lib: getattr(lib.tensor([-1.5, 2.0]), name)())


def test_real_and_imag_properties():
    both(lambda lib: (lambda x: x.real is x)(lib.ones(2)))
    both_raise(lambda lib: lib.ones(2).imag, RuntimeError, "imag")
    both_raise(lambda lib: lib.imag(lib.ones(2)), RuntimeError, "imag")


def test_is_conj_and_is_neg_are_false():
    both(lambda lib: (lib.is_conj(lib.ones(1)), lib.is_neg(lib.ones(1)), lib.ones(1).conj().is_conj()))


def test_angle_of_special_values_and_its_zero_gradient():
    def program(lib):
        x = leaf(lib, [-2.0, -0.0, 0.0, 3.0, float("inf"), -float("inf"), float("nan")])
        a = lib.angle(x)
        a.sum().backward()
        return a, x.grad

    both(program)
    both(lambda lib: lib.angle(lib.tensor([-1, 0, 2])))


def test_conj_physical_out():
    def program(lib):
        out = lib.empty(2)
        lib.conj_physical(lib.tensor([1.0, -2.0]), out=out)
        return out

    both(program)


def test_positive_of_bool_is_refused():
    both_raise(lambda lib: lib.positive(lib.tensor([True])), RuntimeError, "bool")


def test_fill_value_tensor_gets_the_gradient():
    def program(lib):
        x, v = leaf(lib, [1.0, 2.0, 3.0]), leaf(lib, 2.0)
        y = lib.fill(x, v)
        (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return y, x.grad, v.grad

    both(program)
    both(lambda lib: lib.fill(lib.tensor([1, 2]), 2.7))


def test_detach_shares_memory():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        d = lib.detach(x)
        with lib.no_grad():
            d[0] = 5.0
        return d.requires_grad, x

    both(program)


def test_fix_out_and_integers():
    def program(lib):
        out = lib.empty(3)
        lib.fix(lib.tensor([-1.5, 0.2, 2.7]), out=out)
        return out, lib.fix(lib.tensor([-3, 4]))

    both(program)


# ----------------------------------------------------------------- type and size predicates


def test_typename():
    assert ember.typename(ember.ones(1)) == ember.ones(1).type()
    both(lambda lib: (lib.typename(3), lib.typename([1]), lib.typename(lib.ones(1, dtype=lib.int64))),
         prepare=normalise)
    both(lambda lib: (lib.typename(lib.nn.Linear), lib.typename(lib.nn.Linear(1, 1))), prepare=normalise)
    assert ember.typename(np.ones(1)) == torch.typename(np.ones(1))


def test_is_storage_and_is_same_size():
    both(lambda lib: (lib.is_storage(lib.ones(1)), lib.is_storage(3), lib.is_storage(lib.ones(1).untyped_storage()),
                      lib.is_storage(lib.ones(1).storage()), lib.is_storage(lib.FloatStorage(2))))
    both(lambda lib: (lib.is_same_size(lib.ones(2, 3), lib.zeros(2, 3)), lib.ones(2).is_same_size(lib.ones(3))))
    both_raise(lambda lib: lib.is_same_size(lib.ones(2), [1.0]), TypeError)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                                   "float64"])
def test_is_signed(dtype):
    both(lambda lib: (lib.is_signed(lib.ones(1, dtype=getattr(lib, dtype))), lib.ones(1, dtype=getattr(lib, dtype))
                      .is_signed()))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"])
def test_element_size_nbytes_itemsize(dtype):
    both(lambda lib: (lambda x: (x.element_size(), x.nbytes, x.itemsize))(lib.ones(2, 3, dtype=getattr(lib, dtype))))


# ----------------------------------------------------------------- differences, integrals, statistics


def test_diff_of_bools_and_methods():
    both(lambda lib: lib.diff(lib.tensor([True, False, False, True])))
    both(lambda lib: lib.tensor([[1.0, 4.0, 9.0], [2.0, 2.0, 5.0]]).diff(n=2, dim=1))
    both(lambda lib: lib.diff(lib.tensor([1, 3]), n=0))


def test_cov_with_both_weights_and_its_gradient():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0, 4.0, 7.0], [0.5, -1.0, 2.0, 3.0]])
        fw = lib.tensor([1, 2, 1, 3])
        aw = lib.tensor([0.5, 1.0, 2.0, 0.25], dtype=lib.float64)
        c = lib.cov(x, correction=1, fweights=fw, aweights=aw)
        c.sum().backward()
        return c, x.grad, x.cov(aweights=aw), lib.cov(x, correction=0, aweights=aw)

    both(program)


def test_cov_of_integers_and_too_few_observations():
    both(lambda lib: lib.cov(lib.tensor([[1, 2, 4], [3, 1, 0]])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda lib: lib.cov(lib.tensor([[1.0], [2.0]])))


def test_corrcoef_method():
    both(lambda lib: lib.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.5], [1.0, 1.5, 2.0]]).corrcoef())


def test_trapezoid_keyword_forms():
    both(lambda lib: lib.trapz(lib.tensor([[1.0, 2.0, 3.0], [2.0, 2.0, 0.0]]), dim=0))
    both(lambda lib: lib.trapz(lib.tensor([1.0, 2.0, 4.0]), lib.tensor([0.0, 0.5, 2.0])))
    both(lambda lib: lib.cumulative_trapezoid(lib.tensor([1.0, 2.0, 4.0]), dx=0.25))
    both(lambda lib: lib.trapezoid(lib.tensor([1, 2, 4])))


def test_renorm_method_and_out():
    def program(lib):
        x = lib.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
        out = lib.empty(3, 2)
        lib.renorm(x, 2, 0, 1.0, out=out)
        return x.renorm(1, 1, 2.0), out

    both(program)


def test_dist_with_zero_norm_and_method():
    both(lambda lib: lib.tensor([1.0, 2.0, 0.0]).dist(lib.tensor([1.0, 0.0, 3.0]), 0))


def test_pdist_matches_torch_values():
    x = np.random.default_rng(1).normal(size=(5, 3))
    for p in (2, 1, 0.5, 3, float("inf"), 0):
        both(lambda lib: lib.pdist(lib.tensor(x), p))


def test_vander_gradients_by_finite_differences():
    x = ember.tensor([0.5, -1.0, 2.0, 0.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.vander(t, 4), (x,))
    assert ember.autograd.gradgradcheck(lambda t: ember.vander(t, 3, increasing=True), (x,))


def test_vander_default_columns():
    both(lambda lib: lib.vander(lib.tensor([True, False, True])))
    both(lambda lib: lib.vander(lib.tensor([1, 2, 3], dtype=lib.int32), increasing=True))


def test_combinations_and_cartesian_prod_of_integers():
    both(lambda lib: lib.combinations(lib.tensor([1, 2, 3, 4]), r=3, with_replacement=True))
    both(lambda lib: lib.combinations(lib.tensor([1, 2, 3]), 1))
    both(lambda lib: lib.combinations(lib.tensor([1.0, 2.0]), 0))
    both(lambda lib: lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5]), lib.tensor([6])))


def test_block_diag_promotes_and_handles_nothing():
    both(lambda lib: lib.block_diag(lib.tensor([[1, 2]]), lib.tensor(2.5), lib.tensor([True, False])))
    both(lambda lib: lib.block_diag())


def test_nuclear_and_frobenius_norm_keyword_forms():
    x = np.random.default_rng(2).normal(size=(2, 3, 4))
    both(lambda lib: lib.nuclear_norm(lib.tensor(x), dim=(1, 2), keepdim=True))
    both(lambda lib: lib.frobenius_norm(lib.tensor(x), dim=(0, 2)))
    both_raise(lambda lib: lib.frobenius_norm(lib.tensor(x)), TypeError)


# ----------------------------------------------------------------- histograms


def test_histogram_named_tuple_weights_and_density():
    data = np.random.default_rng(3).normal(size=20)
    weight = np.random.default_rng(4).uniform(size=20)

    def program(lib):
        x = lib.tensor(data)
        h = lib.histogram(x, 5, weight=lib.tensor(weight), density=True)
        edges = lib.tensor([-3.0, -1.0, 0.0, 0.5, 3.0], dtype=lib.float64)
        return tuple(h), h.hist, h.bin_edges, tuple(x.histogram(edges)), tuple(lib.histogram(x, bins=3, range=(0.0, 1.0)))

    both(program)
    assert type(ember.histogram(ember.ones(2), 2)).__name__ == "histogram"


def test_histogram_refusals():
    both_raise(lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), lib.tensor([0.0, 1.0], dtype=lib.float64)),
               RuntimeError, "dtype")
    both_raise(lambda lib: lib.histogram(lib.tensor([1.0, float("inf")]), 2), RuntimeError, "finite")
    both_raise(lambda lib: lib.cov(lib.tensor([True, False])), RuntimeError, "bool")


def test_histogram_of_one_repeated_value():
    both(lambda lib: tuple(lib.histogram(lib.tensor([1.0, 1.0]), 2)))


def test_histogramdd():
    data = np.random.default_rng(5).uniform(-1, 1, size=(30, 2))

    def program(lib):
        x = lib.tensor(data)
        a = lib.histogramdd(x, bins=[2, 3])
        b = lib.histogramdd(x, bins=4, range=[-1.0, 1.0, 0.0, 1.0], density=True)
        edges = [lib.tensor([-1.0, 0.0, 1.0], dtype=lib.float64), lib.tensor([-1.0, 1.0], dtype=lib.float64)]
        c = lib.histogramdd(x, bins=edges, weight=lib.ones(30, dtype=lib.float64))
        return a.hist, tuple(a.bin_edges), b.hist, tuple(b.bin_edges), c.hist

    both(program)


def test_histogramdd_errors():
    both_raise(lambda lib: lib.histogramdd(lib.ones(4, 2), bins=[2, 2, 2]), RuntimeError)
    both_raise(lambda lib: lib.histogramdd(lib.ones(4, 2, dtype=lib.int64), bins=2), RuntimeError)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=1, max_size=30), st.integers(1, 8))
def test_histogram_counts_every_value_once(values, bins):
    hist, edges = ember.histogram(ember.tensor(values, dtype=ember.float64), bins)
    theirs = torch.histogram(torch.tensor(values, dtype=torch.float64), bins)
    assert hist.sum().item() == len(values)
    np.testing.assert_allclose(hist.numpy(), theirs.hist.numpy())
    np.testing.assert_allclose(edges.numpy(), theirs.bin_edges.numpy())


# ----------------------------------------------------------------- making tensors


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
@pytest.mark.parametrize("length", [2, 3, 8, 9])
def test_windows_float64(name, length):
    both(lambda lib: (getattr(lib, name)(length, dtype=lib.float64),
                      getattr(lib, name)(length, periodic=False, dtype=lib.float64)))


def test_window_requires_grad():
    both(lambda lib: lib.hann_window(4, requires_grad=True).requires_grad)


def test_range_warns_and_includes_end():
    def program(lib):
        with pytest.warns(UserWarning, match="deprecated"):
            return (lib.range(1, 4), lib.range(0, 1, 0.25), lib.range(5, 1, -2), lib.range(1, 3, dtype=lib.int64))

    both(program)


def test_range_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both_raise(lambda lib: lib.range(5), TypeError)
        both_raise(lambda lib: lib.range(1, 5, -1), RuntimeError)


def test_empty_strided():
    both(lambda lib: (lambda t: (t.shape, t.stride(), t.dtype))(lib.empty_strided((2, 3), (1, 2), dtype=lib.int32)),
         prepare=normalise)
    both(lambda lib: lib.empty_strided((0, 3), (3, 1)).shape, prepare=normalise)
    both_raise(lambda lib: lib.empty_strided((2, 3), (1,)), RuntimeError)


def test_asarray_shares_or_copies():
    def program(lib):
        a = np.zeros(3)
        shared = lib.asarray(a)
        copied = lib.asarray(a, copy=True)
        cast = lib.asarray(a, dtype=lib.float32)
        a[0] = 7.0
        t = lib.ones(2)
        return shared, copied, cast, lib.asarray(t) is t, lib.asarray(t, copy=True) is t, lib.asarray([1, 2]).dtype

    both(program, prepare=normalise)


def test_asarray_requires_grad_and_refused_alias():
    both(lambda lib: lib.asarray([1.0, 2.0], requires_grad=True).requires_grad)
    both(lambda lib: (lambda t: (lib.asarray(t, requires_grad=True) is t, t.requires_grad))(lib.ones(2)))
    both_raise(lambda lib: lib.asarray(lib.ones(2), dtype=lib.float64, copy=False), ValueError)


@pytest.mark.filterwarnings("ignore:torch.asarray")  # torch warns that the default changed
def test_asarray_keeps_a_history_unless_told_not_to():
    def program(lib):
        b = lib.tensor([1.0, 2.0], requires_grad=True) * 2
        detached, kept = lib.asarray(b, requires_grad=False), lib.asarray(b)
        detached[0] = 5.0  # an alias: b sees the write
        return (detached.requires_grad, detached.grad_fn is None, kept is b, b.detach(),
                lib.asarray(b, dtype=lib.float64).grad_fn is not None)

    both(program)


def test_frombuffer_shares_memory():
    def program(lib):
        buffer = bytearray(b"\x01\x00\x02\x00\x03\x00")
        t = lib.frombuffer(buffer, dtype=lib.int16)
        part = lib.frombuffer(buffer, dtype=lib.uint8, count=2, offset=2)
        buffer[0] = 9
        return t, part

    both(program)
    both(lambda lib: lib.frombuffer(array.array("d", [1.5, 2.5]), dtype=lib.float64))


def test_frombuffer_errors_and_read_only_warning():
    both_raise(lambda lib: lib.frombuffer(bytearray(4), dtype=lib.int16, offset=6), ValueError)
    both_raise(lambda lib: lib.frombuffer(bytearray(), dtype=lib.int16), ValueError)
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="not writable"):
            lib.frombuffer(b"\x01\x02", dtype=lib.uint8)


def test_scalar_tensor_requires_grad():
    both(lambda lib: lib.scalar_tensor(2, requires_grad=True).requires_grad)


@pytest.mark.parametrize("call", [lambda lib: lib.nuclear_norm(lib.eye(2)), lambda lib: lib.frobenius_norm(lib.eye(2), (0, 1))],
                         ids=["nuclear_norm", "frobenius_norm"])
def test_deprecated_norms_warn(call):
    ember._tensor._warned.clear()
    with pytest.warns(UserWarning, match="deprecated"):
        call(ember)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.integers(0, 3), st.booleans(), st.booleans(), st.integers(0, 2 ** 16))
def test_cov_matches_torch_for_any_weights(variables, observations, correction, use_f, use_a, seed):
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(variables, observations))
    fw = rng.integers(1, 4, size=observations) if use_f else None
    aw = rng.uniform(0.1, 2.0, size=observations) if use_a else None

    def program(lib):
        weights = {}
        if fw is not None:
            weights["fweights"] = lib.tensor(fw)
        if aw is not None:
            weights["aweights"] = lib.tensor(aw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # too few degrees of freedom: both give inf or NaN
            return lib.cov(lib.tensor(data), correction=correction, **weights)

    both(program)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-50, 50), min_size=1, max_size=12), st.integers(0, 4))
def test_diff_undoes_cumsum_and_matches_torch(values, n):
    x = ember.tensor(values, dtype=ember.float64)
    np.testing.assert_allclose(ember.diff(x.cumsum(0), prepend=ember.zeros(1, dtype=ember.float64)).numpy(), values,
                               atol=1e-9)
    both(lambda lib: (lib.diff(lib.tensor(values, dtype=lib.float64), n), lib.cumulative_trapezoid(
        lib.tensor(values, dtype=lib.float64)), lib.trapezoid(lib.tensor(values, dtype=lib.float64), dx=0.5)))


def test_histogram_out():
    def program(lib):
        hist, edges = lib.empty(0), lib.empty(0)
        result = lib.histogram(lib.tensor([0.5, 1.0, 2.5]), 2, out=(hist, edges))
        return result.hist is hist, hist, edges

    both(program)


# ----------------------------------------------------------------- hash_tensor


@pytest.mark.parametrize("values, dtype", [
    ([[1.1918, -1.1813, 0.3373]], "float32"), ([1.5, -0.0, float("nan")], "float64"), ([1.5, 2.25], "float16"),
    ([1, 2, 3], "int64"), ([-1, 2], "int8"), ([200, 3], "uint8"), ([True, False, True], "bool"), ([7, -3], "int32"),
])
def test_hash_tensor_is_torchs_bit_for_bit(values, dtype):
    both(lambda lib: (lambda x: (lib.hash_tensor(x), x.hash_tensor(), lib.hash_tensor(x, 0, keepdim=True)))(
        lib.tensor(values, dtype=getattr(lib, dtype))))


@pytest.mark.parametrize("program", [
    lambda lib, x: lib.hash_tensor(x, 1), lambda lib, x: lib.hash_tensor(x, (0, 1)),
    lambda lib, x: lib.hash_tensor(x, 0, keepdim=True), lambda lib, x: lib.hash_tensor(x, dim=-1),
    lambda lib, x: lib.hash_tensor(x, []), lambda lib, x: lib.hash_tensor(x, None),
    lambda lib, x: lib.hash_tensor(x.t()[None].expand(3, 4, 3), 0), lambda lib, x: lib.hash_tensor(x[:, ::2], 1),
    lambda lib, x: lib.hash_tensor(x.sum(), 0), lambda lib, x: lib.hash_tensor(lib.empty(0, 3), 1),
    lambda lib, x: lib.hash_tensor(x, 1, out=lib.empty(3, dtype=lib.uint64)),
])
def test_hash_tensor_over_dims(program):
    both(lambda lib: (lambda r: (r, r.dtype))(program(lib, lib.arange(12.0).reshape(3, 4))), prepare=normalise)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(allow_nan=False, width=32), min_size=1, max_size=8))
def test_hash_tensor_of_any_floats(values):
    both(lambda lib: lib.hash_tensor(lib.tensor(values)).tolist())


@pytest.mark.parametrize("program, error, fragment", [
    (lambda lib: lib.hash_tensor(lib.ones(2), mode=1), RuntimeError, "Unknown hash_tensor mode: 1"),
    (lambda lib: lib.hash_tensor(lib.ones(2, 3), 2), IndexError, "Dimension out of range"),
    (lambda lib: lib.hash_tensor(lib.ones(2, 3), (0, 0)), RuntimeError, "dim 0 appears multiple times"),
    (lambda lib: lib.hash_tensor(lib.empty(0)), RuntimeError, "Expected reduction dim to be specified"),
    (lambda lib: lib.hash_tensor(lib.empty(0, 3), 0), IndexError, "Expected reduction dim 0 to have non-zero size"),
    (lambda lib: lib.hash_tensor(lib.ones(2, dtype=lib.complex64)), NotImplementedError, "xor_sum_cpu"),
    (lambda lib: lib.hash_tensor(lib.ones(2, 3), 1, out=lib.empty(2)), RuntimeError, "uint64, but got Float"),
])
def test_hash_tensor_errors(program, error, fragment):
    both_raise(program, error, fragment)


# ----------------------------------------------------------------- dim_order, is_set_to, storage_type ...


@pytest.mark.parametrize("program", [
    lambda lib: lib.ones(2, 3, 4).dim_order(), lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1).dim_order(),
    lambda lib: lib.ones(2, 3, 4).transpose(0, 1).dim_order(), lambda lib: lib.ones(2, 1, 3).dim_order(),
    lambda lib: lib.ones(3, 3).dim_order(ambiguity_check=True), lambda lib: lib.ones(2, 3).expand(4, 2, 3).dim_order(),
    lambda lib: lib.ones(0, 3).dim_order(ambiguity_check=True), lambda lib: lib.ones(()).dim_order(),
    lambda lib: lib.ones(2, 3, 4)[:, ::2].dim_order(), lambda lib: lib.empty_strided((2, 3), (1, 2)).dim_order(),
    lambda lib: lib.empty_strided((2, 3), (1, 1)).dim_order(),
    lambda lib: lib.ones(2, 3, 4, 5).to(memory_format=lib.channels_last).dim_order(),
    lambda lib: lib.ones(2, 3, 4).dim_order(ambiguity_check=[lib.contiguous_format]),
    lambda lib: lib.ones(2, 3, 4).dim_order(ambiguity_check=[lib.channels_last]),
    lambda lib: lib.ones(2, 1, 3).dim_order(ambiguity_check=[lib.contiguous_format]),
])
def test_dim_order(program):
    both(program)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.randoms(use_true_random=False), st.booleans())
def test_dim_order_of_any_permutation(shape, random, check):
    order = list(range(len(shape)))
    random.shuffle(order)

    def program(lib):
        x = lib.ones(*shape).permute(*order)
        try:
            return x.dim_order(ambiguity_check=check)
        except RuntimeError as error:
            return str(error)

    both(program)


@pytest.mark.parametrize("program, error, fragment", [
    (lambda lib: lib.ones(2, 1, 3).dim_order(ambiguity_check=True), RuntimeError, "does not have unique dim order"),
    (lambda lib: lib.ones(2, 3).expand(4, 2, 3).dim_order(ambiguity_check=True), RuntimeError, "unique dim order"),
    (lambda lib: lib.ones(2, 1, 3, 4).dim_order(ambiguity_check=[lib.contiguous_format, lib.channels_last]),
     RuntimeError, "cannot map to exact one of the given memory formats"),
    (lambda lib: lib.ones(2).dim_order(ambiguity_check=[0]), TypeError, "must be a bool or a list of memory formats"),
    (lambda lib: lib.ones(2).dim_order(ambiguity_check=1), TypeError, "must be a bool or a list of memory formats"),
    (lambda lib: lib.ones(2).is_set_to(1), TypeError, r"is_set_to\(\): argument 'tensor' \(position 1\) must be Tensor"),
    (lambda lib: lib.ones(2).reinforce(1), RuntimeError, "reinforce\\(\\) was removed"),
    (lambda lib: lib.ones(2).ipu(), RuntimeError, "not linked with support for ipu devices"),
    (lambda lib: lib.ones(2).xpu(), AssertionError, "not compiled with XPU enabled"),
    (lambda lib: lib.ones(2).mtia(), AssertionError, "not compiled with MTIA enabled"),
    (lambda lib: lib.ones(2).is_contiguous(memory_format=1), TypeError, "argument .memory_format. must be"),
    (lambda lib: lib.ones(2).record_stream(None), RuntimeError, "unknown parameter type"),
])
def test_small_method_errors(program, error, fragment):
    both_raise(program, error, fragment)


def test_is_set_to():
    def program(lib):
        x = lib.ones(2, 3, 4)
        return [x.is_set_to(y) for y in (x, x.view(6, 4), x.clone(), x[:], x.detach(), x.view_as(x), x[0],
                                         x.as_strided(x.shape, x.stride()), x.transpose(0, 1).transpose(0, 1))]

    both(program)


def test_storage_type_names_the_legacy_storage_class():
    def program(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            names = [lib.ones(1, dtype=getattr(lib, d)).storage_type().__name__ for d in
                     "float32 float64 float16 bfloat16 int64 int32 int16 int8 uint8 bool complex64 complex128".split()]
        return names, [lib.ones(1, dtype=getattr(lib, d)).storage_type() for d in ("uint16", "uint32", "uint64")]

    both(program)
    both(lambda lib: (lib.Storage.__name__, lib.ones(2).is_distributed()))
    assert ember.FloatStorage(3).dtype is ember.float32 and ember.ones(2).storage_type() is ember.FloatStorage


def test_module_load_copies_or_assigns():
    def program(lib):
        current, value = lib.zeros(2), lib.tensor([1.0, 2.0], requires_grad=True)
        assigned = current.module_load(value, assign=True)
        copied = current.module_load(value)
        return (assigned, assigned.requires_grad, assigned is value, copied, current, copied is current,
                copied.requires_grad)

    both(program)


def test_share_memory_makes_writes_visible_across_fork():
    x = ember.zeros(2, 3)
    row = x[1]
    assert not x.is_shared() and row.share_memory_() is row and row.is_shared() and x.is_shared()
    assert x.untyped_storage().is_shared()
    pid = os.fork()
    if pid == 0:  # the child writes through the view, then leaves at once
        row.fill_(7.0)
        os._exit(0)
    os.waitpid(pid, 0)
    assert x.tolist() == [[0.0, 0.0, 0.0], [7.0, 7.0, 7.0]]
    both(lambda lib: (lambda t: (t.share_memory_() is t, t.is_shared(), t))(lib.arange(6.0).reshape(2, 3).t()))
    both(lambda lib: (lambda m: (m.share_memory() is m, m.weight.is_shared()))(lib.nn.Linear(2, 2)))


def test_symbolic_size_checks():
    def program(lib):
        return (lib.sym_constrain_range(3, min=0, max=5), lib.sym_constrain_range(-5),
                lib.sym_constrain_range_for_size(3), lib.sym_constrain_range_for_size(0, max=5),
                lib.sym_constrain_range_for_size(-1, min=-5), lib.sym_fresh_size(3), lib.sym_fresh_size(lib.tensor(4)))

    both(program)


@pytest.mark.parametrize("program, fragment", [
    (lambda lib: lib.sym_constrain_range(3, min=4, max=5), r"Invalid value range for 3 between \[4, 5\]"),
    (lambda lib: lib.sym_constrain_range(3, max=2), r"between \[-9223372036854775808, 2\]"),
    (lambda lib: lib.sym_constrain_range(3, min=5, max=4), "Max must be greater than or equal to min. Got min=5 max=4"),
    (lambda lib: lib.sym_constrain_range_for_size(-1), r"Invalid value range for -1 between \[0, 9223372036854775807\]"),
    (lambda lib: lib.sym_constrain_range_for_size(3, max=2), "must be greater than 2. got: 2"),
    (lambda lib: lib.sym_constrain_range_for_size(5, max=3), r"between \[0, 3\]"),
    (lambda lib: lib.get_device_module("foo"), "device type at start of device string: foo"),
    (lambda lib: lib.get_device_module("meta"), "Device 'meta' does not have a corresponding module"),
    (lambda lib: lib.get_device_module(1), "Invalid value of device '1'"),
])
def test_program_level_errors(program, fragment):
    both_raise(program, RuntimeError, fragment)


def test_device_module_and_packaging_helpers():
    both(lambda lib: [lib.get_device_module(d).__name__.split(".")[1] for d in (None, "cpu", "cuda:0", lib.device("cpu"))]
         + [lib.get_device_module().is_available(), lib.get_device_module().device_count(),
            lib.get_device_module().current_device(), lib.thread_safe_generator(),
            lib.prepare_multiprocessing_environment("somewhere"), os.path.basename(lib.get_file_path("a", "b"))])
    assert ember.get_file_path("ember") == os.path.dirname(ember.__file__)


@pytest.mark.parametrize("program", [
    lambda lib: [lib.ones(2, 3, 4, 5).is_contiguous(memory_format=f) for f in (
        lib.contiguous_format, lib.channels_last, lib.preserve_format)],
    lambda lib: [lib.ones(2, 3, 4, 5).to(memory_format=lib.channels_last).is_contiguous(memory_format=f) for f in (
        lib.contiguous_format, lib.channels_last)],
    lambda lib: [lib.ones(2, 3, 1, 1).is_contiguous(memory_format=lib.channels_last),
                 lib.ones(2, 3).is_contiguous(memory_format=lib.channels_last),
                 lib.ones(2, 3, 4, 5, 6).is_contiguous(memory_format=lib.channels_last_3d),
                 lib.ones(2, 3, 4, 5, 6).to(memory_format=lib.channels_last_3d).is_contiguous(
                     memory_format=lib.channels_last_3d)],
])
def test_is_contiguous_in_a_memory_format(program):
    both(program)


# ----------------------------------------------------------------- __future__ switches and module_load


@pytest.fixture
def future_switches():
    yield
    for lib in (torch, ember):
        lib.__future__.set_swap_module_params_on_conversion(False)
        lib.__future__.set_overwrite_module_params_on_conversion(False)


@pytest.mark.parametrize("swap, overwrite", [(False, False), (True, False), (False, True), (True, True)])
def test_conversions_follow_the_future_switches(future_switches, swap, overwrite):
    def program(lib):
        lib.__future__.set_swap_module_params_on_conversion(swap)
        lib.__future__.set_overwrite_module_params_on_conversion(overwrite)
        lib.manual_seed(0)
        layer = lib.nn.Linear(2, 2)
        weight = layer.weight
        layer(lib.ones(1, 2)).sum().backward()
        grad = weight.grad
        layer.double()
        return (layer.weight is weight, layer.weight.dtype, type(layer.weight).__name__, layer.weight.grad.dtype,
                layer.weight.grad is grad, weight.dtype, lib.__future__.get_swap_module_params_on_conversion())

    both(program, prepare=normalise)


def test_load_state_dict_under_swap_goes_through_module_load(future_switches):
    def program(lib):
        lib.__future__.set_swap_module_params_on_conversion(True)
        layer = _load_with(lib, lambda self, other, assign=False: (other * 2).detach())
        weight = layer.weight
        layer.load_state_dict({"weight": lib.full((1, 2), 3.0)})
        kept = (layer.weight is weight, layer.weight.tolist(), type(layer.weight).__name__, layer.weight.requires_grad)
        norm = lib.nn.BatchNorm1d(2)
        norm.load_state_dict({k: v.clone() + 1 for k, v in norm.state_dict().items()}, assign=True)
        return kept, norm.running_var.tolist(), norm.num_batches_tracked.item()

    both(program)
    both_raise(lambda lib: (lib.__future__.set_swap_module_params_on_conversion(True),
                            _load_with(lib, lambda self, other, assign=False: other).load_state_dict(
                                {"weight": lib.ones(1, 2)})), RuntimeError, "module_load returned one of self or other")


def _load_with(lib, module_load):
    class Returning(lib.nn.Parameter):
        pass

    Returning.module_load = module_load
    layer = lib.nn.Linear(2, 1, bias=False)
    layer.weight = Returning(lib.zeros(1, 2))
    return layer


# ----------------------------------------------------------------- view(dtype)


@pytest.mark.parametrize("program", [
    lambda lib: lib.ones(2, 3, requires_grad=True).view(lib.int32),
    lambda lib: (lambda v: (v, v.requires_grad, v.grad_fn))(lib.ones(2, 3, requires_grad=True).view(lib.float32)),
    lambda lib: lib.ones(2, 3).view(lib.int16), lambda lib: lib.ones(2, 3).t().view(lib.int32),
    lambda lib: lib.ones(()).view(lib.int32), lambda lib: lib.ones(2, 3).view(dtype=lib.int32),
    lambda lib: lib.ones(2, 3).view(lib.bool), lambda lib: lib.ones(2, 4).view(lib.complex64),
    lambda lib: lib.ones(2, 4)[:, 2:].view(lib.float64), lambda lib: lib.ones(3, 4)[::2].view(lib.float64),
    lambda lib: lib.tensor([1, 65535], dtype=lib.uint16).view(lib.int16),
    lambda lib: lib.tensor([1, 2], dtype=lib.uint16).view(lib.uint32),
    lambda lib: lib.tensor([-1], dtype=lib.int64).view(lib.uint64).tolist(),
    lambda lib: (lambda x: (x.view(lib.int32).fill_(0), x))(lib.ones(3)),  # the memory is shared
])
def test_view_as_another_dtype(program):
    both(program)


@pytest.mark.parametrize("program, fragment", [
    (lambda lib: lib.ones(2, 3).view(lib.float64), r"self.size\(-1\) must be divisible by 2 to view Float as Double"),
    (lambda lib: lib.ones(2, 3).t().view(lib.int16), r"self.stride\(-1\) must be 1 to view Float as Short"),
    (lambda lib: lib.ones(()).view(lib.int16), r"self.dim\(\) cannot be 0 to view Float as Short"),
    (lambda lib: lib.ones(2, 4)[:, 1:3].view(lib.float64), r"self.storage_offset\(\) must be divisible by 2"),
    (lambda lib: lib.ones(3, 3)[:, :2].view(lib.float64), r"self.stride\(0\) must be divisible by 2"),
])
def test_view_as_another_dtype_errors(program, fragment):
    both_raise(program, RuntimeError, fragment)


def test_bfloat16_legacy_type():
    pytest.importorskip("ml_dtypes")
    both(lambda lib: (lib.BFloat16Tensor([1.5]).float(), isinstance(lib.ones(1, dtype=lib.bfloat16), lib.BFloat16Tensor),
                      isinstance(lib.ones(1), lib.BFloat16Tensor), lib.BFloat16Tensor(2).shape == (2,),
                      lib.ones(1).type(lib.BFloat16Tensor).dtype == lib.bfloat16))


def test_share_memory_of_a_strided_numpy_array_moves_the_tensor_alone():
    array = np.lib.stride_tricks.as_strided(np.arange(12.0), (3, 2), (32, 16))  # its owner is itself strided
    x = ember.from_numpy(array)
    x.share_memory_()
    assert x.is_shared() and x.tolist() == array.tolist()


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_edges_are_spaced_as_torchs(scale, dtype):
    # NumPy spaces equal bins in double: in single, about half the histograms had an edge one ulp off torch's
    rng = np.random.default_rng(5)
    for trial in range(20):
        values = rng.standard_normal((int(rng.integers(1, 200)), 2)) * scale
        bins = int(rng.integers(1, 12))
        for op, kwargs in [("histogram", {}), ("histogramdd", {}), ("histogramdd", {"range": [-1, 1, -2, 2]})]:
            results = []
            for lib in (ember, torch):
                x = lib.tensor(values, dtype=getattr(lib, dtype))
                result = getattr(lib, op)(x[:, 0] if op == "histogram" else x, bins=bins, **kwargs)
                edges = [result.bin_edges] if op == "histogram" else list(result.bin_edges)
                results.append([result.hist.numpy()] + [e.numpy() for e in edges])
            for mine, theirs in zip(*results):
                np.testing.assert_array_equal(mine, theirs)
