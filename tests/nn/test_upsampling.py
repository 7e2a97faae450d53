"""interpolate, upsample and the pixel shuffles against torch: values, gradients, modules and errors."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import both, both_raise, normalise, to_numpy

RNG = np.random.default_rng(0)
SPATIAL = {"linear": 1, "bilinear": 2, "trilinear": 3}


def image(lib, spatial_shape, dtype="float64", requires_grad=False):
    data = np.random.default_rng(1).standard_normal((2, 3, *spatial_shape))
    return lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=requires_grad)


def same_in_float32(program):
    """``program(lib)``'s arrays agree to float32's precision (the two libraries round in different orders)."""
    expected, actual = to_numpy(program(torch)), to_numpy(program(ember))
    for want, got in zip(expected, actual):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def resized_with_gradient(lib, shape, dtype, **kwargs):
    x = image(lib, shape, dtype, requires_grad=True)
    out = lib.nn.functional.interpolate(x, **kwargs)
    (out * out.detach().cos()).sum().backward()
    return out, x.grad


@settings(max_examples=40)
@given(mode=st.sampled_from(["nearest", "nearest-exact", "linear", "bilinear", "trilinear", "area"]),
       sizes=st.lists(st.integers(1, 7), min_size=3, max_size=3), outs=st.lists(st.integers(1, 9), min_size=3, max_size=3),
       by_factor=st.booleans(), align=st.sampled_from([None, False, True]))
def test_interpolate_matches_torch(mode, sizes, outs, by_factor, align):
    spatial = SPATIAL.get(mode, len(sizes) if mode != "area" else 2)
    shape = tuple(sizes[:spatial])
    if by_factor:
        kwargs = {"scale_factor": tuple(o / 2 + 0.5 for o in outs[:spatial])}
    else:
        kwargs = {"size": tuple(outs[:spatial])}
    if mode in SPATIAL and align is not None:
        kwargs["align_corners"] = align
    both(lambda lib: resized_with_gradient(lib, shape, "float64", mode=mode, **kwargs))


@pytest.mark.parametrize("kwargs", [dict(scale_factor=2), dict(scale_factor=3.0), dict(size=(5, 9)),
                                    dict(scale_factor=0.5), dict(scale_factor=(2, 1.5), recompute_scale_factor=True)])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "area"])
def test_common_image_resizes(mode, kwargs):
    if mode == "area" and "scale_factor" in kwargs and kwargs["scale_factor"] == 3.0:
        kwargs = dict(size=(12, 12))
    same_in_float32(lambda lib: resized_with_gradient(lib, (4, 6), "float32", mode=mode, **kwargs))


@pytest.mark.parametrize("mode, shape", [("linear", (5,)), ("bilinear", (3, 4)), ("trilinear", (2, 3, 2))])
@pytest.mark.parametrize("align_corners", [False, True])
def test_linear_modes_gradcheck_and_gradgradcheck(mode, shape, align_corners):
    x = ember.randn(1, 2, *shape, dtype=ember.float64, requires_grad=True)
    f = lambda t: ember.nn.functional.interpolate(t, scale_factor=1.7, mode=mode, align_corners=align_corners)
    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))


def test_upsample_aliases_and_modules():
    both(lambda lib: [lib.nn.functional.upsample_nearest(image(lib, (3, 3)), scale_factor=2),
                      lib.nn.functional.upsample_bilinear(image(lib, (3, 3)), size=(4, 5)),
                      lib.nn.Upsample(scale_factor=2, mode="bilinear")(image(lib, (2, 3))),
                      lib.nn.UpsamplingNearest2d(size=(5, 5))(image(lib, (2, 3))),
                      lib.nn.UpsamplingBilinear2d(scale_factor=1.5)(image(lib, (2, 3)))])
    both(lambda lib: [repr(lib.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)),
                      repr(lib.nn.Upsample(size=(3, 4))), repr(lib.nn.UpsamplingNearest2d(scale_factor=(2, 3))),
                      repr(lib.nn.PixelShuffle(3)), repr(lib.nn.PixelUnshuffle(2))], prepare=normalise)


@pytest.mark.parametrize("shape, r", [((2, 8, 3, 5), 2), ((18, 2, 2), 3), ((2, 1, 4, 4, 4), 2)])
def test_pixel_shuffle_and_unshuffle(shape, r):
    def program(lib):
        x = lib.tensor(np.arange(np.prod(shape), dtype=float).reshape(shape),
                       requires_grad=True)
        shuffled = lib.nn.functional.pixel_shuffle(x, r)
        back = lib.pixel_unshuffle(shuffled, r)
        (shuffled * lib.arange(float(shuffled.numel())).view(shuffled.shape)).sum().backward()
        return shuffled, back, x.grad, lib.nn.PixelShuffle(r)(x.detach())
    both(program)


@pytest.mark.parametrize("program, error, fragment", [
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3,)), size=4, mode="bilinear"), NotImplementedError,
     "bilinear mode needs 4D input"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 3)), size=4, scale_factor=2), ValueError,
     "only one of size or scale_factor"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 3)), size=4, mode="nearest", align_corners=True),
     ValueError, "align_corners option can only be set with the interpolating modes"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 3)), size=(4, 4, 4)), ValueError,
     "Input and output must have the same number of spatial dimensions"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 3)), scale_factor=(2, 2, 2)), ValueError,
     "Input and scale_factor must have the same number of spatial dimensions"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 3))), ValueError, "either size or scale_factor"),
    (lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(1, 3, 2, 2), 2), RuntimeError, "divisible by"),
    (lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(1, 1, 3, 4), 2), RuntimeError, "divisible by"),
])
def test_errors_match_torch(program, error, fragment):
    both_raise(program, error, fragment)


@pytest.mark.parametrize("mode, shape", [("linear", (3, 5, 700)), ("bilinear", (2, 3, 40, 30)),
                                         ("trilinear", (1, 2, 9, 12, 20)), ("bicubic", (2, 3, 40, 30))])
@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolating_modes_of_large_inputs_are_products_with_torchs_values(mode, shape, align_corners):
    """From 4,096 finite elements each dim is one matrix product: torch's values and gradients (to single's
    rounding), a non-finite input stepping back to gathering its neighbours, as torch keeps an inf local."""
    rng = np.random.default_rng(0)
    values = rng.standard_normal(shape).astype(np.float32)
    weights = rng.standard_normal(tuple(2 * n for n in shape[2:])).astype(np.float32)

    def program(L, data):
        x = L.tensor(data, requires_grad=True)
        y = L.nn.functional.interpolate(x, scale_factor=2, mode=mode, align_corners=align_corners)
        (y * L.tensor(weights)).sum().backward()
        return y, x.grad

    for ours, theirs in zip(program(ember, values), program(torch, values)):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-5)
    values.reshape(-1)[7] = np.inf
    out = program(ember, values)[0].detach().numpy()
    assert np.isfinite(out).sum() == np.isfinite(program(torch, values)[0].detach().numpy()).sum()


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_resizing_by_product_differentiates_twice(monkeypatch, mode):
    from ember.nn._functional import upsampling

    monkeypatch.setattr(upsampling, "_BY_PRODUCT_FROM", 0)
    x = ember.randn(1, 2, 3, 4, dtype=ember.float64, requires_grad=True)
    resize = lambda t: ember.nn.functional.interpolate(t, scale_factor=2, mode=mode) ** 2  # noqa: E731
    assert ember.autograd.gradcheck(resize, (x,))
    assert ember.autograd.gradgradcheck(resize, (x,))


@pytest.mark.parametrize("mode, n_in, n_out", [("linear", 700, 1399), ("linear", 1000, 1999), ("bicubic", 300, 599),
                                               ("bilinear", 350, 701)])
def test_source_coordinates_round_as_torchs_in_float32(mode, n_in, n_out):
    # torch multiplies the single-precision scale by index + 0.5 in double and rounds once: computed all in
    # single precision, a coordinate near 128 is off by its last place, and a weight by up to 1e-5
    spatial = 1 if mode == "linear" else 2
    shape = (1, 1) + (n_in,) * spatial if spatial == 1 else (1, 1, 3, n_in)
    size = n_out if spatial == 1 else (5, n_out)
    data = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    want = torch.nn.functional.interpolate(torch.tensor(data), size=size, mode=mode).numpy()
    got = ember.nn.functional.interpolate(ember.tensor(data), size=size, mode=mode).numpy()
    # (bicubic's weights are cubic polynomials, rounded in another order than torch's: a few units in the last
    # place of values near 3; with single-precision coordinates they were 5e-5 off)
    np.testing.assert_allclose(got, want, rtol=0, atol=2.5e-6 if mode == "bicubic" else 1e-6)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("kwargs", [dict(size=(3, 5)), dict(size=(13, 4)), dict(scale_factor=(0.3, 2.5)),
                                    dict(scale_factor=0.45, recompute_scale_factor=True), dict(size=(9, 7))])
@pytest.mark.parametrize("align_corners", [False, True])
def test_antialiased_resizes_match_torch(mode, kwargs, align_corners):
    """Shrinking stretches the filter over every source pixel it covers; growing keeps its width."""
    if mode == "lanczos" and align_corners:
        return
    both(lambda lib: resized_with_gradient(lib, (9, 7), "float64", mode=mode, antialias=True,
                                           align_corners=align_corners, **kwargs))


def test_antialiased_resize_differentiates_twice():
    x = ember.randn(1, 2, 7, 5, dtype=ember.float64, requires_grad=True)
    f = lambda t: ember.nn.functional.interpolate(t, size=(3, 4), mode="bicubic", antialias=True)
    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("mode, antialias", [("bilinear", False), ("bicubic", False), ("bilinear", True),
                                             ("bicubic", True), ("lanczos", True)])
@pytest.mark.parametrize("channels", [1, 3, 5])
@pytest.mark.parametrize("align_corners", [False, True])
def test_bytes_resize_to_torchs_values(mode, antialias, channels, align_corners):
    """torch resizes bytes with fixed-point weights, rounding after each dim: the very same bytes come out."""
    if mode == "lanczos" and align_corners:
        return
    data = np.random.default_rng(channels).integers(0, 256, (2, channels, 11, 17)).astype(np.uint8)
    for kwargs in (dict(size=(7, 29)), dict(size=(23, 5)), dict(scale_factor=(0.37, 1.6))):
        both(lambda lib: lib.nn.functional.interpolate(lib.tensor(data), mode=mode, antialias=antialias,
                                                       align_corners=align_corners, **kwargs))


@pytest.mark.parametrize("program, error, fragment", [
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3,)), size=4, mode="linear", antialias=True), ValueError,
     "Anti-alias option is restricted"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 3)), size=2, mode="lanczos"), ValueError,
     "Lanczos mode requires antialias=True"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 3)), size=2, mode="lanczos", antialias=True,
                                               align_corners=True), ValueError, "does not support align_corners"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 3), "float16"), size=2, mode="bilinear",
                                               antialias=True), NotImplementedError, "compute_index_ranges_weights"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 3), "int64"), size=2, mode="bicubic",
                                               antialias=True), NotImplementedError, "compute_index_ranges_weights"),
])
def test_antialias_errors_match_torch(program, error, fragment):
    both_raise(program, error, fragment)


@pytest.mark.parametrize("program, error, fragment", [
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 4)), size=(0, 3)), RuntimeError,
     r"greater than 0, but got input \(H: 3, W: 4\) output \(H: 0, W: 3\)"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 4)), scale_factor=0.2, mode="bilinear"), RuntimeError,
     r"output \(H: 0, W: 0\)"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (4,)), size=-1, mode="linear"), RuntimeError,
     r"got input \(W: 4\) and output \(W: -1\)"),
    (lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 0, 2), size=2, mode="trilinear"), RuntimeError,
     r"input \(D: 2, H: 0, W: 2\) output \(D: 2, H: 2, W: 2\)"),
    (lambda lib: lib.nn.functional.interpolate(lib.ones(1, 0, 3, 4), size=2, mode="bicubic"), RuntimeError,
     "Non-empty 4D data tensor expected"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 4)), size=(2.0, 3)), TypeError,
     "expected size to be one of int"),
    (lambda lib: lib.nn.functional.interpolate(image(lib, (3, 4)), size=3, recompute_scale_factor=True), ValueError,
     "recompute_scale_factor is not meaningful with an explicit size"),
])
def test_size_errors_match_torch(program, error, fragment):
    both_raise(program, error, fragment)


def test_integer_sizes_of_other_types_are_taken():
    both(lambda lib: lib.nn.functional.interpolate(image(lib, (3, 4)), size=(np.int64(2), lib.tensor(5))))
    both(lambda lib: lib.nn.functional.interpolate(lib.ones(0, 2, 3, 4), size=2, mode="bilinear"))


@pytest.mark.parametrize("name, kwargs", [("upsample", {"scale_factor": 2}), ("upsample_nearest", {"size": 5}),
                                          ("upsample_bilinear", {"scale_factor": 2})])
def test_deprecated_upsample_functions_warn_as_torch(name, kwargs):
    messages = []
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="is deprecated") as record:
            getattr(lib.nn.functional, name)(image(lib, (3, 3)), **kwargs)
        messages.append(str(record[0].message))
        assert record[0].filename == __file__
    assert messages[0] == messages[1]


@pytest.mark.parametrize("program, error, fragment", [
    (lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(1, 4, 2, 2), 0), RuntimeError,
     "pixel_shuffle expects a positive upscale_factor, but got 0"),
    (lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(1, 4, 2, 2), -2), RuntimeError,
     "expects a positive upscale_factor, but got -2"),
    (lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(1, 4, 2, 2), 0), RuntimeError,
     "pixel_unshuffle expects a positive downscale_factor, but got 0"),
    (lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(1, 4), 0), RuntimeError, "at least 3 dimensions"),
])
def test_pixel_shuffle_factor_errors_match_torch(program, error, fragment):
    both_raise(program, error, fragment)
