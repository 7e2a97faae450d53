"""The nn ops torch has at its top level (torch.conv2d, torch.layer_norm, ...) against torch, with torch's own
signatures there (positional order, required arguments, numbered reductions)."""
import numpy as np
import pytest
import torch

import ember

R = np.random.default_rng(0)
X = R.standard_normal((2, 3, 6)).astype(np.float32)
X4 = R.standard_normal((2, 3, 6, 6)).astype(np.float32)
W3 = R.standard_normal((3,)).astype(np.float32)
B3 = R.standard_normal((3,)).astype(np.float32)
P = R.uniform(0.1, 0.9, (4, 5)).astype(np.float32)
Q = R.uniform(0.1, 0.9, (4, 5)).astype(np.float32)
SIGN = np.sign(R.standard_normal(4)).astype(np.float32)
K1 = R.standard_normal((4, 3, 3)).astype(np.float32)


def _t(lib, a):
    return lib.tensor(a) if isinstance(a, np.ndarray) else a


CASES = {
    "conv1d": lambda m: m.conv1d(_t(m, X), _t(m, K1), None, 1, 1),
    "conv2d": lambda m: m.conv2d(_t(m, X4), _t(m, np.ones((2, 3, 3, 3), np.float32)), padding=1),
    "conv_transpose2d": lambda m: m.conv_transpose2d(_t(m, X4), _t(m, np.ones((3, 2, 2, 2), np.float32)), stride=2),
    "max_pool1d": lambda m: m.max_pool1d(_t(m, X), 2),
    "max_pool1d_with_indices": lambda m: m.max_pool1d_with_indices(_t(m, X), 3, 2, 1),
    "max_pool2d": lambda m: m.max_pool2d(_t(m, X4), 2, [], 0, 1, True),
    "max_pool3d": lambda m: m.max_pool3d(_t(m, X4[None]), 2),
    "avg_pool1d": lambda m: m.avg_pool1d(_t(m, X), 2),
    "adaptive_avg_pool1d": lambda m: m.adaptive_avg_pool1d(_t(m, X), 4),
    "batch_norm": lambda m: m.batch_norm(_t(m, X), _t(m, W3), _t(m, B3), None, None, True, 0.1, 1e-5, False),
    "instance_norm": lambda m: m.instance_norm(_t(m, X), _t(m, W3), _t(m, B3), None, None, True, 0.1, 1e-5, False),
    "layer_norm": lambda m: m.layer_norm(_t(m, X), [6], eps=1e-3),
    "group_norm": lambda m: m.group_norm(_t(m, X), 3, _t(m, W3), _t(m, B3)),
    "rms_norm": lambda m: m.rms_norm(_t(m, X), [6]),
    "dropout_off": lambda m: m.dropout(_t(m, X), 0.5, False),
    "alpha_dropout_off": lambda m: m.alpha_dropout(_t(m, X), 0.5, False),
    "feature_alpha_dropout_off": lambda m: m.feature_alpha_dropout(_t(m, X), 0.5, False),
    "embedding": lambda m: m.embedding(_t(m, X[0]), _t(m, np.array([2, 0, 2]))),
    "embedding_padding": lambda m: m.embedding(_t(m, X[0]), _t(m, np.array([2, 0])), 0),
    "celu": lambda m: m.celu(_t(m, X), 0.5),
    "selu": lambda m: m.selu(_t(m, X)),
    "threshold": lambda m: m.threshold(_t(m, X), 0.1, 20.0),
    "rrelu_eval": lambda m: m.rrelu(_t(m, X)),
    "hardshrink": lambda m: m.hardshrink(_t(m, X), 0.3),
    "prelu": lambda m: m.prelu(_t(m, X), _t(m, W3)),
    "bilinear": lambda m: m.bilinear(_t(m, P), _t(m, Q), _t(m, np.ones((2, 5, 5), np.float32))),
    "cosine_similarity": lambda m: m.cosine_similarity(_t(m, P), _t(m, Q)),
    "pairwise_distance": lambda m: m.pairwise_distance(_t(m, P), _t(m, Q)),
    "kl_div": lambda m: m.kl_div(_t(m, np.log(P)), _t(m, Q)),
    "kl_div_mean": lambda m: m.kl_div(_t(m, np.log(P)), _t(m, Q), 1),
    "kl_div_sum_log_target": lambda m: m.kl_div(_t(m, np.log(P)), _t(m, np.log(Q)), 2, log_target=True),
    "bce_with_logits": lambda m: m.binary_cross_entropy_with_logits(_t(m, P), _t(m, Q), None, _t(m, Q[0]), 0),
    "hinge_embedding_loss": lambda m: m.hinge_embedding_loss(_t(m, P[:, 0]), _t(m, SIGN), 0.5, 2),
    "margin_ranking_loss": lambda m: m.margin_ranking_loss(_t(m, P[:, 0]), _t(m, Q[:, 0]), _t(m, SIGN), 0.1),
    "cosine_embedding_loss": lambda m: m.cosine_embedding_loss(_t(m, P), _t(m, Q), _t(m, SIGN), 0.2, 0),
    "triplet_margin_loss": lambda m: m.triplet_margin_loss(_t(m, P), _t(m, Q), _t(m, P[::-1].copy())),
    "poisson_nll_loss": lambda m: m.poisson_nll_loss(_t(m, P), _t(m, Q), True, True, 1e-8, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_top_level_alias_matches_torch(name):
    mine, theirs = CASES[name](ember), CASES[name](torch)
    for a, b in zip(mine if isinstance(mine, tuple) else (mine,), theirs if isinstance(theirs, tuple) else (theirs,)):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_aliases_torch_shares_with_functional_are_the_same_objects():
    for name in ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "avg_pool1d", "bilinear", "prelu",
                 "cosine_similarity", "pairwise_distance", "hardshrink", "selu_", "threshold_"]:
        assert getattr(ember, name) is getattr(ember.nn.functional, name)
        assert getattr(torch, name) is getattr(torch.nn.functional, name)


def test_gradients_flow_through_the_aliases():
    x = ember.tensor(X, requires_grad=True)
    ember.layer_norm(ember.max_pool1d(x, 2), [3]).pow(2).sum().backward()
    xt = torch.tensor(X, requires_grad=True)
    torch.layer_norm(torch.max_pool1d(xt, 2), [3]).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_the_wrapped_aliases_take_part_in_the_protocol():
    listed = ember.overrides.get_overridable_functions()[ember]
    for name in ["dropout", "embedding", "batch_norm", "layer_norm", "max_pool2d", "kl_div", "threshold"]:
        assert getattr(ember, name) in listed


def test_a_reduction_number_out_of_range_is_an_error():
    with pytest.raises(ValueError, match="reduction must be 0"):
        ember.kl_div(ember.zeros(2), ember.zeros(2), 3)
