"""safetensors files: the tensors-only format that ``safetensors.torch`` reads and writes, without pickle.

The ``safetensors`` package (``pip install 'ember[safetensors]'``) does the reading
and writing: its parser is the one every other framework uses and is hardened
against hostile headers, and ``safe_open`` maps the file rather than reading it.
ember checks what the package leaves to the framework, as ``safetensors.torch``
does: tensors only, contiguous, none sharing memory, and names the key of a dtype
ember lacks (float8 ...). Complex tensors are complex64 (``C64``), the format's only complex dtype.
bfloat16 (``BF16``) needs ml_dtypes (``pip install 'ember[bfloat16]'``); the package's NumPy side cannot read
it, so a file holding one is read whole and its bytes taken as they are.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
>>> ember.utils.safetensors.save_file({"w": ember.ones(2, 2)}, path, metadata={"step": "10"})
>>> ember.utils.safetensors.load_file(path)
{'w': tensor([[1., 1.],
        [1., 1.]])}
"""
from __future__ import annotations

import os
from typing import Dict

import numpy as np

from ember import _dtype
from ember._tensor import Tensor

_DTYPES = {"BOOL": "bool", "U8": "uint8", "U16": "uint16", "U32": "uint32", "U64": "uint64", "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
           "F16": "float16", "F32": "float32", "F64": "float64", "C64": "complex64"} | (
               {} if _dtype.BF16 is None else {"BF16": "bfloat16"})


def _package():
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ImportError(
            "ember.utils.safetensors needs the safetensors package: pip install 'ember[safetensors]'"
        ) from None
    return safetensors


def _arrays(tensors: Dict[str, Tensor]) -> dict:
    """The tensors' arrays, after the checks safetensors.torch makes before writing."""
    if not isinstance(tensors, dict):
        raise TypeError(f"safetensors: expected a dict of tensors, got {type(tensors).__name__}")
    for key, value in tensors.items():
        if not isinstance(key, str):
            raise TypeError(f"safetensors: keys must be str, got {key!r}")
        if not isinstance(value, Tensor):
            raise ValueError(f"Key `{key}` is invalid, expected ember.Tensor but received {type(value)}")
        if value._data.dtype == np.complex128:
            raise TypeError(f"safetensors: {key!r} is complex128, which the format has no code for (its one complex "
                            "dtype is C64); save value.to(ember.complex64), or ember.view_as_real(value) as float64")
        if not value._data.flags.c_contiguous:
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{key}` which is not allowed. Save the full "
                "tensor and slice it after loading, or call `.contiguous()` on it first"
            )
    _refuse_shared(tensors)
    return {key: value._data for key, value in tensors.items()}


def _refuse_shared(tensors: Dict[str, Tensor]) -> None:
    spans = sorted((t.data_ptr(), t.data_ptr() + t.nbytes, key) for key, t in tensors.items() if t.nbytes)
    for (start, end, key), (next_start, _, next_key) in zip(spans, spans[1:]):
        if next_start < end:
            raise RuntimeError(
                f"Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
                f"when loading them again: [{{{key!r}, {next_key!r}}}]. Save a copy (t.clone()) of one of them"
            )


def save_file(tensors: Dict[str, Tensor], filename: str | os.PathLike, metadata: Dict[str, str] | None = None) -> None:
    """Write ``tensors`` (a dict of names to contiguous tensors sharing no memory) to ``filename``.

    ``metadata`` is a dict of str to str stored in the header."""
    _package().numpy.save_file(_arrays(tensors), filename, metadata=metadata)


def save(tensors: Dict[str, Tensor], metadata: Dict[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``tensors``.

    >>> ember.utils.safetensors.load(ember.utils.safetensors.save({"b": ember.zeros(1)}))
    {'b': tensor([0.])}
    """
    return _package().numpy.save(_arrays(tensors), metadata=metadata)


def _checked(key: str, dtype_name: str) -> _dtype.dtype:
    if dtype_name not in _DTYPES:
        raise TypeError(
            f"safetensors: {key!r} is a tensor of {dtype_name}, a dtype ember does not have; convert it where it "
            "was saved (e.g. t.float())"
        )
    return _dtype._by_name(_DTYPES[dtype_name])


def load_file(filename: str | os.PathLike, device: str = "cpu") -> Dict[str, Tensor]:
    """The tensors in a safetensors file, by name; ``Module.load_state_dict`` takes the result."""
    if str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"safetensors.load_file: ember runs on the CPU only; device {device!r} is not available")
    loaded = {}
    with _package().safe_open(filename, framework="np") as f:
        codes = {key: f.get_slice(key).get_dtype() for key in f.keys()}
        for key, code in codes.items():
            _checked(key, code)
        if "BF16" in codes.values():  # safetensors.numpy has no bfloat16: the raw bytes, read as load() reads them
            with open(filename, "rb") as raw:
                return load(raw.read())
        for key in codes:
            loaded[key] = Tensor._wrap(f.get_tensor(key))
    return loaded


def load(data: bytes) -> Dict[str, Tensor]:
    """The tensors in the bytes of a safetensors file."""
    loaded = {}
    for key, entry in _package().deserialize(data):
        dtype = _checked(key, entry["dtype"])
        loaded[key] = Tensor._wrap(np.frombuffer(entry["data"], dtype.np).reshape(entry["shape"]).copy())
    return loaded
