"""Selective activation checkpointing: a policy picks the ops whose outputs a checkpoint keeps, and its
recomputation runs only the others.

``create_selective_checkpoint_contexts(policy)`` gives ``checkpoint``'s ``context_fn`` two contexts. In the
forward, every op call (``ember.ops.aten.mm.default``, or a custom op) is shown to the policy after it ran; a
call it saves keeps its outputs, detached, and notes where each tensor its node saved came from (an argument,
an output, or neither, then kept too). In the recomputation, the n-th call of that op returns those outputs
without running, and hands the checkpoint the tensors its node would save, taken from its recomputed
arguments, so the recomputed saved tensors line up with the forward's.

>>> import functools
>>> from ember.utils.checkpoint import checkpoint
>>> x = ember.ones(2, 2, requires_grad=True)
>>> save_mm = functools.partial(create_selective_checkpoint_contexts, [ember.ops.aten.mm.default])
>>> checkpoint(lambda t: (t @ t).sin().sum(), x, use_reentrant=False, context_fn=save_mm).backward()
>>> x.grad
tensor([[-1.6646, -1.6646],
        [-1.6646, -1.6646]])
"""
from __future__ import annotations

from typing import Any, Callable

from ember._aten_names import AtenOverload, AtenPacket
from ember._ops._support import wrap
from ember._tensor import Tensor
from ember.autograd._op_interception import OpInterception
from ember.autograd._saved_hooks import saved_hooks_stack
from ember.autograd.function import Function
from ember.autograd.graph import saved_tensors_hooks
from ember.library._operator import OpOverload, OpOverloadPacket
from ember.utils._checkpoint_helpers import CheckpointPolicy

_RECOMPUTE = object()  # a call the policy left to the recomputation
_CONSUMED = object()  # a kept call whose outputs a recomputation has used
_MISMATCH = ("This can happen if the operations in the checkpointed region are nondeterministic or depend on "
             "global state that changed between forward and backward.")


class SelectiveCheckpointContext:
    """What a policy is told of a call besides the op and its arguments: the call's outputs (``op_output``).
    Policies run in the forward only, so ``is_recompute`` is always False."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


def create_selective_checkpoint_contexts(policy_fn_or_list: Callable | list,
                                         allow_cache_entry_mutation: bool = False) -> tuple:
    """``checkpoint``'s two contexts (forward, recomputation) for a policy: a function
    ``policy(ctx, op, *args, **kwargs) -> CheckpointPolicy`` (or a bool: save or not), or a list of ops to save
    (``[ember.ops.aten.mm.default]``). A kept output changed in place before the recomputation is an error
    unless ``allow_cache_entry_mutation``."""
    if isinstance(policy_fn_or_list, list):
        policy = _saving(policy_fn_or_list)
    elif callable(policy_fn_or_list):
        policy = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = {}  # op -> {index of its call: _KeptCall or _RECOMPUTE or _CONSUMED}
    return _Keeping(policy, storage), _Reusing(storage, allow_cache_entry_mutation)


def _saving(ops: list) -> Callable:
    for op in ops:
        if not isinstance(op, (AtenOverload, OpOverload)):
            hint = ("Please update the OpOverloadPacket to a specific OpOverload. For example, if you have "
                    "`ember.ops.aten.mm`, change it to `ember.ops.aten.mm.default`."
                    if isinstance(op, (AtenPacket, OpOverloadPacket)) else "")
            raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. {hint}")

    def policy(ctx: SelectiveCheckpointContext, op: Any, *args: Any, **kwargs: Any) -> CheckpointPolicy:
        return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE

    return policy


class _KeptTensor:
    """An output kept for the recomputation: detached, with the version it had and whether it required grad."""

    __slots__ = ("tensor", "version", "requires_grad")

    def __init__(self, tensor: Tensor):
        self.tensor, self.version, self.requires_grad = tensor.detach(), tensor._version, tensor.requires_grad

    def restored(self, allow_mutation: bool, call: Callable) -> Tensor:
        """The kept tensor for the recomputation; ``call(cls, args, kwargs)`` runs a Function unintercepted."""
        if not allow_mutation and self.tensor._version != self.version:
            raise RuntimeError(
                "Tensor cached during selective activation checkpoint has been mutated (changed in place after "
                "the forward); clone it before changing it, or pass allow_cache_entry_mutation=True"
            )
        if not self.requires_grad:
            return self.tensor
        return call(_KeptOutput, (self.tensor.detach().requires_grad_(),), {})


class _KeptOutput(Function):
    """A kept output given to the recomputation as the output of a node (not as a leaf), as the op's output
    was: the recomputed ops after it then record, save and change it in place as they did in the forward."""

    _acts_as_user = True  # not one of torch's ops: it has no ember.ops.aten name
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, kept: Tensor) -> Tensor:
        return wrap(kept._data)  # the kept memory itself: a change in place reaches it, as torch's does

    @staticmethod
    def backward(ctx, grad: Any) -> Any:
        return grad


class _KeptCall:
    """A saved op call: its outputs and where each tensor its node saved came from."""

    __slots__ = ("outputs", "sources")

    def __init__(self, outputs: Any, sources: list):
        self.outputs, self.sources = outputs, sources


def _map(value: Any, kind: type, fn: Callable) -> Any:
    """``value`` (an op's output: one value, or a tuple or list of them) with ``fn`` applied to its ``kind``s."""
    if isinstance(value, kind):
        return fn(value)
    if type(value) in (tuple, list):
        return type(value)(_map(v, kind, fn) for v in value)
    return value


def _tensors(value: Any) -> list:
    found: list = []
    _map(value, Tensor, found.append)
    return found


def _source(tensor: Tensor, args: tuple, kwargs: dict, outputs: list) -> tuple:
    """Where a saved tensor comes from in the recomputation: an argument or output of the same call, or (for a
    tensor the op made for its backward) the tensor itself, kept."""
    for i, arg in enumerate(args):
        if arg is tensor:
            return ("arg", i)
    for name, arg in kwargs.items():
        if arg is tensor:
            return ("kwarg", name)
    for j, out in enumerate(outputs):
        if out is tensor:
            return ("out", j)
    return ("kept", tensor.detach())


class _Keeping(OpInterception):
    """The forward: runs each op, asks the policy about it and keeps the outputs of the ones it saves."""

    def __init__(self, policy: Callable, storage: dict):
        self.policy, self.storage, self.counts = policy, storage, {}

    def intercept(self, op: Any, args: tuple, kwargs: dict, call: Callable) -> Any:
        saved: list = []
        if saved_hooks_stack:  # (a checkpoint's): note what the op's node saves, then pack it as it would be
            pack, unpack = saved_hooks_stack[-1]
            with saved_tensors_hooks(lambda t: saved.append(t) or pack(t), unpack):
                out = call()
        else:
            out = call()
        index = self.counts[op] = self.counts.get(op, -1) + 1
        policy = self.policy(SelectiveCheckpointContext(is_recompute=False, op_output=out), op, *args, **kwargs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        entries = self.storage.setdefault(op, {})
        if policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE):
            outputs = _tensors(out)
            entries[index] = _KeptCall(_map(out, Tensor, _KeptTensor),
                                       [_source(t, args, kwargs, outputs) for t in saved])
        else:
            entries[index] = _RECOMPUTE
        return out


class _Reusing(OpInterception):
    """The recomputation: runs the ops the policy left to it; a saved call gives back its kept outputs."""

    def __init__(self, storage: dict, allow_mutation: bool):
        self.storage, self.allow_mutation, self.counts = storage, allow_mutation, {}

    def __enter__(self) -> "_Reusing":
        self.counts = {}
        return super().__enter__()

    def intercept(self, op: Any, args: tuple, kwargs: dict, call: Callable) -> Any:
        index = self.counts[op] = self.counts.get(op, -1) + 1
        entries = self.storage.get(op)
        if entries is None:
            raise RuntimeError(f"{op} encountered during backward but not found in storage. {_MISMATCH}")
        entry = entries.get(index)
        if entry is None:
            raise RuntimeError(f"{op} invocation index {index} encountered during backward but not found in "
                               f"storage. {_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to backward once on any "
                               "region computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return call()
        entries[index] = _CONSUMED
        out = _map(entry.outputs, _KeptTensor, lambda kept: kept.restored(self.allow_mutation, self.call))
        if saved_hooks_stack:
            _pack_as_the_node_would(saved_hooks_stack[-1][0], entry.sources, args, kwargs, _tensors(out))
        return out


def _pack_as_the_node_would(pack: Callable, sources: list, args: tuple, kwargs: dict, outputs: list) -> None:
    """Give the checkpoint's recomputation the tensors the skipped call's node saved in the forward, in order."""
    for kind, where in sources:
        pack(args[where] if kind == "arg" else kwargs[where] if kind == "kwarg" else
             outputs[where] if kind == "out" else where)
