"""Extrema: max and min (of the whole tensor, along a dim, or of two tensors), argmax, argmin, aminmax,
maximum, minimum, fmax and fmin.

>>> import ember
>>> x = ember.tensor([[1., 5.], [3., 2.]], requires_grad=True)
>>> x.max(dim=1)
ember.return_types.max(
values=tensor([5., 3.], grad_fn=<MaxBackward0>),
indices=tensor([1, 0]))
>>> ember.maximum(ember.tensor([1., 4.]), ember.tensor([2., 3.]))
tensor([2., 4.])
"""
from __future__ import annotations

import numpy as np

from ember import _dtype

from ember import return_types
from ember._ops._support import (
    along, check_operand, ember_function, normalize_dims, promoted_arrays, reduced, refuse_complex, require_tensor, wrap,
)
from ember._ops.arithmetic import where
from ember._ops.out import into_exact_out, into_out, into_out_of_its_dtype
from ember._ops.reduction import _EVERY_DIM, _extremum_axes, _OverAxes, reduction_axes, with_reduced_dims
from ember._tensor import Tensor
from ember.autograd.function import Function


# ----------------------------------------------------------------- taking and adding back along a dim


class AddAlong(Function):
    """``values`` added into zeros of ``shape`` at ``indices`` along ``axis``: the gradient of a selection."""

    backward_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, values, indices, axis, shape):
        ctx.axis = axis
        ctx.save_for_backward(indices)  # as torch saves its index: freed by a backward without retain_graph
        out = np.zeros(shape, values._data.dtype)
        if indices.shape[axis] == 1:  # one index per slice (a max's): a plain write, at a fraction of add.at's cost
            out[along(indices, axis)] = values._data
        else:
            np.add.at(out, along(indices, axis), values._data)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return TakeAlong.apply(grad, indices, ctx.axis), None, None, None


class TakeAlong(Function):
    """The elements of ``x`` at ``indices`` along ``axis`` (NumPy's take_along_axis)."""

    backward_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, indices, axis):
        ctx.axis, ctx.shape = axis, x._data.shape
        ctx.save_for_backward(indices)  # as torch's gather saves its index
        return wrap(np.take_along_axis(x._data, indices, axis))

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return AddAlong.apply(grad, indices, ctx.axis, ctx.shape), None, None


# ----------------------------------------------------------------- max and min of the whole tensor


class MaxAll(Function):
    """The largest (or smallest) element; its gradient is shared evenly among the elements equal to it.

    As torch: a nan result is the nan elements' (each nan counts as equal to it).
    """

    backward_name = "MaxBackward1"
    torch_saved_tensors = {"result": 1, "self": 0}

    @staticmethod
    def forward(ctx, x, largest):
        data = x._data
        out = wrap(np.asarray((np.max if largest else np.min)(data)))
        ctx.save_for_backward(x, out)
        ctx.nan = _dtype.kind(data.dtype) == "f" and bool(np.isnan(out._data))
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        ties = ((x != x) if ctx.nan else (x == out)).to(x.dtype)
        return grad * ties / ties.sum(), None


class MinAll(MaxAll):
    backward_name = "MinBackward1"
    torch_saved_tensors = {"result": 1, "self": 0}


# ----------------------------------------------------------------- max and min along a dim


def _work_shape(shape: tuple) -> tuple:
    """A 0-d tensor reduces along its one (implicit) dim: NumPy sees it as one element."""
    return shape or (1,)


class MaxAlong(Function):
    """(values, indices) of the largest (or smallest) element along ``axis``; the first one where several tie.

    The gradient goes to the element chosen, as in torch.
    """

    backward_name = "MaxBackward0"
    backward_on_arrays = True  # on arrays, the gradient is written at the indices at once (AddAlong's forward)

    @staticmethod
    def forward(ctx, x, axis, keepdim, largest):
        data = x._data
        work = data.reshape(_work_shape(data.shape)) if not data.ndim else data
        indices = (work.argmax if largest else work.argmin)(axis, None, keepdims=True)
        values = work[along(indices, axis)]
        recorded = ctx.needs_input_grad[0]
        if recorded:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.axis, ctx.shape, ctx.kept = axis, data.shape, indices.shape  # (kept: the indices' shape with the dim)
        if not data.ndim:
            if recorded:
                ctx.save_for_backward(indices)  # (freed by a backward without retain_graph, as torch's)
            return wrap(values.reshape(())), wrap(indices.reshape(()).astype(np.int64))
        if not keepdim:  # (squeezing the kept dim costs a third of computing the reduced shape)
            values, indices = values.squeeze(axis), indices.squeeze(axis)
        returned = wrap(indices.astype(np.int64, copy=False))
        if recorded:
            # the indices returned, as torch saves them: a backward after they are written into refuses to run
            ctx.save_for_backward(returned)
        return wrap(values), returned

    @staticmethod
    def backward(ctx, grad, _):
        (indices,) = ctx.saved_tensors
        if type(indices) is not np.ndarray:
            indices = indices._data
        indices = indices.reshape(ctx.kept)
        grad = grad.reshape(ctx.kept)
        if type(grad) is np.ndarray:  # no graph to record: one write into zeros
            total = np.zeros(_work_shape(ctx.shape), grad.dtype)
            total[along(indices, ctx.axis)] = grad
            return total.reshape(ctx.shape), None, None, None
        return AddAlong.apply(grad, indices, ctx.axis, _work_shape(ctx.shape)).reshape(ctx.shape), None, None, None


class MinAlong(MaxAlong):
    backward_name = "MinBackward0"


class MaxOverAxis(_OverAxes, MaxAlong):
    """MaxAlong without keepdim (the usual call), given two operands (see _OverAxes)."""

    backward_name = "MaxBackward0"
    _full, _fourth = MaxAlong, True  # (largest)

    @classmethod
    def backward(cls, ctx, grad, _):  # two results, values and indices: a gradient for each
        return MaxAlong.backward(ctx, grad, _)[0], None


class MinOverAxis(MaxOverAxis):
    backward_name = "MinBackward0"
    _full, _fourth = MinAlong, False


_tuple_new = tuple.__new__


def _reduced_shape(shape: tuple, axis: int, keepdim: bool) -> tuple:
    if not shape:
        return ()
    if keepdim:
        return tuple([1 if i == axis else n for i, n in enumerate(shape)])
    return tuple([n for i, n in enumerate(shape) if i != axis])


def _int_dim(dim, op: str) -> int:
    """``dim`` as an int; anything else (a tuple, None, a bool) is refused as torch's argument parser refuses it."""
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    return int(dim)


def _one_axis(x: Tensor, dim: int, op: str) -> int:
    """``dim`` as a non-negative axis of ``x`` (0 for a 0-d tensor), which must have elements."""
    (axis,) = normalize_dims(_int_dim(dim, op), x._data.ndim, op)
    if x._data.ndim and x._data.shape[axis] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {dim} to have non-zero size. The tensor's shape is "
                         f"{list(x._data.shape)}: reduce along a dim that has elements")
    return axis


def _extremum(x, dim, keepdim: bool, other, out, largest: bool):
    """max and min: of the whole tensor, along ``dim`` (values and indices), or elementwise with ``other``."""
    if type(x) is Tensor and type(dim) is int and other is None and out is None:  # the usual call: a dim in range
        data = x._data
        ndim = data.ndim
        if -ndim <= dim < ndim and data.shape[dim] and data.dtype.kind != "c":
            pair = (MaxAlong if largest else MinAlong).apply(x, dim % ndim, True, largest) if keepdim \
                else (MaxOverAxis if largest else MinOverAxis).apply(x, dim % ndim)
            # the named tuple made as tuple makes it: its own __new__ (Python code) costs 0.2 µs more
            return _tuple_new(return_types.max if largest else return_types.min, pair)
    op = "max" if largest else "min"
    x = require_tensor(x, op)
    if dim is None:
        raise TypeError(f"{op}() received an invalid combination of arguments: dim=None is none of its forms; "
                        f"give no dim for the {op} of every element (x.{op}()), or an int dim")
    if dim is _EVERY_DIM:
        dim = None
    if other is None and isinstance(dim, Tensor):
        other, dim = dim, None
    if other is not None:
        if dim is not None or keepdim:
            raise TypeError(f"{op}() received an invalid combination of arguments: with another tensor it takes "
                            f"no dim or keepdim; e.g. ember.{op}(x, other)")
        return (maximum if largest else minimum).__wrapped__(x, other, out=out)
    complex_input = x._data.dtype.kind == "c"
    if dim is None:
        if complex_input:
            refuse_complex(f"{op}_all", x._data)
        return _of_everything(op, x, keepdim, out, largest)
    if complex_input:
        refuse_complex(op, x._data, f"{op}(): does not support complex input", RuntimeError)
    values, indices = (MaxAlong if largest else MinAlong).apply(x, _one_axis(x, dim, op), keepdim, largest)
    if out is not None:
        return getattr(return_types, op + "_out")(*_into_pair(op, (values, indices), out, x))
    return getattr(return_types, op)(values, indices)


def _of_everything(op: str, x: Tensor, keepdim: bool, out, largest: bool) -> Tensor:
    if keepdim:
        raise TypeError(f"{op}() received an invalid combination of arguments: keepdim=True needs a dim; "
                        f"e.g. x.{op}(0, keepdim=True)")
    if x._data.size == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    result = (MaxAll if largest else MinAll).apply(x, largest)
    return result if out is None else into_out(op, result, out, x)


def _into_pair(op: str, results: tuple, out, *inputs) -> tuple:
    """The results of a two-result op written into ``out``, a pair of tensors, as torch takes it."""
    if not isinstance(out, (tuple, list)) or len(out) != len(results):
        raise TypeError(f"{op}(): argument 'out' must be a tuple of {len(results)} Tensors, not {type(out).__name__}")
    return tuple([into_out_of_its_dtype(op, r, o, *inputs) for r, o in zip(results, out)])  # as torch: no cast


@ember_function
def max(input: Tensor, dim: int | Tensor = _EVERY_DIM, keepdim: bool = False, *, other: Tensor | None = None,
        out=None):
    """The largest element; along ``dim``, ``(values, indices)``; with another tensor, ``maximum``.

    >>> ember.max(ember.tensor([1., 3., 2.]))
    tensor(3.)
    >>> ember.max(ember.tensor([[1., 3.], [4., 2.]]), 1).indices
    tensor([1, 0])
    """
    return _extremum(input, dim, keepdim, other, out, True)


@ember_function
def min(input: Tensor, dim: int | Tensor = _EVERY_DIM, keepdim: bool = False, *, other: Tensor | None = None,
        out=None):
    """The smallest element; along ``dim``, ``(values, indices)``; with another tensor, ``minimum``.

    >>> ember.min(ember.tensor([[1., 3.], [4., 2.]]), 0)
    ember.return_types.min(
    values=tensor([1., 2.]),
    indices=tensor([0, 1]))
    """
    return _extremum(input, dim, keepdim, other, out, False)


# ----------------------------------------------------------------- argmax and argmin


def _arg_extremum(input, dim, keepdim: bool, largest: bool) -> Tensor:
    op = "argmax" if largest else "argmin"
    x = require_tensor(input, op)
    data = x._data
    if dim is not None:
        _int_dim(dim, op)  # before the dtype, as torch's argument parser
    if data.dtype == np.bool_:
        raise RuntimeError(f"{op}(): does not support bool input; convert first, e.g. x.to(ember.uint8)")
    if data.dtype.kind == "c":
        refuse_complex(op, data, f"{op}(): does not support complex input", RuntimeError)
    pick = np.argmax if largest else np.argmin
    if dim is None:
        if data.size == 0:
            raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
        index = np.asarray(pick(data), np.int64)
        return wrap(index.reshape((1,) * data.ndim) if keepdim else index)
    axis = _one_axis(x, dim, op)
    index = pick(data.reshape(_work_shape(data.shape)), axis=axis, keepdims=True).astype(np.int64)
    return wrap(index.reshape(_reduced_shape(data.shape, axis, keepdim)))


@ember_function
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out=None) -> Tensor:
    """The index of the largest element (of the flattened tensor when ``dim`` is None); the first of ties.

    >>> ember.argmax(ember.tensor([[1., 5.], [7., 2.]]))
    tensor(2)
    """
    result = _arg_extremum(input, dim, keepdim, True)
    return result if out is None else into_exact_out("argmax", result, out, input)


@ember_function
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out=None) -> Tensor:
    """The index of the smallest element (of the flattened tensor when ``dim`` is None); the first of ties.

    >>> ember.argmin(ember.tensor([[1., 5.], [7., 2.]]), dim=1)
    tensor([0, 1])
    """
    result = _arg_extremum(input, dim, keepdim, False)
    return result if out is None else into_exact_out("argmin", result, out, input)


# ----------------------------------------------------------------- aminmax


class Aminmax(Function):
    """The smallest and the largest element over ``axes``; each gradient is shared evenly among ties."""

    backward_name = "AminmaxBackward0"

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        data = x._data
        kept_from = data if keepdim else None  # (see reduced: the kept 1s laid out as torch's)
        low = wrap(reduced(np.asarray(np.min(data, axis=axes, keepdims=keepdim)), kept_from))
        high = wrap(reduced(np.asarray(np.max(data, axis=axes, keepdims=keepdim)), kept_from))
        ctx.save_for_backward(x, low, high)
        ctx.axes, ctx.keepdim = axes, keepdim
        ctx.set_materialize_grads(False)  # the backward skips a result that was not used
        return low, high

    @staticmethod
    def backward(ctx, grad_low, grad_high):
        x, low, high = ctx.saved_tensors
        total = None
        for grad, value in ((grad_low, low), (grad_high, high)):
            if grad is not None:
                grad, value = with_reduced_dims(x.shape, ctx.axes, ctx.keepdim, grad, value)
                ties = (x == value).to(x.dtype)
                part = grad * ties / ties.sum(ctx.axes, keepdim=True)
                total = part if total is None else total + part
        return total, None, None


@ember_function
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False, out=None):
    """``(min, max)`` of ``input``, over ``dim`` or the whole tensor.

    >>> ember.aminmax(ember.tensor([3., -1., 2.]))
    ember.return_types.aminmax(
    min=tensor(-1.),
    max=tensor(3.))
    """
    x = require_tensor(input, "aminmax")
    refuse_complex("aminmax", x._data)
    if dim is None:
        if x._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity; name a dim whose size is not 0")
        axes = reduction_axes(x, None, "aminmax")
    else:
        axes = _extremum_axes(x, (_one_axis(x, dim, "aminmax"),) if x._data.ndim else _int_dim(dim, "aminmax"),
                              "aminmax")
    low, high = Aminmax.apply(x, axes, keepdim)
    if out is not None:
        return return_types.aminmax_out(*_into_pair("aminmax", (low, high), out, x))
    return return_types.aminmax(low, high)


# ----------------------------------------------------------------- maximum, minimum, fmax, fmin


class Maximum(Function):
    """The larger of two tensors, elementwise (nan if either is); where they tie, each gets half the gradient.

    As torch, a nan on either side gives both the whole gradient (neither is found smaller).
    """

    backward_name = "MaximumBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}

    @staticmethod
    def forward(ctx, a, b, largest):
        x, y = promoted_arrays(a, b, "maximum" if largest else "minimum")
        ctx.largest = largest
        ctx.save_for_backward(a, b)  # both, as torch: the comparison needs them
        return wrap(np.maximum(x, y) if largest else np.minimum(x, y))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        shared = where(a == b, grad / 2, grad)
        a_loses, b_loses = (a < b, a > b) if ctx.largest else (a > b, a < b)
        needs = ctx.needs_input_grad
        return (where(a_loses, 0.0, shared) if needs[0] else None,
                where(b_loses, 0.0, shared) if needs[1] else None, None)


class Minimum(Maximum):
    backward_name = "MinimumBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}


class Fmax(Function):
    """The larger of two tensors, elementwise, a nan losing to a number; on ties ``a`` gets the gradient."""

    backward_name = "FmaxBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}

    @staticmethod
    def forward(ctx, a, b, largest):
        x, y = promoted_arrays(a, b, "fmax" if largest else "fmin")
        ctx.largest = largest
        ctx.save_for_backward(a, b)
        return wrap(np.fmax(x, y) if largest else np.fmin(x, y))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a_wins = where(b != b, True, (a >= b) if ctx.largest else (a <= b))  # b nan: a is taken, even if nan
        needs = ctx.needs_input_grad
        return (where(a_wins, grad, 0.0) if needs[0] else None,
                where(a_wins, 0.0, grad) if needs[1] else None, None)


class Fmin(Fmax):
    backward_name = "FminBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}


def _binary(function: type, input, other, out, op: str, largest: bool) -> Tensor:
    require_tensor(input, op)
    require_tensor(check_operand(other, op, 2), op, 2, "other")
    for value in (input, other):
        if value._data.dtype.kind == "c":
            refuse_complex(op, value._data, f"{op} not implemented for complex tensors", RuntimeError)
    result = function.apply(input, other, largest)
    return result if out is None else into_out(op, result, out, input, other)


@ember_function
def maximum(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The larger of ``input`` and ``other``, elementwise (they broadcast); nan if either is nan.

    >>> ember.maximum(ember.tensor([1., 5.]), ember.tensor([3., 2.]))
    tensor([3., 5.])
    """
    return _binary(Maximum, input, other, out, "maximum", True)


@ember_function
def minimum(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The smaller of ``input`` and ``other``, elementwise (they broadcast); nan if either is nan.

    >>> ember.minimum(ember.tensor([1., 5.]), ember.tensor([3., 2.]))
    tensor([1., 2.])
    """
    return _binary(Minimum, input, other, out, "minimum", False)


@ember_function
def fmax(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The larger of ``input`` and ``other``, elementwise; a nan loses to a number.

    >>> ember.fmax(ember.tensor([1., -1.]).sqrt(), ember.tensor([3., 2.]))  # sqrt(-1) is nan
    tensor([3., 2.])
    """
    return _binary(Fmax, input, other, out, "fmax", True)


@ember_function
def fmin(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The smaller of ``input`` and ``other``, elementwise; a nan loses to a number.

    >>> ember.fmin(ember.tensor([1., -1.]).sqrt(), ember.tensor([3., 2.]))  # sqrt(-1) is nan
    tensor([1., 2.])
    """
    return _binary(Fmin, input, other, out, "fmin", False)
