"""Pooling functions and layers, twinned with torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember import nn
from ember.nn import functional as F
from tests.nn.test_conv import check_twins

RNG = np.random.default_rng(1)

POOLS = [  # (name, positional arguments, keywords, input shape)
    ("max_pool1d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 8)),
    ("max_pool1d", (2,), {}, (3, 7)),
    ("max_pool2d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 8, 7)),
    ("max_pool2d", ((2, 3), (1, 2), (1, 1)), {"dilation": 2}, (2, 3, 8, 7)),
    ("max_pool2d", (2,), {}, (3, 6, 5)),
    ("max_pool3d", (2,), {"padding": 1}, (2, 3, 5, 4, 3)),
    ("avg_pool1d", (3, 2, 1), {}, (2, 3, 8)),
    ("avg_pool2d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 8, 7)),
    ("avg_pool2d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}, (2, 3, 8, 7)),
    ("avg_pool2d", (2,), {"divisor_override": 3}, (3, 8, 7)),
    ("avg_pool3d", (2,), {"ceil_mode": True}, (2, 3, 5, 4, 3)),
    ("adaptive_avg_pool1d", (3,), {}, (2, 3, 8)),
    ("adaptive_avg_pool2d", ((3, 4),), {}, (2, 3, 8, 7)),
    ("adaptive_avg_pool2d", ((None, 2),), {}, (3, 5, 7)),
    ("adaptive_avg_pool3d", ((2, None, 3),), {}, (2, 3, 5, 4, 7)),
    ("adaptive_max_pool2d", ((3, 4),), {}, (2, 3, 8, 7)),
    ("adaptive_max_pool2d", (5,), {}, (1, 2, 5, 9)),
    ("lp_pool2d", (2, 3, 2), {}, (2, 3, 8, 7)),
    ("lp_pool2d", (1.5, (2, 3)), {"ceil_mode": True}, (1, 2, 7, 8)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, args, kwargs", [p[:3] for p in POOLS])
def test_pools_match_torch(name, args, kwargs, dtype):
    shape = next(p[3] for p in POOLS if p[:3] == (name, args, kwargs))
    fe, ft = getattr(F, name), getattr(TF, name)
    positive = "lp_pool" in name  # a fractional power of a negative is NaN in both
    ye, yt = check_twins(lambda x: fe(x.abs() + 0.5 if positive else x, *args, **kwargs),
                         lambda x: ft(x.abs() + 0.5 if positive else x, *args, **kwargs), [shape], dtype)
    if name.startswith("max_pool") or name == "lp_pool2d":
        assert ye.grad_fn.name() == yt.grad_fn.name()


@pytest.mark.parametrize("name, args, kwargs", [p[:3] for p in POOLS if "max" in p[0]])
def test_max_pool_indices_match_torch(name, args, kwargs):
    shape = next(p[3] for p in POOLS if p[:3] == (name, args, kwargs))
    x = RNG.standard_normal(shape)
    _, ie = getattr(F, name)(ember.tensor(x), *args, return_indices=True, **kwargs)
    _, it = getattr(TF, name)(torch.tensor(x), *args, return_indices=True, **kwargs)
    assert ie.dtype == ember.int64
    np.testing.assert_array_equal(ie.numpy(), it.numpy())


@pytest.mark.parametrize("name, args, kwargs", [p[:3] for p in POOLS[2:16:3]])
def test_pools_gradcheck_and_gradgradcheck(name, args, kwargs):
    shape = next(p[3] for p in POOLS if p[:3] == (name, args, kwargs))
    x = ember.tensor(RNG.standard_normal(shape), requires_grad=True)

    def f(x):
        return getattr(F, name)(x, *args, **kwargs)
    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))


def test_max_pool_gradient_goes_to_the_first_of_tied_maxima_and_nan_propagates():
    for x in (np.ones((1, 1, 4, 4)), np.array([[[[1.0, np.nan], [3.0, 2.0]]]])):
        e, t = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        F.max_pool2d(e, 2, 1, ceil_mode=True).sum().backward()
        TF.max_pool2d(t, 2, 1, ceil_mode=True).sum().backward()
        np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


def test_max_pool_of_integers_keeps_the_dtype():
    x = np.arange(-20, 20).reshape(1, 2, 4, 5)
    np.testing.assert_array_equal(F.max_pool2d(ember.tensor(x), 2, padding=1).numpy(),
                                  TF.max_pool2d(torch.tensor(x), 2, padding=1).numpy())


@pytest.mark.parametrize("name, args, kwargs", [
    ("avg_pool1d", (3, 1, 1), {}),
    ("avg_pool2d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}),
    ("avg_pool2d", (2,), {"divisor_override": -3}),
    ("avg_pool3d", ((1, 2, 2),), {}),
])
def test_avg_pool_of_int64_truncates_as_torch(name, args, kwargs):
    x = np.arange(-40, 40).reshape(1, 2, 1, 8, 5)[..., 0, :, :] * 1_000_000_007
    x = x[:, :, None] if name == "avg_pool3d" else x[:, :, 0] if name == "avg_pool1d" else x
    e = getattr(F, name)(ember.tensor(x), *args, **kwargs)
    t = getattr(TF, name)(torch.tensor(x), *args, **kwargs)
    assert e.dtype == ember.int64
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_avg_pool_of_other_integers_is_refused_as_torch():
    with pytest.raises(NotImplementedError, match="'Int'"):
        F.avg_pool2d(ember.ones(1, 1, 2, 2, dtype=ember.int32), 2)


@pytest.mark.parametrize("name, output_size, shape", [
    ("adaptive_avg_pool1d", 0, (1, 2, 4)), ("adaptive_avg_pool2d", (0, 3), (1, 2, 4, 4)),
    ("adaptive_avg_pool3d", (2, 0, 1), (2, 3, 3, 4)), ("adaptive_max_pool1d", 0, (1, 2, 4)),
    ("adaptive_max_pool2d", (3, 0), (1, 2, 4, 4)), ("adaptive_max_pool3d", (0, 0, 0), (1, 2, 3, 3, 4)),
])
def test_adaptive_pools_to_zero_sizes_are_empty_as_torch(name, output_size, shape):
    e = getattr(F, name)(ember.ones(shape, requires_grad=True), output_size)
    t = getattr(TF, name)(torch.ones(shape, requires_grad=True), output_size)
    assert tuple(e.shape) == tuple(t.shape) and e.requires_grad
    if "max" in name:
        values, indices = getattr(F, name)(ember.ones(shape), output_size, return_indices=True)
        assert tuple(indices.shape) == tuple(t.shape) and indices.dtype == ember.int64


@pytest.mark.parametrize("name, output_size, shape", [
    ("adaptive_avg_pool1d", -2, (1, 2, 4)), ("adaptive_avg_pool2d", (-1, 2), (1, 2, 4, 4)),
    ("adaptive_max_pool2d", (2, -1), (1, 2, 4, 4)), ("adaptive_avg_pool3d", (1, 1, -3), (1, 2, 3, 3, 4)),
])
def test_adaptive_pools_to_negative_sizes_raise_as_torch(name, output_size, shape):
    with pytest.raises(RuntimeError):
        getattr(TF, name)(torch.ones(shape), output_size)
    with pytest.raises(RuntimeError, match="must be greater than or equal to 0"):
        getattr(F, name)(ember.ones(shape), output_size)


def test_area_interpolation_to_a_zero_size_is_empty_as_torch():
    assert tuple(F.interpolate(ember.ones(1, 1, 4, 4), scale_factor=0.1, mode="area").shape) == (1, 1, 0, 0)


@pytest.mark.parametrize("name, shape, args", [
    ("max_pool2d", (1, 1, 3, 1), ((1, 2), (3, 2), (0, 1), (1, 2))),  # a window's two taps both in the padding
    ("max_pool1d", (1, 2, 1), (2, 1, 1, 2)),
    ("max_pool3d", (2, 1, 6, 1, 6), ((2, 2, 2), (2, 2, 3), (1, 1, 1), (1, 2, 2))),
])
def test_max_pool_windows_dilated_past_the_input_match_torch(name, shape, args):
    """Such a window's maximum is the padding's; its index and gradient go where torch's do, without a crash
    (an index past the plane, where torch writes into the next plane's gradient, gets none)."""
    x = np.random.default_rng(0).standard_normal(shape)
    (ex, tx) = (ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True))
    (ev, ei), (tv, ti) = (getattr(lib_f, name)(t, *args, return_indices=True) for lib_f, t in ((F, ex), (TF, tx)))
    np.testing.assert_array_equal(ev.detach().numpy(), tv.detach().numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    weights = np.random.default_rng(1).standard_normal(tuple(tv.shape))
    (ev * ember.tensor(weights)).sum().backward()
    plane = int(np.prod(shape[2:]))
    if ti.max() < plane:
        (tv * torch.tensor(weights)).sum().backward()
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())
        return
    # (torch's backward would write past the gradient's plane): each weight at its index inside the plane
    index, flat_weights = ti.numpy().reshape(shape[0] * shape[1], -1), weights.reshape(shape[0] * shape[1], -1)
    expected = np.stack([np.bincount(i[i < plane], w[i < plane], plane) for i, w in zip(index, flat_weights)])
    np.testing.assert_allclose(ex.grad.numpy(), expected.reshape(shape))


@pytest.mark.parametrize("args", [((2, 3, 2), (1, 2, 2), (1, 1, 1)), (3, 1, 1)])
def test_avg_pool3d_of_an_input_smaller_than_the_kernel_is_refused_as_torch(args):
    x = np.ones((1, 1, 3, 1, 3)) if len(args[0] if isinstance(args[0], tuple) else ()) else np.ones((1, 1, 2, 2, 2))
    with pytest.raises(RuntimeError) as t_err:
        TF.avg_pool3d(torch.tensor(x), *args)
    with pytest.raises(RuntimeError) as e_err:
        F.avg_pool3d(ember.tensor(x), *args)
    assert str(e_err.value) == str(t_err.value)
    with pytest.raises(RuntimeError, match="smaller than kernel size"):
        F.lp_pool3d(ember.tensor(x), 2.0, args[0], args[1])


@pytest.mark.parametrize("norm_type", [float("inf"), -float("inf")])
@pytest.mark.parametrize("name, kernel, shape", [("lp_pool1d", 3, (2, 3, 7)), ("lp_pool2d", (2, 3), (1, 2, 6, 7)),
                                                 ("lp_pool3d", 2, (1, 2, 4, 4, 5))])
def test_lp_pool_of_infinite_norm_is_the_largest_or_smallest_magnitude_as_torch(norm_type, name, kernel, shape):
    check_twins(lambda x: getattr(F, name)(x, norm_type, kernel, ceil_mode=True),
                lambda x: getattr(TF, name)(x, norm_type, kernel, ceil_mode=True), [shape])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("output_size", [(3, 4), (8, 11), (2, 7)])
def test_adaptive_avg_pool_in_half_precision_rounds_once_as_torch(dtype, output_size):
    """Windows that do not tile the input are averaged in single precision along every dim, then rounded."""
    data = np.random.default_rng(0).standard_normal((2, 3, 5, 7)).astype(np.float32)
    e = F.adaptive_avg_pool2d(ember.tensor(data).to(getattr(ember, dtype)), output_size)
    t = TF.adaptive_avg_pool2d(torch.tensor(data).to(getattr(torch, dtype)), output_size)
    assert e.dtype == getattr(ember, dtype)
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())
    area = F.interpolate(ember.tensor(data).to(getattr(ember, dtype)), size=output_size, mode="area")
    np.testing.assert_array_equal(area.float().numpy(), t.float().numpy())


@pytest.mark.parametrize("name, shape", [("max_unpool1d", (1, 1, 2)), ("max_unpool2d", (1, 1, 2, 2)),
                                         ("max_unpool3d", (1, 1, 2, 2, 2))])
@pytest.mark.parametrize("values, indices", [("float32", "int32"), ("float32", "float32"), ("int64", "int64"),
                                             ("bool", "int64")])
def test_max_unpool_dtypes_are_checked_as_torch(name, shape, values, indices):
    errors = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as error:
            getattr(lib.nn.functional, name)(lib.ones(shape, dtype=getattr(lib, values)),
                                             lib.zeros(shape, dtype=getattr(lib, indices)), 2)
        errors.append((error.type, str(error.value).split(";")[0]))
    assert errors[1] == errors[0]


def test_max_unpool2d_matches_torch():
    x = RNG.standard_normal((2, 3, 6, 4))
    ye, ie = F.max_pool2d(ember.tensor(x), 2, return_indices=True)
    yt, it = TF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    check_twins(lambda v: nn.MaxUnpool2d(2)(v, ie, output_size=(6, 4)),
                lambda v: torch.nn.MaxUnpool2d(2)(v, it, output_size=(6, 4)), [tuple(yt.shape)])
    np.testing.assert_array_equal(F.max_unpool2d(ye, ie, 2).numpy(), TF.max_unpool2d(yt, it, 2).numpy())
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(ye, ie + 100, 2)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(1, 1, 3, 3), 0),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(1, 1, 3, 3), 2, 0),
    lambda lib: lib.nn.functional.max_pool1d(lib.zeros(1, 1, 3), 2, 0),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(1, 1, 3, 3), -1),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(1, 1, 3, 3), 2, -1),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(1, 1, 3, 3), 2, padding=-1),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(1, 1, 3, 3), 2, dilation=0),
    lambda lib: lib.nn.functional.avg_pool2d(lib.zeros(1, 1, 3, 3), 0),
    lambda lib: lib.nn.functional.avg_pool1d(lib.zeros(1, 1, 4), 2, stride=0),
    lambda lib: lib.nn.functional.avg_pool3d(lib.zeros(1, 1, 3, 3, 3), 2, 0),
    lambda lib: lib.nn.functional.avg_pool2d(lib.zeros(1, 1, 3, 3), 2, padding=-1),
    lambda lib: lib.nn.functional.lp_pool2d(lib.zeros(1, 1, 4, 4), 2, 2, 0),
    lambda lib: lib.nn.MaxPool2d(2, stride=0)(lib.zeros(1, 1, 4, 4)),
])
def test_bad_windows_raise_torchs_runtime_error(call):
    """torch's messages vary with the kernel that checks; the type is a RuntimeError in each."""
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="zero|non-negative"):
            call(lib)


@pytest.mark.parametrize("name", ["AvgPool2d", "MaxPool2d", "LPPool2d"])
def test_numpy_integer_sizes_are_taken_as_torch(name):
    args = (2.0,) if name == "LPPool2d" else ()
    outs = [getattr(lib.nn, name)(*args, np.int64(2))(lib.arange(16.0, dtype=lib.float64).reshape(1, 1, 4, 4)).numpy()
            for lib in (torch, ember)]
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)
    for stride in ([], ()):
        np.testing.assert_array_equal(F.avg_pool2d(ember.ones(1, 1, 4, 4), 2, stride).numpy(),
                                      TF.avg_pool2d(torch.ones(1, 1, 4, 4), 2, stride).numpy())


UNPOOL_SIZES = [(5, 5), [5, 4], (4, 4), (3, 3), (6, 6), (2, 3), (1, 2, 5, 5), (2, 5, 5), [5], [1, 2, 7, 5], [5, 6]]


@pytest.mark.parametrize("output_size", UNPOOL_SIZES, ids=str)
@pytest.mark.parametrize("batched", [True, False])
def test_max_unpool_output_size_is_checked_as_torch(output_size, batched):
    """A requested size must lie strictly within a stride of the default (4 here) and name 2 or 4 dimensions."""
    outcomes = []
    for lib in (torch, ember):
        x = lib.arange(50.0).reshape(1, 2, 5, 5)[0 if not batched else slice(None)]
        pooled, indices = lib.nn.functional.max_pool2d(x, 2, return_indices=True)
        try:
            out = lib.nn.functional.max_unpool2d(pooled, indices, 2, output_size=output_size)
            outcomes.append(("ok", tuple(out.shape), out.numpy().tolist()))
        except (ValueError, RuntimeError) as error:
            outcomes.append((type(error), str(error).split(": ")[-1]))
    assert outcomes[1] == outcomes[0]


LAYERS = [
    (lambda m: m.MaxPool1d(3, 2, 1), (2, 3, 8)),
    (lambda m: m.MaxPool2d(2), (2, 3, 8, 7)),
    (lambda m: m.MaxPool2d((2, 3), ceil_mode=True, dilation=(1, 2), padding=1), (2, 3, 8, 7)),
    (lambda m: m.MaxPool3d(2, 1), (1, 2, 3, 4, 3)),
    (lambda m: m.AvgPool1d(3), (2, 3, 8)),
    (lambda m: m.AvgPool2d(3, 2, 1, count_include_pad=False), (2, 3, 8, 7)),
    (lambda m: m.AvgPool3d(2), (1, 2, 4, 4, 3)),
    (lambda m: m.AdaptiveAvgPool1d(3), (2, 3, 8)),
    (lambda m: m.AdaptiveAvgPool2d((1, 1)), (2, 3, 8, 7)),
    (lambda m: m.AdaptiveAvgPool3d(2), (1, 2, 4, 5, 3)),
    (lambda m: m.AdaptiveMaxPool2d((3, 2)), (2, 3, 8, 7)),
    (lambda m: m.LPPool2d(2, 2), (2, 3, 8, 7)),
]


@pytest.mark.parametrize("make, shape", LAYERS)
def test_layers_match_torch(make, shape):
    layer_e, layer_t = make(nn), make(torch.nn)
    assert repr(layer_e) == repr(layer_t)
    assert not list(layer_e.state_dict())
    check_twins(layer_e, layer_t, [shape])


def test_layers_return_indices():
    x = RNG.standard_normal((1, 2, 6, 6))
    for make in (lambda m: m.MaxPool2d(2, return_indices=True), lambda m: m.AdaptiveMaxPool2d(4, return_indices=True)):
        (ve, ie), (vt, it) = make(nn)(ember.tensor(x)), make(torch.nn)(torch.tensor(x))
        np.testing.assert_array_equal(ie.numpy(), it.numpy())
        np.testing.assert_array_equal(ve.numpy(), vt.numpy())


@pytest.mark.parametrize("call", [
    lambda m, F: F.max_pool2d(m.ones(1, 1, 4, 4), 2, padding=2),  # padding over half the kernel
    lambda m, F: F.max_pool2d(m.ones(4, 4), 5),  # kernel larger than the input
    lambda m, F: F.max_pool2d(m.ones(4), 2),  # rank
    lambda m, F: F.avg_pool2d(m.ones(1, 1, 4, 4), 2, divisor_override=0),
])
def test_pool_errors_have_torchs_type(call):
    with pytest.raises(RuntimeError) as expected:
        call(torch, TF)
    with pytest.raises(expected.type):
        call(ember, F)


def test_max_pool_index_of_a_window_with_several_nans_is_torchs():
    x = np.array([[[[np.nan, 1.0, 5.0], [np.nan, 2.0, 5.0], [0.0, 7.0, 7.0]]]])
    _, ie = F.max_pool2d(ember.tensor(x), 2, 1, return_indices=True)
    _, it = TF.max_pool2d(torch.tensor(x), 2, 1, return_indices=True)
    np.testing.assert_array_equal(ie.numpy(), it.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name, args, kwargs", [("avg_pool2d", (3, 2, 1), {}), ("avg_pool1d", (4, 3), {}),
                                                ("avg_pool2d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}),
                                                ("avg_pool2d", (3,), {"divisor_override": 5}), ("lp_pool2d", (2, 3), {})])
def test_avg_pool_in_half_precision_rounds_once_as_torch(dtype, name, args, kwargs):
    data = np.random.default_rng(0).standard_normal((2, 3, 7, 9)).astype(np.float32)
    data = data[0] if name == "avg_pool1d" else data
    e = getattr(F, name)(ember.tensor(data).to(getattr(ember, dtype)), *args, **kwargs)
    t = getattr(TF, name)(torch.tensor(data).to(getattr(torch, dtype)), *args, **kwargs)
    assert e.dtype == getattr(ember, dtype)
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())
