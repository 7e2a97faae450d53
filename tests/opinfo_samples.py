"""torch's own per-op sample inputs (its OpInfo database) run through ember and torch, and the results compared.

``test_torch_opinfo_samples.py`` parametrises over the OpInfos; this module finds each OpInfo's ember
counterpart, converts its samples (tensors, dtypes, sizes, option objects) to ember's, and describes how two
results differ. torch is the oracle here: only tests import this module.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import itertools
import types
import warnings
from typing import Any, Callable

import numpy as np
import torch

import ember

# float64 and int64 first (most of each op's code); the rest cost little, the database's import dominating
DTYPES = (torch.float64, torch.int64, torch.complex128, torch.bool, torch.float32)
SAMPLES_PER_DTYPE = 8

# (rtol, atol) by the result's dtype: float32 results of float64 samples (ops that compute in the default dtype)
# get single precision's
TOLERANCES = {"float64": (1e-6, 1e-9), "complex128": (1e-6, 1e-9), "float32": (1e-4, 1e-5),
              "complex64": (1e-4, 1e-5), "float16": (1e-2, 1e-3), "bfloat16": (1e-2, 1e-2)}

# OpInfos whose results cannot be compared at all, by name (``name.variant``), with the reason
SKIPPED = {
    "as_strided": "works on the sample's storage, which the conversion (a copy of the values) does not keep",
    "as_strided.partial_views": "works on the sample's storage, which the conversion does not keep",
    "as_strided_copy": "works on the sample's storage, which the conversion does not keep",
    "as_strided_scatter": "works on the sample's storage, which the conversion does not keep",
    "chalf": "ember has no complex32 dtype",
    "slice": "torch.ops.aten.slice, a private aten op",
    "max_pool2d_with_indices_backward": "torch.ops.aten.max_pool2d_with_indices_backward, a private aten op",
    "histogramdd": "samples give bin edges that do not increase, where torch's histogram is undefined (ember "
                   "refuses them)",
    "native_dropout_backward": "a private aten op",
    "_segment_reduce.lengths": "a private aten op",
    "_segment_reduce.offsets": "a private aten op",
    "nn.functional.triplet_margin_with_distance_loss": "its samples pass a torch module as distance_function",
}


# dtypes of an OpInfo whose samples are not compared (the OpInfo's other dtypes are), with the reason
_REAL_ONLY_LDL = "ember's LDL factorisation is for real matrices only"
SKIPPED_DTYPES = {
    **{(f"linalg.{name}", torch.complex128): _REAL_ONLY_LDL for name in ("ldl_factor", "ldl_factor_ex", "ldl_solve")},
}


# OpInfos whose values cannot be compared, with the reason: only their results' dtypes, shapes and layouts are
# (and that ember takes every sample torch does)
_RANDOM = "random: torch's samples seed torch's generator, whose draws ember does not reproduce"
VALUES_NOT_COMPARED = {
    "nn.functional.fractional_max_pool2d": "random: its windows are drawn from the generator",
    "nn.functional.fractional_max_pool3d": "random: its windows are drawn from the generator",
    "nn.functional.rrelu": "random in training: its slopes are drawn from the generator",
    "nn.functional.scaled_dot_product_attention": "random where the samples set dropout_p",
    "nn.functional.multi_head_attention_forward": "random where the samples train (dropout)",
    "linalg.eig": "eigenvectors are defined only up to a complex phase",
    "linalg.eigh": "eigenvectors are defined only up to sign",
    "svd_lowrank": "random projection, and singular vectors only up to sign",
    "pca_lowrank": "random projection, and singular vectors only up to sign",
    "special.bessel_j0": "torch's float64 bessel_j0 is off by up to 2e-7; ember's is accurate",
    "special.bessel_y1": "torch's float64 bessel_y1 is off by up to 3e-7; ember's is accurate",
    **dict.fromkeys(["empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided", "empty_permuted"],
                    "uninitialised memory"),
    **dict.fromkeys(["bernoulli", "multinomial", "normal", "normal.number_mean"], _RANDOM),
}


def values_comparable(info) -> bool:
    """Whether ember's values can match torch's (not for random ops, nor where results are unique only up to
    sign or phase)."""
    return op_id(info) not in VALUES_NOT_COMPARED and not _seeds_torch(info)


def skip_reason(info) -> str | None:
    """Why an OpInfo's samples cannot be compared, or None."""
    name = op_id(info)
    if name in SKIPPED:
        return SKIPPED[name]
    if info.name.startswith("masked."):
        return "ember has no torch.masked"
    if info.name.startswith("jiterator_"):
        return "jiterator ops are CUDA-only"
    if info.name.startswith(("_", "torch._", "torch.ops.")):
        return "a private aten op"
    return None


def callable_or_skip(info) -> Callable:
    """The OpInfo's ember counterpart; skips the calling test if the OpInfo cannot be compared, fails it if
    ember has no counterpart."""
    import pytest

    reason = skip_reason(info)
    if reason:
        pytest.skip(reason)
    fn = ember_callable(info)
    assert fn is not None, f"ember has no {info.name}"
    return fn


def op_id(info) -> str:
    return info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")


def _seeds_torch(info) -> bool:
    """torch wraps its random ops in a function that seeds its generator first."""
    code = getattr(info.op, "__code__", None)
    return code is not None and "wrapper_set_seed" in code.co_names


# ------------------------------------------------------------------------------------------ ember's callable


def ember_callable(info) -> Callable | None:
    """The ember function an OpInfo's ``op`` stands for: a lambda of torch's test module rebuilt over ember,
    a function found by the OpInfo's name, or the Tensor method of that name; None if ember has none."""
    op = info.op
    if isinstance(op, types.FunctionType) and (op.__module__ or "").startswith("torch.testing"):
        return _over_ember(op)
    found = _lookup(ember, info.name)
    is_method = type(op).__name__ in ("method_descriptor", "wrapper_descriptor", "getset_descriptor")
    method = info.name.split(".")[-1]
    if (found is None or is_method or not callable(found)) and hasattr(ember.Tensor, method):
        if type(op).__name__ == "getset_descriptor":  # a property (x.T, x.real)
            return lambda x: getattr(x, method)
        return lambda x, *args, **kwargs: getattr(x, method)(*args, **kwargs)
    return found if callable(found) else None


def _lookup(root, dotted: str):
    for part in dotted.split("."):
        root = getattr(root, part, None)
        if root is None:
            return None
    return root


def _over_ember(function: types.FunctionType) -> types.FunctionType:
    """``function`` with its globals' ``torch`` (and torch's submodules) replaced by ember's."""
    names = dict(function.__globals__)
    names["torch"] = ember
    for key, value in function.__globals__.items():
        if isinstance(value, types.ModuleType) and value.__name__.startswith("torch."):
            try:
                names[key] = importlib.import_module("ember" + value.__name__[len("torch"):])
            except ImportError:
                pass
    return types.FunctionType(function.__code__, names, function.__name__, function.__defaults__,
                              function.__closure__)


# ------------------------------------------------------------------------------------------ samples


class Unconvertible(Exception):
    """A sample holds something with no ember counterpart (a generator, a sparse or quantized tensor)."""


def samples(info, dtype: torch.dtype, count: int = SAMPLES_PER_DTYPE, requires_grad: bool = False) -> list:
    """The first ``count`` of the OpInfo's samples in ``dtype`` (none if it does not support it), the same ones
    on every run; with ``requires_grad``, the samples made for differentiating (floating inputs requiring grad)."""
    if dtype not in info.supported_dtypes("cpu") or (op_id(info), dtype) in SKIPPED_DTYPES:
        return []
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # (the sample function itself: info.sample_inputs would inspect the caller's stack, slowly under pytest)
        found = info.sample_inputs_func(info, "cpu", dtype, requires_grad)
        return list(itertools.islice(found, count))


def to_ember(value: Any, keep_strides: bool = False) -> Any:
    """A sample's argument in ember's terms; with ``keep_strides``, its tensors laid out in memory as torch's
    are (a noncontiguous sample stays noncontiguous), else contiguous."""
    if isinstance(value, torch.Tensor):
        return _tensor_to_ember(value, keep_strides)
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, (list, tuple)):
        return type(value)(to_ember(v, keep_strides) for v in value)
    if isinstance(value, dict):
        return {k: to_ember(v, keep_strides) for k, v in value.items()}
    if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
        return getattr(ember, str(value).split(".")[-1])
    if isinstance(value, torch.device):
        return ember.device(str(value))
    if dataclasses.is_dataclass(value) and type(value).__module__.startswith("torch."):
        return _options_to_ember(value)
    if isinstance(value, (torch.Generator, torch.nn.Module)):
        raise Unconvertible(type(value).__name__)
    return value


def _tensor_to_ember(tensor: torch.Tensor, keep_strides: bool = False) -> ember.Tensor:
    if tensor.layout != torch.strided or tensor.is_quantized:
        raise Unconvertible(f"a {tensor.layout} tensor")
    if tensor.device.type != "cpu":  # (meta tensors, in error inputs)
        raise Unconvertible(f"a tensor on {tensor.device}")
    if tensor.dim() > 64:  # (ember's storage, a NumPy array, has at most 64 dims)
        raise Unconvertible(f"a tensor of {tensor.dim()} dims")
    tensor = tensor.detach().resolve_conj().resolve_neg()
    if tensor.dtype == torch.bfloat16:  # (NumPy has no bfloat16: through float32, exactly)
        return ember.from_numpy(tensor.float().numpy().copy()).to(ember.bfloat16)
    if tensor.dtype not in _NUMPY_DTYPES:
        raise Unconvertible(str(tensor.dtype))
    array = tensor.numpy()
    return ember.from_numpy(_copy_keeping_strides(array) if keep_strides else array.copy())


def _copy_keeping_strides(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` with its strides (torch's strides are never negative), the memory it skips filled
    with a value that shows if read (NaN, 12 or True, as torch's ``noncontiguous_like`` does)."""
    if array.size == 0 or array.flags.c_contiguous:
        return array.copy()
    span = 1 + sum((n - 1) * stride for n, stride in zip(array.shape, array.strides)) // array.itemsize
    filler = True if array.dtype == np.bool_ else 12 if array.dtype.kind in "iu" else np.nan
    copy = np.lib.stride_tricks.as_strided(np.full(span, filler, array.dtype), array.shape, array.strides)
    copy[...] = array  # (where strides are 0, every write of an element writes the same value)
    return copy


_NUMPY_DTYPES = (torch.float64, torch.float32, torch.float16, torch.int64, torch.int32, torch.int16, torch.int8,
                 torch.uint8, torch.bool, torch.complex128, torch.complex64)


def _options_to_ember(options) -> Any:
    """A torch options dataclass of ``torch.nn`` (``LinearCrossEntropyOptions``) as ember's class of that name."""
    ember_class = getattr(ember.nn, type(options).__name__, None)
    if ember_class is None:
        raise Unconvertible(type(options).__name__)
    return ember_class(**{f.name: to_ember(getattr(options, f.name)) for f in dataclasses.fields(options)})


# ------------------------------------------------------------------------------------------ comparison


def plain(result: Any) -> Any:
    """A result as NumPy arrays (tagged with the dtype's name and layout), tuples and Python values."""
    if isinstance(result, (torch.Tensor, ember.Tensor)):
        return _plain_tensor(result)
    if isinstance(result, (list, tuple)):  # (named tuples of results too)
        return tuple(plain(v) for v in result)
    if isinstance(result, (torch.dtype, ember.dtype)):
        return ("dtype", str(result).split(".")[-1])
    return result


def _plain_tensor(tensor) -> tuple:
    layout = str(tensor.layout).split(".")[-1]
    tensor = tensor.detach()
    if layout != "strided":
        tensor = tensor.to_dense()
    dtype = str(tensor.dtype).split(".")[-1]
    if isinstance(tensor, torch.Tensor):
        tensor = tensor.resolve_conj().resolve_neg()
    values = tensor.float().numpy() if dtype == "bfloat16" else tensor.numpy()
    return ("tensor", dtype, layout, np.array(values))


def difference(expected: Any, got: Any, values: bool = True) -> str | None:
    """How ember's result differs from torch's, or None if they agree (values within the dtype's tolerance
    unless not ``values``, the same dtypes, shapes and layouts)."""
    if _is_tensor(expected) or _is_tensor(got):
        if not (_is_tensor(expected) and _is_tensor(got)):
            return f"torch gives {_describe(expected)}, ember {_describe(got)}"
        return _tensor_difference(expected, got, values)
    if isinstance(expected, tuple) and isinstance(got, tuple):
        if len(expected) != len(got):
            return f"torch gives {len(expected)} results, ember {len(got)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            found = difference(e, g, values)
            if found:
                return f"result {i}: {found}"
        return None
    if not values:
        return None
    if isinstance(expected, float) and isinstance(got, (float, int)):
        return None if np.isclose(expected, got, rtol=1e-6, atol=1e-9, equal_nan=True) else f"{expected} vs {got}"
    return None if expected == got else f"torch gives {expected!r}, ember {got!r}"


def _is_tensor(value) -> bool:
    return isinstance(value, tuple) and len(value) == 4 and value[0] == "tensor"


def _describe(value) -> str:
    return f"a {value[1]} tensor" if _is_tensor(value) else repr(value)


def _tensor_difference(expected: tuple, got: tuple, values: bool) -> str | None:
    (_, dtype, layout, want), (_, our_dtype, our_layout, have) = expected, got
    if (dtype, layout) != (our_dtype, our_layout):
        return f"torch gives a {dtype} {layout} tensor, ember a {our_dtype} {our_layout} one"
    if want.shape != have.shape:
        return f"shape {list(want.shape)} (torch) against {list(have.shape)} (ember)"
    if not values:
        return None
    if dtype in TOLERANCES:
        rtol, atol = TOLERANCES[dtype]
        if not np.allclose(have, want, rtol=rtol, atol=atol, equal_nan=True):
            worst = np.nanmax(np.abs(have - want)) if want.size else 0
            return f"{dtype} values differ by up to {worst:.3g} (rtol {rtol}, atol {atol})"
    elif not np.array_equal(have, want):
        return f"{dtype} values differ at {int(np.sum(have != want))} of {want.size} places"
    return None


def compare_sample(info, fn, sample, values: bool, keep_strides: bool = False) -> tuple[bool, str | None]:
    """Whether ``sample`` could be compared (torch computes it, and ember can be given it), and what went wrong
    with ember's ``fn`` on it (None if nothing did); with ``keep_strides``, ember's inputs keep torch's strides."""
    try:
        expected = plain(info.op(sample.input, *sample.args, **sample.kwargs))
    except Exception:  # (torch refuses it)
        return False, None
    try:
        args = to_ember((sample.input, *sample.args), keep_strides)
        kwargs = to_ember(dict(sample.kwargs), keep_strides)
    except Unconvertible:
        return False, None
    try:
        got = plain(fn(*args, **kwargs))
    except Exception as error:
        return True, f"ember raised {type(error).__name__}: {error}"
    return True, difference(expected, got, values)


def describe_sample(sample) -> str:
    """A sample's shapes and arguments, short enough for a failure message."""
    def short(value):
        if isinstance(value, torch.Tensor):
            return f"{str(value.dtype).split('.')[-1]}{list(value.shape)}"
        if isinstance(value, (list, tuple)):
            return type(value)(short(v) for v in value)
        return value
    return f"input {short(sample.input)}, args {short(tuple(sample.args))}, kwargs {short(dict(sample.kwargs))}"


@functools.cache
def op_db() -> list:
    """torch's OpInfos (importing them takes seconds: once per process)."""
    from torch.testing._internal.common_methods_invocations import op_db as database
    # importing torch's test utilities freezes torch.backends' flags (torch's own suite sets them only inside
    # flags() contexts); the other tests in this process set them directly, so they are thawed again
    # (torch.backends is a wrapper around its module: the flag lives in the module's globals)
    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
    return list(database)
