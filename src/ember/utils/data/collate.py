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
from typing import Callable, Dict, Tuple, Union

import numpy as np

from ember._tensor import Tensor


CollateFnMap = Dict[Union[type, Tuple[type, ...]], Callable]


def collate(batch: list, *, collate_fn_map: CollateFnMap | None = None):
    """One batch from a list of samples that all have the same structure: the first sample's type chooses the
    function of ``collate_fn_map`` that batches them (its exact type first, then the first entry it is an
    instance of); mappings, namedtuples and sequences are batched field by field, recursing.

    ``default_collate`` is ``collate`` with ``default_collate_fn_map``; a program that batches a type of its own
    adds ``{its_type: function(batch, *, collate_fn_map=None)}`` to a copy of that map (or to the map itself).

    >>> class Point:
    ...     def __init__(self, x): self.x = x
    >>> def collate_points(batch, *, collate_fn_map=None):
    ...     return [p.x for p in batch]
    >>> collate([(Point(1), 2), (Point(3), 4)], collate_fn_map={**default_collate_fn_map, Point: collate_points})
    [[1, 3], tensor([2, 4])]
    """
    elem = batch[0]
    if collate_fn_map is not None:
        batcher = collate_fn_map.get(type(elem))
        if batcher is None:
            batcher = next((fn for kind, fn in collate_fn_map.items() if isinstance(elem, kind)), None)
        if batcher is not None:
            return batcher(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuilt(elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple keeps its type
        return type(elem)(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if len({len(sample) for sample in batch}) > 1:
            raise RuntimeError("default_collate: each element in list of batch should be of equal size, but the "
                               f"samples have lengths {[len(sample) for sample in batch]}")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuilt(elem, columns)
    raise TypeError(_NOT_BATCHABLE.format(type(elem)) + "; pass a collate_fn that knows how to batch it")


_NOT_BATCHABLE = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def collate_tensor_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    """Tensors of one shape, stacked along a new first dimension (sparse ones too, which torch refuses)."""
    from ember._ops.joining import stack

    return stack(list(batch), 0)


def collate_numpy_array_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None):
    """NumPy arrays (of numbers or bools) as tensors, then batched as tensors."""
    from ember._creation import as_tensor

    if batch[0].dtype.kind in "OSUV":  # strings, bytes, objects: no tensor holds them
        raise TypeError(_NOT_BATCHABLE.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    """NumPy scalars as one tensor of their dtype."""
    from ember._creation import as_tensor

    return as_tensor(np.array(batch))


def collate_float_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    """Python floats keep their double precision, as torch's collation keeps it."""
    from ember._creation import tensor
    from ember._dtype import float64

    return tensor(batch, dtype=float64)


def collate_int_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    """Python ints (and bools) take the dtype ``tensor()`` infers."""
    from ember._creation import tensor

    return tensor(batch)


def collate_str_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> list:
    """Strings and bytes stay a list."""
    return batch


default_collate_fn_map: CollateFnMap = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list):
    """One batch from a list of samples that all have the same structure: ``collate`` with
    ``default_collate_fn_map`` (tensors stacked, NumPy arrays and numbers made tensors, strings kept)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


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
