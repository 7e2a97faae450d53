# corpus: slow
"""Complex-valued models of signals: identify an unknown echo filter by learning its complex frequency
response (a complex nn.Parameter, applied between rfft and irfft), then classify I/Q radio symbols
(BPSK, QPSK or 8-PSK) with a network of complex weights and a modReLU; complex autograd, Adam on
complex parameters, view_as_real, polar and angle along the way."""
import math

import torch
from torch import nn


class FrequencyResponse(nn.Module):
    """A learnt circular convolution: multiply the spectrum by one complex gain per bin."""

    def __init__(self, length):
        super().__init__()
        self.length = length
        self.gain = nn.Parameter(torch.ones(length // 2 + 1, dtype=torch.complex64))

    def forward(self, x):
        return torch.fft.irfft(torch.fft.rfft(x) * self.gain, n=self.length)


class ComplexLinear(nn.Module):
    def __init__(self, cin, cout, dtype=torch.complex64):
        super().__init__()
        scale = 1 / math.sqrt(2 * cin)
        real = dtype.to_real()
        self.weight = nn.Parameter(torch.complex(torch.randn(cout, cin, dtype=real), torch.randn(cout, cin, dtype=real)) * scale)
        self.bias = nn.Parameter(torch.zeros(cout, dtype=dtype))

    def forward(self, z):
        return z @ self.weight.T + self.bias


class ModReLU(nn.Module):
    """ReLU on the magnitude with a learnt threshold; the phase passes through."""

    def __init__(self, features, dtype=torch.float32):
        super().__init__()
        self.threshold = nn.Parameter(torch.full((features,), -0.1, dtype=dtype))

    def forward(self, z):
        magnitude = z.abs()
        return torch.relu(magnitude + self.threshold) * z / (magnitude + 1e-6)


def make_symbols(n, generator, dtype=torch.float64):
    """I/Q samples of a noisy constellation, rotated by a phase offset the classifier must tolerate."""
    kind = torch.randint(0, 3, (n,), generator=generator)
    points = torch.tensor([2, 4, 8])[kind]
    index = (torch.rand(n, 8, generator=generator, dtype=dtype) * points[:, None]).floor()
    phase = 2 * math.pi * index / points[:, None] + 0.2 * torch.rand(n, 1, generator=generator, dtype=dtype)
    noise = torch.complex(torch.randn(n, 8, generator=generator, dtype=dtype),
                          torch.randn(n, 8, generator=generator, dtype=dtype))
    return torch.polar(torch.ones(n, 8, dtype=dtype), phase) + 0.1 * noise, kind


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(4)

    # --- system identification: y is x through an echo (a delayed, damped copy), plus noise
    length = 64
    echo = torch.zeros(length)
    echo[0], echo[5], echo[12] = 1.0, 0.6, -0.3
    x = torch.randn(32, length, generator=generator)
    y = torch.fft.irfft(torch.fft.rfft(x) * torch.fft.rfft(echo), n=length)
    y = y + 0.05 * torch.randn(y.shape, generator=generator)
    model = FrequencyResponse(length)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for step in range(150):
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("gain:", model.gain.dtype, model.gain.shape, "grad:", model.gain.grad.dtype)
    print(f"identification loss: {loss.item():.4f} (the noise has variance 0.0025)")
    impulse = torch.fft.irfft(model.gain.detach(), n=length)
    print("recovered echo taps:", impulse[[0, 5, 12]].round(decimals=2))
    print("largest other tap below 0.02:", bool(impulse[[i for i in range(length) if i not in (0, 5, 12)]].abs().max() < 0.02))
    print("phase response at bins 2..4:", model.gain.detach().angle()[2:5].round(decimals=2))

    # --- complex autograd: the gradient of a real loss of z is the conjugate Wirtinger derivative times 2
    z = torch.tensor([1.0 + 2.0j, -0.5 + 0.25j], requires_grad=True)
    (z.abs() ** 2).sum().backward()
    print("d|z|^2/dz* (times 2):", z.grad)
    w = torch.tensor([0.3 - 0.7j], dtype=torch.complex128, requires_grad=True)
    print("gradcheck through fft:", torch.autograd.gradcheck(lambda w: torch.fft.fft(torch.cat([w, w.conj() * 2])).abs(), (w,)))

    # --- modulation classification from I/Q samples
    symbols, kinds = make_symbols(600, generator)
    print("symbols:", symbols.shape, symbols.dtype, "as real:", torch.view_as_real(symbols).shape)
    features = lambda z: torch.stack([(z ** k).mean(1) for k in (2, 4, 8)], dim=1)  # powers undo the phase
    # in double: modReLU divides by magnitudes near zero, where single precision makes training erratic
    classifier = nn.Sequential(ComplexLinear(3, 16, torch.complex128), ModReLU(16, torch.float64),
                               ComplexLinear(16, 3, torch.complex128))
    optimizer = torch.optim.Adam(classifier.parameters(), lr=0.02)
    train, test = slice(0, 500), slice(500, 600)
    for epoch in range(100):
        logits = classifier(features(symbols[train])).abs()
        loss = nn.functional.cross_entropy(logits * 4, kinds[train])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if epoch % 50 == 49:
            print(f"epoch {epoch + 1}: loss {loss.item():.4f}")
    with torch.no_grad():
        predicted = classifier(features(symbols[test])).abs().argmax(1)
    print(f"test accuracy: {(predicted == kinds[test]).float().mean().item():.4f}")
    print("complex parameters:", [p.dtype for p in classifier.parameters()])
    print("Adam keeps complex moments:", optimizer.state[classifier[0].weight]["exp_avg"].dtype)


if __name__ == "__main__":
    main()
