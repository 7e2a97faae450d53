"""``hash_tensor``: the elements' bits xor-ed together, as torch 2.13 hashes a tensor.

Each element is widened to its 64-bit kind (a float to float64, a signed integer to int64, an unsigned one
or a bool to uint64) and its 64 bits, read as uint64, are xor-ed over the reduced dims. Equal tensors hash
equal; the order of the elements does not matter.

>>> import ember
>>> ember.hash_tensor(ember.tensor([[1.0, 2.0], [1.0, 3.0]]), 0)
tensor([               0, 2251799813685248], dtype=ember.uint64)
"""
from __future__ import annotations

import numpy as np

from ember._dtype import BF16, scalar_type_name
from ember._ops._support import ember_function, require_tensor, wrap
from ember._ops.out import into_out
from ember._ops.reduction import reduction_axes
from ember._tensor import Tensor

_BITS = np.dtype(np.uint64)


def _as_bits(data: np.ndarray) -> np.ndarray:
    """The elements as 64 bits each: floats through float64, signed integers through int64 (sign-extended)."""
    kind = "f" if data.dtype is BF16 else data.dtype.kind
    if kind == "c":
        raise NotImplementedError(
            f'hash_tensor: "xor_sum_cpu" not implemented for \'{scalar_type_name(data.dtype)}\'; hash the real and '
            "imaginary parts instead, e.g. ember.hash_tensor(ember.view_as_real(x))"
        )
    wide = {"f": np.float64, "i": np.int64}.get(kind, np.uint64)
    return data.astype(wide).view(_BITS)


@ember_function
def hash_tensor(input: Tensor, dim: int | tuple[int, ...] | None = None, *, keepdim: bool = False, mode: int = 0,
                out: Tensor | None = None) -> Tensor:
    """A uint64 hash of the elements over ``dim`` (every dim when None or empty); ``mode=0`` (xor) is the only mode.

    >>> ember.hash_tensor(ember.tensor([1, 2, 3]))
    tensor(0, dtype=ember.uint64)
    """
    x = require_tensor(input, "hash_tensor")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}; the only mode is 0 (an xor of the elements' bits)")
    axes = reduction_axes(x, dim, "hash_tensor")
    data = x._data
    if not data.size:
        _check_empty(data, dim, axes)
    bits = _as_bits(data)
    result = wrap(np.bitwise_xor.reduce(bits, axes, keepdims=keepdim) if axes else bits.copy())
    if out is None:
        return result
    if out.dtype is not result.dtype:
        raise RuntimeError(f"hash_tensor: expected out to be of dtype uint64, but got {scalar_type_name(out._data.dtype)}")
    return into_out("hash_tensor", result, out, x)


def _check_empty(data: np.ndarray, dim, axes: tuple) -> None:
    """As torch: an empty tensor is hashed only along named dims, each of which has elements."""
    if dim is None or (not isinstance(dim, int) and not len(dim)):
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    for axis in axes:
        if not data.shape[axis]:
            raise IndexError(f"hash_tensor: Expected reduction dim {axis} to have non-zero size.")
