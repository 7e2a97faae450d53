"""A denoising diffusion model on a 2-D toy distribution: a linear beta schedule, its cumulative product,
gather of per-timestep coefficients, sinusoidal timestep embeddings, an MLP noise predictor trained with
AdamW and a warm-restart cosine schedule, then ancestral sampling back from pure noise."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def two_moons(n, generator):
    angle = torch.rand(n, generator=generator) * math.pi
    upper = torch.stack([angle.cos(), angle.sin()], dim=1)
    lower = torch.stack([1 - angle.cos(), 0.5 - angle.sin()], dim=1)
    which = torch.rand(n, 1, generator=generator) < 0.5
    points = torch.where(which, upper, lower)
    return points + 0.05 * torch.randn(n, 2, generator=generator)


def sinusoidal_embedding(t, dim):
    half = dim // 2
    frequencies = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    angles = t.float()[:, None] * frequencies[None, :]
    return torch.cat([angles.sin(), angles.cos()], dim=-1)


class Schedule:
    def __init__(self, steps):
        self.betas = torch.linspace(1e-4, 0.05, steps)
        self.alphas = 1.0 - self.betas
        self.alpha_bars = torch.cumprod(self.alphas, dim=0)
        self.previous_alpha_bars = F.pad(self.alpha_bars[:-1], (1, 0), value=1.0)
        self.posterior_variance = self.betas * (1 - self.previous_alpha_bars) / (1 - self.alpha_bars)

    @staticmethod
    def take(values, t, like):
        picked = values.gather(0, t)
        return picked.reshape(-1, *([1] * (like.dim() - 1)))

    def noised(self, x0, t, noise):
        a = self.take(self.alpha_bars, t, x0)
        return a.sqrt() * x0 + (1 - a).sqrt() * noise


class Denoiser(nn.Module):
    def __init__(self, hidden=64, embed=16):
        super().__init__()
        self.embed = embed
        self.time = nn.Sequential(nn.Linear(embed, hidden), nn.SiLU())
        self.inp = nn.Linear(2, hidden)
        self.body = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 2))

    def forward(self, x, t):
        return self.body(self.inp(x) + self.time(sinusoidal_embedding(t, self.embed)))


def main():
    torch.manual_seed(0)
    steps = 50
    schedule = Schedule(steps)
    print("betas:", schedule.betas[:3], schedule.betas.dtype)
    print("alpha_bar ends:", f"{schedule.alpha_bars[0].item():.6f}", f"{schedule.alpha_bars[-1].item():.4f}")
    print("posterior variance head:", schedule.posterior_variance[:3])
    print("embedding:", sinusoidal_embedding(torch.tensor([0, 1, 7]), 6))
    print("take:", Schedule.take(schedule.betas, torch.tensor([0, 49, 10]), torch.zeros(3, 2)).shape)
    x0 = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    print("noised:", schedule.noised(x0, torch.tensor([0, 49]), torch.ones(2, 2)))

    generator = torch.Generator().manual_seed(1)
    data = two_moons(1024, generator)
    print("data:", data.shape, f"{data.mean().item():.1f}")
    model = Denoiser()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=20, T_mult=2, eta_min=1e-4)
    lrs, losses = [], []
    for step in range(140):
        batch = data[torch.randint(0, data.shape[0], (128,))]
        t = torch.randint(0, steps, (batch.shape[0],))
        noise = torch.randn_like(batch)
        loss = F.mse_loss(model(schedule.noised(batch, t, noise), t), noise)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        lrs.append(optimizer.param_groups[0]["lr"])
    print("lr at restarts:", [f"{lrs[i]:.5f}" for i in (0, 10, 18, 19, 20, 59, 60)])
    print("last_epoch:", scheduler.last_epoch, "T_cur:", scheduler.T_cur, "T_i:", scheduler.T_i)
    early, late = sum(losses[:20]) / 20, sum(losses[-20:]) / 20
    print("loss fell:", late < 0.9 * early)

    with torch.no_grad():
        x = torch.randn(512, 2)
        for step in reversed(range(steps)):
            t = torch.full((x.shape[0],), step, dtype=torch.long)
            predicted = model(x, t)
            alpha = schedule.take(schedule.alphas, t, x)
            alpha_bar = schedule.take(schedule.alpha_bars, t, x)
            mean = (x - (1 - alpha) / (1 - alpha_bar).sqrt() * predicted) / alpha.sqrt()
            if step > 0:
                variance = schedule.take(schedule.posterior_variance, t, x)
                x = mean + variance.sqrt() * torch.randn_like(x)
            else:
                x = mean
    print("samples:", x.shape, x.dtype, "finite:", bool(torch.isfinite(x).all()))
    print("samples near the data (mean within 0.5):", (x.mean(0) - data.mean(0)).abs().max().item() < 0.5)
    spread = torch.cdist(x[:64], data).min(dim=1).values.median()
    print("typical sample within 0.5 of a data point:", spread.item() < 0.5)


if __name__ == "__main__":
    main()
