"""Small helpers shared by the built-in ops: wrapping arrays, operand promotion, saving mixed inputs."""
from __future__ import annotations

import math
import numbers
import operator
import os
import sys

import numpy as np

from ember import _dtype
from ember._ops._operand_order import in_order_of_first
from ember._ops._quiet import IGNORE_ALL, IGNORE_OVER, quietly
from ember._ops._quiet import _reset as _quiet_reset, _set as _quiet_set
from ember._tensor import Tensor, torch_strides, version_counter
from ember.autograd.grad_mode import state as _grad_state
from ember.overrides import _OperandTypeError, overridable

_new = object.__new__
_ndarray = np.ndarray
_asarray = np.asarray  # a module's global is read faster than NumPy's attribute, on paths every op takes


def undispatched(function):
    """A NumPy function without its ``__array_function__`` dispatcher, which costs 0.1 µs a call: the ops pass
    it plain arrays only, which the dispatcher would hand to the function itself anyway.

    >>> undispatched(np.where)(np.array([True, False]), 1, 2)
    array([1, 2])
    """
    return getattr(function, "_implementation", function)  # (a NumPy that keeps no _implementation: as it is)
_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)
_UINT64 = np.dtype(np.uint64)

ember_function = overridable("ember")
"""Decorator for a public function of the ``ember`` namespace (it dispatches through the protocol)."""


def wrap(array: np.ndarray | np.generic) -> Tensor:
    """A new plain tensor around ``array`` (NumPy scalars become 0-d arrays)."""
    t = _new(Tensor)  # ember._tensor._fresh, inlined: every op's output passes here
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._vc = None
    t._base = None
    t._view_replay = ()
    t._data = array if type(array) is _ndarray else np.asarray(array)
    if _grad_state.inference:  # made under inference_mode: an inference tensor, as torch's
        t._inference = True
    return t


def row_major(data: np.ndarray) -> np.ndarray:
    """``data``, or a row-major copy of it: where torch writes a contiguous result and NumPy's would follow the
    layout of a transposed or permuted input (a 0-d array stays 0-d)."""
    return data if data.flags.c_contiguous else np.asarray(data, order="C")


def reduced(result: np.ndarray, kept_from: np.ndarray | None = None) -> np.ndarray:
    """A reduction's fresh ``result`` laid out as torch lays it out: row-major. NumPy's follows the layout of its
    input, so that a sum over a permuted tensor comes back permuted too (and ``view`` of it would fail). Fresh
    results of fewer than two dims are row-major already.

    ``kept_from``, given for a reduction that kept its reduced dims (keepdim), is its input: where that input is
    not row-major (channels-last, say) NumPy gives the kept 1s strides of their own, which torch's row-major
    layout also fixes (the stride of a 1 is the product of the sizes after it).

    >>> reduced(np.ones((2, 3, 4)).transpose(2, 0, 1).sum(1)).strides
    (24, 8)
    >>> channels_last = np.ones((2, 4, 5, 3)).transpose(0, 3, 1, 2)
    >>> reduced(channels_last.sum((2, 3), keepdims=True), channels_last).strides
    (24, 8, 8, 8)
    """
    if kept_from is not None and not kept_from.flags.c_contiguous and result.ndim > 1:
        return result.reshape(-1).reshape(result.shape)  # (a copy only where the result is not row-major)
    return result if result.ndim < 2 or result.flags.c_contiguous else result.copy()


def view_of(x: Tensor, array: np.ndarray, step: tuple) -> Tensor:
    """Wrap ``array`` (a NumPy view of ``x``'s memory) as a view of ``x``, replayable by ``step``; a copy (what
    NumPy's reshape of a non-contiguous array may give, or a scalar) as a plain tensor, whose ``_base`` is None."""
    data = x._data
    owner = array.base  # (shares_memory's first two tests inline)
    if owner is not data and (owner is None or owner is not data.base) and not shares_memory(array, data):
        return wrap(array)
    return sharing_view_of(x, array, step)


def sharing_view_of(x: Tensor, array: np.ndarray, step: tuple) -> Tensor:
    """``view_of`` for an ``array`` that NumPy made as a view of ``x``'s memory (basic indexing, a transpose, a
    new dim ...): without the test for a copy, which costs a tenth of a small view."""
    if not array.size:
        array = _empty_view_strided_as_torch(x, array, step)
    t = _new(Tensor)  # (_fresh's stores inlined; _vc, _base and _view_replay are set below)
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._data = array  # (a NumPy view of a plain array is a plain array: nothing to convert)
    base = x._base
    counter = x._vc
    if counter is None:
        counter = version_counter(x)
    t._vc = counter
    if base is None:  # a view of a tensor that is no view: its replay is this one step
        t._base = x
        t._view_replay = (step,)
    else:
        t._base = base
        t._view_replay = x._view_replay + (step,)
    version = counter[0]
    if version:  # (0 is the class's default)
        t._view_version = version
    if x._view_origin is not None:
        t._view_origin = x._view_origin
    if not _grad_state.enabled and (x._requires_grad or x._no_grad_view):
        # off under no_grad, or inside a forward (which then gives it a grad_fn): see view_requires_grad
        t._no_grad_view = True
    if x._inference:  # (a view of a normal tensor stays normal, even under inference_mode, as in torch)
        t._inference = True
    return t


def _empty_view_strided_as_torch(x: Tensor, array: np.ndarray, step: tuple) -> np.ndarray:
    """``array``, an empty view of ``x``, with the strides torch gives that view.

    NumPy makes empty arrays with strides of 0 and its views of them keep the 0s, which torch_strides can only
    read as row-major for the view's own shape: a transpose, a permutation, a step or a new dim would be lost.
    NumPy's views of an empty array that has strides keep them as torch's do, so the step is taken again on the
    input laid out with torch's strides. (A reshape is left as it is: torch gives an empty one row-major strides.)

    >>> import ember
    >>> ember.empty(0, 3).t().stride(), ember.empty(0, 3, 4).permute(2, 1, 0).stride(), ember.empty(0, 3)[::2].stride()
    ((1, 3), (1, 4, 12), (6, 1))
    """
    data = x._data
    function, args = step
    if not data.ndim or function.__name__ in _RESHAPING_STEPS:
        return array
    if not any(data.strides):  # taken again on strides, where the slices' steps are seen to below
        return function(wrap(_with_torch_strides(data)), *args)._data
    if function.__name__ == "apply" and args:  # x[key]: maybe a slice with a step
        return _slice_steps_kept(array, data, args[0])
    return array


_RESHAPING_STEPS = frozenset({"view", "reshape"})


def _with_torch_strides(data: np.ndarray) -> np.ndarray:
    """A view of empty ``data`` whose NumPy strides are those torch_strides reports (NumPy's are 0s)."""
    itemsize = data.itemsize
    strided = _ndarray(data.shape, data.dtype, data, 0, tuple([s * itemsize for s in torch_strides(data)]))
    if not data.flags.writeable:
        strided.setflags(write=False)
    return strided


def _slice_steps_kept(array: np.ndarray, data: np.ndarray, key) -> np.ndarray:
    """``array`` (``data[key]``, empty) with each stepped slice's stride times its step, as torch's: NumPy keeps
    the input's stride for a slice it leaves empty (``x[0:0:2]``)."""
    items = key if type(key) is tuple else (key,)
    stepped = [type(k) is slice and k.step not in (None, 1) for k in items]
    if not any(stepped):
        return array
    taking = sum(1 for k in items if k is not None and k is not Ellipsis)  # the input dims the key names
    in_dim, out_dim, in_strides, out_strides = 0, 0, torch_strides(data), list(array.strides)
    for k, has_step in zip(items, stepped):
        if k is Ellipsis:
            skipped = data.ndim - taking
            in_dim, out_dim = in_dim + skipped, out_dim + skipped
        elif k is None:
            out_dim += 1
        elif type(k) is slice:
            if has_step:
                out_strides[out_dim] = in_strides[in_dim] * k.step * data.itemsize
            in_dim, out_dim = in_dim + 1, out_dim + 1
        else:  # an integer: its dim is gone
            in_dim += 1
    return _ndarray(array.shape, array.dtype, array, 0, tuple(out_strides))


def shares_memory(array: np.ndarray, data: np.ndarray) -> bool:
    """Whether ``array``, made from ``data`` by a NumPy view operation, is a view of it (not a copy)."""
    owner = array.base  # NumPy points a view at the array that owns the memory
    return owner is data or owner is not None and owner is data.base or not array.size or \
        np.may_share_memory(array, data)


def expanded(grad, shape: tuple):
    """``grad`` broadcast to ``shape`` without copying: ``Tensor.expand``, or the same view of an array.

    Arrays have no ``expand`` method; with this, a formula that broadcasts can still run on arrays
    (``backward_on_arrays``) as well as on tensors.

    >>> expanded(np.ones(1), (3,))
    array([1., 1., 1.])
    """
    if type(grad) is _ndarray:
        return grad if grad.shape == shape else broadcast_view(grad, shape)
    if isinstance(grad, np.generic):  # arithmetic on a 0-d array gives a NumPy scalar
        return broadcast_view(np.asarray(grad), shape)
    return grad.expand(shape)


def broadcast_view(array: np.ndarray, shape: tuple) -> np.ndarray:
    """``np.broadcast_to(array, shape)``, a read-only view, at half its cost when ``array`` is contiguous.

    ``shape`` must be one that ``array`` broadcasts to (the caller has checked).
    """
    if not array.flags.c_contiguous:
        if any(array.strides) or not array.size:
            return np.broadcast_to(array, shape)
        array = _asarray(array.flat[0])  # one element seen everywhere (a gradient broadcast already): that element
    if array.size == 1:  # the gradient of a loss: one element, seen everywhere
        strides = (0,) * len(shape)
    else:
        lead = len(shape) - array.ndim
        strides = [0] * lead
        for have, want, stride in zip(array.shape, shape[lead:], array.strides):
            strides.append(stride if have == want else 0)
        strides = tuple(strides)
    view = np.ndarray(shape, array.dtype, array, 0, strides)
    view.setflags(write=False)  # (a third cheaper than through view.flags)
    return view


_GRIDS: dict = {}  # (shape, axis) -> the positions of the other dims; few shapes recur, so they are made once


def along(index: np.ndarray, axis: int) -> tuple:
    """The NumPy key that reads ``x[..., index[...], ...]`` along ``axis``: the position itself in the other dims
    (``index`` has ``x``'s number of dims).

    >>> np.arange(6).reshape(2, 3)[along(np.array([[2], [0]]), 1)]
    array([[2],
           [3]])
    """
    cache_key = (index.shape, axis)
    grids = _GRIDS.get(cache_key)
    if grids is None:
        if len(_GRIDS) > 256:
            _GRIDS.clear()
        grids = _GRIDS[cache_key] = np.indices(index.shape, sparse=True)
        for grid in grids:
            grid.flags.writeable = False
    key = list(grids)
    key[axis] = index
    return tuple(key)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` that points at the user's line, past every ember frame between."""
    frame, level = sys._getframe(2), 2  # the function that warns, seen from warnings.warn
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


_CONSTANTS: dict = {}


def constant(value: int, dtype: np.dtype) -> np.ndarray:
    """``value`` as a read-only 0-d array of ``dtype``, made once.

    NumPy 2 takes a 0-d array of the other operand's dtype in about half the time it takes
    a Python number, with the same values and warnings; ops on arrays use these for their 0s and 1s.

    >>> constant(1, np.dtype(np.float32)) + np.ones(2, np.float32)
    array([2., 2.], dtype=float32)
    """
    key = (value, dtype)
    array = _CONSTANTS.get(key)
    if array is None:
        array = _CONSTANTS[key] = np.asarray(value, dtype)
        array.flags.writeable = False
    return array


_ZERO_BUFFERS: dict = {}  # dtype -> a flat read-only array of zeros, grown as larger ones are asked for

# From this many elements (measured: 1,024 slower, 8,192 faster), a shared buffer of zeros beats a 0-d zero as an operand of np.maximum/np.minimum
ZEROS_BUFFER_FROM = 4096


def zeros_shaped(array: np.ndarray) -> np.ndarray:
    """A read-only array of zeros with ``array``'s shape and dtype, a view of one buffer per dtype.

    NumPy's maximum and minimum take their vectorised loop only when both operands step through memory:
    against a 0-d zero, relu of a million singles is three times slower than against an array of zeros.
    The buffer is never written, so its pages stay the kernel's shared zero page: reading it costs no
    resident memory, and it stays in cache.

    >>> zeros_shaped(np.ones((2, 3), np.float32))
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    """
    size = array.size
    buffer = _ZERO_BUFFERS.get(array.dtype)
    if buffer is None or buffer.size < size:
        buffer = _ZERO_BUFFERS[array.dtype] = np.zeros(size, array.dtype)
        buffer.flags.writeable = False
    return buffer[:size].reshape(array.shape)


HALF = _dtype.HALF
LOW, BF16 = _dtype.LOW, _dtype.BF16
in_single = _dtype.in_single
_SINGLE = np.dtype(np.float32)


def as_operand(number, dtype: np.dtype):
    """A Python float or int as torch takes it against an array of ``dtype``: for half, through single (torch
    makes a half from a single; NumPy would round the double to half at once, and warn of an int beyond half's
    range); anything else as it is."""
    if (dtype is HALF or dtype is BF16) and (type(number) is float or type(number) is int):
        return quietly(IGNORE_OVER, np.asarray, in_single(number), dtype)  # beyond half's range: inf, as in torch
    return number


def half_in_single(data: np.ndarray, operation: str, number: np.float32) -> np.ndarray:
    """``data`` (half) times or divided by ``number`` (see ``in_single``), computed in single, rounded to half.

    torch multiplies and divides a half tensor by a number this way, rather than rounding the
    number to half first (which differs for ``x * 0.1``, and overflows for ``x * 7e4``).
    """
    return quietly(IGNORE_ALL, _in_single_rounded, data, operation, number)  # inf and nan, quietly, as in torch


def _in_single_rounded(data: np.ndarray, operation: str, number: np.float32) -> np.ndarray:
    single = data.astype(_SINGLE)
    return (single * number if operation == "mul" else single / number).astype(data.dtype)


_OPERAND_TYPES = frozenset({Tensor, bool, int, float, complex})
_TAKE_TWO_NUMBERS = frozenset({"add", "sub", "mul", "div"})  # ops that, as torch's, take two numbers (not pow)


def python_numbers_as(op: str, data, dtype: np.dtype) -> np.ndarray:
    """Python numbers (nested lists too) as an array of ``dtype``, converted as torch converts them.

    A number that does not fit an integer dtype is an error, not a silent wrap; but an unsigned
    dtype takes negative integers down to minus its maximum (they wrap: -1 is 255), as in torch.
    A float too large for a float dtype becomes inf.

    >>> python_numbers_as("tensor", [-1, 255], np.dtype(np.uint8))
    array([255, 255], dtype=uint8)
    """
    natural = np.array(data)
    if natural.dtype.kind == "c" and dtype.kind != "c":  # NumPy would drop the imaginary parts, with a warning
        raise TypeError(f"{op}: must be real number, not complex: a complex value cannot be stored as {dtype}; "
                        "leave dtype out, or pass a complex dtype (e.g. ember.complex64)")
    if natural.dtype == object or (natural.dtype == _UINT64 and dtype != _UINT64):
        raise ValueError(f"{op}: Overflow when unpacking long long: an integer does not fit in 64 bits")
    if dtype.kind in "iu" and natural.size and natural.dtype.kind in "iuf":
        info = np.iinfo(dtype)
        low = -int(info.max) if dtype.kind == "u" and natural.dtype.kind != "f" else int(info.min)
        if np.isnan(natural).any() or natural.min() < low or natural.max() > info.max:
            bad = natural.max() if natural.max() > info.max else natural.min()
            raise RuntimeError(f"{op}: value cannot be converted to type {dtype} without overflow (got {bad}); "
                               "use a dtype that holds it")
    return quietly(IGNORE_OVER, natural.astype, dtype)


_LARGEST = {dtype: float(np.finfo(dtype).max) for dtype in (_SINGLE, _DOUBLE)}


def element_of(op: str, value, dtype: np.dtype):
    """``value`` as an element of ``dtype``, as torch converts it: a finite value that does not fit is an error.

    As in torch, an unsigned dtype takes negative integers down to minus its maximum (they wrap: -1 is 255).
    """
    if (dtype is _SINGLE or dtype is _DOUBLE) and (
            type(value) is float and -_LARGEST[dtype] <= value <= _LARGEST[dtype]
            or type(value) is int and -2 ** 63 <= value < 2 ** 64):
        return value  # the usual call: a number that a float32 or float64 tensor holds (an int of 64 bits)
    if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 64:
        raise int_too_big(op, value)
    if type(value) is complex or isinstance(value, np.complexfloating):
        value = _complex_element(op, complex(value), dtype)
    if isinstance(value, (int, float)) and dtype.kind in "iu":
        if isinstance(value, int) and not -2 ** 63 <= value < 2 ** (64 if dtype == _UINT64 else 63):  # beyond any dtype
            raise RuntimeError(f"{op}: value cannot be converted to type {dtype} without overflow (got {value})")
        return python_numbers_as(op, value, dtype)
    if isinstance(value, (int, float)) and _dtype.kind(dtype) == "f" and math.isfinite(value) and \
            abs(value) > float(_dtype.float_info(dtype).max):
        raise RuntimeError(
            f"{op}: value cannot be converted to type {_dtype.from_numpy_dtype(dtype)} without overflow "
            f"(got {value}); use a dtype that holds it"
        )
    return value


def int_too_big(op: str, value: int) -> OverflowError:
    """torch's refusal of a Python int beyond 64 bits where an op takes a number: it reads such an int as an
    int64, or a uint64 above that range, so one outside ``[-2**63, 2**64)`` fits neither, whatever the tensor's
    dtype (a float tensor too)."""
    # torch's words: a negative one fails as a uint64, its last try
    problem = "can't convert negative int to unsigned" if value < 0 else "int too big to convert"
    return OverflowError(f"{op}: {problem}: {value} is outside [-2**63, 2**64), the integers an op takes as a "
                         f"number; pass it as a float, e.g. float({value})")


def _complex_element(op: str, value: complex, dtype: np.dtype):
    """A complex number as an element of ``dtype``: itself for a complex dtype; else its real part, if it has no
    imaginary part (as torch, which refuses to drop one); for bool, whether it is nonzero, as torch takes it."""
    if dtype.kind == "c":
        return value
    if dtype.kind == "b":
        return bool(value)
    if value.imag:
        raise RuntimeError(f"{op}: value cannot be converted to type {_dtype.from_numpy_dtype(dtype)} without "
                           f"overflow: {value!r} is complex; use a complex tensor (e.g. x.to(ember.complex64)) or "
                           "pass the real part")
    return value.real


def refuse_bool(op: str, data: np.ndarray) -> np.ndarray:
    """``data`` unless it is bool: ops that have no meaning for bools (abs, floor, mm ...) refuse them, as torch."""
    if data.dtype == np.bool_:
        raise NotImplementedError(
            f'"{op}" not implemented for \'Bool\'; convert the tensor first, e.g. x.to(ember.int64)'
        )
    return data


def refuse_integers(kernel: str, value, name: str = "input", complex_too: bool = False) -> None:
    """torch's NotImplementedError for an op that has no kernel for integer or bool tensors (``kernel`` is the name
    torch's message gives), where NumPy would compute, often in the integers (a layer norm of ints is all zeros);
    with ``complex_too``, for complex tensors as well.

    >>> refuse_integers("silu_cpu", np.arange(3))
    Traceback (most recent call last):
    NotImplementedError: "silu_cpu" not implemented for 'Long'; convert it first, e.g. input.float()
    """
    data = value._data if isinstance(value, Tensor) else value
    if isinstance(data, np.ndarray) and data.dtype.kind in ("biuc" if complex_too else "biu"):  # (else: the op's
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(data.dtype)}\'; '
                                  f"convert it first, e.g. {name}.float()")


def refuse_complex(op: str, data, message: str | None = None, error: type = NotImplementedError):
    """``data`` unless it is complex: what torch refuses for complex tensors (ordering, rounding, clamping, the
    special functions), ember refuses too, never giving NumPy's answer (which orders complex numbers by their real
    parts first, a silent wrong result). One dtype test on the way through; ``message`` is torch's where it words
    its own, else its "not implemented for 'ComplexFloat'".

    >>> refuse_complex("floor", np.array([1 + 2j]))
    Traceback (most recent call last):
    NotImplementedError: "floor" not implemented for 'ComplexDouble'; ... real or imag ... or abs() ...
    """
    dtype = data.dtype if type(data) is _ndarray else np.dtype(data)  # (an array, or the dtype of promoted operands)
    if dtype.kind == "c":
        what = message or f'"{op}" not implemented for \'{_dtype.scalar_type_name(dtype)}\''
        raise error(f"{what}; {op} takes real tensors only: apply it to the real or imag part, "
                    "or to abs(), of a complex tensor")
    return data


def check_operand(value: object, op: str, position: int, name: str = "other") -> Tensor | bool | int | float:
    """A tensor or a Python/NumPy number; anything else is a TypeError naming the op."""
    if type(value) in _OPERAND_TYPES or isinstance(value, Tensor):
        return value
    if isinstance(value, np.generic):
        return value.item()  # before the check below: np.float64 is a float, and would promote as a double
    if isinstance(value, numbers.Number):
        return value
    raise _OperandTypeError(
        f"{op}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
    )


def require_tensor(value: object, op: str, position: int = 1, name: str = "input") -> Tensor:
    """``value``, which must be a tensor; else a TypeError naming ``op`` (an operator answers NotImplemented)."""
    if not isinstance(value, Tensor):
        raise _OperandTypeError(
            f"{op}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
        )
    return value


def promoted_arrays(a: Tensor | float, b: Tensor | float, op: str) -> tuple:
    """NumPy operands for a binary op, both of the dtype PyTorch's promotion gives.

    Also the place where operands are checked: a tensor or a number, else a TypeError naming ``op``.
    """
    type_a, type_b = type(a), type(b)
    if type_a is Tensor or isinstance(a, Tensor):  # a Parameter, say, takes the fast path too
        x = a._data
        if type_b is float:
            dtype = x.dtype
            if dtype is _SINGLE or dtype is _DOUBLE:  # (half takes the general path: its number goes through single)
                # float tensor with a float: the tensor's dtype, as torch. As a 0-d array of that dtype, the number
                # gives what NumPy gives for the bare float (same values, same warnings), and is twice as fast
                return x, _asarray(b, dtype)
        elif type_b is int:
            dtype = x.dtype
            if (dtype is _SINGLE or dtype is _DOUBLE) and -2 ** 63 <= b < 2 ** 64:
                return x, b  # float tensor with an int of 64 bits: as the general path below gives it
        elif type_b is Tensor or isinstance(b, Tensor):
            y = b._data
            if x.shape != y.shape and (x.shape, y.shape) not in _BROADCASTING:
                check_broadcast(op, x.shape, y.shape)
                _remember_broadcasting(x.shape, y.shape)
            if x.dtype is y.dtype:
                if not x.flags.c_contiguous and y.ndim > 1:  # (rare: layouts that may disagree)
                    return x, in_order_of_first(x, y)
                return x, y
    if type_a not in _OPERAND_TYPES or type_b not in _OPERAND_TYPES:
        a = check_operand(a, op, 1, "input")
        b = check_operand(b, op, 2)
    for number in (a, b):
        if type(number) is int and not -2 ** 63 <= number < 2 ** 64:
            raise int_too_big(op, number)
    a_is_tensor = isinstance(a, Tensor)
    b_is_tensor = isinstance(b, Tensor)
    if a_is_tensor and b_is_tensor:
        x, y = a._data, b._data
        if x.shape != y.shape:
            check_broadcast(op, x.shape, y.shape)
        if x.dtype is y.dtype or x.dtype == y.dtype:
            return x, (y if y.ndim < 2 or x.flags.c_contiguous else in_order_of_first(x, y))
    elif a_is_tensor:
        x = a._data
        if x.dtype.kind == "f" and type(b) is not bool and type(b) is not complex:
            return x, as_operand(b, x.dtype)  # float tensor with a number: NumPy 2 keeps the tensor's dtype, as torch
    elif b_is_tensor:
        y = b._data
        if y.dtype.kind == "f" and type(a) is not bool and type(a) is not complex:
            return as_operand(a, y.dtype), y
    elif op in _TAKE_TWO_NUMBERS:  # add(2, 3.5): the first number becomes a 0-d tensor, as in torch
        a = wrap(np.asarray(a, _dtype.scalar_dtype(a).np))
    else:
        raise TypeError(f"{op}(): expected at least one Tensor argument, got {type(a).__name__} and {type(b).__name__}")
    target = result_dtype(a, b).np
    x, y = _as(a, target), _as(b, target)
    if a_is_tensor and b_is_tensor and y.ndim > 1 and not x.flags.c_contiguous:
        y = in_order_of_first(x, y)  # the result's layout is the first operand's, as torch's
    return x, y


_BROADCASTING: set = set()  # pairs of shapes found to broadcast together: few pairs recur, each checked once


def _remember_broadcasting(a: tuple, b: tuple) -> None:
    if len(_BROADCASTING) > 256:
        _BROADCASTING.clear()
    _BROADCASTING.add((a, b))


def check_broadcast(op: str, *shapes: tuple) -> None:
    """Raise a RuntimeError naming ``op`` and the clashing sizes unless ``shapes`` broadcast together.

    >>> from ember._ops._support import check_broadcast
    >>> check_broadcast("add", (2, 3), (4,))
    Traceback (most recent call last):
    RuntimeError: add: the size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1 ...
    """
    first = shapes[0]
    for second in shapes[1:]:
        for m, n in zip(first[::-1], second[::-1]):  # the usual case, shapes that broadcast, at the least cost
            if m != n and m != 1 and n != 1:
                break
        else:
            continue
        for back, (m, n) in enumerate(zip(reversed(first), reversed(second)), 1):
            if m != n and m != 1 and n != 1:
                raise RuntimeError(
                    f"{op}: the size of tensor a ({m}) must match the size of tensor b ({n}) at non-singleton "
                    f"dimension {max(len(first), len(second)) - back}; shapes {list(first)} and {list(second)} "
                    "do not broadcast (sizes must be equal, or 1)"
                )


def _as(value, target):
    if isinstance(value, Tensor):
        data = value._data
        return data if data.dtype == target else _dtype.cast(data, target)
    try:  # a number beyond a float dtype's range is inf, quietly, as in torch
        if target.itemsize == 2 and target in LOW and isinstance(value, float):
            return quietly(IGNORE_OVER, np.asarray, in_single(value), target)  # via single, as torch makes a half
        return quietly(IGNORE_OVER, np.asarray, value, target)
    except OverflowError:  # an int outside the tensor's range (uint8 - 1): wraps around, as in torch
        return np.asarray(value).astype(target)


def result_dtype(*values) -> _dtype.dtype:
    """PyTorch's result type for tensors and numbers together."""
    dims, zero_dims, scalars = [], [], []
    for v in values:
        if isinstance(v, Tensor):
            (dims if v._data.ndim else zero_dims).append(_dtype.from_numpy_dtype(v._data.dtype))
        else:
            scalars.append(v)
    return _dtype.result_type_of(dims, zero_dims, scalars)


def float_result(array: np.ndarray) -> np.ndarray:
    """Integer results of ops that are always floating (true division, exp ...) become the default dtype."""
    if array.dtype.kind in "fc" or array.dtype is BF16:
        return array
    return array.astype(_dtype.defaults.floating.np)


def floating_data(op: str, x: Tensor) -> np.ndarray:
    """The array of ``x`` (which must be a tensor) as an op that is always floating takes it: see float_result.

    One call for what every such op checks first (require_tensor, then float_result).

    >>> floating_data("exp", wrap(np.arange(2)))
    array([0., 1.], dtype=float32)
    """
    if not isinstance(x, Tensor):
        require_tensor(x, op)
    data = x._data
    return data if data.dtype.kind in "fc" or data.dtype is BF16 else data.astype(_dtype.defaults.floating.np)


def floating_quietly(setting, fn, op: str, x) -> np.ndarray:
    """``fn`` of ``x``'s array as an op that is always floating takes it (see floating_data), with the
    floating-point warnings that ``setting`` names off (see quietly): what exp, log, sin ... do first, in one call.

    >>> floating_quietly(IGNORE_OVER, np.exp, "exp", wrap(np.array([1000.0])))
    array([inf])
    """
    data = x._data if type(x) is Tensor else None
    if data is None or data.dtype.kind not in "fc":
        data = floating_data(op, x)
    if _quiet_set is None:  # (a NumPy that keeps its settings elsewhere)
        return quietly(setting, fn, data)
    token = _quiet_set(setting)
    try:
        return fn(data)
    finally:
        _quiet_reset(token)


def whole_number(value, op: str, name: str, position: int | None = None, *, zero_dim_only: bool = False) -> int:
    """``value`` as an int: an int, or a one-element integer tensor (torch takes ``k`` so); else a TypeError.
    With ``zero_dim_only``, of tensors only a 0-d one, as torch's plain int64 arguments (polygamma's ``n``)."""
    if (isinstance(value, Tensor) and value._data.size == 1 and value._data.dtype.kind in "iu"
            and (value._data.ndim == 0 or not zero_dim_only)):
        return int(value._data.reshape(()))
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    where = f" (position {position})" if position else ""
    raise TypeError(f"{op}(): argument '{name}'{where} must be int, not {type(value).__name__}")


def normalize_dims(dim: int | tuple[int, ...] | None, ndim: int, op: str) -> tuple:
    """``dim`` (None, an int or a sequence) as a tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    if type(dim) is int and 0 <= dim < ndim:  # the usual call: one dim, in range
        return (dim,)
    # one dim may come as any integer (a NumPy one too, as torch takes it); several as a sequence of them
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    rank = max(ndim, 1)
    result = []
    for d in dims:
        if isinstance(d, (bool, np.bool_)):  # an int to Python and NumPy, but torch takes no bool for a dim
            raise TypeError(f"{op.removesuffix('()')}(): argument 'dim' must be int, not {type(d).__name__}")
        d = operator.index(d)
        if not -rank <= d < rank:
            raise IndexError(
                f"{op}: Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})"
            )
        result.append(d % rank if ndim else 0)
    return tuple(result)

