"""AdaptiveLogSoftmaxWithLoss against torch on the same weights: outputs, loss, gradients, log_prob, predict."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _twins(**kwargs):
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, **kwargs).double()
    ours = ember.nn.AdaptiveLogSoftmaxWithLoss(8, 10, **kwargs).double()
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("kwargs", [{"cutoffs": [3, 6]}, {"cutoffs": [2], "div_value": 2.0, "head_bias": True},
                                    {"cutoffs": [1, 5, 8], "div_value": 1.5}])
def test_matches_torch(kwargs):
    ours, theirs = _twins(**kwargs)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 8))
    target = np.array([0, 9, 3, 5, 1, 7, 2])
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = ours(ex, ember.tensor(target)), theirs(tx, torch.tensor(target))
    np.testing.assert_allclose(eo.output.detach().numpy(), to.output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(eo.loss.item(), to.loss.item(), rtol=1e-12)
    eo.loss.backward()
    to.loss.backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(ours.log_prob(ember.tensor(x)).detach().numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(ember.tensor(x * 3)).numpy(), theirs.predict(torch.tensor(x * 3)).numpy())


def test_unbatched_and_gradgradcheck():
    ours, theirs = _twins(cutoffs=[3, 6])
    x = np.random.default_rng(1).standard_normal(8)
    eo, to = ours(ember.tensor(x), ember.tensor(7)), theirs(torch.tensor(x), torch.tensor(7))
    assert eo.output.shape == () == tuple(to.output.shape)
    np.testing.assert_allclose(eo.output.item(), to.output.item(), rtol=1e-12)
    # torch 2.13's log_prob fails on one unbatched input (it takes a softmax over dim 1): compare with a batch of one
    np.testing.assert_allclose(ours.log_prob(ember.tensor(x)).detach().numpy(),
                               theirs.log_prob(torch.tensor(x[None]))[0].detach().numpy(), rtol=1e-12)
    assert ours.predict(ember.tensor(x)).item() == theirs.predict(torch.tensor(x[None]))[0].item()
    xs = ember.tensor(np.random.default_rng(2).standard_normal((3, 8)), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: ours(t, ember.tensor([0, 4, 8])).loss, (xs,))


@pytest.mark.parametrize("cutoffs", [[], [6, 3], [0, 3], [3, 10], [3, 3], [2.5]])
def test_bad_cutoffs_as_torch(cutoffs):
    with pytest.raises(ValueError) as theirs:
        torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
    with pytest.raises(ValueError, match=str(theirs.value)[:40]):
        ember.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)


def test_bad_targets_and_inputs():
    ours, _ = _twins(cutoffs=[3, 6])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\], but values in range \[0, 12\]"):
        ours(ember.randn(2, 8, dtype=ember.float64), ember.tensor([0, 12]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        ours(ember.randn(3, 8, dtype=ember.float64), ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        ours(ember.randn(2, 8, dtype=ember.float64), ember.tensor([[0, 1]]))
