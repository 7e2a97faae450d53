"""The named tuples that ops with several results return, as ``torch.return_types``.

Each is a tuple (it unpacks and indexes as one) whose fields also have names:

>>> import ember
>>> result = ember.return_types.sort(values=ember.tensor([1.]), indices=ember.tensor([0]))
>>> values, indices = result
>>> result.indices
tensor([0])
>>> result
ember.return_types.sort(
values=tensor([1.]),
indices=tensor([0]))
"""
from __future__ import annotations

from collections import namedtuple


def _result_type(name: str, fields: str) -> type:
    """A named tuple ``ember.return_types.<name>`` whose repr puts each field on a line of its own, as torch's."""
    base = namedtuple(name, fields)

    def __repr__(self) -> str:
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"ember.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})


max = _result_type("max", "values indices")
min = _result_type("min", "values indices")
aminmax = _result_type("aminmax", "min max")
cummax = _result_type("cummax", "values indices")
cummin = _result_type("cummin", "values indices")
sort = _result_type("sort", "values indices")
topk = _result_type("topk", "values indices")
kthvalue = _result_type("kthvalue", "values indices")
median = _result_type("median", "values indices")
nanmedian = _result_type("nanmedian", "values indices")
mode = _result_type("mode", "values indices")
frexp = _result_type("frexp", "mantissa exponent")
slogdet = _result_type("slogdet", "sign logabsdet")
qr = _result_type("qr", "Q R")
svd = _result_type("svd", "U S V")
linalg_slogdet = _result_type("linalg_slogdet", "sign logabsdet")
linalg_qr = _result_type("linalg_qr", "Q R")
linalg_svd = _result_type("linalg_svd", "U S Vh")
linalg_eig = _result_type("linalg_eig", "eigenvalues eigenvectors")
linalg_eigh = _result_type("linalg_eigh", "eigenvalues eigenvectors")
linalg_lstsq = _result_type("linalg_lstsq", "solution residuals rank singular_values")
linalg_inv_ex = _result_type("linalg_inv_ex", "inverse info")
linalg_cholesky_ex = _result_type("linalg_cholesky_ex", "L info")
linalg_solve_ex = _result_type("linalg_solve_ex", "result info")
linalg_lu_factor = _result_type("linalg_lu_factor", "LU pivots")
linalg_lu_factor_ex = _result_type("linalg_lu_factor_ex", "LU pivots info")
linalg_lu = _result_type("linalg_lu", "P L U")
lu_unpack = _result_type("lu_unpack", "P L U")
_lu_with_info = _result_type("_lu_with_info", "LU pivots info")
triangular_solve = _result_type("triangular_solve", "solution cloned_coefficient")
geqrf = _result_type("geqrf", "a tau")

# what the ops return when given out=, as torch names them
max_out = _result_type("max_out", "values indices")
min_out = _result_type("min_out", "values indices")
aminmax_out = _result_type("aminmax_out", "min max")
cummax_out = _result_type("cummax_out", "values indices")
cummin_out = _result_type("cummin_out", "values indices")
histogram = _result_type("histogram", "hist bin_edges")
histogramdd = _result_type("histogramdd", "hist bin_edges")
linalg_ldl_factor = _result_type("linalg_ldl_factor", "LD pivots")
linalg_ldl_factor_ex = _result_type("linalg_ldl_factor_ex", "LD pivots info")
sort_out = _result_type("sort_out", "values indices")
topk_out = _result_type("topk_out", "values indices")
kthvalue_out = _result_type("kthvalue_out", "values indices")
median_out = _result_type("median_out", "values indices")
nanmedian_out = _result_type("nanmedian_out", "values indices")
mode_out = _result_type("mode_out", "values indices")
frexp_out = _result_type("frexp_out", "mantissa exponent")
slogdet_out = _result_type("slogdet_out", "sign logabsdet")
qr_out = _result_type("qr_out", "Q R")
svd_out = _result_type("svd_out", "U S V")
geqrf_out = _result_type("geqrf_out", "a tau")
triangular_solve_out = _result_type("triangular_solve_out", "solution cloned_coefficient")
lu_unpack_out = _result_type("lu_unpack_out", "P L U")
linalg_slogdet_out = _result_type("linalg_slogdet_out", "sign logabsdet")
linalg_qr_out = _result_type("linalg_qr_out", "Q R")
linalg_svd_out = _result_type("linalg_svd_out", "U S Vh")
linalg_eig_out = _result_type("linalg_eig_out", "eigenvalues eigenvectors")
linalg_eigh_out = _result_type("linalg_eigh_out", "eigenvalues eigenvectors")
linalg_lstsq_out = _result_type("linalg_lstsq_out", "solution residuals rank singular_values")
linalg_inv_ex_out = _result_type("linalg_inv_ex_out", "inverse info")
linalg_cholesky_ex_out = _result_type("linalg_cholesky_ex_out", "L info")
linalg_solve_ex_out = _result_type("linalg_solve_ex_out", "result info")
linalg_lu_factor_out = _result_type("linalg_lu_factor_out", "LU pivots")
linalg_lu_factor_ex_out = _result_type("linalg_lu_factor_ex_out", "LU pivots info")
linalg_lu_out = _result_type("linalg_lu_out", "P L U")
linalg_ldl_factor_out = _result_type("linalg_ldl_factor_out", "LD pivots")
linalg_ldl_factor_ex_out = _result_type("linalg_ldl_factor_ex_out", "LD pivots info")
