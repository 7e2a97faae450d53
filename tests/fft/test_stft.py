"""stft and istft against torch: values, gradients, second derivatives, warnings and errors."""
import warnings

import numpy as np
import pytest
import torch

import ember
from fft._twins import close, leaves, real_loss, signal
from twins import both_raise

CASES = [
    dict(n_fft=8), dict(n_fft=8, hop_length=2, win_length=5), dict(n_fft=8, center=False),
    dict(n_fft=8, pad_mode="constant"), dict(n_fft=8, pad_mode="circular"), dict(n_fft=8, pad_mode="replicate"),
    dict(n_fft=8, normalized=True), dict(n_fft=8, onesided=False), dict(n_fft=7, hop_length=3),
    dict(n_fft=8, hop_length=3, win_length=4, center=False, align_to_window=True),
]
INVERSE_OPTIONS = ("n_fft", "hop_length", "win_length", "center", "normalized", "onesided")


def _hann(length: int, dtype: str) -> np.ndarray:
    return np.hanning(length + 2)[1:-1].astype(dtype)


def _pair_of(array):
    return (None, None) if array is None else (ember.tensor(array), torch.tensor(array))


@pytest.mark.parametrize("options", CASES, ids=[str(sorted(c.items())) for c in CASES])
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_stft_and_istft_match_torch(options, dtype):
    rng = np.random.default_rng(0)
    window = _hann(options.get("win_length", options["n_fft"]), "float64" if "128" in dtype else dtype)
    for shape, win in (((20,), window), ((2, 19), None)):
        x_ember, x_torch = leaves(signal(rng, shape, dtype))
        w_ember, w_torch = _pair_of(win)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine = ember.stft(x_ember, window=w_ember, return_complex=True, **options)
            theirs = torch.stft(x_torch, window=w_torch, return_complex=True, **options)
        close(mine, theirs)
        weights = signal(rng, tuple(theirs.shape), "complex128")
        real_loss(mine, weights).backward()
        real_loss(theirs, weights).backward()
        close(x_ember.grad, x_torch.grad, 1e-4)
        if options.get("center", True):
            _istft_matches(theirs.detach().numpy(), w_ember, w_torch, shape[-1], dtype.startswith("complex"),
                           {k: v for k, v in options.items() if k in INVERSE_OPTIONS}, rng)


def _istft_matches(spectrum, w_ember, w_torch, length, complex_result, options, rng):
    for wanted in (None, length) if length is not None else (None,):
        s_ember, s_torch = leaves(spectrum)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine = ember.istft(s_ember, window=w_ember, length=wanted, return_complex=complex_result, **options)
            theirs = torch.istft(s_torch, window=w_torch, length=wanted, return_complex=complex_result, **options)
        close(mine, theirs, 1e-4)
        weights = signal(rng, tuple(theirs.shape), "complex128" if complex_result else "float64")
        real_loss(mine, weights).backward()
        real_loss(theirs, weights).backward()
        close(s_ember.grad, s_torch.grad, 1e-4)


def test_istft_pads_a_longer_length_with_zeros_and_warns():
    # (torch warns once per process, so only ember's warning is checked here)
    spectrum = torch.stft(torch.arange(16.0), 8, window=torch.ones(8), return_complex=True)
    with pytest.warns(UserWarning, match="shorter than the length parameter"):
        mine = ember.istft(ember.tensor(spectrum.numpy()), 8, window=ember.ones(8), length=24)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(mine, torch.istft(spectrum, 8, window=torch.ones(8), length=24))
    np.testing.assert_allclose(mine.numpy()[20:], 0)


def test_round_trip_through_tensor_methods():
    x = ember.randn(3, 40)
    window = ember.hann_window(16)
    spectrum = x.stft(16, hop_length=4, window=window, return_complex=True)
    back = spectrum.istft(16, hop_length=4, window=window, length=40)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-5)


def test_gradcheck_and_gradgradcheck_through_signal_and_window():
    x = ember.randn(2, 12, dtype=ember.float64, requires_grad=True)
    window = ember.hann_window(6, dtype=ember.float64).requires_grad_()

    def forward(t, w):
        return ember.stft(t, 6, hop_length=2, window=w, return_complex=True)

    assert ember.autograd.gradcheck(forward, (x, window))
    assert ember.autograd.gradgradcheck(forward, (x, window))
    spectrum = forward(x, window).detach().requires_grad_()

    def inverse(s, w):
        return ember.istft(s, 6, hop_length=2, window=w, length=12)

    assert ember.autograd.gradcheck(inverse, (spectrum, window))
    assert ember.autograd.gradgradcheck(inverse, (spectrum, window))


def test_return_complex_false_is_deprecated_and_gives_real_pairs():
    x = np.arange(16.0, dtype=np.float32)
    results = []
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
            results.append(lib.stft(lib.tensor(x), 8, window=lib.ones(8), return_complex=False))
    close(results[1], results[0])


def test_complex_input_defaults_to_a_twosided_complex_result():
    array = signal(np.random.default_rng(1), (12,), "complex64")
    close(ember.stft(ember.tensor(array), 4, window=ember.ones(4)),
          torch.stft(torch.tensor(array), 4, window=torch.ones(4)))


def test_stft_without_window_warns_as_torch():
    with pytest.warns(UserWarning, match="A window was not provided. A rectangular window will be applied"):
        ember.stft(ember.ones(16), 8, return_complex=True)


def test_istft_without_window_warns_as_torch():
    # (torch's warning, word for word, comes once per process: only ember's is checked)
    spectrum = torch.stft(torch.arange(16.0), 8, window=torch.ones(8), return_complex=True).numpy()
    with pytest.warns(UserWarning, match="A window was not provided"):
        ember.istft(ember.tensor(spectrum), 8)


@pytest.mark.parametrize("program,error,fragment", [
    (lambda lib: lib.stft(lib.randn(20), 8), RuntimeError, "requires the return_complex parameter"),
    (lambda lib: lib.stft(lib.randn(20), 8, win_length=9, return_complex=True), RuntimeError,
     "expected 0 < win_length <= n_fft"),
    (lambda lib: lib.stft(lib.randn(20), 8, hop_length=0, return_complex=True), RuntimeError,
     "expected hop_length > 0"),
    (lambda lib: lib.stft(lib.randn(20), 8, window=lib.ones(7), return_complex=True), RuntimeError,
     "expected a 1D window tensor of size equal to win_length=8"),
    (lambda lib: lib.stft(lib.randn(20), 30, center=False, return_complex=True), RuntimeError, "n_fft=30"),
    (lambda lib: lib.stft(lib.randn(2, 2, 20), 8, return_complex=True), RuntimeError, "expected a 1D or 2D"),
    (lambda lib: lib.stft(lib.randn(20, dtype=lib.complex64), 8, onesided=True, return_complex=True),
     RuntimeError, "Cannot have onesided output if window or input is complex"),
    (lambda lib: lib.stft(lib.randn(20), 8, align_to_window=True, return_complex=True), RuntimeError,
     "align_to_window should only be set when center = false"),
    (lambda lib: lib.stft(lib.randn(20), 8, pad_mode="zeros", return_complex=True), NotImplementedError,
     "Unrecognised padding mode zeros"),
    (lambda lib: lib.stft(lib.arange(10), 4, return_complex=True), RuntimeError,
     "expected a tensor of floating point or complex values"),
    (lambda lib: lib.istft(lib.randn(5, 11), 8, window=lib.ones(8)), RuntimeError,
     "istft requires a complex-valued input tensor"),
    (lambda lib: lib.istft(lib.randn(5, 11, dtype=lib.complex64), 8, window=lib.ones(8), onesided=False),
     RuntimeError, "expected the frequency dimension .* to match"),
    (lambda lib: lib.istft(lib.randn(5, 11, dtype=lib.complex64), 8, window=lib.hann_window(8), center=False),
     RuntimeError, "window overlap add min"),
    (lambda lib: lib.istft(lib.randn(5, 11, dtype=lib.complex64), 8, window=lib.ones(8), return_complex=True),
     RuntimeError, "Cannot have onesided output"),
])
@pytest.mark.filterwarnings("ignore:A window was not provided")
def test_errors_as_torch(program, error, fragment):
    both_raise(program, error, fragment)


def test_uncentred_round_trip_matches_torch():
    rng = np.random.default_rng(2)
    x = signal(rng, (60,), "float64")
    spectrum = torch.stft(torch.tensor(x), 8, window=torch.ones(8), center=False, return_complex=True).numpy()
    for length in (None, 57, 70):
        _istft_matches(spectrum, ember.ones(8), torch.ones(8), length, False, {"n_fft": 8, "center": False}, rng)


def test_complex_window_gives_a_twosided_result():
    rng = np.random.default_rng(3)
    x, window = signal(rng, (16,), "float32"), signal(rng, (4,), "complex64")
    for return_complex in (None, True):
        close(ember.stft(ember.tensor(x), 4, window=ember.tensor(window), return_complex=return_complex),
              torch.stft(torch.tensor(x), 4, window=torch.tensor(window), return_complex=return_complex))


def test_forward_mode_tangents_match_torch():
    rng = np.random.default_rng(4)
    x, v, w = rng.standard_normal(24), rng.standard_normal(24), _hann(8, "float64")
    tangents = []
    for lib in (torch, ember):
        forward_ad = lib.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(lib.tensor(x), lib.tensor(v))
            spectrum = lib.stft(dual, 8, hop_length=2, window=lib.tensor(w), return_complex=True)
            back = lib.istft(spectrum * spectrum, 8, hop_length=2, window=lib.tensor(w), length=24)
            tangents.append((forward_ad.unpack_dual(spectrum).tangent, forward_ad.unpack_dual(back).tangent))
    close(tangents[1][0], tangents[0][0])
    close(tangents[1][1], tangents[0][1])
