"""svd_lowrank and pca_lowrank: exact on matrices of low rank, torch's shapes and checks, differentiable."""
import numpy as np
import pytest
import torch

import ember


def _low_rank(*batch, m=20, n=10, rank=3):
    return ember.randn(*batch, m, rank, dtype=ember.float64) @ ember.randn(*batch, rank, n, dtype=ember.float64)


@pytest.mark.parametrize("shape", [(), (2,)])
@pytest.mark.parametrize("wide", [False, True])
def test_svd_lowrank_recovers_a_low_rank_matrix(shape, wide):
    ember.manual_seed(0)
    a = _low_rank(*shape)
    a = a.mT if wide else a
    u, s, v = ember.svd_lowrank(a, q=4)
    tu, ts, tv = torch.svd_lowrank(torch.tensor(a.numpy()), q=4)
    assert (u.shape, s.shape, v.shape) == (tuple(tu.shape), tuple(ts.shape), tuple(tv.shape))
    np.testing.assert_allclose((u @ ember.diag_embed(s) @ v.mT).numpy(), a.numpy(), atol=1e-10)
    np.testing.assert_allclose(s[..., :3].numpy(), ts[..., :3].numpy(), rtol=1e-10)
    np.testing.assert_allclose((u.mT @ u).numpy(), np.broadcast_to(np.eye(4), u.mT.shape[:-1] + (4,)), atol=1e-10)


def test_svd_lowrank_with_a_shift_and_pca_variances():
    ember.manual_seed(1)
    a = _low_rank()
    shift = ember.randn(1, 10, dtype=ember.float64)
    u, s, v = ember.svd_lowrank(a + shift, q=3, M=shift)
    np.testing.assert_allclose((u @ ember.diag(s) @ v.mT).numpy(), a.numpy(), atol=1e-10)
    u, s, v = ember.pca_lowrank(a, q=3)
    centered = a.numpy() - a.numpy().mean(0)
    variances = np.sort(np.linalg.eigvalsh(centered.T @ centered / 19))[::-1][:3]
    np.testing.assert_allclose(s.numpy() ** 2 / 19, variances, rtol=1e-10)
    _, s_plain, _ = ember.pca_lowrank(a, q=3, center=False)
    np.testing.assert_allclose(s_plain.numpy(), np.linalg.svd(a.numpy(), compute_uv=False)[:3], rtol=1e-10)


def test_repeatable_under_a_seed_and_differentiable():
    a = ember.tensor(_low_rank().numpy(), requires_grad=True)

    def singular_values(t):
        ember.manual_seed(2)  # the same random projection at every evaluation
        return ember.svd_lowrank(t, q=3)[1]

    assert ember.allclose(singular_values(a), singular_values(a))
    assert ember.autograd.gradcheck(singular_values, (a,))


@pytest.mark.parametrize("kwargs, message", [({"q": 11}, r"q\(=11\) must be non-negative integer and not greater "
                                                          r"than min\(m, n\)=10"),
                                             ({"niter": -1}, r"niter\(=-1\) must be non-negative integer")])
def test_pca_lowrank_errors_as_torch(kwargs, message):
    with pytest.raises(ValueError, match=message):
        torch.pca_lowrank(torch.ones(20, 10, dtype=torch.float64), **kwargs)
    with pytest.raises(ValueError, match=message):
        ember.pca_lowrank(ember.ones(20, 10, dtype=ember.float64), **kwargs)
