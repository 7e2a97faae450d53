"""Reductions: sum, mean, and sum_to_size (how broadcast gradients are summed back).

>>> import ember
>>> x = ember.tensor([[1., 2.], [3., 4.]], requires_grad=True)
>>> x.sum(dim=1, keepdim=True)
tensor([[3.],
        [7.]], grad_fn=<SumBackward1>)
>>> x.mean().backward(); x.grad
tensor([[0.2500, 0.2500],
        [0.2500, 0.2500]])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._ops import _cascade
from ember._ops._jvp import linear_jvp
from ember._ops._quiet import IGNORE_ALL, IGNORE_OVER, quietly, quietly_on_objection
from ember._ops.copy import warn_of_discarded_imaginary_parts
from ember._ops._support import (
    broadcast_view, ember_function, expanded, normalize_dims, reduced, refuse_complex, require_tensor, wrap,
)
from ember._ops.out import dtype_from_out, into_out, into_out_of_its_dtype
from ember._tensor import Tensor
from ember.autograd.saved_attributes import input_sizes
from ember.autograd.function import Function

_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)

_add_reduce, _max_reduce, _min_reduce = np.add.reduce, np.maximum.reduce, np.minimum.reduce
_true_divide = np.true_divide
_asarray = np.asarray


def reduction_axes(x: Tensor, dim: int | tuple[int, ...] | None, op: str, empty_means_all: bool = True) -> tuple:
    """The non-negative axes a reduction of ``x`` over ``dim`` works on; () for a 0-d ``x``.

    None means every dim, and so does an empty ``dim`` (as torch's sum, mean, amax take it), unless
    ``empty_means_all`` is False (torch's all and any: no dim, nothing reduced). A dim given twice is an error.
    """
    ndim = x._data.ndim
    if dim is None:  # the common cases first, at a fraction of the general path's cost
        return tuple(range(ndim))
    if type(dim) is int and -ndim <= dim < ndim:
        return (dim % ndim,)
    if ndim == 0:
        _check_no_repeats(normalize_dims(dim, 0, op), op)  # still reject out-of-range and repeated dims
        return ()
    if dim is not None and not isinstance(dim, (int, np.integer)) and len(dim) == 0 and empty_means_all:
        dim = None
    axes = normalize_dims(dim, x._data.ndim, op)
    _check_no_repeats(axes, op)
    return axes


def _check_no_repeats(axes: tuple, op: str) -> None:
    if len(axes) > 1 and len(set(axes)) != len(axes):
        repeated = next(a for a in axes if axes.count(a) > 1)
        raise RuntimeError(f"{op}: dim {repeated} appears multiple times in the list of dims")


def real_part_for(x: Tensor, dtype) -> Tensor:
    """``x``, or its real part if it is complex and ``dtype`` is a real number type: a reduction's cast to such a
    dtype discards the imaginary part, with torch's warning (not NumPy's ComplexWarning from inside the reduction)."""
    if dtype is None or x._data.dtype.kind != "c" or np.dtype(_dtype.to_dtype(dtype).np).kind in "cb":
        return x
    warn_of_discarded_imaginary_parts()
    return x.real


def _sum_dtype(data: np.ndarray, dtype) -> np.dtype:
    if dtype is not None:
        return np.dtype(_dtype.to_dtype(dtype).np)
    if data.dtype.kind in "biu":
        return np.dtype(np.int64)  # integer sums widen to int64, as in torch
    return data.dtype


def _half_sum(data: np.ndarray, axes: tuple, keepdim: bool, target=_dtype.HALF) -> np.ndarray:
    """As torch: the elements as halves (or bfloat16), added up in single, the total rounded once (NumPy would
    add in half)."""
    return np.asarray(quietly(IGNORE_OVER, _summed_in_single, data, axes, keepdim, target))  # beyond range: inf


def _summed_in_single(data: np.ndarray, axes: tuple, keepdim: bool, target) -> np.ndarray:
    halves = data if data.dtype == target else _dtype.cast(data, target)
    return _cascade.add_reduce(halves.astype(np.float32), axes, None, keepdim).astype(target)


class Sum(Function):
    backward_name = "SumBackward1"
    torch_saved_values = {"dim": "axes", "keepdim": "keepdim", "self_sym_sizes": "shape"}
    backward_on_arrays = True  # reshape is a method of both; expanded() broadcasts either
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, x, axes, keepdim, dtype):
        data = x._data
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.shape, ctx.axes, ctx.keepdim = data.shape, axes, keepdim
        kept_from = data if keepdim else None  # (see reduced: the kept 1s laid out as torch's)
        if dtype is None and data.size < _SHORT_SUM and (data.dtype is _SINGLE or data.dtype is _DOUBLE):
            # the usual small float sum: none of the paths below (by rows, by blocks, in single) applies
            return wrap(reduced(_add_reduce(data, axes, None, out=..., keepdims=keepdim), kept_from))
        target = _sum_dtype(data, dtype)
        if target.itemsize == 2 and target in _dtype.LOW:
            return wrap(reduced(_half_sum(data, axes, keepdim, target), kept_from))
        if target is data.dtype and _by_rows(data, axes):
            return wrap(_row_sums(data, keepdim))
        if data.size >= _cascade.FROM:  # long dims summed by blocks, as accurate as torch's (see _cascade)
            return wrap(reduced(_cascade.add_reduce(data, axes, target, keepdim), kept_from))
        # ndarray.sum without its Python wrapper; out=...: a 0-d result is an array, which wrap takes as it is
        return wrap(reduced(_add_reduce(data, axes, target, out=..., keepdims=keepdim), kept_from))

    @staticmethod
    def backward(ctx, grad):
        if _one_value(grad):  # that value in every place of the input, at once
            return broadcast_view(grad, ctx.shape), None, None, None
        (grad,) = with_reduced_dims(ctx.shape, ctx.axes, ctx.keepdim, grad)
        return expanded(grad, ctx.shape), None, None, None


def _one_value(grad) -> bool:
    """Whether ``grad`` is an array of one value seen everywhere (the gradient of a loss summed further): a
    reduction's gradient is then one value too, with no need to put the reduced dims back first."""
    return type(grad) is np.ndarray and grad.strides.count(0) == grad.ndim and grad.size > 0  # (any() is ember's)


_ROWS_AT_MOST = 4096  # longer rows: NumPy's pairwise sum, whose rounding error grows more slowly
_ROWS_FROM = 4096  # fewer elements: NumPy's sum is the faster (a product with ones costs 4 µs whatever its size)
_SHORT_SUM = min(_ROWS_FROM, _cascade.FROM)  # fewer elements: neither the sum by rows nor the one by blocks


def _by_rows(data: np.ndarray, axes: tuple) -> bool:
    """Whether a sum over ``axes`` is one over the rows of a contiguous float32 or float64 matrix, large enough
    for BLAS to pay."""
    return (len(axes) == 1 and axes[0] == data.ndim - 1 and data.ndim >= 2 and data.size >= _ROWS_FROM
            and 2 <= data.shape[-1] <= _ROWS_AT_MOST and (data.dtype is _SINGLE or data.dtype is _DOUBLE)
            and data.flags.c_contiguous)


def _row_sums(data: np.ndarray, keepdim: bool) -> np.ndarray:
    """Each row's sum as a product with ones (BLAS): a quarter of the time of NumPy's sum along short rows."""
    width = data.shape[-1]
    sums = (data.reshape(-1, width) @ np.ones(width, data.dtype)).reshape(data.shape[:-1])
    return sums[..., None] if keepdim else sums


def with_reduced_dims(shape: tuple, axes: tuple, keepdim: bool, *tensors) -> tuple:
    """A reduction's result and gradient with the reduced ``axes`` back as 1s, so they broadcast against its input.

    ``shape`` is the input's; with ``keepdim`` the tensors already have those 1s.
    """
    if keepdim or not axes:
        return tensors
    if isinstance(tensors[0], Tensor):  # a recorded gradient: one unsqueeze per dim, as torch's graph has
        return tuple([_unsqueezed(t, axes) for t in tensors])
    if len(axes) == len(shape):
        kept = (1,) * len(shape)  # the usual loss: every dim reduced
    else:
        kept = tuple([1 if i in axes else n for i, n in enumerate(shape)])
    if len(tensors) == 1:  # a gradient alone, the usual call: a generator (a call of its own) costs 0.4 µs
        return (tensors[0].reshape(kept),)
    return tuple([t.reshape(kept) for t in tensors])


def _unsqueezed(tensor, axes: tuple):
    for axis in sorted(axes):
        tensor = tensor.unsqueeze(axis)
    return tensor


class _OverAxes:
    """The usual call of a reduction of four operands, ``(input, axes, keepdim, fourth)``, without keepdim and
    with ``_fourth`` fixed: given two operands, so that ``apply`` and the graph take their binary path (see
    SumAll). ``_full`` is the Function of four, whose forward and backward it calls (named, not found by
    ``super()``: that costs a tenth of a µs per call)."""

    _full: type
    _fourth = None

    @classmethod
    def forward(cls, ctx, x, axes):
        return cls._full.forward(ctx, x, axes, False, cls._fourth)

    @classmethod
    def backward(cls, ctx, grad):
        return cls._full.backward(ctx, grad)[0], None


class SumAlong(_OverAxes, Sum):
    """A sum over ``axes``, without keepdim or dtype."""

    backward_name = "SumBackward1"
    torch_saved_values = Sum.torch_saved_values
    _full = Sum


class SumAll(Sum):
    """A sum over every dim (torch's ``SumBackward0``): Sum's formula, given two arguments, not four, so that
    ``apply`` and the graph take their binary path (every loss passes here)."""

    backward_name = "SumBackward0"
    torch_saved_values = {"self_sym_sizes": input_sizes(0)}

    @staticmethod
    def forward(ctx, x, dtype):
        data = x._data
        ctx.shape = data.shape
        if dtype is None and data.size < _cascade.FROM and (data.dtype is _SINGLE or data.dtype is _DOUBLE):
            return wrap(_add_reduce(data, None, None, out=...))  # the usual loss: none of the paths below applies
        target = _sum_dtype(data, dtype)
        if target.itemsize == 2 and target in _dtype.LOW:
            return wrap(_half_sum(data, None, False, target))
        if data.size >= _cascade.FROM:
            return wrap(_cascade.add_reduce(data, None, target))
        return wrap(_add_reduce(data, None, target, out=...))  # (see Sum.forward)

    @staticmethod
    def backward(ctx, grad):
        # the gradient of the total has one element: seen in every place of the input, as it is
        if grad is _SEED_ONES.get(grad.dtype):  # loss.backward()'s one: seen in this shape by a view made once
            return one_everywhere(ctx.shape, grad.dtype), None
        return expanded(grad, ctx.shape), None


_SEED_ONES: dict = {}  # dtype -> a read-only 0-d one (see seed_one)
_ONES_SEEN: dict = {}  # (shape, dtype) -> that one seen in every place of shape


def seed_one(dtype: np.dtype) -> np.ndarray:
    """The gradient that ``loss.backward()`` starts from: a 0-d one of ``dtype``, read-only and made once.

    Nothing writes into it: a gradient handed to the user that may be it or a view of it is copied first.

    >>> seed_one(np.dtype(np.float32))
    array(1., dtype=float32)
    """
    one = _SEED_ONES.get(dtype)
    if one is None:
        one = _SEED_ONES[dtype] = np.ones((), dtype)
        one.setflags(write=False)
    return one


def one_everywhere(shape: tuple, dtype: np.dtype, divisor: int = 1) -> np.ndarray:
    """``seed_one(dtype) / divisor`` seen in every place of ``shape`` (read-only, no memory of its own): the
    gradient of a summed (or averaged over ``divisor`` elements) loss with respect to what was reduced. A program
    reduces few shapes, so each view is made once.

    >>> one_everywhere((2,), np.dtype(np.float32), 4)
    array([0.25, 0.25], dtype=float32)
    """
    key = (shape, dtype, divisor)
    view = _ONES_SEEN.get(key)
    if view is None:
        if len(_ONES_SEEN) >= 256:  # bounded: a program that reduces ever new shapes does not grow the table
            _ONES_SEEN.clear()
        one = seed_one(dtype)
        if divisor != 1:  # divided as a fresh one would be, the same value
            one = _asarray(one / divisor)
            one.setflags(write=False)
        view = _ONES_SEEN[key] = broadcast_view(one, shape)
    return view


class Mean(Function):
    backward_name = "MeanBackward1"
    torch_saved_values = {"dim": "axes", "keepdim": "keepdim", "self_sym_numel": lambda node: math.prod(node.shape),
                          "self_sym_sizes": "shape"}
    backward_on_arrays = True
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, x, axes, keepdim, target):
        ctx.shape = x._data.shape
        ctx.axes = axes
        ctx.keepdim = keepdim
        data = x._data
        n = len(axes)
        ctx.count = count = data.size if n == data.ndim else data.shape[axes[0]] if n == 1 else \
            math.prod([data.shape[a] for a in axes])
        # as torch: a half mean is summed and divided in single, then rounded once; another dtype= converts first
        work = np.float32 if target.itemsize == 2 and target in _dtype.LOW else target
        if data.dtype is not work and data.dtype != work:
            data = data.astype(work)
        if not count:  # 0 / 0: nan, quietly
            return wrap(quietly(IGNORE_ALL, _mean, data, axes, keepdim, count, target))
        # the usual mean runs at once, as add does (see _quiet); NumPy's objections to a total beyond range,
        # only where the user made them errors, send it round again quietly
        return wrap(quietly_on_objection(IGNORE_ALL, _mean, data, axes, keepdim, count, target))

    @staticmethod
    def backward(ctx, grad):
        count = ctx.count
        if _one_value(grad):  # (see Sum.backward) that one value, divided once, in every place of the input
            value = _asarray(grad.flat[0] / count if count else grad.flat[0])
            return broadcast_view(value, ctx.shape), None, None, None
        (grad,) = with_reduced_dims(ctx.shape, ctx.axes, ctx.keepdim, grad)
        # divided before it is expanded: one division per result, not per input element (the same values); an
        # empty input has no element to divide for, so its gradient (of no element) is not divided by 0
        return expanded(grad / count if count else grad, ctx.shape), None, None, None


def _mean(data: np.ndarray, axes: tuple, keepdim: bool, count: int, target) -> np.ndarray:
    """The total over ``axes`` divided by ``count``; the mean of nothing is nan (quietly, as in torch)."""
    # out=...: the ufuncs return 0-d arrays rather than NumPy scalars, which would have to be made arrays again
    if data.size >= _cascade.FROM:
        total = _cascade.add_reduce(data, axes, None, keepdim)
    else:
        total = _add_reduce(data, axes, None, out=..., keepdims=keepdim)
    mean = reduced(_true_divide(total, total.dtype.type(count), out=...))
    return mean if mean.dtype == target else mean.astype(target)


class MeanAll(Mean):
    """A mean over every dim (torch's ``MeanBackward0``): Mean's formula, given two arguments (see SumAll)."""

    backward_name = "MeanBackward0"
    torch_saved_values = {"self_sym_numel": "count", "self_sym_sizes": input_sizes(0)}

    @staticmethod
    def forward(ctx, x, target):
        data = x._data
        if data.dtype is target and (target is _SINGLE or target is _DOUBLE) and 0 < data.size < _cascade.FROM:
            # the usual loss: no conversion, nothing empty, no sum by blocks (see Mean.forward)
            ctx.shape = data.shape
            ctx.count = count = data.size
            return wrap(quietly_on_objection(IGNORE_ALL, _mean_of_all, data, count))
        return Mean.forward(ctx, x, tuple(range(data.ndim)), False, target)

    @staticmethod
    def backward(ctx, grad):
        count = ctx.count
        if count and grad is _SEED_ONES.get(grad.dtype):  # loss.backward()'s one (see SumAll.backward)
            return one_everywhere(ctx.shape, grad.dtype, count), None
        # one element, divided once and seen in every place of the input (see Mean.backward)
        return expanded(grad / count if count else grad, ctx.shape), None


def _mean_of_all(data: np.ndarray, count: int) -> np.ndarray:
    return _true_divide(_add_reduce(data, None, None, out=...), count, out=...)


class _EveryDim:
    """The default ``dim`` of sum and mean: every dim. Unlike ``dim=None`` it takes no ``keepdim``, as in torch."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<every dim>"


_EVERY_DIM = _EveryDim()


def _keepdim_without_dim(op: str) -> TypeError:
    return TypeError(
        f"{op}() received an invalid combination of arguments: keepdim=True needs a dim (torch has no {op}() overload "
        f"with keepdim and no dim); pass dim=None to reduce every dim, e.g. x.{op}(None, keepdim=True)"
    )


@ember_function
def sum(input, dim=_EVERY_DIM, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """Sum over ``dim`` (an int, a tuple, or all dims when None or not given)."""
    if out is not None:
        if dim is _EVERY_DIM:
            raise out_without_dim("sum")
        dtype = dtype_from_out("sum", out, dtype)
        return into_out("sum", sum.__wrapped__(input, dim, keepdim, dtype=dtype), out, input)
    x = real_part_for(require_tensor(input, "sum"), dtype)
    if dim is _EVERY_DIM:
        if keepdim:
            raise _keepdim_without_dim("sum")
        return SumAll.apply(x, dtype)
    if dim is None and not keepdim:
        return SumAll.apply(x, dtype)
    if keepdim or dtype is not None:
        return Sum.apply(x, reduction_axes(x, dim, "sum"), keepdim, dtype)
    return SumAlong.apply(x, reduction_axes(x, dim, "sum"))


@ember_function
def mean(input, dim=_EVERY_DIM, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """Mean over ``dim``; defined for floating tensors only (or with a floating ``dtype=``), as in torch."""
    if out is not None:
        return into_out("mean", mean.__wrapped__(input, dim, keepdim, dtype=dtype), out, input)
    if dim is _EVERY_DIM and keepdim:  # (refused before the dtype, as torch's argument parser refuses it)
        raise _keepdim_without_dim("mean")
    x = real_part_for(input if type(input) is Tensor else require_tensor(input, "mean"), dtype)
    target = _mean_dtype(x._data.dtype, dtype)
    if dim is _EVERY_DIM:
        return MeanAll.apply(x, target)
    if dim is None and not keepdim:
        return MeanAll.apply(x, target)
    return Mean.apply(x, reduction_axes(x, dim, "mean"), keepdim, target)


def _mean_dtype(input_dtype: np.dtype, dtype) -> np.dtype:
    """The dtype of a mean: ``dtype`` if given, else the input's; either way a floating one."""
    target = input_dtype if dtype is None else np.dtype(_dtype.to_dtype(dtype).np)
    if _dtype.kind(target) not in "fc":
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            f"mean(): could not infer output dtype. {which} dtype must be either a floating point or complex dtype. "
            f"Got: {_dtype.scalar_type_name(target)}; convert first, e.g. x.float().mean()"
        )
    return target


def expandable(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (so a gradient of ``target`` can be summed to ``shape``)."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def _summed_axes(shape: tuple, target: tuple) -> tuple:
    """The axes of ``shape`` to sum (keeping them) to reach ``target``: the leading extra ones, and 1s of target."""
    lead = len(shape) - len(target)
    return tuple(range(lead)) + tuple(i + lead for i, n in enumerate(target) if n == 1 and shape[i + lead] != 1)


def out_without_dim(op: str) -> TypeError:
    """torch's refusal of ``out=`` for a sum or product over every element (that form has no ``out``)."""
    return TypeError(f"{op}() received an invalid combination of arguments - got (Tensor, out=Tensor): the form "
                     f"without dim takes no out; give the dims, e.g. {op}(x, 0, out=out)")


def sum_to(data: np.ndarray, shape: tuple) -> np.ndarray:
    """``data`` summed down to ``shape``, which must broadcast to ``data.shape`` (NumPy's half of sum_to_size)."""
    axes = _summed_axes(data.shape, shape)
    return (_add_reduce(data, axes, None, None, True) if axes else data).reshape(shape)  # (ndarray.sum's own work)


def summed_to(grad, shape: tuple):
    """``grad`` summed down to ``shape``: ``Tensor.sum_to_size``, or the same sum of an array.

    Arrays have no ``sum_to_size`` method; with this, a formula can run on arrays (``backward_on_arrays``).
    """
    if type(grad) is np.ndarray:
        return sum_to(grad, shape) if grad.shape != shape else grad
    return grad.sum_to_size(shape)


@ember_function
def sum_to_size(input, *sizes, size=None) -> Tensor:
    """Sum ``input`` down to ``size``, which must broadcast to its shape (how broadcast gradients return).

    As torch: a sum over the dims that differ, kept, then a view without the leading ones.

    >>> ember.ones(3, 2, 2).sum_to_size(1, 2)
    tensor([[6., 6.]])
    """
    x = require_tensor(input, "sum_to_size")
    shape = _target_size(sizes, size)
    if not expandable(shape, x._data.shape):
        raise RuntimeError(f"sum_to_size: size {list(shape)} is not expandable to size {list(x._data.shape)}")
    if not shape:  # as torch: a 0-d size is a full sum, of a 0-d tensor too (a new tensor, integers in int64)
        return input.sum()
    if x._data.shape == shape:
        return input
    summed = Sum.apply(x, _summed_axes(x._data.shape, shape), True, None)
    return summed.view(shape) if len(shape) < x._data.ndim else summed


def _target_size(sizes: tuple, size) -> tuple:
    """The size ``sum_to_size`` was given: as numbers, one sequence, or the keyword ``size``."""
    if size is not None:
        if sizes:
            raise TypeError("sum_to_size() got the size twice: as positions and as the keyword 'size'; give one")
        sizes = (size,)
    if not sizes:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"; e.g. x.sum_to_size(1, 3)')
    return tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)


@ember_function
def all(input, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """True where every element (over ``dim``) is nonzero."""
    x = require_tensor(input, "all")
    if out is not None:
        _bool_out("all", out)
        return into_out("all", all.__wrapped__(x, dim, keepdim), out, x, differentiable=False)
    return wrap(_logical_result(np.all(x._data, axis=reduction_axes(x, dim, "all", empty_means_all=False),
                                       keepdims=keepdim), x, keepdim))


@ember_function
def any(input, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """True where some element (over ``dim``) is nonzero."""
    x = require_tensor(input, "any")
    if out is not None:
        _bool_out("any", out)
        return into_out("any", any.__wrapped__(x, dim, keepdim), out, x, differentiable=False)
    return wrap(_logical_result(np.any(x._data, axis=reduction_axes(x, dim, "any", empty_means_all=False),
                                       keepdims=keepdim), x, keepdim))


def _bool_out(op: str, out) -> None:
    if isinstance(out, Tensor) and out._data.dtype != np.bool_:
        raise RuntimeError(f"{op} only supports bool tensor for result, got: {_dtype.scalar_type_name(out._data.dtype)}"
                           f"; pass out=ember.empty(..., dtype=ember.bool)")


def _logical_result(result, x: Tensor, keepdim: bool) -> np.ndarray:
    """all/any give bool, except on uint8 where torch keeps uint8 (a legacy of masks stored as bytes)."""
    result = reduced(np.asarray(result), x._data if keepdim else None)
    return result.astype(np.uint8) if x._data.dtype == np.uint8 else result


class Amax(Function):
    """The largest (or smallest) value over ``axes``; its gradient is shared evenly among ties, as in torch."""

    backward_name = "AmaxBackward0"
    backward_on_arrays = True  # (see _ties_counted)

    @staticmethod
    def forward(ctx, x, axes, keepdim, largest):
        data = x._data
        # np.max and np.min without their Python wrappers
        out = wrap(reduced((_max_reduce if largest else _min_reduce)(data, axes, None, out=..., keepdims=keepdim),
                           data if keepdim else None))
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.save_for_backward(x, out)
            ctx.axes, ctx.keepdim = axes, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        grad, out = with_reduced_dims(x.shape, ctx.axes, ctx.keepdim, grad, out)
        ties = x == out
        # each result's share computed once, then spread over its ties: a pass over the input fewer than
        # grad * ties / count, with the same values (a row of nan has no tie: 0 * inf, nan, quietly)
        return quietly(IGNORE_ALL, _shared, ties, grad, _ties_counted(ties, ctx.axes, x.dtype)), None, None, None


def _shared(ties, grad, count):
    return ties * (grad / count)


def _ties_counted(ties, axes: tuple, dtype):
    """How many ties each result has, in ``dtype``, the reduced dims kept: of a tensor or of an array."""
    if isinstance(ties, Tensor):
        return ties.sum(axes, keepdim=True, dtype=dtype)
    return _add_reduce(np.asarray(ties), axes, dtype, None, True)  # (comparing 0-d arrays gives a NumPy bool)


class Amin(Amax):
    backward_name = "AminBackward0"


class AmaxAlong(_OverAxes, Amax):
    """The largest value over ``axes``, without keepdim."""

    backward_name = "AmaxBackward0"
    _full, _fourth = Amax, True  # (largest)


class AminAlong(_OverAxes, Amin):
    """The smallest value over ``axes``, without keepdim."""

    backward_name = "AminBackward0"
    _full, _fourth = Amin, False


@ember_function
def amax(input, dim=(), keepdim: bool = False, *, out=None) -> Tensor:
    """The largest value over ``dim`` (all dims when empty).

    >>> ember.amax(ember.tensor([[1., 5.], [3., 2.]]), dim=0)
    tensor([3., 5.])
    """
    x = input if type(input) is Tensor else require_tensor(input, "amax")
    axes = _extremum_axes(x, dim, "amax")
    result = Amax.apply(x, axes, keepdim, True) if keepdim else AmaxAlong.apply(x, axes)
    return result if out is None else into_out_of_its_dtype("amax", result, out, x)


@ember_function
def amin(input, dim=(), keepdim: bool = False, *, out=None) -> Tensor:
    """The smallest value over ``dim`` (all dims when empty)."""
    x = input if type(input) is Tensor else require_tensor(input, "amin")
    axes = _extremum_axes(x, dim, "amin")
    result = Amin.apply(x, axes, keepdim, False) if keepdim else AminAlong.apply(x, axes)
    return result if out is None else into_out_of_its_dtype("amin", result, out, x)


def _extremum_axes(x: Tensor, dim, op: str) -> tuple:
    """``reduction_axes`` for amax and amin, which have no value over nothing.

    As torch: on an empty tensor the dims must be named, and each must have elements (checked before repeats,
    and named as given).
    """
    data = x._data
    ndim = data.ndim
    if type(dim) is int and -ndim <= dim < ndim and data.size and data.dtype.kind != "c":  # the usual call
        return (dim % ndim,)
    if data.dtype.kind == "c":  # (complex numbers have no order)
        refuse_complex(op, data)
    if data.size == 0:
        given = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
        if not given:
            raise RuntimeError(
                f"{op}(): Expected reduction dim to be specified for input.numel() == 0: the tensor is empty, "
                "so name the dims to reduce with the 'dim' argument"
            )
        for d, axis in zip(given, normalize_dims(given, data.ndim, op)):
            if data.shape[axis] == 0:
                raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    return reduction_axes(x, dim, op)
