"""Variable-length sequences for the recurrent layers: padding, packing and their inverses.

A ``PackedSequence`` holds the steps of a batch of sequences sorted by decreasing length, step by step:
``data[0:batch_sizes[0]]`` is the first step of every sequence, and so on.

>>> import ember
>>> from ember.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> packed = pack_sequence([ember.tensor([1.0, 2.0, 3.0]), ember.tensor([4.0, 5.0])])
>>> packed.data, packed.batch_sizes
(tensor([1., 4., 2., 5., 3.]), tensor([2, 2, 1]))
>>> pad_packed_sequence(packed, batch_first=True)[0]
tensor([[1., 2., 3.],
        [4., 5., 0.]])
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

import ember
from ember._tensor import Tensor
from ember.autograd.function import Function

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpack_sequence", "unpad_sequence"]


class PackedSequence_(NamedTuple):
    """The fields of a PackedSequence, as a named tuple."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _converting(name: str):
    """A PackedSequence method that converts its ``data`` as the tensor method ``name`` does."""
    def convert(self, *args, **kwargs) -> "PackedSequence":
        return self._with_data(getattr(self.data, name)(*args, **kwargs))
    convert.__name__ = convert.__qualname__ = name
    return convert


class PackedSequence(PackedSequence_):
    """A packed batch of sequences: ``data``, ``batch_sizes`` and the permutation that sorted the batch."""

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> "PackedSequence":
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data: Tensor) -> "PackedSequence":
        if data is self.data:  # a conversion that changed nothing gives the same sequence back, as torch's
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self) -> "PackedSequence":
        return self

    # conversions of ``data``; the indices stay as they are
    to, double, float, half = (_converting(name) for name in ("to", "double", "float", "half"))
    long, int, short, char, byte = (_converting(name) for name in ("long", "int", "short", "char", "byte"))
    cuda, pin_memory = _converting("cuda"), _converting("pin_memory")

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of the 1-D ``permutation`` (None for None): what turns sorted indices back into unsorted ones.

    >>> ember.nn.utils.rnn.invert_permutation(ember.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    inverse = ember.empty_like(permutation)
    return inverse.scatter_(0, permutation, ember.arange(permutation.numel()))


def bind(optional, fn):
    """``fn(optional)``, or None when ``optional`` is None."""
    return None if optional is None else fn(optional)


def _gather_rows(rows: Tensor, index: np.ndarray, padding_value: float) -> Tensor:
    """``rows[index]`` where index ``-1`` picks a row filled with ``padding_value``."""
    pad = ember.full((1, *rows.shape[1:]), padding_value, dtype=rows.dtype)
    index = np.where(index < 0, rows.shape[0], index)
    return ember.cat([rows, pad], 0)[ember.tensor(index.astype(np.int64))]


def _lengths_array(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D cpu "
                               f"{lengths.type().split('.')[-1].replace('Tensor', '')} tensor")
        return lengths.numpy().astype(np.int64)
    return np.asarray(list(lengths), dtype=np.int64)


def pack_padded_sequence(input: Tensor, lengths: Tensor | list[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded ``[T, B, *]`` (or ``[B, T, *]``) batch whose sequences have the given ``lengths``."""
    lengths = _lengths_array(lengths)
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if lengths.shape[0] != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.shape[0]} "
                           f"(batch_size={batch})")
    sorted_indices = None
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = ember.tensor(order.astype(np.int64))
        input = input.index_select(1, sorted_indices)
    if lengths.size and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if lengths.size and lengths[0] > steps:
        # torch reads past the end of the input here; refusing is the only safe answer
        raise RuntimeError(f"pack_padded_sequence: lengths must be at most {steps} (the padded length), "
                           f"got {lengths[0]}")
    batch_sizes = (lengths[None, :] > np.arange(lengths[0] if lengths.size else 0)[:, None]).sum(1)
    rows = np.concatenate([t * batch + np.arange(size) for t, size in enumerate(batch_sizes)] or [np.zeros(0, int)])
    data = _PackPadded.apply(input.reshape(steps * batch, *input.shape[2:]), ember.tensor(rows.astype(np.int64)))
    return PackedSequence(data, ember.tensor(batch_sizes.astype(np.int64)), sorted_indices, None)


class _PackPadded(Function):
    """The rows of a flattened padded batch that packing keeps, as one op (torch's node); its backward puts the
    gradient back in place in ember ops, so it differentiates again."""

    backward_name = "PackPaddedSequenceBackward0"

    @staticmethod
    def forward(ctx, flat, rows):
        ctx.rows, ctx.shape = rows, tuple(flat.shape)
        return flat[rows]

    @staticmethod
    def backward(ctx, grad):
        return ember.zeros(ctx.shape, dtype=grad.dtype).index_add(0, ctx.rows, grad), None


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo ``pack_padded_sequence``: the padded batch and the length of each sequence."""
    batch_sizes = sequence.batch_sizes.numpy().astype(np.int64)
    steps, batch = batch_sizes.shape[0], int(batch_sizes[0])
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    index = np.full((steps, batch), -1, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)])
    for t, size in enumerate(batch_sizes):
        index[t, :size] = offsets[t] + np.arange(size)
    padded = _gather_rows(sequence.data, index.reshape(-1), padding_value)
    padded = padded.reshape(steps, batch, *sequence.data.shape[1:])
    lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.numpy()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, ember.tensor(lengths.astype(np.int64))


def _check_sequences_stack(sequences: list[Tensor]) -> None:
    """Sequences padded together need the same trailing sizes (torch's broadcasting message when they differ)."""
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for sequence in sequences[1:]:
        for dim, (want, got) in enumerate(zip(trailing, sequence.shape[1:]), start=1):
            if want != got:
                raise RuntimeError(f"The size of tensor a ({want}) must match the size of tensor b ({got}) at "
                                   f"non-singleton dimension {dim}")


def pad_sequence(sequences: Tensor | list[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths ``[L_i, *]`` into ``[T, B, *]`` (or ``[B, T, *]``), padding them."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    _check_sequences_stack(sequences)
    lengths = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    steps = int(lengths.max()) if lengths.size else 0
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    position = np.arange(steps)[None, :]
    start = (steps - lengths)[:, None] if padding_side == "left" else np.zeros((len(sequences), 1), np.int64)
    inside = (position >= start) & (position < start + lengths[:, None])
    index = np.where(inside, offsets[:-1, None] + position - start, -1)  # [B, T]
    padded = _gather_rows(ember.cat(sequences, 0), index.reshape(-1), padding_value)
    padded = padded.reshape(len(sequences), steps, *sequences[0].shape[1:])
    return padded if batch_first else padded.transpose(0, 1)


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``[L_i, *]`` (sorted by decreasing length unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences in a ``PackedSequence``, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """The list of sequences in a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [row[:int(length)] for row, length in zip(padded_sequences, _lengths_array(lengths))]
