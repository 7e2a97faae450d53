"""Statistics: prod, nansum, nanmean, var, std, var_mean, std_mean, logsumexp, softmax, log_softmax and
count_nonzero.

>>> import ember
>>> x = ember.tensor([[1., 2., 3.], [2., 4., 6.]])
>>> ember.var(x, dim=1)
tensor([1., 4.])
>>> ember.softmax(ember.tensor([0., 0.]), dim=0)
tensor([0.5000, 0.5000])
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ember import _dtype
from ember._ops import _cascade
from ember._ops._jvp import elementwise_jvp
from ember._ops._quiet import IGNORE_ALL, quietly, quietly_on_objection
from ember._ops._support import (
    ember_function, expanded, float_result, normalize_dims, reduced, require_tensor, row_major, user_stacklevel, wrap,
)
from ember._ops.arithmetic import where
from ember._ops.complex import conjugated
from ember._creation import ones_like
from ember._ops.copy import to
from ember._ops.joining import cat
from ember._ops.scans import _cumprod, _reversed_scan, cumprod
from ember._ops.out import dtype_from_out, into_out
from ember._ops.reduction import (
    _EVERY_DIM, _sum_dtype, out_without_dim, real_part_for, reduction_axes, with_reduced_dims,
)
from ember._tensor import Tensor
from ember.autograd.function import Function

_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)


def _in_single(data: np.ndarray) -> np.ndarray:
    """Half values as single, where torch computes them (and rounds the result once); other dtypes as they are."""
    return data.astype(_SINGLE) if data.dtype is _dtype.HALF or data.dtype is _dtype.BF16 else data


def _kept_sum(value, axes: tuple):
    """``value`` summed over ``axes``, keeping them: for a tensor or an array (formulas run on both)."""
    if isinstance(value, Tensor):
        return value.sum(axes, keepdim=True)
    return np.asarray(value).sum(axes, keepdims=True)  # (a product of 0-d arrays is a NumPy scalar)


def _kept_mean(value, axes: tuple, count: int):
    """``value``'s mean over ``axes`` (``count`` elements each), keeping them: for a tensor or an array.

    A half array is summed in single and the mean rounded once, as the tensor's mean is.
    """
    if isinstance(value, Tensor):
        return value.mean(axes, keepdim=True)
    work = _in_single(value)
    return np.asarray(_cascade.add_reduce(work, axes, None, True) / work.dtype.type(count)).astype(value.dtype,
                                                                                                 copy=False)


def _select(condition, chosen, otherwise):
    """``where(condition, chosen, otherwise)`` for tensors, ``np.where`` for arrays (formulas run on both)."""
    if isinstance(condition, Tensor):
        return where(condition, chosen, otherwise)
    return np.where(condition, chosen, otherwise)


def _count(shape: tuple, axes: tuple) -> int:
    if len(axes) == len(shape):  # every dim (axes are distinct)
        return math.prod(shape)
    count = 1
    for a in axes:
        count *= shape[a]
    return count


# ----------------------------------------------------------------- prod


class Prod(Function):
    """The product over ``axes``; the gradient of each element is the product of the others (zeros included)."""

    backward_name = "ProdBackward1"
    torch_saved_tensors = {"self": 0, "result": 1}
    torch_saved_values = {"dim": lambda node: node.axes[0] if node.axes else 0, "keepdim": "keepdim"}

    @staticmethod
    def forward(ctx, x, axes, keepdim, dtype):
        data = x._data
        target = _sum_dtype(data, dtype)
        work = data.astype(target, copy=False)
        if work.dtype is not _dtype.BF16:  # torch multiplies bfloat16 step by step in bfloat16, half in single
            work = _in_single(work)
        out = quietly(IGNORE_ALL, _product, work, axes, keepdim).astype(target, copy=False)
        out = wrap(reduced(np.asarray(out), data if keepdim else None))  # (kept 1s: see reduced)
        ctx.axes, ctx.keepdim = axes, keepdim
        if ctx.needs_input_grad[0]:  # (a pass over the data that only the gradient needs)
            ctx.has_zero = bool((data == 0).any())
            ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if not x.ndim:  # as torch: a 0-d product is its element, whose gradient is grad (out / x: nan at inf, nan)
            return grad, None, None, None
        grad, out = with_reduced_dims(x.shape, ctx.axes, ctx.keepdim, grad, out)
        return grad * conjugated(_product_of_others(x, out, ctx.axes, ctx.has_zero)), None, None, None


class ProdAll(Prod):
    backward_name = "ProdBackward0"
    torch_saved_tensors = {"result": 1, "self": 0}


_HALVED_FROM = 32  # elements along the axis; below, NumPy's product is as fast


def _product(work: np.ndarray, axes: tuple, keepdim: bool) -> np.ndarray:
    """``np.prod(work, axes, keepdims=keepdim)``, faster along the contiguous axis or over every element.

    NumPy multiplies along the contiguous axis one element at a time; multiplying the first half by the
    second half instead (a vectorised pass, repeated on what is left) gets there in a few passes. Only where
    the order cannot matter or rounds no worse: integers wrap the same in any order, and a float product's
    relative error is the sum of one rounding per multiplication in any order (measured on long rows: as
    large as torch's, no larger). bfloat16, which torch multiplies step by step in bfloat16, and complex
    numbers keep NumPy's order.
    """
    if work.dtype.kind not in "iuf" or work.dtype is _dtype.BF16:
        return np.prod(work, axes, keepdims=keepdim)
    if len(axes) == work.ndim > 1 and work.flags.c_contiguous:
        product = _halved_product(work.reshape(-1), 0)
        return product.reshape((1,) * work.ndim) if keepdim else product.reshape(())
    if len(axes) == 1 and work.ndim and work.strides[axes[0]] == work.itemsize:
        product = _halved_product(work, axes[0])
        return product if keepdim else product.squeeze(axes[0])
    return np.prod(work, axes, keepdims=keepdim)


def _halved_product(work: np.ndarray, axis: int) -> np.ndarray:
    """The product along ``axis`` (kept, of size 1), by halving: each pass multiplies the first half of the
    elements by the second (an odd one out joins the first)."""
    last = axis == work.ndim - 1
    left = work if last else np.moveaxis(work, axis, -1)
    while left.shape[-1] >= _HALVED_FROM:
        half = left.shape[-1] // 2
        product = left[..., :half] * left[..., half:2 * half]
        if left.shape[-1] % 2:
            product[..., :1] *= left[..., 2 * half:]
        left = product
    product = np.multiply.reduce(left, -1, keepdims=True)
    return product if last else np.moveaxis(product, -1, axis)


def _product_of_others(x: Tensor, out: Tensor, axes: tuple, has_zero: bool) -> Tensor:
    """For each element, the product of the other elements over ``axes`` (``out`` keeps the reduced dims as 1s).

    Without zeros that is ``out / x``. With zeros, the products before and after each element along the
    (flattened) dim: no division, and differentiable again (a zero's neighbours depend on it).
    """
    if not has_zero:
        return out / x
    if len(axes) == 1:
        return _others_along(x, axes[0])
    return _others_along(x.reshape(-1), 0).reshape(x.shape)


def _others_along(x: Tensor, axis: int) -> Tensor:
    n = x.shape[axis]
    one = ones_like(x.narrow(axis, 0, 1))
    before = cumprod(cat([one, x.narrow(axis, 0, n - 1)], axis), axis)
    after = _reversed_scan(_cumprod, cat([x.narrow(axis, 1, n - 1), one], axis), axis)
    return before * after


@ember_function
def prod(input: Tensor, dim: int = _EVERY_DIM, keepdim: bool = False, *, dtype=None,
         out: Tensor | None = None) -> Tensor:
    """The product of the elements (over ``dim``, an int, if given); integers and bools multiply as int64.

    >>> ember.prod(ember.tensor([[1., 2.], [3., 4.]]), 1)
    tensor([ 2., 12.])
    """
    x = require_tensor(input, "prod")
    if out is not None:
        if dim is _EVERY_DIM:
            raise out_without_dim("prod")
        dtype = dtype_from_out("prod", out, dtype)
    x = real_part_for(x, dtype)
    if dim is _EVERY_DIM:
        if keepdim:
            raise TypeError("prod() received an invalid combination of arguments: keepdim=True needs a dim; "
                            "e.g. x.prod(0, keepdim=True)")
        result = ProdAll.apply(x, tuple(range(x._data.ndim)), False, dtype)
    else:
        if not isinstance(dim, (int, np.integer)):
            raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__} (one dim at a time, "
                            "e.g. x.prod(0).prod(0); leave dim out for every element)")
        result = Prod.apply(x, reduction_axes(x, dim, "prod"), keepdim, dtype)
    return result if out is None else into_out("prod", result, out, x)


# ----------------------------------------------------------------- nansum, nanmean, count_nonzero


class Nansum(Function):
    """The sum over ``axes`` with nan counted as 0; a nan element gets no gradient."""

    backward_name = "NansumBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x, axes, keepdim, dtype):
        data = x._data
        target = _sum_dtype(data, dtype)
        work = data
        if _dtype.kind(work.dtype) in "fc":  # the nans go before the cast: one made an integer would be no 0
            nan = np.isnan(work)
            if nan.any():  # (the usual data has none: then no copy)
                work = np.where(nan, 0, work)
        work = _in_single(work.astype(target, copy=False))
        out = np.asarray(_cascade.add_reduce(work, axes, None, keepdim)).astype(target, copy=False)
        out = reduced(out, data if keepdim else None)  # (kept 1s: see reduced)
        ctx.shape, ctx.axes, ctx.keepdim = data.shape, axes, keepdim
        ctx.save_for_backward(x)  # as torch: where its nans are is read in the backward
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        (grad,) = with_reduced_dims(ctx.shape, ctx.axes, ctx.keepdim, grad)
        return expanded(grad, ctx.shape) * (x == x), None, None, None


@ember_function
def nansum(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *, dtype=None,
           out: Tensor | None = None) -> Tensor:
    """The sum over ``dim`` (every dim when None), treating nan as 0.

    >>> ember.nansum(ember.tensor([1., -1., 4.]).sqrt())  # sqrt(-1) is nan
    tensor(3.)
    """
    x = _no_complex("nansum", input)
    dtype = _nansum_dtype(x, dtype, out)
    result = Nansum.apply(x, reduction_axes(x, dim, "nansum"), keepdim, dtype)
    return result if out is None else into_out("nansum", result, out, x)


def _nansum_dtype(x: Tensor, dtype, out):
    """The dtype nansum adds in: ``dtype``, or ``out``'s. As torch, floats (which may hold nan) are added in a float
    dtype only when ``out`` sets it, and never in a complex one; integers, which hold none, are summed in any."""
    given = dtype
    if out is not None:
        dtype = dtype_from_out("nansum", out, dtype)
    if dtype is None or _dtype.kind(x._data.dtype) != "f":
        return dtype
    target = _dtype.to_dtype(dtype)
    if target.is_complex or (given is None and not target.is_floating_point):
        raise NotImplementedError(f'"nansum" not implemented for \'{_dtype.scalar_type_name(target.np)}\'; '
                                  "sum in a float dtype, or convert the result")
    return dtype


def _no_complex(op: str, input) -> Tensor:
    """``input``, which must be a real tensor: torch has no nan-skipping sum of complex numbers."""
    x = require_tensor(input, op)
    if x._data.dtype.kind == "c":
        raise RuntimeError(f"{op}: nansum does not support complex inputs (got {x.dtype}); sum the real and "
                           "imaginary parts apart, e.g. ember.complex(x.real.nansum(), x.imag.nansum())")
    return x


@ember_function
def nanmean(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *, dtype=None,
            out: Tensor | None = None) -> Tensor:
    """The mean over ``dim`` of the elements that are not nan (nan if there are none).

    >>> ember.nanmean(ember.tensor([1., -1., 4.]).sqrt())  # sqrt(-1) is nan
    tensor(1.5000)
    """
    x = _no_complex("nanmean", input)
    if _dtype.kind(x._data.dtype) != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_dtype.scalar_type_name(x._data.dtype)}; convert first, e.g. x.float()")
    if dtype is not None and _dtype.kind(np.dtype(_dtype.to_dtype(dtype).np)) not in "fc":
        raise RuntimeError(
            "nanmean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
            f"dtype. Got: {_dtype.scalar_type_name(np.dtype(_dtype.to_dtype(dtype).np))}; pass dtype=ember.float32 "
            "or leave it out"
        )
    axes = reduction_axes(x, dim, "nanmean")
    result = Nansum.apply(x, axes, keepdim, dtype) / (x == x).sum(axes, keepdim)
    return result if out is None else into_out("nanmean", result, out, x)


@ember_function
def count_nonzero(input: Tensor, dim: int | tuple[int, ...] | None = None) -> Tensor:
    """The number of elements that are not 0, over ``dim`` (every dim when None), as int64.

    >>> ember.count_nonzero(ember.tensor([[0, 1], [2, 3]]), dim=0)
    tensor([1, 2])
    """
    x = require_tensor(input, "count_nonzero")
    axes = reduction_axes(x, dim, "count_nonzero")
    return wrap(reduced(np.asarray(np.count_nonzero(x._data, axes) if axes else x._data != 0, np.int64)))


# ----------------------------------------------------------------- var, std, var_mean, std_mean


class Var(Function):
    """The variance over ``axes`` with ``correction``: the squared deviations summed, over ``n - correction``.

    ``root`` gives the standard deviation; ``with_mean`` also returns the mean (one node, two results).
    ``whole``: no dim was named (or x is 0-d), which changes torch's gradient where no degree of freedom is left.
    """

    backward_name = "VarBackward0"
    backward_on_arrays = True  # (the mean and the select below take arrays or tensors)

    @staticmethod
    def forward(ctx, x, axes, correction, keepdim, root, with_mean, whole):
        data = x._data
        if not (with_mean or keepdim or ctx.needs_input_grad[0]) and (data.dtype is _SINGLE or data.dtype is _DOUBLE) \
                and len(axes) == data.ndim > 0 and data.size < _cascade.FROM:
            spread = _unrecorded_spread_of_all(data, correction, root)  # x.var(): nothing to keep on ctx
            if spread is not None:
                return wrap(spread)
        count = _count(data.shape, axes)
        ctx.dof = count - correction  # (below 0 too: torch's gradient along named dims divides by it)
        dof = ctx.dof if ctx.dof > 0 else 0
        work = _in_single(data)
        if not keepdim and len(axes) == work.ndim > 0 and work.size < _cascade.FROM and work.dtype.kind == "f":
            spread, mean = quietly_on_objection(IGNORE_ALL, _spread_of_all, work, count, dof, root)
        else:
            spread, mean = quietly(IGNORE_ALL, _spread, work, axes, keepdim, count, dof, root)
        if data.dtype is _SINGLE and _beyond_single(work, spread, mean, root):
            # squared deviations beyond single's range: in double, as torch computes a float32 variance (its
            # complex64 one stays in single, and so does this), then rounded once
            spread, mean = quietly(IGNORE_ALL, _spread, work.astype(np.float64), axes, keepdim, count, dof, root)
        ctx.axes, ctx.keepdim, ctx.root, ctx.count, ctx.whole = axes, keepdim, root, count, whole
        real = spread.dtype if data.dtype.kind == "c" else data.dtype  # (the spread of complex numbers is real)
        out = wrap(spread.astype(real, copy=False))
        ctx.save_for_backward(x, out if root else None)
        if not with_mean:
            return out
        ctx.set_materialize_grads(False)  # an unused result adds nothing (zeros times a nan deviation would be nan)
        return out, wrap(mean.reshape(spread.shape).astype(data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad, grad_mean=None):
        x, out = ctx.saved_tensors
        # on arrays, without the degrees of freedom, 0 * inf is nan, quietly, as on tensors
        total = quietly_on_objection(IGNORE_ALL, _var_gradient, ctx, x, out, grad, grad_mean)
        return total, None, None, None, None, None, None


def _var_gradient(ctx, x, out, grad, grad_mean):
    """Var's gradient for ``x``, from its result's (``grad``) and the mean's (``grad_mean``); either may be None."""
    total = None
    if grad is not None:
        if ctx.root:  # as torch: where the deviation is 0, so is the gradient (not nan)
            grad, out = with_reduced_dims(x.shape, ctx.axes, ctx.keepdim, grad, out)
            zero = out == 0
            grad = _select(zero, 0.0, grad / (2 * _select(zero, 1.0, out)))
        else:
            (grad,) = with_reduced_dims(x.shape, ctx.axes, ctx.keepdim, grad)
        mean = _kept_mean(x, ctx.axes, ctx.count)
        if ctx.dof <= 0 and ctx.whole:  # as torch: +inf whatever the deviation's sign, nan where it is exactly 0
            total = grad * _select(x == mean, math.nan, math.inf)
        else:
            total = grad * (x - mean) * (2.0 / ctx.dof if ctx.dof else math.inf)
    if grad_mean is not None:
        (grad_mean,) = with_reduced_dims(x.shape, ctx.axes, ctx.keepdim, grad_mean)
        part = expanded(grad_mean, x.shape) / ctx.count
        total = part if total is None else total + part
    return total


_SQUARE_ROOT_OF_TINY = float(np.sqrt(np.finfo(np.float32).tiny))  # 1.1e-19


def _beyond_single(work: np.ndarray, spread: np.ndarray, mean: np.ndarray, root: bool) -> bool:
    """Whether a float32 variance (or, ``root``, deviation) may have lost its value to single's range: it is
    inf (squares of deviations from 1.9e19 on overflow; an input's own inf gives the same in double), or below
    single's smallest normal number while the values are not all the same (their squares underflowed)."""
    tiny = _SQUARE_ROOT_OF_TINY if root else _TINY_SINGLE
    if spread.size == 1:  # the usual var() of a whole tensor: Python's comparisons, at a fraction of NumPy's cost
        value = spread.item()
        if tiny <= value < math.inf or value != value:
            return False
        return value == math.inf or value != 0 or bool((work != mean).any())
    if np.isinf(spread).any():
        return True
    small = spread < tiny
    return bool(small.any() and ((spread[small] != 0).any() or (work != mean).any()))


_TINY_SINGLE = float(np.finfo(np.float32).tiny)


def _unrecorded_spread_of_all(data: np.ndarray, correction, root: bool) -> "np.ndarray | None":
    """The variance (or, ``root``, deviation) of every element of a small float32 or float64 ``data``, as Var's
    forward computes it; None where a float32 one left single's range (the forward's general path redoes it in
    double)."""
    count = data.size
    spread, mean = quietly_on_objection(IGNORE_ALL, _spread_of_all, data, count,
                                        count - correction if count > correction else 0, root)
    if data.dtype is _SINGLE and _beyond_single(data, spread, mean, root):
        return None
    return spread


def _spread(work: np.ndarray, axes: tuple, keepdim: bool, count: int, dof: float, root: bool) -> tuple:
    """(the variance or its root, the mean) of ``work`` over ``axes``: nan or inf without degrees of freedom."""
    mean = _cascade.add_reduce(work, axes, None, True) / work.dtype.type(count)
    deviation = work - mean
    squared = deviation * deviation if work.dtype.kind != "c" else deviation.real ** 2 + deviation.imag ** 2
    variance = np.asarray(_cascade.add_reduce(squared, axes, None, keepdim) / squared.dtype.type(dof))
    return reduced(np.sqrt(variance) if root else variance), reduced(np.asarray(mean))


def _spread_of_all(work: np.ndarray, count: int, dof: float, root: bool) -> tuple:
    """_spread over every dim of a small real ``work``: the same sums (NumPy adds every dim as one run, as
    _cascade.add_reduce does below its blocks' size), with the mean a NumPy scalar. A scalar operand spares
    the broadcasting of a (1, 1) mean, which costs NumPy twice the subtraction itself."""
    scalar = work.dtype.type
    mean = _add_reduce(work, None) / scalar(count)
    squared = work - mean
    squared *= squared
    variance = np.asarray(_add_reduce(squared, None) / scalar(dof))
    return (np.sqrt(variance) if root else variance), np.asarray(mean)


class Std(Var):
    backward_name = "StdBackward0"


class VarMean(Var):
    backward_name = "VarMeanBackward0"


class StdMean(Var):
    backward_name = "StdMeanBackward0"


def _correction(op: str, unbiased, correction) -> float:
    """The number subtracted from the count: ``correction``, or 1 (0 if ``unbiased`` is False)."""
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: both unbiased and correction; "
                        f"pass one (unbiased=False is correction=0)")
    if correction is not None:
        return correction
    return 0 if unbiased is False else 1


def _moments(op: str, function: type, input, dim, unbiased, keepdim: bool, correction, out, root: bool,
             with_mean: bool):
    x = require_tensor(input, op)
    if isinstance(dim, bool):  # var(x, True): the legacy form whose one argument is unbiased
        if unbiased is not None:
            raise TypeError(f"{op}() received an invalid combination of arguments: dim={dim!r} and unbiased; "
                            "pass the dims as ints")
        dim, unbiased = None, dim
    if x._data.dtype.kind not in "fc" and _dtype.kind(x._data.dtype) not in "fc":  # (bfloat16's NumPy kind is 'V')
        raise RuntimeError(f"{op}(): std and var only support floating point and complex dtypes; got "
                           f"{_dtype.scalar_type_name(x._data.dtype)}, convert first, e.g. x.float()")
    axes = reduction_axes(x, dim, op)
    correction = 1 if unbiased is None and correction is None else _correction(op, unbiased, correction)
    if _count(x._data.shape, axes) - correction <= 0:
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=user_stacklevel())
    result = function.apply(x, axes, correction, keepdim, root, with_mean, dim is None or x._data.ndim == 0)
    return result if out is None else into_out(op, result, out, x)


@ember_function
def var(input: Tensor, dim: int | tuple[int, ...] | None = None, unbiased: bool | None = None,
        keepdim: bool = False, *, correction: float | None = None, out: Tensor | None = None) -> Tensor:
    """The variance over ``dim`` (every dim when None), divided by ``n - correction`` (``correction=1``).

    >>> ember.var(ember.tensor([1., 2., 3., 4.])), ember.var(ember.tensor([1., 2., 3., 4.]), correction=0)
    (tensor(1.6667), tensor(1.2500))
    """
    if dim is None and unbiased is None and correction is None and out is None and keepdim is False and \
            _of_every_float(input):
        return Var.apply(input, tuple(range(input._data.ndim)), 1, False, False, False, True)  # x.var(): no checks
    return _moments("var", Var, input, dim, unbiased, keepdim, correction, out, False, False)


def _of_every_float(input) -> bool:
    """Whether ``var(input)`` (or ``std``) of every element needs none of _moments' checks: a plain float tensor of
    more than one element (one leaves no degree of freedom, and torch warns)."""
    return type(input) is Tensor and input._data.size > 1 and input._data.dtype.kind == "f"


@ember_function
def std(input: Tensor, dim: int | tuple[int, ...] | None = None, unbiased: bool | None = None,
        keepdim: bool = False, *, correction: float | None = None, out: Tensor | None = None) -> Tensor:
    """The standard deviation over ``dim``: the square root of ``var``.

    >>> ember.std(ember.tensor([[1., 3.], [2., 2.]]), dim=1)
    tensor([1.4142, 0.0000])
    """
    if dim is None and unbiased is None and correction is None and out is None and keepdim is False and \
            _of_every_float(input):
        return Std.apply(input, tuple(range(input._data.ndim)), 1, False, True, False, True)  # x.std(), as x.var()
    return _moments("std", Std, input, dim, unbiased, keepdim, correction, out, True, False)


@ember_function
def var_mean(input: Tensor, dim: int | tuple[int, ...] | None = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None) -> tuple:
    """``(var, mean)`` over ``dim``, a plain tuple (as in torch, with no ``out=``).

    >>> ember.var_mean(ember.tensor([1., 2., 3.]))
    (tensor(1.), tensor(2.))
    """
    return _moments("var_mean", VarMean, input, dim, unbiased, keepdim, correction, None, False, True)


@ember_function
def std_mean(input: Tensor, dim: int | tuple[int, ...] | None = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None) -> tuple:
    """``(std, mean)`` over ``dim``, a plain tuple.

    >>> ember.std_mean(ember.tensor([1., 2., 3.]))
    (tensor(1.), tensor(2.))
    """
    return _moments("std_mean", StdMean, input, dim, unbiased, keepdim, correction, None, True, True)


# ----------------------------------------------------------------- logsumexp


class Logsumexp(Function):
    """``log(sum(exp(x)))`` over ``axes``, computed after taking out the largest element (no overflow)."""

    backward_name = "LogsumexpBackward0"
    torch_saved_tensors = {"result": 1, "self": 0}
    torch_saved_values = {"dim": "axes", "keepdim": "keepdim"}

    @staticmethod
    def jvp(ctx, tangent, axes_tangent, keepdim_tangent):
        x, axes, keepdim = ctx.primals
        kept = ctx.result if keepdim else ctx.result.reshape([1 if d in axes else n for d, n in enumerate(x.shape)])
        return ((x - kept).exp() * tangent).sum(axes, keepdim=keepdim)

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        data = float_result(x._data)
        result = quietly(IGNORE_ALL, _logsumexp, _in_single(data), axes, keepdim, data.dtype == _dtype.HALF)
        out = wrap(reduced(result.astype(data.dtype, copy=False)))
        ctx.axes, ctx.keepdim = axes, keepdim
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        grad, out = with_reduced_dims(x.shape, ctx.axes, ctx.keepdim, grad, out)
        return grad * conjugated((x - out).exp()), None, None


def _logsumexp(work: np.ndarray, axes: tuple, keepdim: bool, half: bool) -> np.ndarray:
    """Infinite largest elements are not taken out (inf - inf would be nan): their sum is that infinity.

    For a ``half`` input, torch rounds each step to half: so does this.
    """
    step = _as_half if half else _as_is
    if work.size:  # (complex numbers are shifted by the largest real part: NumPy would order them)
        top = np.max(work.real if work.dtype.kind == "c" else work, axes, keepdims=True)
        top = np.where(np.isfinite(top), top, 0)
    else:
        top = np.zeros((), work.dtype)
    exps = step(np.exp(step(work - top)))
    total = step(np.log(step(_cascade.add_reduce(exps, axes, None, True)))) + top
    return np.asarray(total if keepdim else total.reshape([n for i, n in enumerate(work.shape) if i not in axes]))


def _as_half(single: np.ndarray) -> np.ndarray:
    return single.astype(_dtype.HALF).astype(_SINGLE)


def _as_is(array: np.ndarray) -> np.ndarray:
    return array


@ember_function
def logsumexp(input: Tensor, dim: int | tuple[int, ...], keepdim: bool = False, *,
              out: Tensor | None = None) -> Tensor:
    """``log(exp(input).sum(dim))``, without overflow; integers give the default float dtype.

    >>> ember.logsumexp(ember.tensor([1000., 1000.]), dim=0)
    tensor(1000.6932)
    """
    x = require_tensor(input, "logsumexp")
    _check_logsumexp_dim(x, dim, keepdim)
    result = Logsumexp.apply(x, reduction_axes(x, dim, "logsumexp"), keepdim)
    return result if out is None else into_out("logsumexp", result, out, x)


def _check_logsumexp_dim(x: Tensor, dim, keepdim: bool) -> None:
    """As torch: dims must be named; an empty list reduces every dim, but only with keepdim (or nothing to sum)."""
    if dim is None:
        raise TypeError("logsumexp() missing 1 required positional arguments: \"dim\"; name the dims to reduce, "
                        "e.g. ember.logsumexp(x, dim=tuple(range(x.dim())))")
    if not isinstance(dim, (int, np.integer)) and len(dim) == 0 and not keepdim and x._data.ndim and x._data.size:
        raise RuntimeError(f"logsumexp(): output with shape [] doesn't match the broadcast shape "
                           f"{[1] * x._data.ndim}: dim=() reduces every dim, which needs keepdim=True here; "
                           "or name the dims")


# ----------------------------------------------------------------- softmax and log_softmax


class Softmax(Function):
    """``exp(x)`` over its sum along ``axes`` (one dim, or none for a 0-d tensor), the largest taken out first
    (but on short rows whose sums allow it: see :func:`_softmax`)."""

    backward_name = "SoftmaxBackward0"
    torch_saved_tensors = {"result": 0}
    torch_saved_values = {"dim": lambda node: node.axes[0] if node.axes else 0}  # (a 0-d input: no axes)
    backward_on_arrays = True  # the formula's sum goes through _kept_sum, which takes both
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x, axes):
        data = x._data
        if data.dtype is _SINGLE or data.dtype is _DOUBLE:
            try:  # (quietly_on_objection's steps, spelled out: the call costs 3 % of a small softmax)
                out = wrap(_softmax(data, axes))
            except (FloatingPointError, RuntimeWarning):
                out = wrap(quietly(IGNORE_ALL, _softmax, data, axes))
        else:
            out = wrap(quietly(IGNORE_ALL, _softmax, _in_single(data), axes).astype(data.dtype, copy=False))
        ctx.axes = axes
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        if _same_arrays(grad, out):  # first order: the formula below, its last step in place
            products = grad * out
            sums = _short_row_sums(products, ctx.axes)
            difference = grad - (sums if sums is not None else _add_reduce(products, ctx.axes, None, None, True))
            difference *= out
            return difference, None
        return out * (grad - _kept_sum(grad * out, ctx.axes)), None


def _same_arrays(grad, out) -> bool:
    """Whether a formula on arrays may take its steps in place: arrays of one dtype, not 0-d (NumPy's arithmetic
    gives scalars for those)."""
    return type(grad) is np.ndarray and type(out) is np.ndarray and grad.dtype is out.dtype and out.ndim > 0


def _softmax(work: np.ndarray, axes: tuple) -> np.ndarray:
    """The exps of ``work`` less its largest, over their sum: one new array, the steps in place on it.

    Short rows skip the largest (a reduction, the dearest step on a small array) where their sums allow it: each
    row's sum at least 2^-8 and all together below 2^100 (a nan fails that test). The shift cancels in the
    quotient, so only rounding tells the two forms apart. Each row's sum is read once, from its first column.
    """
    ones = _short_row_ones(work, axes)
    if ones is not None:
        exps = np.exp(work)
        sums = exps.dot(ones)
        listed = sums.ravel()[::sums.shape[-1]].tolist()
        if min(listed) >= _SMALLEST_SAFE_SUM and sum(listed) < _LARGEST_SAFE_SUM:
            exps /= sums
            return exps
    work = row_major(work)  # torch's result is contiguous
    if not work.size:
        return work.copy()
    exps = work - _largest(work, axes, None, None, True)
    if not work.ndim:  # NumPy gives a scalar for 0-d operands
        exps = np.asarray(exps)
    np.exp(exps, out=exps)
    exps /= _add_reduce(exps, axes, None, None, True)
    return exps


_largest, _add_reduce = np.maximum.reduce, np.add.reduce  # the ufuncs' own reductions, without NumPy's wrappers

_FEW, _FEW_IN_A_ROW = 4096, 1024  # up to these many elements (and in a row), rows are summed by a product
_SPREAD_ROW = 16  # up to this many in a row, the product spreads each sum over its row: see _short_row_ones
# (shape, axes, dtype) -> the read-only matrix of ones that sums rows of that shape, or None where they are not short
_ROW_ONES: dict = {}
_UNSEEN = object()
# Row sums outside these bounds send softmax to the shifted form: below, exps rounded to subnormals would lose
# digits that the quotient keeps; above, a sum nears overflow.
_SMALLEST_SAFE_SUM, _LARGEST_SAFE_SUM = 2.0 ** -8, 2.0 ** 100


def _short_row_ones(values: np.ndarray, axes: tuple) -> np.ndarray | None:
    """The matrix of ones whose product with ``values`` sums its rows along ``axes``, where those are short rows: a
    float32 or float64 array, contiguous, few elements, summed along its last dim. There NumPy's reductions cost
    three times such a product (1 µs against 0.3 on 16 elements). None elsewhere.

    Rows of up to 16 get each sum repeated along its row (dividing by them then needs no broadcasting, which costs
    NumPy twice a plain division on small arrays); longer ones keep it as a dim of one (where the square of ones
    would cost more than it saves). The answer for a shape is looked up once made: the checks cost more than that.
    """
    ones = _ROW_ONES.get((values.shape, axes, values.dtype), _UNSEEN)
    if ones is _UNSEEN:
        ones = _ones_for_rows(values.shape, axes, values.dtype)
    return ones if ones is not None and values.flags.c_contiguous else None


def _ones_for_rows(shape: tuple, axes: tuple, dtype: np.dtype) -> np.ndarray | None:
    size = math.prod(shape)
    short = (dtype is _SINGLE or dtype is _DOUBLE) and bool(shape) and axes[0] == len(shape) - 1 and \
        0 < size <= _FEW and shape[-1] <= _FEW_IN_A_ROW
    ones = None
    if short:
        length = shape[-1]
        ones = np.ones((length, length if length <= _SPREAD_ROW else 1), dtype)
        ones.flags.writeable = False
    if len(_ROW_ONES) > 64:
        _ROW_ONES.clear()
    _ROW_ONES[shape, axes, dtype] = ones
    return ones


def _short_row_sums(values: np.ndarray, axes: tuple) -> np.ndarray | None:
    """The sums of ``values`` along ``axes`` by a product with ones, where :func:`_short_row_ones` finds short rows
    (repeated along rows of up to 16); else None."""
    ones = _short_row_ones(values, axes)
    return None if ones is None else values.dot(ones)


class LogSoftmax(Function):
    """``x - logsumexp(x)`` along ``axes``: the log of softmax, without its rounding to 0."""

    backward_name = "LogSoftmaxBackward0"
    torch_saved_tensors = {"result": 0}
    torch_saved_values = {"dim": lambda node: node.axes[0] if node.axes else 0}  # (a 0-d input: no axes)
    backward_on_arrays = True

    @staticmethod
    def jvp(ctx, tangent, axes_tangent):
        return tangent - _kept_sum(ctx.result.exp() * tangent, ctx.axes)

    @staticmethod
    def forward(ctx, x, axes):
        data = x._data
        if data.dtype is _SINGLE or data.dtype is _DOUBLE:
            try:  # (quietly_on_objection's steps, spelled out, as in Softmax)
                out = wrap(_log_softmax(data, axes))
            except (FloatingPointError, RuntimeWarning):
                out = wrap(quietly(IGNORE_ALL, _log_softmax, data, axes))
        else:
            out = wrap(quietly(IGNORE_ALL, _log_softmax, _in_single(data), axes).astype(data.dtype, copy=False))
        ctx.axes = axes
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        if _same_arrays(grad, out):  # first order: the formula below, its steps in place on one new array
            scaled = np.exp(out)
            sums = _short_row_sums(grad, ctx.axes)
            scaled *= sums if sums is not None else _add_reduce(grad, ctx.axes, None, None, True)
            return np.subtract(grad, scaled, scaled), None
        probabilities = out.exp() if isinstance(out, Tensor) else np.exp(out)
        return grad - probabilities * _kept_sum(grad, ctx.axes), None


def _log_softmax(work: np.ndarray, axes: tuple) -> np.ndarray:
    """``work`` less its largest, less the log of the sum of the exps of that: one new array, the last step in
    place on it. (Unlike softmax's, this shift does not cancel: without it, ``x - log(sum(exp(x)))`` would round
    the log of the whole sum, and a row's one finite entry would come out -1e-7, not 0.)"""
    ones = _short_row_ones(work, axes)
    if ones is not None:  # (contiguous and not empty: the checks below hold)
        shifted = work - _largest(work, axes, None, None, True)
        total = np.exp(shifted).dot(ones)
    else:
        work = row_major(work)  # torch's result is contiguous
        shifted = work - _largest(work, axes, None, None, True) if work.size else work - 0
        if not shifted.ndim or not shifted.size:  # a scalar, or an empty array (of any dtype): nothing in place
            return shifted - np.log(np.exp(shifted).sum(axes, keepdims=True))
        total = _add_reduce(np.exp(shifted), axes, None, None, True)
    shifted -= np.log(total, out=total)
    return shifted


# (number of dims, dim) -> the axes of softmax and log_softmax, for the dims in range of float32 and float64
# tensors of 1 to 4 dims: the usual call's checks in one look-up
_USUAL_AXES = {(ndim, dim, dtype): (dim % ndim,) for ndim in (1, 2, 3, 4) for dim in range(-ndim, ndim)
               for dtype in (_SINGLE, _DOUBLE)}


def _softmax_input(op: str, input, dim, dtype) -> tuple:
    """(the tensor, cast to ``dtype`` if given, and the axes) of softmax and log_softmax; floats only. (Their usual
    call, see _USUAL_AXES, does not come here.)"""
    if type(input) is Tensor and type(dim) is int and dtype is None:  # a float tensor, a dim in range
        data = input._data
        ndim = data.ndim
        if -ndim <= dim < ndim and data.dtype.kind == "f":  # (bfloat16, which NumPy files as 'V', goes below)
            return input, (dim % ndim,)
    x = require_tensor(input, op)
    if dim is None:
        raise TypeError(f"{op}() missing 1 required positional argument: 'dim'; e.g. ember.{op}(x, dim=-1)")
    (axis,) = normalize_dims(dim, x._data.ndim, op)
    if dtype is not None:
        x = to(x, dtype)
    if _dtype.kind(x._data.dtype) != "f" and x._data.size:  # (torch has nothing to compute on an empty tensor)
        kernel = "softmax_lastdim_kernel_impl" if op == "softmax" else "log_softmax_lastdim_kernel_impl"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(x._data.dtype)}\'; '
                                  f"{op} needs floats: pass dtype=ember.float32, or convert first")
    return x, (axis,) if x._data.ndim else ()


@ember_function
def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """``exp(input)`` normalised to sum to 1 along ``dim``; with ``dtype``, the input is cast to it first.

    >>> ember.softmax(ember.tensor([[1., 1.], [0., 1000.]]), dim=1)
    tensor([[0.5000, 0.5000],
            [0.0000, 1.0000]])
    """
    if type(input) is Tensor and type(dim) is int and dtype is None:
        axes = _USUAL_AXES.get((input._data.ndim, dim, input._data.dtype))
        if axes is not None:
            return Softmax.apply(input, axes)
    x, axes = _softmax_input("softmax", input, dim, dtype)
    return Softmax.apply(x, axes)


@ember_function
def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """The log of ``softmax(input, dim)``, computed directly (it stays finite where softmax rounds to 0).

    >>> ember.log_softmax(ember.tensor([0., 1000.]), dim=0)
    tensor([-1000.,     0.])
    """
    if type(input) is Tensor and type(dim) is int and dtype is None:
        axes = _USUAL_AXES.get((input._data.ndim, dim, input._data.dtype))
        if axes is not None:
            return LogSoftmax.apply(input, axes)
    x, axes = _softmax_input("log_softmax", input, dim, dtype)
    return LogSoftmax.apply(x, axes)
