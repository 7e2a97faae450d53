"""Every op-table row with its float32 inputs made half, bfloat16, int32, int64, uint8 or complex64, against torch: the
same dtype and values (to the 16-bit formats' precision), or the same type of error where torch has no kernel.

The generic tests in ``test_ops.py`` run each row in the dtypes it lists; this one runs the first sample of
every float32 row in the dtypes it may not list, with the same (converted) values in both libraries. It is
what found ops that answered a bfloat16 input in single precision, refused bfloat16 as if it were an integer
or crashed on it, and nn ops that computed integer inputs torch refuses (a layer norm of ints was all zeros).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember
from op_table import OPS
from row_outcomes import flat as _flat, result_or_error as _result_or_error, values as _values
from test_ops import inputs_for

pytest.importorskip("ml_dtypes")

# Where ember deliberately differs on these dtypes (each checked by hand against torch 2.13):
DIFFERENCES = {
    # torch's 16-bit matrix exponential overflows to nan and inf; ember computes it in single and rounds once
    "linalg_matrix_exp", "matrix_exp",
    # torch computes these for empty matrices without calling its (missing) 16-bit kernel; ember refuses them all
    "linalg_det-3", "linalg_det-4", "linalg_solve-6", "linalg_cholesky-3", "linalg_eigh_values-2",
    "linalg_lu_factor-5", "linalg_lu_factor-6", "linalg_lu_L-5", "linalg_lu_L-6", "linalg_lu_U-5", "linalg_lu_U-6",
    # torch has no 16-bit histogram kernel (without a range); ember counts 16-bit values as any others
    "histogram/float16", "histogram/bfloat16", "histogram_bin_edges/float16", "histogram_bin_edges/bfloat16",
    # polygamma at the poles of integer points: torch's series and ember's differ there (both huge)
    "polygamma_negative/int32", "polygamma_negative/int64",
    # torch averages int64 windows in integers; ember refuses integer pooling
    "avg_pool2d/int64",
    # torch fails an internal assertion ("needs_dynamic_casting") on a bfloat16 input; ember computes it
    "fake_quantize_per_channel_affine/bfloat16",
    # the row's torch side is pdist in torch ops, which take 16-bit floats; torch.pdist refuses them, as ember
    # does (test_linalg_ops.py)
    "pdist/float16", "pdist/bfloat16",
    # complex inputs torch computes and ember does not yet: it refuses them, naming the op
    "nn_unfold/complex64", "pdist/complex64",
    "soft_margin_loss/complex64", "index_reduce_prod_with_self/complex64", "index_reduce_mean_with_self/complex64",
}
DTYPES = ("float16", "bfloat16", "int32", "int64", "uint8", "complex64")
NO_COMPLEX_HALF = "complex"  # ember has no complex32: a half tensor with a complex number is complex64 there
ROWS = [pytest.param(spec, dtype, id=f"{spec.name}-{dtype}") for spec in OPS if "float32" in spec.dtypes
        and spec.name not in DIFFERENCES and f"{spec.name}-0" not in DIFFERENCES for dtype in DTYPES
        if f"{spec.name}/{dtype}" not in DIFFERENCES and not (dtype == "float16" and NO_COMPLEX_HALF in spec.name)]


def _low(lib, value, dtype: str):
    if isinstance(value, lib.Tensor) and value.dtype == lib.float32:
        return value.to(getattr(lib, dtype))
    if isinstance(value, (tuple, list)):
        return type(value)(_low(lib, v, dtype) for v in value)
    return value


def _outcome(spec, lib, inputs, dtype: str):
    args, kwargs, _ = inputs.build(lib)
    return _result_or_error(spec, lib, _low(lib, args, dtype), {k: _low(lib, v, dtype) for k, v in kwargs.items()})


@pytest.mark.parametrize("spec,dtype", ROWS)
def test_row_in_another_dtype_matches_torch(spec, dtype: str):
    inputs = inputs_for(spec, 0, "float32")
    mine, theirs = (_outcome(spec, lib, inputs, dtype) for lib in (ember, torch))
    what = f"{spec.name}{spec.samples[0]} as {dtype}"
    if isinstance(theirs, Exception):
        assert isinstance(mine, type(theirs)), f"{what}: torch raises {theirs!r}, ember gave {mine!r}"
        return
    if isinstance(mine, Exception):
        raise mine
    for a, b in zip(_flat(mine), _flat(theirs), strict=True):
        if not isinstance(b, torch.Tensor):
            continue
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"{what}: dtype {a.dtype} != {b.dtype}"
        assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} != {tuple(b.shape)}"
        x, y = _values(a), _values(b)
        if x.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=2e-2, atol=2e-2, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(x, y, err_msg=what)


INPLACE_ROWS = [pytest.param(spec, dtype, id=f"{spec.name}_-{dtype}") for spec in OPS if spec.inplace is not None
                and "float32" in spec.dtypes and spec.name not in DIFFERENCES for dtype in DTYPES
                if f"{spec.name}/{dtype}" not in DIFFERENCES and not (dtype == "float16" and NO_COMPLEX_HALF in spec.name)]


def _inplace_outcome(spec, lib, inputs, dtype: str):
    args, kwargs, _ = inputs.build(lib)
    args, kwargs = _low(lib, args, dtype), {k: _low(lib, v, dtype) for k, v in kwargs.items()}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return args[0], spec.inplace(*args, **kwargs)
    except Exception as error:  # compared with the other library's outcome
        return args[0], error


@pytest.mark.parametrize("spec,dtype", INPLACE_ROWS)
def test_inplace_form_in_another_dtype_matches_torch(spec, dtype: str):
    """The in-place form writes what torch writes, or refuses as torch does (a result its tensor cannot hold)."""
    inputs = inputs_for(spec, 0, "float32")
    (x, mine), (_, theirs) = (_inplace_outcome(spec, lib, inputs, dtype) for lib in (ember, torch))
    what = f"{spec.name}_{spec.samples[0]} as {dtype}"
    if isinstance(theirs, Exception):
        assert isinstance(mine, type(theirs)), f"{what}: torch raises {theirs!r}, ember gave {mine!r}"
        return
    if isinstance(mine, Exception):
        raise mine
    assert mine is x, f"{what}: an in-place method returns its tensor"
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], f"{what}: dtype changed"
    a, b = _values(mine), _values(theirs)
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


LIST_ROWS = [pytest.param(spec, id=spec.name) for spec in OPS if "float32" in spec.dtypes]


def _with_a_list_first(spec, lib, inputs):
    args, kwargs, _ = inputs.build(lib)
    if args and isinstance(args[0], lib.Tensor):
        args = (args[0].tolist(),) + tuple(args[1:])
    return _result_or_error(spec, lib, args, kwargs)


@pytest.mark.parametrize("spec", LIST_ROWS)
def test_a_list_in_place_of_the_tensor_is_refused_as_torch_refuses_it(spec):
    """torch's C++ ops raise TypeError for a list where a tensor goes; ember does for every op, also where torch's
    Python-written ones fail later with an AttributeError (ember's message names the argument)."""
    inputs = inputs_for(spec, 0, "float32")
    mine, theirs = (_with_a_list_first(spec, lib, inputs) for lib in (ember, torch))
    what = f"{spec.name}{spec.samples[0]} with a list first"
    if isinstance(theirs, AttributeError):
        assert isinstance(mine, (TypeError, AttributeError)), f"{what}: torch raises {theirs!r}, ember gave {mine!r}"
    elif isinstance(theirs, Exception):
        assert isinstance(mine, type(theirs)), f"{what}: torch raises {theirs!r}, ember gave {mine!r}"
    else:
        assert not isinstance(mine, Exception), f"{what}: torch computes, ember raised {mine!r}"
