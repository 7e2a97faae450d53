"""The gradients of a convolution with respect to its input and to its weight, as functions of their own.

A custom ``Function`` that runs a convolution in its forward can call these in its backward. Each is the
gradient autograd computes for ``conv{1,2,3}d``, so it is differentiable again where grad mode is on (a
backward run with ``create_graph=True``).

>>> import ember
>>> x, w = ember.ones(1, 1, 3, 3), ember.ones(1, 1, 2, 2)
>>> g = ember.ones(1, 1, 2, 2)  # the gradient of conv2d(x, w)
>>> ember.nn.grad.conv2d_input(x.shape, w, g)
tensor([[[[1., 2., 1.],
          [2., 4., 2.],
          [1., 2., 1.]]]])
>>> ember.nn.grad.conv2d_weight(x, w.shape, g)
tensor([[[[4., 4.],
          [4., 4.]]]])
"""
from __future__ import annotations

from typing import Callable, Sequence

from ember._creation import zeros
from ember._tensor import Tensor
from ember.autograd import grad as _grad
from ember.autograd.grad_mode import enable_grad, is_grad_enabled
from ember.nn import functional as F
from ember.nn._functional._complex_conv import refuse_without_complex_kernel

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _gradient(conv: Callable, input, weight, grad_output: Tensor, options: tuple, of_input: bool) -> Tensor:
    """The convolution is linear in each operand, so its gradient there does not depend on that operand's
    values: it is taken at zeros of the shape given for it (``input`` or ``weight``). A graph of it is recorded
    only where the other operand or ``grad_output`` requires grad (the zeros' own tie to it, see
    ember._ops.tied_gradients, is not the caller's)."""
    other = weight if of_input else input
    spatial = (weight.dim() if of_input else len(weight)) - 2
    refuse_without_complex_kernel(spatial, False, grad_output if of_input else input, grad_input=of_input)
    differentiable = is_grad_enabled() and (grad_output.requires_grad or other.requires_grad)
    with enable_grad():
        if of_input:
            input = wrt = zeros(tuple(input), dtype=grad_output.dtype, requires_grad=True)
        else:
            weight = wrt = zeros(tuple(weight), dtype=grad_output.dtype, requires_grad=True)
        (result,) = _grad(conv(input, weight, None, *options), wrt, grad_output, create_graph=differentiable)
    return result


def _named(function: Callable, name: str, conv: Callable, operand: str) -> Callable:
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"The gradient of ``{conv.__name__}(input, weight)`` with respect to its {operand}, of " \
                       f"shape ``{operand}_size``."
    return function


def _input_function(conv: Callable, name: str) -> Callable:
    def input_gradient(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride=1, padding=0,
                       dilation=1, groups: int = 1) -> Tensor:
        return _gradient(conv, input_size, weight, grad_output, (stride, padding, dilation, groups), True)
    return _named(input_gradient, name, conv, "input")


def _weight_function(conv: Callable, name: str) -> Callable:
    def weight_gradient(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride=1, padding=0,
                        dilation=1, groups: int = 1) -> Tensor:
        return _gradient(conv, input, weight_size, grad_output, (stride, padding, dilation, groups), False)
    return _named(weight_gradient, name, conv, "weight")


conv1d_input, conv1d_weight = _input_function(F.conv1d, "conv1d_input"), _weight_function(F.conv1d, "conv1d_weight")
conv2d_input, conv2d_weight = _input_function(F.conv2d, "conv2d_input"), _weight_function(F.conv2d, "conv2d_weight")
conv3d_input, conv3d_weight = _input_function(F.conv3d, "conv3d_input"), _weight_function(F.conv3d, "conv3d_weight")
