# corpus: slow
"""Segmenting synthetic images with a small U-Net: an encoder of strided convolutions, a decoder that
upsamples with F.interpolate and concatenates skip connections, and a loss of binary cross-entropy
plus soft Dice; scored by intersection over union."""
import torch
import torch.nn.functional as F
from torch import nn


def make_images(n, size=16):
    """Noisy images holding one bright disc each; the mask is the disc."""
    coords = torch.arange(size).float()
    cy, cx = torch.randint(4, size - 4, (2, n, 1, 1)).float()
    radius = torch.randint(2, 5, (n, 1, 1)).float()
    mask = ((coords.view(1, -1, 1) - cy) ** 2 + (coords.view(1, 1, -1) - cx) ** 2 <= radius ** 2).float()
    images = mask * 0.8 + 0.3 * torch.randn(n, size, size)
    return images.unsqueeze(1), mask.unsqueeze(1)


def conv_block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.enc1 = conv_block(1, width)
        self.enc2 = nn.Sequential(nn.MaxPool2d(2), conv_block(width, 2 * width))
        self.bottom = nn.Sequential(nn.MaxPool2d(2), conv_block(2 * width, 4 * width))
        self.dec2 = conv_block(4 * width + 2 * width, 2 * width)
        self.dec1 = conv_block(2 * width + width, width)
        self.out = nn.Conv2d(width, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        b = self.bottom(e2)
        d2 = self.dec2(torch.cat([F.interpolate(b, size=e2.shape[-2:], mode="bilinear", align_corners=False), e2], 1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, scale_factor=2, mode="nearest"), e1], 1))
        return self.out(d1)


def dice_loss(logits, target, eps=1.0):
    probs = torch.sigmoid(logits)
    overlap = (probs * target).sum(dim=(1, 2, 3))
    total = probs.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * overlap + eps) / (total + eps)).mean()


def main():
    torch.manual_seed(0)
    x = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    print(F.interpolate(x, scale_factor=2, mode="nearest"))
    print(F.interpolate(x, size=(3, 3), mode="bilinear", align_corners=True))
    print(nn.Upsample(scale_factor=2, mode="bilinear")(x).shape)

    model = UNet()
    images, masks = make_images(4)
    print("logits:", model(images).shape)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(60):
        images, masks = make_images(16)
        logits = model(images)
        loss = F.binary_cross_entropy_with_logits(logits, masks) + dice_loss(logits, masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    model.eval()
    with torch.no_grad():
        images, masks = make_images(64)
        predicted = (model(images) > 0).float()
    intersection = (predicted * masks).sum()
    union = ((predicted + masks) > 0).float().sum()
    print("intersection over union above 0.7:", (intersection / union).item() > 0.7)


if __name__ == "__main__":
    main()
