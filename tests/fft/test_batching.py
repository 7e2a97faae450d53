"""ember.func.vmap over the transforms, stft and istft, against torch.func.vmap."""
import warnings

import numpy as np
import pytest
import torch

import ember
from fft._twins import close

PROGRAMS = {
    "rfft ortho": lambda lib, t: lib.fft.rfft(t, norm="ortho"),
    "fftn, every dim": lambda lib, t: lib.fft.fftn(t),
    "fftn, s for the last dim": lambda lib, t: lib.fft.fftn(t, s=(5,)),
    "irfft2": lambda lib, t: lib.fft.irfft2(t),
    "hfft along dim 0": lambda lib, t: lib.fft.hfft(t, 6, 0),
    "ihfftn": lambda lib, t: lib.fft.ihfftn(t),
    "fftshift": lambda lib, t: lib.fft.fftshift(t),
    "ifftshift of the last dim": lambda lib, t: lib.fft.ifftshift(t, dim=-1),
    "stft": lambda lib, t: lib.stft(t, 4, window=lib.ones(4, dtype=lib.float64), return_complex=True),
    "stft then istft": lambda lib, t: lib.istft(lib.stft(t, 4, window=lib.ones(4, dtype=lib.float64),
                                                         return_complex=True), 4, window=lib.ones(4, dtype=lib.float64)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_vmap_matches_torch(name):
    x = np.random.default_rng(0).standard_normal((3, 4, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own fallback warns for some transforms
        close(ember.func.vmap(lambda t: PROGRAMS[name](ember, t))(ember.tensor(x)),
              torch.func.vmap(lambda t: PROGRAMS[name](torch, t))(torch.tensor(x)))


def test_vmap_of_grad_and_nested_vmap_match_torch():
    x = np.random.default_rng(1).standard_normal((3, 4, 8))
    results = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gradient = lib.func.vmap(lib.func.grad(lambda t: lib.fft.rfft(t).abs().sum()))(lib.tensor(x[:, 0]))
            nested = lib.func.vmap(lib.func.vmap(lambda t: lib.fft.fft(t, dim=0)), in_dims=2)(lib.tensor(x))
        results.append((gradient, nested))
    close(results[1][0], results[0][0])
    close(results[1][1], results[0][1])


def test_a_window_that_differs_between_samples_is_refused():
    windows = ember.ones(3, 4)
    with pytest.raises(RuntimeError, match="vmap: batching rule not implemented for ember.stft: the window"):
        ember.func.vmap(lambda t, w: ember.stft(t, 4, window=w, return_complex=True))(ember.ones(3, 8), windows)
