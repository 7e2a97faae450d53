"""Activation checkpointing: trade compute for memory by recomputing a forward pass during backward.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` with its graph recorded but
with none of the tensors its ops save kept: a saved-tensor hook keeps only their
positions, and the first backward that needs one runs ``fn`` again (with the
random-number state of the first run) and hands back the recomputed tensors. The
result is ``fn``'s own output, so double backward, outputs in any structure and
parameters that ``fn`` reaches by closure work as without checkpointing.
``use_reentrant=True`` records ``fn`` as one node (``CheckpointFunction``) whose
backward recomputes it and backpropagates through that.

>>> import ember
>>> from ember.utils.checkpoint import checkpoint
>>> x = ember.tensor([1., 2.], requires_grad=True)
>>> y = checkpoint(lambda t: (t.exp() * t).sum(), x, use_reentrant=False)
>>> y.backward()
>>> x.grad  # exp(x) * (1 + x)
tensor([ 5.4366, 22.1672])
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Iterator

from ember._random import get_rng_state, set_rng_state
from ember._tensor import Tensor
from ember.autograd import backward as _backward
from ember.autograd import engine as _engine
from ember.autograd.function import Function
from ember.autograd.grad_mode import enable_grad, is_grad_enabled
from ember.autograd.graph import saved_tensors_hooks
from ember.autograd.saved_attributes import SavedTensor
from ember.nn.modules.module import Module
from ember.utils._checkpoint_debug import DEBUG_TIP, debug_contexts
from ember.utils._checkpoint_helpers import (  # noqa: F401
    CheckpointPolicy, DefaultDeviceType, check_backward_validity, detach_variable, get_device_states, noop_context_fn,
    set_device_states,
)
from ember.utils._selective_checkpoint import SelectiveCheckpointContext, create_selective_checkpoint_contexts

__all__ = ["CheckpointError", "CheckpointFunction", "CheckpointPolicy", "DefaultDeviceType", "GraphExecGroup",
           "SavedTensor", "SelectiveCheckpointContext", "check_backward_validity", "checkpoint",
           "checkpoint_sequential", "create_selective_checkpoint_contexts", "detach_variable", "get_device_states",
           "noop_context_fn", "set_checkpoint_debug_enabled", "set_checkpoint_early_stop", "set_device_states"]

_debug_enabled: bool | None = None  # set_checkpoint_debug_enabled's setting; None: each checkpoint's debug
_early_stop_enabled: bool | None = None  # set_checkpoint_early_stop's setting; None: each checkpoint's early_stop

@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Within the block, checkpoints list the ops of their forward and recomputation in the error they raise when
    the two differ (True), or do not (False), whatever their ``debug`` says; None defers to it."""
    global _debug_enabled
    before, _debug_enabled = _debug_enabled, enabled
    try:
        yield
    finally:
        _debug_enabled = before


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether the checkpoints whose forward runs within the block stop their recomputation as soon as it has made
    every tensor backward needs (True, the default), or run the whole function again (False)."""
    global _early_stop_enabled
    before, _early_stop_enabled = _early_stop_enabled, enable
    try:
        yield
    finally:
        _early_stop_enabled = before


class GraphExecGroup:
    """Backward calls made within one group recompute each checkpointed region at most once: they must then not
    need the same saved tensors (with ``retain_graph=True``, a second backward over a region is an error)."""

    _current: "GraphExecGroup | None" = None

    def __enter__(self) -> "GraphExecGroup":
        if GraphExecGroup._current is not None:
            raise RuntimeError(
                f"GraphExecGroup contexts cannot be nested. Already inside group {GraphExecGroup._current}")
        GraphExecGroup._current = self
        return self

    def __exit__(self, *exc: Any) -> None:
        GraphExecGroup._current = None

    @classmethod
    def _get_current_group(cls) -> "GraphExecGroup | None":
        return cls._current


class _StopRecomputation(Exception):
    """Raised inside a recomputation once it has saved every tensor that backward needs."""


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
    """``use_reentrant=True``: ``run_function(*args)`` recorded as this one node, whose backward runs it again
    and backpropagates through the recomputation (parameters' gradients accumulate there)."""

    _acts_as_user = True  # its forward runs the user's function: with recording off, as a user's Function's does

    @staticmethod
    def forward(ctx, run_function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.plain = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a if isinstance(a, Tensor) else None for a in args])
        return run_function(*args)  # Function.apply runs forward with recording off: nothing is kept

    @staticmethod
    def backward(ctx, *grad_outputs: Any) -> tuple:
        running = _engine.current_pass()
        if running is not None and running.captures is not None:
            # (autograd.grad or backward(inputs=...)): the recomputation's backward fills every leaf's .grad
            raise RuntimeError(
                "When use_reentrant=True, ember.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, "
                "or call .backward() without passing the `inputs` argument."
            )
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
        return (None, None, *[a.grad if isinstance(a, Tensor) else None for a in args])


class CheckpointError(RuntimeError):
    """The recomputation of a checkpointed function did not save what its first run saved."""


class _Recomputation:
    """The tensors one checkpointed call saves: its first run keeps their positions only (``pack``); the first
    ``unpack`` of a backward runs the function again and keeps what it saves, each handed out once."""

    def __init__(self, run: Callable, args: tuple, rng_state: Any, context: Any, check: bool, early_stop: bool,
                 explain: Callable | None) -> None:
        self.run, self.args, self.rng_state, self.context, self.check = run, args, rng_state, context, check
        self.early_stop, self.explain = early_stop, explain  # explain: debug mode's rewriting of a CheckpointError
        self.versions = [(a, a._version) for a in args if isinstance(a, Tensor)]
        self.metadata: list = []  # (shape, dtype) of each tensor the first run saved
        self.recomputed: dict = {}  # position -> tensor, from the latest recomputation
        self.group: GraphExecGroup | None = None  # the GraphExecGroup the latest recomputation ran in

    def pack(self, tensor: Tensor) -> int:
        self.metadata.append((list(tensor.shape), tensor.dtype))
        return len(self.metadata) - 1

    def unpack(self, position: int) -> Tensor:
        if position not in self.recomputed:  # a backward's first read, or a second backward (retain_graph)
            group = GraphExecGroup._get_current_group()
            if group is not None and group is self.group:
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                    "Performing two backward calls that overlap (i.e. require the same saved activation in order "
                    "to compute gradients) is not allowed while under the torch.utils.checkpoint.GraphExecGroup "
                    "context. Run the second backward outside the group."
                )
            try:
                self.recomputed = dict(enumerate(self._recompute()))
            except CheckpointError as error:
                if self.explain is None:
                    raise
                raise self.explain(error) from error
            self.group = group
        return self.recomputed.pop(position)

    def _recompute(self) -> list:
        self._check_inputs_unchanged()
        saved: list = []

        def keep(tensor: Tensor) -> None:
            if len(saved) == len(self.metadata):
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation "
                                      "than during the original forward pass.\n" + DEBUG_TIP)
            # Detached, and nothing kept in the recomputation's own graph (which no backward runs): a saved output
            # held with its grad_fn would make a cycle that only the garbage collector frees. Double backward
            # still reaches the inputs: unpacked tensors are re-attached where the first run's were.
            saved.append(tensor.detach())
            if self.early_stop and len(saved) == len(self.metadata):
                raise _StopRecomputation

        try:
            with _RandomState(self.rng_state), enable_grad(), self.context, saved_tensors_hooks(keep, _as_it_is):
                self.run(*self.args)
        except _StopRecomputation:
            pass
        if self.check:
            self._check_same_as_first_run(saved)
        return saved

    def _check_inputs_unchanged(self) -> None:
        for tensor, version in self.versions:
            if tensor._version != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{tensor._data.dtype} tensor of shape {list(tensor.shape)}], an input of a "
                    f"checkpointed function, is at version {tensor._version}; expected version {version} instead. "
                    "Hint: backward recomputes the function from it; clone it before the in-place change."
                )

    def _check_same_as_first_run(self, saved: list) -> None:
        if len(saved) < len(self.metadata):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {len(self.metadata)}\nNumber of tensors "
                f"saved during recomputation: {len(saved)}{DEBUG_TIP}"
            )
        for position, ((shape, dtype), tensor) in enumerate(zip(self.metadata, saved)):
            if shape != list(tensor.shape) or dtype != tensor.dtype:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                    f"than during the forward pass.\ntensor at position {position}:\nsaved metadata: "
                    f"{{'shape': {shape}, 'dtype': {dtype}}}\nrecomputed metadata: {{'shape': "
                    f"{list(tensor.shape)}, 'dtype': {tensor.dtype}}}\nThe function must compute the same way on "
                    "both runs (same control flow and shapes); pass determinism_check='none' to skip this check."
                    + DEBUG_TIP
                )


def _as_it_is(value: Any) -> Any:
    return value


def _without_reentrance(run: Callable, args: tuple, preserve: bool, context_fn: Callable, determinism_check: str,
                        debug: bool, early_stop: bool) -> Any:
    explain = None
    if _debug_enabled if _debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, explain = debug_contexts()
    if not is_grad_enabled():  # nothing is recorded, so nothing would be recomputed
        return run(*args)
    forward_context, recompute_context = context_fn()
    frame = _Recomputation(run, args, get_rng_state() if preserve else None, recompute_context,
                           determinism_check != "none",
                           _early_stop_enabled if _early_stop_enabled is not None else early_stop, explain)
    with forward_context, saved_tensors_hooks(frame.pack, frame.unpack):
        return run(*args)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, with its intermediate results recomputed in backward instead of kept.

    ``preserve_rng_state=True`` (a keyword) replays the random-number state, so
    dropout draws the same mask twice. Keyword arguments other than that need
    ``use_reentrant=False``, as in torch, and so do these options: ``context_fn``
    gives the contexts the forward and the recomputation run in (selective
    checkpointing's, from ``create_selective_checkpoint_contexts``); ``early_stop``
    ends the recomputation once it has made every tensor backward needs;
    ``debug`` lists the ops of both runs in the error raised when they differ.
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
    if use_reentrant and (context_fn is not noop_context_fn or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    run = (lambda *a: function(*a, **kwargs)) if kwargs else function
    if not use_reentrant:
        return _without_reentrance(run, args, preserve, context_fn, determinism_check, debug, early_stop)
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    return CheckpointFunction.apply(run, preserve, *args)


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
        input = checkpoint(_in_order(functions[start:end + 1]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _in_order(functions[end + 1:])(input)


def _in_order(functions: list) -> Callable:
    """Consecutive functions of a checkpointed sequence, as one function."""

    def run(value: Any) -> Any:
        for fn in functions:
            value = fn(value)
        return value

    return run
