"""Denoise a signal in the frequency domain: find its tones with rfft, learn a gain for every frequency bin
by gradient descent through rfft and irfft, then look at it as a spectrogram with stft and invert it."""
import math

import torch

torch.manual_seed(0)
n, rate = 256, 64.0  # samples, and samples per second
t = torch.arange(n, dtype=torch.float64) / rate
clean = torch.sin(2 * math.pi * 5.0 * t) + 0.5 * torch.sin(2 * math.pi * 12.0 * t)
noise = 0.4 * torch.sin(2 * math.pi * 23.5 * t + 1.0) + 0.3 * torch.cos(2 * math.pi * 29.0 * t * t)
noisy = clean + noise

# ---- the tones: the two largest bins of the onesided spectrum, and their frequencies
spectrum = torch.fft.rfft(clean)
frequencies = torch.fft.rfftfreq(n, d=1 / rate, dtype=torch.float64)
top = spectrum.abs().topk(2).indices.sort().values
print("spectrum:", spectrum.shape, spectrum.dtype)
print("tones (Hz):", [f"{f:.2f}" for f in frequencies[top].tolist()])
print("Parseval holds:", torch.allclose((clean ** 2).sum(), (torch.fft.fft(clean).abs() ** 2).sum() / n))

# ---- a learned filter: one gain per bin, trained so that the filtered noisy signal matches the clean one
logits = torch.zeros(n // 2 + 1, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.Adam([logits], lr=0.1)
noisy_spectrum = torch.fft.rfft(noisy, norm="ortho")


def filtered():
    return torch.fft.irfft(noisy_spectrum * torch.sigmoid(logits), n=n, norm="ortho")


first = torch.nn.functional.mse_loss(filtered(), clean).item()
for step in range(150):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(filtered(), clean)
    loss.backward()
    optimizer.step()
print("loss fell tenfold:", loss.item() < first / 10)
gains = torch.sigmoid(logits).detach()
print("kept the tones:", bool((gains[top] > 0.9).all()))
print("filtered error below the noise:", bool(((filtered() - clean).abs().max() < noise.abs().max() / 2)))

# ---- the gradient of a transform pipeline, checked against finite differences, to second order
x = torch.linspace(-1, 1, 12, dtype=torch.float64, requires_grad=True)
pipeline = lambda v: torch.fft.irfft(torch.fft.rfft(v) * torch.fft.rfft(v.flip(0)), n=12).abs()  # noqa: E731
print("gradcheck:", torch.autograd.gradcheck(pipeline, (x,)), torch.autograd.gradgradcheck(pipeline, (x,)))

# ---- a spectrogram, and back
window = torch.hann_window(32, dtype=torch.float64)
spectrogram = torch.stft(noisy, 32, hop_length=8, window=window, return_complex=True)
print("spectrogram:", spectrogram.shape, spectrogram.dtype)
back = torch.istft(spectrogram, 32, hop_length=8, window=window, length=n)
print("istft inverts stft:", torch.allclose(back, noisy))
print("centred:", torch.fft.fftshift(torch.fft.fftfreq(6)).tolist())
