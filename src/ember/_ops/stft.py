"""The short-time Fourier transform and its inverse, as torch has them, composed of differentiable ember ops.

``stft`` cuts the signal into overlapping frames (a view), weighs each by the window and transforms it;
``istft`` transforms each frame back, weighs it by the window again and adds the frames where they overlap
(``OverlapAdd``, whose backward cuts the gradient into frames), then divides by the summed squared window.

>>> import ember
>>> x = ember.arange(16.)
>>> window = ember.hann_window(8)
>>> spectrum = ember.stft(x, 8, hop_length=2, window=window, return_complex=True)
>>> spectrum.shape
ember.Size([5, 9])
>>> ember.istft(spectrum, 8, hop_length=2, window=window, length=16).allclose(x, atol=1e-5)
True
"""
from __future__ import annotations

import warnings

import numpy as np

from ember import _dtype

from ember._ops import spectral
from ember._ops._support import ember_function, require_tensor, user_stacklevel, wrap
from ember._ops.complex import view_as_real
from ember._tensor import Tensor
from ember.autograd.function import Function

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


class OverlapAdd(Function):
    """Frames ``(..., n_frames, frame_length)`` added into one signal, frame ``m`` starting at ``m * hop``."""

    backward_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, frames, hop: int):
        data = frames._data
        n_frames, width = data.shape[-2:]
        ctx.hop, ctx.width = hop, width
        blocks = -(-width // hop)  # each frame covers this many hop-long blocks of the signal
        signal = np.zeros(data.shape[:-2] + (n_frames + blocks, hop), data.dtype)
        for block in range(blocks):
            part = data[..., block * hop:(block + 1) * hop]
            signal[..., block:block + n_frames, :part.shape[-1]] += part
        length = hop * (n_frames - 1) + width
        return wrap(signal.reshape(data.shape[:-2] + (-1,))[..., :length])

    @staticmethod
    def backward(ctx, grad):
        return grad.unfold(-1, ctx.width, ctx.hop), None


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise RuntimeError(message)


def _window_and_sizes(op: str, n_fft: int, hop_length, win_length, window) -> tuple:
    """torch's defaults: a hop of ``n_fft // 4``, a window as long as ``n_fft``; each checked."""
    hop = n_fft // 4 if hop_length is None else hop_length
    width = n_fft if win_length is None else win_length
    _check(hop > 0, f"{op}: expected hop_length > 0, but got hop_length={hop}")
    _check(0 < width <= n_fft, f"{op}: expected 0 < win_length <= n_fft, but got win_length={width} (n_fft={n_fft})")
    if window is not None:
        require_tensor(window, op, name="window")
        _check(window.ndim == 1 and window.shape[0] == width,
               f"{op}: expected a 1D window tensor of size equal to win_length={width}, but got window with "
               f"size {list(window.shape)}; pass win_length=window.numel()")
    return hop, width


def _padded_window(window, width: int, n_fft: int, like: Tensor) -> Tensor:
    """The window (ones if none) centred in ``n_fft`` points, as torch places a shorter one."""
    if window is None:
        window = wrap(np.ones(width, like.real._data.dtype))
    if width == n_fft:
        return window
    return spectral.padded(window, [(n_fft - width) // 2, n_fft - width - (n_fft - width) // 2])


@ember_function
def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None,
         align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: shape ``(B?, n_fft // 2 + 1 or n_fft, n_frames)``.

    >>> ember.stft(ember.ones(8), 4, window=ember.ones(4), return_complex=True)[:, 0]
    tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    x = require_tensor(input, "stft")
    _check(_dtype.kind(x._data.dtype) in "fc", f"stft: expected a tensor of floating point or complex values, got "
                                       f"{x.dtype}; convert it first, e.g. input.float()")
    spectral.supported("stft", x._data)
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied, which is known to cause "
                      "spectral leakage. Other windows such as ember.hann_window or ember.hamming_window are "
                      "recommended to reduce spectral leakage. To suppress this warning and use a rectangular "
                      "window, explicitly set `window=ember.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=user_stacklevel())
    complex_in = x.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        _check(complex_in, "stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future release; pass return_complex=True")
        return_complex = True
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    _check(x.ndim in (1, 2), f"stft: expected a 1D or 2D tensor, but got a {x.ndim}D tensor of shape "
                             f"{list(x.shape)}; batch several signals as rows of a 2D tensor")
    signals = x.unsqueeze(0) if x.ndim == 1 else x
    if center:
        if pad_mode not in _PAD_MODES:
            raise NotImplementedError(f"stft: Unrecognised padding mode {pad_mode}; use one of {list(_PAD_MODES)}")
        half = n_fft // 2
        signals = spectral.padded(signals.unsqueeze(0), [half, half], pad_mode).squeeze(0)  # (pad takes a batch of channels)
    length = signals.shape[-1]
    _check(0 < n_fft <= length, f"stft: expected 0 < n_fft <= {length} (the padded signal's length), but got "
                                f"n_fft={n_fft}")
    hop, width = _window_and_sizes("stft", n_fft, hop_length, win_length, window)
    onesided = not complex_in if onesided is None else onesided
    _check(not (onesided and complex_in), "stft: Cannot have onesided output if window or input is complex; pass "
                                          "onesided=False")
    start = 0 if align_to_window else (n_fft - width) // 2
    frames = signals[..., start:].unfold(-1, width, hop)
    if not align_to_window:
        frames = frames[..., :1 + (length - n_fft) // hop, :]
    if window is not None:
        frames = frames * window
    if width < n_fft:  # the window's zeros either side, as frames of n_fft points
        frames = spectral.padded(frames, [(n_fft - width) // 2, n_fft - width - (n_fft - width) // 2])
    norm = "ortho" if normalized else "backward"
    transform = spectral.R2C.apply(frames, (frames.ndim - 1,), norm) if onesided else \
        spectral.C2C.apply(frames, (frames.ndim - 1,), True, norm)
    result = transform.transpose(-1, -2)
    if x.ndim == 1:
        result = result.squeeze(0)
    if return_complex:
        return result
    warnings.warn("stft with return_complex=False is deprecated. In a future release, stft will return complex "
                  "tensors for all inputs, and return_complex=False will raise an error. Note: you can still "
                  "call ember.view_as_real on the complex output to recover the old return format.",
                  UserWarning, stacklevel=user_stacklevel())
    return view_as_real(result)


@ember_function
def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False,
          onesided: bool | None = None, length: int | None = None, return_complex: bool = False) -> Tensor:
    """The inverse of ``stft``: the signal whose short-time transform ``input`` is (least squares).

    >>> spectrum = ember.stft(ember.arange(8.), 4, window=ember.ones(4), return_complex=True)
    >>> ember.istft(spectrum, 4, window=ember.ones(4), length=8)
    tensor([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    x = require_tensor(input, "istft")
    _check(x.is_complex(), "istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True; pass ember.view_as_complex(input) for a real pair tensor")
    _check(x.ndim in (2, 3), f"istft: expected a tensor of shape (B?, freq, frames), but got shape {list(x.shape)}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied. Please provide the same "
                      "window used by stft to make the inversion lossless. To suppress this warning and use a "
                      "rectangular window, explicitly set `window=ember.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=user_stacklevel())
    hop, width = _window_and_sizes("istft", n_fft, hop_length, win_length, window)
    spectra = x.unsqueeze(0) if x.ndim == 2 else x
    bins, n_frames = spectra.shape[-2:]
    onesided = bins != n_fft if onesided is None else onesided
    expected = n_fft // 2 + 1 if onesided else n_fft
    _check(bins == expected, f"istft: expected the frequency dimension (3rd to the last) of the input tensor to "
                             f"match {'n_fft // 2 + 1' if onesided else 'n_fft'} when onesided={onesided}, but got "
                             f"{bins} (n_fft={n_fft})")
    norm = "ortho" if normalized else "backward"
    spectra = spectra.transpose(-1, -2)
    if return_complex:
        _check(not onesided, "istft: Cannot have onesided output if window or input is complex; pass "
                             "onesided=False")
        frames = spectral.C2C.apply(spectra, (spectra.ndim - 1,), False, norm)
    else:
        _check(window is None or not window.is_complex(),
               "istft: Complex windows are incompatible with return_complex=False")
        half = spectra if onesided else spectra[..., :n_fft // 2 + 1]
        frames = spectral.C2R.apply(half, (half.ndim - 1,), norm, n_fft)
    padded = _padded_window(window, width, n_fft, frames)
    signal = OverlapAdd.apply(frames * padded, hop)
    envelope = OverlapAdd.apply(padded.square().expand(n_frames, n_fft), hop)
    return _trimmed(x, signal, envelope, n_fft, center, length)


def _trimmed(x: Tensor, signal: Tensor, envelope: Tensor, n_fft: int, center: bool, length: int | None) -> Tensor:
    """The signal without the stft's centring pad, to ``length`` if given, divided by the window envelope."""
    total = signal.shape[-1]
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    end = min(end, total)
    signal, envelope = signal[..., start:end], envelope[start:end]
    _check(bool((envelope.abs() >= 1e-11).all()),
           "istft: window overlap add min: the summed squared window is (nearly) zero somewhere, so the signal "
           "cannot be recovered there (the NOLA condition fails); use a window and hop_length whose overlaps "
           "cover every sample")
    signal = signal / envelope
    if length is not None and signal.shape[-1] < length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with "
                      "zeros in the tail. Please check your center and hop_length settings.",
                      UserWarning, stacklevel=user_stacklevel())
        signal = spectral.resized(signal, (signal.ndim - 1,), (length,))
    return signal.squeeze(0) if x.ndim == 2 else signal
