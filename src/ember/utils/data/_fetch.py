"""What a DataLoader does with indices or with a stream, wherever it runs: in the main process or in a worker.

>>> from ember.utils.data._fetch import Fetcher
>>> Fetcher(list("abcd"), lambda batch: "".join(batch), True, 3, False).fetch([0, 2])
'ac'
>>> list(Fetcher(iter("abcde"), lambda batch: "".join(batch), True, 2, True).stream())
['ab', 'cd']
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ember.utils.data.dataset import samples_at


@dataclass(frozen=True)
class Fetcher:
    """The dataset and how its samples become batches; it holds no DataLoader (a worker gets a copy of it)."""

    dataset: Any
    collate_fn: Callable
    batching: bool  # False: batch_size=None (each sample comes alone, converted)
    batch_size: int | None
    drop_last: bool

    def fetch(self, indices):
        """The batch of samples at ``indices`` (one index when batching is off)."""
        if not self.batching:
            return self.collate_fn(self.dataset[indices])
        return self.collate_fn(samples_at(self.dataset, indices))

    def stream(self) -> Iterator:
        """The batches of an iterable dataset, read from a fresh iterator of it."""
        samples = iter(self.dataset)
        if self.batch_size is None:
            yield from (self.collate_fn(sample) for sample in samples)
            return
        while batch := list(itertools.islice(samples, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield self.collate_fn(batch)


def pass_length(dataset, streams: bool, indices, batch_size: int | None, drop_last: bool) -> int:
    """How many batches one pass gives: the sampler's count, or for a stream the dataset's length, batched."""
    if not streams:
        return len(indices)
    n = len(dataset)  # a stream without __len__ has no length, as in torch
    if batch_size is None:
        return n
    return n // batch_size if drop_last else -(-n // batch_size)
