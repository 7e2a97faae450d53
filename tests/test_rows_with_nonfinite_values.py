"""Every op-table row with inf, -inf and nan in its first (then its second) float input, against torch: the same values (nan where
torch has nan), or the same type of error.

It found nan vanishing (``softshrink``, ``hardshrink`` and ``threshold`` turned a nan input into 0 or the
threshold value), an inf or nan spreading into other outputs through products with 0/1 matrices (``unfold``,
``fold``, adaptive average pooling, the L and U of ``lu``, ``householder_product``), ``matrix_exp`` crashing on
inf, a Cholesky factor computed from a nan matrix that torch refuses, losses that gave nan for inf, and ``binary_cross_entropy`` taking a target outside [0, 1].
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from op_table import OPS
from row_outcomes import flat, result_or_error, values
from test_ops import inputs_for

# (position in the flattened input, value) of each variant
VARIANTS = {
    "mixed": lambda n: [(0, np.inf), (1, -np.inf), (2, np.nan)],
    "infinities": lambda n: [(0, np.inf), (n - 1, -np.inf)],
    "all_minus_inf": lambda n: [(i, -np.inf) for i in range(n)],
    "one_nan": lambda n: [(n // 2, np.nan)],
}

# LAPACK-style algorithms meet a non-finite value at different steps in torch's and NumPy's routines (pivoting,
# blocking, which triangle a solver reads), so their nan patterns differ; and a few deliberate differences.
_LINALG = {
    "linalg_inv": "one_nan", "linalg_inv_direct": "mixed one_nan", "linalg_inv_ex": "one_nan", "inverse": "one_nan",
    "linalg_det_direct": "mixed", "linalg_solve": "one_nan", "linalg_solve_ex": "one_nan",
    "linalg_cholesky": "all_minus_inf", "cholesky": "all_minus_inf", "cholesky_inverse": "all_minus_inf",
    "linalg_cholesky_ex": "mixed infinities all_minus_inf one_nan",  # a failed factor: torch's partial, ember's nan
    "linalg_qr_Q": "mixed infinities", "linalg_qr_R": "mixed infinities all_minus_inf",
    "linalg_qr_r": "mixed infinities all_minus_inf",
    "linalg_svd_S": "infinities all_minus_inf", "linalg_svd_vectors": "infinities all_minus_inf",
    "linalg_svd_Vh": "infinities all_minus_inf", "svd": "infinities all_minus_inf", "linalg_eigvalsh": "infinities",
    "linalg_pinv": "infinities all_minus_inf", "pinverse": "infinities all_minus_inf",  # (by the SVD)
    "linalg_lstsq": "infinities all_minus_inf", "linalg_matrix_power_negative": "one_nan",
    "linalg_solve_triangular": "mixed all_minus_inf", "triangular_solve": "mixed infinities all_minus_inf one_nan",
    "linalg_cond_norms": "mixed all_minus_inf one_nan", "linalg_lu_solve": "infinities",
    "linalg_householder_product": "all_minus_inf one_nan", "orgqr": "all_minus_inf one_nan",
}
DIFFERENCES = {f"{name}/{variant}" for name, variants in _LINALG.items() for variant in variants.split()} | {
    # three operands contracted in another order: inf * 0 lands elsewhere
    "einsum_three/infinities", "einsum_three/all_minus_inf",
    # the mean of -infs is -inf in ember; torch's one-pass var_mean gives nan
    "var_mean_1/all_minus_inf", "std_mean_1/all_minus_inf",
    # the tanh approximation at +inf: ember gives inf, torch's kernel nan
    "F_gelu/mixed", "F_gelu/infinities",
}


# The same, with the special values in the second input (a weight, a target, the right-hand side ...)
_SECOND = {
    "linalg_lstsq": "mixed infinities one_nan", "linalg_solve_triangular": "mixed infinities all_minus_inf one_nan",
    "cholesky_solve": "all_minus_inf", "triangular_solve": "mixed all_minus_inf", "lu_solve": "infinities",
    "linalg_householder_product": "mixed infinities all_minus_inf one_nan", "orgqr": "mixed infinities all_minus_inf one_nan",
    # the transposed convolution runs on its input spread out with zeros: 0 * inf is nan where torch adds nothing
    "conv_transpose2d": "mixed infinities all_minus_inf one_nan",
}
DIFFERENCES |= {f"{name}/{variant}/second" for name, variants in _SECOND.items() for variant in variants.split()}


def _rows():
    for spec in OPS:
        if "float32" not in spec.dtypes:
            continue
        for position, suffix in ((0, ""), (1, "/second")):
            if _with_specials(spec, "one_nan", position) is None:
                continue  # no float input there
            for variant in VARIANTS:
                if f"{spec.name}/{variant}{suffix}" not in DIFFERENCES:
                    yield pytest.param(spec, variant, position, id=f"{spec.name}/{variant}{suffix}")


def _with_specials(spec, variant: str, position: int):
    """The row's first sample, its input at ``position`` given the variant's special values (None: no such float
    input)."""
    inputs = inputs_for(spec, 0, "float32")
    if len(inputs.storage) <= position:
        return None
    key = list(inputs.storage)[position]
    base, layout = inputs.storage[key]
    if base.dtype.kind != "f" or not base.size:
        return None
    base = base.copy()
    flat = base.reshape(-1)
    for i, value in VARIANTS[variant](flat.size):
        if i < flat.size:
            flat[i] = value
    inputs.storage[key] = (base, layout)
    return inputs


def _outcome(spec, lib, inputs):
    args, kwargs, _ = inputs.build(lib)
    return result_or_error(spec, lib, args, kwargs)


def _same_kind(mine, theirs: Exception) -> bool:
    """torch's LinAlgError is a class of its own (``torch.linalg.LinAlgError``); ember's is ``ember.linalg``'s,
    naming the op torch's names (without its "torch.")."""
    def named(error: Exception) -> str:
        return str(error).split(":")[0].removeprefix("torch.")

    return type(theirs).__name__.lstrip("_") == "LinAlgError" and type(mine) is ember.linalg.LinAlgError and \
        named(mine) == named(theirs)


@pytest.mark.parametrize("spec,variant,position", _rows())
def test_row_with_nonfinite_values_matches_torch(spec, variant: str, position: int):
    inputs = _with_specials(spec, variant, position)
    mine, theirs = _outcome(spec, ember, inputs), _outcome(spec, torch, inputs)
    what = f"{spec.name}{spec.samples[0]} with {variant} in input {position}"
    if isinstance(theirs, Exception):
        assert isinstance(mine, type(theirs)) or _same_kind(mine, theirs), \
            f"{what}: torch raises {theirs!r}, ember gave {mine!r}"
        return
    if isinstance(mine, Exception):
        raise mine
    for a, b in zip(flat(mine), flat(theirs), strict=True):
        if not isinstance(b, torch.Tensor):
            continue
        x, y = values(a), values(b)
        assert x.shape == y.shape, f"{what}: shape {x.shape} != {y.shape}"
        if x.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=1e-3, atol=1e-3, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(x, y, err_msg=what)
