"""vmap over the spatial transformers, every-dimension pooling, unpooling, channel shuffle and gradient: each
batched call equals the stack of per-sample calls, values and per-sample gradients."""
import pytest

import ember
import ember.nn.functional as F
from ember.func import grad, vmap


def _case(name):
    ember.manual_seed(0)
    x = ember.randn(3, 2, 3, 4, 4, dtype=ember.float64)
    grid = ember.rand(3, 2, 4, 4, 2, dtype=ember.float64) * 2 - 1
    return {
        "grid_sample": (lambda a, g: F.grid_sample(a, g, align_corners=False), (x, grid)),
        "grid_sample, one input": (lambda g: F.grid_sample(x[0], g, mode="bicubic", align_corners=True), (grid,)),
        "grid_sample 5-d": (lambda a, g: F.grid_sample(a, g, align_corners=True),
                            (x.unsqueeze(3), ember.rand(3, 2, 2, 2, 2, 3, dtype=ember.float64))),
        "affine_grid": (lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False),
                        (ember.randn(3, 2, 2, 3, dtype=ember.float64),)),
        "adaptive_max_pool1d": (lambda a: F.adaptive_max_pool1d(a[:, 0], 3), (x,)),
        "adaptive_max_pool3d": (lambda a: F.adaptive_max_pool3d(a, 2), (x,)),
        "lp_pool1d": (lambda a: F.lp_pool1d(a[0].abs() + 1, 2.0, 2), (x,)),
        "lp_pool3d": (lambda a: F.lp_pool3d(a.abs() + 1, 2.0, 2), (x,)),
        "max_unpool2d": (lambda a: F.max_unpool2d(*F.max_pool2d(a, 2, return_indices=True), 2), (x,)),
        "max_unpool1d, unbatched": (lambda a: F.max_unpool1d(*F.max_pool1d(a[0], 2, return_indices=True), 2), (x,)),
        "channel_shuffle": (lambda a: F.channel_shuffle(a, 3), (x,)),
        "gradient": (lambda a: ember.gradient(a, dim=-1, edge_order=2)[0], (x,)),
    }[name]


NAMES = ["grid_sample", "grid_sample, one input", "grid_sample 5-d", "affine_grid", "adaptive_max_pool1d",
         "adaptive_max_pool3d", "lp_pool1d", "lp_pool3d", "max_unpool2d", "max_unpool1d, unbatched", "channel_shuffle",
         "gradient"]


@pytest.mark.parametrize("name", NAMES)
def test_batched_equals_per_sample(name):
    fn, args = _case(name)
    expected = ember.stack([fn(*[a[i] for a in args]) for i in range(3)])
    assert ember.allclose(vmap(fn)(*args), expected)


@pytest.mark.parametrize("name", ["grid_sample", "affine_grid", "lp_pool3d", "gradient"])
def test_per_sample_gradients(name):
    fn, args = _case(name)

    def loss(*sample):
        return (fn(*sample) ** 2).sum()

    batched = vmap(grad(loss))(*args)
    for i in range(3):
        assert ember.allclose(batched[i], grad(loss)(*[a[i] for a in args]))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("sample", [(3, 5), (2, 3, 5), (2, 4, 5)])
def test_pad_of_each_sample_rank_its_kernel_takes(mode, sample):
    pad = (1, 2) if len(sample) < 3 or sample[0] == 2 and sample[1] == 3 else (1, 2, 2, 1)
    x = ember.randn((4,) + sample, dtype=ember.float64)
    pad_one = lambda t: ember.nn.functional.pad(t, pad, mode=mode)  # noqa: E731
    expected = ember.stack([pad_one(t) for t in x])
    assert ember.equal(ember.func.vmap(pad_one)(x), expected)


def test_pad_of_a_sample_of_a_rank_the_kernel_refuses_says_so_as_unbatched():
    pad_one = lambda t: ember.nn.functional.pad(t, (1, 1), mode="reflect")  # noqa: E731
    with pytest.raises(NotImplementedError, match="not supported for 1D input"):
        pad_one(ember.ones(5))
    with pytest.raises(NotImplementedError, match="not supported for 1D input"):
        ember.func.vmap(pad_one)(ember.ones(4, 5))
