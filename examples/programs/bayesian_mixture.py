"""Fitting distributions by gradient: a Beta-Binomial click-rate model, a Dirichlet posterior over
topic shares, a log-normal built as a TransformedDistribution, a Gaussian mixture as MixtureSameFamily
over Independent Normals fit by maximum likelihood, OneHotCategorical and RelaxedOneHotCategorical
samples, and KL divergences, entropies, means and variances on explicit parameters."""
import torch
import torch.distributions as D
from torch.distributions import constraints, transforms


def show(name, value):
    if isinstance(value, torch.Tensor):
        value = [round(v, 4) for v in value.flatten().tolist()]
    print(f"{name}: {value}")


def explicit_values():
    beta = D.Beta(torch.tensor([2.0, 0.5]), torch.tensor([3.0, 0.5]))
    show("beta mean", beta.mean)
    show("beta variance", beta.variance)
    show("beta entropy", beta.entropy())
    show("beta log_prob", beta.log_prob(torch.tensor([0.3, 0.9])))
    show("kl beta", D.kl_divergence(beta, D.Beta(torch.ones(2), torch.ones(2))))
    print("beta:", beta, beta.batch_shape, beta.event_shape)

    dirichlet = D.Dirichlet(torch.tensor([1.0, 2.0, 3.0]))
    show("dirichlet mean", dirichlet.mean)
    show("dirichlet log_prob", dirichlet.log_prob(torch.tensor([0.2, 0.3, 0.5])))
    show("dirichlet entropy", dirichlet.entropy())
    show("kl dirichlet", D.kl_divergence(dirichlet, D.Dirichlet(torch.ones(3))))
    print("dirichlet shapes:", dirichlet.batch_shape, dirichlet.event_shape, dirichlet.sample((4,)).shape)

    log_normal = D.TransformedDistribution(D.Normal(torch.tensor(0.0), torch.tensor(0.5)),
                                           [transforms.AffineTransform(1.0, 2.0), transforms.ExpTransform()])
    show("transformed log_prob", log_normal.log_prob(torch.tensor([1.0, 5.0, 20.0])))
    print("transformed support:", log_normal.support, log_normal.event_shape)
    builtin = D.LogNormal(torch.tensor(1.0), torch.tensor(1.0))
    show("lognormal log_prob", builtin.log_prob(torch.tensor([1.0, 5.0, 20.0])))
    show("lognormal mean", builtin.mean)
    sigmoid = transforms.SigmoidTransform()
    show("sigmoid transform", sigmoid(torch.tensor([0.0, 2.0])))
    show("sigmoid inverse", sigmoid.inv(torch.tensor([0.5, 0.9])))
    show("log|det J|", sigmoid.log_abs_det_jacobian(torch.tensor([0.0, 2.0]), sigmoid(torch.tensor([0.0, 2.0]))))
    print("constraints:", constraints.unit_interval.check(torch.tensor([0.0, 0.5, 1.5])),
          constraints.simplex.check(torch.tensor([0.2, 0.8])), constraints.positive)
    to_simplex = transforms.StickBreakingTransform()
    simplex = to_simplex(torch.tensor([0.0, 1.0]))
    show("stick breaking", simplex)
    show("stick breaking back", to_simplex.inv(simplex))
    biject = D.transform_to(constraints.positive)
    print("transform_to(positive):", type(biject).__name__, biject(torch.tensor([0.0])))

    one_hot = D.OneHotCategorical(probs=torch.tensor([0.2, 0.3, 0.5]))
    show("one-hot log_prob", one_hot.log_prob(torch.tensor([0.0, 0.0, 1.0])))
    show("one-hot entropy", one_hot.entropy())
    print("enumerate_support:", one_hot.enumerate_support())
    categorical = D.Categorical(logits=torch.tensor([[0.0, 1.0], [2.0, 2.0]]))
    show("categorical probs", categorical.probs)
    print("categorical:", categorical, categorical.param_shape)


def fit_click_rates(generator):
    trials = torch.full((6,), 50.0)
    true_rates = torch.tensor([0.05, 0.1, 0.2, 0.3, 0.5, 0.6])
    clicks = D.Binomial(trials, true_rates).sample()
    log_a = torch.zeros((), requires_grad=True)
    log_b = torch.zeros((), requires_grad=True)
    optimizer = torch.optim.Adam([log_a, log_b], lr=0.05)
    for step in range(200):
        prior = D.Beta(log_a.exp(), log_b.exp())
        rates = prior.rsample((64, 6))
        likelihood = D.Binomial(trials, probs=rates.clamp(1e-4, 1 - 1e-4)).log_prob(clicks)
        loss = -torch.logsumexp(likelihood.sum(-1), dim=0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    mean = (log_a.exp() / (log_a.exp() + log_b.exp())).item()
    print("beta prior mean near the mean click rate (within 0.15):", abs(mean - 0.29) < 0.15)
    print("binomial support:", D.Binomial(torch.tensor(5.0), torch.tensor(0.3)).support)


def fit_mixture():
    torch.manual_seed(1)
    centres = torch.tensor([[-2.0, 0.0], [2.0, 1.0], [0.0, -2.5]])
    which = torch.randint(0, 3, (600,))
    data = centres[which] + 0.4 * torch.randn(600, 2)
    logits = torch.zeros(3, requires_grad=True)
    locs = torch.randn(3, 2).mul(0.5).requires_grad_()
    log_scales = torch.zeros(3, 2, requires_grad=True)
    optimizer = torch.optim.Adam([logits, locs, log_scales], lr=0.05)
    first = None
    for step in range(250):
        mixture = D.MixtureSameFamily(D.Categorical(logits=logits),
                                      D.Independent(D.Normal(locs, log_scales.exp()), 1))
        loss = -mixture.log_prob(data).mean()
        first = loss.item() if first is None else first
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("mixture batch/event:", mixture.batch_shape, mixture.event_shape, mixture.sample((5,)).shape)
    print("nll fell by over 0.5:", first - loss.item() > 0.5)
    weights = torch.softmax(logits.detach(), 0)
    print("weights sum to one:", round(weights.sum().item(), 5), "each above 0.15:", bool((weights > 0.15).all()))
    found = torch.cdist(centres, locs.detach()).min(dim=1).values
    print("every centre found within 0.5:", bool((found < 0.5).all()))
    explicit = D.MixtureSameFamily(D.Categorical(probs=torch.tensor([0.3, 0.7])),
                                   D.Normal(torch.tensor([-1.0, 1.0]), torch.tensor([0.5, 2.0])))
    show("mixture log_prob", explicit.log_prob(torch.tensor([0.0, 1.0, -1.0])))
    show("mixture mean/variance", torch.stack([explicit.mean, explicit.variance]))
    show("mixture cdf", explicit.cdf(torch.tensor([0.0])))


def relaxed_samples():
    torch.manual_seed(2)
    relaxed = D.RelaxedOneHotCategorical(torch.tensor(0.5), logits=torch.tensor([0.0, 1.0, 2.0]))
    sample = relaxed.rsample((1000,))
    print("relaxed samples on the simplex:", sample.shape, bool(torch.allclose(sample.sum(-1), torch.ones(1000))))
    counts = torch.bincount(sample.argmax(-1), minlength=3)
    print("argmax frequencies follow the logits:", bool(counts[2] > counts[1] > counts[0]))
    hard = D.OneHotCategorical(logits=torch.tensor([0.0, 1.0, 2.0])).sample((7,))
    print("one-hot sample:", hard.shape, hard.dtype, hard.sum(-1).tolist())


def main():
    torch.manual_seed(0)
    explicit_values()
    fit_click_rates(None)
    fit_mixture()
    relaxed_samples()


if __name__ == "__main__":
    main()
