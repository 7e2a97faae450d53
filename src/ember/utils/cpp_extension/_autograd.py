"""Turning a forward kernel and a backward kernel into an autograd ``Function``."""
from __future__ import annotations

from typing import Any, Callable

from ember._tensor import Tensor
from ember.autograd.function import Function, once_differentiable


def _dense(values) -> tuple:
    # kernels are written for row-major memory; this copies only what is not already
    return tuple(v.contiguous() if isinstance(v, Tensor) and not v.is_contiguous() else v for v in values)


def kernel_function(forward: Callable[..., Any], backward: Callable[..., Any], *, name: str = "KernelFunction",
                    save_outputs: bool = False) -> type[Function]:
    """A ``Function`` whose forward is ``forward(*inputs)`` and whose backward is
    ``backward(*grad_outputs, *inputs)`` (then ``*outputs`` with ``save_outputs``), returning one gradient per
    input (None for one that needs none), as ``Function.backward`` does.

    Every tensor reaches the kernels contiguous (a copy is made only when one is not). The kernels are not
    themselves differentiable, so the backward is ``once_differentiable``: asking for a second derivative raises.

    >>> import ember
    >>> Cube = kernel_function(lambda x: x ** 3, lambda grad, x: 3 * x * x * grad, name="Cube")
    >>> x = ember.tensor([1., 2.], requires_grad=True)
    >>> Cube.apply(x).sum().backward()
    >>> x.grad
    tensor([ 3., 12.])
    """

    def forward_(ctx, *inputs):
        inputs = _dense(inputs)
        outputs = forward(*inputs)
        saved = (outputs if isinstance(outputs, tuple) else (outputs,)) if save_outputs else ()
        ctx.save_for_backward(*inputs, *saved)
        return outputs

    @once_differentiable
    def backward_(ctx, *grad_outputs):
        return backward(*_dense(grad_outputs), *ctx.saved_tensors)

    # _acts_as_user: the Function is the user's, though this module is ember's (see Function.__init_subclass__)
    return type(name, (Function,), {"forward": staticmethod(forward_), "backward": staticmethod(backward_),
                                    "_acts_as_user": True, "__doc__": f"{name}: a Function of two kernels."})
