"""check_function: each deliberately broken Function fails its check (with a diagnosis); correct ones pass."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import Function, check_function
from seed_functions import inplace_double, linear_function, mul_constant

X = ember.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
W = ember.tensor([[0.3, -0.2, 0.1], [0.4, 0.5, -0.6]])


# ----------------------------------------------------------------- correct Functions


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad

    @staticmethod
    def jvp(ctx, tangent):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * tangent


class MulAdd(Function):
    """x * w + x, with both tangents in its jvp and needs_input_grad respected."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        ctx.save_for_forward(x, w)
        return x * w + x

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return (grad * (w + 1) if ctx.needs_input_grad[0] else None,
                grad * x if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, x_t, w_t):
        x, w = ctx.saved_tensors
        return x_t * (w + 1) + x * w_t


class SortValues(Function):
    """Sorted values and their positions (as floats), the positions marked non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        values, order = x.sort(-1)
        ctx.save_for_backward(order)
        positions = order.to(x.dtype)
        ctx.mark_non_differentiable(positions)
        return values, positions

    @staticmethod
    def backward(ctx, grad_values, grad_positions):
        (order,) = ctx.saved_tensors
        return ember.zeros_like(grad_values).scatter(-1, order, grad_values)


def _seed_linear(setup_context: bool):
    return linear_function(ember, with_setup_context=setup_context).apply


CORRECT = [
    pytest.param(Cube.apply, (X,), id="cube-with-jvp"),
    pytest.param(MulAdd.apply, (X, W), id="two-inputs-with-jvp"),
    pytest.param(SortValues.apply, (X,), id="non-differentiable-output"),
    pytest.param(_seed_linear(False), (X, W, ember.tensor([0.1, -0.1])), id="seed-LinearFunction"),
    pytest.param(_seed_linear(True), (X, W, ember.tensor([0.1, -0.1])), id="seed-LinearFunction-setup_context"),
    pytest.param(lambda x: mul_constant(ember).apply(x, 2.5), (X,), id="seed-MulConstant"),
    pytest.param(inplace_double(ember).apply, (X,), id="seed-InplaceDouble-mark_dirty"),
    pytest.param(lambda x, w: Cube.apply(x).sum(0) * w[0], (X, W), id="function-built-on-one"),
]


@pytest.mark.parametrize("fn,args", CORRECT)
def test_correct_functions_pass_every_check(fn, args):
    report = check_function(fn, *args)
    assert report.passed, repr(report)
    assert report["gradcheck"].status == "pass" and report["gradgradcheck"].status == "pass"


def test_a_function_without_jvp_is_not_applicable_for_forward_mode_and_says_why():
    report = check_function(mul_constant(ember).apply, X, 2.0)
    assert report["forward mode (jvp)"].status == "n/a"
    assert "MulConstant defines no jvp" in report["forward mode (jvp)"].detail


class BatchedCube(Function):
    """Cube in the setup_context style, its batching rule generated from its formulas."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    backward = staticmethod(Cube.backward)


class RowSums(Function):
    """Sums of each row, with a vmap staticmethod: the batch dim moves in front, the sum stays on the last dim."""

    @staticmethod
    def forward(x):
        return x.sum(-1)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.shape = inputs[0].shape

    @staticmethod
    def backward(ctx, grad):
        return grad.unsqueeze(-1).expand(ctx.shape)

    @staticmethod
    def vmap(info, in_dims, x):
        return RowSums.apply(x.movedim(in_dims[0], 0)), 0


class RowSumsWrongDim(RowSums):
    """A broken vmap rule: it sums over the batch dim's neighbour instead of the sample's last dim."""

    @staticmethod
    def vmap(info, in_dims, x):
        return x.movedim(in_dims[0], -1).sum(0), 0


class RowSumsWrongOutDim(RowSums):
    """A broken vmap rule: it moves the batch dim last, but says it is first."""

    @staticmethod
    def vmap(info, in_dims, x):
        return RowSums.apply(x.movedim(in_dims[0], 0)).movedim(0, -1), 0


@pytest.mark.parametrize("fn,args", [pytest.param(BatchedCube.apply, (X,), id="generate_vmap_rule"),
                                     pytest.param(RowSums.apply, (X,), id="vmap-staticmethod")])
def test_batched_functions_pass_the_vmap_check(fn, args):
    report = check_function(fn, *args)
    assert report["vmap"].status == "pass", repr(report)
    assert "loop over 3 samples" in report["vmap"].detail


@pytest.mark.parametrize("function,diagnosis", [(RowSumsWrongDim, "output 0 of vmap differs"),
                                                (RowSumsWrongOutDim, "batch dim is swapped with a sample dim")])
def test_a_broken_vmap_rule_fails_the_vmap_check_with_a_diagnosis(function, diagnosis):
    report = check_function(function.apply, ember.randn(3, 3, dtype=ember.float64))
    assert report["vmap"].status == "FAIL", repr(report)
    assert diagnosis in report["vmap"].detail, repr(report)


@pytest.mark.parametrize("function,reason", [(Cube, "Cube takes ctx in forward: vmap needs the setup_context style"),
                                             (RowSums, None)])
def test_the_vmap_check_is_not_applicable_without_a_batching_rule_as_torch_refuses(function, reason):
    if reason is None:  # the same Function without its rule
        function = type("RowSumsNoRule", (RowSums,), {"vmap": Function.vmap})
        reason = "RowSumsNoRule has no batching rule: set generate_vmap_rule = True"
    report = check_function(function.apply, X)
    assert report["vmap"].status == "n/a" and reason in report["vmap"].detail, repr(report)
    with pytest.raises(RuntimeError, match="setup_context|does not have vmap support"):
        ember.func.vmap(function.apply)(X)


# ----------------------------------------------------------------- broken Functions, one per check


def _unary(name: str, forward, backward) -> type:
    """A one-input Function: ``forward(ctx, x)`` (x saved for backward) and ``backward(grad, x)``."""

    def run_forward(ctx, x):
        ctx.save_for_backward(x)
        return forward(ctx, x)

    def run_backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return backward(grad, x)

    return type(name, (Function,), {"forward": staticmethod(run_forward), "backward": staticmethod(run_backward)})


def _as_strided_rows(ctx, x):
    data = x.detach().numpy()
    step = data.itemsize
    return ember.from_numpy(np.lib.stride_tricks.as_strided(data, data.shape, (step * data.shape[-1], step)) * 2.0)


def _twice(grad, x):
    return grad * 2


WidensToDouble = _unary("WidensToDouble", lambda ctx, x: (x * 2).double(), _twice)
FlattensWithoutGrad = _unary("FlattensWithoutGrad",
                             lambda ctx, x: x * 2 if ctx.needs_input_grad[0] else (x * 2).reshape(-1), _twice)
ReturnsAnAlias = _unary("ReturnsAnAlias", lambda ctx, x: x.detach(), lambda grad, x: grad)  # the input's memory
AssumesContiguous = _unary("AssumesContiguous", _as_strided_rows, _twice)  # reads the buffer as if contiguous
NeedsTwoDims = _unary("NeedsTwoDims", lambda ctx, x: (x.view(x.shape[0], -1) * 2).view(x.shape), _twice)
HalfGradient = _unary("HalfGradient", lambda ctx, x: x * x, lambda grad, x: grad * x)  # d(x*x)/dx is 2x
# right, but computed off the graph: not differentiable in x
OffGraphBackward = _unary("OffGraphBackward", lambda ctx, x: x ** 3,
                          lambda grad, x: grad * ember.from_numpy(3 * x.detach().numpy() ** 2))


class NegatedJvp(Cube):
    @staticmethod
    def jvp(ctx, tangent):
        (x,) = ctx.saved_tensors
        return -3 * x ** 2 * tangent


class IgnoresNeedsInputGrad(MulAdd):
    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * (w + 1), grad * x


class ChangesInputUnmarked(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class KeepsInputOnCtx(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x  # not save_for_backward: a later in-place change goes unnoticed
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return 2 * ctx.x * grad


class UsesNonDifferentiableGrad(SortValues):
    @staticmethod
    def backward(ctx, grad_values, grad_positions):
        (order,) = ctx.saved_tensors
        return ember.zeros_like(grad_values).scatter(-1, order, grad_values + grad_positions)


BROKEN = [
    pytest.param(WidensToDouble, (X,), "output dtype", "float64 for ember.float32 inputs", id="dtype"),
    pytest.param(FlattensWithoutGrad, (X,), "output shape", "for no grad inputs", id="shape"),
    pytest.param(ReturnsAnAlias, (X,), "aliasing", "shares memory with input 0", id="aliasing"),
    pytest.param(AssumesContiguous, (X,), "non-contiguous inputs", "assumes contiguous memory", id="non-contiguous"),
    pytest.param(NeedsTwoDims, (X,), "0-d inputs", "0-d inputs: raised", id="0-d"),
    pytest.param(HalfGradient, (X,), "gradcheck", "scaled by 0.5", id="gradcheck"),
    pytest.param(OffGraphBackward, (X,), "gradgradcheck", "Jacobian mismatch", id="gradgradcheck"),
    pytest.param(NegatedJvp, (X,), "forward mode (jvp)", "negated", id="jvp"),
    pytest.param(IgnoresNeedsInputGrad, (X, W), "needs_input_grad", "ctx.needs_input_grad[1] is False",
                 id="needs_input_grad"),
    pytest.param(ChangesInputUnmarked, (X,), "mark_dirty", "changed input 0 in place without ctx.mark_dirty",
                 id="mark_dirty"),
    pytest.param(KeepsInputOnCtx, (X,), "saved tensors", "other than ctx.save_for_backward", id="saved-tensors"),
    pytest.param(UsesNonDifferentiableGrad, (X,), "non-differentiable outputs", "uses the gradient of a "
                 "non-differentiable output", id="non-differentiable"),
]


@pytest.mark.parametrize("function,args,check,diagnosis", BROKEN)
def test_each_broken_function_fails_its_check_with_a_diagnosis(function, args, check, diagnosis):
    report = check_function(function.apply, *args)
    assert report[check].status == "FAIL", repr(report)
    assert diagnosis in report[check].detail, repr(report)
    assert not report.passed


def test_the_report_is_a_short_table_and_raise_on_failure_raises_it():
    report = check_function(HalfGradient.apply, X)
    lines = repr(report).splitlines()
    assert lines[0].startswith("check_function(HalfGradient.apply): ")
    assert len(lines) == 1 + len(report.results)
    assert any(line.split()[:2] == ["gradcheck", "FAIL"] for line in lines[1:])
    with pytest.raises(ember.autograd.FunctionCheckError, match="gradcheck +FAIL"):
        check_function(HalfGradient.apply, X, raise_on_failure=True)
    assert check_function(Cube.apply, X, raise_on_failure=True).passed


def test_samples_need_a_floating_tensor():
    with pytest.raises(ValueError, match="floating-point tensor"):
        check_function(Cube.apply, ember.tensor([1, 2]))
