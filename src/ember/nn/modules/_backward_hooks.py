"""Module backward hooks: the gradients of one module call, handed to ``register_full_backward_hook`` and
``register_full_backward_pre_hook`` hooks.

A module's gradients are not the gradients of any one node: its forward may record many. So the call
passes its tensor inputs, and then its tensor outputs, through an identity ``Function``. The output
side's backward receives the gradients w.r.t. the outputs (the pre-hooks may replace them); the input
side's backward runs once all gradients w.r.t. the inputs are summed, and calls the hooks with both.

>>> import ember
>>> lin = ember.nn.Linear(2, 1)
>>> seen = []
>>> _ = lin.register_full_backward_hook(lambda m, grad_input, grad_output: seen.append(grad_output))
>>> lin(ember.ones(1, 2, requires_grad=True)).sum().backward()
>>> seen
[(tensor([[1.]]),)]
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.autograd.grad_mode import is_grad_enabled

__all__ = ["BackwardHook", "BackwardHookFunction"]


class BackwardHookFunction(Function):
    """The identity on ``tensors``; its backward passes the gradients through ``receive``, which may replace them.

    Inputs that do not require grad stay so (non-differentiable outputs). ``materialize`` is False on the
    output side, so that an unused output's gradient reaches the pre-hooks as None, as torch gives it.
    """

    # ember's own ops record their views themselves (see Function.__init_subclass__ and _ops/inplace.py). This
    # one returns its inputs as they are, as a user's Function may: it must be checked as one, so that changing
    # a hooked module's input or output in place is refused (as torch refuses it) instead of bypassing the hooks.
    _acts_as_user = True

    @staticmethod
    def forward(ctx, receive: Callable, materialize: bool, *tensors: Tensor) -> tuple:
        ctx.receive = receive
        ctx.set_materialize_grads(materialize)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads: Any) -> tuple:
        return (None, None, *ctx.receive(grads))


class BackwardHook:
    """The backward hooks of one module call: wraps its inputs and outputs, and joins their gradients.

    ``grad_input`` and ``grad_output`` have one entry per positional input / per output, None where that is
    not a tensor (keyword arguments are not seen).
    """

    def __init__(self, module, hooks: Sequence[Callable], pre_hooks: Sequence[Callable]):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None  # set by the output side's backward; the input side's consumes it
        self.n_inputs = self.n_outputs = -1
        self.input_positions = self.output_positions = None  # None: nothing was wrapped

    def setup_input_hook(self, args: tuple) -> tuple:
        wrapped, self.input_positions = _wrap(args, self._input_grads, True)
        self.n_inputs = len(args)
        return wrapped

    def setup_output_hook(self, result: Any) -> Any:
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        wrapped, self.output_positions = _wrap(outputs, self._output_grads, False)
        self.n_outputs = len(outputs)
        return wrapped[0] if single else wrapped

    def _output_grads(self, grads: tuple) -> tuple:
        self.grad_outputs = _spread(self.output_positions, grads, self.n_outputs)
        for hook in self.pre_hooks:
            replacement = hook(self.module, self.grad_outputs)
            if replacement is None:
                continue
            if len(replacement) != len(self.grad_outputs):
                raise RuntimeError(
                    f"Backward pre hook returned an invalid number of grad_output, got {len(replacement)}, but "
                    f"expected {len(self.grad_outputs)} (one per output of the module, None where it is not a tensor)"
                )
            self.grad_outputs = replacement
        passed_on = self.grad_outputs
        if self.input_positions is None:
            self._call_hooks_without_input_grads()
        return tuple(passed_on[i] for i in self.output_positions)

    def _call_hooks_without_input_grads(self) -> None:
        """No input requires grad: the hooks run now, with grad_input all None, and may not replace it."""
        if self.hooks:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module outputs since no "
                "inputs require gradients (grad_input is all None); see the documentation of "
                "Module.register_full_backward_hook",
                UserWarning, stacklevel=2,
            )
        no_grads = (None,) * self.n_inputs
        for hook in self.hooks:
            result = hook(self.module, no_grads, self.grad_outputs)
            if result is not None and not (isinstance(result, tuple) and all(g is None for g in result)):
                raise RuntimeError(
                    "Backward hook for Modules where no input requires gradient should always return None or None "
                    f"for all gradients; got {type(result).__name__} (there is no grad_input to replace)"
                )
        self.grad_outputs = None

    def _input_grads(self, grads: tuple) -> tuple:
        if self.grad_outputs is None:
            # The gradient reached the inputs without passing through the outputs (e.g. double backward).
            return grads
        grad_input = _spread(self.input_positions, grads, self.n_inputs)
        for hook in self.hooks:
            replacement = hook(self.module, grad_input, self.grad_outputs)
            if replacement is None:
                continue
            if len(replacement) != len(grad_input):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(replacement)}, but expected "
                    f"{len(grad_input)} (one per positional input of the module, None where it is not a tensor)"
                )
            grad_input = replacement
        self.grad_outputs = None
        return tuple(grad_input[i] for i in self.input_positions)


def _wrap(values: tuple, receive: Callable, materialize: bool) -> tuple[tuple, list | None]:
    """``values`` with its tensors passed through one BackwardHookFunction, and their positions.

    Nothing is wrapped (positions None) when no tensor requires grad or grad mode is off.
    """
    positions = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    if not (is_grad_enabled() and any(values[i].requires_grad for i in positions)):
        return values, None
    wrapped = BackwardHookFunction.apply(receive, materialize, *[values[i] for i in positions])
    new = list(values)
    for i, tensor in zip(positions, wrapped):
        new[i] = tensor
    return (tuple(new) if type(values) is tuple else type(values)(*new)), positions


def _spread(positions: list, grads: tuple, size: int) -> tuple:
    """One entry per position of the call's inputs or outputs: the tensors' gradients, None elsewhere."""
    spread = [None] * size
    for i, grad in zip(positions, grads):
        spread[i] = grad
    return tuple(spread)
