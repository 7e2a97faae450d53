"""In-place changes of a compressed sparse tensor (``mul_``, ``add_``, ``copy_``, ``zero_``, ``fill_``, ``sin_``,
...): the tensor takes the out-of-place result's indices and values, as COO tensors do (``sparse_inplace.py``),
with the same refusal of a tensor that autograd would have to record.

>>> import ember
>>> s = ember.tensor([[0., 2.], [3., 0.]]).to_sparse_csr()
>>> s.mul_(2).values()
tensor([4., 6.])
"""
from __future__ import annotations

import numpy as np

from ember._ops import sparse_compressed_math as M
from ember._ops.sparse_inplace import check_in_place, in_place
from ember._tensor import version_counter
from ember.sparse._compressed import is_compressed, like, make


def _takes(input, result) -> None:
    """``input`` becomes ``result`` (indices and values), its dtype kept, its version counted."""
    check_in_place(input)
    input._cidx, input._pidx = result._cidx, result._pidx
    input._val = result._val.astype(input._val.dtype, copy=False)
    input.__dict__.pop("_coordinates", None)  # the pattern may have changed
    version_counter(input)[0] += 1


def _copy(input, src, non_blocking=False):
    if not is_compressed(src) or src.layout is not input.layout:
        raise RuntimeError(f"copy_: a {input.layout} tensor copies one of its layout; convert src with "
                           f"src.to_sparse(layout={input.layout})")
    if src._data.shape != input._data.shape:
        raise RuntimeError(f"copy_: sizes differ: {list(input._data.shape)} and {list(src._data.shape)}")
    return make(src._cidx.copy(), src._pidx.copy(), src._val.copy(), src._data.shape, src.layout)


def _fill(input, value):
    return like(input, np.full_like(input._val, value))


def _zero(input):
    return M.empty_compressed("zero_", input._data.shape, input.dtype, input.layout) if input.layout not in \
        M.BLOCKED else like(input, np.zeros_like(input._val))


IN_PLACE = {
    "mul_": in_place(M.mul, _takes), "div_": in_place(M.div, _takes), "add_": in_place(M.add, _takes),
    "sub_": in_place(M.sub, _takes), "neg_": in_place(M.neg, _takes), "copy_": in_place(_copy, _takes),
    "zero_": in_place(_zero, _takes), "fill_": in_place(_fill, _takes),
}


def pointwise_in_place(function):
    return in_place(M.pointwise(function), _takes)
