"""A deep ensemble trained all at once with torch.func: stack_module_state gathers five MLPs' weights,
vmap(grad(...)) over functional_call gives every member's gradient in one call, a hand-written SGD
with momentum updates the stacked weights, and the members' spread is the uncertainty, larger away
from the training data; each member on its own still matches the vmapped result."""
import copy

import torch
from torch import nn
from torch.func import functional_call, grad_and_value, stack_module_state, vmap


def make_member():
    return nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(12)
    x = torch.cat([torch.rand(60, 1, generator=generator) * 2 - 3, torch.rand(60, 1, generator=generator) * 2 + 1])
    y = torch.sin(2 * x) + 0.1 * torch.randn(x.shape, generator=generator)

    members = [make_member() for _ in range(5)]
    params, buffers = stack_module_state(members)
    print("stacked:", {name: tuple(p.shape) for name, p in list(params.items())[:2]})
    print("stacked leaves require grad:", all(p.requires_grad for p in params.values()))
    base = copy.deepcopy(members[0])

    def loss_of(member_params, member_buffers, xb, yb):
        prediction = functional_call(base, (member_params, member_buffers), (xb,))
        return nn.functional.mse_loss(prediction, yb)

    # every member sees its own bootstrap resample of the data
    resamples = torch.randint(0, len(x), (5, len(x)), generator=generator)
    xs, ys = x[resamples], y[resamples]
    grads_and_losses = vmap(grad_and_value(loss_of), in_dims=(0, 0, 0, 0))
    params = {name: p.detach() for name, p in params.items()}
    velocity = {name: torch.zeros_like(p) for name, p in params.items()}
    for step in range(300):
        grads, losses = grads_and_losses(params, buffers, xs, ys)
        for name in params:
            velocity[name].mul_(0.9).add_(grads[name])
            params[name] -= 0.02 * velocity[name]
        if step % 100 == 99:
            print(f"step {step + 1}: member losses {[round(v, 4) for v in losses.tolist()]}")

    query = torch.tensor([[-2.0], [0.0], [2.0], [4.5]])
    with torch.no_grad():
        predictions = vmap(lambda p, b: functional_call(base, (p, b), (query,)))(params, buffers)
    print("predictions:", predictions.shape)
    mean, spread = predictions.mean(0).squeeze(-1), predictions.std(0).squeeze(-1)
    print("ensemble mean:", mean.round(decimals=3))
    print("truth:        ", torch.sin(2 * query).squeeze(-1).round(decimals=3))
    print("spread:", spread.round(decimals=3))
    print("more uncertain in the gap and beyond the data:", spread[1].item() > spread[0].item(),
          spread[3].item() > spread[2].item())

    # member 3 alone, with its slice of the stacked weights, gives the same predictions
    lone = copy.deepcopy(base)
    lone.load_state_dict({name: p[3] for name, p in params.items()})
    with torch.no_grad():
        print("member 3 alone matches:", torch.allclose(lone(query), predictions[3], atol=1e-6))


if __name__ == "__main__":
    main()
