"""Ready-made parametrizations: ``orthogonal``, ``weight_norm`` and ``spectral_norm``.

>>> import ember
>>> layer = ember.nn.utils.parametrizations.orthogonal(ember.nn.Linear(3, 3))
>>> bool(ember.allclose(layer.weight @ layer.weight.T, ember.eye(3), atol=1e-5))
True
"""
from __future__ import annotations

import ember
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize
from ember.nn.utils._norms import as_matrix, norm_except_dim, normalize, power_iteration, spectral_normalized
from ember.nn.utils._norms import spectral_default_dim, weight_norm_value

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_MAPS = ("matrix_exp", "cayley", "householder")


def _orthonormal_columns(matrix: Tensor) -> Tensor:
    """The Q of a QR decomposition, with R's diagonal made real and positive (so it is unique). ``sgn``, not
    ``sign``: for a complex matrix R's diagonal is real but stored complex, and ``sign`` refuses complex input."""
    q, r = ember.linalg.qr(matrix)
    return q * ember.sgn(r.diagonal(dim1=-2, dim2=-1)).unsqueeze(-2)


def _is_orthogonal(q: Tensor) -> bool:
    """Whether ``q``'s columns are orthonormal (unitary, for complex ``q``: hence ``mH``), to a tolerance that
    grows with the number of rows."""
    n, k = q.shape[-2:]
    eps = 10.0 * n * ember.finfo(q.dtype).eps
    return bool(ember.allclose(q.mH @ q, ember.eye(k, dtype=q.dtype), atol=eps))


def _householder_reflectors(Q: Tensor) -> Tensor:
    """The stored form the householder map sends to ``Q`` (tall): ``geqrf``'s reflectors below the diagonal, and
    on it the sign that makes each reflection undo itself or not (-1 where ``tau`` is 0: no reflection)."""
    A, tau = ember.geqrf(Q)
    diagonal = A.diagonal(dim1=-2, dim2=-1)
    diagonal.sign_()
    diagonal.mul_(ember.where(tau == 0.0, -1.0, 1.0).to(A.dtype))
    return A


class _Orthogonal(Module):
    """Maps any matrix to one with orthonormal columns (or rows, for a wide matrix).

    ``matrix_exp`` and ``cayley`` send the skew-symmetric part of the lower triangle to an orthogonal matrix;
    ``householder`` multiplies the reflections stored below the diagonal. With ``use_trivialization`` the result
    is multiplied by a stored orthogonal ``base``, so assigning a weight just stores it as the base.
    """

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2:]
        wide = n < k
        if wide:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == "householder":
            reflectors = X.tril(-1)
            tau = 2.0 / (1.0 + (reflectors * reflectors).sum(-2))
            Q = ember.linalg.householder_product(reflectors, tau)
            # The diagonal of X only carries signs: -1 there undoes the reflection of that column.
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            X = X.tril()
            if n != k:
                X = ember.cat([X, X.new_zeros(*X.shape[:-1], n - k)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == "matrix_exp":
                Q = ember.linalg.matrix_exp(A)
            else:
                eye = ember.eye(n, dtype=A.dtype)
                Q = ember.linalg.solve(eye - A / 2, eye + A / 2)
            Q = Q[..., :k]
        if getattr(self, "base", None) is not None:
            Q = self.base @ Q
        return Q.mT if wide else Q

    @no_grad()
    def right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {tuple(self.shape)}. "
                             f"Got a tensor of shape {tuple(Q.shape)}.")
        n, k = Q.shape[-2:]
        wide = n < k
        if wide:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != "householder":
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            reflectors = _householder_reflectors(Q)
            return reflectors.mT if wide else reflectors
        if n != k:
            # Complete the columns to a square orthogonal matrix with random ones.
            Q = ember.cat([Q, ember.randn(*Q.shape[:-1], n - k, dtype=Q.dtype)], dim=-1)
        self.base = Q.clone() if n == k and _is_orthogonal(Q) else _orthonormal_columns(Q)
        # -I is the point every map sends to the identity (householder reads the -1s as "no reflection").
        neg_eye = ember.zeros(self.shape, dtype=Q.dtype)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` (at least 2-D) to (semi-)orthogonal matrices; its current value is kept."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrization = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, parametrization, unsafe=True)
    return module


class _WeightNorm(Module):
    """``(g, v) -> v * g / ||v||`` (norm over every dimension but ``dim``)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Store ``module.<name>`` as a magnitude ``original0`` and a direction ``original1``.

    >>> layer = weight_norm(ember.nn.Linear(3, 2))
    >>> [tuple(p.shape) for p in layer.parametrizations.weight.originals()]
    [(2, 1), (2, 3)]
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    module._register_load_state_dict_pre_hook(_old_weight_norm_entries_renamed(name))
    return module


def _old_weight_norm_entries_renamed(name: str):
    """A load_state_dict pre-hook: a save of the hook-based ``nn.utils.weight_norm`` (``<name>_g`` and
    ``<name>_v``) loads into this form, its entries renamed to ``original0`` and ``original1``, as torch's does."""
    def rename(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs) -> None:
        magnitude, direction = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if magnitude in state_dict and direction in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(magnitude)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(direction)

    return rename


class _SpectralNorm(Module):
    """Divides a weight by its largest singular value, estimated by power iteration (refined in training)."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = as_matrix(weight, self.dim).detach()
            rows, cols = matrix.shape
            self.register_buffer("_u", normalize(ember.randn(rows, dtype=weight.dtype), eps))
            self.register_buffer("_v", normalize(ember.randn(cols, dtype=weight.dtype), eps))
            power_iteration(matrix, self._u, self._v, 15, eps, u_first=True)  # start from a good estimate

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return weight / ember.linalg.vector_norm(weight).clamp(min=self.eps)
        matrix = as_matrix(weight, self.dim)
        if self.training:
            power_iteration(matrix.detach(), self._u, self._v, self.n_power_iterations, self.eps,
                            u_first=True)
        # Clones: the next power iteration changes the buffers in place, the graph needs these values.
        return spectral_normalized(weight, matrix, self._u.clone(), self._v.clone(), conjugate=True)

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm whenever it is read.

    >>> layer = spectral_norm(ember.nn.Linear(3, 2))
    >>> bool(ember.linalg.matrix_norm(layer.weight, 2) < 1.01)
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = spectral_default_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
