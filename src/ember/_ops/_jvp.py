"""Forward-mode formulas (``jvp`` staticmethods) shared by many built-in ops.

A built-in op's ``jvp(ctx, *tangents)`` gets one tangent per argument of ``forward``
(None where an argument has none) and reads ``ctx.primals`` (the arguments) and
``ctx.result`` (the output). Most ops fall in one of three kinds, each with one formula
written in ember ops (so it can be differentiated again):

* elementwise ops of one tensor: the Jacobian is diagonal, so it is its own transpose, and
  the tangent goes through the op's own ``backward`` (``grad * f'(x)`` becomes ``tangent * f'(x)``);
  a complex op's backward multiplies by the conjugate, ``grad * conj(f'(z))``, so a complex tangent
  goes through conjugated, and comes out conjugated back: ``conj(conj(t) * conj(f'(z))) = t * f'(z)``;
* ops linear in some arguments (sums, means, indexing, joining, ``where``): the tangent is the
  op itself applied to the tangents (zeros for the arguments without one);
* products (``mul``, ``matmul``, ``dot``, ``cross``): the product rule, one term per factor with a tangent.

>>> import ember
>>> import ember.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(ember.tensor([1., 2.]), ember.tensor([1., 1.]))
...     fwAD.unpack_dual((x * x).sum()).tangent
tensor(6.)
"""
from __future__ import annotations

import numpy as np

from ember._tensor import Tensor


def _elementwise(ctx, tangent, *rest):
    if tangent._data.dtype.kind == "c":
        return _holomorphic(ctx, tangent, 0)
    grads = ctx._formula(ctx, tangent)
    return grads[0] if type(grads) is tuple else grads


def _holomorphic(ctx, tangent: Tensor, position: int) -> Tensor:
    """The tangent of a holomorphic op's output along a complex ``tangent`` of its input at ``position``: the
    backward formula (which multiplies by the conjugated derivative) applied to the conjugated tangent, conjugated.
    """
    from ember._ops.complex import conjugated  # (complex imports the ops that import this module)

    grads = ctx._formula(ctx, conjugated(tangent))
    return conjugated(grads[position] if type(grads) is tuple else grads)


def elementwise_jvp() -> staticmethod:
    """The jvp of an elementwise op of one tensor (its first argument): its ``backward`` applied to the tangent."""
    return staticmethod(_elementwise)


def _without_tangent(value):
    """What stands for an argument without a tangent in a linear op: zeros (a tensor's shape, or the number 0)."""
    if isinstance(value, Tensor):
        return Tensor._wrap(np.zeros(value._data.shape, value._data.dtype))
    return 0


def linear_jvp(*positions: int, start: int | None = None) -> staticmethod:
    """The jvp of an op linear in the arguments at ``positions`` (or from ``start`` on): the op of the tangents."""

    def jvp(ctx, *tangents):
        args = list(ctx.primals)
        chosen = range(start, len(args)) if start is not None else positions
        for p in chosen:
            args[p] = tangents[p] if tangents[p] is not None else _without_tangent(args[p])
        return ctx._forward_cls.apply(*args)

    return staticmethod(jvp)


def product_jvp(*positions: int) -> staticmethod:
    """The jvp of an op linear in each argument at ``positions`` apart (a product): one term per tangent."""

    def jvp(ctx, *tangents):
        total = None
        for p in positions:
            if tangents[p] is None:
                continue
            args = list(ctx.primals)
            args[p] = tangents[p]
            term = ctx._forward_cls.apply(*args)
            total = term if total is None else total + term
        return total

    return staticmethod(jvp)


def _broadcasting(ctx, *tangents):
    real = ctx.needs_input_grad
    total = None
    try:
        for p, tangent in enumerate(tangents):
            if tangent is None:
                continue
            ctx.needs_input_grad = tuple([i == p for i in range(len(tangents))])
            term = _holomorphic(ctx, tangent, p) if tangent._data.dtype.kind == "c" else ctx._formula(ctx, tangent)[p]
            total = term if total is None else total + term
    finally:
        ctx.needs_input_grad = real
    return total


def broadcasting_jvp() -> staticmethod:
    """The jvp of an elementwise op of several tensors that broadcast together, whose ``backward`` leaves each
    gradient unsummed (the engine sums it down): each input's Jacobian is diagonal once broadcast, so its
    term is that input's gradient formula applied to its tangent."""
    return staticmethod(_broadcasting)
