"""The ``out=`` argument: write a result into a tensor the caller gives, as PyTorch does.

>>> import ember
>>> out = ember.zeros(2)
>>> ember.add(ember.tensor([1., 2.]), 3, out=out) is out
True
>>> out
tensor([4., 5.])
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from ember import _dtype
from ember._tensor import Tensor
from ember.autograd.grad_mode import state as _grad

# the C++ names torch's messages give dtypes
_TORCH_C_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "int64": "long int",
    "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def into_exact_out(op: str, result: Tensor, out: object, *inputs: object) -> Tensor:
    """``into_out`` for an op whose ``out`` must have the result's own dtype and which torch records no graph for
    (an index or a mask, or a composite such as linalg.norm), as torch's."""
    if isinstance(out, Tensor):
        _require_out_dtype(op, out, result._data.dtype)
    return into_out(op, result, out, *inputs, differentiable=False)


def into_out_of_its_dtype(op: str, result: Tensor, out: object, *inputs: object) -> Tensor:
    """``into_out`` for an op whose ``out`` must have the result's own dtype, as torch's (matrix products, gather,
    tril ...): they take no wider one, where pointwise arithmetic would cast into it."""
    if isinstance(out, Tensor):
        _require_out_dtype(op, out, result._data.dtype)
    return into_out(op, result, out, *inputs)


def into_elementwise_out_of_its_dtype(op: str, result: Tensor, out: object, *inputs: object) -> Tensor:
    """``into_out_of_its_dtype`` for the elementwise ops that keep their input's dtype (abs, floor, clamp ...),
    with torch's message for them."""
    if isinstance(out, Tensor) and out._data.dtype != result._data.dtype:
        raise RuntimeError(f"{op}: Found dtype {_dtype.scalar_type_name(out._data.dtype)} but expected "
                           f"{_dtype.scalar_type_name(result._data.dtype)}; pass an out of dtype {result.dtype}")
    return into_out(op, result, out, *inputs)


def dtype_from_out(op: str, out: object, dtype):
    """The dtype a sum, product or running sum computes in when given ``out``, as torch: ``dtype``, which ``out``
    must then have, or else ``out``'s own (floats summed into an int64 ``out`` are converted first, then added)."""
    if not isinstance(out, Tensor):
        return dtype
    if dtype is None:
        return out.dtype
    _require_out_dtype(op, out, np.dtype(_dtype.to_dtype(dtype).np))
    return dtype


def _require_out_dtype(op: str, out: Tensor, wanted: np.dtype) -> None:
    if out._data.dtype != wanted:
        raise RuntimeError(f"{op}: Expected out tensor to have dtype {_c_name(wanted)}, but got "
                           f"{_c_name(out._data.dtype)} instead; pass an out of dtype {_dtype.from_numpy_dtype(wanted)}")


def _c_name(dtype: np.dtype) -> str:
    return _TORCH_C_NAMES.get(dtype.name, dtype.name)


def into_out(op: str, result: Tensor, out: object, *inputs: object, differentiable: bool = True,
             warn_on_resize: bool = True) -> Tensor:
    """Write ``result`` into ``out`` and return ``out``.

    The result is cast to ``out``'s dtype when PyTorch allows it (not to a lower
    category: float to integer, or anything to bool). An ``out`` of another shape
    is resized, with torch's warning if it had elements (``warn_on_resize`` False: quietly, as torch's factories
    resize theirs). An op that is not ``differentiable`` (a comparison)
    takes inputs and an ``out`` that require grad, as in torch.
    """
    _check_out(op, out, *inputs, differentiable=differentiable)
    data = result._data
    if not casts_into(data.dtype, out._data.dtype):
        raise RuntimeError(
            f"result type {_dtype.scalar_type_name(data.dtype)} can't be cast to the desired output type "
            f"{_dtype.scalar_type_name(out._data.dtype)}"
        )
    if out._data.shape != data.shape:
        _resize(op, out, data.shape, inputs, warn_on_resize)
    if not out._data.flags.writeable:  # an expanded tensor: several of its elements share one memory location
        raise RuntimeError(
            f"{op}(): unsupported operation: more than one element of out refers to a single memory location "
            "(it is expanded); pass a tensor of its own, e.g. out.clone()"
        )
    np.copyto(out._data, data, casting="unsafe")
    out._bump()
    return out


def casts_into(source: np.dtype, target: np.dtype) -> bool:
    """Whether a result of dtype ``source`` may be written into an ``out`` of dtype ``target``: not into a lower
    category (float into integer, anything into bool), as torch."""
    return _dtype.from_numpy_dtype(source)._kind <= _dtype.from_numpy_dtype(target)._kind


def _check_out(op: str, out: object, *inputs: object, differentiable: bool = True) -> None:
    """``out`` must be a tensor, and autograd cannot record a write into it (as torch: an error)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if differentiable and _grad.enabled and any(isinstance(t, Tensor) and t._requires_grad for t in (out, *inputs)):
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic differentiation, but one of the "
            "arguments requires grad."
        )


def _resize(op: str, out: Tensor, shape: tuple, inputs: tuple, warn: bool) -> None:
    for t in inputs:
        if t is out:  # as torch: an out that is also an input is not resized (the op reads it)
            raise RuntimeError(
                f"{op}(): output with shape {list(out._data.shape)} doesn't match the broadcast shape {list(shape)}; "
                "out is also an input, so it cannot be resized: pass a new tensor as out"
            )
    if out._base is not None:
        raise RuntimeError(
            f"{op}(): out has shape {list(out._data.shape)} but the result has shape {list(shape)}, and out is a "
            "view of another tensor, which ember cannot resize; pass an out of the result's shape"
        )
    if out._data.size and warn:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {list(out._data.shape)}, which "
            f"does not match the required output shape {list(shape)}. This behavior is deprecated, and in a future "
            "release outputs will not be resized unless they have zero elements.",
            UserWarning,
            stacklevel=_first_caller_outside_ember(),
        )
    out._data = np.zeros(shape, out._data.dtype)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _first_caller_outside_ember() -> int:
    """The ``stacklevel`` that makes a warning point at the user's line, however deep in ember it is raised."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level
