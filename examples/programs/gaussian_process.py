"""Gaussian-process regression by hand: an RBF kernel with a learnt length-scale, signal and noise
(positive through softplus), the log marginal likelihood from a Cholesky factor (cholesky_ex,
cholesky_solve, the log-determinant from the diagonal), hyperparameters fitted with L-BFGS, and the
posterior mean, variance and samples; checked against MultivariateNormal.log_prob."""
import math

import torch
import torch.distributions as D
import torch.nn.functional as F
from torch import nn


class GP(nn.Module):
    def __init__(self):
        super().__init__()
        # raw parameters, mapped to positive values by softplus
        self.raw_length = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
        self.raw_signal = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
        self.raw_noise = nn.Parameter(torch.tensor(-2.0, dtype=torch.float64))

    def hyperparameters(self):
        return F.softplus(self.raw_length), F.softplus(self.raw_signal), F.softplus(self.raw_noise) + 1e-6

    def kernel(self, a, b):
        length, signal, _ = self.hyperparameters()
        return signal ** 2 * torch.exp(-0.5 * torch.cdist(a / length, b / length) ** 2)

    def covariance(self, x):
        _, _, noise = self.hyperparameters()
        return self.kernel(x, x) + noise ** 2 * torch.eye(len(x), dtype=x.dtype)

    def log_marginal_likelihood(self, x, y):
        factor, info = torch.linalg.cholesky_ex(self.covariance(x))
        if info.item() != 0:
            raise RuntimeError("the covariance is not positive definite")
        alpha = torch.cholesky_solve(y.unsqueeze(-1), factor).squeeze(-1)
        log_det = 2 * factor.diagonal().log().sum()
        return -0.5 * (y @ alpha) - 0.5 * log_det - 0.5 * len(x) * math.log(2 * math.pi)

    def posterior(self, x, y, query):
        factor = torch.linalg.cholesky(self.covariance(x))
        cross = self.kernel(query, x)
        mean = cross @ torch.cholesky_solve(y.unsqueeze(-1), factor).squeeze(-1)
        v = torch.linalg.solve_triangular(factor, cross.T, upper=False)
        covariance = self.kernel(query, query) - v.T @ v
        return mean, covariance


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(9)
    x = torch.rand(40, 1, generator=generator, dtype=torch.float64) * 6
    y = torch.sin(x).squeeze(-1) + 0.1 * torch.randn(40, generator=generator, dtype=torch.float64)

    gp = GP()
    print("initial log marginal likelihood:", round(gp.log_marginal_likelihood(x, y).item(), 4))
    reference = D.MultivariateNormal(torch.zeros(40, dtype=torch.float64), covariance_matrix=gp.covariance(x))
    print("matches MultivariateNormal.log_prob:", torch.allclose(gp.log_marginal_likelihood(x, y), reference.log_prob(y)))

    optimizer = torch.optim.LBFGS(gp.parameters(), lr=0.5, max_iter=50, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = -gp.log_marginal_likelihood(x, y)
        loss.backward()
        return loss

    for round_ in range(3):
        loss = optimizer.step(closure)
        print(f"L-BFGS round {round_ + 1}: negative log marginal likelihood {loss.item():.4f}")
    length, signal, noise = (round(h.item(), 3) for h in gp.hyperparameters())
    print("length-scale, signal, noise:", length, signal, noise)
    print("noise found near 0.1:", abs(noise - 0.1) < 0.05)
    print("function evaluations:", optimizer.state[optimizer._params[0]]["func_evals"])

    with torch.no_grad():
        query = torch.linspace(0, 6, 7, dtype=torch.float64).unsqueeze(-1)
        mean, covariance = gp.posterior(x, y, query)
        std = covariance.diagonal().clamp(min=0).sqrt()
        print("posterior mean:", mean.round(decimals=3))
        print("posterior std:", std.round(decimals=3))
        print("error against sin below 0.15:", bool(((mean - torch.sin(query).squeeze(-1)).abs() < 0.15).all()))
        far = torch.tensor([[12.0]], dtype=torch.float64)
        far_mean, far_covariance = gp.posterior(x, y, far)
        print("far from the data, the prior: mean near 0", abs(far_mean.item()) < 1e-3,
              "std", round(far_covariance.sqrt().item(), 3))
        jitter = 1e-8 * torch.eye(len(query), dtype=torch.float64)
        samples = D.MultivariateNormal(mean, covariance + jitter).sample((500,))
        print("samples:", samples.shape, "quantiles at x=3:",
              torch.quantile(samples[:, 3], torch.tensor([0.1, 0.9], dtype=torch.float64)).round(decimals=2))

    # the gradient of the likelihood with respect to the raw length-scale, against finite differences
    check = lambda raw: GP.log_marginal_likelihood(_with_length(gp, raw), x, y)
    print("gradcheck of the likelihood:", torch.autograd.gradcheck(check, (gp.raw_length.detach().clone().requires_grad_(),)))


def _with_length(gp, raw):
    """A copy of ``gp`` whose raw length-scale is ``raw`` (a tensor that may require grad)."""
    copy = GP()
    copy.load_state_dict(gp.state_dict())
    del copy.raw_length
    copy.raw_length = raw
    return copy


if __name__ == "__main__":
    main()
