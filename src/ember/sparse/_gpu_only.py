"""Sparse features torch has only on CUDA: ``spsolve`` (a cuDSS solver) and 2:4 semi-structured sparsity
(cuSPARSELt and CUTLASS kernels). ember, like a CPU-only torch, has the names and raises, saying so.

>>> ember.sparse.to_sparse_semi_structured(ember.ones(64, 64))
Traceback (most recent call last):
RuntimeError: Error original_tensor.device= cpu is not supported! Only CUDA tensors are currently supported...
"""
from __future__ import annotations

import warnings

from ember._tensor import Tensor

_CPU_UNSUPPORTED = (
    "Error original_tensor.device= cpu is not supported! Only CUDA tensors are currently supported. "
    "Semi-structured (2:4) sparsity runs on cuSPARSELt or CUTLASS GPU kernels, which ember (CPU-only) has not; "
    "keep the tensor dense, or use a sparse COO/CSR layout"
)


def spsolve(input: Tensor, other: Tensor, *, left: bool = True) -> Tensor:
    """Solve ``input @ out = other`` for a sparse CSR ``input``: torch's kernel is CUDA's only, so this raises
    NotImplementedError, as torch does for CPU tensors; ``ember.linalg.solve(input.to_dense(), other)`` solves
    it densely."""
    raise NotImplementedError(
        f"Could not run 'aten::_spsolve' with arguments from the '{_backend(input)}' backend: sparse spsolve has only "
        "a CUDA kernel. Solve densely instead: ember.linalg.solve(input.to_dense(), other)"
    )


def _backend(t) -> str:
    layout = str(getattr(t, "layout", "")).rsplit(".", 1)[-1]
    return {"sparse_csr": "SparseCsrCPU", "sparse_coo": "SparseCPU"}.get(layout, "CPU")


class SparseSemiStructuredTensor(Tensor):
    """A 2:4 semi-structured sparse matrix (two of every four values zero), for GPU kernels only; making one
    raises on the CPU, as torch's does."""

    _FORCE_CUTLASS = False
    _FUSE_TRANSPOSE = False

    def __new__(cls, *args, **kwargs):
        raise RuntimeError(_CPU_UNSUPPORTED)

    @classmethod
    def from_dense(cls, original_tensor: Tensor, alg_id: int = 0) -> "SparseSemiStructuredTensor":
        """The semi-structured form of a dense ``original_tensor``: raises, ember's tensors are on the CPU."""
        raise RuntimeError(_CPU_UNSUPPORTED)


class SparseSemiStructuredTensorCUTLASS(SparseSemiStructuredTensor):
    """The form CUTLASS's kernels read."""


class SparseSemiStructuredTensorCUSPARSELT(SparseSemiStructuredTensor):
    """The form cuSPARSELt's kernels read."""


def to_sparse_semi_structured(original_tensor: Tensor, transposed: bool = False,
                              alg_id: int = 0) -> SparseSemiStructuredTensor:
    """``original_tensor`` in 2:4 semi-structured form: raises on the CPU, as torch's does."""
    if transposed:
        warnings.warn("Setting transpose from `to_sparse_semi_structured` is deprecated and will be removed; "
                      "SparseSemiStructuredTensor only supports contiguous input tensors.", FutureWarning, stacklevel=2)
    kind = SparseSemiStructuredTensorCUTLASS if SparseSemiStructuredTensor._FORCE_CUTLASS else \
        SparseSemiStructuredTensorCUSPARSELT
    return kind.from_dense(original_tensor, alg_id=alg_id)
