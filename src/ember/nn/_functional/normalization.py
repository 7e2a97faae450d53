"""Normalization functions of ``nn.functional``, composed from ember ops.

Each normalises over some dims (``batch_norm``: all but the channel dim; ``layer_norm``: the last
few; ``group_norm``: the channels of a group with their positions; ``instance_norm``: each sample's
positions per channel) with the biased variance, then applies an optional per-channel affine map.

>>> import ember
>>> from ember.nn import functional as F
>>> F.layer_norm(ember.tensor([[1., 3.]]), [2])
tensor([[-1.0000,  1.0000]])
"""
from __future__ import annotations

import math

import ember
from ember._ops._support import refuse_integers, require_tensor
from ember._ops.normalization import BatchNorm, GroupNorm, LayerNorm
from ember._ops.views import ReshapeCopy
from ember._tensor import Tensor
from ember._ops.tied_gradients import named_and_tied
from ember.autograd._node_names import named_node
from ember.nn._functional._channels_last import in_layout_of
from ember.autograd.grad_mode import no_grad
from ember.overrides import overridable

__all__ = ["batch_norm", "group_norm", "instance_norm", "layer_norm", "local_response_norm", "rms_norm"]

nn_function = overridable("ember.nn.functional")


def _normalise(input: Tensor, dims: tuple, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(input - mean) / sqrt(var + eps)`` over ``dims``, with the mean and the biased variance."""
    mean = input.mean(dims, keepdim=True)
    centred = input - mean
    var = (centred * centred).mean(dims, keepdim=True)
    rstd = ember.rsqrt(var + eps)
    if input.dtype == ember.float32 and bool(var.isinf().any()):
        # squares of deviations from 1.9e19 leave single's range, the deviations do not: their reciprocal is
        # taken in double (else every output would be 0), as the layer and batch norms' is
        wide = centred.double()
        rstd = ember.rsqrt((wide * wide).mean(dims, keepdim=True) + eps).float()
    return centred * rstd, mean, var


def _channel_shape(input: Tensor) -> tuple:
    """The shape that lines a per-channel vector up with dim 1 of ``input``."""
    return (input.shape[1],) + (1,) * (input.dim() - 2)


def _affine(output: Tensor, weight: Tensor | None, bias: Tensor | None, shape: tuple) -> Tensor:
    if weight is not None:
        output = output * weight.reshape(shape)
    if bias is not None:
        output = output + bias.reshape(shape)
    return output


def _check_channels(name: str, input: Tensor, vector: Tensor | None, what: str) -> None:
    channels = input.shape[1] if input.dim() >= 2 else 0
    if vector is not None and vector.numel() != channels:
        raise RuntimeError(
            f"{name}: {what} should contain {channels} elements (one per channel of the input "
            f"{list(input.shape)}), not {vector.numel()}"
        )


@nn_function
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-05) -> Tensor:
    """Normalise each channel (dim 1) over the batch and positions.

    In training the batch's statistics are used and the running ones (if given) move towards them by
    ``momentum``, the variance unbiased; in evaluation the running statistics are used.

    >>> x = ember.tensor([[1., 2.], [3., 6.]])
    >>> ember.nn.functional.batch_norm(x, None, None, training=True)
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]])
    """
    refuse_integers("batch_norm", input)
    if eps <= 0.0 if training else eps < 0.0:  # (a zero variance would divide by zero)
        raise ValueError(f"batch_norm eps must be {'positive during training' if training else 'non-negative'}, "
                         f"but got {eps}")
    if _in_single_precision(input, running_mean, running_var, weight, bias):
        return batch_norm(input.float(), running_mean, running_var, weight, bias, training, momentum,
                          eps).to(input.dtype)
    if input.dim() == 1 and input.numel() == 0 and weight is None and bias is None:
        return input.clone()  # torch's empty batch of no channels: nothing to normalise, no statistic to check
    if input.dim() < 2:
        raise ValueError(f"batch_norm: expected an input of at least 2 dims [N, C, *], got {list(input.shape)}")
    for what, vector in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                         ("bias", bias)):
        _check_channels("batch_norm", input, vector, what)
    shape = _channel_shape(input)
    dims = (0,) + tuple(range(2, input.dim()))
    if training:
        count = math.prod(input.shape) // max(input.shape[1], 1)
        if count == 0:  # an empty batch: an empty result, the running statistics untouched (as torch)
            return named_node(_affine(input.clone(), weight, bias, shape), "NativeBatchNormBackward0", input,
                              listed=(input, weight, bias))
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        stats = []
        output = BatchNorm.apply(input, weight, bias, dims, shape, eps, stats)
        _update_running(running_mean, running_var, *(ember.from_numpy(s) for s in stats), count, momentum)
        return output
    if running_mean is None or running_var is None:
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in evaluation mode; "
                           "pass training=True to use the batch's statistics")
    output = (input - running_mean.reshape(shape)) * ember.rsqrt(running_var.reshape(shape) + eps)
    return named_and_tied(_affine(output, weight, bias, shape), "NativeBatchNormBackward0", input, weight, bias,
                          undefined=True)


def _update_running(running_mean, running_var, mean: Tensor, var: Tensor, count: int, momentum: float) -> None:
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.reshape(-1).to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var.reshape(-1).to(running_var.dtype) * (count / (count - 1))
            running_var.mul_(1 - momentum).add_(unbiased * momentum)


@nn_function
def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Normalise each sample's channels over their positions; running statistics are the batch means
    of the per-sample ones."""
    refuse_integers("batch_norm", input)
    if _in_single_precision(input, running_mean, running_var, weight, bias):
        return instance_norm(input.float(), running_mean, running_var, weight, bias, use_input_stats, momentum,
                             eps).to(input.dtype)
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dims [N, C, *], got {list(input.shape)}")
    shape = _channel_shape(input)
    if not use_input_stats:
        return _viewed_as_torch(batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps))
    count = math.prod(input.shape[2:])
    if count <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    if _by_group_rows(input):
        _check_affine("instance_norm", input, weight, bias)
        stats = []
        output = GroupNorm.apply(input, weight, bias, input.shape[1], eps, stats)
        mean, var = (ember.from_numpy(s) for s in stats)
    else:
        output, mean, var = _normalise(input, tuple(range(2, input.dim())), eps)
        output = _affine(output, weight, bias, shape)
    if input.shape[0]:  # (an empty batch has no statistics to average in)
        _update_running(running_mean, running_var, mean.mean(0), var.mean(0), count, momentum)
    return _viewed_as_torch(named_and_tied(output, "NativeBatchNormBackward0", input, weight, bias, undefined=True))


def _viewed_as_torch(output: Tensor) -> Tensor:
    """instance_norm's result as torch's: a view (``ViewBackward0``) of its batch norm over the instances."""
    return output.view(output.shape)


def _check_affine(name: str, input: Tensor, weight: Tensor | None, bias: Tensor | None) -> None:
    _check_channels(name, input, weight, "weight")
    _check_channels(name, input, bias, "bias")


def _by_group_rows(input: Tensor) -> bool:
    """Whether ``GroupNorm`` takes the input: a non-empty one in single or double precision (the others, and
    empty ones, are composed from ember ops)."""
    return input.dtype in (ember.float32, ember.float64) and input.numel() > 0


@nn_function
def layer_norm(input: Tensor, normalized_shape: list[int], weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-05) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims, which must equal ``normalized_shape``."""
    require_tensor(input, "layer_norm", 1, "input")
    refuse_integers("LayerNormKernelImpl", input, complex_too=True)
    mixed = _in_single_precision(input, weight, bias)
    normalized_shape = _as_shape(normalized_shape)
    _check_trailing("layer_norm", input, normalized_shape)
    _check_parameter_shape("layer_norm", weight, "weight", normalized_shape)
    _check_parameter_shape("layer_norm", bias, "bias", normalized_shape)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    if mixed or input.dtype is ember.bfloat16:  # as torch: normalised in single precision, rounded once
        wide = [None if t is None else t.float() for t in (input, weight, bias)]
        return LayerNorm.apply(*wide, dims, normalized_shape, eps, None).to(input.dtype)
    return LayerNorm.apply(input, weight, bias, dims, normalized_shape, eps, None)


def _in_single_precision(input: Tensor, *tensors: Tensor | None) -> bool:
    """Whether a 16-bit input meets parameters or statistics in single precision (a float32 model under a half
    or bfloat16 input): torch's kernels then compute in single precision and round once. They take no other
    mix of dtypes."""
    mixed = False
    for t in tensors:
        if t is None or t.dtype == input.dtype:
            continue
        if t.dtype != ember.float32 or input.dtype not in (ember.float16, ember.bfloat16):
            raise RuntimeError(f"mixed dtype (CPU): all inputs must share same datatype. The input is {input.dtype} "
                               f"but a parameter or statistic is {t.dtype}; convert the input, e.g. "
                               f"input.to({t.dtype}), or the module, e.g. module.to({input.dtype})")
        mixed = True
    return mixed


def _as_shape(shape) -> tuple:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _check_trailing(name: str, input: Tensor, normalized_shape: tuple) -> None:
    if not normalized_shape or tuple(input.shape[input.dim() - len(normalized_shape):]) != normalized_shape \
            or input.dim() < len(normalized_shape):
        if not normalized_shape:
            raise RuntimeError(f"{name}: Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                               f"least one element, but got normalized_shape = []; pass the trailing dims to normalize "
                               f"over, e.g. {list(input.shape[-1:])}")
        raise RuntimeError(
            f"{name}: Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}"
        )


def _check_parameter_shape(name: str, parameter: Tensor | None, what: str, normalized_shape: tuple) -> None:
    """torch wants the weight and bias of exactly ``normalized_shape`` (not one that broadcasts to it)."""
    if parameter is not None and tuple(parameter.shape) != normalized_shape:
        raise RuntimeError(f"{name}: Expected {what} to be of same shape as normalized_shape, but got {what} of shape "
                           f"{list(parameter.shape)} and normalized_shape = {list(normalized_shape)}; give a {what} "
                           f"of shape {list(normalized_shape)}")


@nn_function
def rms_norm(input: Tensor, normalized_shape: list[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x**2) + eps)`` over the last dims; ``eps`` defaults to the dtype's machine epsilon.

    >>> ember.nn.functional.rms_norm(ember.tensor([[3., 4.]]), [2], eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    require_tensor(input, "rms_norm", 1, "input")
    refuse_integers("rms_norm", input)
    normalized_shape = _as_shape(normalized_shape)
    _check_trailing("rms_norm", input, normalized_shape)
    _check_parameter_shape("rms_norm", weight, "weight", normalized_shape)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    if input.dtype in (ember.float16, ember.bfloat16):  # as torch: in single precision (its eps too), rounded once
        eps = ember.finfo(ember.float32).eps if eps is None else eps
        wide = input.float()
        output = wide * ember.rsqrt((wide * wide).mean(dims, keepdim=True) + eps)
        return (output * weight.float() if weight is not None else output).to(input.dtype)
    eps = ember.finfo(input.dtype).eps if eps is None else eps
    output = input * ember.rsqrt((input * input).mean(dims, keepdim=True) + eps)
    return (output * weight).to(input.dtype) if weight is not None else output  # (torch's is in the input's dtype)


@nn_function
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-05) -> Tensor:
    """Split the channels into ``num_groups`` groups and normalise each sample's group as one."""
    refuse_integers("GroupNormKernelImpl", input, complex_too=True)
    if _in_single_precision(input, weight, bias):
        return group_norm(input.float(), num_groups, weight, bias, eps).to(input.dtype)
    if input.dim() < 2:
        raise RuntimeError(f"group_norm: Expected at least 2 dimensions for input tensor but received {input.dim()} "
                           f"(input of size {list(input.shape)}, where [N, C, *] is needed)")
    channels = input.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(input.shape)} and num_groups={num_groups}"
        )
    if _by_group_rows(input):
        _check_affine("group_norm", input, weight, bias)
        output = GroupNorm.apply(input, weight, bias, num_groups, eps, None)
    else:
        grouped = input.reshape(input.shape[0], num_groups, input[0].numel() // num_groups if input.shape[0] else 1)
        output, _, _ = _normalise(grouped, (2,), eps)
        # a fresh tensor, not a view of the grouped one (as torch's result is no view)
        output = _affine(ReshapeCopy.apply(output, tuple(input.shape)), weight, bias, _channel_shape(input))
    return in_layout_of(output, input)  # as torch: channels last for such an input


@nn_function
def local_response_norm(input: Tensor, size: int, alpha: float = 0.0001, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Divide each channel by ``(k + alpha * mean of squares over its neighbouring channels) ** beta``.

    The window of ``size`` channels is centred (``size // 2`` before), zero-padded at the ends.
    """
    if input.dim() < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions); local_response_norm "
            "normalises across dim 1 of an [N, C, *] input"
        )
    if input.numel() == 0:
        return input.clone()
    if input.dtype != ember.int64:  # torch's average pooling takes int64, no other integers
        refuse_integers("avg_pool2d" if input.dim() == 3 else "avg_pool3d_out_frame", input)
    squares = input * input
    before = ember.zeros((input.shape[0], size // 2) + tuple(input.shape[2:]), dtype=input.dtype)
    after = ember.zeros((input.shape[0], (size - 1) // 2) + tuple(input.shape[2:]), dtype=input.dtype)
    windows = ember.cat([before, squares, after], 1).unfold(1, size, 1)
    if input.dtype == ember.int64:  # torch's integer average, truncated (the squares' sums are never negative)
        window = windows.sum(-1) // size
    else:
        window = windows.mean(-1)
    return input / (window * alpha + k) ** beta
