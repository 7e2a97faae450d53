"""vmap over torch's top-level nn kernels, F.linear_cross_entropy and F.grouped_mm: each batched call equals
the stack of per-sample calls, and per-sample gradients of the fused loss equal the per-sample ones."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.func import grad, vmap

R = np.random.default_rng(0)
B = 3


def t(*shape):
    return ember.tensor(R.standard_normal(shape))


ONES = {shape: ember.ones(shape, dtype=ember.float64) for shape in ((9, 2), (9, 3), (3, 2), (3, 3), (3, 2, 2))}
CASES = {
    "native_layer_norm": (lambda x: ember.native_layer_norm(x, [4], None, None, 1e-5), [t(B, 2, 4)]),
    "native_group_norm": (lambda x: ember.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5), [t(B, 2, 4, 3)]),
    "native_batch_norm, eval": (lambda x: ember.native_batch_norm(x, None, None, ember.zeros(3, dtype=ember.float64),
                                                                  ember.ones(3, dtype=ember.float64), False, 0.1,
                                                                  1e-5)[0], [t(B, 5, 3)]),
    "native_norm": (lambda x: ember.native_norm(x, 3), [t(B, 2, 4)]),
    "norm_except_dim": (lambda x: ember.norm_except_dim(x, 2, 1), [t(B, 2, 4)]),
    "batch_norm_stats": (lambda x: ember.batch_norm_stats(x, 1e-5), [t(B, 5, 3)]),
    "batch_norm_elemt": (lambda x, m: ember.batch_norm_elemt(x, None, None, m, m * 0 + 2, 1e-5), [t(B, 5, 3),
                                                                                                    t(B, 3)]),
    "batch_norm_backward_reduce": (lambda g, x: ember.batch_norm_backward_reduce(g, x, x[0], x[1], None, True, True,
                                                                                 True), [t(B, 5, 3), t(B, 5, 3)]),
    "batch_norm_backward_elemt": (lambda g, x: ember.batch_norm_backward_elemt(g, x, x[0], x[1], None, x[2], x[3],
                                                                               ember.tensor([5])),
                                  [t(B, 5, 3), t(B, 5, 3)]),
    "convolution": (lambda x, w: ember.convolution(x, w, None, [1], [1], [1], False, [0], 1), [t(B, 2, 3, 5),
                                                                                               t(B, 4, 3, 2)]),
    "convolution, transposed": (lambda x: ember.convolution(x, ONES[3, 2, 2], None, [2], [0], [1], True, [1], 1),
                                [t(B, 2, 3, 5)]),
    "constant_pad_nd": (lambda x: ember.constant_pad_nd(x, [1, 2], 0.5), [t(B, 2, 3)]),
    "grid_sampler": (lambda x, g: ember.grid_sampler(x, g, 0, 0, False), [t(B, 1, 2, 4, 4), t(B, 1, 3, 3, 2)]),
    "grid_sampler_2d": (lambda x, g: ember.grid_sampler_2d(x, g, 1, 1, True), [t(B, 1, 2, 4, 4), t(B, 1, 3, 3, 2)]),
    "affine_grid_generator": (lambda th: ember.affine_grid_generator(th, [1, 1, 2, 3], False), [t(B, 1, 2, 3)]),
    "adaptive_max_pool1d": (lambda x: ember.adaptive_max_pool1d(x, 2), [t(B, 2, 3, 5)]),
    "gru_cell": (lambda x, h: ember.gru_cell(x, h, ONES[9, 2], ONES[9, 3]), [t(B, 4, 2), t(B, 4, 3)]),
    "rnn_tanh_cell": (lambda x, h: ember.rnn_tanh_cell(x, h, ONES[3, 2], ONES[3, 3]), [t(B, 4, 2), t(B, 4, 3)]),
    "rnn_relu_cell": (lambda x, h: ember.rnn_relu_cell(x, h, ONES[3, 2], ONES[3, 3]), [t(B, 4, 2), t(B, 4, 3)]),
    "linear_cross_entropy": (lambda x, w: F.linear_cross_entropy(x, w, ember.tensor([1, 0, 4])), [t(B, 3, 4),
                                                                                                    t(B, 6, 4)]),
    "grouped_mm": (lambda a, b: F.grouped_mm(a, b, offs=ember.tensor([1, 3], dtype=ember.int32)),
                   [t(B, 4, 2), t(B, 2, 2, 3)]),
}


def _tuple(value):
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("name", list(CASES))
def test_batched_call_equals_the_per_sample_calls(name):
    function, inputs = CASES[name]
    batched = _tuple(vmap(function)(*inputs))
    samples = [_tuple(function(*(x[i] for x in inputs))) for i in range(B)]
    assert len(batched) == len(samples[0])
    for k, value in enumerate(batched):
        np.testing.assert_allclose(value.numpy(), np.stack([s[k].numpy() for s in samples]), rtol=1e-12,
                                   atol=1e-12)


def test_per_sample_gradients_of_linear_cross_entropy():
    weight, x, target = t(6, 4), t(B, 4), ember.tensor([1, 5, 2])

    def loss(w, row, label):
        return F.linear_cross_entropy(row.unsqueeze(0), w, label.unsqueeze(0))

    batched = vmap(grad(loss), in_dims=(None, 0, 0))(weight, x, target)
    for i in range(B):
        np.testing.assert_allclose(batched[i].numpy(), grad(loss)(weight, x[i], target[i]).numpy(), rtol=1e-12)
