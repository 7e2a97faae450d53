# corpus: slow
"""A small GAN that learns a ring of eight Gaussians in 2-D: a generator and a discriminator trained
against each other with BCEWithLogitsLoss and two Adam optimizers."""
import math

import torch
from torch import nn


def real_batch(n):
    angles = torch.randint(0, 8, (n,)).float() * (2 * math.pi / 8)
    centers = torch.stack([torch.cos(angles), torch.sin(angles)], dim=1) * 2.0
    return centers + 0.05 * torch.randn(n, 2)


def main():
    torch.manual_seed(0)
    latent = 4
    generator = nn.Sequential(nn.Linear(latent, 64), nn.LeakyReLU(0.2), nn.Linear(64, 64), nn.LeakyReLU(0.2),
                              nn.Linear(64, 2))
    discriminator = nn.Sequential(nn.Linear(2, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
    opt_g = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(128, 1), torch.zeros(128, 1)

    with torch.no_grad():
        start_radius = generator(torch.randn(1000, latent)).norm(dim=1).mean().item()
    for step in range(350):
        real = real_batch(128)
        fake = generator(torch.randn(128, latent))
        opt_d.zero_grad()
        d_loss = bce(discriminator(real), ones) + bce(discriminator(fake.detach()), zeros)
        d_loss.backward()
        opt_d.step()

        opt_g.zero_grad()
        g_loss = bce(discriminator(fake), ones)
        g_loss.backward()
        opt_g.step()

    with torch.no_grad():
        samples = generator(torch.randn(2000, latent))
    radius = samples.norm(dim=1)
    print("samples:", samples.shape, samples.dtype)
    print("generator started near the origin:", start_radius < 1.0)
    print("samples moved out to the ring (mean radius in 1.3..2.7):", 1.3 < radius.mean().item() < 2.7)
    print("discriminator loss is finite:", torch.isfinite(d_loss).item())
    with torch.no_grad():
        d_real = torch.sigmoid(discriminator(real_batch(1000))).mean().item()
    print("discriminator is not certain (0.15..0.85):", 0.15 < d_real < 0.85)


if __name__ == "__main__":
    main()
