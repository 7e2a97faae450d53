"""The named tuples that ops with several results return, as ``torch.return_types``.

Each is a tuple (it unpacks, indexes and compares as one) whose fields also have names. As torch's structseqs,
one is made from one sequence of its fields, and pickles:

>>> import ember, pickle
>>> result = ember.return_types.sort((ember.tensor([1.]), ember.tensor([0])))
>>> values, indices = result
>>> result.indices
tensor([0])
>>> result
ember.return_types.sort(
values=tensor([1.]),
indices=tensor([0]))
>>> ember.return_types.sort.n_fields, pickle.loads(pickle.dumps(result)) == result
(2, True)
"""
from __future__ import annotations

from collections import namedtuple as _namedtuple

from ember.utils import _pytree  # each result type is a pytree node, as torch registers its structseqs


def _result_type(name: str, fields: str) -> type:
    """A named tuple ``ember.return_types.<name>`` that behaves as torch's structseq of that name."""
    base = _namedtuple(name, fields)
    n_fields = len(base._fields)
    title = f"ember.return_types.{name}"

    def __new__(cls, *args, **kwargs):
        # ember's ops pass the fields one by one (``max(values, indices)``), as a plain named tuple takes them; a
        # second argument that is a dict is torch's ``(sequence, dict)`` form instead
        if len(args) == n_fields and not kwargs and not (n_fields == 2 and isinstance(args[1], dict)):
            return _tuple_new(cls, args)
        return _tuple_new(cls, _fields_of(title, n_fields, *args, **kwargs))

    def __repr__(self) -> str:
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"{title}(\n{body})"

    def __reduce__(self):  # as torch's: rebuilt from one sequence
        return type(self), (tuple(self), {})

    namespace = {"__slots__": (), "__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__,
                 "__module__": __name__, "n_fields": n_fields, "n_sequence_fields": n_fields, "n_unnamed_fields": 0}
    result_type = type(name, (base,), namespace)
    _pytree.register_pytree_node(result_type, _pytree._sequence_flatten, lambda fields, _: result_type(tuple(fields)),
                                 flatten_with_keys_fn=_pytree._sequence_keys)
    return result_type


_tuple_new = tuple.__new__


def _fields_of(title: str, n_fields: int, sequence=None, dict=None, **named) -> tuple:
    """The fields in ``sequence``, as torch's structseq constructor takes them (``dict``: its unnamed fields,
    which ember's results have none of)."""
    if named:
        raise TypeError(f"{title}() takes its fields as one sequence, not by name (got {', '.join(named)}=): "
                        f"e.g. {title}((a, b))")
    if sequence is None:
        raise TypeError(f"{title}() missing required argument 'sequence' (pos 1): pass the fields as one "
                        f"sequence, e.g. {title}((a, b))")
    try:
        fields = tuple(sequence)
    except TypeError:
        raise TypeError(f"{title}(): constructor requires a sequence of its {n_fields} fields, got "
                        f"{type(sequence).__name__}") from None
    if dict is not None and not isinstance(dict, type({})):
        raise TypeError(f"{title}(): constructor requires a sequence, and a dict as its second argument, got "
                        f"{type(dict).__name__}")
    if len(fields) != n_fields:
        raise TypeError(f"{title}() takes a {n_fields}-sequence ({len(fields)}-sequence given)")
    return fields


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
histogram_out = _result_type("histogram_out", "hist bin_edges")
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
