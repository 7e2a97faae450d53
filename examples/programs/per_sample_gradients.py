"""Per-sample gradients with torch.func: functional_call over a model's parameters, grad of a
single-example loss, and vmap across the batch; checked against a loop of ordinary backward calls,
then used to clip each example's gradient (the core of DP-SGD)."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    params = {name: p.detach() for name, p in model.named_parameters()}
    x = torch.randn(16, 5)
    y = torch.randint(0, 3, (16,))

    def loss_one(params, sample, target):
        logits = functional_call(model, params, (sample.unsqueeze(0),))
        return F.cross_entropy(logits, target.unsqueeze(0))

    per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, x, y)
    print({name: tuple(g.shape) for name, g in per_sample.items()})

    matches = True
    for i in range(16):
        model.zero_grad()
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for name, p in model.named_parameters():
            matches &= torch.allclose(per_sample[name][i], p.grad, atol=1e-6)
    print("vmap(grad) matches a loop of backward calls:", matches)

    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    mean_of_per_sample = per_sample["0.weight"].mean(0)
    print("their mean is the batch gradient:", torch.allclose(mean_of_per_sample, model[0].weight.grad, atol=1e-6))

    # DP-SGD step: clip every example's gradient to norm 1, average, add noise
    flat = torch.cat([g.reshape(16, -1) for g in per_sample.values()], dim=1)
    norms = flat.norm(dim=1)
    factors = (1.0 / (norms + 1e-6)).clamp(max=1.0)
    clipped = {name: g * factors.view(-1, *[1] * (g.dim() - 1)) for name, g in per_sample.items()}
    clipped_norms = torch.cat([g.reshape(16, -1) for g in clipped.values()], dim=1).norm(dim=1)
    print("every clipped norm at most 1:", bool((clipped_norms <= 1 + 1e-5).all()))
    noisy = {name: g.mean(0) + 0.01 * torch.randn_like(g[0]) for name, g in clipped.items()}
    with torch.no_grad():
        for name, p in model.named_parameters():
            p -= 0.1 * noisy[name]
    print("step applied:", all(torch.isfinite(p).all() for p in model.parameters()))

    # a whole-batch jacobian of the outputs with respect to the input, per example
    jac = vmap(torch.func.jacrev(lambda s: model(s.unsqueeze(0)).squeeze(0)))(x)
    print("input jacobians:", jac.shape)


if __name__ == "__main__":
    main()
