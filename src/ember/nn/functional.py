"""Stateless neural-network functions, composed from ember ops (so they need no backward of their own).

The exception is ``mse_loss``, one op with its own backward (in ``_ops/loss.py``), as in torch.

Each one dispatches through ``__torch_function__`` like ``ember.add`` does.

>>> import ember
>>> from ember.nn import functional as F
>>> F.linear(ember.tensor([[1., 2.]]), ember.tensor([[1., 1.]]), ember.tensor([0.5]))
tensor([[3.5000]])
>>> F.mse_loss(ember.tensor([1., 2.]), ember.tensor([1., 4.]), reduction="sum")
tensor(4.)
"""
from __future__ import annotations

import math
import warnings

import ember
from ember._ops import arithmetic as _arithmetic, copy as _copy, linalg as _linalg, statistics as _statistics, views as _views
from ember._dtype import scalar_type_name
from ember._ops._support import user_stacklevel
from ember._ops.loss import MseLoss
from ember._tensor import Tensor
from ember.overrides import overridable

__all__ = ["linear", "log_softmax", "mse_loss", "relu", "sigmoid", "softmax", "tanh"]

nn_function = overridable("ember.nn.functional")

_REDUCTIONS = ("none", "mean", "sum")


@nn_function
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: ``input`` is ``[..., in]``, ``weight`` is ``[out, in]``, ``bias`` is ``[out]``.

    A 1-d ``weight`` (``[in]``) gives one output per row, with its dim dropped, as ``matmul`` does.
    """
    if isinstance(input, Tensor) and isinstance(weight, Tensor) and isinstance(bias, Tensor):  # a layer's usual call
        shape, weight_shape = input._data.shape, weight._data.shape
        if len(shape) == 2 and len(weight_shape) == 2 and shape[1] == weight_shape[1]:  # (addmm checks the bias)
            return _linalg.Addmm.apply(bias, input, _views.MatrixTranspose.apply(weight))
    _check_linear_arguments(input, weight, bias)
    # The ops' implementations, not their public functions: as torch's linear is one op to the
    # __torch_function__ protocol, a handler or mode sees linear and not the steps inside it.
    # The steps are torch's, so the graph (and grad_fn) is the one torch records.
    transposed = _views.MatrixTranspose.apply(weight) if len(weight._data.shape) == 2 else _views.t.__wrapped__(weight)
    if bias is None:
        return _matmul(input, transposed)
    shape = input._data.shape
    if len(shape) == 2:
        return _linalg.Addmm.apply(bias, input, transposed)  # addmm's op: its operands are known tensors here
    if bias._data.ndim == 1 and input._data.flags.c_contiguous:
        # one fused addmm of the input flattened to a matrix, then viewed back
        rows = _views.view.__wrapped__(input, math.prod(shape[:-1]), shape[-1])
        flat = _linalg.addmm.__wrapped__(bias, rows, transposed)
        return _views.view.__wrapped__(flat, *shape[:-1], flat._data.shape[-1])
    return _with_bias(_matmul(input, transposed), bias)


def _matmul(input: Tensor, transposed_weight: Tensor) -> Tensor:
    shape = input._data.shape
    if len(shape) >= 3 and transposed_weight._data.ndim == 2:
        # as torch's matmul: the batch dims folded into the rows of one mm, the result viewed back
        # (ReshapeCopy records torch's _unsafe_view: the product is a fresh tensor nobody else sees)
        rows = _views.reshape.__wrapped__(input, math.prod(shape[:-1]), shape[-1])
        product = _linalg.mm.__wrapped__(rows, transposed_weight)
        return _views.ReshapeCopy.apply(product, (*shape[:-1], product._data.shape[-1]))
    return _linalg.matmul.__wrapped__(input, transposed_weight)


def _with_bias(output: Tensor, bias: Tensor) -> Tensor:
    """``output + bias``, which torch adds in place: the bias may not grow the output, and takes its dtype."""
    if bias.dtype != output.dtype:
        bias = _cast_for_writing(bias, output.dtype)
    result = _arithmetic.add.__wrapped__(output, bias)
    if result._data.shape != output._data.shape:
        raise RuntimeError(
            f"linear: output with shape {list(output.shape)} doesn't match the broadcast shape {list(result.shape)}; "
            "the bias must broadcast to the output's shape"
        )
    return result


def _cast_for_writing(bias: Tensor, dtype) -> Tensor:
    """The bias in the output's dtype, as an in-place add casts it: to a narrower float, but not float to integer."""
    if bias.is_floating_point() and not dtype.is_floating_point:
        raise RuntimeError(
            f"linear: result type {_dtype_name(bias.dtype)} can't be cast to the desired output type "
            f"{_dtype_name(dtype)}; convert the bias first, e.g. bias.to({dtype})"
        )
    return _copy.to(bias, dtype)


def _dtype_name(dtype) -> str:
    """torch's C++ name of a dtype in messages: Float, Double, Half, Long, ..."""
    return scalar_type_name(dtype.np)


def _check_linear_arguments(input, weight, bias) -> None:
    """Tensors of at least one dim, whose features agree: else torch's error, in its words."""
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor) and (bias is None or isinstance(bias, Tensor))):
        _refuse_non_tensors(input, weight, bias)
    shape, weight_shape = input._data.shape, weight._data.shape
    if not (shape and weight_shape):
        raise RuntimeError(
            f"both arguments to linear need to be at least 1D, but they are {len(shape)}D and {len(weight_shape)}D"
        )
    _check_linear_shapes(shape, weight_shape)


def _refuse_non_tensors(input, weight, bias) -> None:
    for position, name, value in ((1, "input", input), (2, "weight", weight), (3, "bias", bias)):
        if not isinstance(value, Tensor) and not (value is None and name == "bias"):
            raise TypeError(f"linear(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def _check_linear_shapes(input: tuple, weight: tuple) -> None:
    """As torch words it, with the two sizes that disagree named (the matrix product's own error would not)."""
    if len(weight) == 2 and input[-1] != weight[1]:
        rows = math.prod(input[:-1])
        raise RuntimeError(
            f"linear: mat1 and mat2 shapes cannot be multiplied ({rows}x{input[-1]} and {weight[1]}x{weight[0]}): "
            f"the input's last dim is {input[-1]}, but the weight {list(weight)} takes {weight[1]} features"
        )


@nn_function
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(0, x)``, elementwise; ``inplace=True`` writes into ``input`` and returns it."""
    return input.relu_() if inplace else ember.relu(input)


@nn_function
def sigmoid(input: Tensor) -> Tensor:
    return ember.sigmoid(input)


@nn_function
def tanh(input: Tensor) -> Tensor:
    return ember.tanh(input)


@nn_function
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """The squared error ``(input - target) ** 2``, averaged (``'mean'``), summed (``'sum'``) or not (``'none'``).

    ``input`` and ``target`` broadcast (with a warning if their sizes differ, as that is
    usually a mistake). With ``weight`` (the size of ``input``), ``'mean'`` is the
    weighted mean ``sum(weight * error) / sum(weight)``.
    """
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=user_stacklevel(),
        )
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction; use one of {', '.join(_REDUCTIONS)}")
    if weight is None:
        return MseLoss.apply(input, target, reduction)
    _check_loss_weight("mse_loss", input, weight)
    weighted = (input - target) ** 2 * weight
    return weighted.sum() / weight.sum() if reduction == "mean" else _reduce(weighted, reduction)


def _check_loss_weight(name: str, input: Tensor, weight: Tensor) -> None:
    """An elementwise loss's weight has the input's shape (not the shape input and target broadcast to), as torch's."""
    if weight.shape != input.shape:
        raise ValueError(f"{name}: Weights and input must have the same size, but weight is {list(weight.shape)} "
                         f"and input is {list(input.shape)}")


def _reduce(values: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return values.mean()
    if reduction == "sum":
        return values.sum()
    return values


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """Translate the deprecated ``size_average``/``reduce`` flags (each defaults to True) to a reduction."""
    reduction = _legacy_choice(size_average, reduce)
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
        stacklevel=3,
    )
    return reduction


def _legacy_choice(size_average: bool | None, reduce: bool | None) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _softmax_dim(name: str, dim: int | None, ndim: int) -> int:
    """``dim``, or torch's legacy choice when it is None (with its warning): 0 for 0-, 1- and 3-d inputs, else 1."""
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as "
                  "an argument.", stacklevel=user_stacklevel())
    return 0 if ndim in (0, 1, 3) else 1


@nn_function
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``ember.softmax`` along ``dim``; ``_stacklevel`` is accepted for torch's sake (the warning finds the caller).

    >>> ember.nn.functional.softmax(ember.tensor([0., 0.]), dim=0)
    tensor([0.5000, 0.5000])
    """
    return _statistics.softmax.__wrapped__(input, _softmax_dim("softmax", dim, input.dim()), dtype)


@nn_function
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``ember.log_softmax`` along ``dim`` (see ``softmax`` for ``dim=None``).

    >>> ember.nn.functional.log_softmax(ember.tensor([0., 0.]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    return _statistics.log_softmax.__wrapped__(input, _softmax_dim("log_softmax", dim, input.dim()), dtype)

# ---- convolution, folding and pooling (ember/nn/_functional/conv.py)
from ember.nn._functional.conv import (  # noqa: E402
    bilinear, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, fold, pad, unfold,
)
from ember.nn._functional.pooling import (  # noqa: E402
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool2d, avg_pool1d, avg_pool2d,
    avg_pool3d, lp_pool2d, max_pool1d, max_pool2d, max_pool3d, max_unpool2d,
)

__all__ += [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d", "avg_pool1d",
    "avg_pool2d", "avg_pool3d", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "fold", "lp_pool2d", "max_pool1d", "max_pool2d", "max_pool3d", "max_unpool2d", "pad", "unfold",
]

# ---- activations, normalization, dropout and embeddings (ember/nn/_functional/layers.py)
from ember.nn._functional.activation import (  # noqa: E402
    celu, celu_, elu, elu_, gelu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, hardtanh_, leaky_relu,
    leaky_relu_, logsigmoid, mish, prelu, relu6, relu_, rrelu, rrelu_, selu, selu_, silu, softmin, softplus,
    softshrink, softsign, tanhshrink, threshold, threshold_,
)
from ember.nn._functional.dropout import (  # noqa: E402
    alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout,
)
from ember.nn._functional.normalization import (  # noqa: E402
    batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, rms_norm,
)
from ember.nn._functional.sparse import embedding, embedding_bag, one_hot  # noqa: E402
from ember.nn._functional import activation as _activation, dropout as _dropout, normalization as _normalization, \
    sparse as _sparse  # noqa: E402

__all__ += [*_activation.__all__, *_dropout.__all__, *_normalization.__all__, *_sparse.__all__]

# ---- losses (ember/nn/_functional/losses.py)
from ember.nn._functional.losses import (
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss, cosine_similarity,
    cross_entropy, ctc_loss, gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div, l1_loss,
    margin_ranking_loss, multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss,
    nll_loss, normalize, pairwise_distance, poisson_nll_loss, smooth_l1_loss, soft_margin_loss,
    triplet_margin_loss, triplet_margin_with_distance_loss,
)
__all__ += [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "cosine_similarity",
    "cross_entropy", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss",
    "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "nll_loss", "normalize", "pairwise_distance", "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss",
]

# ---- recurrent layers, attention and transformers (ember/nn/_functional/recurrent.py)
from ember.nn._functional.attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: E402

__all__ += ["multi_head_attention_forward", "scaled_dot_product_attention"]

# ---- init, utils, parameter containers (ember/nn/_functional/utils.py)


# ---- resizing: interpolate, upsample, pixel shuffles (ember/nn/_functional/upsampling.py)
from ember.nn._functional import upsampling as _upsampling  # noqa: E402
from ember.nn._functional.upsampling import (  # noqa: E402
    interpolate, pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear, upsample_nearest,
)

__all__ += _upsampling.__all__

# ---- spatial transformers: affine_grid, grid_sample (ember/nn/_functional/sampling.py)
from ember.nn._functional.sampling import affine_grid, grid_sample  # noqa: E402

__all__ += ["affine_grid", "grid_sample"]

# ---- pooling in every dimension, channel shuffling, gumbel-softmax, pdist
from ember.nn._functional.pooling import (  # noqa: E402
    adaptive_max_pool1d, adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices, lp_pool1d, lp_pool3d, max_pool1d_with_indices, max_pool2d_with_indices,
    max_pool3d_with_indices, max_unpool1d, max_unpool3d,
)
from ember.nn._functional.shuffle import channel_shuffle, native_channel_shuffle  # noqa: E402
from ember.nn._functional.gumbel import gumbel_softmax  # noqa: E402
from ember import pdist  # noqa: E402

__all__ += [
    "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "channel_shuffle", "gumbel_softmax", "lp_pool1d",
    "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices", "max_unpool1d",
    "max_unpool3d", "native_channel_shuffle", "pdist",
]

# ---- fractional max pooling (ember/nn/_functional/fractional_pooling.py)
from ember.nn._functional.fractional_pooling import (  # noqa: E402
    fractional_max_pool2d, fractional_max_pool2d_with_indices, fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)

__all__ += ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
            "fractional_max_pool3d_with_indices"]

# ---- time-batch-channel convolution, and the protocol's helpers as torch re-exports them here
from ember.nn._functional.conv_tbc import conv_tbc  # noqa: E402
from ember.overrides import (  # noqa: E402
    handle_torch_function, has_torch_function, has_torch_function_unary, has_torch_function_variadic,
)

__all__ += ["conv_tbc"]

# ---- the Tensor methods torch has for two of these functions
from ember.overrides import method as _method  # noqa: E402

Tensor.prelu = _method(prelu)
Tensor.hardshrink = _method(hardshrink)

# ---- a linear layer fused with the cross-entropy of its logits (ember/nn/_functional/linear_cross_entropy.py)
from ember.nn._functional.linear_cross_entropy import linear_cross_entropy  # noqa: E402

__all__ += ["linear_cross_entropy"]

# ---- grouped matrix products, and two helpers torch.nn.functional also exposes
from ember.nn._functional.grouped_mm import grouped_mm  # noqa: E402
from ember.nn._functional.dispatch_helpers import assert_int_or_pair, boolean_dispatch  # noqa: E402

__all__ += ["grouped_mm"]
