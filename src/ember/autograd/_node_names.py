"""torch's node names for the ops ember composes of others.

torch records many ops as one node (``F.avg_pool2d`` prints ``AvgPool2DBackward0``) that ember computes with
several ember ops; the result's ``grad_fn`` is then the last of them (a ``DivBackward0``). ``named_node`` gives
that last node the op's own name: its class becomes a subclass of its class that differs only in its name, so
its formula, its saved tensors, its edges and its higher derivatives stay those of the ops that made it.

>>> import ember
>>> x = ember.ones(1, 1, 4, 4, requires_grad=True)
>>> ember.nn.functional.avg_pool2d(x, 2).grad_fn.name()
'AvgPool2DBackward0'
"""
from __future__ import annotations

from ember._tensor import Tensor

_RENAMED: dict = {}  # (a node class, a name, a tie) -> its subclass of that name


def named_node(result, name: str, *inputs, listed: tuple | None = None, tie=None):
    """``result`` (a tensor, or a tuple whose tensors share one node) with its node renamed ``name``.

    ``inputs`` are the op's tensor arguments: a result that is one of them, or that ends in one of their nodes
    (a composite that changed nothing), keeps its node as it is, so that no node made before the op is renamed.
    ``listed``, if given, are the arguments (tensors, or None) that torch's node of that name has as its inputs:
    ``next_functions`` then lists their edges, ``(None, 0)`` for one that needs no gradient. Backward, hooks and
    DistributedDataParallel still follow the recorded edges. ``tie``, if given, turns the node's formula on
    tensors into the one its renamed class runs (see ember._ops.tied_gradients.named_and_tied).
    """
    first = result[0] if isinstance(result, tuple) else result
    node = first.grad_fn
    if node is None or any(node is getattr(t, "_grad_fn", None) for t in inputs):
        return result
    node.__class__ = _renamed(type(node), name, tie)
    if listed is not None:
        node._listed = tuple([_listed_edge(t) for t in listed])
    return result


def _listed_edge(argument) -> tuple | None:
    """Where next_functions points for one argument: its node (and which output of it), the leaf itself, or
    None. Read from attributes only, not the tensor's data (under vmap that is a batch)."""
    if not isinstance(argument, Tensor):
        return None
    node = argument._grad_fn
    if node is not None:
        return (node, argument._output_nr)
    return (argument, 0) if argument._requires_grad else None


def _renamed(cls: type, name: str, tie=None) -> type:
    base = cls.__dict__.get("_named_from", cls)  # renaming a renamed node (an op composed of another) anew
    key = (base, name, tie)
    renamed = _RENAMED.get(key)
    if renamed is None:
        namespace = {"__module__": base.__module__, "__qualname__": name, "_named_from": base, "_graph_inputs": None,
                     "_torch_saved": None}  # what torch's node of that name saved is not what the last op saved
        if tie is not None:
            namespace["_formula"] = staticmethod(tie(base._formula))
        renamed = _RENAMED[key] = type(name, (base,), namespace)
    return renamed
