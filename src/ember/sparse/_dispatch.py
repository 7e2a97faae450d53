"""Which implementation a call on a sparse tensor runs: one table, by the public name the call dispatched as.

A name in ``_SPARSE`` runs its sparse implementation; one in ``_METADATA`` (shape,
autograd state) runs the ordinary one, which reads only what a sparse tensor has;
anything else is refused, naming the op and the layout, as torch refuses it.
"""
from __future__ import annotations

import ember
from ember._ops import sparse as S, sparse_inplace as I, sparse_math as M, sparse_select as X, sparse_shape as SH
from ember._ops.sparse_compressed_methods import COMPRESSED_METHODS_OF_COO
from ember._ops.sparse_mm import OMITTED, sparse_addmm, sparse_mm
from ember.overrides import DisableTorchFunctionSubclass, resolve_name


def _sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if dim is None:
        return M.total(input, dtype=dtype)
    summed = M.sparse_sum(input, dim, dtype)
    if keepdim:  # the summed dimensions come back with size 1
        for d in sorted(d % input._data.ndim for d in ((dim,) if isinstance(dim, int) else dim)):
            summed = SH.unsqueeze(summed, d) if S.is_sparse(summed) else summed.unsqueeze(d)
    return summed


def asked_dtype(input, args: tuple, kwargs: dict):
    """The dtype ``t.to(...)`` asks for: given, or another tensor's (None if neither)."""
    from ember._dtype import dtype as dtype_class

    dtype = kwargs.get("dtype")
    for a in args:
        if isinstance(a, dtype_class):
            dtype = a
        elif hasattr(a, "layout") and hasattr(a, "dtype") and a is not input:  # t.to(other)
            dtype = a.dtype
    return dtype


def converted_as_asked(input, args: tuple, kwargs: dict, converted, clone):
    """``s.to(...)``: ``converted`` to the dtype asked for, and a copy even without a conversion when asked
    (``copy=True``); a memory format other than preserve_format refused, as torch."""
    from ember import preserve_format

    memory_format = kwargs.get("memory_format")
    if memory_format is not None and memory_format is not preserve_format:
        raise RuntimeError(f"to(): a sparse tensor only takes memory_format=ember.preserve_format, got {memory_format}")
    result = converted(input, asked_dtype(input, args, kwargs))
    return clone(result) if kwargs.get("copy") and result is input else result


def _to(input, *args, **kwargs):
    return converted_as_asked(input, args, kwargs, M.converted, M.clone)


def _cast(dtype_name: str, converted=M.converted):
    def cast(input, memory_format=None):
        if memory_format is not None and memory_format is not ember.preserve_format:
            raise RuntimeError(f"{dtype_name}(): a sparse tensor only takes memory_format=ember.preserve_format, got "
                               f"{memory_format}")
        return converted(input, getattr(ember, dtype_name))

    return cast


def _type(input, dtype=None, non_blocking=False):
    """``s.type()``: ``'ember.sparse.FloatTensor'``; ``s.type(dtype)`` or ``s.type('ember.sparse.DoubleTensor')``: a cast."""
    from ember._dtype import dtype as dtype_class
    from ember._tensor_methods import _LEGACY_TYPE_NAMES

    if dtype is None:
        return "ember.sparse." + _LEGACY_TYPE_NAMES[input.dtype]
    if isinstance(dtype, str):
        name = dtype.replace("torch.", "ember.").replace("ember.sparse.", "ember.")
        by_name = {"ember." + legacy: d for d, legacy in _LEGACY_TYPE_NAMES.items()}
        if name not in by_name:
            raise ValueError(f"type(): invalid type {dtype!r}; expected one of {sorted(by_name)}")
        dtype = by_name[name]
    if not isinstance(dtype, dtype_class):
        raise TypeError(f"type(): expected a dtype or a type name, got {dtype!r}")
    return M.converted(input, dtype)


def _norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if dim is not None and sorted(d % input._data.ndim for d in ((dim,) if isinstance(dim, int) else dim)) != \
            list(range(input._data.ndim)):
        raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' must either be empty or "
                           "contain all dimensions of the input")
    if keepdim:
        raise RuntimeError("norm_sparse currently does not support keepdim=True; reshape the 0-d result instead")
    return S.values_of(input).norm(2 if p == "fro" else p, dtype=dtype)


def _to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout is not None and layout is not input.layout:
        return S.to_sparse(input, sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)
    if sparse_dim is not None and sparse_dim != input._ind.shape[0]:
        raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self.sparse_dim() "
                           "is not supported")
    for name, value in (("blocksize", blocksize), ("dense_dim", dense_dim)):
        if value is not None:  # torch refuses them from COO to COO, whatever their value
            raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with {name} argument given is not "
                               f"supported; leave {name} out (the tensor is already sparse COO)")
    return input


def functional_relu(relu, relu_in_place):
    """``F.relu(s, inplace=...)`` of a sparse tensor: ``relu`` of its values, or ``relu_in_place`` when asked."""
    def functional(input, inplace: bool = False):
        return relu_in_place(input) if inplace else relu(input)

    return functional


def _no_reshape(input, *shape):
    raise RuntimeError("reshape is not implemented for sparse tensors; use .to_dense().reshape(...), or build the "
                       "indices of the new shape with ember.sparse_coo_tensor")


def _div(input, other, *, rounding_mode=None):
    import numbers

    if not S.is_sparse(input) or not isinstance(other, numbers.Number) or rounding_mode is not None:
        raise RuntimeError("div: a sparse tensor can only be divided by a number (without rounding_mode)")
    return S.scale(input, 1 / other)


def _values(input):
    if not input._coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return S.Values.apply(input)


def _indices(input):
    if not input._coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return S.wrap(input._ind)


def _data(input):
    return M.detach(input)


def _transpose(input, dim0, dim1):
    return S.transpose(input, dim0, dim1)


def _t(input):
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                           f"{input._ind.shape[0]} sparse and {input._val.ndim - 1} dense dimensions")
    return input if input._data.ndim < 2 else S.transpose(input, 0, 1)


_SPARSE = {
    "mm": lambda input, mat2, *, out=None: M.matmul(input, mat2),
    "matmul": lambda input, other, *, out=None: M.matmul(input, other),
    "__matmul__": lambda input, other: M.matmul(input, other),
    "__rmatmul__": lambda input, other: M.matmul(other, input),
    "smm": M.smm,
    "dsmm": lambda input, mat2: M.matmul(input, mat2),
    "spmm": lambda input, mat2: M.matmul(input, mat2),
    "hsmm": lambda mat1, mat2: M.hspmm(mat1, mat2),
    "sspaddmm": lambda input, mat1, mat2, *, beta=1, alpha=1, out=None: M.sspaddmm(input, mat1, mat2, beta=beta,
                                                                                  alpha=alpha),
    "saddmm": lambda input, mat1, mat2, *, beta=1, alpha=1, out=None: M.sspaddmm(input, mat1, mat2, beta=beta,
                                                                                alpha=alpha),
    "hspmm": lambda mat1, mat2, *, out=None: M.hspmm(mat1, mat2),
    "addmm": lambda input, mat1, mat2, *, beta=1, alpha=1, out=None: M.addmm(input, mat1, mat2, beta=beta, alpha=alpha),
    "add": lambda input, other, *, alpha=1, out=None: M.add(input, other, alpha=alpha),
    "sub": lambda input, other, *, alpha=1, out=None: M.sub(input, other, alpha=alpha),
    "mul": lambda input, other, *, out=None: M.mul(input, other),
    "div": _div,
    "neg": lambda input, *, out=None: M.neg(input),
    "negative": lambda input, *, out=None: M.neg(input),
    "t": _t,
    "transpose": _transpose,
    "swapaxes": _transpose,
    "swapdims": _transpose,
    "sum": _sum,
    "to_dense": S.to_dense,
    "to_sparse": _to_sparse,
    "to_sparse_coo": lambda input: input,
    "coalesce": S.coalesce,
    "is_coalesced": lambda input: input._coalesced,
    "indices": _indices,
    "values": _values,
    "_indices": lambda input: S.wrap(input._ind),
    "_values": lambda input: S.wrap(input._val),
    "sparse_dim": lambda input: input._ind.shape[0],
    "dense_dim": lambda input: input._val.ndim - 1,
    "_nnz": lambda input: input._ind.shape[1],
    "sparse_mask": M.sparse_mask,
    "clone": M.clone,
    "detach": M.detach,
    "data.__get__": _data,
    "to": _to,
    "double": _cast("float64"),
    "float": _cast("float32"),
    "half": _cast("float16"),
    "sparse.mm": lambda mat1, mat2, reduce=OMITTED: sparse_mm(mat1, mat2, reduce, others=M.matmul),
    "sparse.addmm": lambda mat, mat1, mat2, beta=1.0, alpha=1.0: sparse_addmm(mat, mat1, mat2, beta, alpha,
                                                                              others=M.addmm),
    "sparse.sum": lambda input, dim=None, dtype=None: M.sparse_sum(input, dim, dtype),
    "sparse.softmax": lambda input, dim, *, dtype=None: M.softmax(input, dim, dtype),
    "sparse.log_softmax": lambda input, dim, *, dtype=None: M.log_softmax(input, dim, dtype),
    "sparse.sampled_addmm": M.sampled_addmm,
}

_SPARSE.update({
    "cat": SH.cat, "concat": SH.cat, "concatenate": SH.cat, "stack": SH.stack,
    "unsqueeze": SH.unsqueeze, "permute": SH.permute, "reshape": _no_reshape, "narrow_copy": SH.narrow_copy,
    "index_select": lambda input, dim, index, *, out=None: X.index_select(input, dim, index),
    "select": X.select, "__getitem__": X.getitem,
    "zeros_like": SH.zeros_like, "empty_like": SH.zeros_like, "new_zeros": SH.new_zeros, "new_empty": SH.new_zeros,
    "int": _cast("int32"), "long": _cast("int64"), "short": _cast("int16"), "bool": _cast("bool"),
    "byte": _cast("uint8"), "char": _cast("int8"), "type": _type, "norm": _norm,
    "pow": M.power, "__pow__": M.power,
    "nn.functional.relu": functional_relu(M.pointwise(ember.relu), I.in_place(M.pointwise(ember.relu))),
})
_SPARSE.update({name: M.pointwise(getattr(ember, name)) for name in M.ZERO_PRESERVING})
_SPARSE.update(I.IN_PLACE)
_SPARSE.update(COMPRESSED_METHODS_OF_COO)

# What reads only a tensor's shape, dtype or autograd state: the ordinary implementation serves a sparse tensor.
_METADATA = {
    "shape.__get__", "dtype.__get__", "device.__get__", "ndim.__get__", "itemsize.__get__", "requires_grad.__get__",
    "requires_grad.__set__", "grad.__get__", "grad.__set__", "grad_fn.__get__", "is_leaf.__get__",
    "retains_grad.__get__", "size", "dim", "ndimension", "numel", "nelement", "element_size", "is_floating_point",
    "is_complex", "get_device", "cpu", "requires_grad_", "retain_grad", "register_hook",
    "register_post_accumulate_grad_hook", "detach_", "__len__", "__format__",
}
# What runs autograd on the tensors it is given: its implementation, with the protocol on, since the backward
# pass it runs may call users' hooks that compute with a sparse gradient.
_AUTOGRAD = {"backward", "autograd.backward", "autograd.grad"}


def _short(name: str) -> str:
    """``'ember.Tensor.mm'`` and ``'ember.mm'`` -> ``'mm'``; ``'ember.sparse.mm'`` -> ``'sparse.mm'``."""
    for prefix in ("ember.Tensor.", "ember."):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def run(func, args: tuple, kwargs: dict, table: dict, layout: str, kind: str):
    """The call as ``table`` implements it for a tensor of ``layout`` (described as ``kind`` in a refusal)."""
    name = resolve_name(func) or getattr(func, "__name__", repr(func))
    short = _short(name)
    impl = table.get(short)
    if impl is not None:
        out = kwargs.pop("out", None) if kwargs else None
        result = impl(*args, **kwargs)
        return result if out is None else _into(short, result, out)
    if short in _METADATA:
        with DisableTorchFunctionSubclass():
            return func(*args, **kwargs)
    if short in _AUTOGRAD:
        return func.__wrapped__(*args, **kwargs)
    raise NotImplementedError(
        f"Could not run '{name}' with arguments from the {layout}: the op has no {kind} implementation. Convert with "
        f".to_dense() first, or see docs/sparse.md for the ops a {kind} tensor supports"
    )


def _into(op: str, result, out):
    """``out=`` for a sparse tensor's op: a dense result written into ``out``; a sparse one refused (not ignored)."""
    from ember._ops.out import into_out  # imported late: the ops import this package

    if S.is_sparse(result) or getattr(result, "layout", None) is not ember.strided:
        raise NotImplementedError(f"{op}(): out= with a sparse result is not supported in ember; use the returned "
                                  f"tensor (e.g. y = ember.{op}(...))")
    return into_out(op, result, out)


def handle(func, args: tuple, kwargs: dict):
    return run(func, args, kwargs, _SPARSE, "sparse COO layout (ember.sparse_coo)", "sparse")
