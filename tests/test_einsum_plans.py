"""einsum replays the ops it planned for an equation and operand shapes: the second call of the same
equation on the same shapes must give what torch gives, values and gradients, as the first does."""
import numpy as np
import pytest
import torch

import ember

_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ii->i", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij->ij", [(2, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("iij,j->i", [(3, 3, 2), (2,)]),
]


def _run(lib, equation, arrays):
    operands = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = lib.einsum(equation, *operands)
    (out * lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in operands]


@pytest.mark.parametrize("equation,shapes", _CASES, ids=[c[0] for c in _CASES])
def test_repeated_calls_match_torch(equation, shapes):
    rng = np.random.default_rng(0)
    for _ in range(3):  # the first call plans, the others replay
        arrays = [rng.standard_normal(s) for s in shapes]
        mine, mine_grads = _run(ember, equation, arrays)
        theirs, their_grads = _run(torch, equation, arrays)
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
        for g, h in zip(mine_grads, their_grads):
            np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-12)


def test_a_replayed_identity_is_a_new_view_not_the_input():
    x = ember.ones(2, 3)
    for _ in range(2):
        y = ember.einsum("ij->ij", x)
        assert y is not x and y._base is x


def test_the_same_operand_twice_replays():
    rng = np.random.default_rng(1)
    for _ in range(2):
        a = rng.standard_normal(4)
        assert np.isclose(ember.einsum("i,i->", ember.tensor(a), ember.tensor(a)).item(), a @ a)
        x = ember.tensor(a)
        assert np.isclose(ember.einsum("i,i->", x, x).item(), a @ a)


def test_mixed_dtypes_are_refused_after_the_shapes_were_planned():
    ember.einsum("ij,jk->ik", ember.ones(2, 2), ember.ones(2, 2))
    with pytest.raises(RuntimeError, match="expected scalar type"):
        ember.einsum("ij,jk->ik", ember.ones(2, 2), ember.ones(2, 2, dtype=ember.float64))


def test_a_plan_keeps_no_tensor():
    x = ember.ones(2, 5)
    ember.einsum("ij->j", x)
    from ember._ops.einsum import _PLANS
    for plan in _PLANS.values():
        assert plan.values is None
        for _, args, _ in plan.steps:
            assert not any(isinstance(a, ember.Tensor) for a in args)


def test_a_tensor_passed_twice_leaves_no_plan_that_would_reuse_it():
    """einsum(x, x) first, then einsum(x, y) of the same shapes: y's values are used, not x's again."""
    x, y = ember.tensor([[1., 2.], [3., 4.]]), ember.tensor([[0., 1.], [1., 0.]])
    ember.einsum("ij,jk", x, x)
    np.testing.assert_array_equal(ember.einsum("ij,jk", x, y).numpy(), x.numpy() @ y.numpy())
