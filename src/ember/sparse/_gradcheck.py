"""How ``gradcheck`` checks a function of sparse tensors (COO or compressed): through dense leaves that stand
for them.

With ``masked=True`` a sparse input is checked through its stored values (the gradient on
the tensor's pattern is what is compared); with ``masked=False`` (the default, as in torch)
through its dense form, so every element is perturbed and a gradient kept on the pattern
(``sparse.mm``'s) does not pass. Sparse outputs are compared as dense ones.

>>> import ember
>>> s = ember.tensor([[0., 2.], [3., 0.]], dtype=ember.float64).to_sparse().requires_grad_()
>>> d = ember.ones(2, 1, dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradcheck(ember.sparse.mm, (s, d), masked=True)
True
>>> ember.autograd.gradcheck(ember.mm, (s, d))
True
"""
from __future__ import annotations

from typing import Callable

from ember._ops._support import wrap
from ember._ops.sparse import coalesce, from_values, is_sparse, to_dense, to_sparse
from ember.sparse._compressed import BLOCKED, blocksize, dense_ndim, is_compressed


def _stand_in(x, masked: bool):
    """The dense leaf checked in place of ``x`` (``x`` itself if it is not sparse)."""
    if is_compressed(x):
        leaf = wrap(x._val.copy()) if masked else to_dense(x.detach()).detach()
        return leaf.requires_grad_(x.requires_grad)
    if not is_sparse(x):
        return x
    stored = coalesce(x.detach())
    leaf = wrap(stored._val.copy()) if masked else to_dense(stored).detach()
    return leaf.requires_grad_(x.requires_grad)


def _rebuilt(leaf, original, masked: bool):
    """The sparse tensor ``leaf`` stands for, recorded, so its gradient reaches the leaf."""
    if is_compressed(original):
        from ember._ops import sparse_compressed, sparse_compressed_convert

        if masked:
            return sparse_compressed.from_values(leaf, sparse_compressed.pattern_of(original))
        block = blocksize(original) if original.layout in BLOCKED else None
        return sparse_compressed_convert.convert(leaf, original.layout, block, dense_ndim(original))
    if not is_sparse(original):
        return leaf
    if masked:
        stored = coalesce(original.detach())
        return from_values(leaf, stored._ind, stored._data.shape, True)
    return to_sparse(leaf, original._ind.shape[0])


def _dense(value):
    if isinstance(value, tuple):
        return tuple(_dense(v) for v in value)
    return to_dense(value) if is_sparse(value) or is_compressed(value) else value


def as_dense_problem(func: Callable, inputs: tuple, masked: bool) -> tuple:
    """``func`` and ``inputs`` with every sparse input replaced by a dense leaf and every sparse output made dense."""
    if not any(is_sparse(x) or is_compressed(x) for x in inputs):
        return func, inputs

    def dense_func(*args):
        return _dense(func(*(_rebuilt(a, x, masked) for a, x in zip(args, inputs))))

    return dense_func, tuple(_stand_in(x, masked) for x in inputs)
