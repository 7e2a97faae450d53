"""The array kernels behind a training step's layers against torch: the transposed convolution's flat
col2im (unit strides), im2col channels first or channels last, max pooling's path for windows that tile the
input, layer norm by rows."""
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import ember

_CONV = {1: "conv1d", 2: "conv2d", 3: "conv3d"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dims=st.integers(1, 3), groups=st.sampled_from([1, 2]), kernel=st.integers(1, 3), dilation=st.integers(1, 2),
       padding=st.integers(0, 2), batch=st.integers(1, 3), chunk=st.sampled_from([1, 1 << 20]), seed=st.integers(0, 99))
def test_unit_stride_input_gradient_matches_torch(monkeypatch, dims, groups, kernel, dilation, padding, batch, chunk,
                                                  seed):
    from ember._ops import convolution
    monkeypatch.setattr(convolution, "_CHUNK_BYTES", chunk)  # 1: one image per chunk (the same for every example)
    rng = np.random.default_rng(seed)
    size = (dilation * (kernel - 1) + 2,) * dims
    x = rng.standard_normal((batch, 2 * groups) + size)
    w = rng.standard_normal((2 * groups, 2) + (kernel,) * dims)
    results = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, _CONV[dims])(a, lib.tensor(w), padding=padding, dilation=dilation,
                                                    groups=groups)
        y.backward(lib.tensor(np.random.default_rng(seed + 1).standard_normal(tuple(y.shape))))
        results.append(a.grad.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(dims=st.integers(1, 2), kernel=st.integers(1, 4), dilation=st.integers(1, 2), padding=st.integers(0, 2),
       extra=st.integers(0, 1), seed=st.integers(0, 99))
def test_unit_stride_transposed_convolution_matches_torch(dims, kernel, dilation, padding, extra, seed):
    # its forward is the same kernel; output_padding (below the dilation) leaves a row out of the padded planes
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 4) + (3,) * dims)
    w = rng.standard_normal((4, 3) + (kernel,) * dims)
    padding, extra = min(padding, dilation * (kernel - 1)), extra if dilation > 1 else 0
    results = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, f"conv_transpose{dims}d")(a, lib.tensor(w), padding=padding,
                                                                   output_padding=extra, dilation=dilation)
        (y * y).sum().backward()
        results += [y.detach().numpy(), a.grad.numpy()]
    for mine, theirs in zip(results[:2], results[2:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10)


def test_same_padding_with_an_even_kernel_matches_torch():
    # 'same' pads an even kernel one more after than before
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 4, 2))
    grads = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        lib.nn.functional.conv2d(a, lib.tensor(w), padding="same").pow(2).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-10)


@settings(max_examples=30, deadline=None)
@given(dims=st.integers(1, 3), kernel=st.integers(1, 3), extra=st.integers(0, 2), nan=st.booleans(),
       seed=st.integers(0, 99))
def test_max_pooling_of_tiling_windows_matches_torch(dims, kernel, extra, nan, seed):
    # stride = kernel, no padding: the taps are copied to the front; a few values (many ties) and a
    # size that leaves ``extra`` rows and columns out of every window
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (2, 2) + (2 * kernel + extra,) * dims).astype(np.float64)
    if nan:
        x.reshape(-1)[rng.integers(0, x.size, 3)] = np.nan
    g = rng.standard_normal((2, 2) + ((2 * kernel + extra) // kernel,) * dims)
    results = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        values, indices = getattr(lib.nn.functional, f"max_pool{dims}d")(a, kernel, return_indices=True)
        values.backward(lib.tensor(g))
        results += [values.detach().numpy(), indices.numpy(), a.grad.numpy()]
    for mine, theirs in zip(results[:3], results[3:]):
        np.testing.assert_array_equal(mine, theirs)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dims=st.integers(1, 3), channels_last=st.booleans(), kernel=st.integers(1, 3), stride=st.integers(1, 2),
       dilation=st.integers(1, 2), padding=st.sampled_from([0, 1, 2, "same"]), seed=st.integers(0, 99))
def test_convolution_and_weight_gradient_in_either_layout_match_torch(monkeypatch, dims, channels_last, kernel, stride,
                                                                      dilation, padding, seed):
    # im2col channels last or channels first: the same values, forward and the weight's gradient
    from ember._ops import convolution
    monkeypatch.setattr(convolution, "_channels_last_pays", lambda *_: channels_last)
    monkeypatch.setattr(convolution, "_CHUNK_BYTES", 1)  # one image per chunk: the chunks' seams are crossed
    stride = 1 if padding == "same" else stride
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 3) + (dilation * (kernel - 1) + 3,) * dims)
    w, b = rng.standard_normal((4, 3) + (kernel,) * dims), rng.standard_normal(4)
    results = []
    for lib in (ember, torch):
        weight = lib.tensor(w, requires_grad=True)
        y = getattr(lib.nn.functional, _CONV[dims])(lib.tensor(x), weight, lib.tensor(b), stride=stride,
                                                    padding=padding, dilation=dilation)
        y.backward(lib.tensor(np.random.default_rng(seed + 1).standard_normal(tuple(y.shape))))
        results += [y.detach().numpy(), weight.grad.numpy()]
    for mine, theirs in zip(results[:2], results[2:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("channels_last", [True, False])
@pytest.mark.parametrize("dims,stride,dilation", [(1, 2, 1), (2, 1, 2), (2, 2, 1), (3, 1, 2)])
def test_transposed_convolution_gradients_in_either_layout_match_torch(monkeypatch, channels_last, dims, stride,
                                                                       dilation):
    # the input's gradient of a transposed convolution is a convolution whose padding after may be negative
    # (the output padding left out): its windows must stop short of the padded input's last entries
    from ember._ops import convolution
    monkeypatch.setattr(convolution, "_channels_last_pays", lambda *_: channels_last)
    rng = np.random.default_rng(dims * 10 + stride)
    x, w = rng.standard_normal((2, 3) + (4,) * dims), rng.standard_normal((3, 2) + (3,) * dims)
    results = []
    for lib in (ember, torch):
        a, weight = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = getattr(lib.nn.functional, f"conv_transpose{dims}d")(a, weight, stride=stride, padding=1,
                                                                   output_padding=1, dilation=dilation)
        (y * y).sum().backward()
        results += [y.detach().numpy(), a.grad.numpy(), weight.grad.numpy()]
    for mine, theirs in zip(results[:3], results[3:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10)


@settings(max_examples=20, deadline=None)
@given(trailing=st.integers(1, 2), affine=st.booleans(), double=st.booleans(), seed=st.integers(0, 99))
def test_layer_norm_by_rows_matches_torch(trailing, affine, double, seed):
    # over the last dims, single or double precision: sums along rows as products with ones
    rng = np.random.default_rng(seed)
    dtype = np.float64 if double else np.float32
    x = (rng.standard_normal((2, 3, 4, 5)) * 3 + 1).astype(dtype)
    shape = x.shape[4 - trailing:]
    w, b, g = (rng.standard_normal(s).astype(dtype) for s in (shape, shape, x.shape))
    results = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        params = [lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)] if affine else [None, None]
        y = lib.nn.functional.layer_norm(a, shape, *params)
        y.backward(lib.tensor(g))
        results += [y.detach().numpy(), a.grad.numpy()] + [p.grad.numpy() for p in params if p is not None]
    tolerance = 1e-10 if double else 2e-5
    for mine, theirs in zip(results[:len(results) // 2], results[len(results) // 2:]):
        np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance)
