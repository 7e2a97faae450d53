# corpus: slow
"""Single-image super-resolution on the digits with a sub-pixel network (convolutions, then
PixelShuffle): low-resolution inputs made with F.interpolate(mode="area"), a bilinear baseline to beat,
and PSNR as the score."""
import math

import torch
import torch.nn.functional as F
from torch import nn
from sklearn.datasets import load_digits


class SubPixelNet(nn.Module):
    def __init__(self, factor=2, width=32):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(width, width, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(width, factor * factor, 3, padding=1))
        self.shuffle = nn.PixelShuffle(factor)

    def forward(self, low):
        # predict the residual over a bilinear upscale
        base = F.interpolate(low, scale_factor=2, mode="bilinear", align_corners=False)
        return base + self.shuffle(self.body(low))


def psnr(a, b):
    return 10 * math.log10(1.0 / F.mse_loss(a, b).item())


def main():
    torch.manual_seed(0)
    x = torch.arange(16.0).view(1, 4, 2, 2)
    print(F.pixel_shuffle(x, 2))
    print("unshuffle inverts shuffle:", torch.equal(F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2), x))
    print(F.interpolate(torch.arange(16.0).view(1, 1, 4, 4), scale_factor=0.5, mode="area"))

    high = torch.tensor(load_digits().images / 16.0, dtype=torch.float32).unsqueeze(1)
    low = F.interpolate(high, size=(4, 4), mode="area")
    print("high:", high.shape, "low:", low.shape)
    train, test = slice(0, 1400), slice(1400, None)
    baseline = psnr(F.interpolate(low[test], scale_factor=2, mode="bilinear", align_corners=False), high[test])

    model = SubPixelNet()
    print(model.shuffle)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(15):
        for idx in torch.randperm(1400).split(100):
            optimizer.zero_grad()
            F.mse_loss(model(low[train][idx]), high[train][idx]).backward()
            optimizer.step()
    with torch.no_grad():
        score = psnr(model(low[test]).clamp(0, 1), high[test])
    print("bilinear baseline PSNR between 10 and 25 dB:", 10 < baseline < 25)
    print("network beats bilinear by 1.5 dB:", score > baseline + 1.5)


if __name__ == "__main__":
    main()
