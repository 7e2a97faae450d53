"""Automatic differentiation: ``backward``, ``grad``, custom ``Function``s and gradient checking.

>>> import ember
>>> x = ember.tensor([3.], requires_grad=True)
>>> (dx,) = ember.autograd.grad(x ** 3, x, create_graph=True)
>>> dx
tensor([27.], grad_fn=<MulBackward0>)
>>> ember.autograd.grad(dx, x)
(tensor([18.]),)
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ember._tensor import Tensor
from ember.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from ember.autograd.engine import run_backward
from ember.autograd.function import Function, FunctionCtx, InplaceFunction, once_differentiable
from ember.autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)

__all__ = [
    "Function", "FunctionCtx", "InplaceFunction", "Variable", "backward", "detect_anomaly", "enable_grad", "grad",
    "gradcheck", "gradgradcheck", "inference_mode", "is_grad_enabled", "no_grad", "once_differentiable",
    "set_detect_anomaly", "set_grad_enabled",
]


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, Tensor):
        return (value,)
    return tuple(value)


def _root_gradients(outputs: tuple, grad_outputs, op: str) -> list:
    """Pair each output with its gradient, creating ones for scalars as torch does."""
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"{op}: got {len(grads)} gradients for {len(outputs)} outputs; give one per output")
    roots = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        if not isinstance(out, Tensor):
            raise TypeError(f"{op}: outputs must be tensors, but output {i} is a {type(out).__name__}")
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if grad is None:
            if out._data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs (output {i} has shape "
                    f"{list(out._data.shape)}); pass a gradient of that shape, e.g. y.backward(ember.ones_like(y))"
                )
            grad = Tensor._wrap(np.ones(out._data.shape, out._data.dtype))
        elif not isinstance(grad, Tensor):
            raise TypeError(f"{op}: gradients must be tensors or None, got {type(grad).__name__}")
        elif grad._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {list(grad._data.shape)} and output[{i}] "
                f"has a shape of {list(out._data.shape)}."
            )
        roots.append((out, grad))
    return roots


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate into ``.grad`` of the leaves the gradient of ``tensors`` (weighted by ``grad_tensors``)."""
    if (inputs is None and isinstance(tensors, Tensor) and isinstance(grad_tensors, Tensor)
            and tensors._requires_grad and grad_tensors._data.shape == tensors._data.shape):
        # the everyday call, y.backward(gradient): nothing to normalise
        run_backward([(tensors, grad_tensors)], bool(retain_graph or create_graph), create_graph)
        return
    outputs = _as_tuple(tensors)
    roots = _root_gradients(outputs, grad_tensors if grad_tensors is not None else grad_variables, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    targets = _as_tuple(inputs) if inputs is not None else None
    if targets is not None and not targets:
        raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
    found = run_backward(roots, retain_graph, create_graph, targets, accumulate=True)
    if targets is not None:
        _store_non_leaf_grads(targets, found)


def _store_non_leaf_grads(targets: tuple, found: list) -> None:
    for t, g in zip(targets, found):
        if t._grad_fn is not None and g is not None:
            t._grad = g if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated."""
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    for i, t in enumerate(ins):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs must be tensors, but input {i} is a {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_gradients(outs, grad_outputs, "grad")
    found = run_backward(roots, retain_graph, create_graph, ins, accumulate=False)
    result = []
    for t, g in zip(ins, found):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = Tensor._wrap(np.zeros(t._data.shape, t._data.dtype))
        result.append(g)
    return tuple(result)


def Variable(data: Tensor, requires_grad: bool = False, volatile: bool = False) -> Tensor:
    """The pre-0.4 wrapper: now just the tensor itself (with ``requires_grad`` set if asked)."""
    if requires_grad:
        data.requires_grad_(True)
    return data


from ember.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from ember.autograd import anomaly_mode, function, grad_mode  # noqa: E402,F401
