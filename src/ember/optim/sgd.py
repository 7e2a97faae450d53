"""Stochastic gradient descent, with momentum, Nesterov momentum, weight decay and maximisation.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1., 2.]))
>>> opt = ember.optim.SGD([w], lr=0.1)
>>> (w ** 2).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([0.8000, 1.6000], requires_grad=True)
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from ember._axpy import axpy_single
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._layout import strided
from ember._tensor import version_counter
from ember.optim.optimizer import (
    _PerParameter, _buffer, _check_fused, _check_lr, _learning_rate, _narrow, _new_state, _plus_scaled, _scalar,
    _scale_, _state_tensor, _with_weight_decay,
    closure_loss,
)

__all__ = ["SGD"]


class SGD(_PerParameter):
    """For each parameter ``p`` with gradient ``g`` (negated when ``maximize``):

    1. ``g = g + weight_decay * p``
    2. with momentum: ``buf = g`` on the first step, then ``buf = momentum * buf + (1 - dampening) * g``;
       ``g = g + momentum * buf`` (Nesterov) or ``g = buf``
    3. ``p = p - lr * g``
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        # foreach and fused choose how torch batches the update on a device; the arithmetic is the same,
        # so ember accepts them (and keeps them in the groups, for state_dict compatibility) and ignores them.
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    _options = {"nesterov": False, "maximize": False, "foreach": None, "differentiable": False, "fused": False}
    _takes_sparse = True  # nn.Embedding(sparse=True)'s gradient: the same update as its dense sum
    _foreach_records = True  # torch's batched SGD update records with differentiable=True, as its for-loop

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; ``closure`` (re-evaluating the loss) is called first."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            if group["weight_decay"] or group["nesterov"] or group["maximize"] or group["dampening"] or \
                    group["differentiable"]:
                quietly(IGNORE_ALL, self._step_group, group)  # (as Optimizer.step: inf and nan without a word)
            else:
                quietly(IGNORE_ALL, self._plain_momentum_step, group)
        return loss

    def _plain_momentum_step(self, group: dict) -> None:
        """The update of a group without weight decay, dampening, Nesterov momentum or maximisation, the usual
        one: ``buf = momentum * buf + g`` (``buf = g`` on the first step), ``p -= lr * buf``, in one loop over the
        parameters; in float32 ``p -= lr * buf`` is rounded once, as torch's. A parameter that is not float32 or
        float64, or whose gradient is sparse or of another dtype, takes the general way."""
        states, momentum, lr = self.state, group["momentum"], group["lr"]
        if type(lr) is not float:
            lr = _scalar(lr)
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            data = param._data
            dtype = data.dtype
            if grad.layout is not strided or grad._data.dtype is not dtype or (dtype is not _SINGLE
                                                                               and dtype is not _DOUBLE):
                self._step_group({**group, "params": [param]})  # (the general way, for this parameter alone)
                continue
            direction = grad._data
            if momentum != 0:
                state = states[param]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = _state_tensor(direction.copy())
                    direction = buf._data
                else:
                    direction = buf._data
                    direction *= momentum
                    direction += grad._data
            # torch's add_(alpha=-lr) rounds each element once; saxpy does too, and for a momentum buffer and
            # its parameter, whose addresses it keeps, it is also the faster way at any size
            if dtype is not _SINGLE or not axpy_single(-lr, direction, data, momentum != 0):
                data += -lr * direction
            counter = param._vc  # (param._bump(), inlined)
            (counter if counter is not None else version_counter(param))[0] += 1

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        # (every step of every parameter passes here: the common float case reads each setting once, calls no helper)
        if group["weight_decay"]:
            grad = _with_weight_decay(param, grad, group, 0.0)
        narrow = grad.dtype.itemsize == 2 and _narrow(grad)  # a half type: each op in float32, rounded once
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = _new_state(grad)
            elif narrow:
                _scale_(buf._data, momentum)
                _plus_scaled(buf._data, grad, 1 - group["dampening"], out=buf._data)
            else:
                data = _buffer(state, "momentum_buffer", param)
                data *= momentum
                dampening = group["dampening"]
                data += (1 - dampening) * grad if dampening else grad
            buf = _buffer(state, "momentum_buffer", param)
            grad = _plus_scaled(grad, buf, momentum) if group["nesterov"] else buf
        lr = group["lr"]
        if type(lr) is not float:
            lr = _learning_rate(group, param)
        if param.dtype.itemsize == 2 and _narrow(param):
            _plus_scaled(param, grad, -lr, out=param)
        else:
            param += -lr * grad  # (rounded twice in float32: torch rounds its weight decay, dampening and Nesterov
            # terms once too, and descending alone by saxpy here moved some trajectories further from torch's)


_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)
