"""Heteroscedastic regression: a network predicts a mean and a log-variance, trained with a custom
Gaussian negative log-likelihood Module, and checked against the built-in GaussianNLLLoss."""
import math

import torch
from torch import nn


class GaussianNLL(nn.Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, mean, log_var, target):
        loss = 0.5 * (log_var + (target - mean) ** 2 / log_var.exp() + math.log(2 * math.pi))
        return loss.mean() if self.reduction == "mean" else loss.sum()


class MeanAndVariance(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU())
        self.mean = nn.Linear(64, 1)
        self.log_var = nn.Linear(64, 1)

    def forward(self, x):
        h = self.body(x)
        return self.mean(h), self.log_var(h)


def main():
    torch.manual_seed(0)
    x = torch.linspace(-3, 3, 600).unsqueeze(1)
    noise_std = 0.05 + 0.3 * (x > 0).float()
    y = torch.sin(x) + noise_std * torch.randn_like(x)

    mean, log_var = torch.tensor([[0.5], [1.0]]), torch.tensor([[0.0], [-1.0]])
    target = torch.tensor([[0.0], [1.5]])
    mine = GaussianNLL()(mean, log_var, target)
    builtin = nn.GaussianNLLLoss(full=True)(mean, target, log_var.exp())
    print("custom loss matches GaussianNLLLoss:", torch.allclose(mine, builtin), round(mine.item(), 4))

    model = MeanAndVariance()
    loss_fn = GaussianNLL()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=400)
    for step in range(400):
        optimizer.zero_grad()
        m, lv = model(x)
        loss = loss_fn(m, lv, y)
        loss.backward()
        optimizer.step()
        scheduler.step()
    with torch.no_grad():
        m, lv = model(x)
        std = (0.5 * lv).exp()
    print("mean fits sin within 0.15:", (m - torch.sin(x)).abs().mean().item() < 0.15)
    left, right = std[x < -0.5].mean().item(), std[x > 0.5].mean().item()
    print("predicted noise larger on the noisy side:", right > 2 * left)
    print("right-side std near 0.35:", 0.2 < right < 0.5)


if __name__ == "__main__":
    main()
