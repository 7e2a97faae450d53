"""Fractional max pooling against torch, given the same per-plane samples: values, indices, gradients, errors."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

CASES = [(2, (2, 3, 9, 11), (2, 3), {"output_size": (4, 5)}), (2, (3, 7, 8), 2, {"output_size": (5, 3)}),
         (2, (1, 2, 6, 6), 2, {"output_ratio": (0.5, 0.5)}), (2, (1, 1, 5, 5), 5, {"output_size": 1}),
         (3, (2, 2, 7, 8, 9), (2, 3, 2), {"output_size": (3, 4, 5)}), (3, (1, 6, 6, 6), 2, {"output_ratio": (0.5,) * 3})]


@pytest.mark.parametrize("n, shape, kernel, size", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fractional_max_pool_as_torch(n, shape, kernel, size, dtype):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(dtype)
    batch = shape[0] if len(shape) == n + 2 else 1
    samples = rng.random((batch, shape[-n - 1], n)).astype(dtype)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    tv, ti = getattr(TF, f"fractional_max_pool{n}d")(tx, kernel, **size, return_indices=True,
                                                     _random_samples=torch.tensor(samples))
    ev, ei = getattr(F, f"fractional_max_pool{n}d")(ex, kernel, **size, return_indices=True,
                                                    _random_samples=ember.tensor(samples))
    np.testing.assert_array_equal(ev.detach().numpy(), tv.detach().numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    weights = rng.standard_normal(tuple(tv.shape)).astype(dtype)
    (tv * torch.tensor(weights)).sum().backward()
    (ev * ember.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())


def test_layers_draw_their_own_samples_and_double_backward_works():
    ember.manual_seed(0)
    layer = ember.nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True)
    assert repr(layer) == repr(torch.nn.FractionalMaxPool2d(3, output_ratio=0.5)) == "FractionalMaxPool2d()"
    values, indices = layer(ember.randn(2, 3, 10, 12))
    assert values.shape == (2, 3, 5, 6) and indices.shape == (2, 3, 5, 6)
    x = ember.randn(1, 2, 5, 5, dtype=ember.float64, requires_grad=True)
    samples = ember.rand(1, 2, 2, dtype=ember.float64)
    assert ember.autograd.gradgradcheck(lambda t: F.fractional_max_pool2d(t, 2, 3, _random_samples=samples), (x,))
    fixed = ember.nn.FractionalMaxPool3d(2, output_size=2, _random_samples=ember.rand(1, 1, 3))
    assert fixed(ember.randn(1, 1, 4, 4, 4)).shape == (1, 1, 2, 2, 2)


def test_nan_wins_as_in_torch():
    x = np.array([[[[1.0, np.nan, 3.0, np.nan]] * 2]])
    samples = np.array([[[0.3, 0.3]]])
    tv, ti = TF.fractional_max_pool2d(torch.tensor(x), (2, 4), output_size=1, return_indices=True,
                                      _random_samples=torch.tensor(samples))
    ev, ei = F.fractional_max_pool2d(ember.tensor(x), (2, 4), output_size=1, return_indices=True,
                                     _random_samples=ember.tensor(samples))
    assert np.isnan(ev.numpy()).all() and ei.numpy().tolist() == ti.numpy().tolist()


@pytest.mark.parametrize("n", [2, 3])
def test_samples_past_the_batch_are_not_read(n):
    # torch takes more sample rows than the batch has (the layer's fixed samples meet an unbatched input)
    rng = np.random.default_rng(n)
    x, samples = rng.standard_normal((3,) + (6,) * n), rng.random((4, 3, n))
    expected = getattr(TF, f"fractional_max_pool{n}d")(torch.tensor(x), 2, output_size=3,
                                                       _random_samples=torch.tensor(samples))
    got = getattr(F, f"fractional_max_pool{n}d")(ember.tensor(x), 2, output_size=3,
                                                 _random_samples=ember.tensor(samples))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("call, kind, message", [
    (lambda m, f: f.fractional_max_pool2d(m.randn(1, 1, 4, 4), 3, output_size=3), RuntimeError,
     "pool height 3 too large relative to input height 4"),
    (lambda m, f: f.fractional_max_pool2d(m.randn(1, 1, 4, 4), 2), ValueError,
     "requires specifying either an output_size or an output_ratio"),
    (lambda m, f: f.fractional_max_pool2d(m.randn(1, 1, 4, 4), 2, output_size=3, _random_samples=m.rand(1, 2, 2)),
     RuntimeError, r"Expect _random_samples.size\(1\) equals to input channel size."),
    (lambda m, f: f.fractional_max_pool2d(m.randn(2, 1, 4, 4), 2, output_size=3, _random_samples=m.rand(1, 1, 2)),
     RuntimeError, r"Expect _random_samples.size\(0\) no less then input batch size"),
    (lambda m, f: m.nn.FractionalMaxPool2d(2), ValueError, "requires specifying either an output size, or a pooling"),
    (lambda m, f: m.nn.FractionalMaxPool2d(2, 3, 0.5), ValueError, "only one of output_size and output_ratio"),
    (lambda m, f: m.nn.FractionalMaxPool2d(2, output_ratio=1.5), ValueError, r"output_ratio must be between 0 and 1"),
])
def test_errors_as_torch(call, kind, message):
    with pytest.raises(kind, match=message):
        call(torch, TF)
    with pytest.raises(kind, match=message):
        call(ember, F)
