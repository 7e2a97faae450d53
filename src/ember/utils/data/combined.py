"""Datasets made of other datasets: ``StackDataset`` (samples side by side) and ``ChainDataset`` (streams in turn).

>>> import ember
>>> from ember.utils.data import StackDataset
>>> pairs = StackDataset(image=ember.arange(3), label=ember.arange(3) * 10)
>>> pairs[1]
{'image': tensor(1), 'label': tensor(10)}
"""
from __future__ import annotations

from typing import Iterable

from ember.utils.data.dataset import Dataset, IterableDataset, samples_at

__all__ = ["ChainDataset", "StackDataset"]


class StackDataset(Dataset):
    """Sample ``i`` is the tuple (positional datasets) or dict (keyword datasets) of each dataset's sample ``i``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        lengths = {len(d) for d in datasets}
        if len(lengths) != 1:
            raise ValueError(f"Size mismatch between datasets: their lengths are {[len(d) for d in datasets]}")
        self._length = lengths.pop()
        self.datasets = args if args else kwargs

    def __getitem__(self, index: int):
        if isinstance(self.datasets, dict):
            return {name: dataset[index] for name, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """The samples at ``indices``, each dataset read through its own ``__getitems__`` where it has one."""
        columns = []
        for dataset in (self.datasets.values() if isinstance(self.datasets, dict) else self.datasets):
            column = samples_at(dataset, indices)
            if len(column) != len(indices):
                raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(column)}")
            columns.append(column)
        if isinstance(self.datasets, dict):
            return [dict(zip(self.datasets, row)) for row in zip(*columns)]
        return [tuple(row) for row in zip(*columns)]

    def __len__(self) -> int:
        return self._length


class ChainDataset(IterableDataset):
    """The samples of each iterable dataset in turn, as one stream (datasets chained on the fly)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from dataset

    def __len__(self) -> int:
        total = 0
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(dataset)
        return total
