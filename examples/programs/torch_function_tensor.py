"""A Tensor subclass that carries physical units through a training loop by overriding
__torch_function__: the units travel through arithmetic, and the model trains on it as on a Tensor."""
import torch
from torch import nn


class UnitTensor(torch.Tensor):
    """A tensor with a unit; results of torch functions keep the unit of their first UnitTensor argument."""

    @staticmethod
    def __new__(cls, data, unit):
        t = torch.Tensor._make_subclass(cls, data, data.requires_grad)
        t.unit = unit
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        calls[func.__name__] = calls.get(func.__name__, 0) + 1
        unit = next((a.unit for a in args if isinstance(a, UnitTensor)), None)
        out = super().__torch_function__(func, types, args, kwargs)
        if isinstance(out, UnitTensor) and getattr(out, "unit", None) is None:
            out.unit = unit
        return out


calls = {}


def main():
    torch.manual_seed(0)
    metres = UnitTensor(torch.linspace(0, 1, 64).unsqueeze(1), "m")
    print(type(metres).__name__, metres.unit, metres.shape)
    doubled = metres * 2
    print("arithmetic keeps the type and unit:", type(doubled).__name__, doubled.unit)
    print("a method keeps it too:", type(metres.sum()).__name__, metres.sum().unit)
    print("torch.cat keeps it:", type(torch.cat([metres, metres])).__name__)
    print("isinstance Tensor:", isinstance(metres, torch.Tensor))

    target = 3 * metres.as_subclass(torch.Tensor) ** 2 - 1
    model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.03)
    losses = []
    for step in range(300):
        optimizer.zero_grad()
        prediction = model(metres)
        loss = nn.functional.mse_loss(prediction, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print("prediction type:", type(prediction).__name__, "unit:", prediction.unit)
    print("loss type:", type(loss).__name__)
    print("loss fell a hundredfold:", losses[-1] < losses[0] / 100)
    print("parameters stay plain:", type(model[0].weight).__name__)
    print("linear went through __torch_function__:", calls.get("linear", 0) >= 300)
    plain = prediction.as_subclass(torch.Tensor)
    print("as_subclass back to Tensor:", type(plain).__name__)


if __name__ == "__main__":
    main()
