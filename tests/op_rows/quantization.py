"""Op-table rows: fake quantization, and quantizing then reading back.

Fake quantization's gradient is the straight-through estimator, not the derivative of the rounding, so
these rows are not gradchecked (``differentiable=False``); ``tests/quantization/`` compares the gradients
with torch's instead, ties and clamped values included.
"""
import numpy as np

from op_spec import HALF, A, C, Err, OpSpec, S, T, s

_SCALES, _POINTS = C(np.array([0.1, 0.25, 0.05], np.float32)), C(np.array([0, 3, -2], np.int32))
_FLOAT_POINTS = C(np.array([0.5, 3.0, -2.25], np.float32))


def _fake_per_tensor(m, x, *args):
    return m.fake_quantize_per_tensor_affine(x, *args)


def _fake_per_channel(m, x, *args):
    return m.fake_quantize_per_channel_affine(x, *args)


def _round_trip(m, x, scale, zero_point, dtype):
    return m.quantize_per_tensor(x, scale, zero_point, getattr(m, dtype)).dequantize()


def _integers(m, x, scale, zero_point, dtype):
    return m.quantize_per_tensor(x, scale, zero_point, getattr(m, dtype)).int_repr()


def _channel_integers(m, x, scales, zero_points, axis, dtype):
    return m.quantize_per_channel(x, scales, zero_points, axis, getattr(m, dtype)).int_repr()


OPS = (
    OpSpec("fake_quantize_per_tensor_affine", _fake_per_tensor,
           (s(A(3, 4), 0.1, 0, -128, 127), s(A(), 0.25, 3, 0, 15), s(A(0, 3), 0.1, 0, 0, 255),
            s(T(3, 4), 0.05, 10, 0, 255), s(S(2, 3), 0.3, -2, -8, 7)), domain=(-3.0, 3.0), dtypes=HALF,
           differentiable=False,
           errors=(Err(lambda m: m.fake_quantize_per_tensor_affine(m.ones(2), 0.5, 0, 5, 2), RuntimeError,
                       "quant_min"),)),
    OpSpec("fake_quantize_per_channel_affine", _fake_per_channel,
           (s(A(3, 4), _SCALES, _POINTS, 0, -8, 7), s(T(4, 3), _SCALES, _POINTS, 1, -128, 127),
            s(A(2, 3, 2), _SCALES, _FLOAT_POINTS, 1, -8, 7), s(S(3, 4), _SCALES, _POINTS, 0, -8, 7)),
           domain=(-3.0, 3.0), dtypes=HALF, differentiable=False,
           errors=(Err(lambda m: m.fake_quantize_per_channel_affine(
               m.ones(2, 3), m.ones(3), m.zeros(3, dtype=m.int64), 1, 0, 255), RuntimeError, "Zero-point"),)),
    OpSpec("quantize_per_tensor_dequantize", _round_trip,
           (s(A(3, 4), 0.1, 3, "quint8"), s(A(), 0.05, 0, "qint8"), s(A(0, 3), 0.1, 0, "qint32"),
            s(T(3, 4), 0.02, -5, "qint8"), s(S(2, 3), 0.3, 100, "quint8")), domain=(-3.0, 3.0),
           dtypes=("float32",), differentiable=False),
    OpSpec("quantize_per_tensor_int_repr", _integers,
           (s(A(3, 4), 0.1, 3, "quint8"), s(A(), 0.05, 0, "qint8"), s(T(3, 4), 0.02, -5, "qint32")),
           domain=(-3.0, 3.0), dtypes=("float32",), differentiable=False),
    OpSpec("quantize_per_channel_int_repr", _channel_integers,
           (s(A(3, 4), _SCALES, C(np.array([0, 3, 2])), 0, "quint8"),
            s(T(4, 3), _SCALES, C(np.array([0, 3, -2])), 1, "qint8")),
           domain=(-3.0, 3.0), dtypes=("float32",), differentiable=False),
)
