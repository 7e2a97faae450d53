# corpus: slow
"""A neural ODE fitted to a damped oscillator: a small MLP is the vector field, a fixed-step RK4
integrator unrolls it (backpropagating through every step), and torch.func gives the Jacobian of
the learnt field at many states at once (vmap over jacrev through functional_call), whose
eigenvalues show the learnt damping."""
import torch
from torch import nn
from torch.func import functional_call, jacrev, vmap

TRUE_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]], dtype=torch.float64)


class VectorField(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, 2))

    def forward(self, t, y):
        return self.net(y)


def rk4(f, y0, times):
    """Classic Runge-Kutta with one step between consecutive times; returns (len(times), *y0.shape)."""
    ys = [y0]
    y = y0
    for t0, t1 in zip(times[:-1], times[1:]):
        h = t1 - t0
        k1 = f(t0, y)
        k2 = f(t0 + h / 2, y + h / 2 * k1)
        k3 = f(t0 + h / 2, y + h / 2 * k2)
        k4 = f(t1, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return torch.stack(ys)


def main():
    torch.manual_seed(0)
    torch.set_default_dtype(torch.float64)
    times = torch.linspace(0.0, 3.0, 31)
    y0 = torch.tensor([[2.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    with torch.no_grad():
        target = rk4(lambda t, y: y @ TRUE_A.T, y0, times)
    print("trajectories:", target.shape, target.dtype)
    print("end of the true trajectory:", target[-1, 0].round(decimals=4))

    field = VectorField()
    optimizer = torch.optim.Adam(field.parameters(), lr=0.02)
    for step in range(100):
        # a curriculum: fit the first part of the trajectories before the whole of them
        horizon = 11 if step < 40 else 31
        prediction = rk4(field, y0, times[:horizon])
        loss = (prediction - target[:horizon]).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 25 == 24:
            print(f"step {step + 1}: loss {loss.item():.4f}")
    print("grad_fn of the prediction:", type(prediction.grad_fn).__name__)

    # the Jacobian of the learnt field at a batch of states: one jacrev per state, batched by vmap
    params = {name: p.detach() for name, p in field.named_parameters()}

    def field_at(state):
        return functional_call(field, params, (torch.tensor(0.0), state))

    states = target[::10].reshape(-1, 2)
    jacobians = vmap(jacrev(field_at))(states)
    print("jacobians:", jacobians.shape)
    looped = torch.stack([torch.autograd.functional.jacobian(field_at, s) for s in states])
    print("vmap(jacrev) matches a loop of jacobian:", torch.allclose(jacobians, looped))
    mean_jacobian = jacobians.mean(0)
    eigenvalues = torch.linalg.eigvals(mean_jacobian)
    print("eigenvalues are a complex pair:", eigenvalues.dtype, bool(eigenvalues.imag.abs().min() > 1.0))
    print("learnt frequency is near 2:", abs(eigenvalues.imag.abs().mean().item() - 2.0) < 0.3)
    print("mean Jacobian:", mean_jacobian.round(decimals=2))

    # the adjoint-free check: gradient of the final state with respect to the initial one
    start = y0[:1].clone().requires_grad_(True)
    rk4(field, start, times)[-1].sum().backward()
    print("sensitivity to the initial state:", start.grad.round(decimals=3))


if __name__ == "__main__":
    main()
