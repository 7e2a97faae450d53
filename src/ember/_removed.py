"""Names torch removed in 1.9 but still answers with an error that says what replaced them; ember answers alike.

>>> import ember
>>> ember.solve(ember.eye(2), ember.eye(2))
Traceback (most recent call last):
RuntimeError: solve was removed (deprecated since torch 1.9): use ember.linalg.solve(A, B), which takes its arguments in the other order, A first ...
"""
from __future__ import annotations

from typing import Callable

from ember.overrides import overridable

_ADVICE = {
    "solve": "use ember.linalg.solve(A, B), which takes its arguments in the other order, A first, and returns only "
             "the solution (for the LU factors, see ember.linalg.lu_factor)",
    "lstsq": "use ember.linalg.lstsq(A, B), which takes its arguments in the other order, A first, and returns the "
             "solution without the QR factors (see ember.linalg.qr)",
    "symeig": "use ember.linalg.eigvalsh(A, UPLO='U' if upper else 'L') for the eigenvalues or ember.linalg.eigh(A) "
              "for both; note the default now reads the lower triangle",
    "eig": "use ember.linalg.eigvals(A) or ember.linalg.eig(A), which return complex tensors instead of pairs of "
           "real columns",
    "matrix_rank": "use ember.linalg.matrix_rank(A, hermitian=...), where 'symmetric' is now called 'hermitian'",
}


def _removed(name: str) -> Callable:
    def removed(*args, **kwargs):
        raise RuntimeError(f"{name} was removed (deprecated since torch 1.9): {_ADVICE[name]}")

    removed.__name__ = removed.__qualname__ = name
    removed.__doc__ = f"Removed: {_ADVICE[name]}."
    return overridable("ember")(removed)


solve = _removed("solve")
lstsq = _removed("lstsq")
symeig = _removed("symeig")
eig = _removed("eig")
matrix_rank = _removed("matrix_rank")
