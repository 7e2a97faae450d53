"""The layers: every one is a ``Module`` subclass written with public ember ops."""
from ember.nn.modules.activation import ReLU, Sigmoid, Tanh
from ember.nn.modules.container import ModuleDict, ModuleList, Sequential
from ember.nn.modules.linear import Linear
from ember.nn.modules.loss import MSELoss
from ember.nn.modules.module import Module

__all__ = ["Linear", "MSELoss", "Module", "ModuleDict", "ModuleList", "ReLU", "Sequential", "Sigmoid", "Tanh"]

# ---- convolution, folding and pooling

# ---- activations, normalization, dropout and embeddings

# ---- losses

# ---- recurrent layers, attention and transformers

# ---- init, utils, parameter containers

from ember.nn.modules.container import ParameterDict, ParameterList

__all__ += ["ParameterDict", "ParameterList"]
