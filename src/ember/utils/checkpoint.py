"""Activation checkpointing: trade compute for memory by recomputing a forward pass during backward.

``checkpoint(fn, *args)`` runs ``fn`` without recording its graph, so none of
its intermediate results stay alive; the backward pass runs ``fn`` again (with
the random-number state of the first run) and backpropagates through that.

>>> import ember
>>> from ember.utils.checkpoint import checkpoint
>>> x = ember.tensor([1., 2.], requires_grad=True)
>>> y = checkpoint(lambda t: (t.exp() * t).sum(), x, use_reentrant=False)
>>> y.backward()
>>> x.grad  # exp(x) * (1 + x)
tensor([ 5.4366, 22.1672])
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

from ember._random import get_rng_state, set_rng_state
from ember._tensor import Tensor
from ember.autograd import backward as _backward
from ember.autograd.function import Function
from ember.autograd.grad_mode import enable_grad
from ember.nn.modules.module import Module

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction"]


class _RandomState:
    """Run a block with the random-number state of an earlier moment, then go back to the current one."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def __enter__(self) -> None:
        if self.state is not None:
            self.now = get_rng_state()
            set_rng_state(self.state)

    def __exit__(self, *exc) -> None:
        if self.state is not None:
            set_rng_state(self.now)


class CheckpointFunction(Function):
    """``forward(ctx, run_function, preserve_rng_state, n_args, *args_then_parameters)``: the first ``n_args``
    values are ``run_function``'s arguments; any after are parameters it uses, listed only so that the graph
    reaches this node when no argument requires grad (their gradients accumulate in the recomputation)."""

    _acts_as_user = True  # its forward runs the user's function: with recording off, as a user's Function's does

    @staticmethod
    def forward(ctx, run_function: Callable, preserve_rng_state: bool, n_args: int, *inputs: Any) -> Any:
        args = inputs[:n_args]
        ctx.run_function = run_function
        ctx.n_inputs = len(inputs)
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.plain = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a if isinstance(a, Tensor) else None for a in args])
        return run_function(*args)  # Function.apply runs forward with recording off: nothing is kept

    @staticmethod
    def backward(ctx, *grad_outputs: Any) -> tuple:
        saved = ctx.saved_tensors
        args = [plain if tensor is None else tensor.detach().requires_grad_(tensor.requires_grad)
                for plain, tensor in zip(ctx.plain, saved)]
        with _RandomState(ctx.rng_state), enable_grad():
            outputs = ctx.run_function(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(out, grad) for out, grad in zip(outputs, grad_outputs)
                 if isinstance(out, Tensor) and out.requires_grad]
        if not pairs:
            raise RuntimeError(
                "checkpoint: none of output has requires_grad=True, this checkpoint() is not necessary; call the "
                "function directly"
            )
        _backward([out for out, _ in pairs], [grad for _, grad in pairs])  # parameters' gradients accumulate here
        grads = [a.grad if isinstance(a, Tensor) else None for a in args]
        return (None, None, None, *grads) + (None,) * (ctx.n_inputs - len(args))


def _parameters_of(function: Callable) -> list:
    """The parameters of a module called directly or through a bound method (else none are known)."""
    owner = function if isinstance(function, Module) else getattr(function, "__self__", None)
    return [p for p in owner.parameters() if p.requires_grad] if isinstance(owner, Module) else []


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None, context_fn: Callable | None = None,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, with its intermediate results recomputed in backward instead of kept.

    ``preserve_rng_state=True`` (a keyword) replays the random-number state, so
    dropout draws the same mask twice. Keyword arguments other than that need
    ``use_reentrant=False``, as in torch.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and (context_fn is not None or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    run = (lambda *a: function(*a, **kwargs)) if kwargs else function
    parameters = [] if use_reentrant else _parameters_of(function)
    if use_reentrant and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    return CheckpointFunction.apply(run, preserve, len(args), *args, *parameters)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    """Run ``functions`` (a list, or an ``nn.Sequential``) in order, in ``segments`` chunks: every chunk but
    the last is checkpointed, so only the chunks' inputs stay alive."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, Module):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(_Chunk(functions[start:end + 1]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _Chunk(functions[end + 1:])(input)


class _Chunk(Module):
    """Consecutive functions of a checkpointed sequence, as one module (so its parameters are known)."""

    def __init__(self, functions: list) -> None:
        super().__init__()
        self.functions = functions
        for i, fn in enumerate(functions):
            if isinstance(fn, Module):
                self.add_module(str(i), fn)

    def forward(self, value: Any) -> Any:
        for fn in self.functions:
            value = fn(value)
        return value
