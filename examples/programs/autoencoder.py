# corpus: slow
"""A convolutional autoencoder on the digits: a bottleneck of eight numbers, ConvTranspose2d to
decode, reconstruction error compared with a PCA of the same size, and the codes used for retrieval."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from sklearn.datasets import load_digits


class AutoEncoder(nn.Module):
    def __init__(self, code=8):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),      # 8x8 -> 4x4
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),     # 4x4 -> 2x2
            nn.Flatten(), nn.Linear(32 * 2 * 2, code))
        self.decoder = nn.Sequential(
            nn.Linear(code, 32 * 2 * 2), nn.ReLU(), nn.Unflatten(1, (32, 2, 2)),
            nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),   # 2x2 -> 4x4
            nn.ConvTranspose2d(16, 1, 4, stride=2, padding=1), nn.Sigmoid())  # 4x4 -> 8x8

    def forward(self, x):
        return self.decoder(self.encoder(x))


def main():
    torch.manual_seed(0)
    digits = load_digits()
    images = torch.tensor(digits.data / 16.0, dtype=torch.float32).view(-1, 1, 8, 8)
    labels = torch.tensor(digits.target)
    model = AutoEncoder()
    print("code:", model.encoder(images[:2]).shape, "reconstruction:", model(images[:2]).shape)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(14):
        for batch in images[torch.randperm(len(images))].split(128):
            optimizer.zero_grad()
            loss = F.mse_loss(model(batch), batch)
            loss.backward()
            optimizer.step()

    model.eval()
    with torch.no_grad():
        error = F.mse_loss(model(images), images).item()
        codes = model.encoder(images)
    flat = images.view(len(images), -1)
    centred = flat - flat.mean(0)
    _, _, v = torch.linalg.svd(centred, full_matrices=False)
    pca = centred @ v[:8].t() @ v[:8] + flat.mean(0)
    pca_error = F.mse_loss(pca, flat).item()
    print("reconstruction error below 0.05:", error < 0.05)
    print("within 1.6x of an 8-component PCA:", error < 1.6 * pca_error)

    distances = torch.cdist(codes, codes)
    distances.fill_diagonal_(float("inf"))
    nearest = distances.argmin(1)
    agreement = (labels[nearest] == labels).float().mean().item()
    print("nearest neighbour in code space has the same digit (over 0.8):", agreement > 0.8)


if __name__ == "__main__":
    main()
