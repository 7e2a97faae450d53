"""Data types and PyTorch's type-promotion rules.

>>> import ember
>>> ember.float64
ember.float64
>>> ember.result_type(ember.tensor([1, 2]), 2.5)
ember.float32
"""
from __future__ import annotations

import math

import numpy as np

from ember import _bfloat16_support, _half_bits


class dtype:
    """A tensor element type: a thin, hashable name around a NumPy dtype."""

    __module__ = "ember"  # where users reach it: the class prints as ember.dtype, as torch's as torch.dtype
    __slots__ = ("name", "np", "is_floating_point", "is_signed", "is_complex", "itemsize", "_kind")

    def __init__(self, name: str, np_dtype, kind: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self._kind = kind  # 0 bool, 1 integer, 2 floating, 3 complex: the promotion category
        self.is_floating_point = kind == 2
        self.is_signed = name != "bool" and not name.startswith("uint")
        self.itemsize = self.np.itemsize
        self.is_complex = kind == 3

    def __repr__(self) -> str:
        return "ember." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> "dtype":
        """The dtype of this one's real and imaginary parts (itself, for a real dtype).

        >>> ember.complex64.to_real(), ember.int32.to_real()
        (ember.float32, ember.int32)
        """
        return _REAL_OF.get(self, self)

    def to_complex(self) -> "dtype":
        """The complex dtype whose parts are this floating dtype (float16's is complex64: ember has no complex32).

        >>> ember.float64.to_complex()
        ember.complex128
        """
        if self._kind == 3:
            return self
        if self._kind != 2:
            raise RuntimeError(f"to_complex is only defined for floating dtypes, got {self!r}")
        return complex128 if self is float64 else complex64


bool_ = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
# torch's "limited support" unsigned types: no promotion with any other integer or bool (see _promote_pair)
uint16, uint32, uint64 = (dtype(f"uint{bits}", f"uint{bits}", 1) for bits in (16, 32, 64))
_LIMITED_UNSIGNED = frozenset((uint16, uint32, uint64))


class _UnavailableDtype(dtype):
    """bfloat16 without ml_dtypes: a dtype by name whose storage, when asked for, says how to install it."""

    __slots__ = ()

    def __init__(self, name: str, itemsize: int):
        self.name, self._kind, self.itemsize = name, 2, itemsize
        self.is_floating_point, self.is_signed, self.is_complex = True, True, False

    @property
    def np(self):
        raise _bfloat16_support.missing()


BF16 = _bfloat16_support.load_numpy_dtype()  # None without ml_dtypes
bfloat16 = _UnavailableDtype("bfloat16", 2) if BF16 is None else dtype("bfloat16", BF16, 2)
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)
_REAL_OF = {complex64: float32, complex128: float64}

ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128, uint16, uint32,
       uint64) + (
    () if BF16 is None else (bfloat16,))
_FROM_NUMPY = {d.np: d for d in ALL}
_NAMES = {d.name: d for d in ALL} | {"bfloat16": bfloat16}


def _by_name(name: str) -> dtype:
    return _NAMES[name]


class _Defaults:
    """Process-wide default floating dtype (``set_default_dtype``)."""

    floating = float32


defaults = _Defaults()


def get_default_dtype() -> dtype:
    """The dtype of new floating tensors, float32 unless changed.

    >>> ember.get_default_dtype()
    ember.float32
    """
    return defaults.floating


def set_default_dtype(d: dtype, /) -> None:
    """Make ``d`` (float32 or float64 or float16) the default floating dtype."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point dtypes are supported as the default, got {d!r}")
    defaults.floating = d


def from_numpy_dtype(np_dtype) -> dtype:
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        np_dtype = np.dtype(np_dtype)
        if not np_dtype.isnative and np_dtype.newbyteorder("=") in _FROM_NUMPY:
            raise ValueError(
                f"the NumPy array's byte order ({np_dtype.str}) differs from the native one, which ember "
                "cannot read in place; convert it first, e.g. a.astype(a.dtype.newbyteorder('='))"
            ) from None
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The only supported types are: "
            "complex128, complex64, float64, float32, float16, int64, int32, int16, int8, uint64, uint32, uint16, "
            "uint8, and bool."
        ) from None


def to_dtype(d) -> dtype:
    """Accept an ember dtype, a NumPy dtype or a Python type (float, int, bool, complex)."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is complex:
        return complex128
    if d is int:
        return int64
    if d is bool:
        return bool_
    return from_numpy_dtype(d)


def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a._kind == 3 or b._kind == 3:
        if a._kind >= 2 and b._kind >= 2:  # complex with floating or complex: the wider parts, made complex
            return _promote_pair(a.to_real(), b.to_real()).to_complex()
    if a._kind != 2 and b._kind != 2 and (a in _LIMITED_UNSIGNED or b in _LIMITED_UNSIGNED):
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
            f"{scalar_type_name(a.np)} and {scalar_type_name(b.np)}; convert an operand first, e.g. with "
            ".to(ember.int64) or .double()"
        )
    if a._kind != b._kind:
        if a._kind > 3 or b._kind > 3:  # a quantized dtype (ember._quantized_dtypes): torch promotes none
            raise _quantized_dtypes.promotion_error(a, b)
        return a if a._kind > b._kind else b  # the higher category wins unchanged
    if a is bfloat16 or b is bfloat16:  # neither 16-bit float holds the other: they meet in float32, as in torch
        other = b if a is bfloat16 else a
        return float64 if other is float64 else float32
    return _FROM_NUMPY[np.promote_types(a.np, b.np)]


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """PyTorch's promotion of two dtypes: the higher category wins, then the wider type.

    >>> ember.promote_types(ember.int64, ember.float16)
    ember.float16
    """
    return _promote_pair(type1, type2)


HALF = np.dtype(np.float16)
LOW = (HALF,) if BF16 is None else (HALF, BF16)  # the 16-bit floats, which torch computes in single precision
_SINGLE_OVERFLOW = 2.0 ** 128 - 2.0 ** 103  # doubles from here on round to infinity in single precision


def kind(np_dtype: np.dtype) -> str:
    """NumPy's kind letter of ``np_dtype``, with bfloat16 (which ml_dtypes files as 'V') as the float it is.

    >>> kind(np.dtype(np.float16)), kind(np.dtype(np.int8))
    ('f', 'i')
    """
    return "f" if np_dtype is BF16 else np_dtype.kind


def float_info(np_dtype: np.dtype):
    """NumPy's ``finfo`` of a float dtype, bfloat16's (from ml_dtypes) included.

    >>> float_info(np.dtype(np.float16)).eps
    np.float16(0.000977)
    """
    if np_dtype is BF16:
        import ml_dtypes  # present: BF16 exists only with it

        return ml_dtypes.finfo(np_dtype)
    return np.finfo(np_dtype)


def cast(data, np_dtype: np.dtype) -> np.ndarray:
    """``data`` (an array, or Python numbers) as a new array of ``np_dtype``, converted as torch converts.

    torch makes a half from a single, so a double becomes half through single: rounded twice, where
    NumPy rounds once. The two differ where the single lands on a midpoint between two halves.

    >>> v = 1.000488288941043  # just above the midpoint of the halves 1 and 1.0009765625
    >>> cast(np.array([v]), HALF), np.array([v]).astype(np.float16)
    (array([1.], dtype=float16), array([1.001], dtype=float16))
    """
    if np_dtype is HALF or np_dtype is BF16 or np_dtype in LOW:
        single = np.array(data, dtype=np.float32) if not isinstance(data, np.ndarray) else data.astype(np.float32,
                                                                                                         copy=False)
        return _half_bits.half_from_single(single) if np_dtype == HALF else single.astype(np_dtype)
    if isinstance(data, np.ndarray):
        if data.dtype == HALF and np_dtype == np.float32:
            return _half_bits.single_from_half(data)
        return data.astype(np_dtype)
    return np.array(data, dtype=np_dtype)


def in_single(number: int | float) -> np.float32:
    """A Python number in single precision: how torch's kernels take a number for half-precision arithmetic,
    and how it makes a half from one. Beyond single's range it is an infinity, quietly, as in torch.

    >>> in_single(0.1), in_single(1e300)
    (np.float32(0.1), np.float32(inf))
    """
    if abs(number) >= _SINGLE_OVERFLOW:
        return np.float32(math.copysign(math.inf, number))
    return np.float32(number)


# torch's scalar type names, which its error messages use (Float, not Float32)
_SCALAR_TYPE_NAMES = {
    "float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char", "uint8": "Byte",
    "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool", "complex64": "ComplexFloat",
    "complex128": "ComplexDouble", "bfloat16": "BFloat16", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
}


def scalar_type_name(np_dtype) -> str:
    """torch's name for a dtype in its error messages.

    >>> scalar_type_name(np.float32), scalar_type_name(np.int64)
    ('Float', 'Long')
    """
    name = np.dtype(np_dtype).name
    return _SCALAR_TYPE_NAMES.get(name, name.capitalize())


def scalar_dtype(value) -> dtype:
    """The dtype a Python scalar would take as a tensor."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return defaults.floating.to_complex()
    return defaults.floating


def _join_higher(result: dtype, higher: dtype) -> dtype:
    """A lower tier's type of a higher category joins ``result``: a complex one over a floating result makes that
    result's complex counterpart (float32 with a complex128 number is complex64, as in torch); otherwise it wins."""
    if higher._kind == 3 and result._kind == 2:
        return result.to_complex()
    return higher


def result_type_of(dims: list, zero_dims: list, scalars: list) -> dtype:
    """Promote three tiers, as PyTorch does: tensors with dimensions, 0-d tensors, Python scalars.

    A lower tier changes the result only if it is of a higher category
    (bool < integer < floating); then it contributes its own type.
    """
    result = None
    for tier in (dims, zero_dims):
        tier_type = None
        for d in tier:
            tier_type = d if tier_type is None else _promote_pair(tier_type, d)
        if tier_type is not None:
            if result is None:
                result = tier_type
            elif tier_type._kind > result._kind:
                result = _join_higher(result, tier_type)
    for value in scalars:
        d = scalar_dtype(value)
        if result is None:
            result = d
        elif d._kind > result._kind:
            result = _join_higher(result, d)
    return result


# ---- quantized dtypes: each a promotion category of its own (see _promote_pair), known by name for pickling
from ember import _quantized_dtypes  # noqa: E402

_NAMES.update({d.name: d for d in _quantized_dtypes.QUANTIZED})
