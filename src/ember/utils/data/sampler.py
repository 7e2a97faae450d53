"""Samplers: the order in which a DataLoader reads a dataset's indices, one at a time or in batches.

>>> from ember.utils.data import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence

import numpy as np

from ember import _random


class Sampler:
    """Yields indices (or lists of indices) into a dataset; subclasses define ``__iter__``."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """0, 1, ... len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in a random order; with ``replacement``, ``num_samples`` draws that may repeat.

    Each pass draws a fresh order from ``generator`` (or the default generator), so seeding
    with ``ember.manual_seed`` makes the passes reproducible.
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator: _random.Generator | None = None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _check_positive("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        from ember._creation import randint, randperm

        n = len(self.data_source)
        # without a generator of its own, a pass draws a seed from the default one for a generator of its own:
        # so does torch, and a seed then gives torch's order
        generator = self.generator if self.generator is not None else _random.Generator().manual_seed(_seed_drawn())
        if self.replacement:
            for _ in range(self.num_samples // _DRAWS_AT_ONCE):
                yield from randint(0, n, (_DRAWS_AT_ONCE,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % _DRAWS_AT_ONCE,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):  # more samples than the dataset has: whole permutations, then part
            yield from randperm(n, generator=generator).tolist()
        yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


_DRAWS_AT_ONCE = 32  # indices drawn with replacement come in runs of this many, as torch draws them


def _seed_drawn(generator: _random.Generator | None = None) -> int:
    """A seed from the stream of ``generator`` (or the default one): one ``random_()`` of an int64, as torch
    draws its samplers' and loaders' seeds."""
    from ember import _streams

    return int(_streams.full_range(_random.chosen(generator), np.dtype(np.int64), ()))


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order."""

    def __init__(self, indices: Sequence[int], generator: _random.Generator | None = None):
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        from ember._creation import randperm

        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: _random.Generator | None = None):
        _check_positive("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        from ember._creation import as_tensor
        from ember._dtype import float64

        weights = as_tensor(weights, dtype=float64)  # a tensor of doubles, as torch keeps them
        if weights.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}")
        self.weights, self.num_samples, self.replacement, self.generator = weights, num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        from ember._sampling import multinomial

        self._check_drawable()
        # torch's multinomial of the weights in double: a seed gives torch's indices (without replacement, past
        # the weighted indices the weightless ones follow, as torch's do, though in index order)
        yield from multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self) -> int:
        return self.num_samples

    def _check_drawable(self) -> None:
        """The draw's own errors, as torch's multinomial raises them when the sampler is first read."""
        weights = self.weights.detach().numpy()
        if (weights < 0).any() or not np.isfinite(weights).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if weights.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if self.replacement:
            return
        if self.num_samples > weights.size:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last may be shorter, unless dropped)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool):
        _check_positive("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def _check_positive(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")
