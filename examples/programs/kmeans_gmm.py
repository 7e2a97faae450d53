"""Clustering in plain tensor operations: k-means++ seeding with torch.multinomial, Lloyd iterations
with torch.cdist, scatter_add_ and bincount, then a Gaussian mixture fitted by EM in log space
(logsumexp responsibilities, weighted means and diagonal variances), compared on held-out
log-likelihood with torch.distributions."""
import math

import torch
import torch.distributions as D

CENTRES = torch.tensor([[0.0, 0.0], [4.0, 0.5], [1.0, 4.0]])
SPREADS = torch.tensor([[0.5, 0.5], [1.0, 0.3], [0.4, 0.8]])


def make_blobs(n_per, generator):
    points = [c + s * torch.randn(n_per, 2, generator=generator, dtype=torch.float64)
              for c, s in zip(CENTRES.double(), SPREADS.double())]
    labels = torch.arange(3).repeat_interleave(n_per)
    return torch.cat(points), labels


def kmeans_plus_plus(x, k, generator):
    """Each new centre is a point drawn with probability proportional to its squared distance to the nearest one."""
    centres = [x[torch.randint(0, len(x), (1,), generator=generator)]]
    for _ in range(k - 1):
        nearest = torch.cdist(x, torch.cat(centres)).min(dim=1).values
        centres.append(x[torch.multinomial(nearest ** 2, 1, generator=generator)])
    return torch.cat(centres)


def lloyd(x, centres, steps=20):
    k = len(centres)
    for step in range(steps):
        assignment = torch.cdist(x, centres).argmin(dim=1)
        sums = torch.zeros_like(centres).scatter_add_(0, assignment.unsqueeze(1).expand(-1, x.size(1)), x)
        counts = torch.bincount(assignment, minlength=k)
        moved = sums / counts.clamp(min=1).unsqueeze(1).to(x.dtype)
        if torch.allclose(moved, centres):
            return moved, assignment, step
        centres = moved
    return centres, assignment, steps


def gaussian_log_density(x, means, variances):
    """log N(x | mean_k, diag(var_k)) for every point and component: shape (n, k)."""
    diff = x.unsqueeze(1) - means.unsqueeze(0)
    return -0.5 * ((diff ** 2 / variances).sum(-1) + variances.log().sum(-1) + x.size(1) * math.log(2 * math.pi))


def em(x, means, steps=30):
    k = len(means)
    variances = x.var(dim=0, keepdim=True).repeat(k, 1)
    log_weights = torch.full((k,), -math.log(k), dtype=x.dtype)
    history = []
    for _ in range(steps):
        joint = gaussian_log_density(x, means, variances) + log_weights
        total = torch.logsumexp(joint, dim=1, keepdim=True)
        history.append(total.mean().item())
        resp = (joint - total).exp()  # E step: responsibilities
        mass = resp.sum(0)  # M step
        means = resp.T @ x / mass.unsqueeze(1)
        variances = (resp.T @ x ** 2) / mass.unsqueeze(1) - means ** 2 + 1e-6
        log_weights = (mass / len(x)).log()
    return means, variances, log_weights, history


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(11)
    x, labels = make_blobs(100, generator)
    held_out, _ = make_blobs(50, generator)
    print("data:", x.shape, x.dtype, "labels:", torch.bincount(labels).tolist())

    seeds = kmeans_plus_plus(x, 3, generator)
    print("k-means++ seeds:", seeds.round(decimals=3))
    centres, assignment, steps = lloyd(x, seeds)
    order = centres[:, 0].argsort()  # print the clusters from left to right, whatever the seeds' order
    print("k-means converged after", steps, "steps")
    print("centres:", centres[order].round(decimals=3))
    print("cluster sizes:", torch.bincount(assignment, minlength=3)[order].tolist())
    inertia = torch.cdist(x, centres).min(dim=1).values.pow(2).sum()
    print(f"inertia: {inertia.item():.4f}")

    means, variances, log_weights, history = em(x, centres)
    print("log-likelihood rose every step:", all(b >= a - 1e-9 for a, b in zip(history, history[1:])))
    print(f"log-likelihood per point: {history[0]:.4f} -> {history[-1]:.4f}")
    order = means[:, 0].argsort()
    print("weights:", log_weights.exp()[order].round(decimals=3))
    print("standard deviations:", variances[order].sqrt().round(decimals=2))

    # the same mixture as a torch.distributions object gives the same log-likelihood
    mixture = D.MixtureSameFamily(D.Categorical(logits=log_weights),
                                  D.Independent(D.Normal(means, variances.sqrt()), 1))
    by_hand = torch.logsumexp(gaussian_log_density(held_out, means, variances) + log_weights, dim=1).mean()
    print(f"held-out log-likelihood: {mixture.log_prob(held_out).mean().item():.4f}",
          torch.allclose(mixture.log_prob(held_out).mean(), by_hand))
    single = D.MultivariateNormal(x.mean(0), torch.cov(x.T))
    print(f"one full-covariance Gaussian: {single.log_prob(held_out).mean().item():.4f}")

    # hard assignments against the truth: each component stands for the true blob nearest its mean
    hard = gaussian_log_density(x, means, variances).add(log_weights).argmax(1)
    blob_of_component = torch.cdist(means, CENTRES.double()).argmin(1)
    print("components match blobs one to one:", sorted(blob_of_component.tolist()) == [0, 1, 2])
    print("agreement with the true blobs:", (blob_of_component[hard] == labels).double().mean().item())


if __name__ == "__main__":
    main()
