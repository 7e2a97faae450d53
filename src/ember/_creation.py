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

import numbers
import warnings

import numpy as np

from ember import _dtype, _random
from ember._ops._support import element_of, ember_function, python_numbers_as, require_tensor, wrap
from ember._ops.out import into_out
from ember._size import Size
from ember._tensor import Tensor, _warn_once, device as _device
from ember.overrides import factory, not_overridable


_factory = factory("ember")  # modes see these, as torch's see its factories

def _finish(array: np.ndarray, requires_grad: bool) -> Tensor:
    t = wrap(array)
    if requires_grad:
        t.requires_grad = True
    return t


def _check_layout(op: str, layout) -> None:
    if layout is not None and str(layout) not in ("strided", "torch.strided"):
        raise RuntimeError(f"{op}: ember tensors are dense (layout 'strided'); layout {layout!r} is not supported")


def _check_device(device) -> None:
    if device is not None:
        _device(device)


def _infer_dtype(data) -> _dtype.dtype:
    """The dtype torch.tensor infers from Python data: bool, int64, or the default float."""
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
    if isinstance(data, (list, tuple)):
        return _infer_sequence_dtype(data)
    if isinstance(data, str):
        raise TypeError("tensor(): invalid data type 'str'; pass numbers, lists or arrays")
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
        return _dtype.cast(data._data, dtype.np)
    if isinstance(data, (list, tuple)) and any(isinstance(item, Tensor) for item in _flatten(data)):
        data = _tensors_to_lists(data)
    try:
        if dtype.np.kind in "iu" and isinstance(data, (list, tuple, int, float)):
            return python_numbers_as("tensor", data, dtype.np)
        with np.errstate(over="ignore"):  # a float too large for the dtype becomes inf quietly, as in torch
            return _dtype.cast(data, dtype.np)
    except ValueError as error:
        if "Overflow" in str(error):
            raise
        raise ValueError(f"tensor(): the data is not a rectangular nested sequence of numbers ({error})") from None


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
            raise ValueError(
                f"only one element tensors can be converted to Python scalars: tensor() found a tensor of shape "
                f"{list(data._data.shape)} inside a sequence, where each tensor stands for one number"
            )
        return data._data.item()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(item) for item in data]
    return data


@_factory
def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists, arrays or tensors)."""
    _check_device(device)
    target = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
    return _finish(_to_array(data, target), requires_grad)


@_factory
def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor``, but shares memory with a tensor or ndarray of the right dtype."""
    _check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or _dtype.to_dtype(dtype).np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


@not_overridable
def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray``: changes to one show in the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    if not ndarray.flags.writeable:
        _warn_once(
            "The given NumPy array is not writable: the tensor shares its memory, so writing to the tensor "
            "will fail. Copy the array (a.copy()) or make it writable before converting it to a tensor. "
            "This warning is shown once per program.",
            stacklevel=2,
        )
    return wrap(ndarray)


def _size(op: str, size: tuple) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"{op}(): argument 'size' must be a sequence of ints, but got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"{op}(): Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _float_or(dtype) -> np.dtype:
    return (_dtype.to_dtype(dtype) if dtype is not None else _dtype.defaults.floating).np


def _filled(op: str, fill, size, dtype, requires_grad, device, out=None, layout=None) -> Tensor:
    _check_device(device)
    _check_layout(op, layout)
    if out is not None:  # out's dtype, unless one is asked for
        keep = dtype is None and isinstance(out, Tensor)
        return into_out(op, wrap(fill(_size(op, size), out._data.dtype if keep else _float_or(dtype))), out)
    return _finish(fill(_size(op, size), _float_or(dtype)), requires_grad)


@_factory
def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None) -> Tensor:
    return _filled("zeros", np.zeros, size, dtype, requires_grad, device, out, layout)


@_factory
def ones(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None) -> Tensor:
    return _filled("ones", np.ones, size, dtype, requires_grad, device, out, layout)


@_factory
def empty(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None,
          memory_format=None) -> Tensor:
    """Uninitialised memory (ember fills it with zeros, so results never depend on garbage)."""
    return _filled("empty", np.zeros, size, dtype, requires_grad, device, out, layout)


@_factory
def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (its dtype inferred from the value)."""
    _check_device(device)
    target = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(fill_value)
    value = element_of("full", _number(fill_value), target.np)
    if target.np is _dtype.HALF and isinstance(value, float):
        value = _dtype.in_single(value)  # a half is made from a single, as in torch
    return _finish(np.full(_size("full", (size,)), value, dtype=target.np), requires_grad)


@_factory
def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    _check_device(device)
    m = n if m is None else m
    for name, value in (("n", n), ("m", m)):
        if value < 0:
            raise RuntimeError(f"eye: {name} must be greater or equal to 0, got {value}")
    return _finish(np.eye(n, m, dtype=_float_or(dtype)), requires_grad)


@_factory
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to (not including) ``end``; integer arguments give int64."""
    _check_device(device)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(
            f"arange(): upper bound and larger bound inconsistent with step sign (start={start}, end={end}, step={step})"
        )
    values = [_number(v) for v in (start, end, step)]
    target = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(values)
    count = int(np.ceil((values[1] - values[0]) / values[2]))
    return _finish((values[0] + np.arange(count) * values[2]).astype(target.np), requires_grad)


def _number(v):
    return v.item() if isinstance(v, Tensor) else v


@_factory
def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    _check_device(device)
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative (got {steps})")
    return _finish(np.linspace(_number(start), _number(end), steps).astype(_float_or(dtype)), requires_grad)


@_factory
def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples from [0, 1)."""
    _check_device(device)
    target = _random_float("rand", dtype)
    values = _random.generator(generator).random(_size("rand", size))
    return _finish(values.astype(target), requires_grad)


def _random_float(op: str, dtype) -> np.dtype:
    """The floating dtype random samples are made in (the default unless ``dtype`` names one)."""
    target = _float_or(dtype)
    if target.kind != "f":
        raise NotImplementedError(
            f'"{op}" not implemented for {_dtype.from_numpy_dtype(target)}: it samples floats; '
            "use a floating dtype, or randint for integers"
        )
    return target


@_factory
def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Samples from the standard normal distribution."""
    _check_device(device)
    target = _random_float("randn", dtype)
    values = _random.generator(generator).standard_normal(_size("randn", size))
    return _finish(values.astype(target), requires_grad)


@_factory
def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers from ``low`` (default 0) up to ``high``, int64 unless ``dtype`` says otherwise."""
    _check_device(device)
    if size is None:
        low, high, size = 0, low, high
    target = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    values = _random.generator(generator).integers(low, high, _size("randint", (size,)))
    return _finish(values.astype(target.np), requires_grad)


def _like(op: str, fill, input: Tensor, dtype, requires_grad: bool, device=None) -> Tensor:
    _check_device(device)
    input = require_tensor(input, op)
    target = _dtype.to_dtype(dtype).np if dtype is not None else input._data.dtype
    return _finish(fill(input._data.shape, target), requires_grad)


@ember_function
def zeros_like(input, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    return _like("zeros_like", np.zeros, input, dtype, requires_grad, device)


@ember_function
def ones_like(input, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    return _like("ones_like", np.ones, input, dtype, requires_grad, device)


@ember_function
def empty_like(input, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    return _like("empty_like", np.zeros, input, dtype, requires_grad, device)


@ember_function
def full_like(input, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    return _like("full_like", lambda shape, d: np.full(shape, fill_value, d), input, dtype, requires_grad, device)


@ember_function
def rand_like(input, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    return _like("rand_like", lambda shape, d: _random.generator(None).random(shape).astype(_random_float("rand_like", d)),
                 input, dtype, requires_grad, device)


@ember_function
def randn_like(input, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    return _like("randn_like",
                 lambda shape, d: _random.generator(None).standard_normal(shape).astype(_random_float("randn_like", d)),
                 input, dtype, requires_grad, device)


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


def new_zeros(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return zeros(*size, dtype=self.dtype if dtype is None else dtype, device=device, requires_grad=requires_grad)


def new_ones(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return ones(*size, dtype=self.dtype if dtype is None else dtype, device=device, requires_grad=requires_grad)


def new_empty(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return empty(*size, dtype=self.dtype if dtype is None else dtype, device=device, requires_grad=requires_grad)
