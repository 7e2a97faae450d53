"""torch's top-level nn kernels against torch in float64: the native norms with their saved statistics, the
synchronised batch-norm steps (checked against torch's batch norm and its gradients, as torch runs them on CUDA
only), convolution, padding, embedding bags, CTC, grid samplers, pooling, dropouts and segment_reduce, with
gradcheck where they are differentiable."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
import torch

import ember

R = np.random.default_rng(0)
X = R.standard_normal((4, 3, 5))
W3, B3 = R.standard_normal(3), R.standard_normal(3)


def same(ours, theirs):
    ours = ours if isinstance(ours, (tuple, list)) else [ours]
    theirs = theirs if isinstance(theirs, (tuple, list)) else [theirs]
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12, equal_nan=True)


def both(call):
    return call(ember), call(torch)


def grad_ok(function, *arrays):
    inputs = tuple(ember.tensor(a, requires_grad=True) for a in arrays)
    assert ember.autograd.gradcheck(function, inputs)
    assert ember.autograd.gradgradcheck(function, inputs)


def test_native_layer_and_group_norm_return_the_saved_statistics():
    same(*both(lambda m: m.native_layer_norm(m.tensor(X), [3, 5], m.tensor(X[0]), m.tensor(X[1]), 1e-5)))
    same(*both(lambda m: m.native_layer_norm(m.tensor(X), [5], None, None, 1e-3)))
    same(*both(lambda m: m.native_group_norm(m.tensor(X), m.tensor(W3), m.tensor(B3), 4, 3, 5, 3, 1e-5)))
    same(*both(lambda m: m.native_group_norm(m.tensor(X), None, None, 4, 3, 5, 1, 1e-5)))
    grad_ok(lambda x, w: ember.native_group_norm(x, w, None, 2, 3, 2, 3, 1e-5), X[:2, :, :2], W3)
    grad_ok(lambda x: ember.native_layer_norm(x, [2], None, None, 1e-5)[0], X[:2, :, :2])
    with pytest.raises(RuntimeError, match="native_group_norm: expected an input of N \\* C \\* HxW"):
        ember.native_group_norm(ember.tensor(X), None, None, 4, 3, 6, 3, 1e-5)


@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm_statistics_and_running_updates(training):
    running = [R.standard_normal(3), R.uniform(0.5, 2, 3)]
    ours, theirs = ([m.tensor(a) for a in running] for m in (ember, torch))
    same(ember.native_batch_norm(ember.tensor(X), ember.tensor(W3), ember.tensor(B3), *ours, training, 0.2, 1e-5),
         torch.native_batch_norm(torch.tensor(X), torch.tensor(W3), torch.tensor(B3), *theirs, training, 0.2, 1e-5))
    same(ours, theirs)
    running = ([m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64)] for m in (ember, torch))
    ours, theirs = next(running), next(running)
    same(ember.batch_norm_update_stats(ember.tensor(X), *ours, 0.3), torch.batch_norm_update_stats(torch.tensor(X),
                                                                                                   *theirs, 0.3))
    same(ours, theirs)


def test_synchronised_batch_norm_steps_give_torchs_batch_norm_and_its_gradients():
    parts = np.split(X, 2, 0)
    stats = [ember.batch_norm_stats(ember.tensor(p), 1e-5) for p in parts]
    running = [ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)]
    mean, invstd = ember.batch_norm_gather_stats(ember.tensor(X), ember.stack([s[0] for s in stats]),
                                                 ember.stack([s[1] for s in stats]), *running, 0.1, 1e-5, 10)
    by_counts = ember.batch_norm_gather_stats_with_counts(
        ember.tensor(X), ember.stack([s[0] for s in stats]), ember.stack([s[1] for s in stats]), None, None, 0.1,
        1e-5, ember.tensor([10.0, 10.0], dtype=ember.float64))
    same(by_counts, (mean, invstd))
    t_running = [torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)]
    x, w, b = (torch.tensor(a, requires_grad=True) for a in (X, W3, B3))
    expected = torch.nn.functional.batch_norm(x, *t_running, w, b, True, 0.1, 1e-5)
    same(running, t_running)
    same(ember.batch_norm_elemt(ember.tensor(X), ember.tensor(W3), ember.tensor(B3), mean, invstd, 1e-5), expected)
    grad = R.standard_normal(X.shape)
    expected.backward(torch.tensor(grad))
    sum_dy, sum_dy_xmu, grad_w, grad_b = ember.batch_norm_backward_reduce(
        ember.tensor(grad), ember.tensor(X), mean, invstd, ember.tensor(W3), True, True, True)
    grad_x = ember.batch_norm_backward_elemt(ember.tensor(grad), ember.tensor(X), mean, invstd, ember.tensor(W3),
                                             sum_dy, sum_dy_xmu, ember.tensor([10, 10]))
    same([grad_x, grad_w, grad_b], [x.grad, w.grad, b.grad])
    assert ember.batch_norm_backward_reduce(ember.tensor(grad), ember.tensor(X), mean, invstd, None, False, False,
                                            False) == (None, None, None, None)
    grad_ok(lambda x: ember.batch_norm_elemt(x, None, None, *ember.batch_norm_stats(x, 1e-5), 1e-5), X[:2, :2, :2])


def test_native_dropout_returns_its_mask():
    x = ember.tensor(R.standard_normal((50, 40)), requires_grad=True)
    out, mask = ember.native_dropout(x, 0.3, True)
    assert mask.dtype == ember.bool and 0.6 < mask.float().mean().item() < 0.8
    np.testing.assert_allclose(out.detach().numpy(), np.where(mask.numpy(), x.detach().numpy() / 0.7, 0.0))
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), mask.numpy() / 0.7)
    same(*both(lambda m: m.native_dropout(m.tensor(X), 0.5, False)))
    assert ember.native_dropout(ember.ones(100), 0.5, None)[1].float().mean().item() < 1


def test_norms():
    same(*both(lambda m: [m.norm_except_dim(m.tensor(X), 3, d) for d in (0, 1, 2, -1, -2)]))
    same(*both(lambda m: m.norm_except_dim(m.tensor(X[0, 0]), 2, 0)))
    same([ember.native_norm(ember.tensor(X), p) for p in (1, 2, 3.5)],
         [torch.native_norm(torch.tensor(X).to_sparse(), p) for p in (1, 2, 3.5)])
    grad_ok(lambda v: ember.norm_except_dim(v, 2, 1), X[:2, :2, :2])
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.norm_except_dim(ember.tensor(X), 2, 3)


def test_convolution_and_constant_pad_nd():
    x2, k2, kt = R.standard_normal((2, 4, 6, 6)), R.standard_normal((6, 2, 3, 3)), R.standard_normal((4, 3, 2, 2))
    same(*both(lambda m: m.convolution(m.tensor(x2), m.tensor(k2), m.tensor(np.ones(6)), [2, 1], [1, 0], [1, 2],
                                       False, [0, 0], 2)))
    same(*both(lambda m: m.convolution(m.tensor(x2), m.tensor(kt), None, [2, 2], [1, 0], [1, 1], True, [1, 0], 2)))
    x1, k1 = R.standard_normal((2, 3, 7)), R.standard_normal((4, 3, 2))
    same(*both(lambda m: m.convolution(m.tensor(x1), m.tensor(k1), None, [1], [1], [2], False, [0], 1)))
    x3, k3 = R.standard_normal((1, 2, 3, 3, 3)), R.standard_normal((2, 2, 2, 2, 2))
    same(*both(lambda m: m.convolution(m.tensor(x3), m.tensor(k3), None, [1] * 3, [0] * 3, [1] * 3, True, [0] * 3,
                                       1)))
    same(*both(lambda m: m.constant_pad_nd(m.tensor(x1), [1, -2, 2, 0], 3.5)))
    grad_ok(lambda x, k: ember.convolution(x, k, None, [1], [1], [1], False, [0], 1), x1[:1, :, :3], k1[:2])
    with pytest.raises(RuntimeError, match="convolution: expected a weight of 3, 4 or 5 dims"):
        ember.convolution(ember.ones(1, 1, 3), ember.ones(3), None, [1], [0], [1], False, [0], 1)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_bag_with_its_bookkeeping(mode, padding_idx):
    w, i, o = R.standard_normal((5, 3)), np.array([0, 1, 1, 4, 2, 3]), np.array([0, 2, 2, 5])
    same(*both(lambda m: m.embedding_bag(m.tensor(w), m.tensor(i), m.tensor(o), False, mode, False, None, False,
                                         padding_idx)))
    # torch's sum mode sizes its (all-zero) bag_size by the offsets when no gradient is recorded: with one, by the
    # bags, as ember's always is
    same(*both(lambda m: m.embedding_bag(m.tensor(w, requires_grad=True), m.tensor(i), m.tensor(np.array([0, 2, 2, 6])),
                                         False, mode, False, None, True)))


def test_embedding_bag_weights_gradient_and_renorm():
    w, i, o, psw = R.standard_normal((5, 3)), np.array([0, 1, 1, 4, 2, 3]), np.array([0, 2, 2, 5]), R.random(6)
    same(*both(lambda m: m.embedding_bag(m.tensor(w), m.tensor(i), m.tensor(o), False, 0, False, m.tensor(psw))))
    grad_ok(lambda w: ember.embedding_bag(w, ember.tensor(i), ember.tensor(o), False, 1)[0], w)
    ours, theirs = ember.tensor(w * 3), torch.tensor(w * 3)
    assert ember.embedding_renorm_(ours, ember.tensor(i[:3]), 1.5, 2.0) is ours
    torch.embedding_renorm_(theirs, torch.tensor(i[:3]), 1.5, 2.0)
    same(ours, theirs)
    with pytest.raises(ValueError, match="embedding_bag: mode must be 0"):
        ember.embedding_bag(ember.tensor(w), ember.tensor(i), ember.tensor(o), False, 3)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_ctc_loss_with_numbered_reductions_and_list_lengths(reduction):
    log_probs, targets = np.log(R.dirichlet(np.ones(5), (6, 2))), np.array([[1, 2, 2], [3, 1, 0]])
    same(*both(lambda m: m.ctc_loss(m.tensor(log_probs), m.tensor(targets), [6, 5], [3, 2], 0, reduction)))
    same(*both(lambda m: m.ctc_loss(m.tensor(log_probs), m.tensor(targets), m.tensor([6, 5]), m.tensor([3, 2]), 4,
                                    reduction, True)))


def test_grid_samplers_and_affine_grid_generator():
    image, grid = R.standard_normal((2, 3, 5, 4)), R.uniform(-1.2, 1.2, (2, 3, 2, 2))
    for interpolation in (0, 1, 2):
        for padding in (0, 1, 2):
            same(*both(lambda m: m.grid_sampler(m.tensor(image), m.tensor(grid), interpolation, padding, False)))
    same(*both(lambda m: m.grid_sampler_2d(m.tensor(image), m.tensor(grid), 0, 2, True)))
    volume, grid3 = R.standard_normal((1, 2, 3, 4, 3)), R.uniform(-1, 1, (1, 2, 2, 2, 3))
    same(*both(lambda m: m.grid_sampler_3d(m.tensor(volume), m.tensor(grid3), 0, 1, False)))
    theta = R.standard_normal((2, 2, 3))
    same(*both(lambda m: m.affine_grid_generator(m.tensor(theta), [2, 3, 4, 5], False)))
    grad_ok(lambda x, g: ember.grid_sampler_2d(x, g, 0, 0, False), image[:1, :1, :3, :3], grid[:1, :2])
    with pytest.raises(RuntimeError, match="grid_sampler_3d: expected a 5-D input"):
        ember.grid_sampler_3d(ember.tensor(image), ember.tensor(grid), 0, 0, False)
    with pytest.raises(ValueError, match="interpolation_mode must be one of 0 \\(bilinear\\)"):
        ember.grid_sampler(ember.tensor(image), ember.tensor(grid), 3, 0, False)


def test_adaptive_max_pool1d_and_dropouts():
    x = R.standard_normal((2, 3, 7))
    same(*both(lambda m: m.adaptive_max_pool1d(m.tensor(x), 3)))
    same(*both(lambda m: m.feature_dropout(m.tensor(x), 0.5, False)))
    for name in ("dropout_", "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_"):
        for train in (True, False):
            tensor = ember.tensor(x)
            assert getattr(ember, name)(tensor, 0.4, train) is tensor
            assert np.allclose(tensor.numpy(), x) != train, name
    dropped = ember.feature_dropout(ember.ones(200, 30, 4), 0.5, True)
    per_feature = dropped.numpy()
    assert (per_feature == per_feature[..., :1]).all() and 0.4 < (per_feature == 0).mean() < 0.6
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        ember.feature_dropout(ember.ones(3), 0.5, True)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce(reduce):
    data, lengths = np.round(R.standard_normal((6, 2)) * 2) / 2, np.array([2, 0, 3, 1])
    for initial in (None, 0.5):
        same(*both(lambda m: m.segment_reduce(m.tensor(data), reduce, lengths=m.tensor(lengths), initial=initial)))
        same(*both(lambda m: m.segment_reduce(m.tensor(data), reduce, offsets=m.tensor(np.array([0, 2, 2, 5, 6])),
                                              initial=initial)))
    data3, lengths2 = R.standard_normal((2, 6, 3)), np.array([[2, 4], [1, 5]])
    same(*both(lambda m: m.segment_reduce(m.tensor(data3), reduce, lengths=m.tensor(lengths2), axis=1)))
    grads = []
    for m in (ember, torch):
        tensor = m.tensor(data, requires_grad=True)
        m.segment_reduce(tensor, reduce, lengths=m.tensor(np.array([2, 3, 1])), initial=0.5).sum().backward()
        grads.append(tensor.grad)
    same(*grads)
    steps = ember.tensor(R.standard_normal((4, 1, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda lp: ember.ctc_loss(lp.log_softmax(-1), ember.tensor([[1, 2]]), [4], [2]),
                                    (steps,))
    grad_ok(lambda d: ember.segment_reduce(d, reduce, lengths=ember.tensor([[2, 1], [1, 2]]), axis=1),
            R.random((2, 3)) + 0.5)


def test_segment_reduce_errors():
    data = ember.ones(4)
    with pytest.raises(RuntimeError, match="to sum to data.size\\(0\\)"):
        ember.segment_reduce(data, "sum", lengths=ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="indices based reduction is not supported"):
        ember.segment_reduce(data, "sum", indices=ember.tensor([0, 0, 1, 1]))
    with pytest.raises(RuntimeError, match="reduce must be one of"):
        ember.segment_reduce(data, "median", lengths=ember.tensor([4]))


@settings(max_examples=25, deadline=None)
@given(lengths=st.lists(st.integers(0, 3), min_size=1, max_size=5), width=st.integers(1, 3),
       reduce=st.sampled_from(["sum", "mean", "max", "min", "prod"]), initial=st.sampled_from([None, -0.5, 2.0]),
       seed=st.integers(0, 99))
def test_segment_reduce_on_random_segments(lengths, width, reduce, initial, seed):
    data = np.random.default_rng(seed).standard_normal((sum(lengths), width))
    same(*both(lambda m: m.segment_reduce(m.tensor(data), reduce, lengths=m.tensor(np.array(lengths)),
                                          initial=initial)))


SMALL = R.standard_normal((2, 2, 3))
GRADIENT_CASES = {
    "native_batch_norm": (lambda x, w: ember.native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5)[:2],
                          [SMALL, W3[:2]]),
    "native_norm": (lambda x: ember.native_norm(x, 3), [SMALL]),
    "batch_norm_update_stats": (lambda x: ember.batch_norm_update_stats(x, None, None, 0.1), [SMALL]),
    "batch_norm_gather_stats": (lambda m, s: ember.batch_norm_gather_stats(ember.ones(1), m, s, None, None, 0.1,
                                                                           1e-5, 3), [SMALL[0], SMALL[1] ** 2 + 1]),
    "batch_norm_backward_reduce": (lambda g, x, m, s: ember.batch_norm_backward_reduce(g, x, m, s, None, True, True,
                                                                                       True), [SMALL, SMALL, W3[:2],
                                                                                               B3[:2] ** 2]),
    "batch_norm_backward_elemt": (lambda g, x, w: ember.batch_norm_backward_elemt(
        g, x, ember.tensor(W3[:2]), ember.tensor(B3[:2] ** 2 + 1), w, ember.tensor([1.0, 2.0], dtype=ember.float64),
        ember.tensor([0.5, -1.0], dtype=ember.float64), ember.tensor([6])), [SMALL, SMALL, W3[:2]]),
    "constant_pad_nd": (lambda x: ember.constant_pad_nd(x, [1, -1, 2, 0], 0.5), [SMALL]),
    "affine_grid_generator": (lambda t: ember.affine_grid_generator(t, [1, 1, 2, 3], False), [SMALL[:1]]),
    "adaptive_max_pool1d": (lambda x: ember.adaptive_max_pool1d(x, 2)[0], [SMALL]),
}


@pytest.mark.parametrize("name", list(GRADIENT_CASES))
def test_gradients_to_second_order_of_the_rest(name):
    function, arrays = GRADIENT_CASES[name]
    grad_ok(function, *arrays)


def test_ctc_loss_gradient_matches_torch():  # first order only: torch has no second for it either
    log_probs, targets = np.log(R.dirichlet(np.ones(5), (6, 2))), np.array([[1, 2, 2], [3, 1, 0]])
    grads = []
    for m in (ember, torch):
        tensor = m.tensor(log_probs, requires_grad=True)
        m.ctc_loss(tensor, m.tensor(targets), [6, 5], [3, 2], 0, 1).backward()
        grads.append(tensor.grad)
    same(*grads)
    steps = ember.tensor(R.standard_normal((4, 1, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda lp: ember.ctc_loss(lp.log_softmax(-1), ember.tensor([[1, 2]]), [4], [2]),
                                    (steps,))


BAD_CALLS = {
    "lstm, weights": lambda m: m.lstm(m.ones(2, 1, 3), [m.zeros(1, 1, 4), m.zeros(1, 1, 4)], [m.ones(16, 3)], False,
                                      1, 0.0, False, False, False),
    "gru, hidden state": lambda m: m.gru(m.ones(2, 1, 3), m.zeros(2, 1, 4), [m.ones(12, 3), m.ones(12, 4)], False, 1,
                                         0.0, False, False, False),
    "gru_cell, sizes": lambda m: m.gru_cell(m.ones(1, 2), m.zeros(1, 4), m.ones(12, 3), m.ones(12, 4)),
    "native_layer_norm, shape": lambda m: m.native_layer_norm(m.ones(2, 3), [4], None, None, 1e-5),
    "native_group_norm, groups": lambda m: m.native_group_norm(m.ones(2, 4, 3), None, None, 2, 4, 3, 3, 1e-5),
    "native_dropout, p": lambda m: m.native_dropout(m.ones(2), 1.5, True),
    "convolution, channels": lambda m: m.convolution(m.ones(1, 2, 5), m.ones(1, 3, 2), None, [1], [0], [1], False,
                                                     [0], 1),
    "constant_pad_nd, length": lambda m: m.constant_pad_nd(m.ones(2), [1, 1, 1, 1]),
    "embedding_bag, index": lambda m: m.embedding_bag(m.ones(3, 2), m.tensor([0, 5]), m.tensor([0]), False, 0),
    "grid_sampler_2d, rank": lambda m: m.grid_sampler_2d(m.ones(1, 1, 2, 2, 2), m.ones(1, 1, 1, 1, 3), 0, 0, False),
    "adaptive_max_pool1d, rank": lambda m: m.adaptive_max_pool1d(m.ones(2, 2, 2, 2), 2),
    "segment_reduce, lengths": lambda m: m.segment_reduce(m.ones(4), "sum", lengths=m.tensor([1, 2])),
    "feature_dropout, rank": lambda m: m.feature_dropout(m.ones(3), 0.5, True),
    "ctc_loss, lengths": lambda m: m.ctc_loss(m.ones(3, 1, 4).log_softmax(-1), m.tensor([[1, 2]]), [5], [2]),
    "norm_except_dim, dim": lambda m: m.norm_except_dim(m.ones(2, 2), 2, 5),
    "embedding_renorm_, rank": lambda m: m.embedding_renorm_(m.ones(3), m.tensor([0]), 1.0, 2.0),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_input_raises_what_torch_raises(name):
    with pytest.raises(Exception) as theirs:
        BAD_CALLS[name](torch)
    with pytest.raises(theirs.type) as ours:
        BAD_CALLS[name](ember)
    assert len(str(ours.value)) > 40  # a sentence that says what is wrong, not a bare assert
