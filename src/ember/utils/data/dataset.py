"""Datasets: what a DataLoader reads, by index (``Dataset``) or as a stream (``IterableDataset``).

>>> import ember
>>> from ember.utils.data import TensorDataset, random_split
>>> pairs = TensorDataset(ember.arange(4.0), ember.tensor([0, 1, 0, 1]))
>>> pairs[1]
(tensor(1.), tensor(1))
>>> [len(part) for part in random_split(pairs, [0.5, 0.5])]
[2, 2]
"""
from __future__ import annotations

import bisect
import math
import warnings
from typing import Iterable, Sequence

from ember import _random


class Dataset:
    """A collection of samples read by index: subclasses define ``__getitem__`` (and usually ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__ to be read by index")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__``; a DataLoader reads it in order."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__ to be read as a stream")

    def __add__(self, other: "IterableDataset"):
        from ember.utils.data.combined import ChainDataset  # (combined.py builds on this module)

        return ChainDataset([self, other])


def samples_at(dataset, indices: list) -> list:
    """The samples of ``dataset`` at ``indices``: from one call of its ``__getitems__`` where it has one (a dataset
    that reads a batch at once), else one by one.

    >>> samples_at(["a", "b", "c"], [2, 0])
    ['c', 'a']
    """
    getitems = getattr(dataset, "__getitems__", None)
    if callable(getitems):
        return getitems(indices)
    return [dataset[i] for i in indices]


class TensorDataset(Dataset):
    """Samples are the rows of the given tensors, which must all have as many rows."""

    def __init__(self, *tensors):
        if tensors:
            rows = {t.size(0) for t in tensors}
            if len(rows) > 1:
                raise AssertionError(f"TensorDataset: Size mismatch between tensors: their sizes in dim 0 are "
                                     f"{[t.size(0) for t in tensors]}; give tensors with as many rows")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """Several datasets read as one, in order."""

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("ConcatDataset: datasets should not be an empty iterable; give at least one dataset")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset; chain the streams' iterators instead")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise ValueError(f"ConcatDataset: index {index} is out of range for a dataset of length {len(self)}")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list) -> list:
        return samples_at(self.dataset, [self.indices[i] for i in indices])

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence, generator: _random.Generator | None = None) -> list[Subset]:
    """Split ``dataset`` at random into subsets of the given lengths (counts, or fractions that sum to 1)."""
    lengths = _counts(len(dataset), list(lengths))
    if sum(lengths) != len(dataset):
        raise ValueError(f"random_split: the lengths sum to {sum(lengths)}, but the dataset has {len(dataset)} "
                         "samples; give lengths that add up to it, or fractions that add up to 1")
    from ember._creation import randperm

    order = randperm(sum(lengths), generator=generator).tolist()
    parts, start = [], 0
    for n in lengths:
        parts.append(Subset(dataset, order[start:start + n]))
        start += n
    return parts


def _counts(total: int, lengths: list) -> list[int]:
    """Fractions as counts: each takes floor(fraction * total), and what is left goes one each, round robin."""
    if not (math.isclose(sum(lengths), 1) and sum(lengths) <= 1):
        return lengths
    for i, fraction in enumerate(lengths):
        if not 0 <= fraction <= 1:
            raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1: {fraction}")
    counts = [int(math.floor(total * f)) for f in lengths]
    for i in range(total - sum(counts)):
        counts[i % len(counts)] += 1
    for i, n in enumerate(counts):
        if n == 0:
            warnings.warn(f"random_split: the split at index {i} has length 0: an empty dataset", UserWarning,
                          stacklevel=3)
    return counts
