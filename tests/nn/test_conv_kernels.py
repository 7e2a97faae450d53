"""Each array kernel of the convolution, forced whatever the shape would choose, against torch: im2col along
the width alone (by rows) or over the whole window channels last, channels first image by image or batch
next; the transposed convolution by rows. Values and every gradient, and second derivatives through each."""
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import ember
from ember._ops import convolution

_CONV = {1: "conv1d", 2: "conv2d"}
_FITS = convolution._by_rows_fits  # by rows only where it can go (unit strides along the height)


def _force(monkeypatch, channels_last: bool, by_rows: bool, per_image: bool, chunk: int) -> None:
    monkeypatch.setattr(convolution, "_channels_last_pays", lambda *_: channels_last)
    monkeypatch.setattr(convolution, "_by_rows_fits", lambda geometry, dtype: by_rows and _FITS(geometry, dtype))
    monkeypatch.setattr(convolution, "_per_image_pays", lambda *_: per_image)
    monkeypatch.setattr(convolution, "_CHUNK_BYTES", chunk)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dims=st.integers(1, 2), layout=st.sampled_from(["rows", "channels last", "per image", "batch next"]),
       groups=st.sampled_from([1, 2]), kernel=st.integers(1, 3), stride=st.sampled_from([(1, 1), (1, 2), (2, 1)]),
       dilation=st.integers(1, 2), padding=st.sampled_from([0, 1, 3, "same"]), bias=st.booleans(),
       chunk=st.sampled_from([1, 1 << 20]), seed=st.integers(0, 99))
def test_every_layout_matches_torch(monkeypatch, dims, layout, groups, kernel, stride, dilation, padding, bias, chunk,
                                   seed):
    if layout in ("rows", "channels last"):
        groups = 1  # channels last is chosen for one group only
    _force(monkeypatch, layout in ("rows", "channels last"), layout == "rows", layout == "per image", chunk)
    stride = (1,) * dims if padding == "same" else stride[-dims:]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 2 * groups) + (dilation * (kernel - 1) + 3,) * dims)
    w = rng.standard_normal((2 * groups, 2) + (kernel,) * dims)
    b = rng.standard_normal(2 * groups) if bias else None
    results = []
    for lib in (ember, torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in (x, w, b) if a is not None]
        y = getattr(lib.nn.functional, _CONV[dims])(*leaves, *([] if bias else [None]), stride=stride,
                                                    padding=padding, dilation=dilation, groups=groups)
        y.backward(lib.tensor(np.random.default_rng(seed + 1).standard_normal(tuple(y.shape))))
        results.append([y.detach().numpy()] + [leaf.grad.numpy() for leaf in leaves])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("layout", ["rows", "channels last", "per image", "batch next"])
def test_second_derivatives_through_every_layout(monkeypatch, layout):
    _force(monkeypatch, layout in ("rows", "channels last"), layout == "rows", layout == "per image", 1)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((2, 2, 5, 4)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 2, 3, 2)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(3), requires_grad=True)

    def function(x, w, b):
        return ember.nn.functional.conv2d(x, w, b, padding=(2, 1), dilation=(1, 2))

    assert ember.autograd.gradcheck(function, (x, w, b))
    assert ember.autograd.gradgradcheck(function, (x, w, b))


def test_lenet_layers_take_the_fast_kernels():
    # the shapes the kernels were measured on: a first layer of one channel goes image by image, the second
    # (16 channels, 5 x 5) by rows
    first = convolution.Geometry((1, 1), ((2, 2), (2, 2)), (1, 1), 1)
    assert not convolution._channels_last_pays(1, (5, 5), (28, 28), first)
    single = np.dtype(np.float32)
    assert convolution._per_image_pays(16, (28, 28), single)
    assert convolution._channels_last_pays(16, (5, 5), (14, 14), first) and convolution._by_rows_fits(first, single)


@pytest.mark.parametrize("channels", [1, 16])
def test_half_precision_keeps_the_kernels_that_round_as_torch(channels):
    # the row and image-by-image kernels would round each kernel row's share, or add the bias inside the
    # product: half precision takes the batch's columns, whose product is rounded once before the bias (the
    # autocast tests compare one such convolution with torch's exactly)
    first = convolution.Geometry((1, 1), ((2, 2), (2, 2)), (1, 1), 1)
    half = np.dtype(np.float16)
    assert not convolution._per_image_pays(16, (28, 28), half) and not convolution._by_rows_fits(first, half)
    rng = np.random.default_rng(channels)
    x, w, b = (rng.standard_normal(shape).astype(np.float16) for shape in
               ((2, channels, 9, 9), (4, channels, 5, 5), (4,)))
    mine = ember.nn.functional.conv2d(*(ember.tensor(a) for a in (x, w, b)), padding=2).numpy()
    theirs = torch.nn.functional.conv2d(*(torch.from_numpy(a) for a in (x, w, b)), padding=2).numpy()
    np.testing.assert_allclose(mine.astype(np.float64), theirs.astype(np.float64), rtol=2e-3, atol=2e-3)
