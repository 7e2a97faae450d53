"""Fractional max pooling: max pooling whose window starts follow a pseudo-random sequence per plane.

The output size is not an integer fraction of the input's: each plane draws one number in [0, 1) per
spatial dim (``_random_samples``, as torch names it) and the window starts are
``floor((i + sample) * alpha) - floor(sample * alpha)`` with ``alpha = (input - kernel) / (output - 1)``, the
last window ending at the input's edge. The starts are plain arrays; the values are a ``gather`` of the
input, so gradients (of any order) reach the largest entry of each window.

>>> import ember
>>> x = ember.arange(16.0).view(1, 1, 4, 4)
>>> samples = ember.tensor([[[0.5, 0.5]]])
>>> ember.nn.functional.fractional_max_pool2d(x, 2, output_size=2, _random_samples=samples)
tensor([[[[ 5.,  7.],
          [13., 15.]]]])
"""
from __future__ import annotations

import math

import numpy as np

import ember
from ember._ops.tied_gradients import named_and_tied
from ember._tensor import Tensor
from ember.nn._functional.conv import as_tuple
from ember.overrides import overridable

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]

nn_function = overridable("ember.nn.functional")
_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _output_size(op: str, spatial: int, input: Tensor, output_size, output_ratio) -> tuple:
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if output_size is not None:
        return as_tuple(output_size, spatial, op, "output_size")
    ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * spatial
    if len(ratios) != spatial:
        raise ValueError(f"{op}: output_ratio must be a number or {spatial} numbers, but got {output_ratio}")
    return tuple(int(n * r) for n, r in zip(input.shape[-spatial:], ratios))


def _samples(op: str, spatial: int, input: Tensor, samples: Tensor | None) -> np.ndarray:
    """The per-plane numbers ``[N, C, spatial]`` the window starts come from (drawn here if not given)."""
    batch = input.shape[0] if input.dim() == spatial + 2 else 1
    channels = input.shape[-spatial - 1]
    if samples is None:
        samples = ember.rand(batch, channels, spatial, dtype=input.dtype)
    if samples.dim() != 3:
        raise RuntimeError(f"{op}: Expect _random_samples to be 3D tensor, got: {samples.dim()}D")
    if samples.shape[0] < batch:
        raise RuntimeError(f"{op}: Expect _random_samples.size(0) no less then input batch size "
                           f"({batch}), got {samples.shape[0]}.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != spatial:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {spatial}; got {samples.shape[2]}.")
    return samples._data[:batch]  # (as in torch, planes past the batch's are not read)


def _starts(sample: np.ndarray, size: int, out: int, kernel: int) -> np.ndarray:
    """Window starts ``[..., out]`` along one dim for each plane's ``sample`` ``[...]`` (in the input's precision)."""
    dtype = sample.dtype.type
    starts = np.empty(sample.shape + (out,), np.int64)
    if out > 1:
        alpha = dtype(size - kernel) / dtype(out - 1)
        steps = np.arange(out - 1).astype(sample.dtype)
        starts[..., :-1] = ((steps + sample[..., None]) * alpha).astype(np.int64) - \
            (sample[..., None] * alpha).astype(np.int64)
    if out > 0:
        starts[..., -1] = size - kernel
    return starts


def _window_indices(samples: np.ndarray, sizes: tuple, out: tuple, kernel: tuple) -> np.ndarray:
    """Flat plane indices ``[N, C, *out, prod(kernel)]`` of every window's entries, the last dim fastest."""
    spatial = len(sizes)
    # torch reads a 2-d plane's samples as (width, height) and a 3-d volume's as (time, height, width)
    order = (1, 0) if spatial == 2 else (0, 1, 2)
    flat = np.zeros(samples.shape[:2] + out + kernel, np.int64)
    for d in range(spatial):
        starts = _starts(samples[:, :, order[d]], sizes[d], out[d], kernel[d])  # [N, C, out_d]
        shape = [samples.shape[0], samples.shape[1]] + [1] * (2 * spatial)
        shape[2 + d] = out[d]
        taps = np.arange(kernel[d]).reshape([kernel[d] if e == d else 1 for e in range(spatial)])
        position = starts.reshape(shape) + taps.reshape([1, 1] + [1] * spatial + list(taps.shape))
        flat = flat * sizes[d] + position
    return flat.reshape(samples.shape[:2] + out + (math.prod(kernel),))


def _largest(values: np.ndarray) -> np.ndarray:
    """Each window's pick, as torch's loop makes it: the first largest entry, or the last NaN if there is one."""
    nan = np.isnan(values)
    last_nan = values.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
    return np.where(nan.any(-1), last_nan, np.argmax(np.where(nan, -np.inf, values), axis=-1))


def _fractional_max_pool(op: str, spatial: int, input: Tensor, kernel_size, output_size, output_ratio,
                         return_indices: bool, samples):
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{op}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got: {list(input.shape)}")
    kernel = as_tuple(kernel_size, spatial, op, "kernel_size")
    out = _output_size(op, spatial, input, output_size, output_ratio)
    sizes = tuple(input.shape[-spatial:])
    for name, n, k, o in zip(_DIM_NAMES[spatial], sizes, kernel, out):
        if o + k - 1 > n:
            raise RuntimeError(f"{op}(): pool {name} {k} too large relative to input {name} {n}")
    draws = _samples(op, spatial, input, samples)
    batched = input if input.dim() == spatial + 2 else input.unsqueeze(0)
    windows = _window_indices(draws, sizes, out, kernel)
    planes = batched._data.reshape(batched.shape[:2] + (-1,))
    lead = windows.shape[:2]
    values = np.take_along_axis(planes, windows.reshape(lead + (-1,)), axis=2).reshape(windows.shape)
    picked = np.take_along_axis(windows, _largest(values)[..., None], axis=-1)[..., 0]
    indices = ember.from_numpy(picked)
    result = batched.flatten(2).gather(2, indices.flatten(2)).view(*batched.shape[:2], *out)
    if input.dim() == spatial + 1:
        result, indices = result.squeeze(0), indices.squeeze(0)
    result = named_and_tied(result, f"FractionalMaxPool{spatial}DBackward0", input)
    return (result, indices) if return_indices else result


@nn_function
def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Fractional max pooling of ``[N, C, H, W]`` (or ``[C, H, W]``) to ``output_size`` (or ``output_ratio`` of the
    input's size), with ``kernel_size`` windows; with ``return_indices``, also each maximum's flat index."""
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


@nn_function
def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Fractional max pooling of ``[N, C, T, H, W]`` (or ``[C, T, H, W]``); see ``fractional_max_pool2d``."""
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


@nn_function
def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples: Tensor | None = None):
    """``fractional_max_pool2d`` returning (values, indices) whatever ``return_indices`` says."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


@nn_function
def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples: Tensor | None = None):
    """``fractional_max_pool3d`` returning (values, indices) whatever ``return_indices`` says."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)
