"""``DistributedSampler``: each rank reads its own share of the dataset, in an order all ranks agree on.

>>> from ember.utils.data.distributed import DistributedSampler
>>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)]
[[0, 2, 4], [1, 3, 0]]
"""
from __future__ import annotations

import math
from typing import Iterator

import ember
from ember.utils.data.sampler import Sampler


class DistributedSampler(Sampler):
    """Indices for one of ``num_replicas`` ranks: every ``num_replicas``-th index of one shared order.

    With ``shuffle``, the order is a permutation seeded by ``seed + epoch``, the same on every rank: call
    ``set_epoch`` before each epoch for a new one. Unless ``drop_last``, the order is padded with its own
    first indices so that every rank gets as many; with it, the tail that would not divide evenly is dropped.
    ``num_replicas`` and ``rank`` default to the default process group's.
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False):
        if num_replicas is None or rank is None:
            from ember import distributed as dist
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if not dist.is_initialized():  # (torch's error: the default group's size is asked for without one)
                raise ValueError("Default process group has not been initialized, please make sure to call "
                                 "init_process_group.")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        if self.shuffle:
            g = ember.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = ember.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / max(len(indices), 1)))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order to use next (with ``shuffle``): every rank must set the same one."""
        self.epoch = epoch
