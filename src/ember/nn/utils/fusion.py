"""Fold an eval-mode batch norm into the convolution or linear layer before it.

The batch norm computes ``(y - mean) / sqrt(var + eps) * gamma + beta`` on the layer's output ``y``: a per-channel
scale and shift, which the layer's weight and bias can absorb.

>>> import ember
>>> from ember import nn
>>> class Norm(nn.Module):  # the attributes a BatchNorm layer has
...     def __init__(self, n):
...         super().__init__()
...         self.weight, self.bias = nn.Parameter(ember.ones(n) * 2), nn.Parameter(ember.zeros(n))
...         self.register_buffer("running_mean", ember.ones(n))
...         self.register_buffer("running_var", ember.ones(n))
...         self.eps = 0.0
...         self.num_features = n
>>> fused = nn.utils.fuse_linear_bn_eval(nn.Linear(2, 2).eval(), Norm(2).eval())
>>> type(fused).__name__
'Linear'
"""
from __future__ import annotations

import copy

import ember
from ember._tensor import Tensor
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _check_eval(*modules: Module) -> None:
    if any(m.training for m in modules):
        raise AssertionError("Fusion only for eval!")


def _check_running_stats(bn: Module) -> None:
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None: the batch norm has no running "
                             "statistics to fold in (it was built with track_running_stats=False)")


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The ``(weight, bias)`` of one convolution equal to the convolution then the batch norm, each in the
    convolution's dtype for it (the weight's, for a bias it had not)."""
    bias_dtype = conv_w.dtype if conv_b is None else conv_b.dtype
    conv_b = ember.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ember.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = ember.zeros_like(bn_rm) if bn_b is None else bn_b
    inv_std = ember.rsqrt(bn_rv + bn_eps)
    # A transposed convolution keeps its output channels in dim 1 of the weight.
    shape = [1, -1] + [1] * (conv_w.dim() - 2) if transpose else [-1] + [1] * (conv_w.dim() - 1)
    weight = (conv_w * (bn_w * inv_std).reshape(shape)).to(conv_w.dtype)
    bias = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(bias_dtype)  # torch's order of roundings
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of ``conv`` (in eval mode) whose output equals ``bn(conv(x))`` with ``bn`` in eval mode."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_running_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor, bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """The ``(weight, bias)`` of one linear layer equal to the linear layer then the batch norm, each in the
    linear layer's dtype for it (a float64 batch norm does not make a float32 layer float64)."""
    bias_dtype = linear_w.dtype if linear_b is None else linear_b.dtype
    linear_b = ember.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * ember.rsqrt(bn_rv + bn_eps)
    weight = linear_w * scale.unsqueeze(-1).to(linear_w.dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(bias_dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, linear_b.requires_grad)


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of ``linear`` (in eval mode) whose output equals ``bn(linear(x))`` with ``bn`` in eval mode."""
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1 "
            f"(got {linear.out_features} and {bn.num_features})"
        )
    _check_running_stats(bn)
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused
