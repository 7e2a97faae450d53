"""Inputs from torch's own per-op samples that ember once refused or answered differently, each checked against
torch: explicit None keywords of gradient, integer local response norm, complex constant padding, an empty 1-d
batch norm, feature dropout of inputs without channels, sum_to_size to a 0-d size, tensordot's size-1 contracted
dims, vander of one point, tensorsolve's loose shape rule and complex low-rank SVDs."""
import warnings

import numpy as np
import pytest
import torch

import ember


def both(build):
    """``build(lib)`` for torch and for ember, as arrays with the dtype's name (or the exception's type)."""
    results = []
    for lib in (torch, ember):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = build(lib)
        except Exception as error:  # (a refusal is compared like a value: both or neither)
            results.append(type(error))
            continue
        outs = out if isinstance(out, tuple) else (out,)
        results.append([(str(o.dtype).split(".")[1], o.detach().numpy()) for o in outs])
    return results


def assert_same(build, rtol=1e-12):
    theirs, ours = both(build)
    if isinstance(theirs, type):
        assert ours is theirs or isinstance(ours, type), (theirs, ours)
        return
    assert not isinstance(ours, type), f"ember raised {ours.__name__} where torch gives {theirs}"
    assert [d for d, _ in ours] == [d for d, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("kwargs", [{"spacing": None}, {"spacing": None, "dim": None, "edge_order": 1},
                                    {"spacing": None, "dim": 1}, {"spacing": None, "dim": 0, "edge_order": 2}])
def test_gradient_takes_explicit_none_keywords(kwargs):
    assert_same(lambda lib: lib.gradient(lib.arange(12.0).reshape(3, 4) ** 2, **kwargs))


@pytest.mark.parametrize("shape", [(1, 6, 3), (2, 5, 3, 4), (2, 4, 2, 2, 3)])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_local_response_norm_of_int64_averages_in_integers(shape, size):
    values = (np.arange(np.prod(shape)) * 37 % 23 - 11).reshape(shape)
    assert_same(lambda lib: lib.nn.functional.local_response_norm(lib.tensor(values), size, alpha=0.3, beta=0.5,
                                                                   k=1.25), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int32", "bool"])
@pytest.mark.parametrize("dims", [3, 4])
def test_local_response_norm_refuses_other_integers_as_torch(dtype, dims):
    build = lambda lib: lib.nn.functional.local_response_norm(lib.ones((1, 2) + (3,) * (dims - 2),
                                                                       dtype=getattr(lib, dtype)), 2)
    theirs, ours = both(build)
    assert theirs is ours is NotImplementedError


@pytest.mark.parametrize("dtype, value", [("complex128", 1 + 2j), ("complex64", 1 - 2j), ("complex128", 5),
                                          ("float64", 1 + 0j), ("int64", 3 + 0j), ("bool", 0j), ("float64", 1 + 1j)])
def test_constant_pad_nd_with_a_complex_value(dtype, value):
    assert_same(lambda lib: lib.constant_pad_nd(lib.ones(1, 2, dtype=getattr(lib, dtype)), (1, 2), value))


def test_functional_pad_refuses_a_complex_value_as_torch():
    build = lambda lib: lib.nn.functional.pad(lib.ones(1, 2, dtype=lib.complex128), (1, 1), value=1j)
    assert both(build) == [TypeError, TypeError]


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("stats", [0, 3])
def test_batch_norm_of_an_empty_vector(training, stats):
    assert_same(lambda lib: lib.nn.functional.batch_norm(lib.ones(0), lib.zeros(stats), lib.ones(stats),
                                                         training=training))


@pytest.mark.parametrize("shape", [(), (5,), (0,), (2, 5), (2, 3, 4)])
@pytest.mark.parametrize("name", ["feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"])
@pytest.mark.parametrize("training, p", [(False, 0.5), (True, 0.0), (True, 0.5), (True, 1.0)])
def test_dropouts_accept_and_refuse_the_ranks_torch_does(shape, name, training, p):
    theirs, ours = both(lambda lib: getattr(lib.nn.functional, name)(lib.ones(shape), p=p, training=training))
    assert isinstance(theirs, type) == isinstance(ours, type), (theirs, ours)
    if not isinstance(theirs, type) and (not training or p in (0.0, 1.0)):  # (else the draws differ)
        assert [d for d, _ in ours] == [d for d, _ in theirs]
        np.testing.assert_array_equal(ours[0][1], theirs[0][1])


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "float32", "complex64"])
@pytest.mark.parametrize("shape, size", [((), ()), ((3,), (3,)), ((3,), (1,)), ((2, 3), (1, 3)), ((2, 3), (3,)),
                                         ((2, 3), ()), ((1,), ()), ((1, 1), (1,))])
def test_sum_to_size_dtypes_and_shapes(dtype, shape, size):
    assert_same(lambda lib: lib.ones(shape).to(getattr(lib, dtype)).sum_to_size(size))


@pytest.mark.parametrize("a, b, dims", [((1, 1, 1), (2, 1, 2), ([0, 1], [2, 0])), ((2, 1), (3, 2), ([1], [0])),
                                        ((2, 1), (3, 2), ([0, 1], [1, 0])), ((2, 3), (1, 3), ([1], [1])),
                                        ((1, 3), (4, 1), ([0, 1], [0, 1])), ((2, 1), (0, 2), ([1], [0]))])
def test_tensordot_broadcasts_size_one_contracted_dims(a, b, dims):
    def build(lib):
        left = lib.arange(float(np.prod(a))).reshape(a) + 1
        right = (lib.arange(float(np.prod(b))).reshape(b) - 1).requires_grad_()
        out = lib.tensordot(left, right, dims=dims)
        out.sum().backward()
        return out, right.grad
    assert_same(build)


def test_tensordot_still_refuses_unequal_sizes_neither_one():
    theirs, ours = both(lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(2, 2), dims=([1], [0])))
    assert theirs is ours is RuntimeError


@pytest.mark.parametrize("value", [3.0, 2])
@pytest.mark.parametrize("N", [None, 1, 2, 3])
def test_vander_of_a_single_point(value, N):
    assert_same(lambda lib: lib.linalg.vander(lib.tensor(value), N=N))


@pytest.mark.parametrize("a, b, dims", [((2, 3, 6), (2, 3), (0, 2)), ((2, 3, 6), (3, 2), None),
                                        ((2, 3, 6), (1, 6), None), ((9, 1, 9), (3, 3), None),
                                        ((2, 3, 6), (6,), None), ((2, 2, 9), (3, 3), None)])
def test_tensorsolve_needs_only_the_counts_to_agree(a, b, dims):
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal(a), rng.standard_normal(b)
    assert_same(lambda lib: lib.linalg.tensorsolve(lib.tensor(A), lib.tensor(B), dims=dims), rtol=1e-9)


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("center", [False, True])
def test_low_rank_svd_and_pca_of_complex_matrices(wide, center):
    ember.manual_seed(0)
    a = ember.randn(20, 3, dtype=ember.complex128) @ ember.randn(3, 10, dtype=ember.complex128)
    a = a.mT if wide else a
    u, s, v = ember.svd_lowrank(a, q=3)
    assert (u.dtype, s.dtype, v.dtype) == (ember.complex128, ember.float64, ember.complex128)
    np.testing.assert_allclose((u @ ember.diag(s).to(u.dtype) @ v.mH).numpy(), a.numpy(), atol=1e-12)
    _, s, _ = ember.pca_lowrank(a, q=3, center=center)
    centered = a.numpy() - a.numpy().mean(0) if center else a.numpy()
    _, theirs, _ = torch.pca_lowrank(torch.tensor(a.numpy()), q=3, center=center)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(centered, compute_uv=False)[:3], rtol=1e-10)
    np.testing.assert_allclose(s.numpy(), theirs.numpy(), rtol=1e-10)
