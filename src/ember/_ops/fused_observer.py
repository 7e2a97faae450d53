"""``fused_moving_avg_obs_fake_quant``: one call of quantization-aware training's observer and fake quantizer.

It updates the running minimum and maximum of what it sees (a moving average), chooses the scale and zero
point from them, writes both into the given tensors, and fake-quantizes the input with them; each step can
be switched off by its flag tensor. The gradient is the straight-through one.

>>> import ember
>>> low, high = ember.tensor([float("inf")]), ember.tensor([float("-inf")])
>>> scale, zero_point = ember.tensor([1.0]), ember.tensor([0], dtype=ember.int32)
>>> on = ember.tensor([1])
>>> y = ember.fused_moving_avg_obs_fake_quant(ember.tensor([-1.0, 0.3, 4.0]), on, on, low, high, scale,
...                                           zero_point, 0.01, 0, 255, 0)
>>> low, high, zero_point
(tensor([-1.]), tensor([4.]), tensor([51], dtype=ember.int32))
"""
from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops._support import ember_function, require_tensor, wrap
from ember._ops.fake_quantize import channel_shape, per_channel_grid, per_tensor_grid
from ember._ops.quantize import choose_qparams
from ember._tensor import Tensor
from ember.autograd.function import Function

_SINGLE = np.dtype(np.float32)


def _observed(x: np.ndarray, per_row: bool, axis: int) -> tuple:
    """The minimum and maximum of ``x``: of all of it, or per slice along ``axis``."""
    if not per_row:
        return np.array([x.min()], _SINGLE), np.array([x.max()], _SINGLE)
    rows = np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)
    return rows.min(1).astype(_SINGLE), rows.max(1).astype(_SINGLE)


def _moving_average(running: Tensor, current: np.ndarray, averaging_const: float) -> None:
    """``running += averaging_const * (current - running)`` in place, or ``current`` where nothing ran yet."""
    data = running._data
    weight = np.float32(averaging_const)
    with np.errstate(all="ignore"):
        updated = np.where(np.isinf(data), current, data + weight * (current - data))
    data[...] = updated
    running._bump()


class FusedMovingAvgObsFakeQuant(Function):
    backward_name = "FusedMovingAvgObsFqHelperBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x, observer_on, fake_quant_on, running_min, running_max, scale, zero_point, averaging_const,
                quant_min, quant_max, ch_axis, per_row_fake_quant, symmetric_quant):
        data = x._data
        if observer_on._data.reshape(-1)[0]:
            low, high = _observed(data, per_row_fake_quant, ch_axis)
            _moving_average(running_min, low, averaging_const)
            _moving_average(running_max, high, averaging_const)
        if not fake_quant_on._data.reshape(-1)[0]:
            ctx.save_for_backward(wrap(np.ones(data.shape, bool)))
            return wrap(data.copy())
        params = [choose_qparams(lo, hi, quant_min, quant_max, symmetric_quant)
                  for lo, hi in zip(running_min._data.reshape(-1), running_max._data.reshape(-1))]
        scale._data[...] = np.array([p[0] for p in params], _SINGLE).reshape(scale._data.shape)
        zero_point._data[...] = np.array([p[1] for p in params]).reshape(zero_point._data.shape)
        scale._bump()
        zero_point._bump()
        if per_row_fake_quant:
            shape = channel_shape(data.ndim, ch_axis)
            values, mask = per_channel_grid(data, scale._data.reshape(shape), zero_point._data.reshape(shape),
                                            quant_min, quant_max, True)
        else:
            values, mask = per_tensor_grid(data, scale._data.reshape(-1)[0], int(zero_point._data.reshape(-1)[0]),
                                           quant_min, quant_max, True)
        ctx.save_for_backward(wrap(mask))
        return wrap(values)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return (grad * mask,) + (None,) * 12


@ember_function
def fused_moving_avg_obs_fake_quant(input: Tensor, observer_on: Tensor, fake_quant_on: Tensor,
                                    running_min: Tensor, running_max: Tensor, scale: Tensor, zero_point: Tensor,
                                    averaging_const: float, quant_min: int, quant_max: int, ch_axis: int,
                                    per_row_fake_quant: bool = False, symmetric_quant: bool = False) -> Tensor:
    """Observe ``input``'s range into ``running_min``/``running_max`` (a moving average with weight
    ``averaging_const``), choose ``scale``/``zero_point`` from it (written in place) and fake-quantize
    ``input`` with them; ``observer_on``/``fake_quant_on`` (one-element tensors) switch the two steps.
    ``per_row_fake_quant`` keeps one range, scale and zero point per slice along ``ch_axis``.

    >>> stats = [ember.tensor([-1.0]), ember.tensor([1.0]), ember.tensor([1.0]), ember.tensor([0], dtype=ember.int32)]
    >>> ember.fused_moving_avg_obs_fake_quant(ember.tensor([0.5, 3.0]), ember.tensor([0]), ember.tensor([1]),
    ...                                       *stats, 0.01, -128, 127, 0)
    tensor([0.5020, 0.9961])
    """
    op = "fused_moving_avg_obs_fake_quant"
    for position, (name, value) in enumerate((("self", input), ("observer_on", observer_on),
                                              ("fake_quant_on", fake_quant_on), ("running_min", running_min),
                                              ("running_max", running_max), ("scale", scale),
                                              ("zero_point", zero_point)), 1):
        require_tensor(value, op, position, name)
    if per_row_fake_quant and ch_axis != 0:
        raise RuntimeError(f"Per-channel FakeQuant in {op} is only supported on axis == 0 (got ch_axis={ch_axis}); "
                           "move the channels first, e.g. x.movedim(ch_axis, 0)")
    if input._data.dtype != _SINGLE:
        raise RuntimeError(f"{op}: expected scalar type Float but found {_dtype.scalar_type_name(input._data.dtype)}; "
                           "convert the input first, e.g. x.float()")
    if input._data.size == 0:
        return input.clone()
    return FusedMovingAvgObsFakeQuant.apply(input, observer_on, fake_quant_on, running_min, running_max, scale,
                                            zero_point, averaging_const, quant_min, quant_max, ch_axis,
                                            per_row_fake_quant, symmetric_quant)
