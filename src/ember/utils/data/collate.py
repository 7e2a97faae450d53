"""Turning a list of samples into one batch: tensors are stacked, numbers become tensors, containers recurse.

>>> from ember.utils.data import default_collate
>>> default_collate([(1, 2.0), (3, 4.0)])
[tensor([1, 3]), tensor([2., 4.], dtype=ember.float64)]
>>> default_collate([{"x": 1}, {"x": 2}])
{'x': tensor([1, 2])}
"""
from __future__ import annotations

import collections.abc
import copy

import numpy as np

from ember._tensor import Tensor


def default_collate(batch: list):
    """One batch from a list of samples that all have the same structure."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        from ember._ops.joining import stack

        return stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        return _collate_numpy(batch, elem)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, (float, int)):
        from ember._creation import tensor
        from ember._dtype import float64

        # as torch: Python floats keep their double precision; ints (and bools) take the dtype tensor() infers
        return tensor(batch, dtype=float64) if isinstance(elem, float) else tensor(batch)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuilt(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple keeps its type
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if len({len(sample) for sample in batch}) > 1:
            raise RuntimeError("default_collate: each element in list of batch should be of equal size, but the "
                               f"samples have lengths {[len(sample) for sample in batch]}")
        columns = [default_collate(samples) for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuilt(elem, columns)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}; pass a collate_fn that knows how to batch it")


def default_convert(data):
    """What a DataLoader without batching yields: NumPy arrays and scalars become tensors, containers recurse."""
    if isinstance(data, (np.ndarray, np.generic)) and data.dtype.kind not in "OSUV":
        from ember._creation import as_tensor

        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt(data, {key: default_convert(value) for key, value in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt(data, [default_convert(d) for d in data])
    return data


def _collate_numpy(batch: list, elem):
    from ember._creation import as_tensor

    if elem.dtype.kind in "OSUV":
        raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                        f"a NumPy array of dtype {elem.dtype}")
    if isinstance(elem, np.ndarray):
        return default_collate([as_tensor(b) for b in batch])
    return as_tensor(np.array(batch))


def _rebuilt(like, contents):
    """``contents`` in the container type of ``like``: a mutable one copied and filled (a defaultdict keeps its
    factory, as torch's), another built from them when its type can be, else a dict or list."""
    if isinstance(like, collections.abc.MutableMapping):
        clone = copy.copy(like)
        clone.update(contents)
        return clone
    if isinstance(like, collections.abc.MutableSequence) and len(like) == len(contents):
        clone = copy.copy(like)
        for position, value in enumerate(contents):
            clone[position] = value
        return clone
    try:
        return type(like)(contents)
    except TypeError:
        return contents
