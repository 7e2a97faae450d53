"""``assert_close``: tensors, numbers and containers of them compared with torch's tolerances and messages."""
from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any, Callable

import numpy as np

from ember import _dtype as D
from ember._layout import strided as _strided
from ember._tensor import Tensor

# (rtol, atol) by dtype, torch's defaults: about the resolution of each float type; exact for the rest
_TOLERANCES = {D.float16: (1e-3, 1e-5), D.float32: (1.3e-6, 1e-5), D.float64: (1e-7, 1e-7),
               D.complex64: (1.3e-6, 1e-5), D.complex128: (1e-7, 1e-7),  # (complex: as their parts' dtype)
               D.bfloat16: (1.6e-2, 1e-5)}
# the deprecated assert_allclose keeps the looser defaults it always had (others compare exactly)
_LEGACY_TOLERANCES = {D.float16: (1e-3, 1e-3), D.float32: (1e-4, 1e-5), D.float64: (1e-5, 1e-8)}


class _Mismatch(Exception):
    """A failed comparison: its message and its exception type (AssertionError, or TypeError for bad inputs)."""

    def __init__(self, message: str, kind: type = AssertionError):
        super().__init__(message)
        self.kind = kind


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise an AssertionError unless ``actual`` and ``expected`` are close: ``|a - e| <= atol + rtol * |e|``.

    Without ``rtol`` and ``atol``, the tolerances are torch's for the dtype (float32: 1.3e-6 and 1e-5;
    float64: 1e-7 and 1e-7; float16: 1e-3 and 1e-5; integers and bools: exact). Sequences and mappings are
    compared item by item; the message names the mismatched elements, the greatest absolute and relative
    differences and their indices.

    >>> import ember
    >>> ember.testing.assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.5]))
    Traceback (most recent call last):
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 2 (50.0%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)
    """
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, check_stride=check_stride,
                   check_layout=check_layout, allow_subclasses=allow_subclasses)
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as failure:
        text, path = str(failure), getattr(failure, "path", ())
        if callable(msg):
            text = msg(text)
        elif msg is not None:
            text = msg
        elif path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{key!r}]" for key in path)
        raise failure.kind(text) from None


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated: ``assert_close`` with dtype checks off and NaNs equal."""
    warnings.warn(
        "`ember.testing.assert_allclose()` is deprecated. Use `ember.testing.assert_close()` instead.",
        FutureWarning, stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = _as_tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _as_tensor(expected).to(actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype, table=_LEGACY_TOLERANCES)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False, msg=msg or None)


def _as_tensor(value):
    from ember._creation import tensor

    return tensor(value)


def _compare(actual, expected, path: tuple, options: dict) -> None:
    try:
        _compare_here(actual, expected, path, options)
    except _Mismatch as failure:
        if not hasattr(failure, "path"):
            failure.path = path
        raise


def _compare_here(actual, expected, path: tuple, options: dict) -> None:
    if actual is None or expected is None:
        return _compare_nones(actual, expected)
    if _is_tensor_like(actual) and _is_tensor_like(expected) and type(actual) is not type(expected) and \
            not (isinstance(actual, Tensor) and isinstance(expected, Tensor) and options["allow_subclasses"]):
        _no_pair(actual, expected)
    if isinstance(actual, (Tensor, np.ndarray)) and isinstance(expected, (Tensor, np.ndarray)):
        return _compare_tensors(_tensor_of(actual), _tensor_of(expected), options)
    if _is_boolean(actual) and _is_boolean(expected):
        return _compare_booleans(actual, expected)
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, options)
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return None
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        return _compare_mappings(actual, expected, path, options)
    _no_pair(actual, expected)


def _no_pair(actual, expected):
    raise _Mismatch(
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.", TypeError
    )


def _is_tensor_like(value) -> bool:
    return isinstance(value, (Tensor, np.ndarray))


def _compare_nones(actual, expected) -> None:
    if actual is not expected:
        raise _Mismatch(f"None mismatch: {actual} is not {expected}")


def _is_boolean(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def _compare_booleans(actual, expected) -> None:
    # Python's and NumPy's booleans compare with each other, whatever check_dtype says, as in torch
    if bool(actual) is not bool(expected):
        raise _Mismatch(f"Booleans mismatch: {actual} is not {expected}")


def _is_number(value) -> bool:
    return isinstance(value, (bool, int, float, complex, np.number, np.bool_))


def _is_sequence(value) -> bool:
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, str)


def _tensor_of(value) -> Tensor:
    from ember._creation import from_numpy

    return value if isinstance(value, Tensor) else from_numpy(np.asarray(value))


def _compare_mappings(actual, expected, path: tuple, options: dict) -> None:
    if set(actual) != set(expected):
        missing = sorted(set(expected) - set(actual), key=repr)
        extra = sorted(set(actual) - set(expected), key=repr)
        raise _Mismatch(
            "The keys of the mappings do not match:\n"
            f"Missing keys in the actual mapping: {missing}\nAdditional keys in the actual mapping: {extra}"
        )
    for key in expected:
        _compare(actual[key], expected[key], path + (key,), options)


def _tolerances(*dtypes, table: dict = _TOLERANCES) -> tuple:
    rtols, atols = zip(*(table.get(dtype, (0.0, 0.0)) for dtype in dtypes))
    return max(rtols), max(atols)


def _compare_numbers(actual, expected, options: dict) -> None:
    if options["check_dtype"] and type(actual) is not type(expected):
        raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    rtol, atol = options["rtol"], options["atol"]
    if rtol is None:
        rtol, atol = _tolerances(_number_dtype(actual), _number_dtype(expected))
    if actual == expected or options["equal_nan"] and _both_nan(actual, expected):
        return
    difference = abs(actual - expected)
    if difference <= atol + rtol * abs(expected) and math.inf not in (abs(actual), abs(expected)):
        return
    relative = math.inf if expected == 0 else difference / abs(expected)
    raise _Mismatch(_message("Scalars", rtol, atol, f"Expected {expected} but got {actual}.",
                             difference, None, relative, None))


def _number_dtype(number) -> D.dtype:
    return D.float64 if isinstance(number, (float, complex, np.floating, np.complexfloating)) else D.int64


def _both_nan(a, b) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


def _compare_tensors(actual: Tensor, expected: Tensor, options: dict) -> None:
    if actual.shape != expected.shape:
        raise _Mismatch(f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}.")
    if options["check_dtype"] and actual.dtype is not expected.dtype:
        raise _Mismatch(f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
    if actual.layout is not _strided or expected.layout is not _strided:
        return _compare_sparse(actual, expected, options)
    if options["check_stride"] and actual.stride() != expected.stride():
        raise _Mismatch(f"The values for attribute 'stride()' do not match: {actual.stride()} != {expected.stride()}.")
    rtol, atol = options["rtol"], options["atol"]
    if rtol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype)
    common = D.promote_types(actual.dtype, expected.dtype).np  # torch's promotion: int64 with float32 is float32
    a, e = actual._data.astype(common), expected._data.astype(common)
    matches = _close(a, e, rtol, atol, options["equal_nan"])
    if matches.all():
        return
    if not a.ndim:
        raise _Mismatch(_message("Scalars", rtol, atol, f"Expected {e.item()} but got {a.item()}.",
                                 *_scalar_differences(a, e)))
    raise _Mismatch(_tensor_message(a, e, matches, rtol, atol))


def _compare_sparse(actual: Tensor, expected: Tensor, options: dict) -> None:
    from ember.testing._sparse import compare_sparse

    rtol, atol = options["rtol"], options["atol"]
    if rtol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype)

    def compare_arrays(a: np.ndarray, e: np.ndarray, identifier: str, exact: bool) -> None:
        tolerances = (0.0, 0.0) if exact else (rtol, atol)
        if a.shape != e.shape:
            raise _Mismatch(f"The values for attribute 'shape' of {identifier} do not match: {list(a.shape)} != "
                            f"{list(e.shape)}.")
        common = np.result_type(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
        matches = _close(a, e, *tolerances, options["equal_nan"])
        if not matches.all():
            raise _Mismatch(_tensor_message(a, e, matches, *tolerances, identifier))

    compare_sparse(actual, expected, options, _Mismatch, compare_arrays)


def _close(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    if a.dtype == np.bool_ or a.dtype.kind in "iu" and rtol == 0 and atol == 0:
        return a == e
    wide = np.complex128 if a.dtype.kind == "c" else np.float64  # (complex: the distance in the plane)
    with np.errstate(all="ignore"):
        wide_a, wide_e = a.astype(wide), e.astype(wide)
        # an infinity is close to itself only, however wide the tolerances
        within = (np.abs(wide_a - wide_e) <= atol + rtol * np.abs(wide_e)) & np.isfinite(wide_a) & np.isfinite(wide_e)
        close = (wide_a == wide_e) | within
    if equal_nan:
        close |= np.isnan(wide_a) & np.isnan(wide_e)
    return close


def _scalar_differences(a: np.ndarray, e: np.ndarray) -> tuple:
    """(absolute, None, relative, None) for a 0-d mismatch, from the two values as Python numbers, as torch
    reports them: subtracted and divided in double precision whatever the dtype (integers subtracted exactly)."""
    wide = {"f": np.float64, "c": np.complex128}.get(D.kind(a.dtype), np.int64)
    actual, expected = a.astype(wide).item(), e.astype(wide).item()
    absolute = abs(actual - expected)
    with np.errstate(all="ignore"):
        relative = (np.float64(absolute) / np.float64(abs(expected))).item()
    return absolute, None, relative, None


def _differences(a: np.ndarray, e: np.ndarray, matches: np.ndarray) -> tuple:
    """Absolute and relative differences, zero where the elements match, computed in the dtype torch uses.

    Integers and bools are subtracted as int64 and divided in single precision (torch's default float).
    """
    floating = D.kind(a.dtype) in "fc"
    if not floating:
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        absolute = np.abs(a - e)
        absolute[matches] = 0
        denominator = np.abs(e)
        relative = absolute / denominator if floating else absolute.astype(np.float32) / denominator.astype(np.float32)
    relative[matches] = 0
    if a.dtype is D.BF16:  # widened (exactly) so that item() gives Python floats
        return absolute.astype(np.float32), relative.astype(np.float32)
    return absolute, relative


def _tensor_message(a: np.ndarray, e: np.ndarray, matches: np.ndarray, rtol: float, atol: float,
                    identifier: str = "Tensor-likes") -> str:
    total, mismatched = matches.size, int(matches.size - matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    absolute, relative = _differences(a.reshape(-1), e.reshape(-1), matches.reshape(-1))
    at_abs, at_rel = _argmax(absolute), _argmax(relative)
    return _message(identifier, rtol, atol, extra,
                    absolute[at_abs].item(), np.unravel_index(at_abs, a.shape),
                    relative[at_rel].item(), np.unravel_index(at_rel, a.shape))


def _argmax(values: np.ndarray) -> int:
    """The index of the greatest value, a NaN counting as greatest (as torch.max finds it)."""
    nan = np.isnan(values) if D.kind(values.dtype) == "f" else None
    return int(np.argmax(nan)) if nan is not None and nan.any() else int(np.argmax(values))


def _message(identifier: str, rtol: float, atol: float, extra: str, absolute, abs_index, relative, rel_index) -> str:
    equality = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if equality else 'close'}!", "", extra]
    for kind, difference, index, tolerance in (("absolute", absolute, abs_index, atol),
                                                ("relative", relative, rel_index, rtol)):
        line = f"{kind.title()} difference: {difference}" if index is None else \
            f"Greatest {kind} difference: {difference} at index {tuple(int(i) for i in index)}"
        lines.append(line if equality else f"{line} (up to {tolerance} allowed)")
    return "\n".join(lines)
