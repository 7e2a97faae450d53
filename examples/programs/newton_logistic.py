"""Logistic regression fitted by Newton's method: the Hessian from torch.autograd.functional.hessian
(checked against the closed form X^T W X), Hessian-vector products, torch.linalg.solve for the step,
and a comparison with plain gradient descent."""
import torch
from torch.autograd.functional import hessian, hvp, jacobian


def nll(w, x, y, l2=1e-2):
    logits = x @ w
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="sum") + 0.5 * l2 * (w @ w)


def main():
    torch.manual_seed(0)
    x = torch.cat([torch.randn(300, 3, dtype=torch.float64), torch.ones(300, 1, dtype=torch.float64)], dim=1)
    true_w = torch.tensor([1.5, -2.0, 0.5, 0.25], dtype=torch.float64)
    y = torch.bernoulli(torch.sigmoid(x @ true_w))
    w = torch.zeros(4, dtype=torch.float64)

    H = hessian(lambda v: nll(v, x, y), w)
    p = torch.sigmoid(x @ w)
    closed = x.T @ (x * (p * (1 - p)).unsqueeze(1)) + 1e-2 * torch.eye(4, dtype=torch.float64)
    print("hessian:", H.shape, H.dtype, "matches X^T W X:", torch.allclose(H, closed))
    v = torch.tensor([1.0, 0.0, -1.0, 2.0], dtype=torch.float64)
    _, Hv = hvp(lambda u: nll(u, x, y), w, v)
    print("hvp equals H @ v:", torch.allclose(Hv, H @ v))
    g = jacobian(lambda u: nll(u, x, y), w)
    print("gradient:", g.shape)

    losses = []
    for step in range(8):
        g = jacobian(lambda u: nll(u, x, y), w)
        H = hessian(lambda u: nll(u, x, y), w)
        w = w - torch.linalg.solve(H, g)
        losses.append(nll(w, x, y).item())
    print("Newton converged (last steps change < 1e-9):", abs(losses[-1] - losses[-2]) < 1e-9)
    final_grad = jacobian(lambda u: nll(u, x, y), w)
    print("gradient at the optimum below 1e-8:", final_grad.norm().item() < 1e-8)

    wd = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.SGD([wd], lr=1e-3)
    for _ in range(8):
        optimizer.zero_grad()
        nll(wd, x, y).backward()
        optimizer.step()
    print("8 Newton steps beat 8 gradient steps:", losses[-1] < nll(wd.detach(), x, y).item())
    print("estimate within 0.6 of the truth:", (w - true_w).abs().max().item() < 0.6)


if __name__ == "__main__":
    main()
