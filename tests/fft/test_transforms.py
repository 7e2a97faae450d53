"""ember.fft's transforms against torch.fft: values, dtypes, gradients to second order, errors and out=."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from fft._twins import MANY_DIMS, NORMS, ONE_DIM, REAL_ONLY, close, same_values_and_gradients, signal
from twins import both_raise

DTYPES = ("float32", "float64", "complex64", "complex128")
CASES = [(name, dtype) for name in ONE_DIM + MANY_DIMS for dtype in DTYPES
         if not (name in REAL_ONLY and dtype.startswith("complex"))]
# trimming, padding, another dim, and (for n-d) dims given out of order with a kept size
ONE_DIM_OPTIONS = ({}, {"n": 3}, {"n": 9}, {"dim": 0})
MANY_DIMS_OPTIONS = ({}, {"s": (3, 7)}, {"dim": (0, 2)}, {"s": (5, -1), "dim": (2, 0)})


@pytest.mark.parametrize("name,dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_values_and_gradients_match_torch(name, dtype):
    rng = np.random.default_rng(len(name) + len(dtype))
    options = ONE_DIM_OPTIONS if name in ONE_DIM else MANY_DIMS_OPTIONS
    if name.endswith("2"):
        options = options[:3]
    for norm, option in zip(NORMS, options):
        same_values_and_gradients(lambda lib, x: getattr(lib.fft, name)(x, norm=norm, **option),
                                  signal(rng, (4, 3, 5), dtype), rng)


@settings(max_examples=25)
@given(st.sampled_from(ONE_DIM + MANY_DIMS), st.lists(st.integers(1, 5), min_size=1, max_size=3),
       st.sampled_from(NORMS), st.data())
def test_random_shapes_sizes_and_dims_match_torch(name, shape, norm, data):
    ndim = len(shape)
    if name.endswith("2") and ndim < 2:
        shape, ndim = shape + [3], ndim + 1
    count = 2 if name.endswith("2") else 1 if name in ONE_DIM else data.draw(st.integers(1, ndim))
    dims = data.draw(st.permutations(range(-ndim, 0)))[:count]
    sizes = [data.draw(st.integers(1, 6)) for _ in dims]
    if name in ONE_DIM:
        option = {"n": sizes[0], "dim": dims[0]}
    else:
        option = {"s": sizes, "dim": dims}
    dtype = "float64" if name in REAL_ONLY else "complex128"
    rng = np.random.default_rng(0)
    same_values_and_gradients(lambda lib, x: getattr(lib.fft, name)(x, norm=norm, **option),
                              signal(rng, tuple(shape), dtype), rng)


GRAD_CASES = [(name, norm, dtype) for name in ONE_DIM + MANY_DIMS for norm in NORMS[1:]
              for dtype in ("float64", "complex128") if not (name in REAL_ONLY and dtype == "complex128")]


@pytest.mark.parametrize("name,norm,dtype", GRAD_CASES, ids=["-".join(case) for case in GRAD_CASES])
def test_gradcheck_and_gradgradcheck(name, norm, dtype):
    rng = np.random.default_rng(1)
    x = ember.tensor(signal(rng, (3, 4), dtype), requires_grad=True)
    option = {"n": 5} if name in ONE_DIM else {"s": (2, 5)}

    def transform(t):
        return getattr(ember.fft, name)(t, norm=norm, **option)

    assert ember.autograd.gradcheck(transform, (x,))
    assert ember.autograd.gradgradcheck(transform, (x,))


def test_second_derivatives_equal_torch():
    # the gradient of a gradient: what create_graph=True gives through a chain of transforms
    rng = np.random.default_rng(2)
    array = signal(rng, (6,), "float64")
    results = []
    for lib in (torch, ember):
        x = lib.tensor(array, requires_grad=True)
        z = lib.fft.fft(x, norm="ortho")[:4]
        y = lib.fft.irfft(z * z, n=7)
        (g,) = lib.autograd.grad((y * lib.arange(7.0, dtype=lib.float64)).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        results.append((g, h))
    close(results[1][0], results[0][0])
    close(results[1][1], results[0][1])


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "rfftn", "hfft2"])
def test_grad_fn_names_match_torch(name):
    dtype = torch.float64 if name in REAL_ONLY else torch.complex128
    names = []
    for lib in (torch, ember):
        x = lib.ones(3, 4, dtype=getattr(lib, str(dtype).split(".")[1]), requires_grad=True)
        node = getattr(lib.fft, name)(x).grad_fn
        while node.name().startswith(("Conj", "Neg")):
            node = node.next_functions[0][0]
        names.append(node.name().replace("torch::autograd::", ""))
    assert names[0] == names[1]


def test_integer_and_bool_inputs_are_taken_as_the_default_float():
    for lib in (torch, ember):
        assert str(lib.fft.fft(lib.arange(4)).dtype).endswith("complex64")
        assert str(lib.fft.rfft(lib.tensor([True, False, True])).dtype).endswith("complex64")
        assert str(lib.fft.irfft(lib.arange(3)).dtype).endswith("float32")
    close(ember.fft.fft(ember.arange(5)), torch.fft.fft(torch.arange(5)))


def test_zero_dim_input_and_no_dims():
    close(ember.fft.fftn(ember.tensor(2.0)), torch.fft.fftn(torch.tensor(2.0)))
    close(ember.fft.fftn(ember.ones(2, 3), dim=()), torch.fft.fftn(torch.ones(2, 3), dim=()))


def test_out_receives_the_result_in_its_dtype():
    x = np.arange(4.0, dtype=np.float32)
    for lib, expect in ((ember, None), (torch, None)):
        out = lib.empty(4, dtype=lib.complex128)
        assert lib.fft.fft(lib.tensor(x), out=out) is out
    mine, theirs = ember.empty(0, dtype=ember.complex128), torch.empty(0, dtype=torch.complex128)
    close(ember.fft.fft(ember.tensor(x), out=mine), torch.fft.fft(torch.tensor(x), out=theirs))
    close(ember.fft.irfft(ember.tensor(x), out=ember.empty(6)), torch.fft.irfft(torch.tensor(x), out=torch.empty(6)))


@pytest.mark.parametrize("program,error,fragment", [
    (lambda lib: lib.fft.fft(lib.randn(4), n=0), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda lib: lib.fft.fft(lib.randn(0)), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda lib: lib.fft.irfft(lib.randn(1, dtype=lib.complex64)), RuntimeError, r"data points \(0\)"),
    (lambda lib: lib.fft.fft(lib.randn(4), dim=1), IndexError, r"Dimension out of range .*\[-1, 0\], but got 1"),
    (lambda lib: lib.fft.fft(lib.tensor(1.0)), IndexError, "but tensor has no dimensions"),
    (lambda lib: lib.fft.fft2(lib.randn(4)), IndexError, "but got -2"),
    (lambda lib: lib.fft.fft(lib.randn(4), norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
    (lambda lib: lib.fft.rfft(lib.randn(4, dtype=lib.complex64)), RuntimeError,
     "rfft expects a real input tensor, but got ComplexFloat"),
    (lambda lib: lib.fft.ihfftn(lib.randn(2, 4, dtype=lib.complex128)), RuntimeError,
     "ComplexDouble"),
    (lambda lib: lib.fft.fft(lib.randn(4).half()), RuntimeError, "Unsupported dtype Half"),
    (lambda lib: lib.fft.fftn(lib.randn(3, 4), s=(2, 3, 4)), RuntimeError,
     "Got shape with 3 values but input tensor only has 2 dimensions"),
    (lambda lib: lib.fft.fftn(lib.randn(3, 4), s=(2, 3), dim=(0,)), RuntimeError,
     "dim and shape arguments must have the same length"),
    (lambda lib: lib.fft.fftn(lib.randn(3, 4), dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
    (lambda lib: lib.fft.rfftn(lib.randn(3, 4), dim=()), RuntimeError, "rfftn must transform at least one axis"),
    (lambda lib: lib.fft.fft(lib.randn(4), out=lib.empty(4)), RuntimeError,
     "fft expects a complex output tensor, but got Float"),
    (lambda lib: lib.fft.fft(lib.randn(4), n=2.5), TypeError, "argument 'n' must be int, not float"),
    (lambda lib: lib.fft.fft(lib.randn(4), dim=None), TypeError, "argument 'dim' must be int, not NoneType"),
])
def test_errors_as_torch(program, error, fragment):
    both_raise(program, error, fragment)


def test_forward_mode_tangents_are_the_transformed_tangents():
    import ember.autograd.forward_ad as fwad

    rng = np.random.default_rng(3)
    primal, tangent = (ember.tensor(signal(rng, (4, 6), "float64")) for _ in range(2))
    for name in ("fft", "rfftn", "irfft", "hfft2"):
        transform = getattr(ember.fft, name)
        with fwad.dual_level():
            out = transform(fwad.make_dual(primal, tangent))
            close(fwad.unpack_dual(out).tangent, transform(tangent))


def test_functions_dispatch_through_torch_function():
    seen = []

    class Spy(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    names = ("fft", "ifftn", "rfft2", "hfft", "fftshift")
    for name in names:
        getattr(ember.fft, name)(ember.ones(2, 4).as_subclass(Spy))
    assert [f for f in seen if f in [getattr(ember.fft, n) for n in names]] == [getattr(ember.fft, n) for n in names]


def test_inverse_pairs_round_trip():
    rng = np.random.default_rng(4)
    x = ember.tensor(signal(rng, (3, 8), "float64"))
    for norm in ("backward", "ortho", "forward"):
        assert ember.fft.irfftn(ember.fft.rfftn(x, norm=norm), s=(3, 8), norm=norm).allclose(x)
        assert ember.fft.ifft2(ember.fft.fft2(x, norm=norm), norm=norm).real.allclose(x)
        half = ember.fft.ihfft(x)
        np.testing.assert_allclose(ember.fft.ihfft(ember.fft.hfft(half, n=8, norm=norm), norm=norm).numpy(),
                                   half.numpy(), atol=1e-12)


@pytest.mark.parametrize("name", ONE_DIM + MANY_DIMS + ("fftfreq", "rfftfreq", "fftshift", "ifftshift"))
def test_signatures_as_torch_documents_them(name):
    import inspect
    import re

    documented = getattr(torch.fft, name).__doc__.strip().splitlines()[0]  # e.g. "fft(input, n=None, ...) -> Tensor"
    inside = documented.split("(", 1)[1].rsplit(")", 1)[0]
    theirs = [part.replace("torch.strided", "None") for part in re.split(r",\s*(?![^()]*\))", inside)]
    mine = []
    for parameter in inspect.signature(getattr(ember.fft, name)).parameters.values():
        if parameter.kind is parameter.KEYWORD_ONLY and "*" not in mine:
            mine.append("*")
        default = parameter.default
        mine.append(parameter.name if default is parameter.empty else f"{parameter.name}={default!r}")
    assert mine == theirs


@pytest.mark.parametrize("name", ["fft", "rfft", "ifft"])
def test_single_precision_is_as_accurate_as_torchs(name):
    # NumPy 2 computes complex64 transforms in single precision: their error against a float64 reference
    # must stay that of a single-precision transform, as torch's does
    array = np.random.default_rng(5).standard_normal(4096).astype(np.float32)
    reference = getattr(np.fft, name)(array.astype(np.float64))
    scale = np.abs(reference).max()
    mine = getattr(ember.fft, name)(ember.tensor(array))
    theirs = getattr(torch.fft, name)(torch.tensor(array))
    assert mine.dtype == ember.complex64
    my_error = np.abs(mine.numpy() - reference).max() / scale
    their_error = np.abs(theirs.resolve_conj().numpy() - reference).max() / scale
    assert my_error < 1e-6 and my_error <= 2 * their_error
