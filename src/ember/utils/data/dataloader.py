"""DataLoader: reads a dataset in batches, in order or shuffled, in the main process or in workers.

>>> import ember
>>> from ember.utils.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(ember.arange(5.0)), batch_size=2)
>>> [batch[0].tolist() for batch in loader]
[[0.0, 1.0], [2.0, 3.0], [4.0]]
"""
from __future__ import annotations

import itertools
import multiprocessing
import warnings
from typing import Callable, Iterator

from ember import _random
from ember.utils.data._fetch import Fetcher, pass_length
from ember.utils.data._workers import (
    WorkerIterator, check_multiprocessing_context, check_worker_options, warn_if_too_many_workers,
)
from ember.utils.data.collate import default_collate, default_convert
from ember.utils.data.dataset import Dataset, IterableDataset
from ember.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _seed_drawn


class DataLoader:
    """Batches of ``dataset``: ``batch_size`` samples each, put together by ``collate_fn``.

    ``shuffle=True`` reads the samples in a new random order on every pass; ``sampler``
    or ``batch_sampler`` choose the indices instead. ``batch_size=None`` turns batching
    off: each sample comes as it is (NumPy arrays become tensors). ``num_workers`` above 0
    loads in that many processes (see ``_workers.py``), with the batches in the same order.
    """

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | None = None, batch_sampler: Sampler | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable | None = None, multiprocessing_context=None,
                 generator: _random.Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True):
        prefetch = check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
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
        self.pin_memory, self.prefetch_factor, self.persistent_workers = pin_memory, prefetch, persistent_workers
        self.multiprocessing_context = multiprocessing_context  # checked by the property, after num_workers
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else default_convert)
        self._workers = None  # with persistent_workers, the iterator whose workers every pass uses
        self._initialized = True
        if num_workers:
            self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self) -> multiprocessing.context.BaseContext | None:
        """How the workers start: a ``multiprocessing`` context (a start method's name given is made one), or
        None for the platform's default."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        self._multiprocessing_context = check_multiprocessing_context(context, self.num_workers)

    def __setattr__(self, name: str, value) -> None:
        # the batching is settled at construction: changing these later would not change it
        if name in _SETTLED and self.__dict__.get("_initialized"):
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    def check_worker_number_rationality(self) -> None:
        """Warn when the loader has more workers than the CPUs this process may use (done on construction and
        at the start of each pass, as torch does)."""
        if self.num_workers:
            warn_if_too_many_workers(self.num_workers)

    def __iter__(self) -> Iterator:
        if self.pin_memory:  # as torch warns: when a pass starts, on a machine without an accelerator
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used (ember runs on the CPU only)", UserWarning, stacklevel=2)
        if self.num_workers:
            self.check_worker_number_rationality()
            if not self.persistent_workers:
                return WorkerIterator(self)
            if self._workers is None:  # kept from pass to pass; the workers last as long as the loader
                self._workers = WorkerIterator(self)
            else:
                self._workers.start_pass(self._batch_indices())
            return self._workers
        _seed_drawn(self.generator)  # the workers' base seed, drawn and unused: the stream moves on as torch's
        fetcher = self._fetcher()
        if self._streams:
            return _SingleProcessIterator(fetcher.stream(), self)
        return _SingleProcessIterator((fetcher.fetch(indices) for indices in self._batch_indices()), self)

    @property
    def _streams(self) -> bool:
        return isinstance(self.dataset, IterableDataset)

    def _batch_indices(self):
        """What one fetch reads: lists of indices, or single indices when batching is off."""
        return self.sampler if self.batch_sampler is None else self.batch_sampler

    def _fetcher(self) -> Fetcher:
        return Fetcher(self.dataset, self.collate_fn, self.batch_sampler is not None, self.batch_size, self.drop_last)

    def __len__(self) -> int:
        return pass_length(self.dataset, self._streams, self._batch_indices(), self.batch_size, self.drop_last)


_SETTLED = frozenset({"batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"})


class _SingleProcessIterator:
    """One pass over a DataLoader in the main process: its batches, and (as the loader) its length."""

    def __init__(self, batches: Iterator, loader: DataLoader):
        self._batches, self._loader = batches, loader

    def __iter__(self) -> _SingleProcessIterator:
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._loader)


class _StreamSampler(Sampler):
    """Stands in for a sampler over an IterableDataset, which is read in its own order."""

    def __init__(self, dataset: IterableDataset):
        self.dataset = dataset

    def __iter__(self):
        return itertools.repeat(None)


def _check_stream_options(shuffle, sampler, batch_sampler) -> None:
    """An IterableDataset is read in its own order: the options that choose an order do not apply to it."""
    for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
        if value not in (None, False):
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                             f"{name}={value}")
