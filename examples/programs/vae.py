"""A variational autoencoder on scikit-learn's 8x8 digits: the encoder gives a Normal posterior, a
reparameterised sample (rsample) feeds the decoder, and the KL term is kl_divergence to the Normal prior."""
import torch
import torch.distributions as D
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class VAE(nn.Module):
    def __init__(self, pixels=64, hidden=128, latent=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(pixels, hidden), nn.ReLU(), nn.Linear(hidden, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, pixels))
        self.latent = latent

    def posterior(self, x):
        loc, log_scale = self.encoder(x).chunk(2, dim=-1)
        return D.Normal(loc, log_scale.exp())

    def prior(self, batch):
        return D.Normal(torch.zeros(batch, self.latent), torch.ones(batch, self.latent))

    def forward(self, x):
        q = self.posterior(x)
        z = q.rsample()
        logits = self.decoder(z)
        reconstruction = F.binary_cross_entropy_with_logits(logits, x, reduction="none").sum(-1)
        kl = D.kl_divergence(q, self.prior(x.shape[0])).sum(-1)
        return (reconstruction + kl).mean(), reconstruction.mean(), kl.mean()


def main():
    torch.manual_seed(0)
    images = torch.tensor(load_digits().data, dtype=torch.float32) / 16.0
    loader = DataLoader(TensorDataset(images), batch_size=32, shuffle=True)

    # the pieces, on explicit inputs
    q = D.Normal(torch.tensor([0.5, -1.0]), torch.tensor([0.8, 1.5]))
    p = D.Normal(torch.zeros(2), torch.ones(2))
    print("KL(q || p):", D.kl_divergence(q, p))
    print("log_prob:", q.log_prob(torch.tensor([0.0, 0.0])))
    print("rsample is differentiable:", D.Normal(torch.zeros(3, requires_grad=True), 1.0).rsample().requires_grad)

    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    with torch.no_grad():
        first, _, _ = model(images)
    for epoch in range(6):
        for (batch,) in loader:
            loss, _, _ = model(batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        last, reconstruction, kl = model(images)
        mean_image = images.mean(0, keepdim=True).clamp(1e-3, 1 - 1e-3).expand_as(images)
        baseline = F.binary_cross_entropy(mean_image, images, reduction="none").sum(-1).mean()
        samples = torch.sigmoid(model.decoder(model.prior(16).sample()))

    print("negative ELBO fell below 0.7 of its start:", last.item() < 0.7 * first.item())
    print("reconstructs better than the mean image (by 8%):", reconstruction.item() < 0.92 * baseline.item())
    print("KL term is in use and bounded (0.3..30):", 0.3 < kl.item() < 30.0)
    print("samples from the prior:", samples.shape, samples.dtype)
    print("pixels are probabilities:", bool(((samples >= 0) & (samples <= 1)).all()))


if __name__ == "__main__":
    main()
