"""A learning-rate range test: raise the learning rate exponentially over a few hundred steps, smooth
the loss, stop when it diverges, and pick a rate a little below the steepest fall; then train with
OneCycleLR at that rate."""
import copy
import math

import torch
from torch import nn


def range_test(model, optimizer, loss_fn, x, y, start=1e-5, end=10.0, steps=100):
    state = copy.deepcopy(model.state_dict())
    factor = (end / start) ** (1 / steps)
    for group in optimizer.param_groups:
        group["lr"] = start
    rates, losses, smooth, best = [], [], 0.0, float("inf")
    for step in range(steps):
        idx = torch.randint(0, len(x), (64,))
        optimizer.zero_grad()
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
        smooth = 0.9 * smooth + 0.1 * loss.item()
        corrected = smooth / (1 - 0.9 ** (step + 1))
        rates.append(optimizer.param_groups[0]["lr"])
        losses.append(corrected)
        best = min(best, corrected)
        if corrected > 4 * best or not math.isfinite(corrected):
            break
        for group in optimizer.param_groups:
            group["lr"] *= factor
    model.load_state_dict(state)
    return rates, losses


def main():
    torch.manual_seed(0)
    x = torch.randn(2000, 10)
    y = (x[:, :3].sum(1) > 0).long() + (x[:, 3] > 0).long()
    model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 3))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.9)
    before = copy.deepcopy(model.state_dict())
    rates, losses = range_test(model, optimizer, loss_fn, x, y)
    print("weights restored after the test:", all(torch.equal(before[k], v) for k, v in model.state_dict().items()))
    print("rates increase:", all(a < b for a, b in zip(rates, rates[1:])))
    print("stopped on divergence before 10:", rates[-1] < 10.0)
    slopes = [(losses[i + 5] - losses[i]) for i in range(len(losses) - 5)]
    steepest = rates[min(range(len(slopes)), key=slopes.__getitem__)]
    print("suggested rate between 1e-3 and 3:", 1e-3 < steepest < 3)

    # the steepest fall is where training is fastest: one-cycle peaks a little above it
    optimizer = torch.optim.SGD(model.parameters(), lr=steepest, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=min(3 * steepest, 0.5), total_steps=300)
    seen = []
    for step in range(300):
        idx = torch.randint(0, len(x), (64,))
        optimizer.zero_grad()
        loss_fn(model(x[idx]), y[idx]).backward()
        optimizer.step()
        scheduler.step()
        seen.append(scheduler.get_last_lr()[0])
    peak = max(range(300), key=seen.__getitem__)
    print("one-cycle peaks in the first half:", 60 < peak < 150)
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    print("accuracy above 0.85:", accuracy > 0.85)


if __name__ == "__main__":
    main()
