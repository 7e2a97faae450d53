"""Recorded gradients tied to the inputs their formula reads, with a zero derivative there, as torch's.

torch computes the backward of many ops (pooling, ``hardtanh``, reflection padding, convolution ...) with an op of
its own that also takes the forward's input: ``hardtanh_backward(grad, self, min_val, max_val)``. Under
``create_graph`` that op is recorded, so the gradient it returns requires grad whenever the input does, even
where the formula is constant in the input; differentiating it again gives zeros for the input, not an error
("element 0 of tensors does not require grad"). Hessians and gradient penalties of networks built of such layers
rely on it.

ember's formulas are written in ember ops, which record only what they compute from. ``tied_to_inputs`` adds
the missing dependence, found in the node's own edges (nothing more is kept from the forward), and only while a
graph of the gradient is recorded: the first-order backward pays nothing.

>>> import ember
>>> x = ember.tensor([-2.0, 0.5, 3.0], requires_grad=True)
>>> g, = ember.autograd.grad(ember.nn.functional.hardtanh(x).sum(), x, create_graph=True)
>>> g
tensor([0., 1., 0.], grad_fn=<HardtanhBackwardBackward0>)
>>> ember.autograd.grad(g.sum(), x)
(tensor([0., 0., 0.]),)
"""
from __future__ import annotations

import functools

import numpy as np

from ember._ops._support import wrap
from ember._ops.unary import zeros_like_gradient
from ember._tensor import Tensor
from ember.autograd._node_names import named_node
from ember.autograd.function import Function
from ember.autograd.grad_mode import state as _grad


class TiedGradient(Function):
    """``gradient`` unchanged, recorded as a function of ``inputs`` too, whose derivative there is zero: zeros,
    or with ``undefined`` none at all (torch's convolution: its inputs then get no gradient through it)."""

    @staticmethod
    def forward(ctx, gradient, undefined, *inputs):
        ctx.input_shapes = None if undefined else tuple(tuple(t.shape) for t in inputs)
        return wrap(gradient._data)  # (a formula's fresh result, which nothing else holds: no copy)

    @staticmethod
    def backward(ctx, grad_grad):
        needs = ctx.needs_input_grad
        if ctx.input_shapes is None:
            return (grad_grad if needs[0] else None,) + (None,) * (len(needs) - 1)
        zeros = tuple(_zeros(grad_grad, shape) if needed else None
                      for shape, needed in zip(ctx.input_shapes, needs[2:]))
        return (grad_grad if needs[0] else None, None) + zeros


def _zeros(grad_grad, shape: tuple):
    if tuple(grad_grad.shape) == shape:
        return zeros_like_gradient(grad_grad)
    return grad_grad.new_zeros(shape)


def tied_to_inputs(gradient: Tensor | None, node, *positions: int, undefined: bool = False) -> Tensor | None:
    """``gradient``, computed by ``node``'s backward on tensors, recorded as depending on the forward's inputs at
    ``positions`` too (as torch's node of the same formula does), and named as torch names that node
    (``HardtanhBackward0``'s gives ``HardtanhBackwardBackward0``). Unchanged where no graph is recorded or no
    such input requires grad. ``undefined``: see ``TiedGradient``."""
    if gradient is None or not _grad.enabled:
        return gradient
    edges = getattr(node, "_next", None)
    if edges is None:  # a backward run outside the graph (forward-mode AD transposes it): nothing to tie to
        return gradient
    return tied_to_edges(gradient, node.name(), [edges[p] for p in positions], undefined)


def tied_to_edges(gradient: Tensor, name: str, edges, undefined: bool = False) -> Tensor:
    """``gradient`` recorded as depending on the tensors at the end of ``edges`` (a node's ``_next`` or
    ``_listed``), with a zero derivative there."""
    inputs = [_stand_in(edge) for edge in edges if edge]
    if not inputs:
        return gradient
    return named_node(TiedGradient.apply(gradient, undefined, *inputs), _backward_of(name))


def _stand_in(edge: tuple) -> Tensor:
    """The input at the end of ``edge``: a leaf is there itself; a computed input, gone since its forward, is
    stood for by zeros of its shape (a broadcast 0: no memory) that carry its place in the graph."""
    fn, output_nr = edge[0], edge[1]
    if isinstance(fn, Tensor):
        return fn
    shape, dtype = edge[2:] if len(edge) == 4 else fn._out_meta[output_nr]
    stand_in = wrap(np.broadcast_to(np.zeros((), dtype), shape))
    stand_in._grad_fn, stand_in._output_nr, stand_in._requires_grad = fn, output_nr, True
    return stand_in


def _backward_of(name: str) -> str:
    """torch's name for the node that differentiates a node named ``name``: ``HardtanhBackward0`` gives
    ``HardtanhBackwardBackward0``."""
    return name.rstrip("0123456789") + "Backward0"


# ---------------------------------------------------------------------------------------------- composites


def named_and_tied(result, name: str, *inputs: Tensor, undefined: bool = False):
    """``named_node(result, name, *inputs, listed=inputs)`` for a composite op whose torch node's backward reads
    ``inputs``: under ``create_graph``, the gradient arriving at the composite's last node is tied to them (see
    ``tied_to_edges``; ``undefined`` as there), so that the gradients the composite gives them depend on them
    too, with a zero derivative."""
    return named_node(result, name, *inputs, listed=inputs, tie=_TIES[undefined])


def _tie_then(formula, undefined: bool):
    """``formula`` (a node's backward on tensors) whose gradients are first tied to the node's listed inputs."""
    def tying_formula(node, *grads):
        if _grad.enabled:  # a graph of the gradient is recorded (never so on the first-order path)
            grads = [g if g is None else tied_to_edges(g, node.name(), node._listed, undefined) for g in grads]
        return formula(node, *grads)
    return tying_formula


# (one of each: a renamed node class is made once per tie)
_TIES = {undefined: functools.partial(_tie_then, undefined=undefined) for undefined in (False, True)}
