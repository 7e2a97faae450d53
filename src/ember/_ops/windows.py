"""Window functions for spectral analysis, and the rarer ways to make a tensor.

>>> import ember
>>> ember.hann_window(4)
tensor([0.0000, 0.5000, 1.0000, 0.5000])
"""
from __future__ import annotations

import os
import warnings
from typing import Callable

import numpy as np

from ember import _dtype
from ember._creation import _check_device, _finish, _finish_or_out, tensor
from ember._layout import check_layout
from ember._ops._support import element_of
from ember._tensor import Tensor
from ember.overrides import factory, not_overridable

_factory = factory("ember")


# ----------------------------------------------------------------- windows


def _window(op: str, length: int, periodic: bool, dtype, layout, device, requires_grad,
            shape: Callable[[np.ndarray, int], np.ndarray]) -> Tensor:
    """``shape(n, m)`` at the points ``n = 0 .. length-1`` of a symmetric window spanning ``m + 1`` points."""
    _check_device(device)
    check_layout(op, layout)
    target = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    if not target.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point dtype, got {target}; pass dtype=ember.float32")
    if length < 0:
        raise RuntimeError(f"{op}: window_length must be non-negative, got {length}")
    if length <= 1:
        return _finish(np.ones(length, target.np), requires_grad)
    span = length if periodic else length - 1  # a periodic window is the symmetric one a point longer, cut
    values = shape(np.arange(length, dtype=np.float64), span)
    return _finish(values.astype(target.np), requires_grad)


def _cosines(*weights: float) -> Callable[[np.ndarray, int], np.ndarray]:
    """The window ``sum_k (-1)^k weights[k] cos(2 pi k n / m)``."""
    def shape(n: np.ndarray, m: int) -> np.ndarray:
        return sum((-1) ** k * w * np.cos(2 * np.pi * k * n / m) for k, w in enumerate(weights))
    return shape


@_factory
def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Hann window, ``0.5 - 0.5 cos(2 pi n / m)``.

    >>> ember.hann_window(3, periodic=False)
    tensor([0., 1., 0.])
    """
    return _window("hann_window", window_length, periodic, dtype, layout, device, requires_grad, _cosines(0.5, 0.5))


@_factory
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype=None, layout=None, device=None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    """The generalized Hamming window, ``alpha - beta cos(2 pi n / m)``.

    >>> ember.hamming_window(3, periodic=False)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return _window("hamming_window", window_length, periodic, dtype, layout, device, requires_grad,
                   _cosines(alpha, beta))


@_factory
def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Blackman window, ``0.42 - 0.5 cos(2 pi n / m) + 0.08 cos(4 pi n / m)``.

    >>> ember.blackman_window(4)[1:]
    tensor([0.3400, 1.0000, 0.3400])
    """
    return _window("blackman_window", window_length, periodic, dtype, layout, device, requires_grad,
                   _cosines(0.42, 0.5, 0.08))


def _triangle(n: np.ndarray, m: int) -> np.ndarray:
    return 1 - np.abs(2 * n / m - 1)


@_factory
def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window, ``1 - |2 n / m - 1|``.

    >>> ember.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, layout, device, requires_grad, _triangle)


@_factory
def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, layout=None,
                  device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Kaiser window, ``I0(beta sqrt(1 - (2 n / m - 1)^2)) / I0(beta)``.

    >>> ember.kaiser_window(3, periodic=False, beta=0.)
    tensor([1., 1., 1.])
    """
    def shape(n: np.ndarray, m: int) -> np.ndarray:
        return np.i0(beta * np.sqrt(np.clip(1 - (2 * n / m - 1) ** 2, 0, None))) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, layout, device, requires_grad, shape)


# ----------------------------------------------------------------- other ways to make a tensor


@_factory
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                  requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype`` is given.

    >>> ember.scalar_tensor(3)
    tensor(3.)
    """
    check_layout("scalar_tensor", layout)
    if isinstance(s, Tensor):
        s = s.item()
    if not isinstance(s, (bool, int, float, complex, np.number, np.bool_)):
        raise TypeError(f"scalar_tensor(): argument 's' must be Number, not {type(s).__name__}")
    if type(s) is int and not -2 ** 63 <= s < 2 ** 64:  # as torch, which reads an int as int64 or uint64
        raise OverflowError("int too big to convert")
    dtype = dtype if dtype is not None else _dtype.get_default_dtype()
    s = element_of("scalar_tensor", s, _dtype.to_dtype(dtype).np)  # (a complex one only without imaginary part)
    return tensor(s, dtype=dtype, device=device, requires_grad=requires_grad)


@_factory
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of shape ``size`` whose elements lie ``stride`` elements apart per dim.

    >>> ember.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    _check_device(device)
    check_layout("empty_strided", layout)
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(
            f"empty_strided: size has {len(size)} dimensions but stride has {len(stride)}; give one stride per dim"
        )
    if any(n < 0 for n in size) or any(st < 0 for st in stride):
        raise RuntimeError(f"empty_strided: sizes and strides must be non-negative, got {list(size)} and {list(stride)}")
    target = (_dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()).np
    extent = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
    memory = np.zeros(extent, target)
    array = np.lib.stride_tricks.as_strided(memory, size, tuple(st * memory.itemsize for st in stride))
    return _finish(array, requires_grad)


@_factory
def range(start=0, end=None, step=1, *, out: Tensor | None = None, dtype=None, layout=None, device=None,
          requires_grad: bool = False) -> Tensor:
    """Deprecated: ``start, start + step, ...`` up to and including ``end``; use ``ember.arange`` (end excluded).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.range(1, 3)
    tensor([1., 2., 3.])
    """
    warnings.warn(
        "ember.range is deprecated because, unlike Python's range, it includes end; use ember.arange, "
        "which gives the values in [start, end).", UserWarning, stacklevel=3,
    )
    if end is None:
        raise TypeError('range() missing 1 required positional argument: "end"')
    _check_device(device)
    check_layout("range", layout)
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError(f"range: upper bound and lower bound inconsistent with step sign: start={start}, "
                           f"end={end}, step={step}")
    count = int(np.floor((end - start) / step)) + 1
    target = (_dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()).np
    return _finish_or_out("range", (start + step * np.arange(count, dtype=np.float64)).astype(target),
                          requires_grad, out)


@_factory
def asarray(obj, *, dtype=None, device=None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """``obj`` as a tensor, sharing memory with a tensor or array where it can (never if ``copy=True``).

    ``copy=False`` refuses to copy: asking it for another dtype is an error. A tensor keeps its autograd
    history unless ``requires_grad=False``, which gives a detached alias.

    >>> import numpy as np
    >>> a = np.zeros(2)
    >>> ember.asarray(a)[0] = 1.
    >>> a
    array([1., 0.])
    """
    _check_device(device)
    target = _dtype.to_dtype(dtype) if dtype is not None else None
    if isinstance(obj, (Tensor, np.ndarray)):
        current = obj.dtype if isinstance(obj, Tensor) else _dtype.from_numpy_dtype(obj.dtype)
        if target is not None and target != current:
            if copy is False:
                raise ValueError(f"asarray: can't share memory of dtype {current} as dtype {target}; "
                                 "allow a copy (copy=None or True)")
            copy = True
        result = obj if isinstance(obj, Tensor) else _finish(obj, False)
        if requires_grad is False and result.requires_grad:
            result = result.detach()
        result = result.to(target or result.dtype, copy=True) if copy else result
    else:
        if copy is False:
            raise ValueError(f"asarray: can't share the memory of a {type(obj).__name__}; allow a copy "
                             "(copy=None or True)")
        result = tensor(obj, dtype=target)
    if requires_grad:  # as torch, a tensor passed through unchanged is itself made to require grad
        result.requires_grad_(True)
    return result


@not_overridable
def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-D tensor sharing the memory of an object with the buffer protocol (``bytearray``, ``array``, ...).

    >>> ember.frombuffer(bytearray(b"\\x01\\x02"), dtype=ember.uint8)
    tensor([1, 2], dtype=ember.uint8)
    """
    target = _dtype.to_dtype(dtype).np
    try:
        array = np.frombuffer(buffer, dtype=target, count=count, offset=offset)
    except (ValueError, TypeError) as e:
        raise ValueError(f"frombuffer: can't read {count if count >= 0 else 'all'} elements of {target} from the "
                         f"buffer at offset {offset}: {e}") from None
    if array.size == 0:
        raise ValueError(f"frombuffer: the buffer holds no elements to read (length {len(memoryview(buffer))}, "
                         f"count {count}, offset {offset})")
    if not array.flags.writeable:
        warnings.warn("frombuffer: the given buffer is not writable; writing to the tensor will fail. "
                      "Copy the buffer (bytearray(b)) to write to it.", UserWarning, stacklevel=2)
    return _finish(array, requires_grad)


@not_overridable
def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype=None, layout=None, device=None,
              pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The first ``size`` elements of a binary file, as a 1-D tensor of ``dtype`` (the default float).

    With ``shared=True`` the tensor maps the file: writes to the tensor change the file.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "values.bin")
    >>> np.arange(4, dtype=np.float32).tofile(path)
    >>> ember.from_file(path, size=3)
    tensor([0., 1., 2.])
    """
    _check_device(device)
    check_layout("from_file", layout)
    target = (_dtype.to_dtype(dtype) if dtype is not None else _dtype.defaults.floating).np
    needed = size * target.itemsize
    available = os.path.getsize(filename)
    if available < needed:
        raise RuntimeError(f"from_file: file <{filename}> size <{available}> is smaller than the required mapping "
                           f"size <{needed}> ({size} elements of {target}); pass a smaller size")
    if shared and size:
        array = np.memmap(filename, dtype=target, mode="r+", shape=(size,))
    else:
        array = np.fromfile(filename, dtype=target, count=size)
    return _finish(np.asarray(array) if not shared else array, requires_grad)
