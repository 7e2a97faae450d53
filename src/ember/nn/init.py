"""Weight initialisation: each function fills a tensor in place (without recording a gradient) and returns it.

>>> import ember
>>> w = ember.empty(3, 5)
>>> ember.nn.init.constant_(w, 0.5)[0]
tensor([0.5000, 0.5000, 0.5000, 0.5000, 0.5000])
>>> bound = ember.nn.init.calculate_gain("relu") * (3 / 5) ** 0.5  # kaiming_uniform_'s bound for fan_in=5
>>> bool((ember.nn.init.kaiming_uniform_(w, nonlinearity="relu").abs() <= bound).all())
True
"""
from __future__ import annotations

import math
import warnings
from typing import Callable

import numpy as np

import ember
from ember._random import Generator
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.overrides import dispatches_by_hand, handle_torch_function, has_torch_function_unary

__all__ = [
    "calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_",
    "orthogonal_", "sparse_", "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
]

_LINEAR_LIKE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps activations' variance steady through ``nonlinearity``.

    >>> ember.nn.init.calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in _LINEAR_LIKE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        return math.sqrt(2.0 / (1 + _negative_slope(param) ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _negative_slope(param) -> float:
    if param is None:
        return 0.01
    if isinstance(param, bool) or not isinstance(param, (int, float)):
        raise ValueError(f"negative_slope {param} not a valid number")
    return param


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight shaped ``[out, in, *kernel]``.

    It asks the tensor what torch's asks (a mode sees the same calls): dim, size(1), size(0), then the kernel's
    shape only where there is a kernel.
    """
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(got shape {list(tensor.shape)})"
        )
    inputs, outputs = tensor.size(1), tensor.size(0)
    receptive_field = math.prod(tensor.shape[2:]) if tensor.dim() > 2 else 1
    return inputs * receptive_field, outputs * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


# uniform_, normal_, constant_ and kaiming_uniform_ dispatch to a tensor subclass's handler (with every argument
# by name), as torch's do; the other initialisers, and these when called from inside this module, do not.


@dispatches_by_hand("ember.nn.init")
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with values drawn uniformly from ``[a, b)``."""
    if has_torch_function_unary(tensor):
        return handle_torch_function(uniform_, (tensor,), tensor=tensor, a=a, b=b, generator=generator)
    return _fill_uniform(tensor, a, b, generator)


def _fill_uniform(tensor: Tensor, a: float, b: float, generator: Generator | None) -> Tensor:
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


@dispatches_by_hand("ember.nn.init")
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with values drawn from ``N(mean, std**2)``."""
    if has_torch_function_unary(tensor):
        return handle_torch_function(normal_, (tensor,), tensor=tensor, mean=mean, std=std, generator=generator)
    return _fill_normal(tensor, mean, std, generator)


def _fill_normal(tensor: Tensor, mean: float, std: float, generator: Generator | None) -> Tensor:
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Generator | None = None) -> Tensor:
    """Fill with ``N(mean, std**2)`` truncated to ``[a, b]``, by rejection as torch samples it: normals redrawn
    where they fall outside when ``[a, b]`` holds more than 0.3 of the mass; else uniforms on ``[a, b]``, each
    kept with the probability of its normal density against the density's peak there.

    >>> w = ember.nn.init.trunc_normal_(ember.empty(1000), a=-0.5, b=0.5)
    >>> bool((w.abs() <= 0.5).all())
    True
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    with no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            return _normals_inside(tensor, mean, std, a, b, generator)
        return _uniforms_kept_by_density(tensor, mean, std, a, b, generator)


def _normals_inside(tensor: Tensor, mean: float, std: float, a: float, b: float, generator) -> Tensor:
    low, high = tensor.new_tensor(a).item(), tensor.new_tensor(b).item()  # the bounds as the dtype holds them
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        outside = (result < low) | (result > high)
        if not outside.any():
            break
        result = ember.where(outside, ember.empty_like(result).normal_(mean, std, generator=generator), result)
    return tensor if result is tensor else tensor.copy_(result)


def _uniforms_kept_by_density(tensor: Tensor, mean: float, std: float, a: float, b: float, generator) -> Tensor:
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_density_below_peak(x: Tensor) -> Tensor:
        return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

    def rejected(log_density: Tensor) -> Tensor:
        return ember.empty_like(tensor).uniform_(generator=generator).log_().gt(log_density)

    tensor.uniform_(a, b, generator=generator)
    pending = rejected(log_density_below_peak(tensor.clone()))
    result = tensor
    while pending.any():
        candidates = ember.empty_like(tensor).uniform_(a, b, generator=generator)
        result = ember.where(pending, candidates, result)
        pending = ember.where(pending, rejected(log_density_below_peak(candidates)), pending)
    return tensor if result is tensor else tensor.copy_(result)


@dispatches_by_hand("ember.nn.init")
def constant_(tensor: Tensor, val: float) -> Tensor:
    if has_torch_function_unary(tensor):
        return handle_torch_function(constant_, (tensor,), tensor=tensor, val=val)
    return _fill(tensor, val)


def _fill(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the diagonal, also when it is not square)."""
    if tensor.dim() != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported (got {tensor.dim()})")
    with no_grad():
        return tensor.copy_(ember.eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight so the convolution passes its input channels through unchanged.

    >>> ember.nn.init.dirac_(ember.empty(2, 2, 3))[:, :, 1]
    tensor([[1., 0.],
            [0., 1.]])
    """
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_channels = tensor.shape[0]
    if out_channels % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = out_channels // groups
    channels = min(per_group, tensor.shape[1])
    values = np.zeros(tuple(tensor.shape), dtype=tensor._data.dtype)
    group, channel = np.meshgrid(np.arange(groups), np.arange(channels), indexing="ij")
    centre = tuple(size // 2 for size in tensor.shape[2:])
    values[(group * per_group + channel).ravel(), channel.ravel(), *centre] = 1
    with no_grad():
        return tensor.copy_(ember.from_numpy(values))


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Generator | None = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (trailing dimensions flattened), scaled by ``gain``.

    >>> w = ember.nn.init.orthogonal_(ember.empty(3, 5))
    >>> bool(ember.allclose(w @ w.T, ember.eye(3), atol=1e-5))
    True
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor  # nothing to fill
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = ember.randn(rows, cols, dtype=tensor.dtype, generator=generator)
    if rows < cols:
        flat = flat.T
    q, r = ember.linalg.qr(flat)
    q = q * ember.sign(ember.diagonal(r))  # signs from R make the draw uniform over orthogonal matrices
    if rows < cols:
        q = q.T
    with no_grad():
        return tensor.copy_(q.reshape(tensor.shape)).mul_(gain)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None) -> Tensor:
    """Fill a 2-D tensor from ``N(0, std**2)`` with a fraction ``sparsity`` of each column set to zero.

    >>> w = ember.nn.init.sparse_(ember.empty(10, 3), sparsity=0.3)
    >>> (w == 0).sum(0).tolist()
    [3, 3, 3]
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros_per_column = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for column in range(cols):  # the first rows of a permutation per column, from the default generator, as torch's
            tensor[ember.randperm(rows)[:zeros_per_column], column] = 0
        return tensor


def _xavier_std(tensor: Tensor, gain: float) -> float:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Glorot initialisation: uniform in ``±gain * sqrt(6 / (fan_in + fan_out))``."""
    bound = math.sqrt(3.0) * _xavier_std(tensor, gain)  # a uniform on [-b, b] has standard deviation b / sqrt(3)
    return _fill_uniform(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Glorot initialisation: ``N(0, gain**2 * 2 / (fan_in + fan_out))``."""
    return _fill_normal(tensor, 0.0, _xavier_std(tensor, gain), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def _is_empty(tensor: Tensor) -> bool:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


@dispatches_by_hand("ember.nn.init")
def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """He initialisation: uniform in ``±gain * sqrt(3 / fan)``; ``a`` is leaky_relu's negative slope."""
    if has_torch_function_unary(tensor):
        return handle_torch_function(kaiming_uniform_, (tensor,), tensor=tensor, a=a, mode=mode,
                                     nonlinearity=nonlinearity, generator=generator)
    if _is_empty(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return _fill_uniform(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """He initialisation: ``N(0, gain**2 / fan)``."""
    if _is_empty(tensor):
        return tensor
    return _fill_normal(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def _deprecated(new: Callable) -> Callable:
    """The old name of an in-place initialiser (without the trailing ``_``): it warns, then runs ``new``."""
    old_name = new.__name__[:-1]

    def old(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new.__name__}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)

    old.__name__ = old.__qualname__ = old_name
    old.__doc__ = f"Deprecated: use ``{new.__name__}``, which this calls."
    return old


# torch keeps these old names, warning that they are deprecated, and exports them (``from nn.init import *``)
__all__ += ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
            "kaiming_normal", "orthogonal", "sparse"]
uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
