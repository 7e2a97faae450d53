"""``gradient``: derivatives of sampled values by finite differences, as ``torch.gradient`` (and NumPy's) take them.

Inside, the central difference of second order (for uneven coordinates, the weights that make it exact for
quadratics); at the two ends, a one-sided difference of first or second order (``edge_order``). Composed of
ops, so it is differentiable.

>>> import ember
>>> ember.gradient(ember.tensor([1.0, 2.0, 4.0, 8.0]))
(tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
>>> ember.gradient(ember.tensor([1.0, 2.0, 4.0, 8.0]), spacing=2.0)
(tensor([0.5000, 0.7500, 1.5000, 2.0000]),)
"""
from __future__ import annotations

import numbers

import ember
from ember._ops._support import ember_function
from ember._tensor import Tensor


def _dims(input: Tensor, dim) -> list[int]:
    if dim is None:
        return list(range(input.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    normalized = []
    for d in dims:
        if not -input.dim() <= d < input.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, "
                             f"{input.dim() - 1}], but got {d})")
        d %= input.dim()
        if d in normalized:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        normalized.append(d)
    return normalized


def _spacings(input: Tensor, spacing, dims: list[int], dim_given: bool) -> list:
    """One spacing per dim: a number (even steps) or a 1-d tensor of coordinates."""
    if isinstance(spacing, Tensor) and spacing.dim() == 0:
        spacing = spacing.item()
    if isinstance(spacing, numbers.Number):
        return [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        if dim_given:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {input.dim()}', since dim argument was not given, but got a list of "
                           f"length {len(spacing)}")
    for d, s in zip(dims, spacing):
        if isinstance(s, Tensor) and (s.dim() != 1 or s.shape[0] != input.shape[d]):
            raise ValueError(f"gradient: the coordinates along dim {d} must be a 1-d tensor of {input.shape[d]} "
                             f"values (the input's size there), but got shape {list(s.shape)}")
    return spacing


def _along(values: Tensor, dim: int):
    """``part(start, length)``: the slice of ``values`` along ``dim`` (the samples a difference reads)."""
    def part(start: int, length: int) -> Tensor:
        return values.narrow(dim, start, length)
    return part


def _even(f, n: int, h, edge_order: int) -> list[Tensor]:
    inside = (f(2, n - 2) - f(0, n - 2)) / (2 * h)
    if edge_order == 1:
        return [(f(1, 1) - f(0, 1)) / h, inside, (f(n - 1, 1) - f(n - 2, 1)) / h]
    first = (-1.5 * f(0, 1) + 2 * f(1, 1) - 0.5 * f(2, 1)) / h
    last = (0.5 * f(n - 3, 1) - 2 * f(n - 2, 1) + 1.5 * f(n - 1, 1)) / h
    return [first, inside, last]


def _uneven(f, n: int, x: Tensor, edge_order: int, dim: int, ndim: int) -> list[Tensor]:
    def step(start: int, length: int) -> Tensor:  # coordinate differences, shaped to broadcast along dim
        shape = [1] * ndim
        shape[dim] = length
        return (x[start + 1:start + 1 + length] - x[start:start + length]).reshape(shape)

    left, right = step(0, n - 2), step(1, n - 2)
    inside = (-right / (left * (left + right)) * f(0, n - 2) + (right - left) / (left * right) * f(1, n - 2)
              + left / (right * (left + right)) * f(2, n - 2))
    if edge_order == 1:
        return [(f(1, 1) - f(0, 1)) / step(0, 1), inside, (f(n - 1, 1) - f(n - 2, 1)) / step(n - 2, 1)]
    a, b = step(0, 1), step(1, 1)
    first = (-(2 * a + b) / (a * (a + b)) * f(0, 1) + (a + b) / (a * b) * f(1, 1) - a / (b * (a + b)) * f(2, 1))
    a, b = step(n - 3, 1), step(n - 2, 1)
    last = (b / (a * (a + b)) * f(n - 3, 1) - (a + b) / (a * b) * f(n - 2, 1) + (2 * b + a) / (b * (a + b)) * f(n - 1, 1))
    return [first, inside, last]


@ember_function
def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of ``input``'s values along each of ``dim`` (all dims by default), by finite differences.

    ``spacing`` is the distance between samples: one number, one per dim, or per dim a 1-d tensor of the
    samples' coordinates; ``None`` means 1, as torch.
    """
    if spacing is None:
        spacing = 1
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _dims(input, dim)
    spacings = _spacings(input, spacing, dims, dim is not None)
    values = input if input.is_floating_point() or input.is_complex() else input.to(ember.get_default_dtype())
    results = []
    for d, s in zip(dims, spacings):
        n = input.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        f = _along(values, d)
        if isinstance(s, Tensor):
            pieces = _uneven(f, n, s.to(values.dtype), edge_order, d, input.dim())
        else:
            pieces = _even(f, n, s, edge_order)
        results.append(ember.cat(pieces, dim=d))
    return tuple(results)
