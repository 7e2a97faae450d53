"""``spectral_norm``: the older hook-based form; ``parametrizations.spectral_norm`` is the newer one.

The parameter is kept as ``<name>_orig``; buffers ``<name>_u`` and ``<name>_v`` hold the power-iteration
estimates of its top singular vectors; a forward pre-hook sets ``module.<name> = <name>_orig / sigma`` before
each call (refining ``u`` and ``v`` in training mode).

>>> import ember
>>> layer = ember.nn.utils.spectral_norm(ember.nn.Linear(3, 2))
>>> sorted(layer.state_dict())
['bias', 'weight_orig', 'weight_u', 'weight_v']
"""
from __future__ import annotations

import ember
from ember.autograd.grad_mode import no_grad
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils._norms import as_matrix, hook_of, normalize, power_iteration, remove_hook, spectral_normalized

__all__ = ["remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_orig``, ``<name>_u``, ``<name>_v``."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name = name
        self.n_power_iterations = n_power_iterations
        self.dim = dim
        self.eps = eps

    def compute_weight(self, module: Module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = as_matrix(weight, self.dim)
        if do_power_iteration:
            power_iteration(matrix, u, v, self.n_power_iterations, self.eps, u_first=False)
            # The next iteration updates u and v in place; the graph must keep the values used here.
            u, v = u.clone(), v.clone()
        return spectral_normalized(weight, matrix, u, v)

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))


def _default_dim(module: Module) -> int:
    # A transposed convolution keeps its output channels in dim 1.
    return 1 if type(module).__name__.startswith("ConvTranspose") else 0


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm (largest singular value) before every call."""
    if hook_of(module, SpectralNorm, name)[1] is not None:
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    dim = _default_dim(module) if dim is None else dim
    hook = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    with no_grad():
        rows, cols = as_matrix(weight, dim).shape
        u = normalize(ember.empty(rows, dtype=weight.dtype).normal_(0, 1), eps)
        v = normalize(ember.empty(cols, dtype=weight.dtype).normal_(0, 1), eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``spectral_norm``: ``module.<name>`` becomes one parameter holding the normalised weight."""
    return remove_hook(module, SpectralNorm, name, "spectral_norm")
