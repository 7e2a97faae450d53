"""The discrete Fourier transforms behind ``ember.fft``: three Functions, each computed by NumPy's pocketfft.

Every transform is linear, so its backward is its adjoint, which is again a transform of the same family:

* ``C2C`` (complex to complex, any dims): the adjoint runs the other direction with the same scale factor.
  NumPy names a scale by the direction it belongs to, so ``"backward"`` and ``"forward"`` trade places
  (an unscaled forward transform's adjoint is an unscaled inverse one) and ``"ortho"`` stays.
* ``C2R`` (onesided half spectrum to real): each bin between the first and the last stands for itself and
  its mirror image, so the adjoint is ``R2C`` of the gradient with those bins doubled.
* ``R2C`` (real to the onesided half spectrum): the adjoint is the real part of the inverse transform of the
  half spectrum padded with zeros to the full length, which is ``C2R`` of it with those bins halved.

The backward of each is written with these same Functions and ember ops, so gradients of any order exist.

>>> import ember
>>> x = ember.tensor([1., 2., 3., 4.], dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradgradcheck(lambda t: ember.fft.rfft(t).abs(), (x,))
True
"""
from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops._support import require_tensor, wrap
from ember._tensor import Tensor
from ember.autograd.function import Function

_ADJOINT_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}
_fft, _ifft, _rfft, _irfft = np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft
_SUPPORTED = frozenset(np.dtype(kind) for kind in (np.float32, np.float64, np.complex64, np.complex128))


class LinearTransform(Function):
    """A linear map of its first argument, the others fixing which: a tangent goes through the same map."""

    @staticmethod
    def jvp(ctx, tangent, *_):
        return ctx._forward_cls.apply(tangent, *ctx.primals[1:])


class C2C(LinearTransform):
    backward_name = "FftC2CBackward0"

    @staticmethod
    def forward(ctx, x, axes: tuple, forward: bool, norm: str):
        ctx.plan = axes, forward, norm
        if len(axes) == 1:  # (NumPy's one-dimensional entry point costs a third of its n-dimensional one)
            return wrap((_fft if forward else _ifft)(x._data, axis=axes[0], norm=norm))
        return wrap((np.fft.fftn if forward else np.fft.ifftn)(x._data, axes=axes, norm=norm))

    @staticmethod
    def backward(ctx, grad):
        axes, forward, norm = ctx.plan
        return C2C.apply(grad, axes, not forward, _ADJOINT_NORM[norm]), None, None, None


class R2C(LinearTransform):
    backward_name = "FftR2CBackward0"

    @staticmethod
    def forward(ctx, x, axes: tuple, norm: str):
        ctx.plan = axes, norm, x._data.shape[axes[-1]]
        if len(axes) == 1:
            return wrap(_rfft(x._data, axis=axes[0], norm=norm))
        return wrap(np.fft.rfftn(x._data, axes=axes, norm=norm))

    @staticmethod
    def backward(ctx, grad):
        axes, norm, last_size = ctx.plan
        # (C2R counts each mirrored bin twice: halved, they count once, as the zero-padded inverse would)
        halved = grad * wrap(1 / mirrored_bins(last_size, axes[-1], grad.ndim, np.finfo(grad._data.dtype).dtype))
        return C2R.apply(halved, axes, _ADJOINT_NORM[norm], last_size), None, None


class C2R(LinearTransform):
    backward_name = "FftC2RBackward0"

    @staticmethod
    def forward(ctx, x, axes: tuple, norm: str, last_size: int):
        ctx.plan = axes, norm, last_size
        data = x._data
        if len(axes) == 1:
            return wrap(_irfft(data, last_size, axis=axes[0], norm=norm))
        sizes = [data.shape[axis] for axis in axes[:-1]] + [last_size]
        return wrap(np.fft.irfftn(data, s=sizes, axes=axes, norm=norm))

    @staticmethod
    def backward(ctx, grad):
        axes, norm, last_size = ctx.plan
        half = R2C.apply(grad, axes, _ADJOINT_NORM[norm])
        return half * wrap(mirrored_bins(last_size, axes[-1], grad.ndim, grad._data.dtype)), None, None, None


def mirrored_bins(last_size: int, axis: int, ndim: int, dtype: np.dtype) -> np.ndarray:
    """1 for the bins of a onesided spectrum that stand alone (the first, and the last when ``last_size`` is
    even), 2 for those that also stand for their mirror image; shaped to broadcast along ``axis``."""
    half = last_size // 2 + 1
    weights = np.full(half, 2, dtype)
    weights[0] = 1
    if last_size % 2 == 0:
        weights[-1] = 1
    return weights.reshape((half,) + (1,) * (ndim - 1 - axis))


def resized(x: Tensor, axes: tuple, sizes: tuple) -> Tensor:
    """``x`` trimmed (a view) or zero-padded at the end of each of ``axes`` to ``sizes``; differentiable."""
    shape = x._data.shape
    if all(shape[axis] == size for axis, size in zip(axes, sizes)):
        return x
    key = [slice(None)] * x.ndim
    widths = [0] * (2 * x.ndim)
    for axis, size in zip(axes, sizes):
        if size < shape[axis]:
            key[axis] = slice(0, size)
        else:
            widths[2 * (x.ndim - 1 - axis) + 1] = size - shape[axis]
    if any(isinstance(part, slice) and part.stop is not None for part in key):
        x = x[tuple(key)]
    if any(widths):
        x = padded(x, widths)
    return x


def padded(x: Tensor, widths: list, mode: str = "constant") -> Tensor:
    """``nn.functional.pad``, reached at call time (``ember.nn`` is built after the ops)."""
    from ember.nn.functional import pad

    return pad(x, widths, mode)


# ----------------------------------------------------------------- checking the arguments as torch does


def transformable(op: str, input: Tensor, *, real_only: bool = False) -> Tensor:
    """``input`` as the transforms take it: integers and bools become the default float dtype (as in torch);
    half precision is refused, as torch's CPU transforms refuse it."""
    data = require_tensor(input, op)._data
    kind = data.dtype.kind
    if kind in "biu":
        return wrap(data.astype(_dtype.defaults.floating.np))
    if real_only and kind == "c":
        raise RuntimeError(f"{op} expects a real input tensor, but got {_dtype.scalar_type_name(data.dtype)}; "
                           "pass a real tensor (input.real, say)")
    supported(op, data)
    return input


def supported(op: str, data: np.ndarray) -> np.ndarray:
    """``data``, unless its dtype is one the transforms refuse (half precision), as torch's CPU transforms do."""
    if data.dtype not in _SUPPORTED:
        raise RuntimeError(f"{op}: Unsupported dtype {_dtype.scalar_type_name(data.dtype)}; the transforms take "
                           "float32, float64, complex64 and complex128 tensors, e.g. input.float()")
    return data


def checked_norm(op: str, norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _ADJOINT_NORM:
        raise RuntimeError(f'{op}: Invalid normalization mode: "{norm}"; use "backward", "ortho" or "forward"')
    return norm


def wrapped_dim(op: str, dim: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(f"{op}: Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {dim})")
    return dim % ndim


def _integer(op: str, value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def _integers(op: str, values, name: str) -> tuple:
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        return (int(values),)
    if not isinstance(values, (tuple, list)) and not (isinstance(values, Tensor) and values.ndim == 1):
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not {type(values).__name__}")
    return tuple(_integer(op, value, name) for value in (values.tolist() if isinstance(values, Tensor) else values))


def one_dim_plan(op: str, x: Tensor, n, dim) -> tuple:
    """The ``(axes, sizes)`` of a one-dimensional transform's ``n`` and ``dim``."""
    dim = _integer(op, dim, "dim")
    axis = wrapped_dim(op, dim, x.ndim)
    return (axis,), (None if n is None else _integer(op, n, "n"),)


def many_dims_plan(op: str, x: Tensor, s, dim) -> tuple:
    """The ``(axes, sizes)`` of an n-dimensional transform: ``dim`` defaults to the last ``len(s)`` dims, or
    to every dim; a size of None or -1 keeps the input's size (which a c2r transform reads its own way)."""
    ndim = x.ndim
    sizes = None if s is None else _integers(op, s, "s")
    if dim is not None:
        axes = tuple(wrapped_dim(op, d, ndim) for d in _integers(op, dim, "dim"))
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"{op}: FFT dims must be unique, got {list(_integers(op, dim, 'dim'))}")
        if sizes is not None and len(sizes) != len(axes):
            raise RuntimeError(f"{op}: When given, dim and shape arguments must have the same length "
                               f"(s has {len(sizes)} values, dim has {len(axes)})")
    elif sizes is not None:
        if len(sizes) > ndim:
            raise RuntimeError(f"{op}: Got shape with {len(sizes)} values but input tensor only has {ndim} "
                               "dimensions.")
        axes = tuple(range(ndim - len(sizes), ndim))
    else:
        axes = tuple(range(ndim))
    if sizes is None:
        sizes = (None,) * len(axes)
    return axes, tuple(None if size == -1 else size for size in sizes)


def signal_sizes(op: str, x: Tensor, axes: tuple, sizes: tuple) -> tuple:
    """Each requested size, or the input's own where none was given; each must be positive."""
    chosen = tuple(x.shape[axis] if size is None else size for axis, size in zip(axes, sizes))
    for size in chosen:
        if size < 1:
            raise RuntimeError(f"{op}: Invalid number of data points ({size}) specified; a transformed dim needs at "
                               "least one point (give a positive n or s)")
    return chosen


def half_size(op: str, x: Tensor, axes: tuple, sizes: tuple) -> int:
    """The length of the real signal a c2r transform makes: as asked, else ``2 * (m - 1)`` from the input's m."""
    last = sizes[-1]
    last = 2 * (x.shape[axes[-1]] - 1) if last is None else last
    if last < 1:
        raise RuntimeError(f"{op}: Invalid number of data points ({last}) specified; a c2r transform of m bins makes "
                           "2 * (m - 1) points by default, so give n (or s) explicitly for a single bin")
    return last


def adjoint_norm(norm: str) -> str:
    """The scale of the opposite direction that equals ``norm``'s (the hermitian transforms borrow it)."""
    return _ADJOINT_NORM[norm]
