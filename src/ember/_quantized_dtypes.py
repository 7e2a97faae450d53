"""The quantized dtypes (``ember.quint8``, ``qint8``, ``qint32``, ``quint4x2``, ``quint2x4``) and the
quantization schemes (``ember.per_tensor_affine`` ...).

A quantized dtype names how a quantized tensor's integers are stored and which range they take. It is a
dtype of its own promotion category, so it promotes with nothing but itself, as in torch; and it has no
NumPy dtype of its own (``.np`` says how to make such a tensor), so a creation function given one refuses
instead of making a plain integer tensor.

>>> import ember
>>> ember.quint8, ember.qint8.is_floating_point, ember.qint32.itemsize
(ember.quint8, False, 4)
>>> ember.per_channel_affine
ember.per_channel_affine
"""
from __future__ import annotations

import numpy as np

from ember import _dtype


class QuantizedDtype(_dtype.dtype):
    """A quantized element type: integers in ``[qmin, qmax]`` stored as ``storage`` (a NumPy dtype)."""

    __slots__ = ("storage", "qmin", "qmax", "scalar_name")

    def __init__(self, name: str, storage, qmin: int, qmax: int, category: int, scalar_name: str):
        self.name, self.storage, self.qmin, self.qmax = name, np.dtype(storage), qmin, qmax
        self._kind = category  # a category of its own: see _dtype._promote_pair
        self.is_floating_point = self.is_complex = False
        self.itemsize = self.storage.itemsize
        self.scalar_name = scalar_name  # torch's name in messages: QUInt8

    @property
    def np(self):
        raise RuntimeError(
            f"{self!r} is a quantized dtype: make a tensor of it with ember.quantize_per_tensor(x, scale, "
            f"zero_point, {self!r}) or ember.quantize_per_channel, not with a creation function or a cast"
        )

    @property
    def is_signed(self) -> bool:
        raise RuntimeError("isSignedType not supported for quantized types")


# Each its own category (4 and up: above bool, integer, floating and complex), so none promotes with another.
quint8 = QuantizedDtype("quint8", np.uint8, 0, 255, 4, "QUInt8")
qint8 = QuantizedDtype("qint8", np.int8, -128, 127, 5, "QInt8")
qint32 = QuantizedDtype("qint32", np.int32, -(2 ** 31), 2 ** 31 - 1, 6, "QInt32")
quint4x2 = QuantizedDtype("quint4x2", np.uint8, 0, 15, 7, "QUInt4x2")
quint2x4 = QuantizedDtype("quint2x4", np.uint8, 0, 3, 8, "QUInt2x4")
QUANTIZED = (quint8, qint8, qint32, quint4x2, quint2x4)


def promotion_error(a: _dtype.dtype, b: _dtype.dtype) -> RuntimeError:
    """What promoting a quantized dtype with another dtype raises (torch has no rule for it)."""
    names = [getattr(d, "scalar_name", None) or _dtype.scalar_type_name(d.np) for d in (a, b)]
    return RuntimeError(
        "promoteTypes with quantized numbers is not handled yet; figure out what the correct rules should be, "
        f"offending types: {names[0]} {names[1]}. Dequantize first (q.dequantize()) to compute in floating point"
    )


class qscheme:
    """How a quantized tensor maps its integers to real values: one scale and zero point, or one per channel."""

    __module__ = "ember"
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return "ember." + self.name

    def __reduce__(self):
        return (_scheme_by_name, (self.name,))


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")
_SCHEMES = {s.name: s for s in (per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                                 per_channel_symmetric, per_channel_affine_float_qparams)}


def _scheme_by_name(name: str) -> qscheme:
    return _SCHEMES[name]
