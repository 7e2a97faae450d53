# corpus: slow
"""Probabilistic forecasting of a seasonal series: sliding windows cut with Tensor.unfold, a per-window
standardisation, an LSTMCell unrolled by hand with teacher forcing, three quantile heads trained with
the pinball loss, ReduceLROnPlateau on a validation split, and an autoregressive forecast whose
interval coverage is measured against the held-out data."""
import math

import torch
from torch import nn

QUANTILES = torch.tensor([0.1, 0.5, 0.9])


def make_series(n, generator):
    t = torch.arange(n, dtype=torch.float32)
    seasonal = torch.sin(2 * math.pi * t / 12) + 0.5 * torch.sin(2 * math.pi * t / 6)
    trend = 0.01 * t
    return seasonal + trend + 0.2 * torch.randn(n, generator=generator)


def pinball(prediction, target):
    """Quantile loss: prediction (..., Q) against target (...), averaged."""
    error = target.unsqueeze(-1) - prediction
    return torch.maximum(QUANTILES * error, (QUANTILES - 1) * error).mean()


class Forecaster(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.cell = nn.LSTMCell(1, hidden)
        self.head = nn.Linear(hidden, len(QUANTILES))

    def forward(self, context, horizon, future=None):
        """Read the context, then predict `horizon` steps, feeding back the median (or the truth, if given)."""
        state = None
        for value in context.unbind(1):
            state = self.cell(value.unsqueeze(1), state)
        outputs = []
        for step in range(horizon):
            quantiles = self.head(state[0])
            # keep the quantiles ordered: a median plus non-negative offsets either side
            low, mid, high = quantiles.unbind(-1)
            quantiles = torch.stack([mid - nn.functional.softplus(low), mid, mid + nn.functional.softplus(high)], -1)
            outputs.append(quantiles)
            fed = future[:, step] if future is not None else mid.detach()
            state = self.cell(fed.unsqueeze(1), state)
        return torch.stack(outputs, 1)


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(8)
    series = make_series(240, generator)
    context, horizon = 24, 6
    windows = series[:200].unfold(0, context + horizon, 3)
    print("windows:", windows.shape, windows.stride(), windows.is_contiguous())
    mean = windows[:, :context].mean(1, keepdim=True)
    std = windows[:, :context].std(1, keepdim=True)
    scaled = (windows - mean) / std
    split = int(0.8 * len(scaled))
    train, valid = scaled[:split], scaled[split:]
    print("train/valid windows:", len(train), len(valid))

    model = Forecaster()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)
    for epoch in range(15):
        model.train()
        order = torch.randperm(len(train), generator=generator)
        for i in range(0, len(train), 16):
            batch = train[order[i:i + 16]]
            prediction = model(batch[:, :context], horizon, future=batch[:, context:])
            loss = pinball(prediction, batch[:, context:])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
            optimizer.step()
        model.eval()
        with torch.no_grad():
            valid_loss = pinball(model(valid[:, :context], horizon), valid[:, context:])
        plateau.step(valid_loss)
        if epoch % 5 == 4:
            print(f"epoch {epoch + 1}: train {loss.item():.4f} valid {valid_loss.item():.4f} "
                  f"lr {optimizer.param_groups[0]['lr']:.4f}")

    # forecast the held-out tail from the 24 points before it
    history = series[200 - context:200]
    m, s = history.mean(), history.std()
    with torch.no_grad():
        forecast = model(((history - m) / s).unsqueeze(0), horizon)[0] * s + m
    truth = series[200:200 + horizon]
    print("forecast shape:", forecast.shape, forecast.dtype)
    print("median forecast:", forecast[:, 1].round(decimals=2))
    print("truth:          ", truth.round(decimals=2))
    print("quantiles are ordered:", bool((forecast.diff(dim=1) >= 0).all()))
    inside = ((truth >= forecast[:, 0]) & (truth <= forecast[:, 2])).float().mean()
    print(f"80% interval covers {inside.item():.4f} of the horizon")

    # the quantile heads against empirical quantiles of the validation errors
    with torch.no_grad():
        valid_prediction = model(valid[:, :context], horizon)
    errors = valid[:, context:] - valid_prediction[..., 1]
    print("empirical error quantiles:", torch.quantile(errors.flatten(), QUANTILES).round(decimals=2))
    print("pinball of a constant zero forecast:", round(pinball(torch.zeros_like(valid_prediction), valid[:, context:]).item(), 4))


if __name__ == "__main__":
    main()
