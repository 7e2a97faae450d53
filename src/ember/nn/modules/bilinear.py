"""``Bilinear`` (``x1 A x2 + b``) and ``LazyLinear`` (a ``Linear`` whose ``in_features`` the first input sets).

>>> import ember
>>> ember.nn.Bilinear(3, 4, 5)(ember.ones(2, 3), ember.ones(2, 4)).shape
ember.Size([2, 5])
>>> layer = ember.nn.LazyLinear(2)
>>> _ = layer(ember.ones(4, 3)); layer
Linear(in_features=3, out_features=2, bias=True)
"""
from __future__ import annotations

import math

from ember._creation import empty
from ember._tensor import Tensor
from ember.nn import functional as F, init
from ember.nn.modules.conv import add_weight_and_bias
from ember.nn.modules.lazy import become, with_placeholders
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["Bilinear", "LazyLinear"]


class Bilinear(Module):
    """``y[o] = x1 @ weight[o] @ x2 + bias[o]``; weight and bias uniform in ``±1/sqrt(in1_features)``."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        add_weight_and_bias(self, (out_features, in1_features, in2_features), bias, {"device": device, "dtype": dtype})

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(Linear):
    """A ``Linear`` with ``in_features`` 0 until the first call, which sizes and initialises it.

    It then becomes a ``Linear``, as in torch; its parameters (placeholders until then) are the same
    objects before and after, so an optimizer may be built before the first call.
    """

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, out_features, bias, device, dtype)
        with_placeholders(self)
        self._factory = {"device": device, "dtype": dtype}

    def reset_parameters(self) -> None:
        if self.in_features:
            super().reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        if not input.dim():
            raise RuntimeError("LazyLinear: the input needs at least one dim to infer in_features, "
                               f"got {list(input.shape)}")
        become(self, Linear(input.shape[-1], self.out_features, self.bias is not None, **self._factory))
        del self._factory
        return Linear.forward(self, input)
