"""Neural-network building blocks: ``Module``, ``Parameter``, layers, ``init`` and ``functional``.

How it is put together (the same way a user would write it):

- ``functional`` holds the stateless functions. Each is composed of public ember
  ops, so it needs no backward of its own, and dispatches through ``__torch_function__``.
- Every layer in ``modules/`` is a ``Module`` subclass whose ``forward`` calls ``functional``;
  its weights are ``Parameter``s, registered by plain attribute assignment.
- ``init`` fills tensors in place under ``no_grad``; layers use it in ``reset_parameters``.

>>> import ember
>>> from ember import nn
>>> model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
>>> sum(p.numel() for p in model.parameters())
13
"""
from ember.nn.parameter import Parameter
from ember.nn import functional, init
from ember.nn.modules import Linear, Module, ModuleDict, ModuleList, MSELoss, ReLU, Sequential, Sigmoid, Tanh

__all__ = [
    "Linear", "MSELoss", "Module", "ModuleDict", "ModuleList", "Parameter", "ReLU", "Sequential", "Sigmoid", "Tanh",
    "functional", "init",
]

# ---- convolution, folding and pooling

# ---- activations, normalization, dropout and embeddings

# ---- losses

# ---- recurrent layers, attention and transformers

# ---- init, utils, parameter containers

from ember.nn import utils
from ember.nn.modules import ParameterDict, ParameterList

__all__ += ["ParameterDict", "ParameterList", "utils"]
