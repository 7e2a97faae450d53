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

import ember
from ember._random import Generator
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_", "uniform_",
    "xavier_normal_", "xavier_uniform_", "zeros_",
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
    """``(fan_in, fan_out)`` of a weight shaped ``[out, in, *kernel]``."""
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(got shape {list(tensor.shape)})"
        )
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with values drawn uniformly from ``[a, b)``."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with values drawn from ``N(mean, std**2)``."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the diagonal, also when it is not square)."""
    if tensor.dim() != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported (got {tensor.dim()})")
    with no_grad():
        return tensor.copy_(ember.eye(*tensor.shape, dtype=tensor.dtype))


def _xavier_std(tensor: Tensor, gain: float) -> float:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Glorot initialisation: uniform in ``±gain * sqrt(6 / (fan_in + fan_out))``."""
    bound = math.sqrt(3.0) * _xavier_std(tensor, gain)  # a uniform on [-b, b] has standard deviation b / sqrt(3)
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Glorot initialisation: ``N(0, gain**2 * 2 / (fan_in + fan_out))``."""
    return normal_(tensor, 0.0, _xavier_std(tensor, gain), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def _is_empty(tensor: Tensor) -> bool:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """He initialisation: uniform in ``±gain * sqrt(3 / fan)``; ``a`` is leaky_relu's negative slope."""
    if _is_empty(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """He initialisation: ``N(0, gain**2 / fan)``."""
    if _is_empty(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)
