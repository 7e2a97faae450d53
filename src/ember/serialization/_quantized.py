"""Quantized tensors in torch's checkpoint format: what ``torch._utils._rebuild_qtensor`` is given.

torch pickles a quantized tensor as that call over a storage of its quantized dtype (``QUInt8Storage``
...) with the quantizer's parameters: ``(per_tensor_affine, scale, zero_point)`` or
``(per_channel_affine, scales, zero_points, axis)``, the per-channel ones as tensors. ``ember.save`` writes
the same, and ``ember.load`` reads it (files of torch's, too) without running anything from the file.
"""
from __future__ import annotations

import numpy as np

from ember import _quantized as QT, _quantized_dtypes as QD
from ember._tensor import Tensor


def quantizer_params(q: QT.QuantizedTensor) -> tuple:
    """The parameters torch saves beside a quantized tensor's storage (float zero points under the
    per_channel_affine tag, as torch writes them)."""
    if q._scales is None:
        return (q._qscheme, q._scale, q._zero_point)
    return (QD.per_channel_affine, Tensor._wrap(q._scales.copy()), Tensor._wrap(q._zero_points.copy()), q._axis)


def rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad, backward_hooks):
    """torch's ``_rebuild_qtensor``: a quantized tensor over a storage of its quantized dtype."""
    from ember.serialization._rebuild import LoadedStorage, _view

    if not isinstance(storage, LoadedStorage) or not isinstance(storage.dtype, QD.QuantizedDtype):
        raise ValueError(f"_rebuild_qtensor: expected a storage of a quantized dtype, got {storage!r}")
    if not isinstance(quantizer_params, tuple) or not quantizer_params:
        raise ValueError(f"_rebuild_qtensor: expected the quantizer's parameters as a tuple, got {quantizer_params!r}")
    data = _view(storage, storage_offset, size, stride, storage.dtype)
    scheme, *params = quantizer_params
    if scheme is QD.per_tensor_affine and len(params) == 2:
        scale, zero_point = params
        if type(scale) is not float or type(zero_point) is not int:
            raise ValueError(f"_rebuild_qtensor: expected a float scale and an int zero point, got {params!r}")
        return QT.per_tensor(data, storage.dtype, scale, zero_point)
    if scheme in (QD.per_channel_affine, QD.per_channel_affine_float_qparams) and len(params) == 3:
        scales, zero_points, axis = _values(params[0]), _values(params[1]), params[2]
        if type(axis) is not int or not 0 <= axis < max(data.ndim, 1) or scales.shape != zero_points.shape or \
                data.ndim and scales.size != data.shape[axis]:
            raise ValueError(f"_rebuild_qtensor: per-channel parameters that do not fit a tensor of size {size}: "
                             f"{scales.size} scales, {zero_points.size} zero points along axis {axis!r}")
        floating = zero_points.dtype.kind == "f"
        return QT.per_channel(data, storage.dtype, scales.astype(np.float32 if floating else np.float64),
                              zero_points if floating else zero_points.astype(np.int64), axis)
    raise ValueError(f"_rebuild_qtensor: unknown quantization {scheme!r} with {len(params)} parameters")


def _values(value) -> np.ndarray:
    """Per-channel parameters as saved: a tensor (torch's files) or a list (older ones)."""
    if isinstance(value, Tensor):
        return value._data.reshape(-1)
    if isinstance(value, list) and all(isinstance(v, (int, float)) for v in value):
        return np.asarray(value)
    raise ValueError(f"_rebuild_qtensor: expected per-channel parameters as a tensor or a list, got {value!r}")
