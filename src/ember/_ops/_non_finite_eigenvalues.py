"""The eigenvalues of matrices with infs or NaNs, as LAPACK's ``geev`` gives them to torch's ``linalg.eigvals``
(NumPy refuses such matrices).

``geev`` first scales the matrix by 1 / its largest entry when that is huge: with an inf (and no NaN, which
makes the largest entry NaN and skips the scaling) every entry becomes 0 or NaN, and scaling the eigenvalues
back by inf makes every one NaN. With a NaN, ``gebal``'s permutation isolates the eigenvalues it can (a row,
or a column, with zeros off the diagonal: NaN is not zero), which are diagonal entries; the rest are those of
the remaining block, NaN where it holds an inf or NaN (LAPACK's answer there is arbitrary, and may crash).

>>> import numpy as np
>>> eigenvalues_of_non_finite(np.array([[1.0, np.nan], [0.0, 2.0]]), np.dtype(np.complex128)).tolist()
[(1+0j), (2+0j)]
"""
from __future__ import annotations

import numpy as np


def eigenvalues_of_non_finite(data: np.ndarray, kind: np.dtype) -> np.ndarray:
    """The eigenvalues, of complex dtype ``kind``, of each matrix of the stack ``data``, some not finite."""
    n = data.shape[-1]
    matrices = data.reshape(-1, n, n)
    values = np.empty(matrices.shape[:-1], kind)
    for index, matrix in enumerate(matrices):
        values[index] = _eigenvalues_of_one(matrix, kind)
    return values.reshape(data.shape[:-1])


def _eigenvalues_of_one(matrix: np.ndarray, kind: np.dtype) -> np.ndarray:
    if np.isfinite(matrix).all():
        return np.linalg.eigvals(matrix)
    if not np.isnan(matrix).any():
        return np.full(len(matrix), complex(np.nan, np.nan), kind)
    permuted, low, high = _isolating_permutation(matrix.copy())
    block = permuted[low:high, low:high]
    if np.isfinite(block).all():
        inner = np.linalg.eigvals(block)
    else:  # (a real matrix's unknown eigenvalues are NaN + 0j in torch)
        inner = np.full(high - low, np.nan if matrix.dtype.kind != "c" else complex(np.nan, np.nan), kind)
    diagonal = np.diagonal(permuted)
    return np.concatenate([diagonal[:low], inner, diagonal[high:]]).astype(kind, copy=False)


def _isolating_permutation(matrix: np.ndarray) -> tuple:
    """``gebal``'s permutation of ``matrix`` (in place), and the bounds of its block that isolates nothing: rows
    with zeros off the diagonal (within the block) go to its bottom, then such columns to its left. The order
    is LAPACK's, so the eigenvalues come in torch's order."""
    low, high = 0, len(matrix)
    moved = True
    while moved:
        moved = False
        for row in range(high - 1, -1, -1):
            if not _has_off_diagonal(matrix[row, :high], row):
                _swap(matrix, row, high - 1)
                high -= 1
                moved = True
    moved = True
    while moved:
        moved = False
        for column in range(low, high):
            if not _has_off_diagonal(matrix[low:high, column], column - low):
                _swap(matrix, column, low)
                low += 1
                moved = True
    return matrix, low, high


def _has_off_diagonal(line: np.ndarray, diagonal_at: int) -> bool:
    nonzero = line != 0
    nonzero[diagonal_at] = False
    return bool(nonzero.any())


def _swap(matrix: np.ndarray, i: int, j: int) -> None:
    """Exchange rows i and j and columns i and j: a similarity, so the eigenvalues stay."""
    matrix[[i, j]] = matrix[[j, i]]
    matrix[:, [i, j]] = matrix[:, [j, i]]
