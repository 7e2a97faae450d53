"""Constrained weights with parametrizations: a custom symmetric-matrix parametrization registered
on a Linear layer, the built-in orthogonal and spectral_norm ones, weight_norm, and what each does to
the parameters, the state_dict and training."""
import torch
from torch import nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


def main():
    torch.manual_seed(0)
    layer = nn.Linear(4, 4)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    print("parametrized:", parametrize.is_parametrized(layer), parametrize.is_parametrized(layer, "bias"))
    print("symmetric:", torch.equal(layer.weight, layer.weight.T))
    print("parameters:", [name for name, _ in layer.named_parameters()])
    print("state_dict:", list(layer.state_dict().keys()))
    print(type(layer).__name__, type(layer.parametrizations.weight).__name__)

    # fit a symmetric target; the weight stays symmetric throughout
    target = torch.tensor([[2.0, 1.0, 0.0, 0.0], [1.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 1.0], [0.0, 0.0, 1.0, 2.0]])
    x = torch.randn(256, 4)
    optimizer = torch.optim.Adam(layer.parameters(), lr=0.05)
    for _ in range(300):
        optimizer.zero_grad()
        nn.functional.mse_loss(layer(x), x @ target.T).backward()
        optimizer.step()
    print("learnt the target:", torch.allclose(layer.weight, target, atol=1e-2))
    with parametrize.cached():
        print("cached weight is the same:", layer.weight is layer.weight)
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
    print("after removal:", [name for name, _ in layer.named_parameters()], type(layer.weight).__name__)

    q = orthogonal(nn.Linear(5, 5))
    print("orthogonal:", torch.allclose(q.weight @ q.weight.T, torch.eye(5), atol=1e-5))

    sn = spectral_norm(nn.Linear(6, 3))
    for _ in range(20):  # power iterations run in training mode
        sn(torch.randn(2, 6))
    print("spectral norm near 1:", abs(torch.linalg.matrix_norm(sn.weight, ord=2).item() - 1) < 0.05)

    wn = weight_norm(nn.Linear(3, 2))
    names = [name for name, _ in wn.named_parameters()]
    print("weight_norm parameters:", names)
    g = wn.parametrizations.weight.original0
    print("g shape:", g.shape, "row norms equal g:", torch.allclose(wn.weight.norm(dim=1, keepdim=True), g))


if __name__ == "__main__":
    main()
