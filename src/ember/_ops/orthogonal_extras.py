"""``ormqr`` (a product with the Q that ``geqrf`` leaves in Householder form) and ``lobpcg`` (a few extreme
eigenpairs of a symmetric positive definite problem), composed of ember ops so both are differentiable.

>>> import ember
>>> A = ember.tensor([[2., 1.], [1., 3.], [0., 1.]], dtype=ember.float64)
>>> a, tau = ember.geqrf(A)
>>> Q = ember.linalg.qr(A, mode="complete").Q
>>> ember.allclose(ember.ormqr(a, tau, ember.eye(3, dtype=ember.float64)).abs(), Q.abs())
True
"""
from __future__ import annotations

from ember import linalg
from ember._creation import zeros
from ember._ops._support import ember_function, require_tensor
from ember._ops.joining import cat
from ember._ops.out import into_out_of_its_dtype
from ember._tensor import Tensor


def _full_q(input: Tensor, tau: Tensor) -> Tensor:
    """The square Q of the reflectors in ``input``'s columns: reflectors past ``tau``'s are the identity."""
    m, k = input.shape[-2], tau.shape[-1]
    batch = tuple(input.shape[:-2])
    columns = input[..., :k]
    if m > k:
        columns = cat([columns, zeros(*batch, m, m - k, dtype=input.dtype)], -1)
        tau = cat([tau, zeros(*batch, m - k, dtype=tau.dtype)], -1)
    return linalg.householder_product(columns, tau)


@ember_function
def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False, *,
          out: Tensor | None = None) -> Tensor:
    """``Q @ input3`` for the Q of ``geqrf``'s ``(input, input2)`` (``Q^H`` with ``transpose``; on the right
    with ``left=False``), without the caller forming Q."""
    require_tensor(input, "ormqr")
    require_tensor(input2, "ormqr", 2, "input2")
    require_tensor(input3, "ormqr", 3, "input3")
    for name, tensor in (("input", input), ("input3", input3)):
        if tensor.dim() < 2:
            raise RuntimeError(f"ormqr: {name} must have at least 2 dimensions, but got {name} of size "
                               f"{list(tensor.shape)}")
    if input2.dim() < 1:
        raise RuntimeError("ormqr: input2 (tau) must have at least 1 dimension, but got a 0-dim tensor")
    rows = input3.shape[-2] if left else input3.shape[-1]
    if input.shape[-2] != rows:
        side = "rows" if left else "columns"
        raise RuntimeError(f"ormqr: input3's {side} ({rows}) must match input's rows ({input.shape[-2]}), the "
                           f"order of Q; got input {list(input.shape)} and input3 {list(input3.shape)}")
    if input2.shape[-1] != min(rows, input.shape[-1]):  # (as torch: every reflector geqrf gives, no fewer)
        side = -2 if left else -1
        raise RuntimeError(f"ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1]); "
                           f"got {input2.shape[-1]} reflectors for {min(rows, input.shape[-1])}")
    q = _full_q(input, input2)
    if transpose:
        q = q.mH
    result = q @ input3 if left else input3 @ q
    return result if out is None else into_out_of_its_dtype("ormqr", result, out, input, input2, input3)


@ember_function
def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None, n: int | None = None,
           iK=None, niter: int | None = None, tol: float | None = None, largest: bool | None = None,
           method: str | None = None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None) -> tuple:
    """The ``k`` largest (or, with ``largest=False``, smallest) eigenvalues of ``A x = λ B x`` and their vectors.

    ember solves the problem densely (through ``eigh``), so the pairs are exact rather than iterated to ``tol``;
    the iteration's settings are accepted and its conditions checked as torch checks them.
    """
    require_tensor(A, "lobpcg")
    if k is None:
        k = 1 if X is None else X.shape[-1]
    rows = A.shape[-1]
    if rows < 3 * k:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={rows}) is smaller than "
                         f"3 x the number of requested eigenpairs (={k})")
    if B is None:
        values, vectors = linalg.eigh(A)
    else:
        chol = linalg.cholesky(B)
        whitened = linalg.solve_triangular(chol, linalg.solve_triangular(chol, A, upper=False).mH, upper=False)
        values, vectors = linalg.eigh(whitened)
        vectors = linalg.solve_triangular(chol.mH, vectors, upper=True)
    if largest is None or largest:
        return values[..., -k:].flip(-1), vectors[..., -k:].flip(-1)
    return values[..., :k], vectors[..., :k]
