# corpus: slow
"""A RealNVP normalizing flow on scikit-learn's two moons: affine coupling layers with alternating
masks, the log-determinant of the Jacobian, exact log-likelihood training, and sampling by inverting
the flow. The base density is a standard normal written out by hand."""
import math

import torch
from torch import nn
from sklearn.datasets import make_moons


class Coupling(nn.Module):
    def __init__(self, mask, hidden=64):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 4))

    def _scale_shift(self, x_fixed):
        s, t = self.net(x_fixed).chunk(2, dim=1)
        return torch.tanh(s) * (1 - self.mask), t * (1 - self.mask)

    def forward(self, x):  # data -> latent
        s, t = self._scale_shift(x * self.mask)
        return x * torch.exp(s) + t, s.sum(1)

    def inverse(self, z):
        s, t = self._scale_shift(z * self.mask)
        return (z - t) * torch.exp(-s)


class Flow(nn.Module):
    def __init__(self, layers=6):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0]) for i in range(layers)]
        self.layers = nn.ModuleList(Coupling(m) for m in masks)

    def log_prob(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        base = -0.5 * (x ** 2).sum(1) - math.log(2 * math.pi)
        return base + log_det

    def sample(self, n):
        z = torch.randn(n, 2)
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z


def main():
    torch.manual_seed(0)
    points, _ = make_moons(2000, noise=0.05, random_state=0)
    data = torch.tensor(points, dtype=torch.float32)
    data = (data - data.mean(0)) / data.std(0)

    flow = Flow()
    x = data[:5]
    z = x
    for layer in flow.layers:
        z, _ = layer(z)
    for layer in reversed(flow.layers):
        z = layer.inverse(z)
    print("inverse undoes forward:", torch.allclose(z, x, atol=1e-5))

    # the log-determinant equals the log of the Jacobian's determinant, checked with autograd
    single = data[:1].clone()
    jac = torch.autograd.functional.jacobian(lambda v: flow.layers[0](v)[0], single).view(2, 2)
    print("log-det matches autograd:", torch.allclose(flow.layers[0](single)[1], torch.logdet(jac), atol=1e-5))

    optimizer = torch.optim.Adam(flow.parameters(), lr=3e-3)
    first = -flow.log_prob(data).mean().item()
    for step in range(170):
        batch = data[torch.randint(0, len(data), (256,))]
        optimizer.zero_grad()
        loss = -flow.log_prob(batch).mean()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        last = -flow.log_prob(data).mean().item()
        samples = flow.sample(2000)
    print("negative log-likelihood fell by 0.8 nats:", last < first - 0.8)
    print("samples:", samples.shape)
    # samples land near the data: their mean distance to the nearest data point is small
    nearest = torch.cdist(samples, data).min(1).values.mean().item()
    print("samples lie on the moons (mean distance below 0.2):", nearest < 0.2)


if __name__ == "__main__":
    main()
