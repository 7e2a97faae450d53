"""Stopping and resuming a training run exactly: a checkpoint with the model, the optimizer, the
learning-rate scheduler, the epoch and the random-number state, so that the resumed run continues
with the very same numbers as an uninterrupted one."""
import os
import tempfile

import torch
from torch import nn


def build():
    model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.2), nn.Linear(24, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
    return model, optimizer, scheduler


def train_epoch(model, optimizer, scheduler, x, y):
    model.train()
    for batch in torch.randperm(len(x)).split(32):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x[batch]), y[batch]).backward()
        optimizer.step()
    scheduler.step()


def main():
    torch.manual_seed(0)
    x = torch.randn(256, 6)
    y = x.sum(1, keepdim=True).sin()
    path = os.path.join(tempfile.mkdtemp(), "run.pt")

    torch.manual_seed(1)
    model, optimizer, scheduler = build()
    for epoch in range(3):
        train_epoch(model, optimizer, scheduler, x, y)
    torch.save({"epoch": 3, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "rng": torch.get_rng_state()}, path)
    for epoch in range(3, 6):
        train_epoch(model, optimizer, scheduler, x, y)
    uninterrupted = [p.detach().clone() for p in model.parameters()]

    torch.manual_seed(123)  # a new process would start from anywhere
    model, optimizer, scheduler = build()
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    torch.set_rng_state(checkpoint["rng"])
    print("resuming at epoch", checkpoint["epoch"], "with lr", round(scheduler.get_last_lr()[0], 6))
    print("optimizer step count restored:", int(optimizer.state_dict()["state"][0]["step"]))
    print("rng state:", checkpoint["rng"].dtype, checkpoint["rng"].dim())
    for epoch in range(checkpoint["epoch"], 6):
        train_epoch(model, optimizer, scheduler, x, y)
    resumed = [p.detach() for p in model.parameters()]
    print("resumed run equals the uninterrupted one:", all(torch.equal(a, b) for a, b in zip(uninterrupted, resumed)))
    print("final lr:", round(scheduler.get_last_lr()[0], 6))
    print("scheduler state:", sorted(scheduler.state_dict().keys()))


if __name__ == "__main__":
    main()
