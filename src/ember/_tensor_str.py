"""Text layout for ``repr(tensor)``, matching PyTorch's output character for character.

Users write ``import ember as torch`` and expect the REPL to look the way it
does under PyTorch, so this module reproduces torch's layout rules on top of
plain NumPy arrays:

* one element style shared by the whole tensor: integer-valued floats print as
  ``2.``, other floats with a fixed number of decimals, and scientific notation
  is used when magnitudes are very mixed, very large or very small;
* every element is right-justified to a common width, rows wrap at
  ``linewidth`` and large tensors are summarised with ``...``;
* ``size=``/``dtype=`` suffixes (and the caller's ``grad_fn=``/``requires_grad=``)
  follow the values and move to a new line when the last line would overflow.

The print options are module state, changed with :func:`set_printoptions`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any, Iterator, List, Optional, Sequence

import numpy as np

from ember import _dtype

__all__ = ["format_tensor", "set_printoptions", "get_printoptions", "printoptions"]

_PREFIX = "tensor("
# Marker for "elements left out here" inside a summarised dimension.
_ELIDED = None


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: Optional[bool] = None


_PROFILES = {
    "default": _PrintOptions(),
    "short": _PrintOptions(precision=2, edgeitems=2),
    "full": _PrintOptions(threshold=math.inf),
}

_options = _PrintOptions()


# --------------------------------------------------------------------------
# Print options
# --------------------------------------------------------------------------


def set_printoptions(
    precision: Optional[int] = None,
    threshold: Optional[float] = None,
    edgeitems: Optional[int] = None,
    linewidth: Optional[int] = None,
    profile: Optional[str] = None,
    sci_mode: Optional[bool] = None,
) -> None:
    """Change how tensors print, with the semantics of ``torch.set_printoptions``.

    ``profile`` ("default", "short" or "full") is applied first and the other
    arguments then override it; arguments left as ``None`` keep their current
    value, except ``sci_mode``, which is always replaced (``None`` means
    "choose automatically"), as in torch.

    >>> set_printoptions(precision=2)
    >>> get_printoptions()["precision"]
    2
    >>> set_printoptions(profile="default")
    """
    if profile in _PROFILES:
        _copy_options(_PROFILES[profile], into=_options)
    overrides = dict(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth)
    for name, value in overrides.items():
        if value is not None:
            setattr(_options, name, value)
    _options.sci_mode = sci_mode


def get_printoptions() -> dict:
    """Return the current print options as a dict (a copy; edit them with set_printoptions)."""
    return dataclasses.asdict(_options)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily apply ``set_printoptions(**kwargs)`` inside a ``with`` block."""
    saved = dataclasses.replace(_options)
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        _copy_options(saved, into=_options)


def _copy_options(source: _PrintOptions, *, into: _PrintOptions) -> None:
    for field in dataclasses.fields(_PrintOptions):
        setattr(into, field.name, getattr(source, field.name))


# --------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------


def format_tensor(
    array: np.ndarray,
    *,
    dtype_name: str,
    default_dtype_name: str,
    trailing: Sequence[str] = (),
    prefix: str = _PREFIX,
    contents: Optional[str] = None,
) -> str:
    """Return the full ``repr`` of a tensor holding ``array``.

    ``dtype_name`` is how the tensor's dtype prints (e.g. ``"ember.float64"``),
    ``default_dtype_name`` the printed name of the current default dtype, and
    ``trailing`` holds already formatted suffixes such as
    ``"grad_fn=<MulBackward0>"`` that go after the size/dtype suffixes.
    ``prefix`` opens the text: a Tensor subclass shows its own name, as in torch.
    ``contents``, when given, is shown in place of the values (the suffixes stay),
    as ``Tensor.__repr__(tensor_contents=...)`` does in torch.

    >>> import numpy as np
    >>> print(format_tensor(np.array([[1.0, 2.5], [-3.0, 4.0]]),
    ...                     dtype_name="ember.float64",
    ...                     default_dtype_name="ember.float32",
    ...                     trailing=["requires_grad=True"]))
    tensor([[ 1.0000,  2.5000],
            [-3.0000,  4.0000]], dtype=ember.float64, requires_grad=True)
    """
    array = np.asarray(array)
    empty = array.size == 0
    suffixes = (_empty_suffixes if empty else _filled_suffixes)(array.shape, dtype_name, default_dtype_name)
    if contents is None:
        contents = "[]" if empty else _values_text(array, len(prefix))
    return _attach_suffixes(prefix + contents, [*suffixes, *trailing], len(prefix))


def _empty_suffixes(shape: tuple, dtype_name: str, default_dtype_name: str) -> List[str]:
    # An empty tensor shows no values, so its shape (unless it is the plain
    # "(0,)") and any non-default dtype, int64 and bool included, must be stated.
    suffixes = [] if len(shape) == 1 else [_size_suffix(shape)]
    if dtype_name != default_dtype_name:
        suffixes.append(f"dtype={dtype_name}")
    return suffixes


def _filled_suffixes(shape: tuple, dtype_name: str, default_dtype_name: str) -> List[str]:
    # With edgeitems=0 a summary shows no values at all, so torch always
    # states the size in that setting (even when nothing is summarised).
    suffixes = [] if _options.edgeitems else [_size_suffix(shape)]
    if not _dtype_is_implied(dtype_name, default_dtype_name):
        suffixes.append(f"dtype={dtype_name}")
    return suffixes


def _dtype_is_implied(dtype_name: str, default_dtype_name: str) -> bool:
    # Literals like 1., 1 and True already produce these dtypes, so naming them is noise.
    bare_name = dtype_name.rpartition(".")[2]
    default_complex = _COMPLEX_OF.get(default_dtype_name.rpartition(".")[2])
    return dtype_name == default_dtype_name or bare_name in ("int64", "bool", default_complex)


# the complex dtype that a complex literal (1j) makes under each default floating dtype
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128", "float16": "complex32"}


def _size_suffix(shape: tuple) -> str:
    return f"size={tuple(int(n) for n in shape)}"


def _attach_suffixes(text: str, suffixes: Sequence[str], indent: int, force_newline: bool = False) -> str:
    """Append ``, suffix`` items, starting a new line indented by ``indent`` when one would overflow (the first
    one always, if ``force_newline``: as torch starts a sparse tensor's)."""
    # torch measures the last line as two characters longer than it is, so a
    # suffix that would exactly reach the line width still wraps; mirror that.
    line_length = len(text) - text.rfind("\n") + 1
    pieces = [text]
    for suffix in suffixes:
        if force_newline or line_length + len(suffix) + 2 > _options.linewidth:
            force_newline = False
            pieces.append(",\n" + " " * indent + suffix)
            line_length = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            line_length += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


# --------------------------------------------------------------------------
# Element formatting
# --------------------------------------------------------------------------


class _ElementFormatter:
    """One element style and width shared by every value of a tensor.

    It is built from the values that will actually be shown, so a summarised
    tensor's layout depends only on its visible corners.
    """

    def __init__(self, shown_values: np.ndarray) -> None:
        self.is_floating = shown_values.dtype.kind == "f"
        self.style = "int"  # one of "int", "fixed", "sci"; "int" prints floats as "2."
        self.width = 1
        if self.is_floating:
            self._choose_float_style(shown_values.astype(np.float64).ravel())
        else:
            self.width = max((len(str(v)) for v in shown_values.ravel().tolist()), default=1)

    def _choose_float_style(self, values: np.ndarray) -> None:
        # Zeros, nan and inf say nothing about magnitude, so only the other
        # values decide the style and the width (the rest are padded or overflow).
        informative = values[np.isfinite(values) & (values != 0)]
        if informative.size == 0:
            return  # torch keeps the "0." / "nan" style here, even if sci_mode is forced
        integral = bool(np.all(informative == np.ceil(informative)))
        self.style = self._pick_style(np.abs(informative), integral)
        self.width = max(len(self._render(v)) for v in informative.tolist())

    @staticmethod
    def _pick_style(magnitudes: np.ndarray, integral: bool) -> str:
        if _options.sci_mode is not None:
            wants_sci = _options.sci_mode
        else:
            wants_sci = _magnitudes_need_sci(float(magnitudes.min()), float(magnitudes.max()))
        if wants_sci:
            return "sci"
        return "int" if integral else "fixed"

    def format(self, value: Any) -> str:
        """Format one Python scalar (as from ``ndarray.tolist()``), right-justified."""
        text = self._render(value) if self.is_floating else str(value)
        return text.rjust(self.width)

    def _render(self, value: float) -> str:
        if self.style == "sci":
            return f"{value:.{_options.precision}e}"
        if self.style == "fixed":
            return f"{value:.{_options.precision}f}"
        # The trailing dot marks a float; nan and inf need no marking.
        return f"{value:.0f}" + ("." if math.isfinite(value) else "")


class _ComplexFormatter:
    """Complex elements: the real parts share one style and width, the imaginary parts another.

    Each element prints as its real part, padded to the real parts' width, then the signed imaginary part,
    unpadded, and ``j``: ``1.5000+2.j``.
    """

    def __init__(self, shown_values: np.ndarray) -> None:
        self.real = _ElementFormatter(shown_values.real)
        self.imag = _ElementFormatter(shown_values.imag)
        self.width = self.real.width + self.imag.width + 1  # (the j), which decides how many fit on a line

    def format(self, value: complex) -> str:
        imag = self.imag.format(value.imag).lstrip() + "j"
        sign = "" if imag[0] in "+-" else "+"
        return self.real.format(value.real) + sign + imag


def _magnitudes_need_sci(smallest: float, largest: float) -> bool:
    # Fixed notation would need too many digits or round the small values
    # away. (Nonzero integral values are >= 1, so "too small" never hits them.)
    too_mixed = largest / smallest > 1000.0
    too_large = largest > 1.0e8
    too_small = smallest < 1.0e-4
    return too_mixed or too_large or too_small


# --------------------------------------------------------------------------
# Layout of nested rows
# --------------------------------------------------------------------------


def _values_text(array: np.ndarray, indent: int) -> str:
    """The bracketed values of a non-empty tensor, e.g. ``[[1., 2.],\\n [3., 4.]]``."""
    # float16 needs no special case: its values are exact as Python floats,
    # which is what torch formats after widening half precision.
    if array.dtype is _dtype.BF16:  # as half: exact in single, which is what torch formats
        array = array.astype(np.float32)
    summarize = array.size > _options.threshold
    shown = _summary_values(array) if summarize else array
    formatter = _ComplexFormatter(shown) if array.dtype.kind == "c" else _ElementFormatter(shown)
    return _nested_text(array, indent, summarize, formatter)


def _shown_indices(length: int, summarize: bool) -> list:
    """Indices along one dimension to print, with ``_ELIDED`` where items are left out."""
    edge = _options.edgeitems
    if summarize and length > 2 * edge:
        return [*range(edge), _ELIDED, *range(length - edge, length)]
    return list(range(length))


def _summary_values(array: np.ndarray) -> np.ndarray:
    """Just the values a summarised print shows (the corners of every dimension)."""
    for axis, length in enumerate(array.shape):
        kept = [i for i in _shown_indices(length, summarize=True) if i is not _ELIDED]
        array = np.take(array, np.asarray(kept, dtype=np.intp), axis=axis)
    return array


def _nested_text(array: np.ndarray, indent: int, summarize: bool, formatter: _ElementFormatter) -> str:
    if array.ndim == 0:
        return formatter.format(array.item())
    if array.ndim == 1:
        return _row_text(array, indent, summarize, formatter)
    blocks = [
        "..." if i is _ELIDED else _nested_text(array[i], indent + 1, summarize, formatter)
        for i in _shown_indices(array.shape[0], summarize)
    ]
    # Sub-blocks of a 3-d tensor are separated by one blank line, of a 4-d by two, etc.
    separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(blocks) + "]"


def _row_text(row: np.ndarray, indent: int, summarize: bool, formatter: _ElementFormatter) -> str:
    if summarize and not _options.edgeitems:
        items = ["..."]
    else:
        values = row.tolist()
        # The extra space in " ..." comes from torch and counts as an element when wrapping.
        items = [" ..." if i is _ELIDED else formatter.format(values[i]) for i in _shown_indices(len(values), summarize)]
    per_line = max(1, int((_options.linewidth - indent) // (formatter.width + len(", "))))
    lines = [", ".join(items[start : start + per_line]) for start in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
