"""Gradients taken with ``create_graph=True`` require grad exactly where torch's do, and differentiate as torch's.

Many of torch's backward formulas are ops of their own that also read the saved input (``hardtanh_backward(grad,
self, ...)``, ``max_pool2d_with_indices_backward(grad, self, indices)``): their derivative with respect to the
input is zero, but the gradient they return is recorded, so ``grad(g.sum(), x)`` gives zeros rather than an error.
A Hessian or a gradient penalty of a network whose path to ``x`` runs only through such layers depends on it.

For every differentiable row of the op table, and for a list of ``nn.functional`` calls, on float64 inputs that
require grad: ``g = grad(sum(f(x) * v), inputs, create_graph=True)``; each ``g_i`` must require grad where torch's
does, and then ``grad(g_i.sum(), inputs, allow_unused=True)`` must be torch's (None where torch's is None).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from op_table import OPS
from test_ops import assert_same, inputs_for, run_both
from twins import assert_same_outcome

# one sample a row (the first): the property is about the op's backward, not about shapes or layouts
ROWS = [pytest.param(spec, id=spec.name) for spec in OPS if spec.differentiable]


def _weights(t, seed: int):
    return np.random.default_rng(seed).uniform(-1, 1, tuple(t.shape))


def _differentiable_outputs(result) -> list:
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    return [o for o in outputs if isinstance(o, (ember.Tensor, torch.Tensor)) and o.requires_grad]


def _first_gradients(lib, result, leaves):
    """grad(sum(out * v), leaves, create_graph=True, allow_unused=True), or None where nothing reaches the leaves."""
    outputs = _differentiable_outputs(result)
    if not outputs:
        return None
    total = sum((o * lib.from_numpy(_weights(o, i)).to(o.dtype)).real.sum() for i, o in enumerate(outputs))
    return lib.autograd.grad(total, leaves, create_graph=True, allow_unused=True)


def _second_gradients(lib, g, leaves):
    try:
        return lib.autograd.grad(g.sum(), leaves, retain_graph=True, allow_unused=True)
    except Exception as error:
        return error


def _same_gradient(mine, theirs, what: str) -> None:
    assert (mine is None) == (theirs is None), f"{what}: ember's is {mine!r}, torch's {theirs!r}"
    if theirs is not None:
        assert_same(mine, theirs, what)


def assert_gradients_graph_as_torch(mine, theirs, my_leaves, their_leaves, what: str) -> None:
    """The first gradients' requires_grad, and their own gradients, as torch's."""
    my_grads = _first_gradients(ember, mine, my_leaves)
    their_grads = _first_gradients(torch, theirs, their_leaves)
    assert (my_grads is None) == (their_grads is None), f"{what}: differentiable in one library only"
    if their_grads is None:
        return
    for i, (g, h) in enumerate(zip(my_grads, their_grads)):
        _same_gradient(g, h, f"{what}: gradient of input {i}")
        if h is None:
            continue
        assert g.requires_grad == h.requires_grad, (
            f"{what}: the gradient of input {i} requires grad in {'ember' if g.requires_grad else 'torch'} only")
        if not h.requires_grad:
            continue
        assert g.grad_fn is not None, f"{what}: gradient of input {i} requires grad but has no grad_fn"
        my_second = _second_gradients(ember, g, my_leaves)
        their_second = _second_gradients(torch, h, their_leaves)
        if what in TORCH_HAS_NO_SECOND_DERIVATIVE:
            their_second = [None if a is None else torch.zeros(a.shape, dtype=torch.float64) for a in my_second]
        if assert_same_outcome(my_second, their_second, f"{what}: second derivative through input {i}"):
            for j, (a, b) in enumerate(zip(my_second, their_second)):
                _same_gradient(a, b, f"{what}: d(gradient of input {i})/d input {j}")


# torch's backward of these ops has no derivative of its own ("not implemented"); ember's (a composite of ember
# ops) has, and the derivative the sweep takes, that of the gradient's sum, is zero for each: the loss is
# piecewise linear in the input (hardsigmoid, the margin losses), or unchanged by moving all points alike (pdist)
TORCH_HAS_NO_SECOND_DERIVATIVE = {"hardsigmoid", "multi_margin_loss", "multilabel_margin_loss", "pdist"}


@pytest.mark.parametrize("spec", ROWS)
def test_rows_gradients_graph_as_torch(spec):
    (mine, my_leaves), (theirs, their_leaves) = run_both(spec, inputs_for(spec, 0, "float64"), True)
    if assert_same_outcome(mine, theirs, spec.name) and their_leaves:
        assert_gradients_graph_as_torch(mine, theirs, my_leaves, their_leaves, f"{spec.name}{spec.samples[0]}")


# ----------------------------------------------------------------- nn.functional


class Leaves:
    """Makes the float64 inputs of one call in ``lib``: ``x(2, 3)`` requires grad (and is listed), ``x.constant``
    does not."""

    def __init__(self, lib):
        self.lib = lib
        self.made = []
        self.seed = 0

    def _values(self, shape, low, high):
        self.seed += 1
        return self.lib.tensor(np.random.default_rng(self.seed).uniform(low, high, shape), dtype=self.lib.float64)

    def __call__(self, *shape: int, low: float = -1.0, high: float = 1.0):
        t = self._values(shape, low, high).requires_grad_()
        self.made.append(t)
        return t

    def constant(self, *shape: int, low: float = -1.0, high: float = 1.0):
        return self._values(shape, low, high)

    def ints(self, values):
        return self.lib.tensor(np.asarray(values), dtype=self.lib.int64)


def _F(x: Leaves):
    return x.lib.nn.functional


def _on(shape: tuple, name: str, *args, **kwargs):
    """F.<name>(input of ``shape``, *args, **kwargs)."""
    return lambda x: getattr(_F(x), name)(x(*shape), *args, **kwargs)


SEQUENCE, IMAGE, VOLUME = (1, 2, 7), (1, 2, 5, 4), (1, 2, 4, 4, 4)
# (softsign is the table's row F_softsign: torch's second derivative of it imports torch._dynamo, seconds once a
# process, which one of the two CI workers pays rather than both)
ACTIVATIONS = ("relu relu6 elu selu celu gelu silu mish softplus softshrink hardshrink tanhshrink hardtanh hardswish "
               "hardsigmoid logsigmoid sigmoid tanh leaky_relu glu rrelu softmax softmin log_softmax normalize").split()
ELEMENTWISE_LOSSES = "mse_loss l1_loss smooth_l1_loss huber_loss soft_margin_loss multilabel_soft_margin_loss".split()
PROBABILITY_LOSSES = "binary_cross_entropy binary_cross_entropy_with_logits kl_div poisson_nll_loss".split()


def _loss(name: str, reduction: str, low: float = -1.0, high: float = 1.0):
    return lambda x: getattr(_F(x), name)(x(3, 4, low=low, high=high), x.constant(3, 4, low=low, high=high),
                                          reduction=reduction)


CALLS = {
    # ---- activations (the defaults, and the arguments that change the backward)
    **{name: _on((3, 4), name) for name in ACTIVATIONS},
    "hardtanh_narrow": _on((3, 4), "hardtanh", -0.5, 0.5),
    "leaky_relu_slope": _on((3, 4), "leaky_relu", 0.2),
    "threshold": _on((3, 4), "threshold", 0.1, 20.0),
    "elu_alpha": _on((3, 4), "elu", 0.5),
    "softplus_beta": _on((3, 4), "softplus", 2.0, 1.0),
    "gelu_tanh": _on((3, 4), "gelu", approximate="tanh"),
    "prelu_constant_weight": lambda x: _F(x).prelu(x(*IMAGE), x.constant(2)),
    "prelu": lambda x: _F(x).prelu(x(*IMAGE), x(2)),
    "dropout_eval": _on((3, 4), "dropout", training=False),
    # ---- pooling
    **{f"max_pool{d}d": _on(shape, f"max_pool{d}d", 2) for d, shape in ((1, SEQUENCE), (2, IMAGE), (3, VOLUME))},
    "max_pool2d_padded": _on(IMAGE, "max_pool2d", 3, 2, 1),
    "max_pool2d_indices": _on(IMAGE, "max_pool2d", 2, return_indices=True),
    **{f"avg_pool{d}d": _on(shape, f"avg_pool{d}d", 2) for d, shape in ((1, SEQUENCE), (2, IMAGE), (3, VOLUME))},
    "avg_pool2d_padded": _on(IMAGE, "avg_pool2d", 3, 2, 1, count_include_pad=False),
    **{f"adaptive_avg_pool{d}d": _on(shape, f"adaptive_avg_pool{d}d", 3)
       for d, shape in ((1, SEQUENCE), (2, IMAGE), (3, VOLUME))},
    "adaptive_avg_pool2d_global": _on(IMAGE, "adaptive_avg_pool2d", 1),
    **{f"adaptive_max_pool{d}d": _on(shape, f"adaptive_max_pool{d}d", 3)
       for d, shape in ((1, SEQUENCE), (2, IMAGE), (3, VOLUME))},
    "lp_pool1d": _on(SEQUENCE, "lp_pool1d", 2, 2),
    "lp_pool2d": _on(IMAGE, "lp_pool2d", 2, 2),
    "lp_pool2d_p3": _on(IMAGE, "lp_pool2d", 3, 2),
    # (the windows' random offsets given, the same in both libraries)
    "fractional_max_pool2d": lambda x: _F(x).fractional_max_pool2d(
        x(*IMAGE), 2, output_size=(3, 2), _random_samples=x.constant(1, 2, 2, low=0.0)),
    "fractional_max_pool3d": lambda x: _F(x).fractional_max_pool3d(
        x(*VOLUME), 2, output_size=2, _random_samples=x.constant(1, 2, 3, low=0.0)),
    "max_unpool1d": lambda x: _F(x).max_unpool1d(x(1, 2, 3), x.ints([[[0, 3, 5], [1, 2, 4]]]), 2),
    "max_unpool2d": lambda x: _F(x).max_unpool2d(x(1, 1, 2, 2), x.ints([[[[0, 3], [9, 14]]]]), 2),
    "max_unpool3d": lambda x: _F(x).max_unpool3d(x(1, 1, 1, 1, 2), x.ints([[[[[0, 3]]]]]), 2),
    # ---- padding and resampling
    **{f"pad_{mode}_{len(shape) - 2}d": _on(shape, "pad", (1, 1) * (len(shape) - 2), mode=mode)
       for mode in ("constant", "reflect", "replicate", "circular") for shape in (SEQUENCE, IMAGE, VOLUME)},
    **{f"interpolate_{mode}": _on(shape, "interpolate", scale_factor=2, mode=mode)
       for mode, shape in (("nearest", IMAGE), ("nearest-exact", IMAGE), ("linear", SEQUENCE),
                           ("bilinear", IMAGE), ("bicubic", IMAGE), ("trilinear", VOLUME))},
    "interpolate_nearest_1d": _on(SEQUENCE, "interpolate", scale_factor=2),
    "interpolate_nearest_3d": _on(VOLUME, "interpolate", scale_factor=2),
    "interpolate_bilinear_corners": _on(IMAGE, "interpolate", size=(7, 9), mode="bilinear", align_corners=True),
    "interpolate_bilinear_antialias": _on(IMAGE, "interpolate", scale_factor=0.5, mode="bilinear", antialias=True),
    "interpolate_area": _on(IMAGE, "interpolate", size=(3, 2), mode="area"),
    "interpolate_area_1d": _on(SEQUENCE, "interpolate", size=3, mode="area"),
    "grid_sample_constant_grid": lambda x: _F(x).grid_sample(x(*IMAGE), x.constant(1, 3, 4, 2), align_corners=False),
    "grid_sample_nearest": lambda x: _F(x).grid_sample(x(*IMAGE), x.constant(1, 3, 4, 2), mode="nearest",
                                                       align_corners=False),
    "grid_sample": lambda x: _F(x).grid_sample(x(*IMAGE), x(1, 3, 4, 2), align_corners=False),
    "grid_sample_grid_only": lambda x: _F(x).grid_sample(x.constant(*IMAGE), x(1, 3, 4, 2), align_corners=False),
    "grid_sample_border": lambda x: _F(x).grid_sample(x(*IMAGE), x(1, 3, 4, 2), padding_mode="border",
                                                      align_corners=True),
    "pixel_shuffle": lambda x: _F(x).pixel_shuffle(x(1, 4, 2, 3), 2),
    "unfold": _on(IMAGE, "unfold", 2),
    "fold": lambda x: _F(x).fold(x(1, 8, 12), (4, 5), 2),
    # ---- layers with constant parameters (the path to x runs through the layer's linear map only)
    **{f"conv{d}d_constant_weight": (lambda d: lambda x: getattr(_F(x), f"conv{d}d")(
        x(1, 2, *(5,) * d), x.constant(3, 2, *(2,) * d), x.constant(3)))(d) for d in (1, 2, 3)},
    **{f"conv_transpose{d}d_constant_weight": (lambda d: lambda x: getattr(_F(x), f"conv_transpose{d}d")(
        x(1, 2, *(3,) * d), x.constant(2, 3, *(2,) * d)))(d) for d in (1, 2, 3)},
    "conv2d": lambda x: _F(x).conv2d(x(*IMAGE), x(3, 2, 2, 2), x(3)),
    "conv_transpose2d": lambda x: _F(x).conv_transpose2d(x(*IMAGE), x(2, 3, 2, 2)),
    "linear_constant_weight": lambda x: _F(x).linear(x(3, 4), x.constant(5, 4)),
    "bilinear_constant_weight": lambda x: _F(x).bilinear(x(3, 4), x(3, 2), x.constant(5, 4, 2)),
    "embedding": lambda x: _F(x).embedding(x.ints([[0, 2], [1, 0]]), x(3, 4)),
    "embedding_bag": lambda x: _F(x).embedding_bag(x.ints([0, 2, 1, 0]), x(3, 4), x.ints([0, 2])),
    "embedding_bag_max": lambda x: _F(x).embedding_bag(x.ints([0, 2, 1, 0]), x(3, 4), x.ints([0, 2]), mode="max"),
    # ---- normalization, with and without weights
    "batch_norm_train": lambda x: _F(x).batch_norm(x(2, 3, 4), None, None, training=True),
    "batch_norm_train_affine": lambda x: _F(x).batch_norm(x(2, 3, 4), None, None, x(3), x(3), training=True),
    "batch_norm_eval": lambda x: _F(x).batch_norm(x(2, 3, 4), x.constant(3), x.constant(3, low=0.5), x(3), x(3)),
    "batch_norm_eval_constant_weight": lambda x: _F(x).batch_norm(x(2, 3, 4), x.constant(3), x.constant(3, low=0.5),
                                                                  x.constant(3), x.constant(3)),
    "instance_norm": _on((2, 3, 4), "instance_norm"),
    "instance_norm_affine": lambda x: _F(x).instance_norm(x(2, 3, 4), weight=x(3), bias=x(3)),
    "layer_norm": _on((3, 4), "layer_norm", (4,)),
    "layer_norm_affine": lambda x: _F(x).layer_norm(x(3, 4), (4,), x(4), x(4)),
    "layer_norm_constant_weight": lambda x: _F(x).layer_norm(x(3, 4), (4,), x.constant(4), x.constant(4)),
    "group_norm": lambda x: _F(x).group_norm(x(2, 4, 3), 2),
    "group_norm_affine": lambda x: _F(x).group_norm(x(2, 4, 3), 2, x(4), x(4)),
    "rms_norm": _on((3, 4), "rms_norm", (4,)),
    "rms_norm_weight": lambda x: _F(x).rms_norm(x(3, 4), (4,), x(4)),
    "local_response_norm": _on((2, 3, 4), "local_response_norm", 2),
    # ---- losses with respect to the input
    **{f"{name}_{reduction}": _loss(name, reduction) for name in ELEMENTWISE_LOSSES for reduction in ("mean", "none")},
    **{f"{name}_{reduction}": _loss(name, reduction, 0.1, 0.9)
       for name in PROBABILITY_LOSSES for reduction in ("mean", "none")},
    "cross_entropy": lambda x: _F(x).cross_entropy(x(3, 4), x.ints([0, 3, 1])),
    "cross_entropy_smoothing": lambda x: _F(x).cross_entropy(x(3, 4), x.ints([0, 3, 1]), label_smoothing=0.1),
    "nll_loss": lambda x: _F(x).nll_loss(x(3, 4), x.ints([0, 3, 1])),
    "nll_loss_weight": lambda x: _F(x).nll_loss(x(3, 4), x.ints([0, 3, 1]), weight=x.constant(4, low=0.5)),
    "multi_margin_loss": lambda x: _F(x).multi_margin_loss(x(3, 4), x.ints([0, 3, 1])),
    "multilabel_margin_loss": lambda x: _F(x).multilabel_margin_loss(x(3, 4), x.ints([[0, 3, -1, 0], [1, -1, 0, 0],
                                                                                      [2, 1, 0, -1]])),
    "hinge_embedding_loss": lambda x: _F(x).hinge_embedding_loss(x(3, 4), x.lib.tensor([[1.0, -1.0, 1.0, -1.0]] * 3,
                                                                                       dtype=x.lib.float64)),
    "margin_ranking_loss": lambda x: _F(x).margin_ranking_loss(x(4), x(4), x.lib.tensor([1.0, -1.0, 1.0, -1.0],
                                                                                        dtype=x.lib.float64)),
    "cosine_embedding_loss": lambda x: _F(x).cosine_embedding_loss(x(3, 4), x(3, 4), x.lib.tensor([1.0, -1.0, 1.0],
                                                                                                 dtype=x.lib.float64)),
    "triplet_margin_loss": lambda x: _F(x).triplet_margin_loss(x(3, 4), x(3, 4), x(3, 4)),
    "gaussian_nll_loss": lambda x: _F(x).gaussian_nll_loss(x(3, 4), x.constant(3, 4), x(3, 4, low=0.1)),
    "ctc_loss": lambda x: _F(x).ctc_loss(x(6, 2, 4).log_softmax(2), x.ints([[1, 2], [3, 1]]), x.ints([6, 5]),
                                         x.ints([2, 2])),
    "cosine_similarity": lambda x: _F(x).cosine_similarity(x(3, 4), x(3, 4)),
    "pairwise_distance": lambda x: _F(x).pairwise_distance(x(3, 4), x(3, 4)),
    "pdist": _on((3, 4), "pdist"),
}


def _run(call, lib):
    leaves = Leaves(lib)
    lib.manual_seed(0)  # (the same random choices in both libraries' calls that make any: rrelu, fractional pools)
    try:
        return call(leaves), leaves.made
    except Exception as error:  # compared with the other library's outcome by the caller
        return error, leaves.made


@pytest.mark.parametrize("name", CALLS)
def test_functional_gradients_graph_as_torch(name: str):
    (mine, my_leaves), (theirs, their_leaves) = (_run(CALLS[name], lib) for lib in (ember, torch))
    if assert_same_outcome(mine, theirs, name):
        assert_gradients_graph_as_torch(mine, theirs, my_leaves, their_leaves, name)
