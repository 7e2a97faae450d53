"""F.affine_grid and F.grid_sample against torch: values, gradients to input, grid and theta, errors."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ember
import ember.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")
CASES = [(nd, mode, pad, align) for nd, mode, pad, align in itertools.product((2, 3), MODES, PADDINGS, (True, False))
         if not (nd == 3 and mode == "bicubic")]


def _pair(array: np.ndarray, requires_grad: bool = True):
    return (ember.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad))


def _sample_both(x: np.ndarray, g: np.ndarray, mode: str, pad: str, align: bool):
    """Values and gradients (to input and grid) of one weighted sum of grid_sample, in ember and in torch."""
    (ex, tx), (eg, tg) = _pair(x), _pair(g)
    eo, to = F.grid_sample(ex, eg, mode, pad, align), TF.grid_sample(tx, tg, mode, pad, align)
    weights = np.random.default_rng(3).standard_normal(tuple(to.shape))
    (eo * ember.tensor(weights)).sum().backward()
    (to * torch.tensor(weights)).sum().backward()
    return ((eo.detach().numpy(), ex.grad.numpy(), eg.grad.numpy()),
            (to.detach().numpy(), tx.grad.numpy(), tg.grad.numpy()))


@pytest.mark.parametrize("nd, mode, pad, align", CASES)
def test_grid_sample_matches_torch(nd, mode, pad, align):
    rng = np.random.default_rng(nd * 100 + len(mode) + len(pad) + align)
    shape, grid_shape = ((2, 3, 5, 6), (2, 4, 7, 2)) if nd == 2 else ((2, 3, 4, 5, 3), (2, 3, 4, 2, 3))
    x = rng.standard_normal(shape)
    g = rng.uniform(-1.4, 1.4, grid_shape)  # outside [-1, 1] too: the padding modes matter
    ours, theirs = _sample_both(x, g, mode, pad, align)
    for a, b, what in zip(ours, theirs, ("output", "input grad", "grid grad")):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=what)


@settings(max_examples=25, deadline=None)
@given(h=st.integers(1, 5), w=st.integers(1, 5), ho=st.integers(0, 4), wo=st.integers(1, 4),
       mode=st.sampled_from(MODES), pad=st.sampled_from(PADDINGS), align=st.booleans(), seed=st.integers(0, 2**16))
def test_grid_sample_any_shape_matches_torch(h, w, ho, wo, mode, pad, align, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 2, h, w))
    g = rng.uniform(-1.6, 1.6, (2, ho, wo, 2))
    ours, theirs = _sample_both(x, g, mode, pad, align)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_float32_and_strided_inputs(mode):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 6, 8)).astype(np.float32)
    g = rng.uniform(-1.1, 1.1, (2, 2, 5, 5)).astype(np.float32)
    ours = F.grid_sample(ember.tensor(x).transpose(2, 3), ember.tensor(g).permute(0, 2, 3, 1), mode, "zeros", False)
    theirs = TF.grid_sample(torch.tensor(x).transpose(2, 3), torch.tensor(g).permute(0, 2, 3, 1), mode, "zeros", False)
    assert ours.dtype == ember.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode, nd", [("bilinear", 2), ("bicubic", 2), ("bilinear", 3)])
@pytest.mark.parametrize("pad", PADDINGS)
def test_grid_sample_gradcheck_and_gradgradcheck(mode, nd, pad):
    rng = np.random.default_rng(11)
    shape, grid_shape = ((1, 2, 3, 4), (1, 2, 2, 2)) if nd == 2 else ((1, 1, 3, 3, 2), (1, 2, 1, 2, 3))
    x = ember.tensor(rng.standard_normal(shape), requires_grad=True)
    g = ember.tensor(rng.uniform(-1.2, 1.2, grid_shape), requires_grad=True)

    def sample(a, b):
        return F.grid_sample(a, b, mode, pad, align_corners=False)

    assert ember.autograd.gradcheck(sample, (x, g))
    assert ember.autograd.gradgradcheck(sample, (x, g))


@pytest.mark.parametrize("pad", ("border", "reflection"))
@pytest.mark.parametrize("mode", ("bilinear", "nearest"))
@pytest.mark.parametrize("value", (float("nan"), float("inf"), -float("inf")))
def test_grid_sample_non_finite_coordinates_as_torch(pad, mode, value):
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    g = np.full((1, 1, 2, 2), value)
    ours = F.grid_sample(ember.tensor(x), ember.tensor(g), mode, pad, align_corners=True)
    theirs = TF.grid_sample(torch.tensor(x), torch.tensor(g), mode, pad, align_corners=True)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("mode", ("bilinear", "bicubic"))
def test_non_finite_coordinates_with_zeros_padding_send_no_gradient_to_the_input_as_torch(mode):
    """The output there is NaN, as torch's, but the taps outside read nothing and take no gradient back."""
    x = np.arange(6.0).reshape(1, 1, 2, 3)
    g = np.array([[[[np.inf, 0.0], [np.nan, 0.2], [0.1, -np.inf], [0.3, 0.2]]]])
    (ex, tx), (eg, tg) = _pair(x), _pair(g)
    eo, to = F.grid_sample(ex, eg, mode, "zeros", False), TF.grid_sample(tx, tg, mode, "zeros", False)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy())
    eo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 6), (2, 3, 1, 1), (2, 2, 3, 4, 5), (2, 1, 1, 1, 2)])
@pytest.mark.parametrize("align", (True, False))
def test_affine_grid_matches_torch(size, align):
    k = len(size) - 2
    theta = np.random.default_rng(len(size)).standard_normal((2, k, k + 1))
    (et, tt) = _pair(theta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unit sizes with align_corners warn in both
        ours, theirs = F.affine_grid(et, list(size), align), TF.affine_grid(tt, list(size), align)
    weights = np.random.default_rng(5).standard_normal(tuple(theirs.shape))
    (ours * ember.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(et.grad.numpy(), tt.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_affine_grid_gradgradcheck_and_float32():
    theta = ember.tensor(np.random.default_rng(2).standard_normal((2, 2, 3)), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: F.affine_grid(t, [2, 1, 3, 4], align_corners=False), (theta,))
    assert F.affine_grid(theta.float().detach(), [2, 1, 3, 4], align_corners=False).dtype == ember.float32


@pytest.mark.parametrize("dtype", ("float32", "float16", "float64"))
@pytest.mark.parametrize("size", [(1, 1, 4, 4), (1, 1, 3, 7), (1, 1, 3, 5, 11), (1, 1, 2, 1)])
@pytest.mark.parametrize("align", (True, False))
def test_affine_grid_of_the_identity_is_torchs_grid_to_the_bit(dtype, size, align):
    # the base grid is torch's linspace (not NumPy's, which rounds -1/3 differently in float32), scaled
    # to the pixel centres as torch does it: times (n - 1), then divided by n
    if dtype == "float16" and 1 in size[2:]:
        pytest.skip("torch has no float16 kernel for a unit-size grid")
    k = len(size) - 2
    identity = np.eye(k, k + 1)[None]
    ours = F.affine_grid(ember.tensor(identity, dtype=getattr(ember, dtype)), list(size), align)
    theirs = TF.affine_grid(torch.tensor(identity, dtype=getattr(torch, dtype)), list(size), align)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_identity_transform_reads_the_input_back():
    image = ember.randn(2, 3, 5, 7)
    identity = ember.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]).expand(2, 2, 3)
    for align in (True, False):
        grid = F.affine_grid(identity, [2, 3, 5, 7], align_corners=align)
        np.testing.assert_allclose(F.grid_sample(image, grid, align_corners=align).numpy(), image.numpy(), atol=1e-5)


def test_default_align_corners_warns_as_torch():
    image, grid = ember.randn(1, 1, 3, 3), ember.zeros(1, 2, 2, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0") as caught:
        F.grid_sample(image, grid)
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(ember.eye(2, 3).unsqueeze(0), [1, 1, 2, 2])
    with pytest.warns(UserWarning, match="unit-size grids"):
        F.affine_grid(ember.eye(2, 3).unsqueeze(0), [1, 1, 1, 2], align_corners=True)


def _raises_as_torch(call, match: str):
    """``call(F)`` raises in ember what ``call(torch.nn.functional)`` raises in torch, with ember's message."""
    with pytest.raises(Exception) as theirs:
        call(TF, torch)
    with pytest.raises(type(theirs.value), match=match):
        call(F, ember)


def test_grid_sample_errors():
    x, g = (2, 3, 4, 5), (2, 4, 5, 2)
    _raises_as_torch(lambda f, m: f.grid_sample(m.zeros(x), m.zeros(g), mode="foo", align_corners=False),
                     "expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'foo'")
    _raises_as_torch(lambda f, m: f.grid_sample(m.zeros(x), m.zeros(g), padding_mode="foo", align_corners=False),
                     "expected padding_mode to be 'zeros', 'border', or 'reflection', but got: 'foo'")
    _raises_as_torch(lambda f, m: f.grid_sample(m.zeros(x), m.zeros(2, 4, 5, 1), align_corners=False),
                     r"expected grid to have size 2 in last dimension, but got grid with sizes \[2, 4, 5, 1\]")
    _raises_as_torch(lambda f, m: f.grid_sample(m.zeros(1, 3, 4, 5), m.zeros(g), align_corners=False),
                     r"same batch size, but got input with sizes \[1, 3, 4, 5\] and grid with sizes \[2, 4, 5, 2\]")
    _raises_as_torch(lambda f, m: f.grid_sample(m.zeros(2, 3, 4), m.zeros(2, 3, 4), align_corners=False),
                     "expected 4D or 5D input and grid with same number of dimensions")
    _raises_as_torch(lambda f, m: f.grid_sample(m.zeros(2, 3, 0, 5), m.zeros(g), align_corners=False),
                     r"non-empty spatial dimensions, but input has sizes \[2, 3, 0, 5\] with dimension 2 being empty")
    _raises_as_torch(lambda f, m: f.grid_sample(m.zeros(2, 3, 2, 4, 5), m.zeros(2, 1, 2, 2, 3), mode="bicubic",
                                                align_corners=False), "bicubic interpolation only supports 4D input")
    _raises_as_torch(lambda f, m: f.grid_sample(m.zeros(x), m.zeros(g, dtype=m.float64), align_corners=False),
                     "same dtype, but got input .*float32 and grid .*float64")
    _raises_as_torch(lambda f, m: f.grid_sample(m.zeros(x, dtype=m.int32), m.zeros(g, dtype=m.int32),
                                                align_corners=False), "floating-point input and grid")


def test_affine_grid_errors():
    theta = (2, 2, 3)
    _raises_as_torch(lambda f, m: f.affine_grid(m.zeros(theta), [2, 3, 4], align_corners=False),
                     r"only supports 4D and 5D sizes.*Got size \[2, 3, 4\]")
    _raises_as_torch(lambda f, m: f.affine_grid(m.zeros(2, 3, 3), [2, 3, 4, 5], align_corners=False),
                     r"Expected a batch of 2D affine matrices of shape Nx2x3 for size \[2, 3, 4, 5\]")
    _raises_as_torch(lambda f, m: f.affine_grid(m.zeros(theta), [2, 3, 4, 5, 6], align_corners=False),
                     "Expected a batch of 3D affine matrices of shape Nx3x4 for size")
    _raises_as_torch(lambda f, m: f.affine_grid(m.zeros(theta, dtype=m.int32), [2, 3, 4, 5], align_corners=False),
                     "Expected theta to have floating point type, but got .*int32")
    _raises_as_torch(lambda f, m: f.affine_grid(m.zeros(theta), [2, 3, 0, 5], align_corners=False),
                     r"Expected non-zero, positive output size. Got \[2, 3, 0, 5\]")
    _raises_as_torch(lambda f, m: f.affine_grid(m.zeros(theta), [3, 3, 4, 5], align_corners=False),
                     "theta holds 2 matrices but size asks for a batch of 3")


def test_empty_batch_and_empty_output():
    assert F.grid_sample(ember.zeros(0, 3, 4, 4), ember.zeros(0, 2, 3, 2), align_corners=True).shape == (0, 3, 2, 3)
    assert F.grid_sample(ember.zeros(2, 3, 4, 4), ember.zeros(2, 0, 3, 2), align_corners=True).shape == (2, 3, 0, 3)


def test_dispatches_through_torch_function():
    seen = []

    class Logged(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    image = ember.randn(1, 1, 3, 3).as_subclass(Logged)
    F.grid_sample(image, ember.zeros(1, 2, 2, 2), align_corners=True)
    F.affine_grid(ember.eye(2, 3).unsqueeze(0).as_subclass(Logged), [1, 1, 2, 2], align_corners=True)
    assert seen[0] is F.grid_sample and F.affine_grid in seen
