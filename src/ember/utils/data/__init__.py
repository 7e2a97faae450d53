"""Data loading: datasets, samplers, collation and the DataLoader, as in ``torch.utils.data``."""
from ember.utils.data._workers import WorkerInfo, get_worker_info
from ember.utils.data.collate import default_collate, default_convert
from ember.utils.data.dataloader import DataLoader
from ember.utils.data.dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from ember.utils.data.sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
    "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "WorkerInfo", "default_collate", "default_convert", "get_worker_info", "random_split",
]

# ---- datasets of datasets, and the distributed sampler where torch also exports it
from ember.utils.data.combined import ChainDataset, StackDataset  # noqa: E402
from ember.utils.data.distributed import DistributedSampler  # noqa: E402

__all__ += ["ChainDataset", "DistributedSampler", "StackDataset"]
