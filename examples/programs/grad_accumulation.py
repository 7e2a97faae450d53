"""Large effective batches on a small budget: accumulate gradients over micro-batches, clip their norm,
and clear them with zero_grad(set_to_none=True)."""
import torch
from torch import nn


def main():
    torch.manual_seed(0)
    x = torch.randn(512, 10)
    true_w = torch.randn(10, 1)
    y = x @ true_w + 0.1 * torch.randn(512, 1)

    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = nn.MSELoss()
    accumulation_steps, micro_batch = 4, 32

    # accumulated micro-batch gradients equal one full-batch gradient
    model.zero_grad(set_to_none=True)
    print("grads after set_to_none:", [p.grad for p in model.parameters()])
    for chunk in range(accumulation_steps):
        part = slice(chunk * micro_batch, (chunk + 1) * micro_batch)
        (loss_fn(model(x[part]), y[part]) / accumulation_steps).backward()
    accumulated = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    loss_fn(model(x[: accumulation_steps * micro_batch]), y[: accumulation_steps * micro_batch]).backward()
    print("accumulated equals full batch:",
          all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(accumulated, model.parameters())))

    first = loss_fn(model(x), y).item()
    norms = []
    for epoch in range(15):
        optimizer.zero_grad(set_to_none=True)
        for step, start in enumerate(range(0, 512, micro_batch)):
            loss = loss_fn(model(x[start:start + micro_batch]), y[start:start + micro_batch])
            (loss / accumulation_steps).backward()
            if (step + 1) % accumulation_steps == 0:
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
                norms.append(norm.item())
                clipped = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
                assert clipped.item() <= 1.0 + 1e-4
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
    last = loss_fn(model(x), y).item()
    print("grad after set_to_none step:", model[0].weight.grad is None)
    print("clip with no gradients:", torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
    print("updates:", len(norms))
    print("loss fell tenfold:", last < first / 10)

    # clip_grad_value_ and a norm of another order
    model(x).pow(2).mean().backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
    print("values clipped:", all(p.grad.abs().max().item() <= 0.01 for p in model.parameters()))
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=100.0, norm_type=float("inf"))
    print("inf-norm within the clip value:", total.item() <= 0.01)


if __name__ == "__main__":
    main()
