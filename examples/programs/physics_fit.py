"""Fit a damped oscillator x(t) = A exp(-g t) cos(w t + p) to noisy measurements, with hand-written
autograd Functions for the pieces, each checked by gradcheck, and LBFGS to find the parameters."""
import math

import torch
from torch.autograd import Function, gradcheck


class DampedExp(Function):
    @staticmethod
    def forward(ctx, amplitude, gamma, t):
        out = amplitude * torch.exp(-gamma * t)
        ctx.save_for_backward(gamma, t, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        gamma, t, out = ctx.saved_tensors
        envelope = out
        grad_amplitude = (grad * torch.exp(-gamma * t)).sum()
        grad_gamma = (grad * envelope * -t).sum()
        return grad_amplitude, grad_gamma, None


class Oscillation(Function):
    @staticmethod
    def forward(ctx, omega, phase, t):
        ctx.save_for_backward(omega, phase, t)
        return torch.cos(omega * t + phase)

    @staticmethod
    def backward(ctx, grad):
        omega, phase, t = ctx.saved_tensors
        d = -torch.sin(omega * t + phase) * grad
        return (d * t).sum(), d.sum(), None


class SquaredError(Function):
    @staticmethod
    def forward(ctx, prediction, target):
        diff = prediction - target
        ctx.save_for_backward(diff)
        return (diff * diff).mean()

    @staticmethod
    def backward(ctx, grad):
        (diff,) = ctx.saved_tensors
        return grad * 2.0 * diff / diff.numel(), None


def model(params, t):
    amplitude, gamma, omega, phase = params
    return DampedExp.apply(amplitude, gamma, t) * Oscillation.apply(omega, phase, t)


def main():
    torch.manual_seed(0)
    t64 = torch.linspace(0, 3, 7, dtype=torch.float64)
    scalar = lambda v: torch.tensor(v, dtype=torch.float64, requires_grad=True)
    print("gradcheck DampedExp:", gradcheck(DampedExp.apply, (scalar(1.5), scalar(0.3), t64)))
    print("gradcheck Oscillation:", gradcheck(Oscillation.apply, (scalar(2.0), scalar(0.1), t64)))
    pred = torch.randn(7, dtype=torch.float64, requires_grad=True)
    print("gradcheck SquaredError:", gradcheck(SquaredError.apply, (pred, torch.randn(7, dtype=torch.float64))))

    t = torch.linspace(0, 10, 200, dtype=torch.float64)
    truth = torch.tensor([2.0, 0.25, 3.0, 0.5], dtype=torch.float64)
    with torch.no_grad():
        data = model(truth, t) + 0.01 * torch.randn(200, dtype=torch.float64)

    params = torch.tensor([1.5, 0.2, 2.9, 0.3], dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([params], lr=1, max_iter=50, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = SquaredError.apply(model(params.unbind(), t), data)
        loss.backward()
        return loss

    first = closure().item()
    for _ in range(5):
        optimizer.step(closure)
    last = closure().item()
    print("loss fell a hundredfold:", last < first / 100)
    print("recovered parameters within 0.05:", torch.allclose(params.detach(), truth, atol=0.05))
    print("period:", round(2 * math.pi / params[2].item(), 1))


if __name__ == "__main__":
    main()
