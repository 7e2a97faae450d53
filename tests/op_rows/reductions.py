"""Op-table rows: reductions, extrema, scans and softmax."""
from op_spec import (  # noqa: F401
    A, BINARY, C, D, Err, FLOATS, HALF, INTS, OpSpec, S, T, binary_errors, getattr_op, in_place, not_a_tensor, s,
)


def _dim_out_of_range(name: str, *rest) -> Err:
    return Err(lambda m: getattr(m, name)(m.ones(2, 3), 2, *rest), IndexError)


def _picked(name: str, field) -> callable:
    """One result of a tuple-returning op: ``lib.<name>(...)[field]`` (a field name or a position)."""
    if isinstance(field, str):
        return lambda m, *args, **kwargs: getattr(getattr(m, name)(*args, **kwargs), field)
    return lambda m, *args, **kwargs: getattr(m, name)(*args, **kwargs)[field]


def _errors(name: str, *extra: Err) -> tuple:
    return (not_a_tensor(getattr_op(name)),) + extra


WHOLE = (s(A(3, 4)), s(A()), s(T(3, 4)), s(S(2, 3)))
ALONG = (s(A(3, 4), 1), s(A(3, 4), -1, True), s(A(), 0), s(A(0, 3), 1), s(T(3, 4), 0), s(S(3, 4), dim=1, keepdim=True),
         s(A(2, 3, 4), 1))
PAIRS = BINARY[:6]
SCANS = (s(A(3, 4), 1), s(A(3, 4), 0), s(A(), 0), s(A(0, 3), 1), s(T(3, 4), -1), s(S(3, 4), 0), s(A(2, 3, 4), -2))
REDUCED = (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -1, True), s(A(2, 3, 4), (0, 2)), s(A()), s(A(), 0), s(A(0, 3), 1),
           s(T(3, 4), 0), s(S(3, 4), dim=1))
MOMENTS = (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), (0, 1), keepdim=True), s(A(3, 4), 1, correction=0),
           s(A(3, 4), 0, False), s(A(3, 4), 1, True, True), s(A(3, 4), True), s(A(3, 4), -1, correction=2.5),
           s(A(), correction=0), s(A(0, 3), 1), s(T(3, 4), 0), s(S(3, 4), 1, keepdim=True), s(A(2, 3, 4), [0, 2]))
SOFTMAX = (s(A(3, 4), 1), s(A(3, 4), 0), s(A(), 0), s(A(0, 3), 1), s(T(3, 4), -1), s(S(3, 4), 0),
           s(A(2, 3, 4), 1), s(A(3, 4), 1, dtype=D("float64")))
SOFTMAX_ERRORS = (Err(lambda m: m.softmax(m.ones(2, dtype=m.int64), 0), NotImplementedError),
                  Err(lambda m: m.softmax(m.ones(2, 3), 2), IndexError))


def _extremum_rows(name: str) -> tuple:
    return (
        OpSpec(name, getattr_op(name), WHOLE, dtypes=HALF + INTS,
               errors=_errors(name, Err(lambda m: getattr(m, name)(m.ones(0, 3)), RuntimeError),
                              Err(lambda m: getattr(m, name)(m.ones(2), keepdim=True), TypeError))),
        OpSpec(f"{name}_dim", _picked(name, "values"), ALONG, dtypes=HALF + INTS,
               errors=(_dim_out_of_range(name), Err(lambda m: getattr(m, name)(m.ones(0, 3), 0), IndexError))),
        OpSpec(f"{name}_dim_indices", _picked(name, "indices"), ALONG, dtypes=HALF + INTS, differentiable=False),
        OpSpec(f"{name}_other", getattr_op(name), PAIRS, dtypes=HALF + INTS, errors=binary_errors(name)),
    )


def _pairwise(name: str) -> OpSpec:
    return OpSpec(name, getattr_op(name), PAIRS, dtypes=HALF + INTS,
                  errors=binary_errors(name) + (Err(lambda m: getattr(m, name)(m.ones(2), 2.0), TypeError),))


OPS = (
    *_extremum_rows("max"),
    *_extremum_rows("min"),
    OpSpec("argmax", getattr_op("argmax"), WHOLE + ALONG + (s(A(3, 4), None, True),), dtypes=HALF + INTS,
           differentiable=False,
           errors=_errors("argmax", _dim_out_of_range("argmax"),
                          Err(lambda m: m.argmax(m.ones(2, dtype=m.bool)), RuntimeError),
                          Err(lambda m: m.argmax(m.ones(0, 3)), IndexError))),
    OpSpec("argmin", getattr_op("argmin"), WHOLE + ALONG + (s(A(3, 4), None, True),), dtypes=HALF + INTS,
           differentiable=False, errors=_errors("argmin", _dim_out_of_range("argmin"))),
    *[OpSpec(f"aminmax_{field}", _picked("aminmax", field),
             (s(A(3, 4)), s(A(3, 4), dim=1), s(A(3, 4), dim=-1, keepdim=True), s(A()), s(A(), dim=0),
              s(A(0, 3), dim=1), s(T(3, 4), dim=0), s(S(2, 3), keepdim=True)),
             dtypes=HALF + INTS,
             errors=_errors("aminmax", Err(lambda m: m.aminmax(m.ones(0, 3)), RuntimeError),
                            Err(lambda m: m.aminmax(m.ones(2, 3), dim=2), IndexError)))
      for field in ("min", "max")],
    _pairwise("maximum"), _pairwise("minimum"), _pairwise("fmax"), _pairwise("fmin"),
    # ---- sums, products and counts
    OpSpec("prod", getattr_op("prod"),
           (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -1, True), s(A()), s(A(), 0), s(A(0, 3)), s(A(0, 3), 0),
            s(T(3, 4), 0), s(S(3, 4), 1), s(A(3, 4), 1, dtype=D("float64"))),
           domain=(0.5, 1.5), dtypes=FLOATS + INTS + ("bool",),
           errors=_errors("prod", _dim_out_of_range("prod"),
                          Err(lambda m: m.prod(m.ones(2, 3), (0, 1)), TypeError))),
    OpSpec("prod_half", getattr_op("prod"), (s(A(3, 4), 1), s(T(3, 4), 0, True)), domain=(0.5, 1.5),
           dtypes=("float16",), differentiable=False,
           note="along a dim only: over every element torch rounds its half products in an order of its own"),
    OpSpec("prod_with_zeros", getattr_op("prod"),
           (s(A(3, 4)), s(A(3, 4), 1), s(A(4, 5), 0, True), s(T(3, 4), 0), s(A(2, 3, 4), -1)),
           integer_valued=True, domain=(-1.4, 1.4), note="values -1, 0 and 1: rows and columns with one zero, "
                                                         "with several, and with none"),
    OpSpec("nansum", getattr_op("nansum"), REDUCED + (s(A(3, 4), 1, dtype=D("float64")),),
           dtypes=HALF + INTS + ("bool",), errors=_errors("nansum", _dim_out_of_range("nansum"))),
    OpSpec("nanmean", getattr_op("nanmean"), REDUCED, dtypes=HALF,
           errors=_errors("nanmean", _dim_out_of_range("nanmean"),
                          Err(lambda m: m.nanmean(m.ones(2, dtype=m.int64)), RuntimeError))),
    OpSpec("count_nonzero", getattr_op("count_nonzero"), REDUCED[:2] + REDUCED[3:], integer_valued=True,
           domain=(-1.4, 1.4), dtypes=HALF + INTS + ("bool",), differentiable=False,
           errors=_errors("count_nonzero", _dim_out_of_range("count_nonzero"))),
    OpSpec("hash_tensor", getattr_op("hash_tensor"), REDUCED[:2] + (s(A(3, 4), -1, keepdim=True),) + REDUCED[3:],
           dtypes=HALF + INTS + ("bool",), differentiable=False,
           errors=_errors("hash_tensor", _dim_out_of_range("hash_tensor"),
                          Err(lambda m: m.hash_tensor(m.ones(2), mode=1), RuntimeError))),
    # ---- moments
    OpSpec("var", getattr_op("var"), MOMENTS,
           errors=_errors("var", _dim_out_of_range("var"),
                          Err(lambda m: m.var(m.ones(3, dtype=m.int64)), RuntimeError),
                          Err(lambda m: m.var(m.ones(3), 0, False, correction=1), TypeError))),
    OpSpec("std", getattr_op("std"), MOMENTS,
           errors=_errors("std", _dim_out_of_range("std"), Err(lambda m: m.std(m.ones(3, dtype=m.int32)),
                                                               RuntimeError))),
    *[OpSpec(f"{name}_{i}", _picked(name, i), MOMENTS, errors=_errors(name, _dim_out_of_range(name)))
      for name in ("var_mean", "std_mean") for i in (0, 1)],
    OpSpec("var_half", getattr_op("var"), (s(A(3, 4)), s(A(3, 4), 1), s(T(3, 4), 0, keepdim=True)),
           dtypes=("float16",), differentiable=False),
    # ---- log-sum-exp and softmax
    OpSpec("logsumexp", getattr_op("logsumexp"),
           (s(A(3, 4), 1), s(A(3, 4), (0, 1)), s(A(3, 4), -1, True), s(A(), 0), s(A(0, 3), 0), s(A(0, 3), 1),
            s(T(3, 4), 0), s(S(3, 4), 1), s(A(2, 3, 4), [0, 2], keepdim=True)),
           domain=(-3.0, 3.0), dtypes=HALF + INTS, errors=_errors("logsumexp", _dim_out_of_range("logsumexp"))),
    OpSpec("logsumexp_large", getattr_op("logsumexp"), (s(A(3, 4), 1), s(A(3, 4), (0, 1))), domain=(500.0, 800.0),
           note="beyond exp's range in float32: the largest element is taken out first"),
    OpSpec("softmax", getattr_op("softmax"), SOFTMAX, domain=(-3.0, 3.0), dtypes=HALF, errors=SOFTMAX_ERRORS),
    OpSpec("log_softmax", getattr_op("log_softmax"), SOFTMAX, domain=(-3.0, 3.0), dtypes=HALF,
           errors=(Err(lambda m: m.log_softmax(m.ones(2, dtype=m.int64), 0), NotImplementedError),
                   Err(lambda m: m.log_softmax(m.ones(2, 3), -3), IndexError))),
    OpSpec("softmax_method", lambda m, x, *a, **k: x.softmax(*a, **k), SOFTMAX[:3], dtypes=FLOATS),
    OpSpec("log_softmax_method", lambda m, x, *a, **k: x.log_softmax(*a, **k), SOFTMAX[:3], dtypes=FLOATS),
    OpSpec("softmax_large", getattr_op("softmax"), (s(A(3, 4), 1),), domain=(500.0, 800.0)),
    OpSpec("log_softmax_large", getattr_op("log_softmax"), (s(A(3, 4), 1),), domain=(-800.0, 800.0)),
    OpSpec("nn_softmax", lambda m, x, *a, **k: m.nn.functional.softmax(x, *a, **k),
           (s(A(3, 4), 1), s(A(2, 3, 4), dim=-1), s(A(3, 4), 0, dtype=D("float64")), s(A(), dim=0))),
    OpSpec("nn_log_softmax", lambda m, x, *a, **k: m.nn.functional.log_softmax(x, *a, **k),
           (s(A(3, 4), 1), s(A(2, 3, 4), dim=-1), s(A(3, 4), 0, dtype=D("float64")), s(A(), dim=0))),
    # ---- scans
    OpSpec("cumsum", getattr_op("cumsum"), SCANS + (s(A(3, 4), 1, dtype=D("float64")),), dtypes=HALF + INTS + ("bool",),
           errors=_errors("cumsum", _dim_out_of_range("cumsum"))),
    OpSpec("cumprod", getattr_op("cumprod"), SCANS + (s(A(3, 4), 1, dtype=D("float64")),), domain=(0.5, 1.5),
           dtypes=HALF + INTS, errors=_errors("cumprod", _dim_out_of_range("cumprod"))),
    # (in place, an int32 tensor keeps its dtype, where the op gives int64: these rows leave int32 out)
    OpSpec("cumsum_inplace", getattr_op("cumsum"), SCANS, dtypes=HALF + ("int64",), inplace=in_place("cumsum_"),
           errors=(Err(lambda m: m.ones(3).cumsum_(0, dtype=m.float64), RuntimeError, "cumsum_"),)),
    OpSpec("cumprod_inplace", getattr_op("cumprod"), SCANS, domain=(0.5, 1.5), dtypes=HALF + ("int64",),
           inplace=in_place("cumprod_"),
           errors=(Err(lambda m: m.ones(3, dtype=m.int32).cumprod_(0, dtype=m.int64), RuntimeError, "cumprod_"),)),
    OpSpec("cumprod_with_zeros", getattr_op("cumprod"),
           (s(A(3, 4), 1), s(A(4, 5), 0), s(T(3, 4), 1), s(A(2, 3, 4), -1)), integer_valued=True, domain=(-1.4, 1.4),
           note="values -1, 0 and 1: scans with one zero, with several, and with none"),
    *[OpSpec(f"{name}_{field}", _picked(name, field), SCANS, dtypes=HALF + INTS, differentiable=field == "values",
             errors=_errors(name, _dim_out_of_range(name)))
      for name in ("cummax", "cummin") for field in ("values", "indices")],
    OpSpec("logcumsumexp", getattr_op("logcumsumexp"), SCANS, domain=(-3.0, 3.0), dtypes=HALF,
           errors=_errors("logcumsumexp", _dim_out_of_range("logcumsumexp"),
                          Err(lambda m: m.logcumsumexp(m.ones(2, dtype=m.int64), 0), NotImplementedError))),
    OpSpec("logcumsumexp_large", getattr_op("logcumsumexp"), (s(A(3, 4), 1),), domain=(500.0, 800.0)),
)
