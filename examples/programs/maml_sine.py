# corpus: slow
"""Model-agnostic meta-learning on sine waves: an inner SGD step taken with create_graph=True,
a functional forward through torch.func.functional_call, and an outer Adam step through the inner
update (second-order gradients)."""
import math

import torch
from torch import nn
from torch.func import functional_call


def sample_task():
    amplitude = torch.empty(1).uniform_(0.5, 2.0)
    phase = torch.empty(1).uniform_(0, math.pi)
    return lambda x: amplitude * torch.sin(x + phase)


def adapt(model, params, x, y, lr=0.05, steps=1):
    for _ in range(steps):
        loss = nn.functional.mse_loss(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        params = {name: p - lr * g for (name, p), g in zip(params.items(), grads)}
    return params


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    meta_opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    # second-order terms are present: the meta-gradient differs from its first-order approximation
    task = sample_task()
    xs = torch.linspace(-5, 5, 10).unsqueeze(1)
    params = dict(model.named_parameters())
    adapted = adapt(model, params, xs, task(xs))
    outer = nn.functional.mse_loss(functional_call(model, adapted, (xs,)), task(xs))
    full = torch.autograd.grad(outer, list(params.values()), retain_graph=True)
    first_order = torch.autograd.grad(outer, list(adapted.values()))
    print("second-order terms present:", not all(torch.allclose(a, b) for a, b in zip(full, first_order)))

    def post_adaptation_loss(tasks=50):
        losses = []
        for _ in range(tasks):
            task = sample_task()
            x_support = torch.rand(10, 1) * 10 - 5
            x_query = torch.rand(20, 1) * 10 - 5
            adapted = adapt(model, dict(model.named_parameters()), x_support, task(x_support), steps=3)
            with torch.no_grad():
                losses.append(nn.functional.mse_loss(functional_call(model, adapted, (x_query,)), task(x_query)).item())
        return sum(losses) / len(losses)

    torch.manual_seed(1)
    before = post_adaptation_loss()
    for step in range(150):
        meta_opt.zero_grad()
        meta_loss = 0.0
        for _ in range(4):
            task = sample_task()
            x_support, x_query = torch.rand(10, 1) * 10 - 5, torch.rand(10, 1) * 10 - 5
            adapted = adapt(model, dict(model.named_parameters()), x_support, task(x_support))
            meta_loss = meta_loss + nn.functional.mse_loss(functional_call(model, adapted, (x_query,)), task(x_query))
        (meta_loss / 4).backward()
        meta_opt.step()
    torch.manual_seed(1)
    after = post_adaptation_loss()
    print("meta-training cut the adapted loss by a third:", after < 2 * before / 3)


if __name__ == "__main__":
    main()
