"""ormqr, lobpcg, the complex view copies, the symbolic-size helpers and set_default_tensor_type, against torch."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck


def _both(array):
    return ember.tensor(array), torch.tensor(array)


@pytest.mark.parametrize("shape, other", [((5, 3), (5, 2)), ((4, 4), (4, 3)), ((2, 5, 3), (2, 5, 4))])
@pytest.mark.parametrize("left, transpose", [(True, False), (True, True), (False, False), (False, True)])
def test_ormqr_matches_torch(shape, other, left, transpose):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    c = rng.standard_normal(other if left else other[:-2] + other[-1:] + other[-2:-1])
    (ea, ta), (ec, tc) = _both(a), _both(c)
    e_geqrf, t_geqrf = ember.geqrf(ea), torch.geqrf(ta)
    ours = ember.ormqr(*e_geqrf, ec, left=left, transpose=transpose)
    theirs = torch.ormqr(*t_geqrf, tc, left=left, transpose=transpose)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)


def test_ormqr_gradients():
    rng = np.random.default_rng(1)
    a, tau = ember.geqrf(ember.tensor(rng.standard_normal((4, 3))))
    a.requires_grad_()
    tau.requires_grad_()
    c = ember.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    assert gradcheck(lambda *args: ember.ormqr(*args), (a, tau, c))
    assert gradgradcheck(lambda *args: ember.ormqr(*args), (a, tau, c))


def test_ormqr_refuses_a_mismatched_other():
    a, tau = ember.geqrf(ember.randn(5, 3, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="ormqr: input3's rows"):
        ember.ormqr(a, tau, ember.randn(4, 2, dtype=ember.float64))


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("generalized", [False, True])
def test_lobpcg_finds_torchs_eigenvalues(largest, generalized):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((9, 9))
    s = x @ x.T + np.eye(9)
    b = np.diag(rng.uniform(1, 2, 9)) if generalized else None
    ours = ember.lobpcg(ember.tensor(s), k=2, B=None if b is None else ember.tensor(b), largest=largest)
    theirs = torch.lobpcg(torch.tensor(s), k=2, B=None if b is None else torch.tensor(b), largest=largest)
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), rtol=1e-6)
    residual = ours[1].mT @ ember.tensor(s) @ ours[1]  # the vectors diagonalise A, B-orthonormally
    np.testing.assert_allclose(np.diag(residual.numpy()), ours[0].numpy(), rtol=1e-8)


def test_lobpcg_refuses_too_many_pairs_as_torch():
    s = torch.eye(6, dtype=torch.float64) * 2
    with pytest.raises(ValueError, match="smaller than 3 x the number of requested eigenpairs"):
        torch.lobpcg(s, k=3)
    with pytest.raises(ValueError, match="smaller than 3 x the number of requested eigenpairs"):
        ember.lobpcg(ember.eye(6, dtype=ember.float64) * 2, k=3)


def test_complex_view_copies_own_their_memory():
    z = ember.tensor([1 + 2j, 3 - 4j])
    pairs = ember.view_as_real_copy(z)
    assert pairs.tolist() == torch.view_as_real_copy(torch.tensor([1 + 2j, 3 - 4j])).tolist()
    pairs[0, 0] = 9
    assert z[0].real.item() == 1
    assert ember.view_as_complex_copy(pairs).tolist() == [9 + 2j, 3 - 4j]


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_symbolic_size_helpers_on_plain_numbers(m):
    assert (m.sym_int(3.7), m.sym_float(2), m.sym_max(2, 3), m.sym_min(2, 3), m.sym_not(True), m.sym_sqrt(4),
            m.sym_ite(True, 1, 2), m.sym_sum([1, 2, 3])) == (3, 2.0, 3, 2, False, 2.0, 1, 6)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_set_default_tensor_type_sets_the_default_dtype(m):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m.set_default_tensor_type(m.DoubleTensor)
        assert m.get_default_dtype() == m.float64 and m.ones(1).dtype == m.float64
        assert m is torch or "deprecated" in str(caught[0].message)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.set_default_tensor_type(f"{m.__name__}.FloatTensor")
        assert m.get_default_dtype() == m.float32
    finally:
        m.set_default_dtype(m.float32)
    assert m.is_vulkan_available() is False


def _attributes(lib):
    x = lib.ones(3, requires_grad=True)
    first, second = x.split([1, 2])
    devices = {name: getattr(x, name) for name in ("is_xpu", "is_mps", "is_mtia", "is_maia", "is_ipu", "is_xla",
                                                   "is_vulkan", "is_mkldnn", "is_nested")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        volatile = x.volatile
    return devices, x.name, (x.output_nr, first.output_nr, second.output_nr, (x * 2).output_nr), volatile, \
        [str(w.message) for w in caught]


def test_device_checks_output_nr_name_and_volatile_as_torch():
    assert _attributes(ember) == _attributes(torch)
