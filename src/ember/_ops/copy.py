"""Copies and casts: clone, contiguous, to(dtype), and the memory formats that say how a copy is laid out.

>>> import ember
>>> x = ember.tensor([1.5, 2.5], requires_grad=True)
>>> x.double()
tensor([1.5000, 2.5000], dtype=ember.float64, grad_fn=<ToCopyBackward0>)
"""
from __future__ import annotations

import warnings

import numpy as np

from ember import _dtype
from ember._ops._quiet import IGNORE_INVALID_OVER, quietly
from ember._ops._support import ember_function, require_tensor, user_stacklevel, wrap
from ember._tensor import Tensor, device, torch_strides
from ember.autograd.function import Function


class memory_format:
    """How a new tensor's elements are laid out in memory (``ember.preserve_format`` and friends)."""

    __slots__ = ("name", "dims_outer_to_inner")
    __module__ = "ember"

    def __init__(self, name: str, dims_outer_to_inner: tuple | None = None):
        self.name = name
        self.dims_outer_to_inner = dims_outer_to_inner  # for the channels-last formats, of a fixed rank

    def __repr__(self) -> str:
        return "ember." + self.name

    def __reduce__(self):
        return self.name  # pickles as the module-level name, so it comes back as the same object


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last", (0, 2, 3, 1))
channels_last_3d = memory_format("channels_last_3d", (0, 2, 3, 4, 1))


def _check_format(op: str, fmt) -> memory_format:
    if fmt is None:
        return preserve_format
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}(): argument 'memory_format' must be ember.memory_format, not {type(fmt).__name__}")
    return fmt


# ---- layouts: the strides (in elements) torch gives a new tensor made "like" an existing one


def _is_non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    """Whether the elements fill a block of memory exactly, in some order of the dims (size-1 dims don't count)."""
    require = 1
    for dim in sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: strides[d]):
        if strides[dim] != require:
            return False
        require *= shape[dim]
    return True


def _dense_strides_keeping_order(shape: tuple, strides: tuple) -> tuple:
    """Row-major strides for the dims taken in the order of ``strides`` (torch's ``infer_dense_strides``).

    A stable insertion sort from the innermost dim out; a zero stride (an expanded dim) compares as a tie,
    so it keeps its place, and of equal strides the larger dim goes outside.
    """
    def goes_outside(a: int, b: int) -> bool:
        if strides[a] == 0 or strides[b] == 0:
            return False
        return strides[a] > strides[b] or (strides[a] == strides[b] and shape[a] > shape[b])

    order = list(range(len(shape) - 1, -1, -1))  # innermost first
    for i in range(1, len(order)):
        j = i
        for k in range(i - 1, -1, -1):
            if goes_outside(order[k], order[j]):
                order[k], order[j] = order[j], order[k]
                j = k
            elif _strictly_inside(order[k], order[j], strides, shape):
                break
    result, step = [0] * len(shape), 1
    for dim in order:
        result[dim] = step
        step *= max(shape[dim], 1)
    return tuple(result)


def _strictly_inside(a: int, b: int, strides: tuple, shape: tuple) -> bool:
    """``a`` belongs inside ``b`` for certain (torch stops the insertion there; a tie lets it go on)."""
    if strides[a] == 0 or strides[b] == 0:
        return False
    return strides[a] < strides[b]


def _element_strides(array: np.ndarray) -> tuple:
    return tuple(s // array.itemsize for s in array.strides)


def _strided_zeros(shape: tuple, strides: tuple, np_dtype: np.dtype) -> np.ndarray:
    """Zeros of ``shape`` laid out with these element ``strides`` (which cover their block exactly)."""
    block = np.zeros(int(np.prod(shape)), np_dtype)
    itemsize = block.itemsize
    return np.ndarray(shape, np_dtype, block, 0, tuple(s * itemsize for s in strides))


def _preserved_strides(array: np.ndarray) -> tuple:
    shape, strides = array.shape, _element_strides(array)
    if _is_non_overlapping_and_dense(shape, strides):
        return strides
    return _dense_strides_keeping_order(shape, strides)


def _is_plainly_row_major(array: np.ndarray) -> bool:
    """Row-major with exactly row-major strides: the usual case, where a plain copy keeps the layout.

    NumPy calls an array with a size-1 dim C-contiguous whatever that dim's stride; torch keeps the
    stride in a copy, so such arrays take the slow path. (Empty ones are the callers' to tell apart: torch keeps
    any strides of theirs.)
    """
    return array.flags.c_contiguous and (1 not in array.shape or array.size == 0)


def zeros_in_layout(array: np.ndarray, np_dtype: np.dtype, fmt: memory_format = preserve_format,
                    op: str = "empty_like") -> np.ndarray:
    """Zeros of ``array``'s shape, laid out as ``fmt`` says (``preserve_format``: as ``array``, if it is dense)."""
    if not array.size and fmt is preserve_format:
        return _empty_with_strides_of(array, np_dtype)
    if fmt is contiguous_format or (fmt is preserve_format and _is_plainly_row_major(array)):
        return np.zeros(array.shape, np_dtype)
    if fmt is preserve_format:
        return _strided_zeros(array.shape, _preserved_strides(array), np_dtype)
    order = _channels_order(array.ndim, fmt, op)
    return np.zeros(tuple(array.shape[d] for d in order), np_dtype).transpose(np.argsort(order))


def _channels_order(ndim: int, fmt: memory_format, op: str) -> tuple:
    order = fmt.dims_outer_to_inner
    if ndim != len(order):
        raise RuntimeError(f"{op}: required rank {len(order)} tensor to use {fmt.name} format (got rank {ndim})")
    return order


def copy_in_layout(array: np.ndarray, np_dtype: np.dtype, fmt: memory_format = preserve_format,
                   op: str = "clone") -> np.ndarray:
    """A copy of ``array`` converted to ``np_dtype`` (as torch converts), laid out as ``fmt`` says."""
    if not array.size and fmt is preserve_format:
        return _empty_with_strides_of(array, np_dtype)
    if fmt is contiguous_format or (fmt is preserve_format and _is_plainly_row_major(array)):
        if array.dtype == np_dtype:
            return np.array(array, copy=True, order="C")
        result = _cast_quietly(array, np_dtype)
        return result if result.flags.c_contiguous else np.array(result, order="C")  # keeps a 0-d array 0-d
    result = zeros_in_layout(array, np_dtype, fmt, op)
    result[...] = array if array.dtype == np_dtype else _cast_quietly(array, np_dtype)
    return result


def _empty_with_strides_of(array: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    """No elements, and ``array``'s strides as torch reports them: torch keeps any empty tensor's in a copy.

    (NumPy would give a fresh empty array strides of 0, read as row-major.)
    """
    strides = tuple(s * np_dtype.itemsize for s in torch_strides(array))
    return np.lib.stride_tricks.as_strided(np.empty(0, np_dtype), array.shape, strides, writeable=True)


def _cast_quietly(array: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    if _dtype.kind(array.dtype) == "f":  # nan, or a float out of the target's range, converts without a warning, as in torch
        return quietly(IGNORE_INVALID_OVER, _dtype.cast, array, np_dtype)
    return _dtype.cast(array, np_dtype)


def _is_in_format(array: np.ndarray, fmt: memory_format) -> bool:
    """Whether ``array`` already has the layout ``fmt`` asks for (size-1 dims may have any stride)."""
    if fmt is contiguous_format:
        return array.flags.c_contiguous
    order = _channels_order(array.ndim, fmt, "contiguous")
    step = 1
    for dim in reversed(order):
        size = array.shape[dim]
        if size != 1 and array.strides[dim] != step * array.itemsize:
            return False
        step *= max(size, 1)
    return True


def suggested_format(array: np.ndarray) -> memory_format:
    """The layout torch reads from a tensor's strides: channels last (4-d) or channels last 3d (5-d) when they look
    so, dense or not; else contiguous."""
    if array.ndim < 4:  # the usual tensor: no channels to look for
        return contiguous_format
    for fmt in (channels_last, channels_last_3d):
        if array.ndim == len(fmt.dims_outer_to_inner) and _strides_like_channels_last(array, fmt.dims_outer_to_inner):
            return fmt
    return contiguous_format


def _strides_like_channels_last(array: np.ndarray, order: tuple) -> bool:
    """Whether the strides grow from the channels out; ties and size-1 dims read as row-major (torch's rule)."""
    shape, strides = array.shape, array.strides
    if not strides[1]:
        return False
    low = 0
    for d in reversed(order):  # the channels (dim 1) first, the batch (dim 0) last
        if not shape[d] or strides[d] < low or (d == 0 and low == strides[1]):
            return False
        low = strides[d] * max(shape[d], 1)
    return True


# ---- the ops


class Clone(Function):
    backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x, fmt=preserve_format):
        return wrap(copy_in_layout(x._data, x._data.dtype, fmt, "clone"))

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def complex_as(data: np.ndarray, target: np.dtype) -> np.ndarray:
    """A complex array ready to be converted to ``target`` as torch converts it: unchanged for a complex target;
    for bool, true where either part is nonzero (NumPy would look at the real part only); else its real part,
    with torch's warning."""
    if target.kind == "c":
        return data
    if target.kind == "b":
        return data != 0
    warn_of_discarded_imaginary_parts()
    return data.real


def warn_of_discarded_imaginary_parts() -> None:
    warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=user_stacklevel())


class ToCopy(Function):
    backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, target, fmt=preserve_format):
        ctx.source = source = _dtype.from_numpy_dtype(x._data.dtype)
        data = x._data if source._kind != 3 else complex_as(x._data, target.np)
        return wrap(copy_in_layout(data, target.np, fmt, "to"))

    @staticmethod
    def backward(ctx, grad):
        if grad._data.dtype.kind == "c" and ctx.source._kind != 3:
            grad = grad.real  # a real input's gradient is the real part
        return grad.to(ctx.source), None, None


@ember_function
def clone(input, *, memory_format=None) -> Tensor:
    """A copy with its own memory; gradients flow back to ``input``.

    By default (``ember.preserve_format``) the copy keeps ``input``'s strides when its elements fill
    their memory exactly (a transposed tensor stays transposed), as torch's does.
    """
    return Clone.apply(require_tensor(input, "clone"), _check_format("clone", memory_format))


def contiguous(input: Tensor, memory_format=None) -> Tensor:
    """``input`` itself if its memory is already in the asked layout (row-major by default), else such a copy."""
    fmt = contiguous_format if memory_format is None else _check_format("contiguous", memory_format)
    if fmt is preserve_format:
        if input._data.flags.c_contiguous:  # as torch: nothing to do, so nothing to refuse
            return input
        raise RuntimeError("contiguous: preserve memory format is unsupported by the contiguous operator; "
                           "use clone(memory_format=ember.preserve_format) for a copy that keeps the layout")
    if _is_in_format(input._data, fmt):
        return input
    return Clone.apply(input, fmt)


_device_type = device
_TO_KEYWORDS = ("device", "dtype", "non_blocking", "copy", "memory_format")
# torch's three forms of Tensor.to: positional names after the first argument, and the keywords each takes
_TO_FORMS = {
    "dtype": (("dtype", "non_blocking", "copy"), ("non_blocking", "copy", "memory_format")),
    "device": (("device", "dtype", "non_blocking", "copy"), _TO_KEYWORDS),
    "other": (("other", "non_blocking", "copy"), ("non_blocking", "copy", "memory_format")),
}


def _is_dtype(value) -> bool:
    """A dtype for ``to``: an ember dtype, Python's float/int/bool, or (as ember allows) a NumPy dtype."""
    return (isinstance(value, (_dtype.dtype, np.dtype)) or value in (float, int, bool)
            or (isinstance(value, type) and issubclass(value, np.generic)))


def _to_arguments(args: tuple, kwargs: dict) -> dict:
    """The arguments of ``to`` by name, read as torch reads them (the first positional picks the form)."""
    first = args[0] if args else None
    form = "other" if isinstance(first, Tensor) else "dtype" if args and _is_dtype(first) else "device"
    names, keywords = _TO_FORMS[form]
    named = dict(zip(names, args))
    if len(args) > len(names) or any(k not in keywords or k in named for k in kwargs):
        _refuse_to_arguments(args, kwargs)
    named.update(kwargs)
    if named.get("dtype") is not None and not _is_dtype(named["dtype"]):
        _refuse_to_arguments(args, kwargs)
    for flag in ("non_blocking", "copy"):
        if not isinstance(named.get(flag, False), bool):
            _refuse_to_arguments(args, kwargs)
    return named


def _refuse_to_arguments(args: tuple, kwargs: dict):
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    raise TypeError(
        f"to() received an invalid combination of arguments - got ({got}), but expected one of: "
        "(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=None), "
        "(dtype, non_blocking=False, copy=False, *, memory_format=None), "
        "(Tensor other, non_blocking=False, copy=False, *, memory_format=None)"
    )


def to(input: Tensor, *args, **kwargs) -> Tensor:
    """Convert to a dtype: ``to(dtype)``, ``to(device, dtype)``, ``to(other)`` (other's dtype), with ``copy=``
    and ``memory_format=`` as in torch. Devices other than the CPU are refused."""
    if len(args) == 1 and not kwargs and isinstance(args[0], _dtype.dtype):  # the usual x.to(dtype), quickly
        target = args[0]
        return input if target.np == input._data.dtype else ToCopy.apply(input, target)
    named = _to_arguments(args, kwargs)
    if named.get("device") is not None:
        _device_type(named["device"])  # validates: only the CPU exists
    other = named.get("other")
    target = other.dtype if other is not None else named.get("dtype")
    target = input.dtype if target is None else _dtype.to_dtype(target)
    fmt = _check_format("to", named.get("memory_format"))
    if target.np == input._data.dtype and not named.get("copy", False) and (
            fmt is preserve_format or suggested_format(input._data) is fmt):  # as torch: else a copy in that format
        return input
    return ToCopy.apply(input, target, fmt)


def cast(input: Tensor, target) -> Tensor:
    return to(input, target)
