"""Randomized low-rank SVD and PCA: ``svd_lowrank`` and ``pca_lowrank``, as torch has them.

A random projection finds a small basis ``Q`` of the input's range (sharpened by ``niter`` power
iterations, each re-orthonormalized by QR); the SVD of the small matrix ``Q^H A`` then gives the leading
singular triplets (Halko, Martinsson and Tropp, 2009). Composed of ops, so it is differentiable; the draws
come from ember's generator, so ``manual_seed`` makes it repeatable.

>>> import ember
>>> _ = ember.manual_seed(0)
>>> a = ember.randn(20, 3) @ ember.randn(3, 10)  # rank 3
>>> u, s, v = ember.svd_lowrank(a, q=3)
>>> bool(ember.allclose(u @ ember.diag(s) @ v.mT, a, atol=1e-4))
True
"""
from __future__ import annotations

import ember
from ember._ops._support import ember_function
from ember._tensor import Tensor


def _minus(product: Tensor, shift: Tensor | None, other: Tensor) -> Tensor:
    """``(A - M) @ other`` given ``A @ other`` (``shift`` is ``M``, or None for no shift)."""
    return product if shift is None else product - shift @ other


def _range_basis(a: Tensor, q: int, niter: int, shift: Tensor | None) -> Tensor:
    """An orthonormal basis ``[..., m, q]`` of nearly all of ``a - shift``'s range."""
    draws = ember.randn(a.shape[-1], q, dtype=a.dtype)
    basis = ember.linalg.qr(_minus(a @ draws, shift, draws)).Q
    for _ in range(niter):
        back = ember.linalg.qr(_minus(a.mH @ basis, None if shift is None else shift.mH, basis)).Q
        basis = ember.linalg.qr(_minus(a @ back, shift, back)).Q
    return basis


@ember_function
def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, V)`` with ``A - M ≈ U diag(S) V^H``: the ``q`` leading singular triplets, by random projection."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if not (A.is_floating_point() or A.is_complex()):
        raise TypeError(f"svd_lowrank: expected a floating-point or complex A, but got {A.dtype}; convert it "
                        "first, e.g. A.double()")
    m, n = A.shape[-2:]
    shift = None if M is None else M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # the basis is found on the taller side
        A, shift = A.mH, None if shift is None else shift.mH
    basis = _range_basis(A, q, niter, shift)
    small = basis.mH @ A if shift is None else basis.mH @ (A - shift)
    u, s, vh = ember.linalg.svd(small, full_matrices=False)
    u, v = basis @ u, vh.mH
    return (v, s, u) if wide else (u, s, v)


@ember_function
def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """The ``q`` leading principal components of the rows of ``A`` ``[..., m, n]`` as ``(U, S, V)``: the columns
    of ``V`` are the principal directions and ``S ** 2 / (m - 1)`` the variances along them."""
    if not isinstance(A, Tensor):
        raise TypeError(f"pca_lowrank: A must be a Tensor, not {type(A).__name__}")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    centered = A - A.mean(dim=-2, keepdim=True) if center else A
    return svd_lowrank(centered, q, niter=niter)
