"""Helpers shared by the weight-norm and spectral-norm reparametrizations."""
from __future__ import annotations

import ember
from ember._tensor import Tensor
from ember.nn.modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ember.nn.parameter import UninitializedParameter


def norm_except_dim(v: Tensor, dim: int | None) -> Tensor:
    """The 2-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions (the whole norm for None or
    -1; a 1-D ``v``'s is its absolute values)."""
    return ember.norm_except_dim(v, 2, -1 if dim is None else dim)


def weight_norm_value(v: Tensor, g: Tensor, dim: int | None) -> Tensor:
    """``v`` rescaled so its norm over every dimension but ``dim`` is ``g``."""
    return v * (g / norm_except_dim(v, dim))


def normalize(x: Tensor, eps: float) -> Tensor:
    return x / ember.linalg.vector_norm(x).clamp(min=eps)


def check_initialized(weight, hook: str, fn: str) -> None:
    """Refuse a lazy module's parameter before the module is changed: its shape is not known yet."""
    if isinstance(weight, UninitializedParameter):
        raise ValueError(
            f"The module passed to `{hook}` can't have uninitialized parameters. Make sure to run the dummy "
            f"forward before applying {fn}: call the lazy module once on an input of the right shape first")


def spectral_default_dim(module) -> int:
    """The dim spectral norm takes as the output one: 1 for a transposed convolution (its weight is
    ``[in, out, *kernel]``), 0 otherwise. By class, so subclasses and the lazy forms count, as in torch."""
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def as_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix whose rows run along ``dim``."""
    if dim != 0:
        weight = weight.movedim(dim, 0)
    return weight.reshape(weight.shape[0], -1)


def power_iteration(matrix: Tensor, u: Tensor, v: Tensor, iterations: int, eps: float, u_first: bool) -> None:
    """Refine ``u``, ``v`` in place towards the top singular vectors of ``matrix`` (no gradient is recorded).

    The hook form updates ``v`` first, with the plain transpose; the parametrization ``u`` first, with the
    conjugate transpose (right for a complex weight too). Both are kept so that each gives torch's values.
    """
    back = matrix.mH if u_first else matrix.T
    with ember.no_grad():
        for _ in range(iterations):
            if u_first:
                u.copy_(normalize(ember.mv(matrix, v), eps))
            v.copy_(normalize(ember.mv(back, u), eps))
            if not u_first:
                u.copy_(normalize(ember.mv(matrix, v), eps))


def spectral_normalized(weight: Tensor, matrix: Tensor, u: Tensor, v: Tensor, conjugate: bool = False) -> Tensor:
    """``weight`` divided by its largest singular value estimated as ``u . (matrix v)``; ``conjugate`` (the
    parametrization's form) takes ``u``'s conjugate, so a complex weight's estimate is its real singular value."""
    product = ember.mv(matrix, v)
    sigma = ember.vdot(u, product) if conjugate else ember.dot(u, product)
    return weight / sigma


def hook_of(module, kind: type, name: str):
    """The key and the forward pre-hook of class ``kind`` that maintains ``module.<name>``, or ``(None, None)``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return key, hook
    return None, None


def remove_hook(module, kind: type, name: str, what: str):
    """Undo a hook-based reparametrization: the hook restores a plain parameter and is unregistered."""
    key, hook = hook_of(module, kind, name)
    if hook is None:
        raise ValueError(f"{what} of '{name}' not found in {module}")
    hook.remove(module)
    del module._forward_pre_hooks[key]
    return module
