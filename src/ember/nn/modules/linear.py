"""``Linear``: ``y = x @ weight.T + bias``.

>>> import ember
>>> layer = ember.nn.Linear(3, 2)
>>> layer
Linear(in_features=3, out_features=2, bias=True)
>>> layer(ember.ones(4, 3)).shape
ember.Size([4, 2])
"""
from __future__ import annotations

import math

from ember._creation import empty
from ember._tensor import Tensor
from ember.nn import functional as F, init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["Linear"]


class Linear(Module):
    """An affine map from ``in_features`` to ``out_features``, with weight of shape ``[out, in]``.

    Initialised as torch does: weight ``kaiming_uniform_(a=sqrt(5))``, i.e. uniform in
    ``±1/sqrt(in_features)``, and bias uniform in the same range.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        if type(self) is Linear:
            # Read from the registry: ``self.weight`` first fails the ordinary lookup (an exception raised and
            # caught in C) before Module.__getattr__ finds it, a microsecond per name. A subclass (a parametrized
            # layer's class defines weight as a property) or a weight assigned as a plain attribute takes the
            # ordinary way.
            parameters = self._parameters
            weight = parameters.get("weight")
            if weight is not None and "bias" in parameters:
                return F.linear(input, weight, parameters["bias"])
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
