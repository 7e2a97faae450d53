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
from ember.nn.utils._norms import as_matrix, check_initialized, hook_of, normalize, power_iteration, remove_hook
from ember.nn.utils._norms import spectral_default_dim, spectral_normalized

__all__ = [
    "SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook", "remove_spectral_norm",
    "spectral_norm",
]

_VERSION = 1  # of the saved entries: before it, a save held <name> and no <name>_v


class SpectralNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_orig``, ``<name>_u``, ``<name>_v``."""

    _version = _VERSION  # of the saved entries, as torch's class records it

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name = name
        self.n_power_iterations = n_power_iterations
        self.dim = dim
        self.eps = eps

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> "SpectralNorm":
        """Reparametrize ``module.<name>`` and return the hook (torch's entry point, which some code calls)."""
        if hook_of(module, SpectralNorm, name)[1] is not None:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        hook = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        check_initialized(weight, "SpectralNorm", "spectral normalization")
        if not 0 <= dim < max(weight.dim(), 1):  # torch's permute refuses the rest, negative dims included
            raise RuntimeError(f"spectral_norm: dim must be in [0, {max(weight.dim(), 1) - 1}] for the "
                               f"{weight.dim()}-D parameter '{name}', got {dim}; give the dim of the output "
                               "channels as a non-negative number")
        with no_grad():
            rows, cols = hook.reshape_weight_to_matrix(weight).shape
            u = normalize(ember.empty(rows, dtype=weight.dtype).normal_(0, 1), eps)
            v = normalize(ember.empty(cols, dtype=weight.dtype).normal_(0, 1), eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(hook)
        module._register_state_dict_hook(SpectralNormStateDictHook(hook))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(hook))
        return hook

    def reshape_weight_to_matrix(self, weight):
        """``weight`` as a matrix whose rows run along ``self.dim``."""
        return as_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = self.reshape_weight_to_matrix(weight)
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


class SpectralNormStateDictHook:
    """Records in ``state_dict()._metadata`` which version of the entries of ``<name>`` was saved."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict: dict, prefix: str, local_metadata: dict) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = _VERSION


class SpectralNormLoadStateDictPreHook:
    """Reads a save from before ``<name>_v`` was kept: ``<name>_v`` is solved for from ``<name>_orig``,
    ``<name>_u`` and the saved normalised ``<name>``, which is dropped."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool, missing_keys: list,
                 unexpected_keys: list, error_msgs: list) -> None:
        version = local_metadata.get("spectral_norm", {}).get(self.fn.name + ".version")
        if version is not None and version >= _VERSION:
            return
        key = prefix + self.fn.name
        if version is None and key not in state_dict and all(key + s in state_dict for s in ("_orig", "_u", "_v")):
            return  # today's entries, from a dict made without metadata
        absent = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if absent:
            if strict:
                missing_keys.extend(absent)
            return
        with no_grad():
            weight_orig, u = state_dict[key + "_orig"], state_dict[key + "_u"]
            sigma = (weight_orig / state_dict.pop(key)).mean()
            matrix = as_matrix(weight_orig, self.fn.dim)
            v = ember.linalg.multi_dot([(matrix.t() @ matrix).pinverse(), matrix.t(), u.unsqueeze(1)]).squeeze(1)
            state_dict[key + "_v"] = v * (sigma / ember.dot(u, matrix @ v))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm (largest singular value) before every call."""
    SpectralNorm.apply(module, name, n_power_iterations, spectral_default_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``spectral_norm``: ``module.<name>`` becomes one parameter holding the normalised weight."""
    remove_hook(module, SpectralNorm, name, "spectral_norm")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for key, hook in list(hooks.items()):
            if isinstance(getattr(hook, "hook", hook), kind) and hook.fn.name == name:
                del hooks[key]
    return module
