"""Linear-algebra functions torch removed in 1.9 but still names (``eig``, ``symeig``, ``solve``, ``lstsq``,
``matrix_rank``): calling one raises, saying which ``ember.linalg`` function replaces it and how.

>>> import ember
>>> ember.eig(ember.eye(2))
Traceback (most recent call last):
    ...
RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
"""
from __future__ import annotations

from ember._ops._support import ember_function

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


@ember_function
def eig(self, eigenvectors: bool = False, *, e=None, v=None):
    """Removed: ``ember.linalg.eig`` gives complex eigenvalues and eigenvectors (``linalg.eigvals`` the values)."""
    raise RuntimeError(_REMOVED + "ember.linalg.eig returns complex tensors (complex64 or complex128) rather than "
                       "real tensors standing for complex ones.\n\nL, _ = ember.eig(A) becomes\n"
                       "L_complex = ember.linalg.eigvals(A)\nand L, V = ember.eig(A, eigenvectors=True) becomes\n"
                       "L_complex, V_complex = ember.linalg.eig(A)")


@ember_function
def symeig(input, eigenvectors: bool = False, upper: bool = True, *, out=None):
    """Removed: ``ember.linalg.eigh`` (which reads the lower triangle by default, where symeig read the upper)."""
    raise RuntimeError(_REMOVED + "ember.linalg.eigh reads the lower triangle by default, where symeig read the "
                       "upper one.\n\nL, _ = ember.symeig(A, upper=upper) becomes\n"
                       "L = ember.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\nand "
                       "L, V = ember.symeig(A, eigenvectors=True) becomes\n"
                       "L, V = ember.linalg.eigh(A, UPLO='U' if upper else 'L')")


@ember_function
def solve(input, A, *, out=None):
    """Removed: ``ember.linalg.solve(A, B)``, its arguments in the other order."""
    raise RuntimeError(_REMOVED + "ember.linalg.solve takes its arguments in the other order and returns the "
                       "solution only.\n\nX, LU = ember.solve(B, A) becomes\nX = ember.linalg.solve(A, B)")


@ember_function
def lstsq(input, A, *, out=None):
    """Removed: ``ember.linalg.lstsq(A, B)``, its arguments in the other order."""
    raise RuntimeError(_REMOVED + "ember.linalg.lstsq takes its arguments in the other order and returns a named "
                       "tuple.\n\nX, _ = ember.lstsq(B, A).solution[:A.size(1)] becomes\n"
                       "X = ember.linalg.lstsq(A, B).solution")


@ember_function
def matrix_rank(input, tol=None, symmetric: bool = False, *, out=None):
    """Removed: ``ember.linalg.matrix_rank``."""
    raise RuntimeError(_REMOVED + "Use ember.linalg.matrix_rank instead: ember.matrix_rank(A, tol, symmetric) "
                       "becomes ember.linalg.matrix_rank(A, atol=tol, rtol=0, hermitian=symmetric)")
