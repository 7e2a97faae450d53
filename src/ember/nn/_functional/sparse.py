"""Embedding lookups of ``nn.functional``: ``embedding``, ``embedding_bag`` and ``one_hot``.

>>> import ember
>>> ember.nn.functional.one_hot(ember.tensor([0, 2]))
tensor([[1, 0, 0],
        [0, 0, 1]])
"""
from __future__ import annotations

import numpy as np

import ember
from ember._ops.embedding import Embedding, EmbeddingBag
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.overrides import overridable

__all__ = ["embedding", "embedding_bag", "one_hot"]

nn_function = overridable("ember.nn.functional")

_MODES = ("sum", "mean", "max")


def _check_indices(name: str, indices: Tensor, rows: int) -> None:
    if indices.dtype not in (ember.int64, ember.int32):
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {indices.dtype} instead (while checking arguments for {name}); convert with indices.long()"
        )
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= rows):
        raise IndexError(
            f"index out of range in self: {name} indices must lie in [0, {rows}), got values from "
            f"{int(indices.min())} to {int(indices.max())}"
        )


def _padding_row(padding_idx: int | None, rows: int) -> int | None:
    """``padding_idx`` as a row number (negative counts from the end), as torch checks it."""
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise AssertionError(f"Padding_idx must be within num_embeddings: got {padding_idx} for {rows} rows")
    return padding_idx % rows


def _renorm_rows(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale the rows ``indices`` refers to in place so that none has a norm above ``max_norm``."""
    with no_grad():
        rows = ember.tensor(np.unique(indices.numpy()))
        picked = weight[rows]
        norms = ember.linalg.vector_norm(picked, norm_type, dim=1, keepdim=True)
        scale = ember.where(norms > max_norm, max_norm / (norms + 1e-7), ember.ones((), dtype=weight.dtype))
        weight[rows] = picked * scale


@nn_function
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` (``[num, dim]``) picked by ``input``'s indices: the result is ``[*input.shape, dim]``.

    ``padding_idx``'s row gets no gradient; ``max_norm`` renormalises the used rows of ``weight`` in place.
    """
    if weight.dim() != 2:
        raise RuntimeError(f"embedding: 'weight' must be 2-D [num_embeddings, embedding_dim], got {list(weight.shape)}")
    _check_indices("embedding", input, weight.shape[0])
    padding_idx = _padding_row(padding_idx, weight.shape[0])
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    return Embedding.apply(weight, input, padding_idx, scale_grad_by_freq, sparse)


@nn_function
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of the embeddings of each bag of indices: ``[bags, dim]``.

    A 2-d ``input`` holds one bag per row; a 1-d one is cut into bags where ``offsets`` start.
    Indices equal to ``padding_idx`` are left out of their bag; an empty bag gives zeros.

    >>> w = ember.tensor([[1., 1.], [3., 5.]])
    >>> ember.nn.functional.embedding_bag(ember.tensor([0, 1, 1]), w, ember.tensor([0, 2]))
    tensor([[2., 3.],
            [3., 5.]])
    """
    # (in torch's order: the shapes of the arguments, then the mode)
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError(
            f"embedding_bag: per_sample_weights must have the input's shape {list(input.shape)}, "
            f"got {list(per_sample_weights.shape)}"
        )
    if weight.dim() != 2:
        raise ValueError(f"embedding_bag: weight has to be a 2D Tensor [num_embeddings, embedding_dim], but got "
                         f"Tensor of dimension {weight.dim()}")
    flat, bags, count = _bags(input, offsets, include_last_offset)
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    if scale_grad_by_freq and mode == "max":  # (a bag's max takes one row: there is no frequency to scale by)
        raise ValueError("embedding_bag: max mode does not support scaling the gradient by the frequency; use "
                         "mode='sum' or 'mean', or scale_grad_by_freq=False")
    if sparse and mode == "max":
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(f"embedding_bag: Expected tensor for argument #1 'weight' to have the same type as tensor "
                           f"for argument #1 'per_sample_weights'; but {weight.dtype} does not equal "
                           f"{per_sample_weights.dtype}; convert them, e.g. per_sample_weights.to({weight.dtype})")
    _check_bag_indices(flat, weight.shape[0])
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    padding_idx = _padding_row(padding_idx, weight.shape[0])
    keep = bags >= 0
    if padding_idx is not None:
        keep = keep & (flat != padding_idx)
    kept_bags, rows = bags[keep], rows[keep]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[keep].unsqueeze(1)
    return EmbeddingBag.apply(rows, kept_bags, count, mode)


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple[Tensor, Tensor, int]:
    """The flat indices, each one's bag number, and the number of bags."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        count, length = input.shape
        return input.reshape(-1), ember.arange(count).repeat_interleave(length), count
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    if offsets.dtype not in (ember.int64, ember.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {offsets.type()} instead (while checking arguments for embedding_bag)")
    bounds = offsets.numpy().astype(np.int64)
    _check_offsets(bounds, input.shape[0], include_last_offset)
    starts = bounds[:-1] if include_last_offset else bounds
    # (past include_last_offset's last offset the indices go to the last bag, as in torch's double precision sum
    # and its gradient; with no bag at all they go to none)
    bag_of = np.searchsorted(starts, np.arange(input.shape[0]), side="right") - 1
    return input, ember.tensor(bag_of.astype(np.int64)), len(starts)


def _check_bag_indices(flat: Tensor, rows: int) -> None:
    """Every index names a row of the weight (a RuntimeError in torch's embedding_bag, not embedding's IndexError)."""
    indices = flat.numpy()
    outside = (indices < 0) | (indices >= rows)
    if outside.any():
        position = int(np.argmax(outside))
        raise RuntimeError(f"Index {position} of input takes value {indices[position]} which is not in the valid "
                           f"range [0, {rows})")


def _check_offsets(offsets: np.ndarray, length: int, include_last_offset: bool) -> None:
    """Offsets start at 0, do not decrease and stay within the input; with ``include_last_offset`` there is at
    least the end."""
    if include_last_offset and not offsets.size:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if offsets.size and offsets[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {offsets[0]}")
    if (np.diff(offsets) < 0).any():  # a bag would end before it starts: torch's kernel fails on it
        raise RuntimeError(f"embedding_bag: offsets must not decrease (each bag starts where the one before ends "
                           f"or later), but got {offsets.tolist()}")
    if offsets.size and offsets[-1] > length:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {length} but got offsets[-1] of "
                           f"{offsets[-1]}")


@nn_function
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """``[*tensor.shape, num_classes]`` int64, 1 at each index; ``num_classes=-1`` takes ``max + 1``."""
    if tensor.dtype != ember.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor, got {tensor.dtype}; "
                           "convert with .long()")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    if tensor.numel() and int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if tensor.numel() and int(tensor.max()) >= num_classes:
        raise RuntimeError(f"Class values must be smaller than num_classes ({num_classes}).")
    return (tensor.unsqueeze(-1) == ember.arange(num_classes)).long()
