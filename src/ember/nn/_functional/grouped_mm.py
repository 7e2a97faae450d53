"""``F.grouped_mm``: one matrix product per group, the groups of a mixture-of-experts layer.

A 3-d operand lists its groups along dim 0; a 2-d one is cut into groups along its jagged dim by ``offs``
(each group's end). Each group's product is an ember matmul, and the results are joined, so gradients of
every order come from the ops.

>>> import ember
>>> tokens, experts = ember.ones(5, 2), ember.stack([ember.eye(2), 2 * ember.eye(2)])
>>> ember.nn.functional.grouped_mm(tokens, experts, offs=ember.tensor([2, 5], dtype=ember.int32))
tensor([[1., 1.],
        [1., 1.],
        [2., 2.],
        [2., 2.],
        [2., 2.]])
"""
from __future__ import annotations

import ember
from ember._tensor import Tensor
from ember.overrides import overridable

__all__ = ["grouped_mm"]

nn_function = overridable("ember.nn.functional")


def _groups(offs: Tensor | None, count: int | None) -> list[slice]:
    """The slices of the jagged dim, one per group, from the groups' ends."""
    if offs is None or offs.dim() != 1 or offs.dtype != ember.int32:
        raise RuntimeError(f"grouped_mm: offsets have to be a 1-D int32 tensor (each group's end), got "
                           f"{None if offs is None else f'{offs.dtype} of shape {list(offs.shape)}'}")
    ends = [int(e) for e in offs.tolist()]
    if any(b < a for a, b in zip([0] + ends, ends)):
        raise RuntimeError(f"grouped_mm: offsets must not decrease, got {ends}")
    if count is not None and len(ends) != count:
        raise RuntimeError(f"grouped_mm: {len(ends)} offsets for {count} groups of the 3-D operand")
    return [slice(start, end) for start, end in zip([0] + ends[:-1], ends)]


def _rest(like: Tensor, shape: tuple) -> Tensor:
    # torch leaves the rows past the last group unwritten; here they are zeros
    return ember.zeros(shape, dtype=like.dtype)


@nn_function
def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None, bias: Tensor | None = None,
               out_dtype=None) -> Tensor:
    """Per group ``g``: ``mat_a``'s group times ``mat_b``'s.

    3-d by 3-d: a batched product (no ``offs``). 2-d ``[M, K]`` by 3-d ``[G, K, N]``: rows ``offs`` cuts out of
    ``mat_a`` times ``mat_b[g]``, ``[M, N]``. 3-d ``[G, M, K]`` by 2-d ``[K, N]``: ``mat_a[g]`` times the columns
    ``offs`` cuts out of ``mat_b``, ``[M, N]``. 2-d ``[M, K]`` by 2-d ``[K, N]``: the slices of ``K``, ``[G, M, N]``.
    """
    if bias is not None:
        raise RuntimeError("grouped_mm: bias is not supported yet; add it to the result")
    if mat_a.dim() not in (2, 3) or mat_b.dim() not in (2, 3):
        raise RuntimeError(f"grouped_mm: expected 2-D or 3-D operands, got {list(mat_a.shape)} and "
                           f"{list(mat_b.shape)}")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError(f"grouped_mm: contraction dims differ: mat_a is {list(mat_a.shape)}, mat_b is "
                           f"{list(mat_b.shape)} ({mat_a.shape[-1]} != {mat_b.shape[-2]})")
    if mat_a.dim() == 3 and mat_b.dim() == 3:
        if offs is not None:
            raise RuntimeError("grouped_mm: Have to provide offsets if there is a 2d matrix, or no offset if both "
                               "matrices are 3d")
        result = ember.matmul(mat_a, mat_b)
    elif mat_a.dim() == 2 and mat_b.dim() == 3:
        groups = _groups(offs, mat_b.shape[0])
        pieces = [mat_a[rows] @ mat_b[g] for g, rows in enumerate(groups)]
        tail = mat_a.shape[0] - (groups[-1].stop if groups else 0)
        result = ember.cat(pieces + [_rest(mat_a, (tail, mat_b.shape[-1]))], 0)
    elif mat_a.dim() == 3:
        groups = _groups(offs, mat_a.shape[0])
        pieces = [mat_a[g] @ mat_b[:, columns] for g, columns in enumerate(groups)]
        tail = mat_b.shape[1] - (groups[-1].stop if groups else 0)
        result = ember.cat(pieces + [_rest(mat_a, (mat_a.shape[1], tail))], 1)
    else:
        groups = _groups(offs, None)
        result = ember.stack([mat_a[:, inner] @ mat_b[inner] for inner in groups], 0)
    return result if out_dtype is None else result.to(out_dtype)
