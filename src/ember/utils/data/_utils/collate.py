"""The collation functions where torch's documentation imports them from (``torch.utils.data._utils.collate``),
to batch a type of one's own through ``default_collate_fn_map``; they live in ``ember.utils.data.collate``.

>>> from ember.utils.data._utils.collate import collate, default_collate_fn_map
>>> collate([1, 2], collate_fn_map=default_collate_fn_map)
tensor([1, 2])
"""
from ember.utils.data.collate import (
    collate, collate_float_fn, collate_int_fn, collate_numpy_array_fn, collate_numpy_scalar_fn, collate_str_fn,
    collate_tensor_fn, default_collate, default_collate_fn_map, default_convert,
)

__all__ = [
    "collate", "collate_float_fn", "collate_int_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
    "collate_str_fn", "collate_tensor_fn", "default_collate", "default_collate_fn_map", "default_convert",
]
