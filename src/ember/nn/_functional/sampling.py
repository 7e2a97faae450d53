"""Spatial transformers: ``affine_grid`` builds sampling grids, ``grid_sample`` reads an input at them.

Both are composed of ember ops, so their gradients (to the input, the grid and theta, to any order)
need no formulas of their own. ``grid_sample`` turns every output location into a few *taps*: the
neighbouring input pixels it mixes (1 for ``nearest``, 2 per dim for ``bilinear``, 4 per dim for
``bicubic``), each with an integer position and a weight. The positions are plain arrays (they carry no
gradient); the weights are ember ops of the grid, which is how the grid gets its gradient. One ``gather``
reads every tap of every channel at once.

>>> import ember
>>> import ember.nn.functional as F
>>> image = ember.arange(4.0).reshape(1, 1, 2, 2)
>>> identity = ember.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
>>> grid = F.affine_grid(identity, [1, 1, 2, 2], align_corners=False)
>>> F.grid_sample(image, grid, align_corners=False)
tensor([[[[0., 1.],
          [2., 3.]]]])
"""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

import ember
from ember._creation import _linspace_values
from ember._ops._support import user_stacklevel
from ember._tensor import Tensor
from ember._ops.tied_gradients import named_and_tied
from ember.autograd._node_names import named_node
from ember.overrides import overridable

__all__ = ["affine_grid", "grid_sample"]

nn_function = overridable("ember.nn.functional")

_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")
_CUBIC_A = -0.75  # the cubic convolution's parameter, as torch's bicubic uses


def _default_align_corners(align_corners: bool | None) -> bool:
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
            "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for "
            "details.", UserWarning, stacklevel=user_stacklevel())
        return False
    return align_corners


def _array_dtype(t: Tensor) -> np.dtype:
    return t._data.dtype


def _constant(mask: np.ndarray, like: Tensor) -> Tensor:
    """``mask`` as a tensor of ``like``'s dtype: 1 where a tap reads the input, 0 where it reads padding."""
    return ember.from_numpy(mask.astype(_array_dtype(like)))


# ----------------------------------------------------------------- affine_grid


def _steps(n: int, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """``n`` coordinates across [-1, 1]: the pixel corners with ``align_corners``, else the pixel centres."""
    if n <= 1:
        return np.zeros(n, dtype)
    # torch's linspace (which rounds differently from NumPy's), then the centres as torch computes them:
    # times (n - 1), then divided by n, each rounded in the grid's dtype
    steps = _linspace_values(-1.0, 1.0, n, dtype)
    return steps if align_corners else steps * dtype.type(n - 1) / dtype.type(n)


def _base_grid(spatial: list[int], align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """Homogeneous coordinates ``(x, y[, z], 1)`` of every output location, one row each, x varying fastest."""
    axes = [_steps(n, align_corners, dtype) for n in spatial]  # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    columns = [m.reshape(-1) for m in reversed(mesh)]  # x first, as a grid stores it
    return np.stack([*columns, np.ones_like(columns[0])], axis=1)


def _check_theta(theta: Tensor, size: list[int], given) -> int:
    """The number of spatial dims ``size`` asks for, once ``theta`` is known to match it (the messages show
    ``size`` as it was ``given``: a list, tuple or Size)."""
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) not in (4, 5):
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {given!r}.")
    spatial = len(size) - 2
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (spatial, spatial + 1):
        raise ValueError(
            f"Expected a batch of {spatial}D affine matrices of shape Nx{spatial}x{spatial + 1} for size "
            f"{given!r}. Got {theta.shape}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given!r}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(
            f"affine_grid: theta holds {theta.shape[0]} matrices but size asks for a batch of {size[0]}; give one "
            "matrix per batch element")
    return spatial


@nn_function
def affine_grid(theta: Tensor, size: list[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (N x 2 x 3, or N x 3 x 4 in 3-D) for an output of ``size``.

    The grid holds, for every output location, the normalized input coordinates (x, y[, z]) that
    ``grid_sample`` reads. It is differentiable with respect to ``theta``.

    >>> import ember
    >>> theta = ember.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> ember.nn.functional.affine_grid(theta, [1, 1, 1, 2], align_corners=False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    align_corners = _default_align_corners(align_corners)
    given, size = size, [int(s) for s in size]
    spatial = _check_theta(theta, size, given)
    if align_corners and min(size[2:]) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. "
            "This is not an intended use case of affine_grid. See the documentation of affine_grid for details.",
            UserWarning, stacklevel=user_stacklevel())
    base = ember.from_numpy(_base_grid(size[2:], align_corners, _array_dtype(theta)))
    grid = ember.matmul(base, theta.transpose(1, 2)).reshape(size[0], *size[2:], spatial)
    return named_node(grid, "AffineGridGeneratorBackward0", theta, listed=(theta,))


# ----------------------------------------------------------------- grid_sample


def _check_sample_arguments(input: Tensor, grid: Tensor, mode: str, padding_mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: "
            f"'{padding_mode}'")
    shapes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.dim() == 0 or grid.dim() == 0 or input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {shapes}")
    if input.dim() != grid.dim() or input.dim() not in (4, 5):
        raise RuntimeError(
            f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got {shapes}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but "
                           f"got grid with sizes {list(grid.shape)}")
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {d} being empty")
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not (input.is_floating_point() and grid.is_floating_point()):
        raise NotImplementedError(
            f"grid_sample: expected floating-point input and grid, but got {input.dtype} and {grid.dtype}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sample: expected input and grid of the same dtype, but got input {input.dtype} "
                           f"and grid {grid.dtype}; convert one with .to(...)")


def _unnormalized(coord, size: int, align_corners: bool):
    """Pixel coordinates of normalized ones: -1 and 1 are the outer pixels' centres, or their outer edges."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflected(coord, twice_low: int, twice_high: int, where):
    """``coord`` folded back into [low, high] by reflection at both ends (on tensors or arrays alike)."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = abs(coord - low)
    extra = distance % span  # distance is non-negative, so this is fmod
    flips = distance // span
    return where(flips % 2 == 0, extra + low, span - extra + low)


def _padded(coord, size: int, padding_mode: str, align_corners: bool, where, clip):
    """Pixel coordinates brought inside the input as ``padding_mode`` says (``zeros`` leaves them outside)."""
    if padding_mode == "border":
        return clip(coord, 0, size - 1)
    if padding_mode == "reflection":
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        return clip(_reflected(coord, *twice, where), 0, size - 1)
    return coord


def _tensor_padded(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode != "zeros":  # as torch: a coordinate that is nan (or infinite, when reflecting) reads pixel 0
        finite = coord.isfinite() if padding_mode == "reflection" else ~coord.isnan()
        if not finite.all():
            coord = ember.where(finite, coord, 0.0)
    return _padded(coord, size, padding_mode, align_corners, ember.where, _clip)


def _clip(coord: Tensor, low: float, high: float) -> Tensor:
    """``coord`` clamped to [low, high], its gradient 1 strictly inside only: torch's sampler gives a coordinate
    clipped to the border, or exactly on it, no gradient (where ``clamp`` passes it at the bounds)."""
    inside = (coord > low) & (coord < high)
    return ember.where(inside, coord, coord.detach().clamp(low, high))


def _array_padded(coord: np.ndarray, size: int, padding_mode: str, align_corners: bool) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # a nan position stays nan, quietly: its tap reads nothing
        return _padded(coord, size, padding_mode, align_corners, np.where, np.clip)


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """The four cubic-convolution weights of the taps at -1, 0, 1, 2 for a fractional offset ``t``."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(coord: Tensor, size: int, mode: str, padding_mode: str, align_corners: bool) -> list[tuple]:
    """Along one spatial dim: (position array, weight tensor or None) of each tap of each output location."""
    source = _unnormalized(coord, size, align_corners)
    if mode == "bicubic":  # the taps are padded one by one, after the weights are taken
        floor = source.floor()
        positions = floor._data
        return [(_array_padded(positions + offset, size, padding_mode, align_corners), weight)
                for offset, weight in zip((-1, 0, 1, 2), _cubic_weights(source - floor))]
    source = _tensor_padded(source, size, padding_mode, align_corners)
    if mode == "nearest":
        return [(np.rint(source._data), None)]  # halves to even, as torch rounds
    floor = source.floor()
    fraction = source - floor
    positions = floor._data
    return [(positions, 1 - fraction), (positions + 1, fraction)]


def _flat_index(positions: tuple[np.ndarray, ...], sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Row-major flat indices of one tap's positions in every dim, and where they fall inside the input."""
    inside = np.ones(positions[0].shape, bool)
    flat = np.zeros(positions[0].shape, np.int64)
    for position, size in zip(positions, sizes):
        valid = np.isfinite(position) & (position > -1) & (position < size)
        index = np.where(valid, position, 0).astype(np.int64)  # truncates toward zero, as a C cast does
        inside &= valid & (index < size) & (index >= 0)
        flat = flat * size + index
    return np.where(inside, flat, 0), inside


def _weight_of(weights: tuple) -> Tensor | None:
    """The product of a tap's weights along every dim (None for nearest, which has none)."""
    product = None
    for weight in weights:
        if weight is not None:
            product = weight if product is None else product * weight
    return product


@nn_function
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """``input`` (N, C, [D,] H, W) read at the normalized locations of ``grid`` (N, [D_out,] H_out, W_out, 2 or 3).

    ``grid[..., 0]`` is x (the width), ``grid[..., 1]`` is y, ``grid[..., 2]`` is z; -1 and 1 are the input's
    outer edges (the outer pixels' centres with ``align_corners=True``). ``mode`` is ``'bilinear'``
    (trilinear for 5-D input), ``'nearest'`` or ``'bicubic'`` (4-D only). Locations outside the input read
    zeros, the nearest border pixel, or the input reflected at its border (``padding_mode``). Gradients flow to
    ``input`` and, except with ``'nearest'``, to ``grid``.

    >>> import ember
    >>> image = ember.tensor([[[[0.0, 10.0]]]])
    >>> between = ember.tensor([[[[0.0, 0.0]]]])
    >>> ember.nn.functional.grid_sample(image, between, align_corners=True)
    tensor([[[[5.]]]])
    """
    _check_sample_arguments(input, grid, mode, padding_mode)
    align_corners = _default_align_corners(align_corners)
    n, c, *sizes = input.shape
    out_spatial = list(grid.shape[1:-1])
    locations = math.prod(out_spatial)
    flat_grid = grid.reshape(n, locations, len(sizes))
    # the grid lists x first; the input's spatial dims are (D,) H, W
    per_dim = [_taps(flat_grid[..., len(sizes) - 1 - d], size, mode, padding_mode, align_corners)
               for d, size in enumerate(sizes)]
    indices, masks, weights = [], [], []
    for combination in itertools.product(*per_dim):
        flat, inside = _flat_index(tuple(position for position, _ in combination), sizes)
        indices.append(flat)
        masks.append(inside)
        weights.append(_weight_of(tuple(weight for _, weight in combination)))
    taps = len(indices)
    index = ember.from_numpy(np.stack(indices, axis=1).reshape(n, 1, taps * locations))
    values = input.reshape(n, c, math.prod(sizes)).gather(2, index.expand(n, c, taps * locations)).reshape(n, c, taps, locations)
    inside = np.stack(masks, axis=1)
    if weights[0] is None:  # nearest: one tap, read as it is
        mixed = values[:, :, 0] if inside.all() else values[:, :, 0] * _constant(inside[:, :1], input)
        if grid.requires_grad and ember.is_grad_enabled():
            # torch's grid gets a gradient of zeros here, not none: a term of -0.0 (which changes no sum, not
            # even the sign of a zero) that depends on the grid
            mixed = mixed + ember.where(ember.tensor(False), grid, -0.0).sum()
    else:
        mix = ember.stack(weights, dim=1)
        if not inside.all():
            mix = mix * _constant(inside, input)
            # a tap outside reads nothing: no gradient goes back through it, even where its weight is NaN (at
            # an infinite or NaN coordinate, whose output is NaN as torch's)
            values = values.masked_fill(ember.from_numpy(~inside[:, None]), 0.0)
        mixed = (values * mix.unsqueeze(1)).sum(2)
    # (torch's backward reads both, with an undefined derivative there beyond what its formula computes from them)
    return named_and_tied(mixed.reshape(n, c, *out_spatial), f"GridSampler{len(sizes)}DBackward0", input, grid,
                          undefined=True)
