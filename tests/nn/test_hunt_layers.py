"""Mismatches against torch found by a sweep of ember.nn's layers and functions: each test failed before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from tests.nn.test_padding_and_pooling_variants import _compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional


# ---------------------------------------------------------------------------------------------- vector norms


@pytest.mark.parametrize("p", [3, 0.5, -1, 1.5])
def test_normalize_of_a_zero_row_has_torch_gradient_not_nan(p):
    # the composed (|x| ** p).sum() ** (1 / p) gave nan at a zero row; torch's norm gradient is 0 there
    x = np.random.default_rng(0).standard_normal((3, 4))
    x[0] = 0
    x[1, 2] = 0
    _compare(lambda t: F.normalize(t, p=p, dim=1), lambda t: TF.normalize(t, p=p, dim=1), x, atol=1e-10)


@pytest.mark.parametrize("p", [3, 0.5, -2.5])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, True), ((0, 2), False)])
def test_vector_norm_gradient_at_zeros_matches_torch(p, dim, keepdim):
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    x[0, 0] = 0
    x[1, :, 1] = 0
    _compare(lambda t: ember.linalg.vector_norm(t, p, dim, keepdim),
                          lambda t: torch.linalg.vector_norm(t, p, dim, keepdim), x, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("p", [3, 1.5])
def test_vector_norm_of_16_bit_floats_sums_in_single_precision_as_torch(dtype, p):
    # summed in bfloat16, a 4096-long row's 3-norm was 16% off (torch sums in single precision, rounds once)
    x = torch.randn(4, 4096, generator=torch.Generator().manual_seed(0)).to(getattr(torch, dtype))
    expected = torch.linalg.vector_norm(x, p, 1).float().numpy()
    got = ember.linalg.vector_norm(ember.tensor(x.float().numpy()).to(getattr(ember, dtype)), p, 1).float().numpy()
    np.testing.assert_allclose(got, expected, rtol=4e-3)


def test_vector_norm_of_a_general_order_has_torch_second_derivative():
    x = np.random.default_rng(3).standard_normal((3, 4))
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (eg,) = ember.autograd.grad(ember.linalg.vector_norm(ex, 3, 1).sum(), ex, create_graph=True)
    (tg,) = torch.autograd.grad(torch.linalg.vector_norm(tx, 3, 1).sum(), tx, create_graph=True)
    (eg * eg).sum().backward()
    (tg * tg).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-10)


# ---------------------------------------------------------------------------------------------- pad


@pytest.mark.parametrize("mode, shape, pads", [
    ("reflect", (1, 1, 3, 3), (-2, -2, 1, 1)),  # a crop past the size: ember gave an empty dim
    ("replicate", (1, 1, 3, 3), (0, 0, -2, -2)),
    ("circular", (1, 1, 3), (-2, -2)),
    ("reflect", (1, 1, 2), (-1, -1)),  # torch's 1-D reflect and replicate refuse an empty result
    ("replicate", (1, 2), (-1, -1)),
    ("reflect", (1, 1, 3), (-4, 1)),
    ("constant", (1, 1, 3), (-4, 1)),  # a constant pad crops first: an IndexError in ember before
])
def test_pad_refuses_what_torch_refuses(mode, shape, pads):
    with pytest.raises(RuntimeError):
        TF.pad(torch.zeros(shape), pads, mode=mode)
    with pytest.raises(RuntimeError, match="pad: padding"):
        F.pad(ember.zeros(shape), pads, mode=mode)


@pytest.mark.parametrize("mode, shape, pads", [
    ("reflect", (1, 1, 2, 2), (0, 0, -1, -1)),  # an empty dim, as torch's 2-D and 3-D kernels give
    ("replicate", (1, 1, 2, 2, 2), (-1, -1, 0, 0, 0, 0)),
    ("constant", (1, 1, 3), (-3, 1)),
    ("circular", (1, 1, 3), (-3, 0)),
    ("reflect", (1, 1, 3), (-2, 0)),
])
def test_pad_still_crops_what_torch_crops(mode, shape, pads):
    assert tuple(F.pad(ember.zeros(shape), pads, mode=mode).shape) == tuple(TF.pad(torch.zeros(shape), pads,
                                                                                     mode=mode).shape)


# ---------------------------------------------------------------------------------------------- layer norm


@pytest.mark.parametrize("shape, normalized_shape", [((2, 0), (0,)), ((2, 3, 0), (3, 0)), ((0, 0), (0,))])
def test_layer_and_rms_norm_over_empty_dims_give_empty_outputs_as_torch(shape, normalized_shape):
    # ember's row path reshaped the input to (-1, 0), which numpy refuses
    for ember_norm, torch_norm in ((F.layer_norm, TF.layer_norm), (F.rms_norm, TF.rms_norm)):
        ex, tx = ember.zeros(shape, requires_grad=True), torch.zeros(shape, requires_grad=True)
        ew, tw = ember.ones(normalized_shape, requires_grad=True), torch.ones(normalized_shape, requires_grad=True)
        eo, to = ember_norm(ex, normalized_shape, ew), torch_norm(tx, normalized_shape, tw)
        assert tuple(eo.shape) == tuple(to.shape)
        eo.sum().backward()
        to.sum().backward()
        assert tuple(ex.grad.shape) == tuple(tx.grad.shape) and tuple(ew.grad.shape) == tuple(tw.grad.shape)


# ---------------------------------------------------------------------------------------------- interpolate


@pytest.mark.parametrize("mode, shape, scale_factor", [
    ("linear", (1, 2, 3), [1.3]),  # 3 -> 3: torch leaves the dim as it is, ember moved its samples by 1 / 1.3
    ("bilinear", (1, 2, 3, 2), [1.3, 0.7]),
    ("bilinear", (2, 1, 7, 3), [0.7, 1.3]),
    ("trilinear", (1, 2, 1, 3, 3), [2.5, 2.5, 1.3]),
    ("linear", (1, 1, 300), [1.001]),
])
@pytest.mark.parametrize("align_corners", [None, False])
def test_interpolate_leaves_a_dim_of_unchanged_size_as_torch(mode, shape, scale_factor, align_corners):
    x = np.random.default_rng(4).standard_normal(shape)
    _compare(lambda t: F.interpolate(t, scale_factor=scale_factor, mode=mode, align_corners=align_corners),
             lambda t: TF.interpolate(t, scale_factor=scale_factor, mode=mode, align_corners=align_corners), x,
             atol=1e-10)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("scale_factor", [[1.1, 2.0], [0.7, 1.1], [1.1, 1.1]])
def test_antialiased_interpolate_leaves_a_dim_of_unchanged_size_as_torch(mode, scale_factor):
    # values only: torch's own backward of these does not leave the dim as its forward does
    x = np.random.default_rng(5).standard_normal((1, 2, 5, 5))
    expected = TF.interpolate(torch.tensor(x), scale_factor=scale_factor, mode=mode, antialias=True)
    got = F.interpolate(ember.tensor(x), scale_factor=scale_factor, mode=mode, antialias=True)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-10)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("scale_factor", [[1.1, 2.0], [2.0, 1.1], [0.7, 1.1]])
def test_byte_interpolate_leaves_a_dim_of_unchanged_size_as_torch(mode, antialias, scale_factor):
    x = np.random.default_rng(6).integers(0, 256, (2, 3, 5, 5), dtype=np.uint8)
    expected = TF.interpolate(torch.tensor(x), scale_factor=scale_factor, mode=mode, antialias=antialias)
    got = F.interpolate(ember.tensor(x), scale_factor=scale_factor, mode=mode, antialias=antialias)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


# ---------------------------------------------------------------------------------------------- grid_sample


@pytest.mark.parametrize("size", [[2, 2, 4, 5], [1, 2, 3, 3, 3]])
@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_gives_no_gradient_to_a_coordinate_on_the_border(size, padding_mode, align_corners):
    # an identity affine grid puts coordinates exactly on the outer pixels (align_corners=True) or the clipping
    # bounds; torch's sampler gives them no gradient there, ember's clamp passed one (theta's gradient differed)
    spatial = len(size) - 2
    theta = np.tile(np.eye(spatial, spatial + 1), (size[0], 1, 1)) + 0.0
    x = np.random.default_rng(7).standard_normal(size)
    et, tt = ember.tensor(theta, requires_grad=True), torch.tensor(theta, requires_grad=True)
    eo = F.grid_sample(ember.tensor(x), F.affine_grid(et, size, align_corners=align_corners),
                       padding_mode=padding_mode, align_corners=align_corners)
    to = TF.grid_sample(torch.tensor(x), TF.affine_grid(tt, size, align_corners=align_corners),
                        padding_mode=padding_mode, align_corners=align_corners)
    weights = np.random.default_rng(8).standard_normal(tuple(to.shape))
    (eo * ember.tensor(weights)).sum().backward()
    (to * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(et.grad.numpy(), tt.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
def test_grid_sample_coordinates_past_the_border_get_no_gradient(padding_mode):
    grid = np.array([[[[-1.0, 0.25], [1.0, -0.5], [1.5, 0.0], [-3.0, 1.0], [0.3, 0.2]]]])
    x = np.random.default_rng(9).standard_normal((1, 2, 3, 3))
    _compare(lambda g: F.grid_sample(ember.tensor(x), g, padding_mode=padding_mode, align_corners=True),
             lambda g: TF.grid_sample(torch.tensor(x), g, padding_mode=padding_mode, align_corners=True), grid,
             atol=1e-10)


# ---------------------------------------------------------------------------------------------- argument checks


@pytest.mark.parametrize("call", [
    lambda lib, fn: fn.layer_norm(lib.ones(2, 3), (3,), lib.ones(4)),  # numpy's ValueError from a reshape before
    lambda lib, fn: fn.layer_norm(lib.ones(2, 3), (3,), None, lib.ones(2)),
    lambda lib, fn: fn.layer_norm(lib.ones(2, 3), (3,), lib.ones(1, 3)),  # broadcast silently before
    lambda lib, fn: fn.rms_norm(lib.ones(2, 3), (3,), lib.ones(1, 3)),
    lambda lib, fn: fn.unfold(lib.ones(1, 1, 4, 4), 0),  # an empty result before
    lambda lib, fn: fn.unfold(lib.ones(1, 1, 4, 4), 2, padding=-1),
    lambda lib, fn: fn.unfold(lib.ones(1, 1, 4, 4), 2, stride=0),  # ZeroDivisionError before
    lambda lib, fn: fn.fold(lib.ones(1, 4, 9), (4, 4), 0),
], ids=["ln-weight", "ln-bias", "ln-broadcast-weight", "rms-broadcast-weight", "unfold-kernel-0",
        "unfold-padding-neg", "unfold-stride-0", "fold-kernel-0"])
def test_invalid_shapes_and_geometry_raise_runtime_error_as_torch(call):
    with pytest.raises(RuntimeError):
        call(torch, TF)
    with pytest.raises(RuntimeError):
        call(ember, F)


def test_embedding_bag_checks_its_arguments_in_torch_order():
    # a 1-D weight: ValueError (a RuntimeError from embedding before)
    with pytest.raises(ValueError):
        TF.embedding_bag(torch.tensor([[0]]), torch.ones(3))
    with pytest.raises(ValueError, match="2D"):
        F.embedding_bag(ember.tensor([[0]]), ember.ones(3))
    # per_sample_weights of the wrong shape with the default mode 'mean': the shape is checked first
    with pytest.raises(ValueError):
        TF.embedding_bag(torch.tensor([1, 2, 3]), torch.ones(5, 3), torch.tensor([0, 1]), per_sample_weights=torch.ones(2))
    with pytest.raises(ValueError, match="per_sample_weights"):
        F.embedding_bag(ember.tensor([1, 2, 3]), ember.ones(5, 3), ember.tensor([0, 1]), per_sample_weights=ember.ones(2))


def test_embedding_bag_refuses_scale_grad_by_freq_in_max_mode_as_torch():
    with pytest.raises(ValueError):
        torch.nn.EmbeddingBag(5, 2, mode="max", scale_grad_by_freq=True)(torch.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="frequency"):
        ember.nn.EmbeddingBag(5, 2, mode="max", scale_grad_by_freq=True)(ember.tensor([[1, 2]]))


@pytest.mark.parametrize("value", [-1, -128])
def test_constant_pad_of_bytes_refuses_a_negative_value_as_torch(value):
    # ember wrapped it around (-1 padded with 255)
    with pytest.raises(RuntimeError):
        TF.pad(torch.zeros(1, 2, dtype=torch.uint8), (1, 0), value=value)
    with pytest.raises(RuntimeError, match="overflow"):
        F.pad(ember.zeros(1, 2, dtype=ember.uint8), (1, 0), value=value)


# ---------------------------------------------------------------------------------------------- group norm


@pytest.mark.parametrize("name, args", [("GroupNorm", (2, 6)), ("GroupNorm", (6, 6)), ("InstanceNorm2d", (6,))])
def test_affine_group_norm_gradient_through_a_channels_last_view(name, args):
    # the gradient reaching the norm is a channels-last array (from the permute after it); its affine backward
    # added the correction to a copy (numpy's reshape of a strided product), not to the returned gradient
    kwargs = {"affine": True} if name.startswith("Instance") else {}
    tm = getattr(torch.nn, name)(*args, **kwargs).double()
    em = getattr(ember.nn, name)(*args, **kwargs).to(ember.float64)
    with torch.no_grad():
        tm.weight.uniform_(0.5, 2.0)
        tm.bias.normal_()
    em.load_state_dict({key: ember.tensor(value.numpy()) for key, value in tm.state_dict().items()})
    x = np.random.default_rng(10).standard_normal((3, 6, 5, 4))
    weights = np.random.default_rng(11).standard_normal((3, 5, 4, 6))
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (em(ex).permute(0, 2, 3, 1) * ember.tensor(weights)).sum().backward()
    (tm(tx).permute(0, 2, 3, 1) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy(), atol=1e-10)


def test_nearest_2d_interpolate_resamples_a_large_unchanged_dim_as_torch():
    # values only (torch's backward leaves the dim as it is, unlike its forward); on planes of a few elements
    # torch's 2-D nearest kernel leaves such a dim as it is, as 8f49acc had ember do at every size
    x = np.arange(90 * 64, dtype=np.float32).reshape(1, 1, 90, 64)
    expected = TF.interpolate(torch.tensor(x), scale_factor=[1.01, 1.0], mode="nearest")
    got = F.interpolate(ember.tensor(x), scale_factor=[1.01, 1.0], mode="nearest")
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
