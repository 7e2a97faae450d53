"""``weight_norm``: the older hook-based form; ``parametrizations.weight_norm`` is the newer one.

The weight is split into a magnitude ``weight_g`` and a direction ``weight_v`` (both parameters), and a forward
pre-hook recomputes ``weight = weight_v * weight_g / ||weight_v||`` before each call.

>>> import ember, warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", FutureWarning)  # it says to prefer parametrizations.weight_norm
...     layer = ember.nn.utils.weight_norm(ember.nn.Linear(3, 2))
>>> sorted(layer.state_dict())
['bias', 'weight_g', 'weight_v']
>>> layer.weight_g.shape
ember.Size([2, 1])
"""
from __future__ import annotations

import warnings

from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils._norms import check_initialized, hook_of, norm_except_dim, remove_hook, weight_norm_value

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim  # None: the whole tensor's norm, which torch records as -1

    def compute_weight(self, module: Module):
        return weight_norm_value(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> "WeightNorm":
        """Reparametrize ``module.<name>`` and return the hook (torch's entry point, which some code calls)."""
        warnings.warn("`ember.nn.utils.weight_norm` is deprecated in favor of "
                      "`ember.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        if hook_of(module, WeightNorm, name)[1] is not None:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        weight = getattr(module, name)
        check_initialized(weight, "WeightNorm", "weight normalization")
        hook = WeightNorm(name, dim)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, hook.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, hook.compute_weight(module))
        module.register_forward_pre_hook(hook)
        return hook

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into ``<name>_g`` (its norm over all dims but ``dim``) and ``<name>_v``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``weight_norm``: ``module.<name>`` becomes one parameter again."""
    return remove_hook(module, WeightNorm, name, "weight_norm")
