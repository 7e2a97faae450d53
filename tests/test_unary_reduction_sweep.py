"""Corners of unary ops, reductions and clamp found by a differential sweep against torch.

Each test runs one program on torch and on ember (see ``twins.py``); the rows of ``op_table.py``
cover the common cases, these the corners: zero gradients of rounding ops, second derivatives of
sigmoid and tanh, half-precision sums and means, ``mean(dtype=)``, and reductions' errors.
"""
import numpy as np
import pytest
import torch

import ember
from twins import both, both_raise, grad_fn_name, leaf, normalise

# ----------------------------------------------------------------- piecewise constant functions: zero gradients

STEP_FUNCTIONS = {
    "floor": lambda x: x.floor(), "ceil": lambda x: x.ceil(), "round": lambda x: x.round(),
    "trunc": lambda x: x.trunc(), "sign": lambda x: x.sign(), "round_decimals": lambda x: x.round(decimals=1),
}


def _signbits(values) -> list:
    return [np.signbit(v.detach().numpy()).tolist() for v in values]


@pytest.mark.parametrize("name", sorted(STEP_FUNCTIONS))
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_step_functions_gradient_is_plus_zero_even_for_infinite_or_negative_gradients(name, dtype):
    """torch's gradient of floor, sign ... is zeros: not ``grad * 0`` (nan for inf, -0 for negatives)."""

    def program(lib):
        x = leaf(lib, [0.5, -1.5, 2.0, 3.7], dtype)
        upstream = lib.tensor([float("inf"), -2.0, float("nan"), -float("inf")], dtype=getattr(lib, dtype))
        (g,) = lib.autograd.grad(STEP_FUNCTIONS[name](x), x, upstream)
        return g, _signbits([g])

    both(program)


# ----------------------------------------------------------------- relu, sigmoid and tanh differentiated twice

def test_relu_second_derivative_through_its_output_is_zero_even_for_infinite_gradients():
    def program(lib):
        x = leaf(lib, [1.0, -1.0, 2.0])
        w = leaf(lib, [1.0, 2.0, 3.0])
        (g,) = lib.autograd.grad(x.relu(), x, w, create_graph=True)
        gx, gw = lib.autograd.grad(g, (x, w), lib.tensor([float("inf"), 1.0, -1.0], dtype=lib.float64),
                                   allow_unused=True, materialize_grads=True)
        return gx, gw, _signbits([gx])

    both(program)


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_sigmoid_and_tanh_gradients_are_differentiable_nodes_of_their_own_as_in_torch(name):
    """torch records sigmoid's gradient as one node, SigmoidBackwardBackward0 (tanh's too), with its own formula."""

    def program(lib):
        x = leaf(lib, [0.3, -1.2, 2.0, 0.0])
        w = leaf(lib, [1.0, -2.0, 0.5, 3.0])
        (g,) = lib.autograd.grad(getattr(lib, name)(x), x, w, create_graph=True)
        gx, gw = lib.autograd.grad((g * g).sum(), (x, w), create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gw).sum(), x)
        names = [grad_fn_name(g), [grad_fn_name(t) for t in (gx, gw)]]
        return g, gx, gw, ggx, names, [f.name().replace("torch::autograd::", "") for f, _ in g.grad_fn.next_functions]

    both(program)


_HALVES = np.linspace(-6, 6, 3001).astype(np.float16)


@pytest.mark.parametrize("name, dtype", [("sigmoid", "float16"), ("sigmoid", "float32"), ("tanh", "float16")])
def test_sigmoid_and_tanh_gradients_round_as_torch(name, dtype):
    """torch rounds sigmoid's gradient after each product, in its order (half too); tanh's, in half, once."""

    def program(lib):
        x = lib.tensor(_HALVES.astype(dtype), requires_grad=True)
        upstream = lib.tensor(np.random.default_rng(1).uniform(-3, 3, _HALVES.size).astype(dtype))
        y = getattr(lib, name)(x)
        (g,) = lib.autograd.grad(y, x, upstream)
        return y.detach().numpy(), g.numpy()

    (ours_y, ours), (theirs_y, theirs) = program(ember), program(torch)
    same_forward = ours_y == theirs_y  # where libm's tanh differs in the last bit, so may the gradient
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours[same_forward], theirs[same_forward])


# ----------------------------------------------------------------- clamp

@pytest.mark.parametrize("expression", [
    "x.clamp(min=lib.tensor(0.5), max=2)", "x.clamp(lib.tensor(0), 1.5)", "lib.clamp(x, min=-1, max=lib.tensor(2))",
    "x.float().clamp(min=lib.tensor(0.5), max=2.5)", "x.clamp_(lib.tensor(0), 1)",
])
def test_a_0_d_tensor_bound_with_a_number_bound_acts_as_a_number_as_in_torch(expression):
    both(lambda lib: eval(expression, {"lib": lib, "x": lib.tensor([1, 5, -2])}))


def test_a_0_d_tensor_bound_that_requires_grad_cannot_mix_with_a_number_as_in_torch():
    both_raise(lambda lib: leaf(lib, [1.0, 5.0]).clamp(min=leaf(lib, 0.5), max=2.0), TypeError, "clamp")


# ----------------------------------------------------------------- sum and mean: dtypes and half precision

_VALUES = (np.arange(24) % 7 - 3).reshape(2, 3, 4) * 0.7


@pytest.mark.parametrize("source", ["float16", "float32", "float64", "int64"])
@pytest.mark.parametrize("dim", [(0, 1), 0, None])
def test_half_sums_add_up_in_single_as_torch(source, dim):
    """torch adds halves in single and rounds the total once; NumPy's half sum rounds every partial sum."""

    def program(lib):
        x = lib.tensor(_VALUES).to(getattr(lib, source))
        return (x.sum(dim=dim, dtype=lib.float16), x.to(lib.float16).sum(dim=dim),
                x.to(lib.float16).sum(dim=dim, keepdim=True))

    both(program)


def test_a_half_sum_beyond_halfs_range_is_inf_quietly():
    with np.errstate(all="raise"):
        both(lambda lib: (lib.full((3,), 6e4, dtype=lib.float16).sum(), lib.tensor([7e4, 1.0]).sum(dtype=lib.float16)))


@pytest.mark.parametrize("source", ["float32", "float64", "int32", "bool"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("dim", [(0, 1), 0, None])
def test_mean_with_a_dtype_converts_as_torch(source, dtype, dim):
    """torch's mean(dtype=float16) sums and divides in single; another dtype converts the input first."""

    def program(lib):
        x = lib.tensor(_VALUES).to(getattr(lib, source))
        return x.mean(dim=dim, dtype=getattr(lib, dtype)), lib.mean(x, dim, True, dtype=getattr(lib, dtype))

    both(program)


def test_mean_with_a_dtype_records_one_node_and_gives_the_inputs_dtype_back():
    """As torch: no conversion node before the mean; the gradient has the input's dtype."""

    def program(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], requires_grad=True)
        results = []
        for y in (x.mean(dtype=lib.float64), x.mean(1, dtype=lib.float16), x.mean((0, 1), True, dtype=lib.float64)):
            (g,) = lib.autograd.grad(y.sum(), x)
            results.append((y, g, grad_fn_name(y), [grad_fn_name_of(f) for f, _ in y.grad_fn.next_functions]))
        return results

    both(program, prepare=normalise)


def grad_fn_name_of(fn) -> str:
    return fn.name().replace("torch::autograd::", "")


@pytest.mark.parametrize("expression, fragment", [
    ("x.mean(dtype=lib.int64)", r"^mean\(\): could not infer output dtype\. Optional dtype .* Got: Long"),
    ("x.long().mean(dtype=lib.int32)", r"Optional dtype must be either a floating point .* Got: Int"),
    ("x.long().mean()", r"^mean\(\): could not infer output dtype\. Input dtype .* Got: Long"),
    ("x.bool().mean(0)", r"Input dtype must be either a floating point .* Got: Bool"),
])
def test_mean_refuses_integer_dtypes_naming_which_dtype_as_torch(expression, fragment):
    both_raise(lambda lib: eval(expression, {"lib": lib, "x": lib.ones(2, 3)}), RuntimeError, fragment)


# ----------------------------------------------------------------- reductions' errors

@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("dim", [(0, 0), (0, -1)])
def test_a_dim_given_twice_is_an_error_on_a_0_d_tensor_too(op, dim):
    both_raise(lambda lib: getattr(lib.tensor(2.0), op)(dim), RuntimeError, "dim 0 appears multiple times")


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("shape, dim, error, fragment", [
    ((0,), None, RuntimeError, r"\(\): Expected reduction dim to be specified for input.numel\(\) == 0"),
    ((2, 0, 3), (), RuntimeError, r"\(\): Expected reduction dim to be specified for input.numel\(\) == 0"),
    ((0,), (-1, 0), IndexError, r"\(\): Expected reduction dim -1 to have non-zero size"),
    ((2, 0, 3), (1, -2), IndexError, r"\(\): Expected reduction dim 1 to have non-zero size"),
    ((2, 0), (0, 0), RuntimeError, "dim 0 appears multiple times"),
    ((2, 0), (0, 1, 1), IndexError, r"\(\): Expected reduction dim 1 to have non-zero size"),
])
def test_amax_and_amin_of_an_empty_tensor_fail_as_torch(op, shape, dim, error, fragment):
    def program(lib):
        x = lib.ones(shape)
        return getattr(x, op)() if dim is None else getattr(x, op)(dim)

    both_raise(program, error, "^" + op + fragment if fragment.startswith("\\(") else fragment)


def test_amax_of_an_empty_tensor_over_a_dim_with_elements_works_as_torch():
    both(lambda lib: (lib.ones(2, 0).amax(0), lib.ones(0, 3).amin(1, keepdim=True)))


# ----------------------------------------------------------------- sum_to_size

def test_sum_to_size_needs_a_size_as_torch():
    both_raise(lambda lib: lib.ones(2, 3).sum_to_size(), TypeError, r"^sum_to_size\(\) missing 1 required .*\"size\"")


@pytest.mark.parametrize("size", [(1, 3), [2, 1], (3,)])
def test_sum_to_size_takes_size_as_a_keyword_as_torch(size):
    def program(lib):
        x = leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        y = x.sum_to_size(size=size)
        y.sum().backward()
        return y, x.grad, grad_fn_name(y)

    both(program)
