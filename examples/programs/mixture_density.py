"""A mixture density network for the inverse of a sine wave, where one x has several y: the network
outputs mixture logits, means and log-scales, torch.distributions builds MixtureSameFamily(Categorical,
Normal), and training maximises log_prob; sampling, the mixture's mean and variance, and a
reparameterised (rsample) loss through the component Normals."""
import math

import torch
import torch.distributions as D
from torch import nn


class MDN(nn.Module):
    def __init__(self, components=4, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.logits = nn.Linear(hidden, components)
        self.loc = nn.Linear(hidden, components)
        self.log_scale = nn.Linear(hidden, components)

    def forward(self, x):
        h = self.body(x)
        mixing = D.Categorical(logits=self.logits(h))
        scale = self.log_scale(h).clamp(-5.0, 2.0).exp()
        return D.MixtureSameFamily(mixing, D.Normal(self.loc(h), scale))


def make_data(n, generator):
    """y runs along the curve x = y + 0.3 sin(2 pi y), sampled in y, so x -> y is many-valued."""
    y = torch.rand(n, 1, generator=generator, dtype=torch.float64)
    x = y + 0.3 * torch.sin(2 * math.pi * y) + 0.05 * torch.randn(n, 1, generator=generator, dtype=torch.float64)
    return x, y


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(3)
    x, y = make_data(1000, generator)

    # the distributions on their own
    mix = D.MixtureSameFamily(D.Categorical(probs=torch.tensor([0.3, 0.7])),
                              D.Normal(torch.tensor([-1.0, 2.0]), torch.tensor([0.5, 1.0])))
    print("mixture:", mix.batch_shape, mix.event_shape)
    print("log_prob:", mix.log_prob(torch.tensor([0.0, 2.0])))
    print("mean and variance:", mix.mean, mix.variance)
    print("cdf at 0:", mix.cdf(torch.tensor(0.0)))
    print("support:", mix.support)

    model = MDN().double()  # a likelihood with narrow components: double keeps the fit reproducible
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(300):
        index = torch.randint(0, len(x), (128,), generator=generator)
        distribution = model(x[index])
        loss = -distribution.log_prob(y[index].squeeze(-1)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 99:
            print(f"step {step + 1}: negative log-likelihood {loss.item():.4f}")

    with torch.no_grad():
        distribution = model(x)
        nll = -distribution.log_prob(y.squeeze(-1)).mean()
        unimodal = D.Normal(y.mean(), y.std())
        print(f"full-data NLL {nll.item():.4f} vs one Normal {-unimodal.log_prob(y).mean().item():.4f}")
        at_half = model(torch.tensor([[0.5]], dtype=torch.float64))
        weights = at_half.mixture_distribution.probs
        print("several components in use at x=0.5:", int((weights > 0.1).sum()) >= 2)
        print("mixture shapes:", at_half.batch_shape, at_half.component_distribution.batch_shape)
        samples = at_half.sample((2000,))
        print("samples:", samples.shape, samples.dtype)
        print("sample mean agrees with the mixture mean:", abs(samples.mean().item() - at_half.mean.item()) < 0.05)

    # a reparameterised objective: the components' rsample is differentiable, the mixture's choice is not
    components = model(x[:8]).component_distribution
    draws = components.rsample((16,))
    print("rsample:", draws.shape, draws.requires_grad, type(draws.grad_fn).__name__)
    print("MixtureSameFamily has rsample:", D.MixtureSameFamily.has_rsample)
    (draws - y[:8]).pow(2).mean().backward()
    print("gradient reaches the loc head:", model.loc.weight.grad.abs().sum().item() > 0)

    try:
        D.Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
    except ValueError as error:
        print("invalid scale:", type(error).__name__, "scale" in str(error))


if __name__ == "__main__":
    main()
