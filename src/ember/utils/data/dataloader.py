"""DataLoader: reads a dataset in batches, in order or shuffled, in the main process.

>>> import ember
>>> from ember.utils.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(ember.arange(5.0)), batch_size=2)
>>> [batch[0].tolist() for batch in loader]
[[0.0, 1.0], [2.0, 3.0], [4.0]]
"""
from __future__ import annotations

import itertools
import warnings
from typing import Callable, Iterator

from ember import _random
from ember.utils.data.collate import default_collate, default_convert
from ember.utils.data.dataset import Dataset, IterableDataset
from ember.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


class DataLoader:
    """Batches of ``dataset``: ``batch_size`` samples each, put together by ``collate_fn``.

    ``shuffle=True`` reads the samples in a new random order on every pass; ``sampler``
    or ``batch_sampler`` choose the indices instead. ``batch_size=None`` turns batching
    off: each sample comes as it is (NumPy arrays become tensors).
    """

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | None = None, batch_sampler: Sampler | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable | None = None, multiprocessing_context=None,
                 generator: _random.Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True):
        _check_workers(num_workers, timeout, prefetch_factor, persistent_workers)
        if pin_memory:
            warnings.warn("DataLoader: pin_memory=True has no effect: ember runs on the CPU only", UserWarning,
                          stacklevel=2)
        streaming = isinstance(dataset, IterableDataset)
        if streaming:
            _check_stream_options(shuffle, sampler, batch_sampler)
        elif batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if sampler is None:
            sampler = _StreamSampler(dataset) if streaming else (
                RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last, self.generator = dataset, batch_size, drop_last, generator
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.timeout, self.worker_init_fn = num_workers, timeout, worker_init_fn
        self.pin_memory, self.prefetch_factor, self.persistent_workers = pin_memory, prefetch_factor, persistent_workers
        self.multiprocessing_context, self.pin_memory_device, self.in_order = (
            multiprocessing_context, pin_memory_device, in_order)
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else default_convert)

    def __iter__(self) -> Iterator:
        if isinstance(self.dataset, IterableDataset):
            return self._stream()
        if self.batch_sampler is None:
            return (self.collate_fn(self.dataset[i]) for i in self.sampler)
        return (self.collate_fn([self.dataset[i] for i in indices]) for indices in self.batch_sampler)

    def _stream(self) -> Iterator:
        samples = iter(self.dataset)
        if self.batch_size is None:
            yield from (self.collate_fn(sample) for sample in samples)
            return
        while batch := list(itertools.islice(samples, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # a stream without __len__ has no length, as in torch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


class _StreamSampler(Sampler):
    """Stands in for a sampler over an IterableDataset, which is read in its own order."""

    def __init__(self, dataset: IterableDataset):
        self.dataset = dataset

    def __iter__(self):
        return itertools.repeat(None)


def _check_workers(num_workers: int, timeout: float, prefetch_factor, persistent_workers: bool) -> None:
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
    if num_workers > 0:
        raise NotImplementedError(f"DataLoader: num_workers={num_workers} is not supported: ember loads batches in "
                                  "the main process; use num_workers=0")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing: it needs "
                         "num_workers > 0; set prefetch_factor to None")
    if persistent_workers:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _check_stream_options(shuffle, sampler, batch_sampler) -> None:
    """An IterableDataset is read in its own order: the options that choose an order do not apply to it."""
    for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
        if value not in (None, False):
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                             f"{name}={value}")
