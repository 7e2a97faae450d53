"""Op-table rows: unary math (trigonometric, hyperbolic, exp/log family), the special functions and ember.special."""
import numpy as np

from op_spec import (  # noqa: F401
    A, BINARY, C, COMPLEX_UNARY, D, Err, FLOATS, HALF, INTS, OpSpec, S, T, UNARY, binary_errors, getattr_op, in_place,
    not_a_tensor, s, unary,
)

INTEGERS = (-3.0, -2.0, -1.0, 0.0)  # the poles of lgamma, digamma and polygamma


def special(name: str, domain=(-2.0, 2.0), dtypes=HALF + INTS, mentions: str | None = None, **options) -> OpSpec:
    """A row for ``lib.special.<name>(x)``; a list where the tensor belongs is a TypeError naming the function."""
    op = lambda m, *args, **kwargs: getattr(m.special, name)(*args, **kwargs)  # noqa: E731
    return OpSpec(f"special_{name}", op, UNARY, domain=domain, dtypes=dtypes,
                  errors=(Err(lambda m: op(m, [1.0, 2.0]), TypeError, mentions or name),), **options)


def incomplete_gamma(name: str, op) -> OpSpec:
    """A row for P(a, x) or Q(a, x): differentiable in x (torch has no derivative in a, see test_pointwise)."""
    a_values, mention = C(np.array([0.5, 1.0, 2.0, 4.5])), name.removeprefix("special_")
    return OpSpec(name, op, (s(C(np.full((3, 4), 2.0)), A(3, 4)), s(C(np.array(1.5)), A()), s(a_values, A(3, 4)),
                             s(a_values, T(4, 4)), s(C(np.array([0.7, 3.0, 9.0])), S(2, 3)), s(a_values, A(0, 4))),
                  domain=(0.1, 6.0),
                  errors=(Err(lambda m: op(m, m.tensor([2]), m.tensor([1])), NotImplementedError, mention),
                          Err(lambda m: op(m, m.ones(2, 3), m.ones(4)), RuntimeError, mention),
                          Err(lambda m: op(m, 2.0, m.ones(2)), TypeError, mention)))


def polynomial(name: str, domain: tuple) -> OpSpec:
    """A row for ``lib.special.<name>(x, n)``: n a number or a tensor of degrees; no gradient, as in torch."""
    op = lambda m, x, n: getattr(m.special, name)(x, n)  # noqa: E731
    degrees = C(np.array([[0, 1, 2, 12]]))
    return OpSpec(name, op, (s(A(3, 4), 3), s(A(), 0), s(A(0, 3), 2), s(T(3, 4), 12), s(S(2, 3), C(np.array([1, 4, 9]))),
                             s(A(3, 1), degrees), s(0.5, degrees), s(A(3), -1), s(A(2, 4), C(np.array([2.7, -2.7, 5.0, 1.0])))),
                  domain=domain, dtypes=("float64", "float16") + INTS, differentiable=False,  # single: test_pointwise
                  errors=(Err(lambda m: op(m, 0.5, 3), TypeError, name),
                          Err(lambda m: op(m, m.ones(2, 3), m.ones(4, dtype=m.int64)), RuntimeError, name)))


NUMBER_SIDES = (s(A(3, 4), 2.5), s(2.5, A(3, 4)), s(3, A(2, 3)), s(A(2, 3), 2))

OPS = (
    # ---- trigonometric and hyperbolic
    unary("sin", inplace=in_place("sin_"), complex_samples=COMPLEX_UNARY),
    unary("cos", inplace=in_place("cos_"), complex_samples=COMPLEX_UNARY),
    unary("tan", domain=(-1.2, 1.2), inplace=in_place("tan_"), complex_samples=COMPLEX_UNARY),
    unary("asin", domain=(-0.9, 0.9), inplace=in_place("asin_"), complex_samples=COMPLEX_UNARY),
    unary("acos", domain=(-0.9, 0.9), inplace=in_place("acos_"), complex_samples=COMPLEX_UNARY),
    unary("atan", domain=(-3.0, 3.0), inplace=in_place("atan_"), complex_samples=COMPLEX_UNARY),
    unary("sinh", inplace=in_place("sinh_"), complex_samples=COMPLEX_UNARY),
    unary("cosh", inplace=in_place("cosh_"), complex_samples=COMPLEX_UNARY),
    unary("asinh", domain=(-3.0, 3.0), complex_samples=COMPLEX_UNARY),  # torch has no gradient for the in-place form (test_pointwise)
    unary("acosh", domain=(1.1, 3.0), complex_samples=COMPLEX_UNARY),  # torch has no gradient for the in-place form (test_pointwise)
    unary("atanh", domain=(-0.9, 0.9), complex_samples=COMPLEX_UNARY),  # torch has no gradient for the in-place form (test_pointwise)
    unary("arcsin", domain=(-0.9, 0.9), inplace=in_place("arcsin_"), complex_samples=COMPLEX_UNARY),
    unary("arccos", domain=(-0.9, 0.9), inplace=in_place("arccos_"), complex_samples=COMPLEX_UNARY),
    unary("arctan", inplace=in_place("arctan_"), complex_samples=COMPLEX_UNARY),
    unary("arcsinh", complex_samples=COMPLEX_UNARY),  # torch has no gradient for the in-place form (test_pointwise)
    unary("arccosh", domain=(1.1, 3.0), complex_samples=COMPLEX_UNARY),  # torch has no gradient for the in-place form (test_pointwise)
    unary("arctanh", domain=(-0.9, 0.9), complex_samples=COMPLEX_UNARY),  # torch has no gradient for the in-place form (test_pointwise)
    unary("deg2rad", domain=(-360.0, 360.0), inplace=in_place("deg2rad_")),
    unary("rad2deg", inplace=in_place("rad2deg_")),
    unary("sinc", domain=(-3.0, 3.0), inplace=in_place("sinc_"), complex_samples=COMPLEX_UNARY),
    # ---- exp and log family
    unary("exp2", domain=(-3.0, 3.0), inplace=in_place("exp2_"), complex_samples=COMPLEX_UNARY),
    unary("expm1", inplace=in_place("expm1_"), complex_samples=COMPLEX_UNARY),
    unary("log2", domain=(0.1, 5.0), inplace=in_place("log2_"), complex_samples=COMPLEX_UNARY),
    unary("log10", domain=(0.1, 5.0), inplace=in_place("log10_"), complex_samples=COMPLEX_UNARY),
    unary("log1p", domain=(-0.8, 3.0), inplace=in_place("log1p_"), complex_samples=COMPLEX_UNARY),
    unary("rsqrt", domain=(0.1, 4.0), inplace=in_place("rsqrt_"), complex_samples=COMPLEX_UNARY),
    unary("square", inplace=in_place("square_"), complex_samples=COMPLEX_UNARY),
    unary("sgn", away_from=(0.0,), inplace=in_place("sgn_"), complex_samples=COMPLEX_UNARY),
    OpSpec("frac", getattr_op("frac"), UNARY, domain=(-2.5, 2.5), away_from=(-2.0, -1.0, 0.0, 1.0, 2.0),
           dtypes=HALF, inplace=in_place("frac_"),
           errors=(not_a_tensor(getattr_op("frac")), Err(lambda m: m.frac(m.tensor([1, 2])), NotImplementedError))),
    OpSpec("logit", getattr_op("logit"), UNARY + (s(A(3, 4), 0.25), s(T(3, 4), eps=0.2), s(A(), 1e-6)),
           domain=(0.05, 0.95), away_from=(0.25, 0.75, 0.2, 0.8), dtypes=HALF + INTS, inplace=in_place("logit_"),
           errors=(not_a_tensor(getattr_op("logit")),)),
    # ---- special functions
    unary("erf", domain=(-3.0, 3.0), inplace=in_place("erf_")),
    unary("erfc", domain=(-3.0, 5.0), inplace=in_place("erfc_")),
    unary("erfinv", domain=(-0.95, 0.95), inplace=in_place("erfinv_")),
    unary("lgamma", domain=(-3.5, 6.0), away_from=INTEGERS, inplace=in_place("lgamma_")),
    unary("digamma", domain=(-3.5, 6.0), away_from=INTEGERS, inplace=in_place("digamma_")),
    OpSpec("polygamma", getattr_op("polygamma"),
           (s(1, A(3, 4)), s(2, A()), s(3, A(0, 3)), s(0, T(3, 4)), s(4, S(2, 3)), s(1, A(2, 2))),
           domain=(0.2, 8.0), dtypes=HALF + INTS,
           errors=(Err(lambda m: m.polygamma(-1, m.ones(2)), RuntimeError),
                   Err(lambda m: m.polygamma(1.5, m.ones(2)), TypeError),
                   Err(lambda m: m.polygamma(1, [1.0]), TypeError))),
    OpSpec("polygamma_negative", getattr_op("polygamma"), (s(1, A(3, 4)), s(2, A(2, 3)), s(3, T(2, 3))),
           domain=(-2.9, -0.1), away_from=(-2.0, -1.0)),
    OpSpec("polygamma_method", lambda m, x, n: x.polygamma(n), (s(A(3, 4), 1), s(A(), 2), s(T(3, 4), 3)),
           domain=(0.2, 5.0), inplace=lambda x, n: x.polygamma_(n)),
    unary("i0", domain=(-6.0, 6.0), inplace=in_place("i0_")),
    OpSpec("xlogy", getattr_op("xlogy"), BINARY[:6] + NUMBER_SIDES, domain=(0.1, 3.0), dtypes=FLOATS + INTS,
           inplace=in_place("xlogy_"), errors=binary_errors("xlogy") + (
               Err(lambda m: m.xlogy(2.0, 3.0), TypeError),)),
    # ---- ember.special
    special("expit"),
    special("logit", domain=(0.05, 0.95)),
    special("erf"),
    special("erfc"),
    special("erfcx", domain=(-2.0, 6.0), dtypes=FLOATS + INTS),
    special("erfinv", domain=(-0.95, 0.95)),
    special("gammaln", domain=(0.1, 6.0)),
    special("digamma", domain=(0.1, 6.0)),
    special("psi", domain=(0.1, 6.0), mentions="digamma"),  # psi is digamma, under another name
    special("entr", domain=(0.05, 3.0)),
    special("sinc"),
    special("i0", domain=(-6.0, 6.0)),
    special("i0e", domain=(-6.0, 6.0), away_from=(0.0,), dtypes=FLOATS + INTS),
    special("i1", domain=(-6.0, 6.0), dtypes=FLOATS + INTS),
    special("i1e", domain=(-6.0, 6.0), away_from=(0.0,), dtypes=FLOATS + INTS),
    special("ndtr", domain=(-4.0, 4.0), grad_fn={i: "SpecialNdtrBackward0" for i in range(5)},
                note="one op (float32 scales its argument in double): its node is SpecialNdtrBackward0, torch's, "
                     "composed as 0.5 * erfc(-x / sqrt(2)), MulBackward1"),
    special("ndtri", domain=(0.02, 0.98), dtypes=FLOATS + INTS),
    special("log_ndtr", domain=(-6.0, 4.0), dtypes=FLOATS + INTS),
    special("expm1"),
    special("exp2"),
    special("log1p", domain=(-0.8, 3.0)),
    OpSpec("special_round", lambda m, x, **k: m.special.round(x, **k), (s(A(3, 4)), s(A()), s(T(3, 4), decimals=1)),
           domain=(-3.0, 3.0), away_from=(-2.5, -1.5, -0.5, 0.5, 1.5, 2.5), dtypes=HALF,
           errors=(Err(lambda m: m.special.round(m.tensor([1, 2])), NotImplementedError, "round"),)),
    OpSpec("special_polygamma", lambda m, n, x: m.special.polygamma(n, x), (s(1, A(3, 4)), s(2, A()), s(3, T(2, 3))),
           domain=(0.2, 5.0)),
    OpSpec("special_multigammaln", lambda m, x, p: m.special.multigammaln(x, p),
           (s(A(3, 4), 1), s(A(), 3), s(T(3, 4), 2), s(A(0, 3), 4)), domain=(1.6, 5.0),
           errors=(Err(lambda m: m.special.multigammaln(m.tensor([2.0]), 0), RuntimeError, "p has to be"),)),
    OpSpec("special_zeta", lambda m, x, q: m.special.zeta(x, q),
           (s(3.0, A(3, 4)), s(2, A()), s(C(np.full((3, 1), 2.5)), A(1, 4)), s(4.0, T(3, 4)), s(2.0, S(2, 3)),
            s(2.0, A(0, 3)), s(C(np.array([2.0, 3.5])), A(2))),
           domain=(0.5, 5.0),
           errors=(Err(lambda m: m.special.zeta(m.ones(2, 3), m.ones(4)), RuntimeError, "zeta"),
                   Err(lambda m: m.special.zeta(2.0, "a"), TypeError, "zeta"))),
    OpSpec("special_zeta_values", lambda m, x, q: m.special.zeta(x, q),
           (s(A(3, 4), A(3, 4)), s(A(3, 1), A(4)), s(A(2, 3), 1.5), s(A(), A())), domain=(1.2, 6.0),
           dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("mvlgamma", getattr_op("mvlgamma"), (s(A(3, 4), 1), s(A(), 3), s(T(3, 4), 2), s(S(2, 3), 4)),
           domain=(1.6, 5.0), inplace=in_place("mvlgamma_"),
           errors=(Err(lambda m: m.mvlgamma(m.tensor([2.0]), 0), RuntimeError, "p has to be"),)),
    incomplete_gamma("igamma", getattr_op("igamma")),  # (igamma_ and igammac_: in test_pointwise, as their input
    incomplete_gamma("igammac", getattr_op("igammac")),  # a has no gradient, and here the inputs with one come second)
    incomplete_gamma("special_gammainc", lambda m, a, x: m.special.gammainc(a, x)),
    incomplete_gamma("special_gammaincc", lambda m, a, x: m.special.gammaincc(a, x)),
    OpSpec("igamma_values", getattr_op("igamma"), (s(A(3, 4), A(3, 4)), s(A(3, 1), A(4)), s(A(), A())),
           domain=(0.1, 6.0), differentiable=False),
    polynomial("chebyshev_polynomial_t", (-1.5, 1.5)),
    polynomial("chebyshev_polynomial_u", (-1.5, 1.5)),
    polynomial("chebyshev_polynomial_v", (-1.5, 1.5)),
    polynomial("chebyshev_polynomial_w", (-1.5, 1.5)),
    polynomial("shifted_chebyshev_polynomial_t", (-0.25, 1.25)),
    polynomial("shifted_chebyshev_polynomial_u", (-0.25, 1.25)),
    polynomial("shifted_chebyshev_polynomial_v", (-0.25, 1.25)),
    polynomial("shifted_chebyshev_polynomial_w", (-0.25, 1.25)),
    polynomial("hermite_polynomial_h", (-2.0, 2.0)),
    polynomial("hermite_polynomial_he", (-2.0, 2.0)),
    polynomial("laguerre_polynomial_l", (0.0, 5.0)),
    polynomial("legendre_polynomial_p", (-1.2, 1.2)),
    special("modified_bessel_i0", domain=(-30.0, 30.0), dtypes=FLOATS + INTS, differentiable=False),
    special("modified_bessel_i1", domain=(-30.0, 30.0), dtypes=FLOATS + INTS, differentiable=False),
    special("spherical_bessel_j0", domain=(-10.0, 10.0), dtypes=FLOATS + INTS, differentiable=False),
    special("modified_bessel_k0", domain=(0.05, 60.0), dtypes=FLOATS + INTS, differentiable=False),
    special("modified_bessel_k1", domain=(0.05, 60.0), dtypes=FLOATS + INTS, differentiable=False),
    special("scaled_modified_bessel_k0", domain=(0.05, 80.0), dtypes=FLOATS + INTS, differentiable=False),
    special("scaled_modified_bessel_k1", domain=(0.05, 80.0), dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("special_xlogy", lambda m, x, y: m.special.xlogy(x, y), BINARY[:6] + NUMBER_SIDES, domain=(0.1, 3.0)),
    OpSpec("special_xlog1py", lambda m, x, y: m.special.xlog1py(x, y), BINARY[:6] + NUMBER_SIDES,
           domain=(-0.5, 2.0), dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.special.xlog1py(m.ones(2, 3), m.ones(4)), RuntimeError, "xlog1py"),
                   Err(lambda m: m.special.xlog1py(m.ones(2), "a"), TypeError, "xlog1py"))),
)
