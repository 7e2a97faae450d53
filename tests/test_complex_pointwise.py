"""Complex tensors through the pointwise ops, against torch.

The op table (``complex_samples`` rows, tests/test_ops.py) checks each complex-aware op's values, gradients,
gradcheck and gradgradcheck on its own samples. This file checks what a row cannot say:

* torch's refusals: every op of ``REFUSALS`` is run on a complex tensor in both libraries, and both must refuse
  (with the same error type, ember's message naming the op) or both give the same values; NumPy must never
  answer for torch's refusals (it orders complex numbers by their real parts, a silent wrong result);
* mixed operands: a real tensor with a complex one, or with a complex Python number (the real input's gradient
  is real), and the in-place forms, which refuse to write a complex result into a real tensor;
* forward-mode AD: the tangent of a holomorphic f is ``f'(z) t``, not conjugated;
* corners: nan and inf in each part, 0 ** 0, closeness, and random values (hypothesis).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import both, both_raise

Z = [0.5 + 0.3j, -1.2 + 0.7j, 2.0 - 1.5j, -0.4 - 0.9j]
W = [1.5 - 0.3j, 0.2 + 0.7j, -2.0 - 1.5j, 0.8 + 0.1j]


def _resolved(value):
    """Tensors (nested in tuples) with torch's lazy conjugate made real, so that they can become arrays."""
    if isinstance(value, (tuple, list)):
        return type(value)(_resolved(v) for v in value)
    return value.resolve_conj() if isinstance(value, (torch.Tensor, ember.Tensor)) else value


def same(program):
    """``program(lib)`` in torch and in ember: the same values, dtypes and shapes (warnings of nan quietly)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return both(lambda lib: _resolved(program(lib)))


# ----------------------------------------------------------------- torch's refusals

F = "lib.nn.functional"
REFUSALS = {
    # ordering
    "lt": "lib.lt(z, w)", "le": "z <= w", "gt": "z > 1", "ge": "lib.ge(z, w)", "maximum": "lib.maximum(z, w)",
    "minimum": "lib.minimum(z, w)", "fmax": "lib.fmax(z, w)", "fmin": "lib.fmin(z, w)",
    "clamp": "lib.clamp(z, 0, 1)", "clamp_tensors": "lib.clamp(z, w)", "clip": "z.clip(max=1)",
    "clamp_min": "lib.clamp_min(z, 0)", "clamp_": "z.clone().clamp_(0, 1)", "max": "lib.max(z)",
    "max_dim": "lib.max(z, 0)", "max_binary": "lib.max(z, w)", "min": "z.min()", "min_dim": "z.min(dim=0)",
    "amax": "lib.amax(z)", "amin": "z.amin(0)", "aminmax": "lib.aminmax(z)", "argmax": "lib.argmax(z)",
    "argmin": "z.argmin(0)", "sort": "lib.sort(z)", "argsort": "z.argsort()", "msort": "lib.msort(z)",
    "topk": "lib.topk(z, 2)", "kthvalue": "lib.kthvalue(z, 2)", "median": "lib.median(z)",
    "median_dim": "z.median(0)", "nanmedian": "lib.nanmedian(z)", "mode": "lib.mode(z)",
    "quantile": "lib.quantile(z, 0.5)", "cummax": "lib.cummax(z, 0)", "cummin": "lib.cummin(z, 0)",
    "searchsorted": "lib.searchsorted(z, w)", "searchsorted_values": "lib.searchsorted(z.real, w)",
    "bucketize": "lib.bucketize(w, z)", "unique": "lib.unique(z)", "unique_consecutive": "z.unique_consecutive()",
    # rounding
    "floor": "lib.floor(z)", "ceil": "z.ceil()", "round": "lib.round(z)", "round_decimals": "z.round(decimals=1)",
    "trunc": "lib.trunc(z)", "frac": "lib.frac(z)", "fix": "lib.fix(z)", "sign": "lib.sign(z)",
    "signbit": "lib.signbit(z)", "div_floor": "lib.div(z, w, rounding_mode='floor')",
    "div_trunc": "z.div(w, rounding_mode='trunc')", "floor_divide": "lib.floor_divide(z, w)",
    "floordiv_operator": "z // 2", "remainder": "lib.remainder(z, w)", "mod_operator": "z % 2",
    "fmod": "lib.fmod(z, 2)",
    # two real arguments
    "atan2": "lib.atan2(z, w)", "hypot": "lib.hypot(z, w)", "copysign": "lib.copysign(z, w)",
    "heaviside": "lib.heaviside(z, w)", "logaddexp2": "lib.logaddexp2(z, w)", "nextafter": "lib.nextafter(z, w)",
    "xlogy": "lib.xlogy(z, w)", "xlogy_real": "lib.xlogy(z.real, w)", "special_xlog1py": "lib.special.xlog1py(z, w)",
    "igamma": "lib.igamma(z, w)", "gcd": "lib.gcd(z, w)",
    # special functions
    "erf": "lib.erf(z)", "erfc": "z.erfc()", "erfinv": "lib.erfinv(z)", "lgamma": "lib.lgamma(z)",
    "digamma": "lib.digamma(z)", "polygamma": "lib.polygamma(1, z)", "mvlgamma": "lib.mvlgamma(z, 2)",
    "i0": "lib.i0(z)", "special_i0e": "lib.special.i0e(z)", "special_i1": "lib.special.i1(z)",
    "special_ndtr": "lib.special.ndtr(z)", "special_ndtri": "lib.special.ndtri(z)",
    "special_log_ndtr": "lib.special.log_ndtr(z)", "special_entr": "lib.special.entr(z)",
    "special_erfcx": "lib.special.erfcx(z)", "special_bessel_j0": "lib.special.bessel_j0(z)",
    "logit": "lib.logit(z)", "deg2rad": "lib.deg2rad(z)", "rad2deg": "z.rad2deg()",
    # activations that compare with 0
    "relu": "lib.relu(z)", "relu_": "z.clone().relu_()", "relu6": f"{F}.relu6(z)", "hardtanh": f"{F}.hardtanh(z)",
    "leaky_relu": f"{F}.leaky_relu(z)", "rrelu": f"{F}.rrelu(z)", "elu": f"{F}.elu(z)", "selu": f"{F}.selu(z)",
    "celu": f"{F}.celu(z)", "gelu": f"{F}.gelu(z)", "softplus": f"{F}.softplus(z)", "mish": f"{F}.mish(z)",
    "hardsigmoid": f"{F}.hardsigmoid(z)", "hardswish": f"{F}.hardswish(z)", "logsigmoid": f"{F}.logsigmoid(z)",
    "hardshrink": f"{F}.hardshrink(z)", "softshrink": f"{F}.softshrink(z)", "threshold": f"{F}.threshold(z, 0.1, 0.)",
    "glu": f"{F}.glu(lib.cat([z, w]))",
    # classification that has no meaning for complex numbers, and ops whose result a complex tensor cannot hold
    "isposinf": "lib.isposinf(z)", "isneginf": "lib.isneginf(z)", "isin": "lib.isin(z, w)",
    "bitwise_and": "lib.bitwise_and(z, w)", "and_operator": "z & w", "bitwise_not": "lib.bitwise_not(z)",
    "invert_operator": "~z", "bitwise_left_shift": "lib.bitwise_left_shift(z, w)", "lcm": "lib.lcm(z, w)",
    "abs_": "z.clone().abs_()", "mul_into_real": "z.real.clone().mul_(w)", "float_power_": "z.real.clone().float_power_(2j)",
    "add_complex_alpha_to_real": "lib.add(z.real, z.real, alpha=2j)", "nan_to_num_grad": "lib.nan_to_num(z.requires_grad_())",
    # ... and the pointwise ops torch computes, in the same table: both must agree
    "silu": f"{F}.silu(z)", "tanhshrink": f"{F}.tanhshrink(z)", "softsign": f"{F}.softsign(z)",
    "logaddexp": "lib.logaddexp(z, w)", "ldexp": "lib.ldexp(z, lib.tensor([1, 2, -1, 0]))",
    "float_power": "lib.float_power(z, w)", "isnan": "lib.isnan(z)", "isreal": "lib.isreal(z)",
    "eq": "z == w", "ne": "lib.ne(z, z.conj())", "equal": "lib.equal(z, z.clone())", "sgn": "lib.sgn(z)",
    "angle": "lib.angle(z)", "abs": "lib.abs(z)", "exp2": "lib.exp2(z)", "sinc": "lib.sinc(z)",
}


# another name of an op, or an op written with another: the name its message (as torch's) gives
NAMED_AS = {"fix": "trunc", "msort": "sort", "argsort": "sort", "clip": "clamp", "mod_operator": "remainder",
            "floordiv_operator": "floor_divide", "mvlgamma": "lgamma", "special_ndtr": "ndtr", "mul_into_real": "mul_",
            "float_power_": "float_power_", "add_complex_alpha_to_real": "add", "nan_to_num_grad": "nan_to_num",
            "searchsorted_values": "searchsorted", "median_dim": "median", "min_dim": "min", "max_binary": "maximum",
            "clamp_tensors": "clamp", "clamp_min": "clamp", "relu_": "clamp", "relu": "clamp", "round_decimals": "round",
            "special_log_ndtr": "log_ndtr", "special_bessel_j0": "bessel_j0", "xlogy_real": "xlogy", "abs_": "abs",
            "max_dim": "max", "div_floor": "div", "div_trunc": "div", "clamp_": "clamp",
            "and_operator": "bitwise_and", "invert_operator": "~"}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_complex_inputs_are_refused_where_torch_refuses_them(name):
    """Both libraries refuse (the same error type; ember names the op) or both give the same values."""
    expression = REFUSALS[name]

    def program(lib):
        z, w = lib.tensor(Z), lib.tensor(W)
        return eval(expression, {"lib": lib, "z": z, "w": w})

    outcomes = []
    for lib in (torch, ember):
        try:
            outcomes.append(program(lib))
        except Exception as error:  # compared below: both must raise, or neither
            outcomes.append(error)
    theirs, mine = outcomes
    if isinstance(theirs, Exception):
        assert type(mine) is type(theirs), f"{expression}: torch raises {theirs!r}; ember gave {mine!r}"
        op = NAMED_AS.get(name, name.removeprefix("special_"))
        assert op.lower() in str(mine).lower(), f"{expression}: ember's message does not name {op}: {mine}"
    else:
        assert not isinstance(mine, Exception), f"{expression}: torch answers, ember raises {mine!r}"
        same(program)


# ----------------------------------------------------------------- mixed real and complex operands

MIXED = [
    "x * z", "z * x", "x + z", "z - x", "x / z", "z / x", "x ** z", "z ** x", "lib.where(x > 1, z, 1j)",
    "lib.addcmul(x, z, x, value=0.5)", "lib.addcdiv(z, x, z)", "lib.sub(x, z, alpha=2j)", "lib.rsub(x, z)",
    "x * (1 - 2j)", "(1 - 2j) * x", "x / (1 + 1j)", "(1 + 1j) / x", "x ** (0.5 + 1j)", "(2 - 1j) ** x",
    "(2 - 1j) - x", "x + 1j", "lib.mul(x, 2j)", "lib.float_power(x, z)", "x[:2] * z[:2, None]",
]


@pytest.mark.parametrize("expression", MIXED)
def test_real_and_complex_operands_promote_and_the_real_gradient_is_real(expression):
    def program(lib):
        x = lib.tensor([0.7, 1.3, 0.4, 2.1], dtype=lib.float64, requires_grad=True)
        z = lib.tensor(Z, dtype=lib.complex128, requires_grad=True)
        out = eval(expression, {"lib": lib, "x": x, "z": z})
        weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)) * (1 + 0.5j))
        grads = lib.autograd.grad((out * weights).real.sum(), (x, z), allow_unused=True)
        return out, [g if g is not None else lib.zeros_like(t) for g, t in zip(grads, (x, z))]

    out, (x_grad, _) = same(program)
    assert x_grad.dtype == np.float64  # the real input's gradient is real
    assert out.dtype == np.complex128


@pytest.mark.parametrize("a_dtype, b_dtype", [
    ("complex64", "float64"), ("complex128", "float32"), ("float16", "complex64"), ("complex64", "complex128"),
    ("int64", "complex64"), ("bool", "complex64"),
])
def test_mixed_precision_gives_torchs_dtypes_and_each_input_its_own_gradient_dtype(a_dtype, b_dtype):
    def program(lib):
        differentiable = a_dtype.startswith(("float", "complex"))
        a = lib.tensor([1.5, 2.0], dtype=getattr(lib, a_dtype), requires_grad=differentiable)
        b = lib.tensor(W[:2] if b_dtype.startswith("complex") else [0.5, 2.0], dtype=getattr(lib, b_dtype),
                       requires_grad=True)
        out = a * b + b / 2 - (a * a if a_dtype != "bool" else 0)
        (out.real if out.dtype.is_complex else out).sum().backward()
        return out, b.grad, (a.grad if differentiable else b.grad)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected, actual = [[t.detach().numpy() for t in program(lib)] for lib in (torch, ember)]
    for mine, theirs in zip(actual, expected):
        assert mine.dtype == theirs.dtype
        np.testing.assert_allclose(mine, theirs, rtol=1e-3)


@pytest.mark.parametrize("expression", [
    "z.clone().mul_(w)", "z.clone().add_(w, alpha=1j)", "z.clone().sub_(2j)", "z.clone().div_(w)",
    "z.clone().pow_(w)", "z.clone().exp_()", "z.clone().log_()", "z.clone().sqrt_()", "z.clone().reciprocal_()",
    "z.clone().sigmoid_()", "z.clone().tanh_()", "z.clone().neg_()", "z.clone().square_()",
    "z.clone().lerp_(w, 0.25)", "z.clone().addcmul_(w, w, value=2)", "z.clone().addcdiv_(w, z)",
    "z.clone().mul_(x)", "z.clone().sin_()", "z.clone().rsqrt_()", "z.clone().sgn_()",
])
def test_in_place_forms_on_complex_tensors_match_torch(expression):
    def program(lib):
        z = lib.tensor(Z, dtype=lib.complex128, requires_grad=True)
        w = lib.tensor(W, dtype=lib.complex128)
        x = lib.tensor([0.7, 1.3, 0.4, 2.1], dtype=lib.float64)
        out = eval(expression, {"lib": lib, "x": x, "z": z * 1, "w": w})
        (grad,) = lib.autograd.grad((out * lib.tensor(W)).real.sum(), z)
        return out, grad

    same(program)


# ----------------------------------------------------------------- forward-mode AD

JVP = ["exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "tan", "asin", "acosh", "atanh", "tanh", "sigmoid",
       "sinc", "log1p", "exp2", "abs", "sgn", "square"]


@pytest.mark.parametrize("name", JVP + ["a * b", "a / b", "a ** b", "a ** 2.5", "2 ** a", "lerp", "addcdiv",
                                        "logaddexp", "where"])
def test_forward_mode_tangent_of_a_holomorphic_op_is_not_conjugated(name):
    formulas = {"lerp": "lib.lerp(a, b, 0.3)", "addcdiv": "lib.addcdiv(a, a, b, value=2j)",
                "logaddexp": "lib.logaddexp(a, b)", "where": "lib.where(a.real > 0, a, b)"}
    expression = formulas.get(name, name if " " in name else f"lib.{name}(a)")

    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            a = fw.make_dual(lib.tensor(Z, dtype=lib.complex128), lib.tensor(W, dtype=lib.complex128))
            b = fw.make_dual(lib.tensor(W, dtype=lib.complex128), lib.tensor(Z, dtype=lib.complex128) * 1j)
            out = eval(expression, {"lib": lib, "a": a, "b": b})
            return fw.unpack_dual(out).tangent

    same(program)


# ----------------------------------------------------------------- corners and random values

NAN, INF = float("nan"), float("inf")
CORNERS = [complex(NAN, 1), complex(1, NAN), complex(INF, 0), complex(0, -INF), complex(-INF, INF), 0j, -0j, 1e-30j]


@pytest.mark.parametrize("expression", [
    "lib.isnan(c)", "lib.isinf(c)", "lib.isfinite(c)", "lib.isreal(c)", "lib.nan_to_num(c)",
    "lib.nan_to_num(c, nan=1.0, posinf=2.0, neginf=-3.0)", "lib.isclose(c, c)", "lib.isclose(c, c, equal_nan=True)",
    "lib.isclose(c, c + 1e-9j, atol=1e-10)", "lib.allclose(c[5:], c[5:])", "lib.equal(c, c)", "c == c", "c != c",
    "lib.tensor([0j, 1 + 1j]) ** lib.tensor([0j, 0j])", "lib.tensor([0j]) ** lib.tensor([2 + 0j])",
    "lib.tensor(0j) ** 0", "c[5:].sgn()", "c[5:].abs()", "lib.exp(c[5:])", "lib.reciprocal(c[6:])",
])
def test_special_values_match_torch(expression):
    same(lambda lib: eval(expression, {"lib": lib, "c": lib.tensor(CORNERS, dtype=lib.complex128)}))


UNARY_HOLOMORPHIC = ["exp", "log", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                     "asinh", "acosh", "atanh", "sigmoid", "log2", "log10", "log1p", "expm1", "exp2", "rsqrt",
                     "reciprocal"]
COMPLEX_NUMBERS = st.complex_numbers(max_magnitude=4.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(COMPLEX_NUMBERS, min_size=1, max_size=6), name=st.sampled_from(UNARY_HOLOMORPHIC),
       dtype=st.sampled_from(["complex64", "complex128"]))
def test_random_complex_values_and_gradients_match_torch(values, name, dtype):
    """Values anywhere in the plane (branch cuts, poles and 0 included) in both precisions, and the gradient."""

    def program(lib):
        z = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        out = getattr(lib, name)(z)
        (grad,) = lib.autograd.grad(out.abs().square().sum(), z)
        return out.detach().to(lib.complex128), grad.detach().to(lib.complex128)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected, actual = [[t.resolve_conj().numpy() for t in program(lib)] for lib in (torch, ember)]
    tolerance = 2e-4 if dtype == "complex64" else 1e-9
    for mine, theirs in zip(actual, expected):
        finite = np.isfinite(theirs) & (np.abs(theirs) < 1e6)  # (near a pole the slope is too steep to compare)
        np.testing.assert_allclose(mine[finite], theirs[finite], rtol=tolerance, atol=tolerance)


STEPS = {
    "exp": lambda lib, z, w: (z * 0.5).exp(), "sin": lambda lib, z, w: z.sin(), "tanh": lambda lib, z, w: z.tanh(),
    "sqrt": lambda lib, z, w: z.sqrt(), "reciprocal": lambda lib, z, w: (z + 2).reciprocal(),
    "sigmoid": lambda lib, z, w: z.sigmoid(), "mul": lambda lib, z, w: z * w, "div": lambda lib, z, w: z / (w + 3),
    "pow": lambda lib, z, w: (z + 2) ** (w * 0.5), "lerp": lambda lib, z, w: lib.lerp(z, w, 0.25),
    "addcmul": lambda lib, z, w: lib.addcmul(z, z, w, value=0.5 - 0.5j), "conj": lambda lib, z, w: z.conj() * 1,
    "real_times": lambda lib, z, w: z.real * w, "abs_times": lambda lib, z, w: z.abs() * w,
    "log1p": lambda lib, z, w: (z * 0.5).log1p(), "view": lambda lib, z, w: z.view(2, 2).t().reshape(4),
    "in_place": lambda lib, z, w: (z * 1).mul_(w).add_(1j),
}


@settings(max_examples=25, deadline=None)
@given(steps=st.lists(st.sampled_from(sorted(STEPS)), min_size=2, max_size=4))
def test_random_compositions_of_complex_ops_match_torch_in_value_and_second_derivative(steps):
    def program(lib):
        z = lib.tensor(Z, dtype=lib.complex128, requires_grad=True)
        w = lib.tensor(W, dtype=lib.complex128, requires_grad=True)
        out = z
        for step in steps:
            out = STEPS[step](lib, out, w)
        loss = (out * lib.tensor(W, dtype=lib.complex128)).real.sum() + (w * w).real.sum()  # (w used, twice)
        grads = lib.autograd.grad(loss, (z, w), create_graph=True)
        second = lib.autograd.grad(sum((g * (0.5 + 1j)).real.sum() for g in grads), (z, w), allow_unused=True)
        return out, grads, [s if s is not None else lib.zeros_like(z) for s in second]

    same(program)


@pytest.mark.parametrize("expression", [
    "lib.func.grad(lambda a: (a.exp() * a.conj()).real.sum())(z)",
    "lib.func.vmap(lib.func.grad(lambda a: (a.sin() * a).abs().sum()))(z.view(2, 2))",
    "lib.func.vjp(lambda a: a.tanh(), z)[1](w)", "lib.func.jvp(lambda a: a.sqrt(), (z,), (w,))",
    "lib.func.vmap(lambda a, b: lib.lerp(a, b, 0.5) * a.exp())(z.view(2, 2), w.view(2, 2))",
    "lib.func.vmap(lambda a: lib.func.jvp(lambda b: b.exp().sin(), (a,), (lib.ones_like(a),))[1])(z.view(4, 1))",
])
def test_function_transforms_of_complex_functions_match_torch(expression):
    same(lambda lib: eval(expression, {"lib": lib, "z": lib.tensor(Z, dtype=lib.complex128),
                                       "w": lib.tensor(W, dtype=lib.complex128)}))


@pytest.mark.parametrize("expression, fragment", [
    ("lib.func.jacrev(lambda a: a.exp())(z)", "jacrev: Expected all inputs to be real"),
    ("lib.func.jacfwd(lambda a: a.exp())(z)", "jacfwd: Expected all inputs to be real"),
    ("lib.func.jacrev(lambda a: a * 1j)(z.real)", "jacrev: Expected all outputs to be real"),
    ("lib.func.grad(lambda a: a.exp().sum())(z)", "only for real scalar outputs"),
])
def test_jacobians_of_complex_functions_are_refused_as_torch(expression, fragment):
    both_raise(lambda lib: eval(expression, {"lib": lib, "z": lib.tensor(Z, dtype=lib.complex128)}),
               RuntimeError, fragment)


@pytest.mark.parametrize("op", ["abs", "absolute"])
@pytest.mark.parametrize("source", ["complex64", "complex128"])
@pytest.mark.parametrize("target", ["float16", "float32", "float64", "complex64", "complex128"])
def test_the_magnitudes_of_a_complex_tensor_go_into_a_floating_out_or_one_of_its_dtype_as_torch(op, source, target):
    def program(lib):
        out = lib.empty(0, dtype=getattr(lib, target))
        result = getattr(lib, op)(lib.tensor([[3 + 4j, -1j], [0.5, 0j]], dtype=getattr(lib, source)), out=out)
        assert result is out
        return out
    if target.startswith("complex") and target != source:
        both_raise(program, RuntimeError, "Found dtype Complex")
    else:
        both(program)


@pytest.mark.parametrize("target", ["int64", "bool"])
def test_the_magnitudes_of_a_complex_tensor_do_not_go_into_an_integer_out_as_torch(target):
    both_raise(lambda lib: lib.abs(lib.tensor([3 + 4j]), out=lib.empty(0, dtype=getattr(lib, target))),
               RuntimeError, "can't be cast to the desired output type")


def _log1p_worst_ulps(z: np.ndarray, dtype: str) -> float:
    """The worst error of ember.log1p over ``z`` in units in the last place of ``dtype``'s parts, against
    mpmath at 40 digits (each part on its own)."""
    import mpmath as mp
    eps = np.finfo(np.float32 if dtype == "complex64" else np.float64).eps
    values = z.astype(dtype)
    mine = ember.log1p(ember.tensor(values)).numpy().astype(np.complex128)
    worst = 0.0
    with mp.workdps(40):
        for point, result in zip(values.astype(np.complex128), mine):
            exact = mp.log1p(mp.mpc(point.real, point.imag))
            for part, reference in ((result.real, float(exact.real)), (result.imag, float(exact.imag))):
                if reference != 0:
                    worst = max(worst, abs(part - reference) / (abs(reference) * eps))
    return worst


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_log1p_keeps_the_real_part_where_one_plus_z_has_modulus_near_one(dtype):
    """Near 0 and on the circle |1 + z| = 1, log|1 + z| cancels; torch's is up to 38 units in the last place
    off in complex128 (millions in complex64) and 1e-20 + 1e-20j lost its real part entirely."""
    rng = np.random.default_rng(7)
    near_zero = (rng.standard_normal(100) + 1j * rng.standard_normal(100)) * np.logspace(-20, -1, 100)
    on_circle = np.exp(1j * rng.uniform(0, 2 * np.pi, 100)) * (1 + 1e-6 * rng.standard_normal(100)) - 1
    assert _log1p_worst_ulps(np.concatenate([near_zero, on_circle]), dtype) < 2
    tiny = np.array([1e-20 + 1e-20j], dtype)  # (log1p(z) = z to the last bit here)
    np.testing.assert_array_equal(ember.log1p(ember.tensor(tiny)).numpy(), tiny)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_log1p_of_complex_values_far_from_the_circle_and_non_finite_ones_as_torch(dtype):
    values = [0j, -1 + 0j, complex(-1, -0.0), complex(np.inf, 0), complex(-np.inf, 0), complex(0, np.inf),
              complex(np.nan, 0), complex(-2, 0), complex(-2, -0.0), 3 - 4j, 1e30 + 1e30j, complex(-0.0, -0.0)]
    both(lambda lib: lib.log1p(lib.tensor(values, dtype=getattr(lib, dtype))))
