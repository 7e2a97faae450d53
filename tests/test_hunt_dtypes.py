"""Mismatches with torch found by a bug hunt of dtype promotion and of inputs that are not float32.

Each test here failed before its fix: the dtype an op promotes its operands to, which operands an op checks
before it reads them, and the precision a 16-bit float is computed in.
"""
import pytest
import torch

import ember
from twins import both, both_raise


def run(expression: str):
    return lambda L: eval(expression, {"L": L})


# ----------------------------------------------------------------- promotion before the op's own checks

@pytest.mark.parametrize("expression", [
    "L.dist(L.tensor([1, 4]), L.tensor([4., 0.]))",  # an integer tensor less a float one is a float
    "L.dist(L.tensor([1., 4.], dtype=L.float64), L.tensor([4, 0], dtype=L.uint8), 3)",
    "L.dist(L.tensor([1, 4], dtype=L.int8), L.tensor(2.5))",
    "L.dist(L.tensor([1, 4], dtype=L.int16), L.tensor([1 + 1j, 2]))",
])
def test_dist_promotes_before_it_asks_for_floats(expression):
    both(run(expression))


@pytest.mark.parametrize("expression", [
    "L.addcdiv(L.ones(2), L.ones(2), 2)",
    "L.addcdiv(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64), 2.5)",
    "L.addcdiv(L.ones(2), 1, L.ones(2))",
])
def test_addcdiv_of_a_number_is_a_type_error(expression):
    both_raise(run(expression), TypeError, r"addcdiv\(\): argument 'tensor[12]' \(position [23]\) must be Tensor")


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
def test_clamp_of_integers_by_a_complex_number_is_refused(dtype):
    # the result would be complex, which clamp does not order (ember returned a complex tensor)
    both_raise(lambda L: L.tensor([1, 2], dtype=getattr(L, dtype)).clamp(max=1 + 2j), NotImplementedError,
               "clamp is not supported for complex types")
    both_raise(lambda L: L.clamp_min(L.tensor(3, dtype=getattr(L, dtype)), 2j), NotImplementedError,
               "clamp is not supported for complex types")


# ----------------------------------------------------------------- a number weight of lerp, as an element

@pytest.mark.parametrize("expression", [
    "L.lerp(L.tensor([1., 2.]), L.tensor([3., 5.]), 2 + 0j)",  # a complex number without imaginary part is real
    "L.lerp(L.tensor([1., 2.], dtype=L.float16), L.tensor([3., 5.], dtype=L.float16), 1e5)",  # inf, in half
    "L.lerp(L.tensor([1 + 1j]), L.tensor([2j]), 0.5 + 1j)",
])
def test_lerp_number_weights(expression):
    both(run(expression))


@pytest.mark.parametrize("expression", [
    "L.lerp(L.tensor([1., 2.]), L.tensor([3., 5.]), 1 + 2j)",  # ember: a TypeError from float()
    "L.lerp(L.tensor([1., 2.]), L.tensor([3., 5.]), 1e300)",  # ember: inf
    "L.lerp(L.tensor([1., 2.], dtype=L.bfloat16), L.tensor([3., 5.], dtype=L.bfloat16), 1e39)",
])
def test_lerp_number_weights_a_dtype_cannot_hold(expression):
    both_raise(run(expression), RuntimeError, "value cannot be converted to type")


# ----------------------------------------------------------------- 16-bit floats computed in single

@pytest.mark.parametrize("expression", [
    "L.linalg.vector_norm(L.tensor([253., 250., 10.], dtype=L.float16))",  # the squares pass half's 65504
    "L.tensor([[253., 250.], [1., 2.]], dtype=L.float16).norm(dim=1)",
    "L.dist(L.tensor([200, 3], dtype=L.uint8), L.tensor([-200., 2.], dtype=L.float16))",
    "L.nn.functional.normalize(L.tensor([253., 250., 10.], dtype=L.float16), dim=0)",
    "L.linalg.vector_norm(L.tensor([253., 250.], dtype=L.bfloat16)).float()",
    "L.linalg.vector_norm(L.tensor([3 + 4j, 1j], dtype=L.complex64))",
])
def test_two_norm_of_halves(expression):
    both(run(expression))


# ----------------------------------------------------------------- 0-d inputs, bfloat16 and complex elements

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_angle_of_a_zero_dim_nan(dtype):
    both(lambda L: L.angle(L.tensor(float("nan"), dtype=getattr(L, dtype))).float())  # ember: a TypeError


@pytest.mark.parametrize("expression", [
    "L.nansum(L.tensor(float('nan'), dtype=L.bfloat16)).float()",  # ember: nan (bfloat16's nans went uncounted)
    "L.tensor([float('nan'), 1, 2], dtype=L.bfloat16).nansum(0).float()",
    "L.tensor([float('nan'), 1, 2], dtype=L.bfloat16).nanmean().float()",
])
def test_nansum_of_bfloat16(expression):
    both(run(expression))


@pytest.mark.parametrize("value", ["complex('nan')", "complex('inf')", "complex(-float('inf'))"])
def test_int_of_a_complex_element_that_is_not_finite(value):
    both_raise(run(f"int(L.tensor({value}))"), RuntimeError, "value cannot be converted to type int64_t")
    both(run(f"str(float(L.tensor({value})))"))


@pytest.mark.parametrize("exponent", [0.5, -0.5])
def test_bfloat16_square_roots_by_a_number(exponent):
    # torch's x ** 0.5 is a square root (of -inf, nan; of -0, -0), and x ** -0.5 its reciprocal
    result = both(lambda L: (L.tensor([-float("inf"), -0., 0., 4., 2.], dtype=L.bfloat16) ** exponent).float())
    assert str(result[1]) == ("-0.0" if exponent > 0 else "-inf")


# ----------------------------------------------------------------- in place: the result type is checked first

@pytest.mark.parametrize("expression", [
    "L.tensor([True, False]).bitwise_and_(L.tensor([1., 2.]))",  # ember: "bitwise_and" not implemented for Float
    "L.tensor([1, 2]).bitwise_or_(L.tensor(2.5))",
    "L.tensor([1, 2], dtype=L.int16).__ixor__(1.5)",
    "L.tensor([1, 2]).__ilshift__(L.tensor([1.]))",
    "L.tensor([True, False]).hypot_(L.tensor([1, 2], dtype=L.uint8))",
    "L.tensor([1, 2]).atan2_(L.tensor([1j, 2]))",
    "L.tensor([1., 2.]).fmod_(L.tensor([1j, 2]))",
    "L.tensor([1., 2.]).remainder_(1j)",
    "L.tensor([1, 2]).div_(L.tensor([1j, 2]), rounding_mode='floor')",
    "L.tensor([1, 2]).gcd_(L.tensor([1., 2.]))",
    "L.tensor([1., 2.]).xlogy_(L.tensor([1j, 2]))",
    "L.tensor([1, 2]).clamp_(L.tensor(1j))",
    "L.tensor([1, 2]).clamp_(max=1j)",
    "L.tensor([1, 2]).clamp_min_(L.tensor([1j, 1]))",
])
def test_in_place_result_type_that_cannot_be_cast(expression):
    both_raise(run(expression), RuntimeError, "result type .* can't be cast to the desired output type")


@pytest.mark.parametrize("op", ["lt_", "le_", "gt_", "ge_"])
@pytest.mark.parametrize("other", ["L.tensor([1j, 2])", "L.tensor(1j, dtype=L.complex128)", "1 + 2j"])
def test_ordering_in_place_of_complex_numbers_is_refused(op, other):
    # ember ordered them by their real parts; eq_ and ne_ stay allowed
    both_raise(run(f"L.tensor([1, 2]).{op}({other})"), NotImplementedError, "Complex")
    both(run(f"L.tensor([1., 2.]).eq_({other})"))


# ----------------------------------------------------------------- numbers where torch takes them

@pytest.mark.parametrize("expression", [
    "L.zeros(2).copy_(3)",
    "L.zeros(2, dtype=L.float64).copy_(0.1)",  # copied from a double, so 0.1 exactly
    "L.zeros(2, dtype=L.int64).copy_(2.7)",
    "L.zeros(2, dtype=L.uint8).copy_(-1)",
    "L.zeros(2, dtype=L.bool).copy_(1 + 2j)",
    "L.zeros(2, dtype=L.complex64).copy_(True)",
])
def test_copy_of_a_number(expression):
    both(run(expression))


def test_copy_of_a_number_beyond_int64():
    both_raise(run("L.zeros(2, dtype=L.int32).copy_(2 ** 70)"), OverflowError, "")


@pytest.mark.parametrize("expression", [
    "L.zeros(2, dtype=L.bool).fill_(2j)",  # a complex number as a bool is whether it is nonzero
    "L.full((2,), 1j, dtype=L.bool)",
    "L.zeros(3, dtype=L.bool).masked_fill_(L.tensor([True, False, True]), 1j)",
    "L.zeros(3, dtype=L.bool).scatter_(0, L.tensor([1]), 1j)",
    "L.full_like(L.zeros(2, dtype=L.bool), 3j)",
])
def test_complex_number_written_into_bools(expression):
    both(run(expression))


@pytest.mark.parametrize("expression", [
    "L.where(L.tensor([True, False]), L.zeros(2), 2, out=L.zeros(2))",
    "L.where(L.tensor([True, False]), 2., L.zeros(2), out=L.zeros(2))",
])
def test_where_with_out_takes_no_numbers(expression):
    both_raise(run(expression), TypeError, r"where\(\): argument '(input|other)' \(position [23]\) must be Tensor")


# ----------------------------------------------------------------- factories

@pytest.mark.parametrize("expression", [
    "L.linspace(-1, 1, 5, dtype=L.uint8)",  # the ends as uint8 takes them, -1 being 255 (ember: [255, 0, 0, 0, 1])
    "L.linspace(-3, 10, 6, dtype=L.uint8)",
    "L.linspace(-1, 1, 1, dtype=L.uint8)",  # ember: an OverflowError
    "L.linspace(-2.5, 3.7, 4, dtype=L.int16)",
    "L.linspace(127, -128, 4, dtype=L.int8)",
])
def test_linspace_of_integers(expression):
    both(run(expression))


@pytest.mark.parametrize("expression", [
    "L.scalar_tensor(1 + 0j)",  # ember: a TypeError for any complex number
    "L.scalar_tensor(1j, dtype=L.complex64)",
    "L.scalar_tensor(-1, dtype=L.uint8)",
    "L.arange(3 + 0j)",  # a complex bound without imaginary part is a real one
    "L.arange(0, 3, 1 + 0j)",
])
def test_complex_numbers_without_imaginary_part_in_factories(expression):
    both(run(expression))


@pytest.mark.parametrize("expression, error", [
    ("L.scalar_tensor(1j)", RuntimeError),
    ("L.scalar_tensor(1e300)", RuntimeError),  # ember: inf
    ("L.scalar_tensor(2 ** 70)", OverflowError),  # ember: a float32 tensor
    ("L.arange(0, 3j)", RuntimeError),
])
def test_scalar_tensor_refusals(expression, error):
    both_raise(run(expression), error, "")


# ----------------------------------------------------------------- ops of several inputs

@pytest.mark.parametrize("first", ["bool", "uint8", "int32", "int64"])
@pytest.mark.parametrize("second", ["float16", "float32", "float64"])
def test_cosine_similarity_promotes_an_integer_input(first, second):
    # ember took the norm of the integer input itself, which vector_norm refuses
    both(lambda L: L.nn.functional.cosine_similarity(L.tensor([[1, 0, 1]], dtype=getattr(L, first)),
                                                     L.tensor([[2., 1., 0.5]], dtype=getattr(L, second))).float())


@pytest.mark.parametrize("expression, fragment", [
    ("L.trapezoid(L.tensor([True, False, True]))", "bool"),  # ember summed the bools
    ("L.trapezoid(L.tensor([1., 2., 3.]), L.tensor([True, False, True]))", "bool"),
    ("L.cumulative_trapezoid(L.tensor([True, False, True]), dx=2.)", "bool"),
    ("L.trapezoid(L.tensor([1., 2., 3.]), dx=True)", "dx as a real number"),
    ("L.cumulative_trapezoid(L.tensor([1., 2., 3.]), dx=1j)", "dx as a real number"),  # ember: a complex result
])
def test_trapezoid_refusals(expression, fragment):
    both_raise(run(expression), RuntimeError, fragment)


@pytest.mark.parametrize("beta", [1, 0, 2, False])
@pytest.mark.parametrize("alpha", [1, 0, True])
def test_addr_of_bools(beta, alpha):
    # ember refused bools; torch's addr of bools is (beta and input) or (alpha and the outer and)
    both(lambda L: L.addr(L.tensor([[True, False], [False, False]]), L.tensor([True, False]),
                          L.tensor([False, True]), beta=beta, alpha=alpha))


def test_addr_of_bools_refuses_a_float_scale():
    both_raise(lambda L: L.addr(L.ones(2, 2, dtype=L.bool), L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool),
                                alpha=0.5), RuntimeError, "alpha must not be a floating point number")


# ----------------------------------------------------------------- activations of bools and small dtypes

REFUSALS = [
    ("L.dist(L.tensor([1, 4]), L.tensor([4, 0]))", RuntimeError, "Long|int64"),
    ("L.dist(L.tensor([True]), L.tensor([1.]))", RuntimeError, "bool tensor is not supported"),
    ("L.dist(L.ones(2), L.ones(3))", RuntimeError, "must match"),
    ("L.nn.functional.hardtanh(L.tensor([True, False]))", RuntimeError, "Bool inputs not supported for hardtanh"),
    ("L.nn.functional.relu6(L.tensor([True, False]))", RuntimeError, "Bool inputs not supported for hardtanh"),
    ("L.nn.ReLU6()(L.tensor(True))", RuntimeError, "Bool inputs not supported for hardtanh"),
    ("L.nn.functional.threshold(L.tensor([True, False]), 0.5, 2)", NotImplementedError, "Bool"),
    ("L.nn.functional.threshold(L.tensor([1., 5.], dtype=L.float16), 2, 1e5)", RuntimeError, "without overflow"),
]


@pytest.mark.parametrize("expression, error, fragment", REFUSALS)
def test_refusals(expression, error, fragment):
    both_raise(run(expression), error, fragment)


@pytest.mark.parametrize("expression", [
    "L.nn.functional.threshold(L.tensor([1, 0, 255], dtype=L.uint8), -1, 2)",  # -1 is the threshold 255
    "L.nn.functional.threshold(L.tensor([1, 0, 255], dtype=L.uint8), 3, -1)",
    "L.nn.functional.threshold(L.tensor([1., 5.], dtype=L.float16), 1e5, 1)",  # a half's threshold is single's
])
def test_threshold_numbers_as_elements(expression):
    both(run(expression))


# ----------------------------------------------------------------- samplers into dtypes torch has no kernel for

@pytest.mark.parametrize("expression", [
    "L.zeros(2, dtype=L.complex64).random_()",  # ember drew integers into the real parts
    "L.zeros(2, dtype=L.complex128).bernoulli_(0.5)",
    "L.zeros(2, dtype=L.complex64).bernoulli_(L.tensor([0.5, 0.5]))",
    "L.zeros(2, dtype=L.bool).geometric_(0.5)",
    "L.zeros(2, dtype=L.complex64).geometric_(0.5)",
    "L.zeros(2, dtype=L.int32).log_normal_()",  # ember: a RuntimeError
    "L.zeros(2, dtype=L.bool).log_normal_()",
])
def test_samplers_without_a_kernel(expression):
    both_raise(run(expression), NotImplementedError, "not implemented for")
