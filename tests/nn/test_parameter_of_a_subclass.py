"""A Parameter made of a tensor subclass stays of that class, marked as a parameter, as in torch."""
import torch

import ember
from twins import both


def _program(lib):
    calls = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs or {})

    layer = lib.nn.Linear(2, 1)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor([[0.5, -1.0]]))
        layer.bias.fill_(0.25)
    layer.weight = lib.nn.Parameter(layer.weight.detach().clone().as_subclass(Logged))
    weight = layer.weight
    out = layer(lib.tensor([[1.0, 2.0]]))
    out.sum().backward()
    lib.optim.SGD(layer.parameters(), lr=0.5).step()
    names = [name for name, _ in layer.named_parameters()]
    return (type(weight).__name__, isinstance(weight, lib.nn.Parameter), weight.requires_grad, weight.is_leaf,
            "linear" in calls, names, list(layer.state_dict()), layer.weight.detach().as_subclass(lib.Tensor),
            isinstance(lib.ones(1), lib.nn.Parameter), isinstance(lib.ones(1).as_subclass(Logged), lib.nn.Parameter))


def test_a_subclass_parameter_is_registered_trained_and_keeps_its_handler_as_torchs():
    result = both(_program)
    assert result[0] == "Logged" and result[1] and result[4]


def test_a_plain_tensor_still_becomes_a_parameter():
    for lib in (ember, torch):
        assert type(lib.nn.Parameter(lib.ones(1))) is lib.nn.Parameter
