"""``out=`` on every op-table row whose torch function takes it: ember takes it too, writes torch's values into it
and returns it, and refuses an ``out`` of a dtype the result cannot be written into, as torch does."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember
from op_table import OPS
from test_ops import inputs_for

# torch's functions that take out= without documenting it (their C++ overloads): not built in ember
UNDOCUMENTED = {"F_gelu", "F_hardshrink", "F_logsigmoid", "F_softplus", "F_softshrink", "avg_pool2d", "argsort", "diff",
                "softmax", "softmax_large", "log_softmax", "log_softmax_large"}
# where ember's error differs in type: torch has no int64 kernel for nansum, ember refuses the cast first
DIFFERENT_ERROR = {"nansum", "nanmean"}


def _reference(spec):
    args, kwargs, _ = inputs_for(spec, 0, "float32").build(torch)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = spec.fn(torch, *args, **kwargs)
            if not isinstance(result, torch.Tensor):
                return None
            spec.fn(torch, *args, out=torch.empty(tuple(result.shape), dtype=result.dtype), **kwargs)
    except Exception:  # no out= for this row in torch (or its lambda passes none)
        return None
    return result


ROWS = [pytest.param(spec, id=spec.name) for spec in OPS
        if "float32" in spec.dtypes and spec.name not in UNDOCUMENTED and _reference(spec) is not None]


def _with_out(spec, lib, dtype_of):
    args, kwargs, _ = inputs_for(spec, 0, "float32").build(lib)
    reference = _reference(spec)
    out = lib.empty(tuple(reference.shape), dtype=getattr(lib, dtype_of(reference)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return out, spec.fn(lib, *args, out=out, **kwargs)
    except Exception as error:  # compared with the other library's outcome
        return out, error


def _same_dtype(reference) -> str:
    return str(reference.dtype).split(".")[-1]


def _another_dtype(reference) -> str:
    return "int64" if reference.dtype.is_floating_point or reference.dtype.is_complex else "float32"


@pytest.mark.parametrize("spec", ROWS)
def test_out_of_the_results_dtype_is_written_and_returned(spec):
    (mine, result), (theirs, _) = (_with_out(spec, lib, _same_dtype) for lib in (ember, torch))
    if isinstance(result, Exception):
        raise result
    assert result is mine, f"{spec.name}: the result is not out"
    np.testing.assert_allclose(np.asarray(mine.detach().numpy(), np.float64),
                               np.asarray(theirs.detach().numpy(), np.float64), rtol=1e-5, atol=1e-6)


def _refused_or_taken_as_torch(spec, dtype_of) -> None:
    (_, mine), (_, theirs) = (_with_out(spec, lib, dtype_of) for lib in (ember, torch))
    if isinstance(theirs, Exception):
        assert isinstance(mine, type(theirs)), f"{spec.name}: torch raises {theirs!r}, ember gave {mine!r}"
    else:
        assert not isinstance(mine, Exception), f"{spec.name}: torch writes into it, ember raised {mine!r}"


@pytest.mark.parametrize("spec", [p for p in ROWS if p.values[0].name not in DIFFERENT_ERROR])
def test_out_of_another_dtype_is_refused_or_taken_as_torch(spec):
    _refused_or_taken_as_torch(spec, _another_dtype)


def _wider_dtype(reference) -> str:
    """A dtype the result casts to without loss: torch's pointwise arithmetic takes it, many others (matrix
    products, gather, abs, tril, the norms ...) want the result's own."""
    return {"float32": "float64", "int64": "float64", "bool": "int64", "complex64": "complex128"}.get(
        _same_dtype(reference), "float64")


# where torch fails an internal assertion of its own (ldexp's int64 exponent with a float64 out), not a check
TORCH_ASSERTS = {"ldexp_integer_exponent"}


@pytest.mark.parametrize("spec", [p for p in ROWS if p.values[0].name not in TORCH_ASSERTS])
def test_out_of_a_wider_dtype_is_refused_or_taken_as_torch(spec):
    _refused_or_taken_as_torch(spec, _wider_dtype)
