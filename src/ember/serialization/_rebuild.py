"""What torch's checkpoint pickles name, and the ember objects that stand for each name on loading.

A checkpoint's pickle calls ``torch._utils._rebuild_tensor_v2`` and friends and
refers to storages by ``torch.FloatStorage``-style class names. ``TORCH_GLOBALS``
maps each such name to the function or object ember rebuilds it with; it is also
the allow-list of a weights-only load, before the user's own safe globals.
"""
from __future__ import annotations

import codecs
import importlib
from collections import Counter, OrderedDict

import numpy as np

from ember import _dtype
from ember._layout import strided
from ember._quantized_dtypes import (
    QUANTIZED, QuantizedDtype, per_channel_affine, per_channel_affine_float_qparams, per_tensor_affine,
)
from ember._size import Size
from ember._tensor import Tensor, device
from ember.nn.parameter import Parameter

# torch's legacy storage classes, each of one element type, by the dtype name they hold.
STORAGE_DTYPES = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16", "LongStorage": "int64",
    "IntStorage": "int32", "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "BFloat16Storage": "bfloat16", "ComplexDoubleStorage": "complex128",
    "ComplexFloatStorage": "complex64", "QInt8Storage": "qint8", "QInt32Storage": "qint32",
    "QUInt8Storage": "quint8", "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}
STORAGE_OF_DTYPE = {dtype: name for name, dtype in STORAGE_DTYPES.items()}

# torch dtypes ember lacks, as they appear in a pickle (``torch.complex32``): named in the error that refuses them.
# bfloat16 is one of them only without ml_dtypes, which holds its values.
MISSING_DTYPES = (("bfloat16",) if _dtype.BF16 is None else ()) + (
    "complex32", "float8_e5m2",
    "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e8m0fnu", "quint4x2", "quint2x4",
)


class MissingDtype:
    """A torch dtype ember does not have; a tensor of it loads as an ``Unsupported`` placeholder."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class StorageType:
    """A storage class named in a checkpoint: the element type its bytes hold (None: raw bytes)."""

    def __init__(self, name: str, dtype):
        self.name = name
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class LoadedStorage:
    """The bytes of one storage record and the element type the pickle reads them as."""

    def __init__(self, data: np.ndarray, dtype, key: str):
        self.data = data  # uint8, one dimension
        self.dtype = dtype  # an ember dtype, a MissingDtype, or None for raw bytes
        self.key = key


class Unsupported:
    """A tensor of a dtype ember lacks: ``ember.load`` finds it after unpickling and names its key."""

    def __init__(self, dtype, record: str):
        self.dtype = dtype
        self.record = record


def _dtype_named(name: str):
    return MissingDtype(name) if name in MISSING_DTYPES else _dtype._by_name(name)


def _check_ints(name: str, values, what: str) -> tuple:
    if not isinstance(values, tuple) or not all(type(v) is int and v >= 0 for v in values):
        raise ValueError(f"{name}: the {what} must be a tuple of non-negative ints, got {values!r}")
    return values


def _view(storage: LoadedStorage, offset: int, size: tuple, stride: tuple, dtype) -> np.ndarray:
    """The array ``size``/``stride`` describe, ``offset`` elements into the storage, checked to lie inside it."""
    where = f"storage {storage.key!r}"
    size, stride = _check_ints(where, tuple(size), "size"), _check_ints(where, tuple(stride), "stride")
    if len(size) != len(stride) or type(offset) is not int or offset < 0:
        raise ValueError(f"{where}: bad tensor layout: offset {offset!r}, size {size}, stride {stride}")
    itemsize = dtype.itemsize
    elements = storage.data.nbytes // itemsize
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > elements:
        raise ValueError(
            f"{where} holds {elements} elements of {dtype.name} but the tensor of size {list(size)}, stride "
            f"{list(stride)} at offset {offset} needs {needed}: the file is damaged"
        )
    np_dtype = dtype.storage if isinstance(dtype, QuantizedDtype) else dtype.np  # quantized: the integers' type
    return np.ndarray(size, np_dtype, storage.data, offset * itemsize if needed else 0,
                      tuple(s * itemsize for s in stride))


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """torch's ``_rebuild_tensor_v3``: a tensor whose dtype is given apart from its (untyped) storage."""
    if not isinstance(storage, LoadedStorage):
        raise ValueError(f"_rebuild_tensor: expected a storage, got {type(storage).__name__}")
    if isinstance(dtype, MissingDtype):
        return Unsupported(dtype, storage.key)
    if not isinstance(dtype, _dtype.dtype):
        raise ValueError(f"_rebuild_tensor: expected a dtype, got {dtype!r}")
    tensor = Tensor._wrap(_with_bits(_view(storage, storage_offset, size, stride, dtype), metadata))
    if requires_grad is not False:
        tensor.requires_grad_(bool(requires_grad))
    return tensor


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """torch's ``_rebuild_tensor_v2``: a tensor over a typed storage."""
    dtype = getattr(storage, "dtype", None)
    if dtype is None:
        raise ValueError("_rebuild_tensor_v2: the storage has no element type (an UntypedStorage)")
    return rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata)


def _with_bits(array: np.ndarray, metadata) -> np.ndarray:
    """``array`` with the lazy conjugate and negation torch records in a tensor's metadata applied: ember keeps no
    such bits, so such a tensor is loaded as a copy holding the values it stands for."""
    if not metadata:
        return array
    if not isinstance(metadata, dict):
        raise ValueError(f"_rebuild_tensor: a tensor's metadata must be a dict, got {type(metadata).__name__}")
    if metadata.get("conj"):
        array = np.conj(array)
    if metadata.get("neg"):
        array = np.negative(array)
    return array


def rebuild_tensor(storage, storage_offset, size, stride):
    """torch's oldest ``_rebuild_tensor``, without the requires_grad flag."""
    return rebuild_tensor_v2(storage, storage_offset, size, stride, False, None)


def rebuild_parameter(data, requires_grad, backward_hooks):
    """torch's ``_rebuild_parameter``."""
    if isinstance(data, Unsupported):
        return data
    if not isinstance(data, Tensor):
        raise ValueError(f"_rebuild_parameter: expected a tensor, got {type(data).__name__}")
    return Parameter(data, bool(requires_grad))


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """torch's ``_rebuild_parameter_with_state``: a parameter with attributes a user set on it."""
    param = rebuild_parameter(data, requires_grad, backward_hooks)
    if state and not isinstance(param, Unsupported):
        _set_state(param, state)
    return param


def rebuild_from_type_v2(func, new_type, args, state):
    """torch's ``_rebuild_from_type_v2``: a tensor of a subclass, or with attributes, around ``func(*args)``."""
    if not isinstance(args, tuple) or not callable(func):
        raise ValueError("_rebuild_from_type_v2: expected a rebuild function and a tuple of arguments")
    tensor = func(*args)
    if isinstance(tensor, Unsupported):
        return tensor
    if new_type is not Tensor and new_type is not type(tensor):
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
            raise ValueError(f"_rebuild_from_type_v2: {new_type!r} is not a Tensor subclass")
        tensor = tensor.as_subclass(new_type)
    if state:
        _set_state(tensor, state)
    return tensor


def _set_state(obj, state) -> None:
    if isinstance(state, tuple) and len(state) == 2:  # (dict state, slots state)
        state = {**(state[0] or {}), **(state[1] or {})}
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise ValueError(f"a tensor's saved attributes must be a dict keyed by names, got {type(state).__name__}")
    for name, value in state.items():
        setattr(obj, name, value)


def latin1_bytes(text, encoding="latin1") -> bytes:
    """``_codecs.encode(text, "latin1")``: how a protocol-2 pickle writes bytes; no other codec is run."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise ValueError(f"_codecs.encode: only a str in latin1 is allowed, got {type(text).__name__}, {encoding!r}")
    return codecs.encode(text, "latin1")


def make_bytearray(data=b"") -> bytearray:
    """``bytearray(data)`` of bytes only: a count would allocate as much memory as the file asks for."""
    if not isinstance(data, (bytes, bytearray)):
        raise ValueError(f"bytearray: only bytes are allowed in a checkpoint, got {type(data).__name__}")
    return bytearray(data)


def _layout_named(name: str):
    from ember import _layout

    known = {f"torch.{each.name}": each for each in (strided, _layout.sparse_coo) + _layout.COMPRESSED}
    if name not in known:
        raise ValueError(f"ember has the strided, sparse COO, CSR, CSC, BSR and BSC layouts; the file holds one of "
                         f"layout {name!r}")
    return known[name]


def rebuild_sparse_tensor(layout, data):
    """torch's ``_rebuild_sparse_tensor``: a sparse COO tensor from its indices, values and size (checked)."""
    from ember._layout import COMPRESSED, sparse_coo
    from ember._ops.sparse import sparse_coo_tensor

    if layout in COMPRESSED:
        return _rebuild_compressed(layout, data)
    if layout is not sparse_coo or not isinstance(data, tuple) or len(data) not in (3, 4):
        raise ValueError(f"_rebuild_sparse_tensor: expected layout torch.sparse_coo and (indices, values, size"
                         f"[, is_coalesced]), got {layout!r} and {type(data).__name__}")
    indices, values, size = data[:3]
    if not isinstance(indices, Tensor) or not isinstance(values, Tensor):
        raise ValueError("_rebuild_sparse_tensor: indices and values must be tensors")
    _check_ints("_rebuild_sparse_tensor", size, "size")
    coalesced = bool(data[3]) if len(data) == 4 and data[3] is not None else False
    return sparse_coo_tensor(indices, values, tuple(size), is_coalesced=coalesced)


def _rebuild_compressed(layout, data):
    """A CSR, CSC, BSR or BSC tensor from its compressed indices, plain indices, values and size (checked)."""
    from ember._ops.sparse_compressed import sparse_compressed_tensor

    if not isinstance(data, tuple) or len(data) != 4:
        raise ValueError(f"_rebuild_sparse_tensor: expected (compressed_indices, plain_indices, values, size) for "
                         f"layout {layout!r}, got {type(data).__name__}")
    compressed, plain, values, size = data
    if not all(isinstance(t, Tensor) for t in (compressed, plain, values)):
        raise ValueError("_rebuild_sparse_tensor: the indices and values must be tensors")
    _check_ints("_rebuild_sparse_tensor", size, "size")
    return sparse_compressed_tensor(compressed, plain, values, tuple(size), layout=layout)


def _build_table() -> dict:
    table = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter, "torch.Tensor": Tensor, "torch.Size": Size,
        "torch.device": device, "torch.serialization._get_layout": _layout_named,
        "_codecs.encode": latin1_bytes, "builtins.bytearray": make_bytearray, "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor": rebuild_tensor, "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
        "torch._utils._rebuild_sparse_tensor": rebuild_sparse_tensor,
        "torch.UntypedStorage": StorageType("UntypedStorage", None),
        "torch.storage.UntypedStorage": StorageType("UntypedStorage", None),
    }
    for d in _dtype.ALL:
        table[f"torch.{d.name}"] = d
    for name in MISSING_DTYPES:
        table[f"torch.{name}"] = MissingDtype(name)
    # ---- quantized tensors (ember/serialization/_quantized.py)
    from ember.serialization._quantized import rebuild_qtensor

    table["torch._utils._rebuild_qtensor"] = rebuild_qtensor
    table.update({f"torch.{d.name}": d for d in QUANTIZED if d.name not in MISSING_DTYPES})
    table.update({f"torch.{s.name}": s for s in (per_tensor_affine, per_channel_affine, per_channel_affine_float_qparams)})
    for storage, dtype_name in STORAGE_DTYPES.items():
        table[f"torch.{storage}"] = StorageType(storage, _dtype_named(dtype_name))
    return table


TORCH_GLOBALS = _build_table()


def ember_layer(module: str, name: str):
    """ember's class for one of torch's layers (``torch.nn.modules.linear.Linear``), or function of
    ``torch.nn.functional`` (a layer's activation), for a whole model saved by torch and loaded with
    weights_only=False; None for any other name."""
    if module == "torch.nn.functional":
        import ember.nn.functional

        return getattr(ember.nn.functional, name, None)
    if not module.startswith("torch.nn.modules"):
        return None
    import ember.nn
    from ember.nn.modules import attention
    from ember.nn.modules.module import Module

    # ember.nn holds the public layers; attention.py the Linear subclass MultiheadAttention's out_proj is
    found = getattr(ember.nn, name, None) or getattr(attention, name, None)
    if found is None:
        try:
            found = getattr(importlib.import_module("ember" + module[len("torch"):]), name, None)
        except ImportError:
            return None
    return found if isinstance(found, type) and issubclass(found, Module) else None
