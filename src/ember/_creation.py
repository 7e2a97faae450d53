"""Making tensors: from data, filled, ranges, random.

>>> import ember
>>> ember.tensor([[1, 2], [3, 4]])
tensor([[1, 2],
        [3, 4]])
>>> ember.zeros(2, 3, dtype=ember.float64)
tensor([[0., 0., 0.],
        [0., 0., 0.]], dtype=ember.float64)
>>> ember.arange(5)
tensor([0, 1, 2, 3, 4])
"""
from __future__ import annotations

import math
import numbers
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from ember import _dtype, _random, _streams, _unsigned
from ember._ops._quiet import IGNORE_INVALID_OVER, IGNORE_OVER, quietly
from ember._ops._support import element_of, ember_function, python_numbers_as, require_tensor, user_stacklevel, wrap
from ember._ops.copy import (
    complex_as,
    _check_format as check_memory_format, contiguous_format, preserve_format, zeros_in_layout,
)
from ember._ops.out import into_out
from ember._layout import (
    COMPRESSED as _COMPRESSED, check_layout as _check_layout, sparse_coo as _sparse_coo, strided as _strided,
)
from ember._size import Size
from ember._tensor import Tensor, _warn_once, device as _device
from ember.overrides import factory, not_overridable


_factory = factory("ember")  # modes see these, as torch's see its factories

def _finish(array: np.ndarray, requires_grad: bool) -> Tensor:
    t = wrap(array)
    if requires_grad:
        t.requires_grad = True
    return t




def _check_device(device) -> None:
    if device is not None:
        _device(device)


def _infer_dtype(data) -> _dtype.dtype:
    """The dtype torch.tensor infers from Python data: bool, int64, the default float or its complex counterpart."""
    kind = type(data)
    if kind is float:  # the usual cases first, by exact type
        return _dtype.defaults.floating
    if kind is int:
        return _dtype.int64
    if kind is list or kind is tuple:
        return _infer_sequence_dtype(data)
    if isinstance(data, Tensor):
        return _dtype.from_numpy_dtype(data._data.dtype)
    if isinstance(data, np.ndarray):
        return _dtype.from_numpy_dtype(data.dtype)
    if isinstance(data, np.generic):
        return _dtype.from_numpy_dtype(data.dtype)
    if isinstance(data, bool):
        return _dtype.bool_
    if isinstance(data, numbers.Integral):
        return _dtype.int64
    if isinstance(data, numbers.Real):
        return _dtype.defaults.floating
    if isinstance(data, numbers.Complex):
        return _dtype.defaults.floating.to_complex()
    if isinstance(data, (list, tuple)):
        return _infer_sequence_dtype(data)
    if isinstance(data, Sequence):  # range and other sequences, as torch takes them
        return _infer_sequence_dtype(data)
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}; tensor() takes numbers, lists or arrays")


def _infer_sequence_dtype(data) -> _dtype.dtype:
    """The promoted dtype of the items (the default float for an empty sequence)."""
    result = None
    for item in data:
        if isinstance(item, str):
            raise ValueError("too many dimensions 'str': tensor() takes numbers, not strings")
        kind = _infer_dtype(item)
        result = kind if result is None or result is kind else _dtype.promote_types(result, kind)
    return result if result is not None else _dtype.defaults.floating


def _to_array(data, dtype: _dtype.dtype) -> np.ndarray:
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, use t.detach().clone() (and .requires_grad_(True) if need be) "
            "rather than ember.tensor(t), which copies the values and drops the history",
            UserWarning,
            stacklevel=4,
        )
        source = data._data if data._data.dtype.kind != "c" else complex_as(data._data, dtype.np)
        return _dtype.cast(source, dtype.np)
    if isinstance(data, (list, tuple)) and any(isinstance(item, Tensor) for item in _flatten(data)):
        data = _tensors_to_lists(data)
    try:
        if dtype is _dtype.uint64 and isinstance(data, (list, tuple, int)):
            return _unsigned.uint64_numbers("tensor", data)
        if dtype.np.kind in "iu" and isinstance(data, (list, tuple, int, float)):
            return python_numbers_as("tensor", data, dtype.np)
        return quietly(IGNORE_OVER, _dtype.cast, data, dtype.np)  # a float beyond the dtype: inf, as in torch
    except ValueError as error:
        if "Overflow" in str(error):
            raise
        _explain_ragged(data, _first_shape(data))
        raise ValueError(f"tensor(): the data is not a rectangular nested sequence of numbers ({error})") from None


def _first_shape(data) -> list:
    """The shape read along the first items (as torch reads it): every other item must agree with it."""
    shape = []
    while isinstance(data, (list, tuple, Sequence)) and not isinstance(data, str):
        shape.append(len(data))
        if not len(data):
            break
        data = data[0]
    return shape


def _explain_ragged(data, shape: list, dim: int = 0) -> None:
    """Raise torch's error for the first item that does not fit ``shape`` (a nested sequence of it)."""
    is_sequence = isinstance(data, (list, tuple, Sequence)) and not isinstance(data, str)
    if dim == len(shape):
        if is_sequence:
            raise TypeError(f"tensor(): expected a number at dim {dim}, but got a {type(data).__name__} "
                            "(the nested sequences are of different depths)")
        return
    if not is_sequence:
        raise TypeError(f"tensor(): not a sequence: expected a sequence at dim {dim}, got {type(data).__name__} "
                        "(the nested sequences are of different depths)")
    if len(data) != shape[dim]:
        raise ValueError(f"tensor(): expected sequence of length {shape[dim]} at dim {dim} (got {len(data)}); "
                         "the nested lists must be rectangular")
    for item in data:
        _explain_ragged(item, shape, dim + 1)


def _flatten(data):
    for item in data:
        if isinstance(item, (list, tuple)):
            yield from _flatten(item)
        else:
            yield item


def _tensors_to_lists(data):
    """Tensors inside a sequence become the numbers they hold (as torch, which takes each as a scalar)."""
    if isinstance(data, Tensor):
        if data._data.size != 1:
            raise _not_one_number(data)
        return data._data.item()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(item) for item in data]
    return data


def _not_one_number(t: Tensor) -> Exception:
    """torch's error for a tensor of several elements inside a sequence: it reads an integer one as an index."""
    where = (f"tensor() found a tensor of shape {list(t._data.shape)} inside a sequence, where each tensor stands "
             "for one number")
    if t._data.dtype.kind in "biu":
        return TypeError(f"only integer tensors of a single element can be converted to an index: {where}")
    return ValueError(f"only one element tensors can be converted to Python scalars: {where}")


def _check_data(data) -> None:
    """What torch.tensor refuses whatever the dtype asked for: text, and arrays of a dtype it lacks or with a
    negative stride."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"tensor(): invalid data type '{type(data).__name__}'; pass numbers, lists or arrays")
    if isinstance(data, np.ndarray):
        _dtype.from_numpy_dtype(data.dtype)  # (object, str, datetime64, longdouble: a TypeError naming it)
        _refuse_negative_strides(data)


def _refuse_negative_strides(array: np.ndarray) -> None:
    """torch takes no NumPy array with a negative stride (``a[::-1]``), not even to copy it."""
    if any(stride < 0 for stride in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            "currently supported. (You can probably work around this by making a copy of your array  with "
            "array.copy().) "
        )


@_factory
def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists, arrays or tensors)."""
    _check_device(device)
    _check_data(data)
    target = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
    return _finish(_to_array(data, target), requires_grad)


@_factory
def as_tensor(data, *, dtype=None, device=None) -> Tensor:
    """Like ``tensor``, but shares memory with a tensor or ndarray of the right dtype."""
    _check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or _dtype.to_dtype(dtype).np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


@not_overridable
def from_numpy(ndarray: np.ndarray, /) -> Tensor:
    """A tensor sharing memory with ``ndarray``: changes to one show in the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    _refuse_negative_strides(ndarray)
    if not ndarray.flags.writeable:
        _warn_once(
            "The given NumPy array is not writable: the tensor shares its memory, so writing to the tensor "
            "will fail. Copy the array (a.copy()) or make it writable before converting it to a tensor. "
            "This warning is shown once per program.",
            stacklevel=2,
        )
    return wrap(ndarray)


def _size(op: str, sizes: tuple, size=None) -> tuple:
    """The shape asked for as varargs (``zeros(2, 3)``), one sequence (``zeros((2, 3))``) or ``size=``."""
    if size is not None:
        if sizes:
            raise TypeError(f"{op}() got multiple values for argument 'size'")
        if not isinstance(size, (tuple, list, Size)):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
        sizes = (size,)
    elif not sizes:  # as torch: zeros() is refused; a 0-d tensor is zeros(())
        raise TypeError(f'{op}() missing 1 required positional arguments: "size" (a 0-d tensor is {op}(()))')
    if isinstance(sizes[0], (tuple, list, Size)):
        if len(sizes) > 1:
            raise TypeError(f"{op}() takes 1 positional argument but {len(sizes)} were given")
        sizes = tuple(sizes[0])
    shape = tuple(_dimension(op, s, len(sizes)) for s in sizes)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"{op}(): Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _dimension(op: str, s, count: int) -> int:
    if type(s) is int:
        return s
    if isinstance(s, (np.integer, Tensor)) and not isinstance(s, bool):
        try:
            return s.__index__()  # an integer tensor of one element stands for its number, as in torch
        except TypeError:
            pass
    if count == 1:
        raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, not {type(s).__name__}")
    raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found an element of type "
                    f"{type(s).__name__}")


def _float_or(dtype) -> np.dtype:
    return (_dtype.to_dtype(dtype) if dtype is not None else _dtype.defaults.floating).np


def _filled(op: str, fill, sizes, size, dtype, requires_grad, device, out=None, layout=None) -> Tensor:
    _check_device(device)
    if fill is np.zeros and layout in _COMPRESSED and out is None:
        from ember._ops.sparse_compressed_math import empty_compressed  # zeros and empty: no entries

        return empty_compressed(op, _size(op, sizes, size), dtype, layout, requires_grad)
    if fill is np.zeros and layout is not None and layout is not _strided and out is None:
        from ember._ops.sparse_shape import empty_sparse  # zeros and empty: a sparse tensor with no entries

        _check_layout(op, None if layout is _sparse_coo else layout)
        return empty_sparse(_size(op, sizes, size), dtype, None, requires_grad)
    _check_layout(op, layout)
    if out is not None:  # out's dtype, unless one is asked for
        keep = dtype is None and isinstance(out, Tensor)
        values = fill(_size(op, sizes, size), out._data.dtype if keep else _float_or(dtype))
        return into_out(op, wrap(values), out, warn_on_resize=False)  # as torch's factories: resized quietly
    return _finish(fill(_size(op, sizes, size), _float_or(dtype)), requires_grad)


def _finish_or_out(op: str, array: np.ndarray, requires_grad: bool, out) -> Tensor:
    if out is not None:
        return into_out(op, wrap(array), out, warn_on_resize=False)  # as torch's factories: resized quietly
    return _finish(array, requires_grad)


@_factory
def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
          requires_grad: bool = False) -> Tensor:
    return _filled("zeros", np.zeros, sizes, size, dtype, requires_grad, device, out, layout)


@_factory
def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
         requires_grad: bool = False) -> Tensor:
    return _filled("ones", np.ones, sizes, size, dtype, requires_grad, device, out, layout)


@_factory
def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
          requires_grad: bool = False, memory_format=None) -> Tensor:
    """Uninitialised memory (ember fills it with zeros, so results never depend on garbage)."""
    if memory_format is not None and memory_format is not contiguous_format:
        return _empty_in_format(_size("empty", sizes, size), dtype, requires_grad, device, memory_format)
    return _filled("empty", np.zeros, sizes, size, dtype, requires_grad, device, out, layout)


def _empty_in_format(shape: tuple, dtype, requires_grad: bool, device, memory_format) -> Tensor:
    """``empty(..., memory_format=ember.channels_last)``: zeros laid out as the format says."""
    _check_device(device)
    fmt = check_memory_format("empty", memory_format)
    if fmt is preserve_format:
        raise RuntimeError("empty: unsupported memory format preserve_format (there is no tensor to preserve "
                           "the layout of); use contiguous_format or a channels-last format")
    return _finish(zeros_in_layout(np.empty(shape, np.bool_), _float_or(dtype), fmt, "empty"), requires_grad)


@_factory
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (its dtype inferred from the value)."""
    _check_device(device)
    _check_layout("full", layout)
    if not isinstance(size, (tuple, list, Size)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    fill_value = _fill_number("full", fill_value)
    if dtype is None and out is not None:
        dtype = out.dtype if isinstance(out, Tensor) else None
    target = _dtype.to_dtype(dtype) if dtype is not None else _dtype.scalar_dtype(fill_value)
    return _finish_or_out("full", np.full(_size("full", (size,)), _fill_element("full", fill_value, target.np),
                                          dtype=target.np), requires_grad, out)


def _fill_number(op: str, value) -> bool | int | float:
    """A fill value as the Python number torch takes it as: a number, a NumPy scalar or a 0-d tensor."""
    kind = type(value)
    if kind is float or kind is int or kind is bool:
        return value
    if isinstance(value, Tensor) and value._data.ndim == 0 or isinstance(value, np.generic) and value.ndim == 0:
        value = value.item()
    if isinstance(value, (bool, numbers.Integral, numbers.Real, complex)) and not isinstance(value, np.generic):
        return value
    raise TypeError(f"{op}(): argument 'fill_value' (position 2) must be Number, not {type(value).__name__}")


def _fill_element(op: str, value, np_dtype: np.dtype):
    value = element_of(op, value, np_dtype)
    if np_dtype is _dtype.HALF and isinstance(value, float):
        value = _dtype.in_single(value)  # a half is made from a single, as in torch
    return value


_NO_M = object()  # eye(n) without m; None is refused, as in torch


@_factory
def eye(n: int, m: int = _NO_M, *, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
        requires_grad: bool = False) -> Tensor:
    """The identity matrix of ``n`` rows and ``m`` (default ``n``) columns."""
    _check_device(device)
    _check_layout("eye", layout)
    n = _eye_count("n", n)
    m = n if m is _NO_M else _eye_count("m", m)
    if out is not None and dtype is None:  # as torch: the identity is made in out's dtype
        dtype = out.dtype
    return _finish_or_out("eye", np.eye(n, m, dtype=_float_or(dtype)), requires_grad, out)


def _eye_count(name: str, value) -> int:
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer, Tensor)):
            raise TypeError(f"eye(): argument '{name}' must be int, not {type(value).__name__}")
        value = operator.index(value)
    if value < 0:
        raise RuntimeError(f"eye: {name} must be greater or equal to 0, got {value}")
    return value


_NO_END = object()


@_factory
def arange(start=_NO_END, end=_NO_END, step=1, *, out=None, dtype=None, layout=None, device=None,
           pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to (not including) ``end``; integer arguments give int64.

    As torch: the count is computed from the arguments as given, the values from ``start`` and ``step``
    converted to the result's dtype (so ``arange(0.5, 3, dtype=ember.int32)`` starts at 0).
    """
    _check_device(device)
    _check_layout("arange", layout)
    if end is _NO_END:
        if start is _NO_END:
            raise TypeError("arange() missing required argument 'end': expected (end), (start, end) or "
                            "(start, end, step)")
        start, end = 0, start
    elif start is _NO_END:  # arange(end=n)
        start = 0
    bounds = [_range_number("arange", name, v) for name, v in (("start", start), ("end", end), ("step", step))]
    if dtype is None and out is not None and isinstance(out, Tensor):
        dtype = out.dtype
    target = _dtype.to_dtype(dtype) if dtype is not None else _infer_sequence_dtype(bounds)
    values = _arange_values(*bounds, target.np)
    if isinstance(out, Tensor):
        _warn_of_arange_resize(out, values.size)
    return _finish_or_out("arange", values, requires_grad, out)


def _warn_of_arange_resize(out: Tensor, count: int) -> None:
    """torch's own warning when arange's ``out`` (with elements) holds another number of them than it makes."""
    if out._data.size and out._data.size != count:
        warnings.warn(
            f"The number of elements in the out tensor of shape {list(out._data.shape)} is {out._data.size} which "
            f"does not match the computed number of elements {count}. Note that this may occur as a result of "
            f"rounding error. The out tensor will be resized to a tensor of shape ({count},).",
            UserWarning, stacklevel=user_stacklevel())


def _range_number(op: str, name: str, value):
    value = _number(value)
    if isinstance(value, (complex, np.complexfloating)) and not value.imag:
        value = float(value.real)  # as torch: a complex number converts to double if it has no imaginary part
    if isinstance(value, (complex, np.complexfloating)):
        raise RuntimeError(f"{op}(): value cannot be converted to type double without overflow: {name}={value!r} is "
                           "complex; a range's bounds and step are real")
    if not isinstance(value, (numbers.Real, np.number)):
        raise TypeError(f"{op}(): argument '{name}' must be Number, not {type(value).__name__}")
    return value


def _arange_values(start, end, step, target: np.dtype) -> np.ndarray:
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"arange(): unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError(f"arange(): upper bound and lower bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    if target.kind in "bc":
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dtype.scalar_type_name(target)}': a range "
                                  "is real; make it real and convert, e.g. ember.arange(3).to(ember.complex64)")
    if _dtype.kind(target) == "f":
        count = _range_count(math.ceil((float(end) - float(start)) / float(step)))
        return _float_range(start, step, count, target)
    return _integer_range(int(start), int(end), int(step), (start, end, step), target)


def _float_range(start, step, count: int, target: np.dtype) -> np.ndarray:
    """The values as torch's kernel computes them, to the last bit.

    It works in double (in single for half) and fills 32-byte vectors: a vector starts at ``start + step * i``
    rounded to the dtype, and its lanes add ``step`` times 0, 1, 2 ... to that; the elements after the last pair
    of vectors are computed one by one. Each multiply-add is fused (rounded once), which ember reproduces in
    extended precision (where NumPy has none, e.g. on ARM, results may differ in the last place).
    """
    exact = np.longdouble
    accumulate = np.float32 if target in _dtype.LOW else np.float64
    first, stride = exact(accumulate(start)), exact(accumulate(step))
    index = np.arange(count, dtype=exact)
    one_by_one = (first + stride * index).astype(accumulate)
    lanes = 32 // target.itemsize
    lane = index % lanes
    vector_start = (first + stride * (index - lane)).astype(accumulate).astype(target)
    in_vectors = (vector_start.astype(exact) + stride * lane).astype(accumulate)
    vectorised = count - count % (2 * lanes)
    return np.where(np.arange(count) < vectorised, in_vectors, one_by_one).astype(target)


def _integer_range(start: int, end: int, step: int, given: tuple, target: np.dtype) -> np.ndarray:
    """An integer dtype takes start and step truncated (as C++ converts them). torch counts from the
    truncated values for int64 (in integers) and from the values as given for the other integer dtypes."""
    if target == np.int64:
        if step == 0:
            raise ValueError("arange(): step must be nonzero (the step truncates to 0 in int64)")
        sign = 1 if step > 0 else -1
        count = abs(end - start + step - sign) // abs(step)  # C++'s division, which truncates
    else:
        count = math.ceil((float(given[1]) - float(given[0])) / float(given[2]))
    values = start + np.arange(_range_count(count), dtype=np.int64) * step
    return values.astype(target)


def _range_count(count) -> int:
    if not 0 <= count < 2 ** 63:
        raise RuntimeError("arange(): invalid size, possible overflow?")
    return int(count)


def _number(v):
    return v.item() if isinstance(v, Tensor) else v


@_factory
def linspace(start, end, steps: int, *, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end``, both included."""
    start, end, steps, target = _spacing("linspace", start, end, steps, out, dtype, layout, device)
    for value in (start, end):
        element_of("linspace", value, target)  # as torch: an end that the dtype cannot hold is an error
    # a half's steps may overflow to inf (and inf - inf is nan), quietly, as in torch
    values = quietly(IGNORE_INVALID_OVER, _linspace_values, start, end, steps, target)
    return _finish_or_out("linspace", values, requires_grad, out)


@_factory
def logspace(start, end, steps: int, base: float = 10.0, *, out=None, dtype=None, layout=None, device=None,
             pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in their exponents.

    >>> ember.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    start, end, steps, target = _spacing("logspace", start, end, steps, out, dtype, layout, device)
    if target.kind == "b":
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    exponents = _linspace_values(start, end, steps, np.dtype(np.complex128 if target.kind == "c" else np.float64))
    values = quietly(IGNORE_INVALID_OVER, _powers, np.float64(base), exponents, target)  # a half may overflow
    return _finish_or_out("logspace", values, requires_grad, out)


def _powers(base: np.float64, exponents: np.ndarray, target: np.dtype) -> np.ndarray:
    values = np.power(base, exponents)
    return _dtype.cast(values, target) if _dtype.kind(target) == "f" else values.astype(target)


def _spacing(op: str, start, end, steps, out, dtype, layout, device) -> tuple:
    """linspace's and logspace's arguments, checked: (start, end, steps, the result's NumPy dtype)."""
    _check_device(device)
    _check_layout(op, layout)
    steps = _steps_count(op, steps)
    start, end = (_linspace_end(name, v) for name, v in (("start", start), ("end", end)))
    if dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    if not any(isinstance(v, complex) for v in (start, end)):
        return start, end, steps, _float_or(dtype)
    inferred = _dtype.defaults.floating.to_complex()  # a complex end makes the result complex, as in torch
    if dtype is not None and _dtype.to_dtype(dtype)._kind != 3:
        raise RuntimeError(f"{op}(): inferred dtype {inferred} can't be safely cast to passed dtype "
                           f"{_dtype.to_dtype(dtype)}: an end is complex; pass a complex dtype or real ends")
    return start, end, steps, inferred.np if dtype is None else _float_or(dtype)

def _steps_count(op: str, steps) -> int:
    if type(steps) is not int:
        if isinstance(steps, bool) or not isinstance(steps, (np.integer, Tensor)):
            raise TypeError(f"{op}(): argument 'steps' must be int, not {type(steps).__name__}")
        steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError(f"{op}: number of steps must be non-negative (got {steps})")
    return steps


def _linspace_end(name: str, value):
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, but got {name} with "
                           f"{value._data.ndim} dimension(s).")
    value = _number(value)
    return complex(value) if isinstance(value, (complex, np.complexfloating)) else _range_number("linspace", name,
                                                                                                 value)


def _linspace_values(start, end, steps: int, target: np.dtype) -> np.ndarray:
    """torch's formula: the first half counts up from ``start``, the second down from ``end``, so both ends
    are exact. torch's kernel fuses each multiply-add (one rounding), so ember computes it in a wider type
    and rounds once: in double for single, in extended precision for double and the integer dtypes
    (where NumPy has no wider type, e.g. on ARM, the results may differ in the last place)."""
    if target.kind == "b":
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if target.kind == "c":  # each part spaced as a real linspace of the part's dtype
        part = _dtype.from_numpy_dtype(target).to_real().np
        start, end = complex(start), complex(end)
        return (_linspace_values(start.real, end.real, steps, part)
                + 1j * _linspace_values(start.imag, end.imag, steps, part)).astype(target)
    if _dtype.kind(target) != "f":  # integers: the ends truncated (and wrapped: -1 is uint8's 255, as torch)
        start, end = (int(np.array(int(v)).astype(target)) for v in (start, end))
    if steps == 1:  # torch's formula would divide by zero: the one value is start
        return np.array([start]).astype(target)
    if _dtype.kind(target) != "f":  # the step in double, each value truncated
        wide = np.longdouble
        first, last = wide(start), wide(end)
        step = wide((float(end) - float(start)) / (steps - 1))
    elif target == _dtype.HALF:  # torch steps a half in half arithmetic, each operation rounded to half
        wide = np.float16
        first, last = (_dtype.cast(np.array(v, np.float64), target)[()] for v in (start, end))
        step = (last - first) / wide(steps - 1)
    else:
        wide = np.longdouble if target == np.float64 else np.float64
        first, last = (target.type(v) for v in (start, end))
        step = wide(target.type((last - first) / target.type(steps - 1)))
        first, last = wide(first), wide(last)
    index = np.arange(steps)
    values = np.where(index < steps // 2, first + step * index.astype(wide),
                      last - step * (steps - 1 - index).astype(wide))
    values = values.astype(np.float64)  # a fused multiply-add rounds once, to double at the widest
    return _dtype.cast(values, target) if _dtype.kind(target) == "f" else values.astype(target)


def _random_float(op: str, dtype) -> np.dtype:
    """The floating dtype random samples are made in (the default unless ``dtype`` names one)."""
    target = _float_or(dtype)
    if _dtype.kind(target) not in "fc":
        raise NotImplementedError(
            f'"{op}" not implemented for \'{_dtype.scalar_type_name(target)}\': it samples floats; '
            "use a floating dtype, or randint for integers"
        )
    return target


def _checked_generator(op: str, generator) -> _random.Generator:
    """``generator``, or the default one; a TypeError for anything else."""
    if generator is not None and not isinstance(generator, _random.Generator):
        raise TypeError(f"{op}(): argument 'generator' must be ember.Generator, not {type(generator).__name__}")
    return _random.chosen(generator)


def _sampled(op: str, sample, sizes, size, generator, out, dtype, layout, device, requires_grad) -> Tensor:
    _check_device(device)
    _check_layout(op, layout)
    if dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    target = _random_float(op, dtype)
    shape = _size(op, sizes, size)
    values = _floats(op, sample, _checked_generator(op, generator), shape, target)
    return _finish_or_out(op, values, requires_grad, out)


def _floats(op: str, sample, generator: _random.Generator, shape: tuple, target: np.dtype) -> np.ndarray:
    """``sample(generator, shape, double)`` in ``target``. Complex samples, as torch draws them: real and imaginary
    parts independent, one after the other; for randn each of variance 1/2, so that the complex sample has
    variance 1."""
    double, narrow = _streams.precision(target)
    if narrow is not None:
        return _dtype.cast(sample(generator, shape, double, narrow=narrow), target)
    if target.kind != "c":
        return sample(generator, shape, double).astype(target, copy=False)
    pairs = sample(generator, (*shape, 2), double) if op != "randn" else \
        _streams.normal(generator, (*shape, 2), double, std=math.sqrt(0.5))
    return (pairs[..., 0] + 1j * pairs[..., 1]).astype(target)


@_factory
def rand(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Uniform samples from [0, 1)."""
    return _sampled("rand", _streams.uniform, sizes, size, generator, out, dtype, layout, device, requires_grad)


@_factory
def randn(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Samples from the standard normal distribution."""
    return _sampled("randn", _streams.normal, sizes, size, generator, out, dtype, layout, device, requires_grad)


_NO_HIGH = object()


@_factory
def randint(low=0, high=_NO_HIGH, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Integers from ``low`` (default 0) up to ``high``, int64 unless ``dtype`` says otherwise.

    ``randint(high, size)`` or ``randint(low, high, size)``, as in torch.
    """
    _check_device(device)
    _check_layout("randint", layout)
    if size is None and isinstance(high, (tuple, list, Size)):
        low, high, size = 0, low, high  # randint(high, size)
    elif high is _NO_HIGH and size is not None:
        low, high = 0, low  # randint(high, size=...)
    elif size is None and high is not _NO_HIGH:  # randint(high, size) with a size that is not a sequence
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {type(high).__name__}")
    if high is _NO_HIGH or size is None:
        raise TypeError("randint() missing required arguments: expected (high, size) or (low, high, size)")
    if not isinstance(size, (tuple, list, Size)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    low, high = (_random_bound(name, v) for name, v in (("low", low), ("high", high)))
    if dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    target = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    _check_random_range(low, high, target.np)
    values = _streams.integers(_checked_generator("randint", generator), low, high, _size("randint", (size,)))
    return _finish_or_out("randint", values.astype(target.np), requires_grad, out)


@_factory
def randperm(n: int, *, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    """The integers ``0 .. n-1`` in a random order (int64 unless ``dtype`` says otherwise).

    >>> _ = ember.manual_seed(0)
    >>> sorted(ember.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    _check_device(device)
    _check_layout("randperm", layout)
    if type(n) is not int:
        if isinstance(n, bool) or not isinstance(n, (np.integer, Tensor)):
            raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
        n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"randperm(): Trying to create tensor with negative dimension {n}: [{n}]")
    if dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    target = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    _check_permutation_fits(n, target)
    values = _streams.permutation(_checked_generator("randperm", generator), n)
    return _finish_or_out("randperm", values.astype(target.np), requires_grad, out)


def _check_permutation_fits(n: int, target: _dtype.dtype) -> None:
    """Every value up to ``n - 1`` must be exact in ``target``: a float dtype holds consecutive integers only so far."""
    kind = _dtype.kind(target.np)
    if kind == "b":
        raise NotImplementedError("randperm(): not implemented for dtype ember.bool; use an integer dtype")
    if kind == "f":
        largest = 2 ** (_dtype.float_info(target.np).nmant + 1) + 1
        if n > largest:
            raise RuntimeError(f"randperm(): n cannot be greater than {largest} for {target}: its values past "
                               f"{largest - 1} are not exact; use ember.int64")
    elif n - 1 > np.iinfo(target.np).max:
        raise RuntimeError(f"randperm(): n={n} does not fit in {target} (the largest value, {n - 1}, is more than "
                           f"{np.iinfo(target.np).max}); use a wider dtype such as ember.int64")


def _random_bound(name: str, value) -> int:
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, (np.integer, Tensor)):
            raise TypeError(f"randint(): argument '{name}' must be int, not {type(value).__name__}")
        value = operator.index(value)
    if not -2 ** 63 <= value < 2 ** 63:
        raise ValueError(f"randint(): Overflow when unpacking long long: {name}={value} does not fit in 64 bits")
    return value


def _check_random_range(low: int, high: int, target: np.dtype) -> None:
    """As torch's ``random_``: ``low < high``, and both ends within an integer dtype; no complex dtype."""
    if target.kind == "c":
        raise RuntimeError(f"check_random_bounds handles only integral, floating-point and boolean types, not "
                           f"{_dtype.scalar_type_name(target)}; draw real integers and convert, e.g. "
                           "ember.randint(0, 5, (3,)).to(ember.complex64)")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if target.kind in "iub":
        smallest, largest = (0, 1) if target.kind == "b" else (int(np.iinfo(target).min), int(np.iinfo(target).max))
        name = _dtype.from_numpy_dtype(target)
        if not smallest <= low <= largest:
            raise RuntimeError(f"random_: from is out of bounds for {name} (got {low}; its range is "
                               f"[{smallest}, {largest}])")
        if not smallest <= high - 1 <= largest:
            raise RuntimeError(f"random_: to - 1 is out of bounds for {name} (got {high - 1}; its range is "
                               f"[{smallest}, {largest}])")


def _like(op: str, fill, input: Tensor, dtype, requires_grad: bool, device=None, memory_format=None,
          layout=None) -> Tensor:
    """A new tensor of ``input``'s shape and (unless ``dtype`` is given) dtype, laid out as ``input`` by default."""
    _check_device(device)
    _check_layout(op, layout)
    input = require_tensor(input, op)
    target = _dtype.to_dtype(dtype).np if dtype is not None else input._data.dtype
    data = input._data
    # the usual case, quickly (an empty tensor keeps strides that need not be row-major: see zeros_in_layout)
    if memory_format is None and data.flags.c_contiguous and 1 not in data.shape and data.size:
        return _finish(fill(data.shape, target), requires_grad)
    result = zeros_in_layout(data, target, check_memory_format(op, memory_format), op)
    result[...] = fill(data.shape, target)
    return _finish(result, requires_grad)


@ember_function
def zeros_like(input, *, dtype=None, layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    return _like("zeros_like", np.zeros, input, dtype, requires_grad, device, memory_format, layout)


@ember_function
def ones_like(input, *, dtype=None, layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    return _like("ones_like", np.ones, input, dtype, requires_grad, device, memory_format, layout)


@ember_function
def empty_like(input, *, dtype=None, layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    return _like("empty_like", np.zeros, input, dtype, requires_grad, device, memory_format, layout)


@ember_function
def full_like(input, fill_value, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    fill_value = _fill_number("full_like", fill_value)

    def filled(shape, np_dtype):
        return np.full(shape, _fill_element("full_like", fill_value, np_dtype), np_dtype)

    return _like("full_like", filled, input, dtype, requires_grad, device, memory_format, layout)


@ember_function
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    def sampled(shape, np_dtype):
        target = _random_float("rand_like", np_dtype)
        return _floats("rand_like", _streams.uniform, _checked_generator("rand_like", generator), shape, target)

    return _like("rand_like", sampled, input, dtype, requires_grad, device, memory_format, layout)


@ember_function
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
               requires_grad: bool = False, memory_format=None) -> Tensor:
    def sampled(shape, np_dtype):
        target = _random_float("randn_like", np_dtype)
        return _floats("randn", _streams.normal, _checked_generator("randn_like", generator), shape, target)

    return _like("randn_like", sampled, input, dtype, requires_grad, device, memory_format, layout)


# ---- Tensor.new_*: a new tensor with the dtype (and device) of an existing one, unless told otherwise


def new_tensor(self: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``ember.tensor(data)`` in ``self``'s dtype unless ``dtype`` is given.

    >>> ember.ones(2, dtype=ember.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=ember.float64)
    """
    return tensor(data, dtype=self.dtype if dtype is None else dtype, device=device, requires_grad=requires_grad)


def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype, device=device,
                requires_grad=requires_grad)


def new_zeros(self: Tensor, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return zeros(*sizes, size=size, dtype=self.dtype if dtype is None else dtype, device=device,
                 requires_grad=requires_grad)


def new_ones(self: Tensor, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return ones(*sizes, size=size, dtype=self.dtype if dtype is None else dtype, device=device,
                requires_grad=requires_grad)


def new_empty(self: Tensor, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return empty(*sizes, size=size, dtype=self.dtype if dtype is None else dtype, device=device,
                 requires_grad=requires_grad)
