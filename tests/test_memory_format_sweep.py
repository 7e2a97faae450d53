"""Memory formats carried through the ops as torch carries them.

For each op, the same channels-last (or channels_last_3d) input is built in torch and in ember; the outputs must
agree in values, in ``is_contiguous`` (plain and in the input's format) and in strides, and so must the
gradients that reach the input.
"""
import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF
import torch.nn.functional as TF

FORMATS = {4: (torch.channels_last, ember.channels_last), 5: (torch.channels_last_3d, ember.channels_last_3d)}
SHAPES = {4: (2, 3, 5, 6), 5: (2, 3, 4, 5, 3)}


def _inputs(shape: tuple, seed: int = 0) -> tuple:
    """The same float64 values in torch and ember, laid out channels last, both requiring grad."""
    values = np.random.default_rng(seed).standard_normal(shape)
    torch_format, ember_format = FORMATS[len(shape)]
    t = torch.tensor(values).contiguous(memory_format=torch_format).requires_grad_()
    e = ember.tensor(values).contiguous(memory_format=ember_format).requires_grad_()
    return t, e


def _assert_same_layout(t_out: torch.Tensor, e_out: ember.Tensor, what: str) -> None:
    torch_format, ember_format = FORMATS.get(t_out.dim(), (None, None))
    assert tuple(e_out.shape) == tuple(t_out.shape), what
    assert e_out.stride() == t_out.stride(), f"{what}: strides {e_out.stride()}, torch's {t_out.stride()}"
    assert e_out.is_contiguous() == t_out.is_contiguous(), what
    if torch_format is not None:
        assert e_out.is_contiguous(memory_format=ember_format) == t_out.is_contiguous(memory_format=torch_format), what


def _assert_same_values(t_out: torch.Tensor, e_out: ember.Tensor, what: str) -> None:
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12,
                               err_msg=what)


def _first(result):
    return result[0] if isinstance(result, tuple) else result


def _compare(op, ndim: int, values: bool = True, backward: bool = True) -> None:
    t, e = _inputs(SHAPES[ndim])
    t_out, e_out = _first(op(torch, TF, t)), _first(op(ember, EF, e))
    _assert_same_layout(t_out, e_out, "output")
    if values:
        _assert_same_values(t_out, e_out, "output")
    if backward and t_out.requires_grad:
        seed = np.random.default_rng(1).standard_normal(tuple(t_out.shape))
        t_out.backward(torch.tensor(seed))
        e_out.backward(ember.tensor(seed))
        _assert_same_layout(t.grad, e.grad, "input.grad")
        if values:
            _assert_same_values(t.grad, e.grad, "input.grad")


def _ones(T, shape):
    return T.ones(shape, dtype=T.float64)


OPS_2D = {
    "max_pool2d": lambda T, F, x: F.max_pool2d(x, 2),
    "max_pool2d_padded": lambda T, F, x: F.max_pool2d(x, 3, stride=2, padding=1),
    "max_pool2d_with_indices": lambda T, F, x: F.max_pool2d(x, 2, return_indices=True),
    "max_pool2d_indices_layout": lambda T, F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True)[1],
    "avg_pool2d": lambda T, F, x: F.avg_pool2d(x, 2),
    "avg_pool2d_padded": lambda T, F, x: F.avg_pool2d(x, 3, stride=2, padding=1),
    "lp_pool2d": lambda T, F, x: F.lp_pool2d(x, 2, 2),
    "adaptive_avg_pool2d": lambda T, F, x: F.adaptive_avg_pool2d(x, (3, 2)),
    "adaptive_avg_pool2d_uneven": lambda T, F, x: F.adaptive_avg_pool2d(x, (4, 4)),
    "adaptive_avg_pool2d_global": lambda T, F, x: F.adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda T, F, x: F.adaptive_max_pool2d(x, (3, 2)),
    "adaptive_max_pool2d_indices": lambda T, F, x: F.adaptive_max_pool2d(x, (4, 4), return_indices=True)[1],
    "interpolate_nearest": lambda T, F, x: F.interpolate(x, scale_factor=2, mode="nearest"),
    "interpolate_nearest_exact": lambda T, F, x: F.interpolate(x, size=(7, 4), mode="nearest-exact"),
    "interpolate_bilinear": lambda T, F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "interpolate_bilinear_corners": lambda T, F, x: F.interpolate(x, size=(4, 9), mode="bilinear",
                                                                  align_corners=True),
    "interpolate_bicubic": lambda T, F, x: F.interpolate(x, scale_factor=2, mode="bicubic"),
    "interpolate_area": lambda T, F, x: F.interpolate(x, size=(3, 4), mode="area"),
    "pad_constant": lambda T, F, x: F.pad(x, (1, 2, 1, 1)),
    "pad_constant_crop": lambda T, F, x: F.pad(x, (-1, 2, 0, -1), value=3.0),
    "pad_reflect": lambda T, F, x: F.pad(x, (1, 2, 1, 1), mode="reflect"),
    "pad_replicate": lambda T, F, x: F.pad(x, (1, 2, 1, 1), mode="replicate"),
    "pad_circular": lambda T, F, x: F.pad(x, (1, 2, 1, 1), mode="circular"),
    "flip_height": lambda T, F, x: T.flip(x, (2,)),
    "flip_channels": lambda T, F, x: T.flip(x, (1, 3)),
    "batch_norm": lambda T, F, x: F.batch_norm(x, None, None, training=True),
    "batch_norm_affine": lambda T, F, x: F.batch_norm(x, _ones(T, 3), _ones(T, 3), _ones(T, 3) * 0.5,
                                                      _ones(T, 3) * 0.1, training=True),
    "group_norm": lambda T, F, x: F.group_norm(x, 3),
    "group_norm_affine": lambda T, F, x: F.group_norm(x, 1, _ones(T, 3) * 2, _ones(T, 3)),
    "instance_norm": lambda T, F, x: F.instance_norm(x),
    "dropout_eval": lambda T, F, x: F.dropout(x, 0.5, training=False),
    "relu": lambda T, F, x: F.relu(x),
    "exp": lambda T, F, x: T.exp(x),
    "times_number": lambda T, F, x: x * 2,
    "plus_bias": lambda T, F, x: x + _ones(T, (3, 1, 1)),
    "plus_contiguous": lambda T, F, x: x + _ones(T, (2, 3, 5, 6)),
    "contiguous_plus": lambda T, F, x: _ones(T, (2, 3, 5, 6)) + x,
    "times_contiguous": lambda T, F, x: x * _ones(T, (2, 3, 5, 6)),
    "minus_planes": lambda T, F, x: x - _ones(T, (3, 5, 6)),
    "planes_minus": lambda T, F, x: _ones(T, (3, 5, 6)) - x,
    "divided_by_columns": lambda T, F, x: x / (_ones(T, (3, 5, 1)) * 2),
    "maximum_contiguous": lambda T, F, x: T.maximum(x, _ones(T, (2, 3, 5, 6)) * 0.5),
    "greater_than_contiguous": lambda T, F, x: x > _ones(T, (2, 3, 5, 6)) * 0.5,
    "where_contiguous": lambda T, F, x: T.where(_ones(T, (2, 3, 5, 6)) > 0, x, _ones(T, (2, 3, 5, 6))),
    "times_self": lambda T, F, x: x * x,
    "to_single": lambda T, F, x: x.to(T.float32),
    "float": lambda T, F, x: x.float(),
    "clone": lambda T, F, x: x.clone(),
    "clone_preserve": lambda T, F, x: x.clone(memory_format=T.preserve_format),
    "zeros_like": lambda T, F, x: T.zeros_like(x),
    "ones_like_preserve": lambda T, F, x: T.ones_like(x, memory_format=T.preserve_format),
    "softmax": lambda T, F, x: F.softmax(x, 1),
    "conv2d": lambda T, F, x: F.conv2d(x, _ones(T, (4, 3, 3, 3))),
    "silu": lambda T, F, x: F.silu(x),
}

NO_VALUES_2D = {
    "empty_like": lambda T, F, x: T.empty_like(x),
    "empty_like_preserve": lambda T, F, x: T.empty_like(x, memory_format=T.preserve_format),
    "dropout": lambda T, F, x: F.dropout(x, 0.5, training=True),
    "dropout2d": lambda T, F, x: F.dropout2d(x, 0.5, training=True),
    "rand_like": lambda T, F, x: T.rand_like(x),
}

OPS_3D = {
    "max_pool3d": lambda T, F, x: F.max_pool3d(x, 2),
    "max_pool3d_padded": lambda T, F, x: F.max_pool3d(x, 3, stride=2, padding=1),
    "avg_pool3d": lambda T, F, x: F.avg_pool3d(x, 2),  # (torch's 3-d kernels give a row-major result)
    "adaptive_avg_pool3d": lambda T, F, x: F.adaptive_avg_pool3d(x, 2),
    "adaptive_avg_pool3d_uneven": lambda T, F, x: F.adaptive_avg_pool3d(x, (3, 3, 2)),
    "adaptive_max_pool3d": lambda T, F, x: F.adaptive_max_pool3d(x, 2),
    "adaptive_max_pool3d_indices": lambda T, F, x: F.adaptive_max_pool3d(x, 2, return_indices=True)[1],
    "group_norm_affine": lambda T, F, x: F.group_norm(x, 1, _ones(T, 3) * 2, _ones(T, 3)),
    "interpolate_nearest": lambda T, F, x: F.interpolate(x, scale_factor=2, mode="nearest"),
    "interpolate_trilinear": lambda T, F, x: F.interpolate(x, scale_factor=2, mode="trilinear"),
    "pad_constant": lambda T, F, x: F.pad(x, (1, 2, 1, 1, 1, 0)),
    "pad_reflect": lambda T, F, x: F.pad(x, (1, 2, 1, 1, 1, 0), mode="reflect"),
    "pad_replicate": lambda T, F, x: F.pad(x, (1, 2, 1, 1, 1, 0), mode="replicate"),
    "flip": lambda T, F, x: T.flip(x, (2, 4)),
    "batch_norm": lambda T, F, x: F.batch_norm(x, None, None, training=True),
    "group_norm": lambda T, F, x: F.group_norm(x, 3),
    "relu": lambda T, F, x: F.relu(x),
    "plus_contiguous": lambda T, F, x: x + _ones(T, (2, 3, 4, 5, 3)),
    "conv3d": lambda T, F, x: F.conv3d(x, _ones(T, (4, 3, 2, 2, 2))),
}


@pytest.mark.parametrize("name", sorted(OPS_2D))
def test_channels_last(name):
    _compare(OPS_2D[name], 4)


@pytest.mark.parametrize("name", sorted(NO_VALUES_2D))
def test_channels_last_layout_only(name):
    _compare(NO_VALUES_2D[name], 4, values=False)


@pytest.mark.parametrize("name", sorted(OPS_3D))
def test_channels_last_3d(name):
    _compare(OPS_3D[name], 5)


def _laid_out(values: np.ndarray, how: str, library):
    """``values`` as a tensor of ``library``: row-major, channels last, or a transposed (column-major) matrix."""
    t = library.tensor(values)
    if how == "channels_last":
        return t.contiguous(memory_format=library.channels_last)
    if how == "transposed":
        return t.t().contiguous().t()
    return t


PAIRS = {  # (shape, layout) of each operand
    "channels_last_with_row_major": (((2, 3, 5, 6), "channels_last"), ((2, 3, 5, 6), "row_major")),
    "row_major_with_channels_last": (((2, 3, 5, 6), "row_major"), ((2, 3, 5, 6), "channels_last")),
    "channels_last_with_planes": (((2, 3, 5, 6), "channels_last"), ((3, 5, 1), "row_major")),
    "batch_of_one_with_channels_last": (((1, 3, 5, 6), "row_major"), ((2, 3, 5, 6), "channels_last")),
    "both_channels_last": (((2, 3, 5, 6), "channels_last"), ((1, 3, 5, 6), "channels_last")),
    "transposed_with_row_major": (((4, 6), "transposed"), ((4, 6), "row_major")),
    "transposed_with_row": (((4, 6), "transposed"), ((1, 6), "row_major")),
    "row_major_with_transposed": (((4, 6), "row_major"), ((4, 6), "transposed")),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize("op", ["add", "mul", "sub", "atan2", "maximum", "eq"])
@pytest.mark.parametrize("second_dtype", ["float64", "float32"])
def test_pointwise_result_follows_torchs_operand_order(pair, op, second_dtype):
    (shape_a, how_a), (shape_b, how_b) = PAIRS[pair]
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b).astype(second_dtype)
    t_out = getattr(torch, op)(_laid_out(a, how_a, torch), _laid_out(b, how_b, torch))
    e_out = getattr(ember, op)(_laid_out(a, how_a, ember), _laid_out(b, how_b, ember))
    _assert_same_layout(t_out, e_out, op)
    np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), rtol=1e-6)
