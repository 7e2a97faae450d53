# corpus: slow
"""Forecasting a noisy periodic signal with a temporal convolutional network: causal dilated Conv1d
layers (left padding with F.pad) under weight normalisation, residual connections, and a multi-step
forecast fed back into the model."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalBlock(nn.Module):
    def __init__(self, channels, dilation):
        super().__init__()
        self.pad = 2 * dilation  # kernel 3: (3 - 1) * dilation steps of history
        # weight norm rather than a norm over time, which would let the future leak into the past
        self.conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(channels, channels, kernel_size=3, dilation=dilation))

    def forward(self, x):
        return x + F.gelu(self.conv(F.pad(x, (self.pad, 0))))


class TCN(nn.Module):
    def __init__(self, channels=16, levels=4):
        super().__init__()
        self.inp = nn.Conv1d(1, channels, 1)
        self.blocks = nn.Sequential(*[CausalBlock(channels, 2 ** i) for i in range(levels)])
        self.out = nn.Conv1d(channels, 1, 1)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x)))


def signal(n, start):
    t = torch.arange(n).float() + start.unsqueeze(-1)
    return torch.sin(2 * math.pi * t / 16) + 0.5 * torch.sin(2 * math.pi * t / 5)


def main():
    torch.manual_seed(0)
    model = TCN()
    receptive = 1 + sum(2 * 2 ** i for i in range(4))
    print("receptive field:", receptive)

    # causality: the output at t must not depend on inputs after t
    x = torch.randn(1, 1, 40, requires_grad=True)
    model(x)[0, 0, 20].backward()
    print("no gradient from the future:", bool((x.grad[0, 0, 21:] == 0).all()))
    print("gradient from the past:", bool((x.grad[0, 0, :21] != 0).any()))

    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(150):
        series = signal(65, torch.rand(32) * 100) + 0.05 * torch.randn(32, 65)
        inputs, targets = series[:, :-1].unsqueeze(1), series[:, 1:].unsqueeze(1)
        optimizer.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print("one-step loss below 0.05:", loss.item() < 0.05)

    model.eval()
    with torch.no_grad():
        history = signal(48, torch.tensor([7.0])).view(1, 1, -1)
        forecast = []
        for _ in range(16):
            nxt = model(history)[:, :, -1:]
            forecast.append(nxt)
            history = torch.cat([history, nxt], dim=2)
        forecast = torch.cat(forecast, dim=2).flatten()
    truth = signal(64, torch.tensor([7.0])).flatten()[48:]
    print("16-step forecast error below 0.25:", (forecast - truth).abs().mean().item() < 0.25)


if __name__ == "__main__":
    main()
