"""A differential sweep of nn.functional, the losses, the layers and nn.init: each program runs on torch and ember.

tests/nn/test_layers.py holds the first tests of these; this file adds the corners a sweep found
(0-d and 1-d operands, non-contiguous inputs, second derivatives, dtypes, errors).
"""
import math
import warnings

import numpy as np
import pytest

import ember
from twins import both, both_raise, grad_fn_name, normalise


def _values(lib, shape, seed=0, dtype="float64", requires_grad=False):
    """The same normal values (from NumPy) as a tensor of ``lib``."""
    array = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=requires_grad)


def _graph(fn, depth: int = 2) -> str:
    """The grad_fn's name and those of the nodes it points to, ``depth`` levels down."""
    if fn is None or depth == 0:
        return str(None if fn is None else fn.name().replace("torch::autograd::", ""))
    inner = ", ".join(_graph(f, depth - 1) for f, _ in fn.next_functions)
    return f"{fn.name().replace('torch::autograd::', '')}({inner})"


# ---------------------------------------------------------------------------------------------- linear


@pytest.mark.parametrize("input_shape, weight_shape", [((), (2, 3)), ((), (3,)), ((3,), ())])
def test_linear_refuses_a_0d_operand_as_torch(input_shape, weight_shape):
    both_raise(lambda lib: lib.nn.functional.linear(lib.ones(input_shape), lib.ones(weight_shape)), RuntimeError,
               r"^both arguments to linear need to be at least 1D, but they are \dD and \dD")


@pytest.mark.parametrize("position, name", [(1, "input"), (2, "weight"), (3, "bias")])
def test_linear_names_an_argument_that_is_not_a_tensor(position, name):
    def program(lib):
        arguments = [lib.ones(2, 3), lib.ones(4, 3), lib.ones(4)]
        arguments[position - 1] = arguments[position - 1].tolist()
        return lib.nn.functional.linear(*arguments)

    both_raise(program, TypeError, rf"^linear\(\): argument '{name}' \(position {position}\) must be Tensor, not list")


@pytest.mark.parametrize("input_shape", [(4, 3), (3,), (2, 4, 3)])
def test_linear_with_a_1d_weight_matches_torch(input_shape):
    """A weight ``[in]`` gives one number per row (matmul's rule), with its gradients."""
    def program(lib):
        x, w = _values(lib, input_shape, 1, requires_grad=True), _values(lib, (3,), 2, requires_grad=True)
        y = lib.nn.functional.linear(x, w)
        gx, gw = lib.autograd.grad(y.sum(), (x, w))
        return y, gx, gw

    both(program)


def test_linear_with_a_1d_weight_and_a_bias_goes_through_addmm_as_torch():
    both_raise(lambda lib: lib.nn.functional.linear(lib.ones(4, 3), lib.ones(3), lib.ones(1)), RuntimeError,
               "mat2 must be a matrix, got 1-D tensor")
    both(lambda lib: lib.nn.functional.linear(lib.ones(3), lib.ones(3), lib.tensor(0.5)))


@pytest.mark.parametrize("case", ["3d-no-bias", "4d-no-bias", "3d-strided-bias", "3d-2d-bias", "1d-0d-bias",
                                  "3d-strided-no-bias"])
def test_linear_records_torchs_graph_for_batched_strided_and_odd_bias_inputs(case):
    """torch folds batch dims into one mm (viewed back with _unsafe_view), and adds a bias it cannot fuse."""
    input_shape, bias_shape, strided = {
        "3d-no-bias": ((2, 4, 3), None, False), "4d-no-bias": ((2, 2, 4, 3), None, False),
        "3d-strided-bias": ((2, 4, 3), (5,), True), "3d-2d-bias": ((2, 4, 3), (4, 5), False),
        "1d-0d-bias": ((3,), (), False), "3d-strided-no-bias": ((2, 4, 3), None, True),
    }[case]

    def program(lib):
        x = _values(lib, input_shape[::-1] if strided else input_shape, 1, requires_grad=True)
        w, b = _values(lib, (5, 3), 2, requires_grad=True), None
        if bias_shape is not None:
            b = _values(lib, bias_shape, 3, requires_grad=True)
        y = lib.nn.functional.linear(x.permute(*range(x.dim() - 1, -1, -1)) if strided else x, w, b)
        grads = lib.autograd.grad((y * y).sum(), [x, w] + ([] if b is None else [b]))
        depth = 0 if case == "1d-0d-bias" else 1  # below, ember's matmul names its squeeze SqueezeBackward1
        return _graph(y.grad_fn, depth), y, *grads

    both(program)


def test_linear_refuses_a_bias_that_would_grow_the_output_as_torch():
    both_raise(lambda lib: lib.nn.functional.linear(lib.ones(3), lib.ones(5, 3), lib.ones(2, 5)), RuntimeError,
               r"output with shape \[5\] doesn't match the broadcast shape \[2, 5\]")


def test_linear_casts_a_bias_it_cannot_fuse_to_the_output_dtype_as_torch():
    def program(lib):
        x = lib.ones(4, 2, 3).transpose(0, 1)  # not contiguous: the bias is added after the product
        b = lib.ones(5, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.linear(x, lib.ones(5, 3), b)
        y.sum().backward()
        return y, b.grad, grad_fn_name(y)

    both(program)
    both_raise(lambda lib: lib.nn.functional.linear(lib.ones(4, 2, 3, dtype=lib.int64).transpose(0, 1),
                                                    lib.ones(5, 3, dtype=lib.int64), lib.ones(5)), RuntimeError,
               "result type Float can't be cast to the desired output type Long")


@pytest.mark.parametrize("input_shape", [(2, 0), (2, 4, 0), (0, 4, 3)])
def test_linear_with_empty_dims_matches_torch(input_shape):
    def program(lib):
        x = lib.ones(input_shape, requires_grad=True)
        w = lib.ones(5, input_shape[-1], requires_grad=True)
        y = lib.nn.functional.linear(x, w)
        return y, grad_fn_name(y), *lib.autograd.grad(y.sum(), (x, w))

    both(program)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_linear_layer_keeps_its_dtype_as_torch(dtype):
    def program(lib):
        layer = lib.nn.Linear(3, 2, dtype=getattr(lib, dtype))
        with lib.no_grad():
            layer.weight.copy_(lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
            layer.bias.fill_(0.125)
        y = layer(lib.arange(6.0, dtype=getattr(lib, dtype)).reshape(2, 3))
        return y, str(y.dtype), repr(layer)

    both(program, prepare=normalise)


def test_linear_second_derivatives_match_torch():
    def program(lib):
        x, w, b = (_values(lib, s, i, requires_grad=True) for i, s in enumerate([(2, 4, 3), (5, 3), (5,)]))
        y = lib.nn.functional.linear(x, w, b)
        gx, gw = lib.autograd.grad((y ** 3).sum(), (x, w), create_graph=True)
        return gx, gw, *lib.autograd.grad((gx * gx).sum() + gw.sum(), (x, w, b))

    both(program)


# ---------------------------------------------------------------------------------------------- mse_loss


def _mse_program(reduction, input_shape, target_shape):
    def program(lib):
        x = _values(lib, input_shape, 1, requires_grad=True)
        t = _values(lib, target_shape, 2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the broadcasting cases warn, on purpose
            loss = lib.nn.functional.mse_loss(x, t, reduction=reduction)
        gx, gt = lib.autograd.grad(loss, (x, t), lib.ones_like(loss), create_graph=True)
        second = lib.autograd.grad((gx * gx).sum() + (gt ** 3).sum(), (x, t), create_graph=True)
        third = lib.autograd.grad(second[0].sum() + second[1].sum(), (x, t), allow_unused=True)
        third = [lib.zeros(()) if g is None else g for g in third]
        return loss, gx, gt, grad_fn_name(gx), grad_fn_name(gt), *second, *third

    return program


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("input_shape, target_shape", [((2, 3), (2, 3)), ((), ()), ((0, 2), (0, 2))])
def test_mse_loss_gradient_is_torchs_node_and_differentiates_again(reduction, input_shape, target_shape):
    """The gradient is a MseLossBackwardBackward0 node as in torch, with second and third derivatives."""
    both(_mse_program(reduction, input_shape, target_shape))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_second_derivatives_of_broadcast_operands_match_torch(reduction):
    program = _mse_program(reduction, (3, 1), (2,))

    def rounded(lib):  # summing the broadcast gradient back may round the last bit differently
        return [np.round(v.detach().numpy(), 10) if isinstance(v, lib.Tensor) else v for v in program(lib)]

    both(rounded)


def test_mse_loss_gradient_of_an_exact_target_is_positive_zero_as_torch():
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        t = lib.tensor([1.0, 2.0, 5.0], dtype=lib.float64, requires_grad=True)
        lib.nn.functional.mse_loss(x, t).backward()
        return np.signbit(x.grad.numpy()).tolist(), np.signbit(t.grad.numpy()).tolist(), x.grad, t.grad

    both(program)


@pytest.mark.parametrize("dtypes", [("float16", "float16"), ("float32", "float64"), ("float16", "float32"),
                                    ("float64", "int64"), ("int64", "float32")])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_dtypes_match_torch(dtypes, reduction):
    def program(lib):
        x = lib.tensor([[1.0, 2.5, -3.0], [0.5, 0.0, 4.0]], dtype=getattr(lib, dtypes[0]))
        t = lib.tensor([[1.0, 1.0, 2.0], [0.0, -1.0, 4.0]], dtype=getattr(lib, dtypes[1]))
        return lib.nn.functional.mse_loss(x, t, reduction=reduction)

    both(program)


def test_mse_loss_of_non_contiguous_operands_matches_torch():
    def program(lib):
        x = _values(lib, (3, 4), 1, requires_grad=True)
        t = _values(lib, (4, 3), 2)
        loss = lib.nn.functional.mse_loss(x.t()[::2], t[::2], reduction="none")
        return loss, lib.autograd.grad(loss.sum(), x)[0]

    both(program)


@pytest.mark.parametrize("reduction", ["avg", None, 1])
def test_mse_loss_module_refuses_an_unknown_reduction_when_called(reduction):
    both_raise(lambda lib: lib.nn.MSELoss(reduction=reduction)(lib.ones(2), lib.ones(2)), ValueError,
               f"^{reduction} is not a valid value for reduction")


def test_mse_loss_legacy_flags_override_reduction_as_torch():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = lib.nn.functional.mse_loss(lib.ones(2), lib.zeros(2), size_average=False, reduction="none")
            module = lib.nn.MSELoss(reduce=False, reduction="sum")
        return loss, module.reduction, [str(w.message) for w in caught]

    both(program)


def test_mse_loss_weighted_second_derivatives_match_torch():
    def program(lib):
        x, t = _values(lib, (4,), 1, requires_grad=True), _values(lib, (4,), 2)
        w = _values(lib, (4,), 3).abs()
        loss = lib.nn.functional.mse_loss(x, t, weight=w)
        (gx,) = lib.autograd.grad(loss, x, create_graph=True)
        return loss, gx, lib.autograd.grad((gx ** 2).sum(), x)[0]

    both(program)


# ---------------------------------------------------------------------------------------------- activations


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_activations_keep_dtype_and_strides_of_their_input_as_torch(name, dtype):
    def program(lib):
        x = _values(lib, (4, 3), 1, dtype=dtype).t()[:, ::2]
        y = getattr(lib.nn.functional, name)(x)
        return y, str(y.dtype)

    both(program, prepare=normalise)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh"])
def test_activation_second_derivatives_and_nodes_match_torch(name):
    def program(lib):
        x = _values(lib, (2, 3), 4, requires_grad=True)
        y = getattr(lib.nn.functional, name)(x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        return y, g, grad_fn_name(y), lib.autograd.grad(g.sum(), x)[0]

    both(program)


def test_relu_in_place_on_a_leaf_that_requires_grad_fails_as_torch():
    both_raise(lambda lib: lib.nn.ReLU(inplace=True)(lib.ones(2, requires_grad=True)), RuntimeError,
               "a leaf Variable that requires grad is being used in an in-place operation")


# ---------------------------------------------------------------------------------------------- init


@pytest.mark.parametrize("name, args", [("uniform_", ()), ("normal_", ()), ("xavier_uniform_", ()),
                                        ("xavier_normal_", ()), ("kaiming_uniform_", ()), ("kaiming_normal_", ()),
                                        ("constant_", (0.5,)), ("ones_", ()), ("zeros_", ()), ("eye_", ())])
@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_inits_fill_in_place_keeping_shape_dtype_and_strides(name, args, dtype):
    def program(lib):
        t = lib.empty(4, 3, dtype=getattr(lib, dtype)).t()
        out = getattr(lib.nn.init, name)(t, *args)
        return out is t, tuple(out.shape), str(out.dtype), out.stride(), out.requires_grad

    both(program, prepare=normalise)


def test_kaiming_and_xavier_bounds_follow_the_fans_of_a_conv_weight():
    ember.manual_seed(0)
    weight = ember.empty(64, 8, 3, 3, dtype=ember.float64)  # fan_in 72, fan_out 576
    gain = ember.nn.init.calculate_gain("leaky_relu", 0.2)
    bound = gain * math.sqrt(3 / 576)
    values = ember.nn.init.kaiming_uniform_(weight, a=0.2, mode="fan_out").numpy()
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound
    bound = math.sqrt(6 / (72 + 576))
    values = ember.nn.init.xavier_uniform_(weight).numpy()
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound


def test_inits_are_deterministic_given_manual_seed():
    def draw():
        ember.manual_seed(123)
        return [getattr(ember.nn.init, name)(ember.empty(5, 4)).tolist()
                for name in ("uniform_", "normal_", "xavier_normal_", "kaiming_uniform_")]

    assert draw() == draw()


def test_init_of_an_empty_tensor_warns_and_keeps_it_as_torch():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.nn.init.kaiming_normal_(lib.empty(3, 0))
            lib.nn.init.xavier_uniform_(lib.empty(0, 3))
        return tuple(out.shape), [str(w.message) for w in caught]

    both(program)
