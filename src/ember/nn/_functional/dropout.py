"""Dropout functions of ``nn.functional``: zero elements (or whole channels) at random in training.

Kept values are scaled by ``1 / (1 - p)`` so the expectation is unchanged; in evaluation each is the
identity. The masks come from ember's generator (``ember.manual_seed``), so they differ from torch's.

>>> import ember
>>> x = ember.ones(4)
>>> ember.nn.functional.dropout(x, 0.5, training=False) is x
True
"""
from __future__ import annotations

import warnings

import ember
from ember._ops._support import user_stacklevel
from ember._tensor import Tensor
from ember.overrides import overridable

__all__ = ["alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"]

nn_function = overridable("ember.nn.functional")

# selu's alpha times its scale: the value a dropped unit takes before alpha dropout's affine correction
_SELU_SATURATION = 1.7580993408473766


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input: Tensor, p: float, shape: tuple) -> Tensor:
    """1 with probability ``1 - p``, else 0, of ``shape`` (broadcast over ``input``), in its dtype."""
    return ember.empty(shape, dtype=input.dtype).bernoulli_(1 - p)


def _apply(input: Tensor, output: Tensor, inplace: bool) -> Tensor:
    return input.copy_(output) if inplace else output


def _unchanged(input: Tensor, p: float, training: bool) -> bool:
    """Whether dropout leaves ``input`` as it is (it returns the very tensor then, as torch does)."""
    _check_p(p)
    return not training or p == 0.0 or input.numel() == 0


def _require_channels(name: str, input: Tensor, p: float, training: bool, dims: int) -> None:
    """torch's feature dropout draws per channel (dim 1 of its ``dims``-d view of ``input``), so it refuses
    fewer dims, but only when it draws at all (in training, 0 < p < 1, a non-empty input)."""
    if dims < 2 and not _unchanged(input, p, training) and p != 1.0:
        raise RuntimeError(f"{name}: Feature dropout requires at least 2 dimensions in the input, got "
                           f"{list(input.shape)}; use dropout for an input without channels")


def _drop(input: Tensor, p: float, training: bool, inplace: bool, shape: tuple) -> Tensor:
    if _unchanged(input, p, training):
        return input
    if p == 1.0:
        return _apply(input, input * 0.0, inplace)
    mask = _keep_mask(input, p, shape).div_(1.0 - p)  # (divided, not multiplied by 1 / (1 - p): torch's bits)
    return _apply(input, input * mask, inplace)


def _alpha_drop(input: Tensor, p: float, training: bool, inplace: bool, shape: tuple) -> Tensor:
    """Dropped units take selu's saturation value, then an affine map restores mean 0 and variance 1."""
    if _unchanged(input, p, training):
        return input
    if p == 1.0:
        return _apply(input, input * 0.0, inplace)
    keep = _keep_mask(input, p, shape)
    a = ((_SELU_SATURATION ** 2 * p + 1) * (1 - p)) ** -0.5
    shift = (keep - 1) * (_SELU_SATURATION * a) + _SELU_SATURATION * a * p
    return _apply(input, input * (keep * a) + shift, inplace)


@nn_function
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``."""
    return _drop(input, p, training, inplace, tuple(input.shape))


def _feature_shape(name: str, input: Tensor, batched_dims: int) -> tuple:
    """One mask value per channel: ``[N, C, 1, ...]``, or ``[C, 1, ...]`` for an unbatched input."""
    if input.dim() not in (batched_dims - 1, batched_dims):
        raise RuntimeError(
            f"{name}: Expected {batched_dims - 1}D or {batched_dims}D input, but received a {input.dim()}D input "
            f"of size {list(input.shape)}"
        )
    leading = 2 if input.dim() == batched_dims else 1
    return tuple(input.shape[:leading]) + (1,) * (input.dim() - leading)


@nn_function
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of an ``[N, C, L]`` (or ``[C, L]``) input with probability ``p``."""
    return _drop(input, p, training, inplace, _feature_shape("dropout1d", input, 3))


def _lenient_feature_shape(name: str, input: Tensor, batched_dims: int) -> tuple:
    """As torch: another rank is deprecated but still works, with dim 0 as the batch and dim 1 as the channels."""
    if input.dim() in (batched_dims - 1, batched_dims) and not (batched_dims == 4 and input.dim() == 3):
        return _feature_shape(name, input, batched_dims)
    if input.dim() == 3:
        warnings.warn(f"{name}: Received a 3D input to {name} and assuming that channel-wise 1D dropout behavior is "
                      "desired - input is interpreted as shape (N, C, L), where C is the channel dim; use dropout1d "
                      "for that", stacklevel=user_stacklevel())
    else:
        warnings.warn(f"{name}: Received a {input.dim()}-D input to {name}, which is deprecated and will result in "
                      f"an error in a future release; use dropout instead, or give {name} "
                      f"{batched_dims - 1}D or {batched_dims}D inputs", stacklevel=user_stacklevel())
    return tuple(input.shape[:2]) + (1,) * max(input.dim() - 2, 0)


@nn_function
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of an ``[N, C, H, W]`` input (a 3-d input is read as ``[N, C, L]``, as torch does)."""
    _require_channels("dropout2d", input, p, training, input.dim())
    return _drop(input, p, training, inplace, _lenient_feature_shape("dropout2d", input, 4))


@nn_function
def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of an ``[N, C, D, H, W]`` (or ``[C, D, H, W]``) input with probability ``p``."""
    _require_channels("dropout3d", input, p, training, input.dim() + (input.dim() != 5))  # (torch's batch of one)
    return _drop(input, p, training, inplace, _lenient_feature_shape("dropout3d", input, 5))


@nn_function
def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps a selu network's mean and variance: dropped units saturate instead of zeroing."""
    return _alpha_drop(input, p, training, inplace, tuple(input.shape))


@nn_function
def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels (dim 1)."""
    _require_channels("feature_alpha_dropout", input, p, training, input.dim())
    shape = tuple(input.shape[:2]) + (1,) * max(input.dim() - 2, 0)
    return _alpha_drop(input, p, training, inplace, shape)
