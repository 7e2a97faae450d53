"""Complex tensors through reductions, scans, shaping, indexing, scatter, creation and conversion, against torch.

Each program runs on torch and on ember with the same complex128 inputs; values, dtypes and the gradients of a
real loss (torch's convention: dL/dx + i dL/dy) must agree, and ember's gradcheck and gradgradcheck must pass.
"""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from twins import both_raise

RNG = np.random.default_rng(7)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


X = _complex(3, 4)
V = _complex(5)
INDEX = np.array([[0, 1, 2, 0], [2, 1, 0, 1]])
MASK = np.array([[True, False, True, False]] * 3)


def plain(t):
    """A tensor of either library as an array (torch's lazy conjugates resolved first)."""
    t = t.detach()
    if isinstance(t, torch.Tensor):
        t = t.resolve_conj().resolve_neg()
    return np.array(t.numpy())


def _loss(lib, outputs):
    """A real loss that weighs each output's real and imaginary parts differently, so both gradients show."""
    total = 0
    for k, out in enumerate(outputs):
        if not (out.is_floating_point() or out.is_complex()) or not out.requires_grad:
            continue
        weights = lib.tensor(np.cos(np.arange(out.numel()) + k).reshape(tuple(out.shape)))
        if out.is_complex():
            total = total + (lib.real(out) * weights).sum() + (lib.imag(out) * weights * 0.5).sum()
        else:
            total = total + (out * weights).sum()
    return total


def _run(lib, program, arrays):
    inputs = [lib.tensor(a, requires_grad=a.dtype.kind in "fc") if isinstance(a, np.ndarray) else a for a in arrays]
    out = program(lib, *inputs)
    outputs = out if isinstance(out, (tuple, list)) else (out,)
    leaves = [t for t in inputs if isinstance(t, (torch.Tensor, ember.Tensor)) and t.requires_grad]
    loss = _loss(lib, outputs)
    grads = lib.autograd.grad(loss, leaves, allow_unused=True) if not isinstance(loss, int) else ()
    return outputs, grads


def assert_like_torch(program, *arrays, grads: bool = True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected, expected_grads = _run(torch, program, arrays)
        actual, actual_grads = _run(ember, program, arrays)
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        assert str(a.dtype).split(".")[-1] == str(e.dtype).split(".")[-1], (a.dtype, e.dtype)
        np.testing.assert_allclose(plain(a), plain(e), rtol=1e-7, atol=1e-9)
    if grads:
        assert len(expected_grads) == len(actual_grads)
        for e, a in zip(expected_grads, actual_grads):
            assert (e is None) == (a is None)
            if e is not None:
                np.testing.assert_allclose(plain(a), plain(e), rtol=1e-7, atol=1e-9)


def check_gradients(program, *arrays, second_order: bool = True):
    """ember's gradcheck (and gradgradcheck) of ``program`` on complex128 leaves."""
    inputs = [ember.tensor(a, requires_grad=a.dtype.kind in "fc") if isinstance(a, np.ndarray) else a
              for a in arrays]

    def function(*args):
        return program(ember, *args)

    assert gradcheck(function, inputs)
    if second_order:
        assert gradgradcheck(function, inputs)


def _exp_is_complex_ready() -> bool:
    """Whether exp's own backward conjugates (the pointwise ops' work): the second derivatives of logsumexp and
    logcumsumexp run through it."""
    z = ember.tensor([0.3 + 0.2j], dtype=ember.complex128, requires_grad=True)
    return gradcheck(ember.exp, (z,), raise_exception=False)


# ----------------------------------------------------------------- reductions and scans


REDUCTIONS = {
    "sum": lambda L, t: t.sum(),
    "sum_dim": lambda L, t: t.sum(1, keepdim=True),
    "mean": lambda L, t: t.mean(0),
    "prod": lambda L, t: t.prod(),
    "prod_dim": lambda L, t: t.prod(1),
    "cumsum": lambda L, t: t.cumsum(1),
    "cumprod": lambda L, t: t.cumprod(1),
    "var": lambda L, t: t.var(1),
    "var_correction0": lambda L, t: L.var(t, correction=0),
    "std": lambda L, t: t.std(0),
    "std_all": lambda L, t: t.std(),
    "var_mean": lambda L, t: L.var_mean(t, 1),
    "std_mean": lambda L, t: L.std_mean(t, 0, keepdim=True),
    "logsumexp": lambda L, t: t.logsumexp(1),
    "logcumsumexp": lambda L, t: t.logcumsumexp(1),
    "count_nonzero": lambda L, t: L.count_nonzero(t, 1),
    "any": lambda L, t: t.any(1),
    "all": lambda L, t: t.all(),
    "sum_as_complex64": lambda L, t: t.sum(dtype=L.complex64),
}
_THROUGH_EXP = {"logsumexp", "logcumsumexp"}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_values_dtypes_and_gradients_as_torch(name):
    assert_like_torch(REDUCTIONS[name], X)


@pytest.mark.parametrize("name", sorted(set(REDUCTIONS) - {"count_nonzero", "any", "all", "sum_as_complex64"}))
def test_reduction_gradcheck_and_gradgradcheck(name):
    second = name not in _THROUGH_EXP or _exp_is_complex_ready()
    check_gradients(REDUCTIONS[name], _complex(2, 3), second_order=second)


def test_products_with_zeros_take_the_path_without_division():
    values = _complex(2, 3)
    values[0, 1] = 0
    for program in (REDUCTIONS["prod_dim"], REDUCTIONS["cumprod"], REDUCTIONS["prod"]):
        assert_like_torch(program, values)
        check_gradients(program, values)


def test_var_of_complex_is_real_and_counts_both_parts():
    z = ember.tensor([1 + 1j, -1 - 1j])
    assert z.var().dtype is ember.float32 and z.var(correction=0).item() == pytest.approx(2.0)


def test_logsumexp_and_logcumsumexp_do_not_overflow():
    values = np.array([-np.inf + 0j, 1000 + 1j, 1000 + 2j, -1000 + 0j])
    assert_like_torch(lambda L, t: L.logcumsumexp(t, 0), values, grads=False)
    assert_like_torch(lambda L, t: L.logsumexp(t, 0), values, grads=False)


def test_nansum_and_nanmean_refuse_complex_as_torch():
    both_raise(lambda L: L.tensor([1j]).nansum(), RuntimeError, "nansum", "complex")
    both_raise(lambda L: L.tensor([1j]).nanmean(), RuntimeError, "nansum", "complex")


# ----------------------------------------------------------------- shaping, joining and views


SHAPING = {
    "cat": (lambda L, t, u: L.cat([t, u]), (X, _complex(2, 4))),
    "cat_with_real": (lambda L, t, u: L.cat([t, u]), (X, RNG.standard_normal((2, 4)))),
    "stack": (lambda L, t, u: L.stack([t, u], 1), (X, _complex(3, 4))),
    "reshape_permute": (lambda L, t: t.reshape(4, 3).permute(1, 0), (X,)),
    "transpose_flip_roll": (lambda L, t: t.transpose(0, 1).flip(0).roll(1, 1), (X,)),
    "repeat_expand": (lambda L, t: t.repeat(2, 1)[None].expand(2, 6, 4), (X,)),
    "split_unbind": (lambda L, t: (*t.split(2), *t.unbind(1)), (X,)),
    "mH": (lambda L, t: t.mH, (X,)),
    "H": (lambda L, t: t.H, (X,)),
    "adjoint": (lambda L, t: L.adjoint(t), (X,)),
    "mT": (lambda L, t: t.mT, (X,)),
    "diag": (lambda L, t: L.diag(t), (V,)),
    "diagonal_tril_triu": (lambda L, t: (t.diagonal(1), t.tril(), t.triu(1)), (X,)),
    "diag_embed": (lambda L, t: L.diag_embed(t), (X,)),
    "unfold_narrow": (lambda L, t: (t.unfold(1, 2, 1), t.narrow(1, 1, 2)), (X,)),
}


@pytest.mark.parametrize("name", sorted(SHAPING))
def test_shaping_values_and_gradients_as_torch(name):
    program, arrays = SHAPING[name]
    assert_like_torch(program, *arrays)


@pytest.mark.parametrize("name", sorted(SHAPING))
def test_shaping_gradcheck(name):
    program, arrays = SHAPING[name]
    check_gradients(program, *arrays)


def test_adjoint_conjugates():
    z = ember.tensor([[1 + 2j, 3j]])
    assert z.mH.tolist() == [[1 - 2j], [-3j]]
    assert ember.ones(2, 3).adjoint().shape == (3, 2)


# ----------------------------------------------------------------- indexing, gather and scatter


INDEXING = {
    "gather": (lambda L, t, i: t.gather(0, i), (X, INDEX)),
    "scatter": (lambda L, t, i, s: t.scatter(0, i, s), (X, INDEX[:1], _complex(1, 4))),
    "scatter_value": (lambda L, t, i: t.scatter(0, i, 2 + 1j), (X, INDEX[:1])),
    "scatter_add": (lambda L, t, i, s: t.scatter_add(0, i, s), (X, INDEX, _complex(2, 4))),
    "index_select": (lambda L, t, i: t.index_select(1, i), (X, np.array([0, 2, 2]))),
    "index_add": (lambda L, t, i, s: t.index_add(1, i, s, alpha=2), (X, np.array([0, 2]), _complex(3, 2))),
    "index_copy": (lambda L, t, i, s: t.index_copy(1, i, s), (X, np.array([0, 2]), _complex(3, 2))),
    "index_fill": (lambda L, t, i: t.index_fill(1, i, 1 + 2j), (X, np.array([0, 2]))),
    "index_put": (lambda L, t, i, s: t.index_put((i,), s, accumulate=True), (X, np.array([0, 0]), _complex(2, 4))),
    "masked_fill": (lambda L, t, m: t.masked_fill(m, 2 - 1j), (X, MASK)),
    "masked_fill_tensor": (lambda L, t, m, s: t.masked_fill(m, s), (X, MASK, np.array(1 + 1j))),
    "masked_select": (lambda L, t, m: t.masked_select(m), (X, MASK)),
    "masked_scatter": (lambda L, t, m, s: t.masked_scatter(m, s), (X, MASK, _complex(12))),
    "take": (lambda L, t, i: t.take(i), (X, np.array([0, 5, 11]))),
    "take_along_dim": (lambda L, t, i: L.take_along_dim(t, i, 1), (X, INDEX.T[:3])),
    "put": (lambda L, t, i, s: t.put(i, s, accumulate=True), (X, np.array([0, 0]), _complex(2))),
    "getitem": (lambda L, t, i, m: (t[1, ::2], t[i, 1:], t[m]), (X, np.array([0, 2, 2]), MASK)),
    "where": (lambda L, m, t, u: L.where(m, t, u), (MASK, X, _complex(3, 4))),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing_values_and_gradients_as_torch(name):
    program, arrays = INDEXING[name]
    assert_like_torch(program, *arrays)


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing_gradcheck(name):
    program, arrays = INDEXING[name]
    check_gradients(program, *arrays)


def test_setitem_writes_complex_numbers_and_tensors():
    def program(L):
        z = L.zeros(2, 3, dtype=L.complex64)
        z[0, 1] = 1 + 2j
        z[1] = L.tensor([1j, 2, 3j])
        z[z.real > 2] = 5j
        return z

    np.testing.assert_array_equal(plain(program(ember)), plain(program(torch)))


@pytest.mark.parametrize("dtype", ["bool", "float32", "int32"])
def test_setitem_of_a_complex_tensor_into_a_real_one_keeps_the_real_part_with_torchs_warning(dtype):
    def program(L):
        x = L.zeros(3, dtype=getattr(L, dtype))
        x[0] = L.tensor(1j)  # bool: true, as either part is nonzero
        x[1:] = L.tensor([2 + 3j, 0j])
        return x

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mine = program(ember)
    assert any("discards the imaginary part" in str(w.message) for w in caught) == (dtype != "bool")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch warns once in the program
        np.testing.assert_array_equal(plain(mine), plain(program(torch)))


def test_setitem_gradient_through_a_complex_leaf():
    def program(L, t, s):
        y = t * 1
        y[0, :2] = s
        return y

    assert_like_torch(program, X, _complex(2))


@pytest.mark.parametrize("program", [
    lambda L: L.zeros(2).__setitem__(0, 1j),
    lambda L: L.zeros(2).fill_(1j),
    lambda L: L.zeros(2).masked_fill(L.tensor([True, False]), 1j),
    lambda L: L.zeros(2).scatter(0, L.tensor([0]), 1j),
    lambda L: L.full((2,), 1j, dtype=L.float32),
    lambda L: L.zeros(2, dtype=L.int64).fill_(2 + 1j),
    lambda L: L.zeros(3).__setitem__(L.tensor([True, False, True]), L.tensor([3j])),
    lambda L: L.zeros(3).masked_fill_(L.tensor([True, False, False]), L.tensor(3j)),
], ids=["setitem", "fill_", "masked_fill", "scatter", "full", "fill_int", "setitem_mask", "masked_fill_tensor"])
def test_a_complex_number_into_a_real_tensor_is_refused_as_torch(program):
    both_raise(program, RuntimeError, "value cannot be converted to type")


def test_a_complex_number_without_imaginary_part_fits_a_real_tensor():
    assert_like_torch(lambda L, t, m: t.masked_fill(m, 1 + 0j), RNG.standard_normal((3, 4)), MASK, grads=False)


def test_scatter_reduce_of_complex_as_torch():
    def program(L, reduce, include_self=True):
        z = L.tensor([1 + 1j, 2, 3j])
        return z.scatter_reduce(0, L.tensor([0, 0, 2]), L.tensor([1j, 2 - 1j, 4]), reduce, include_self=include_self)

    for reduce in ("sum", "prod", "mean"):
        for include_self in (True, False):
            np.testing.assert_allclose(plain(program(ember, reduce, include_self)),
                                       plain(program(torch, reduce, include_self)), rtol=1e-6)
    for reduce in ("amax", "amin"):
        both_raise(lambda L: program(L, reduce), NotImplementedError, f"reduce_{reduce}\" not implemented")
    both_raise(lambda L: L.ones(2, dtype=L.complex64, requires_grad=True).scatter_reduce(
        0, L.tensor([0]), L.ones(1, dtype=L.complex64), "sum"), RuntimeError, "does not support automatic diff")
    both_raise(lambda L: L.ones(2, dtype=L.complex64).index_reduce(0, L.tensor([0]), L.ones(1, dtype=L.complex64),
                                                                   "prod"), NotImplementedError, "index_func_")


MORE_SHAPING = {
    "tensor_split_hsplit": (lambda L, t: (*t.tensor_split(3, 1), *L.hsplit(t, 2)), (X,)),
    "stacks": (lambda L, t, u: (L.vstack([t, u[:1]]), L.dstack([t, u]), L.column_stack([t, u[:, 0]])), (X, X * 2)),
    "block_diag": (lambda L, t, u: L.block_diag(t, u), (X, _complex(2, 2))),
    "diagonal_scatter": (lambda L, t, s: L.diagonal_scatter(t, s), (X, _complex(3))),
    "repeat_interleave": (lambda L, t, r: t.repeat_interleave(r, 1), (X, np.array([1, 0, 2, 1]))),
    "broadcast_tensors": (lambda L, t, u: L.broadcast_tensors(t, u), (X, _complex(4))),
    "in_place_writes": (lambda L, t, i, s: (t * 1).index_add_(0, i, s, alpha=1 - 1j).masked_fill_(t.real > 0, 1j),
                        (X, np.array([0, 2]), _complex(2, 4))),
    "setitem_slice": (lambda L, t, s: (lambda y: (y.__setitem__((slice(None), 1), s), y)[1])(t * 1), (X, _complex(3))),
    "diff_trapezoid": (lambda L, t: (L.diff(t, dim=1), L.trapezoid(t), L.cumulative_trapezoid(t)), (X,)),
    "empty_reductions": (lambda L, t: (t[:0].sum(0), t[:0].prod(0), t[:0].logsumexp(0)), (X,)),
}


@pytest.mark.parametrize("name", sorted(MORE_SHAPING))
def test_more_shaping_and_writing_as_torch(name):
    program, arrays = MORE_SHAPING[name]
    assert_like_torch(program, *arrays)


def test_select_and_slice_scatter_give_complex_gradients():
    # torch refuses autograd here for complex outputs; ember's gradients are slices of the incoming one
    check_gradients(lambda L, t, s: L.select_scatter(t, s, 0, 1), X, _complex(4))
    check_gradients(lambda L, t, s: L.slice_scatter(t, s, 1, 0, 2), X, _complex(3, 2))


def _matmul_is_complex_ready() -> bool:
    """Whether matmul's backward conjugates (the linear algebra ops' work): cov's gradient runs through it."""
    a = ember.tensor([[0.3 + 0.2j]], dtype=ember.complex128, requires_grad=True)
    return gradcheck(lambda t: t @ t, (a,), raise_exception=False)


def test_cov_and_corrcoef_of_complex_variables_as_torch():
    data = np.array([[1 + 1j, 2, 3j], [1, 1j, 0]])
    assert_like_torch(lambda L, t: (L.cov(t), L.corrcoef(t), L.cov(t[0])), data,
                      grads=_matmul_is_complex_ready())
    assert_like_torch(lambda L, t: L.cov(t, fweights=L.tensor([1, 2, 1]), aweights=L.tensor([0.5, 1, 2])), data,
                      grads=False)


FORWARD = {
    "prod": lambda L, a: a.prod(1),
    "cumprod": lambda L, a: a.cumprod(1),
    "var": lambda L, a: a.var(1),
    "logsumexp": lambda L, a: a.logsumexp(1),
    "logcumsumexp": lambda L, a: a.logcumsumexp(1),
    "mH_gather": lambda L, a: a.mH.gather(0, L.tensor([[0, 1, 2]])),
}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_mode_tangents_as_torch(name):
    # a holomorphic op's tangent is f'(z) * t, not conjugated
    tangent = _complex(3, 4)
    results = []
    for L in (torch, ember):
        with L.autograd.forward_ad.dual_level():
            dual = L.autograd.forward_ad.make_dual(L.tensor(X), L.tensor(tangent))
            results.append(plain(L.autograd.forward_ad.unpack_dual(FORWARD[name](L, dual)).tangent))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-7, atol=1e-9)


def _vector_norm_takes_complex() -> bool:
    """Whether ember.linalg.vector_norm takes complex tensors (the linear algebra ops' work): dist and renorm
    reduce through it."""
    try:
        ember.linalg.vector_norm(ember.tensor([1j]))
    except RuntimeError:
        return False
    return True


@pytest.mark.skipif(not _vector_norm_takes_complex(), reason="vector_norm of complex tensors")
def test_dist_and_renorm_of_complex_tensors_as_torch():
    values = np.array([[3 + 4j, 1], [0.3j, 0.4]])
    assert_like_torch(lambda L, t: (L.dist(t, t * 0.5), L.dist(t, t.flip(0), 1), L.renorm(t, 2, 0, 1.0)), values)


def test_copying_between_real_and_complex_tensors_as_torch():
    def program(L, t, s):
        real = L.zeros(3, dtype=L.float64)
        real.copy_(t)  # the real parts, with torch's warning
        z = t * 1
        z.copy_(s)  # a real source: its gradient is the real part
        z[0] = L.tensor(2 + 0j)
        return real, z

    assert_like_torch(program, _complex(3), RNG.standard_normal(3))


def test_long_complex_logcumsumexp_keeps_torchs_branch_of_the_log():
    # imaginary parts beyond pi: each step's result keeps the larger term's branch, as torch's
    assert_like_torch(lambda L, t: L.logcumsumexp(t, 1), _complex(2, 150) * 3, grads=False)



PARTS = np.array([[1 + 2j, 3 - 1j], [0.5j, 2 + 0j]])


def _quietly_reduced(program, lib, z):
    """``program(lib, z)``, checked to warn only as torch's cast does (a UserWarning, no NumPy ComplexWarning)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = program(lib, z)
    assert all(w.category is UserWarning for w in caught), [w.category for w in caught]
    if lib is ember:
        assert any("discards the imaginary part" in str(w.message) for w in caught)
    return result


@pytest.mark.parametrize("program", [
    lambda lib, z: z.sum(dtype=lib.float64), lambda lib, z: z.sum(0, dtype=lib.float32),
    lambda lib, z: z.mean(1, dtype=lib.float64), lambda lib, z: z.prod(0, dtype=lib.float64),
    lambda lib, z: z.cumsum(1, dtype=lib.float64), lambda lib, z: z.cumprod(0, dtype=lib.float64),
])
def test_reducing_complex_values_in_a_real_dtype_keeps_the_real_parts_with_torchs_warning(program):
    for lib in (torch, ember):
        result = _quietly_reduced(program, lib, lib.tensor(PARTS))
        np.testing.assert_allclose(result.numpy(), program(np, PARTS.real), rtol=1e-12)
    # the gradient is that of the real parts' reduction (torch's cumprod here differs: it reads the complex input)
    z, x = ember.tensor(PARTS, requires_grad=True), torch.tensor(PARTS.real, requires_grad=True)
    _quietly_reduced(program, ember, z).sum().backward()
    program(torch, x).sum().backward()
    assert z.grad.dtype == z.dtype
    np.testing.assert_allclose(z.grad.numpy(), x.grad.numpy(), rtol=1e-12)


def test_summing_complex_values_into_a_real_out_keeps_the_real_parts_as_torch():
    for lib in (torch, ember):
        out = lib.empty(0, dtype=lib.float64)
        _quietly_reduced(lambda lib, z: lib.sum(z, 0, out=out), lib, lib.tensor(PARTS))
        np.testing.assert_allclose(out.numpy(), PARTS.real.sum(0))
