"""The nn ops that torch also has at its top level (``torch.conv2d``, ``torch.layer_norm``, ``torch.dropout``...).

Where torch's top-level function is the very object of ``torch.nn.functional``, ember's is too (it is
imported, not wrapped). The others have signatures of their own, and each is a function here that calls
the functional form: ``ember.dropout(input, p, train)`` with ``train`` required, ``ember.embedding(weight,
indices)`` with the weight first, ``ember.batch_norm`` with the weight before the running statistics, the
losses with ``reduction`` as torch's number (0 none, 1 mean, 2 sum).

>>> import ember
>>> ember.layer_norm(ember.tensor([[1., 3.]]), [2])
tensor([[-1.0000,  1.0000]])
>>> ember.embedding(ember.eye(3), ember.tensor([2, 0]))
tensor([[0., 0., 1.],
        [1., 0., 0.]])
"""
from __future__ import annotations

from ember._ops._support import ember_function
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.functional import (  # noqa: F401  (torch's top-level names for the same functions)
    adaptive_avg_pool1d, avg_pool1d, bilinear, celu_, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,
    conv_transpose3d, cosine_similarity, hardshrink, pairwise_distance, prelu, rrelu_, selu_, threshold_,
)

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(op: str, reduction) -> str:
    """torch's number for a reduction (0, 1, 2) as its name; a name is accepted as it is."""
    if isinstance(reduction, str) and reduction in _REDUCTIONS:
        return reduction
    if isinstance(reduction, int) and not isinstance(reduction, bool) and 0 <= reduction < 3:
        return _REDUCTIONS[reduction]
    raise ValueError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), but got {reduction!r}")


@ember_function
def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """``F.max_pool1d`` without indices (an empty ``stride`` is the kernel size).

    >>> ember.max_pool1d(ember.tensor([[1., 3., 2., 0.]]), 2)
    tensor([[3., 2.]])
    """
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


@ember_function
def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``F.max_pool1d`` with its indices: ``(values, indices)``."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


@ember_function
def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """``F.max_pool2d`` without indices (an empty ``stride`` is the kernel size)."""
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


@ember_function
def max_pool3d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """``F.max_pool3d`` without indices (an empty ``stride`` is the kernel size)."""
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


@ember_function
def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool) -> Tensor:
    """``F.batch_norm`` with the weight and bias first; ``cudnn_enabled`` is accepted and has no effect."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@ember_function
def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """``F.instance_norm`` with the weight and bias first; ``cudnn_enabled`` has no effect."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


@ember_function
def layer_norm(input: Tensor, normalized_shape: list[int], weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    """``F.layer_norm``; ``cudnn_enable`` has no effect."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


@ember_function
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    """``F.group_norm``; ``cudnn_enabled`` has no effect."""
    return F.group_norm(input, num_groups, weight, bias, eps)


@ember_function
def rms_norm(input: Tensor, normalized_shape: list[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``F.rms_norm``."""
    return F.rms_norm(input, normalized_shape, weight, eps)


@ember_function
def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.dropout`` with ``train`` required."""
    return F.dropout(input, p, train)


@ember_function
def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.alpha_dropout`` with ``train`` required."""
    return F.alpha_dropout(input, p, train)


@ember_function
def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.feature_alpha_dropout`` with ``train`` required."""
    return F.feature_alpha_dropout(input, p, train)


@ember_function
def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """``F.embedding`` with the weight first; a ``padding_idx`` of -1 means none (as torch's)."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


@ember_function
def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``F.celu``."""
    return F.celu(input, alpha)


@ember_function
def selu(input: Tensor) -> Tensor:
    """``F.selu``."""
    return F.selu(input)


@ember_function
def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """``F.threshold``: ``value`` where ``input <= threshold``."""
    return F.threshold(input, threshold, value)


@ember_function
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """``F.rrelu``."""
    return F.rrelu(input, lower, upper, training)


@ember_function
def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:
    """``F.kl_div`` with a numbered reduction; 1 (mean) averages over every element, as torch's.

    >>> ember.kl_div(ember.tensor([-1., -2.]), ember.tensor([0.5, 0.5]), 2)
    tensor(0.8069)
    """
    return F.kl_div(input, target, reduction=_reduction("kl_div", reduction), log_target=log_target)


@ember_function
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    """``F.binary_cross_entropy_with_logits`` with a numbered reduction."""
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(
        "binary_cross_entropy_with_logits", reduction), pos_weight=pos_weight)


@ember_function
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:
    """``F.hinge_embedding_loss`` with a numbered reduction."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction("hinge_embedding_loss", reduction))


@ember_function
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """``F.margin_ranking_loss`` with a numbered reduction."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction))


@ember_function
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """``F.cosine_embedding_loss`` with a numbered reduction."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction))


@ember_function
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    """``F.triplet_margin_loss`` with a numbered reduction."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction))


@ember_function
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """``F.poisson_nll_loss`` with every argument required and a numbered reduction."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction))
