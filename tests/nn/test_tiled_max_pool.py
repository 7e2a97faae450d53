"""Max pooling whose windows tile the planes and whose indices are not asked for (``TiledMaxPool``)."""
import numpy as np
import pytest
import torch

import ember
from ember.nn import functional as F
from ember.nn._functional import pooling
from tests.nn.test_conv import check_twins

TILED = [  # (function name, kernel, input shape): the last dims not a multiple of the kernel leave a remainder
    ("max_pool2d", 2, (3, 4, 8, 6)),
    ("max_pool2d", (2, 3), (2, 3, 7, 8)),
    ("max_pool2d", 2, (3, 5, 5)),
    ("max_pool1d", 3, (2, 3, 10)),
    ("max_pool3d", 2, (2, 2, 4, 5, 4)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, kernel, shape", TILED)
def test_tiled_max_pool_matches_torch(name, kernel, shape, dtype):
    ye, yt = check_twins(lambda x: getattr(F, name)(x, kernel), lambda x: getattr(torch.nn.functional, name)(x, kernel),
                         [shape], dtype)
    assert ye.grad_fn.name() == yt.grad_fn.name()


@pytest.mark.parametrize("name, kernel, shape", TILED[1::2])
def test_tiled_max_pool_gradcheck_and_gradgradcheck(name, kernel, shape):
    x = ember.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: getattr(F, name)(x, kernel), (x,))
    assert ember.autograd.gradgradcheck(lambda x: getattr(F, name)(x, kernel), (x,))


def test_tiled_max_pool_keeps_no_indices_and_ties_and_nans_go_as_torch():
    for x in (np.ones((2, 2, 4, 4)), np.array([[[[1.0, np.nan], [3.0, 2.0]]]])):
        e, t = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y = F.max_pool2d(e, 2)
        # one output (values): nothing for the engine to fill with zeros, no per-plane indices kept
        assert y.grad_fn._forward_cls is pooling.TiledMaxPool2D and len(y.grad_fn._out_meta) == 1
        y.sum().backward()
        torch.nn.functional.max_pool2d(t, 2).sum().backward()
        np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("kwargs", [{"stride": 1}, {"padding": 1}, {"dilation": 2}, {"ceil_mode": True},
                                    {"return_indices": True}])
def test_other_windows_keep_the_pooling_with_indices(kwargs):
    y = F.max_pool2d(ember.randn(1, 2, 5, 5, requires_grad=True), 2, **kwargs)
    node = (y[0] if kwargs.get("return_indices") else y).grad_fn
    assert node._forward_cls is pooling.MaxPool2D


def test_tiled_max_pool_keeps_a_byte_per_window_for_its_backward():
    # the window's tap, not its flat position: what the graph holds between forward and backward is the
    # output and one byte per window (torch holds eight, its int64 indices); the gradient is still torch's
    import tracemalloc

    data = np.random.default_rng(1).standard_normal((4, 8, 32, 32)).astype(np.float32)
    x = ember.tensor(data, requires_grad=True)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        y = F.max_pool2d(x, 2)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < y.numel() * (y.element_size() + 1) + 4096
    t = torch.tensor(data, requires_grad=True)
    torch.nn.functional.max_pool2d(t, 2).backward(torch.ones(4, 8, 16, 16))
    y.backward(ember.ones(4, 8, 16, 16))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
