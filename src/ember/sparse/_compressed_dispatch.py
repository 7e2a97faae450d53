"""Which implementation a call on a compressed sparse tensor (CSR, CSC, BSR, BSC) runs: one table, by the
public name the call dispatched as, as ``_dispatch.py`` does for COO tensors.

Names in ``_COMPRESSED`` run their compressed implementation; the shape and autograd readers (COO's
``_dispatch._METADATA``) run the ordinary one; anything else is refused, naming the op and layout.
"""
from __future__ import annotations

import ember
from ember import _layout
from ember._ops import sparse_compressed as C, sparse_compressed_convert as V, sparse_compressed_math as M
from ember._ops import sparse_compressed_inplace as I, sparse_compressed_methods as T
from ember._ops.sparse_math import ZERO_PRESERVING
from ember._ops.sparse_mm import OMITTED, sparse_addmm, sparse_mm
from ember._ops._support import wrap
from ember.sparse._compressed import INDEX_NAMES, KIND_NAMES, dense_ndim, is_compressed, nnz
from ember.sparse._dispatch import _cast as coo_cast, converted_as_asked, functional_relu, run


def _accessor(name: str):
    """``crow_indices()`` and the like: the index array, where the layout has it (a tensor sharing its memory)."""
    position = 0 if name in ("crow_indices", "ccol_indices") else 1

    def read(input):
        if name not in INDEX_NAMES[input.layout]:
            T.refuse_accessor(name, input)
        return wrap(input._pidx if position else input._cidx)

    return read


def _copy_of(name: str):
    read = _accessor(name)
    return lambda input: read(input).clone()  # (out= is written by the dispatch's run)


def _to(input, *args, **kwargs):
    return converted_as_asked(input, args, kwargs, M.converted, M.clone)


def _cast(dtype_name: str):
    return coo_cast(dtype_name, M.converted)


def _transpose(input, dim0, dim1):
    return V.transpose(input, dim0, dim1)


def _t(input):
    if input._data.ndim != 2:
        raise RuntimeError(f"t() expects a 2-d {KIND_NAMES[input.layout]} tensor, got size {list(input._data.shape)}")
    return V.transpose(input, 0, 1)


def _no_coo(name: str):
    def refuse(input, *args, **kwargs):
        raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got {KIND_NAMES[input.layout]}; "
                           "convert with .to_sparse() first")

    return refuse


def _no_strides(name: str):
    def refuse(input, *args, **kwargs):
        raise RuntimeError(f"Sparse CSR tensors do not have {name} ({KIND_NAMES[input.layout]} layout); convert "
                           "with .to_dense() first")

    return refuse


def _no_dense_data(name: str, error=RuntimeError):
    """What reads a dense tensor's elements: refused with torch's error type, the fix named."""
    def refuse(input, *args, **kwargs):
        input = input[0] if isinstance(input, (list, tuple)) else input
        raise error(f"{name}: can't read a {KIND_NAMES[input.layout]} layout tensor's elements as a dense "
                    "tensor's. Use Tensor.to_dense() first")

    return refuse


_COMPRESSED = {
    "crow_indices": _accessor("crow_indices"), "col_indices": _accessor("col_indices"),
    "ccol_indices": _accessor("ccol_indices"), "row_indices": _accessor("row_indices"),
    "crow_indices_copy": _copy_of("crow_indices"), "col_indices_copy": _copy_of("col_indices"),
    "ccol_indices_copy": _copy_of("ccol_indices"), "row_indices_copy": _copy_of("row_indices"),
    "values": C.values_of, "values_copy": lambda input: C.values_of(input).clone(),
    "_nnz": nnz, "sparse_dim": lambda input: 2, "dense_dim": dense_ndim,
    "indices": _no_coo("indices"), "_indices": _no_coo("_indices"), "coalesce": _no_coo("coalesce"),
    "is_coalesced": _no_coo("is_coalesced"), "sparse.sum": _no_coo("coalesce"),
    "stride": _no_strides("strides"), "is_contiguous": _no_strides("is_contiguous"),
    "narrow_copy": _no_strides("strides"),
    "numpy": _no_dense_data("numpy", TypeError), "tolist": _no_dense_data("tolist"), "item": _no_dense_data("item"),
    "reshape": _no_dense_data("reshape"), "cat": _no_dense_data("cat"), "concat": _no_dense_data("concat"),
    "stack": _no_dense_data("stack"),
    "to_dense": C.to_dense, "to_sparse": V.to_sparse, "to_sparse_coo": V.to_coo,
    "to_sparse_csr": lambda input, dense_dim=None: V.convert(input, _layout.sparse_csr, None, dense_dim),
    "to_sparse_csc": lambda input, dense_dim=None: V.convert(input, _layout.sparse_csc, None, dense_dim),
    "to_sparse_bsr": lambda input, blocksize, dense_dim=None: V.convert(input, _layout.sparse_bsr, blocksize,
                                                                        dense_dim),
    "to_sparse_bsc": lambda input, blocksize, dense_dim=None: V.convert(input, _layout.sparse_bsc, blocksize,
                                                                        dense_dim),
    "t": _t, "transpose": _transpose, "swapaxes": _transpose, "swapdims": _transpose,
    "mm": lambda input, mat2, *, out=None: M.matmul(input, mat2),
    "matmul": lambda input, other, *, out=None: M.matmul(input, other, "matmul"),
    "__matmul__": lambda input, other: M.matmul(input, other, "matmul"),
    "__rmatmul__": lambda input, other: M.matmul(other, input, "matmul"),
    "sparse.mm": lambda mat1, mat2, reduce=OMITTED: sparse_mm(mat1, mat2, reduce, others=M.matmul),
    "sparse.addmm": lambda mat, mat1, mat2, beta=1.0, alpha=1.0: sparse_addmm(mat, mat1, mat2, beta, alpha,
                                                                              others=M.addmm),
    "addmm": M.addmm, "mv": M.mv, "addmv": M.addmv, "nn.functional.linear": M.linear,
    "add": M.add, "sub": M.sub, "mul": M.mul, "div": M.div, "neg": M.neg, "negative": M.neg,
    "pow": M.power, "__pow__": M.power, "sum": M.total,
    "clone": M.clone, "detach": M.detach, "data.__get__": M.detach, "to": _to,
    "double": _cast("float64"), "float": _cast("float32"), "half": _cast("float16"), "int": _cast("int32"),
    "long": _cast("int64"), "bool": _cast("bool"), "zeros_like": M.zeros_like, "new_zeros": M.new_zeros,
    "empty_like": M.zeros_like, "new_empty": M.new_zeros,
    "sparse.sampled_addmm": M.sampled_addmm, "select": M.select, "__getitem__": M.getitem,
    "nn.functional.relu": functional_relu(M.pointwise(ember.relu), I.pointwise_in_place(ember.relu)),
}
_COMPRESSED.update({name: M.pointwise(getattr(ember, name)) for name in ZERO_PRESERVING})
_COMPRESSED.update({name + "_": I.pointwise_in_place(getattr(ember, name)) for name in ZERO_PRESERVING
                    if hasattr(ember.Tensor, name + "_")})
_COMPRESSED.update(I.IN_PLACE)


def handle(func, args: tuple, kwargs: dict):
    layout = next((a.layout for a in args if is_compressed(a)), _layout.sparse_csr)
    return run(func, args, kwargs, _COMPRESSED, f"{KIND_NAMES[layout]} layout ({layout})", "compressed sparse")
