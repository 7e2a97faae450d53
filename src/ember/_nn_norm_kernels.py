"""torch's top-level normalization kernels: the ``native_*`` forms, which also return the statistics a backward
saves, and the per-channel steps of a synchronised batch norm (``batch_norm_stats`` ... ``batch_norm_backward_elemt``).

The outputs are ``nn.functional``'s; the statistics are computed beside them in ember ops, so every result
here is differentiable (torch leaves most of these statistics without a gradient, and runs the
synchronised steps on CUDA only).

>>> import ember
>>> out, mean, rstd = ember.native_layer_norm(ember.tensor([[1., 3.]]), [2], None, None, 0.0)
>>> out, mean, rstd
(tensor([[-1.,  1.]]), tensor([[2.]]), tensor([[1.]]))
"""
from __future__ import annotations

from typing import Sequence

import ember
from ember._ops._support import ember_function
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn import functional as F
from ember.nn._functional.normalization import _update_running

__all__ = [
    "batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt", "batch_norm_gather_stats",
    "batch_norm_gather_stats_with_counts", "batch_norm_stats", "batch_norm_update_stats", "native_batch_norm",
    "native_dropout", "native_group_norm", "native_layer_norm", "native_norm", "norm_except_dim",
]


def _channel_dims(input: Tensor) -> tuple:
    """Every dim but the channels (dim 1): what a batch norm reduces over."""
    return (0,) + tuple(range(2, input.dim()))


def _moments(input: Tensor, dims: tuple, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The mean and the biased variance over ``dims``."""
    mean = input.mean(dims, keepdim=True)
    var = ((input - mean) ** 2).mean(dims, keepdim=keepdim)
    return (mean if keepdim else mean.reshape(var.shape)), var


def _per_channel(vector: Tensor, input: Tensor) -> Tensor:
    """A ``[C]`` vector shaped to line up with dim 1 of ``input``."""
    return vector.reshape((-1,) + (1,) * (input.dim() - 2))


@ember_function
def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None, bias: Tensor | None,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``F.layer_norm``, with the mean and ``1 / std`` of each normalised slice (their dims kept as 1)."""
    output = F.layer_norm(input, list(normalized_shape), weight, bias, eps)
    with no_grad():  # as torch's, the saved statistics carry no gradient
        mean, var = _moments(input, tuple(range(input.dim() - len(normalized_shape), input.dim())), True)
    return output, mean, ember.rsqrt(var + eps)


@ember_function
def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int, HxW: int,
                      group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``F.group_norm`` of an input of ``N * C * HxW`` elements, with the mean and ``1 / std`` of each sample's
    group (``[N, group]``).

    >>> out, mean, rstd = ember.native_group_norm(ember.tensor([[[1., 3.], [5., 7.]]]), None, None, 1, 2, 2, 1, 0.0)
    >>> mean, rstd
    (tensor([[4.]]), tensor([[0.4472]]))
    """
    if input.numel() != N * C * HxW or (input.dim() >= 2 and input.shape[1] != C):
        raise RuntimeError(f"native_group_norm: expected an input of N * C * HxW = {N} * {C} * {HxW} elements with "
                           f"{C} channels, got {list(input.shape)}")
    output = F.group_norm(input, group, weight, bias, eps)
    mean, var = _moments(input.reshape(N, group, -1), (2,))
    return output, mean, ember.rsqrt(var + eps)


@ember_function
def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                      running_var: Tensor | None, training: bool, momentum: float,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``F.batch_norm``, with the batch's mean and ``1 / std`` per channel in training (empty in evaluation,
    where the running statistics are used); the running statistics move in training, as ``F.batch_norm``'s.
    """
    output = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = ember.empty(0, dtype=input.dtype)
        return output, empty, empty.clone()
    with no_grad():
        mean, var = _moments(input, _channel_dims(input))
    return output, mean, ember.rsqrt(var + eps)


@ember_function
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """Dropout that returns its mask: ``(input * mask / (1 - p), mask)``, the mask boolean; ``train=None``
    means training. Out of training the mask is all True and the output a copy.

    >>> out, mask = ember.native_dropout(ember.ones(3), 0.5, False)
    >>> out, mask
    (tensor([1., 1., 1.]), tensor([True, True, True]))
    """
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"native_dropout: dropout probability has to be between 0 and 1, but got {p}")
    if train is False or p == 0.0:
        return input.clone(), ember.ones(input.shape, dtype=ember.bool)
    mask = ember.empty(input.shape, dtype=input.dtype).bernoulli_(1 - p).bool()
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    return input * mask * scale, mask


@ember_function
def native_norm(input: Tensor, p: float | None = 2, dim: Sequence[int] | None = None, keepdim: bool = False,
                dtype=None) -> Tensor:
    """The ``p``-norm of ``input`` (over ``dim``, if given); ``p=None`` is 2. torch keeps this kernel for
    sparse tensors only; ember, which has none, computes it on dense ones.

    >>> ember.native_norm(ember.tensor([3., 4.]))
    tensor(5.)
    """
    return ember.linalg.vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)


@ember_function
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm over every dim but ``dim``, kept as size-1 dims (weight norm's); ``dim=-1`` is the norm
    of the whole tensor.

    >>> ember.norm_except_dim(ember.tensor([[3., 0.], [4., 1.]]), 2, 1)
    tensor([[5., 1.]])
    """
    if dim == -1:
        return ember.linalg.vector_norm(v, pow)
    if not -v.dim() <= dim < v.dim():
        raise IndexError(f"norm_except_dim: Dimension out of range (expected to be in range of [{-v.dim()}, "
                         f"{v.dim() - 1}], but got {dim})")
    dim %= v.dim()
    others = tuple(d for d in range(v.dim()) if d != dim)
    return ember.linalg.vector_norm(v, pow, others, keepdim=True) if others else v.abs()


# ------------------------------------------------------------------------- synchronised batch-norm steps


@ember_function
def batch_norm_stats(input: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """This process's share of a synchronised batch norm: each channel's mean and ``1 / sqrt(var + eps)``
    (the variance biased).

    >>> ember.batch_norm_stats(ember.tensor([[1.], [3.]]), 0.0)
    (tensor([2.]), tensor([1.]))
    """
    mean, var = _moments(input, _channel_dims(input))
    return mean, ember.rsqrt(var + eps)


@ember_function
def batch_norm_elemt(input: Tensor, weight: Tensor | None, bias: Tensor | None, mean: Tensor, invstd: Tensor,
                     eps: float) -> Tensor:
    """``(input - mean) * invstd * weight + bias`` per channel (``eps`` is already in ``invstd``)."""
    output = (input - _per_channel(mean, input)) * _per_channel(invstd, input)
    if weight is not None:
        output = output * _per_channel(weight, input)
    return output if bias is None else output + _per_channel(bias, input)


@ember_function
def batch_norm_gather_stats_with_counts(input: Tensor, mean: Tensor, invstd: Tensor, running_mean: Tensor | None,
                                        running_var: Tensor | None, momentum: float, eps: float,
                                        counts: Tensor) -> tuple[Tensor, Tensor]:
    """The global mean and ``1 / std`` per channel from every process's (rows of ``mean``, ``invstd``, each
    over ``counts[i]`` values); moves the running statistics (the variance unbiased)."""
    if mean.dim() != 2 or invstd.shape != mean.shape or counts.numel() != mean.shape[0]:
        raise RuntimeError(f"batch_norm_gather_stats: expected mean and invstd [processes, C] and one count per "
                           f"process, got {list(mean.shape)}, {list(invstd.shape)} and {list(counts.shape)}")
    weights = counts.reshape(-1, 1).to(mean.dtype)
    total = weights.sum()
    global_mean = (mean * weights).sum(0) / total
    second_moment = ((invstd ** -2 - eps + mean * mean) * weights).sum(0) / total
    var = second_moment - global_mean * global_mean
    _update_running(running_mean, running_var, global_mean.detach(), var.detach(), int(total.item()), momentum)
    return global_mean, ember.rsqrt(var + eps)


@ember_function
def batch_norm_gather_stats(input: Tensor, mean: Tensor, invstd: Tensor, running_mean: Tensor | None,
                            running_var: Tensor | None, momentum: float, eps: float,
                            count: int) -> tuple[Tensor, Tensor]:
    """``batch_norm_gather_stats_with_counts`` where every process saw ``count`` values."""
    counts = ember.full((mean.shape[0],), float(count), dtype=mean.dtype)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


@ember_function
def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                            momentum: float) -> tuple[Tensor, Tensor]:
    """Each channel's mean and biased variance; moves the running statistics towards them (the variance
    unbiased), as a training batch norm does.

    >>> ember.batch_norm_update_stats(ember.tensor([[1.], [3.]]), None, None, 0.1)
    (tensor([2.]), tensor([1.]))
    """
    mean, var = _moments(input, _channel_dims(input))
    _update_running(running_mean, running_var, mean.detach(), var.detach(), input.numel() // input.shape[1],
                    momentum)
    return mean, var


@ember_function
def batch_norm_backward_reduce(grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor, weight: Tensor | None,
                               input_g: bool, weight_g: bool, bias_g: bool) -> tuple:
    """Per channel: ``sum(grad_out)`` and ``sum(grad_out * (input - mean))`` (if ``input_g``), the weight's
    gradient (if ``weight_g``) and the bias's (if ``bias_g``); None for those not asked for."""
    dims = _channel_dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _per_channel(mean, input))).sum(dims)
    return (sum_dy if input_g else None, sum_dy_xmu if input_g else None,
            sum_dy_xmu * invstd if weight_g else None, sum_dy if bias_g else None)


@ember_function
def batch_norm_backward_elemt(grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor, weight: Tensor | None,
                              sum_dy: Tensor, sum_dy_xmu: Tensor, count: Tensor) -> Tensor:
    """The input's gradient of a synchronised batch norm from the global sums of ``batch_norm_backward_reduce``
    over ``count.sum()`` values."""
    total = count.sum().to(grad_out.dtype)
    invstd_c = _per_channel(invstd, input)
    centred_term = (input - _per_channel(mean, input)) * invstd_c * invstd_c * _per_channel(sum_dy_xmu / total, input)
    scale = invstd_c if weight is None else invstd_c * _per_channel(weight, input)
    return (grad_out - _per_channel(sum_dy / total, input) - centred_term) * scale
