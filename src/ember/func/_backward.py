"""``autograd.grad`` inside ``vmap``: one backward pass for a whole batch of output gradients.

When the graph was recorded outside the vmapped function (plain tensors) and only the
``grad_outputs`` are batched, each node's backward formula runs once, on batched
gradients: its ops dispatch to their batching rules, as any op on a batched tensor does.
So ``vmap(lambda v: autograd.grad(y, x, v))(vs)`` gives every vector-Jacobian product in
one pass, and checks (``gradcheck(check_batched_grad=True)``) that the backward formulas
batch correctly. This is also how ``autograd.grad(is_grads_batched=True)`` runs (see
``ember.autograd._grad_batched``).

The walk is the engine's (newest node first, a node once every gradient for it is in)
without its fast paths: gradients are tensors, batched or not, compared and summed through
ember's public ops. A node with hooks is refused (its hooks would see batched tensors),
and so is a graph recorded inside the vmapped function (differentiate it with
``ember.func.grad`` or ``ember.func.vjp`` there instead).
"""
from __future__ import annotations

from heapq import heappop, heappush

import ember
from ember._dtype import from_numpy_dtype
from ember._tensor import Tensor
from ember.autograd import engine as _engine
from ember.autograd.function import _FREED
from ember.autograd.grad_mode import state as _grad_state
from ember.autograd.graph import GradientEdge
from ember.func._batched import BatchedTensor, logical_shape
from ember.func._rules import RULES, decline

_GRAD_PARAMETERS = ("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph", "only_inputs",
                    "allow_unused", "is_grads_batched", "materialize_grads")
_GRAD_DEFAULTS = {"grad_outputs": None, "retain_graph": None, "create_graph": False, "only_inputs": True,
                  "allow_unused": None, "is_grads_batched": False, "materialize_grads": False}


def grad_rule(func, args: tuple, kwargs: dict, levels: tuple):
    """The batching rule of ``ember.autograd.grad``: batched ``grad_outputs`` on a graph of plain tensors."""
    given = dict(_GRAD_DEFAULTS, **dict(zip(_GRAD_PARAMETERS, args)), **kwargs)
    outputs = _as_tuple(given["outputs"])
    inputs = _as_tuple(given["inputs"])
    if any(type(t) is BatchedTensor for t in outputs + inputs):
        decline("autograd.grad", "its outputs or inputs were computed inside the vmapped function (only its "
                                 "grad_outputs may be batched); differentiate there with ember.func.grad or "
                                 "ember.func.vjp, or compute the outputs outside vmap")
    if given["is_grads_batched"]:
        decline("autograd.grad", "is_grads_batched=True inside vmap would batch the grad_outputs twice; "
                                 "let vmap do the batching and pass is_grads_batched=False")
    create_graph = bool(given["create_graph"])
    retain_graph = create_graph if given["retain_graph"] is None else given["retain_graph"]
    materialize = bool(given["materialize_grads"])
    allow_unused = materialize if given["allow_unused"] is None else given["allow_unused"]
    roots = _roots(outputs, _as_tuple(given["grad_outputs"]) or (None,) * len(outputs))
    previous = _grad_state.enabled
    _grad_state.enabled = create_graph
    try:
        found = _BatchedPass(inputs, retain_graph).run(roots)
    finally:
        _grad_state.enabled = previous
    return tuple(_result(i, t, g, allow_unused, materialize) for i, (t, g) in enumerate(zip(inputs, found)))


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, Tensor) or type(value) is GradientEdge:
        return (value,)
    return tuple(value)


def _roots(outputs: tuple, grad_outputs: tuple) -> list:
    """(output, gradient) pairs: each gradient of its output's (logical) shape and dtype; ones for scalars."""
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad: got {len(outputs)} tensors and {len(grad_outputs)} gradients; give one "
                           "gradient (or None) per tensor")
    roots = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs (output {i} has "
                                   f"shape {list(out.shape)}); pass a gradient of that shape")
            g = ember.ones_like(out)
        elif tuple(logical_shape(g)) != tuple(out.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {list(logical_shape(g))} and "
                               f"output[{i}] has a shape of {list(out.shape)}.")
        elif g.dtype != out.dtype:
            g = g.to(out.dtype)
        roots.append((out, g))
    return roots


def _result(i: int, target, g, allow_unused: bool, materialize: bool):
    if g is not None:
        return g
    if not allow_unused:
        raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                           "Set allow_unused=True if this is the desired behavior.")
    return ember.zeros_like(target) if materialize and isinstance(target, Tensor) else None


class _BatchedPass:
    """One walk of the graph, from the outputs to the tensors (or edges) whose gradients are asked for."""

    def __init__(self, inputs: tuple, retain_graph: bool):
        if not all(type(t) is GradientEdge or t.requires_grad for t in inputs):
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        self.captures = _engine._capture_points(inputs)
        self.found = [None] * len(inputs)
        self.retain_graph = retain_graph
        self.buffers: dict = {}
        self.ran: list = []  # the nodes whose saved tensors go once the whole walk has succeeded

    def run(self, roots: list) -> list:
        ready: list = []
        nodes = []
        for tensor, g in roots:
            node = _engine._node_of(tensor)
            if node is None:
                self._to_leaf(tensor, g)
                continue
            if node not in self.buffers:
                nodes.append(node)
                heappush(ready, (node._seq, node))
            self._add(node, tensor._output_nr, g)
        self.needed, self.visit = _engine._needed_nodes(nodes, self.captures, False)
        while ready:
            node = heappop(ready)[1]
            grads = self.buffers.pop(node)
            self._capture(node, grads)
            if node in self.needed:
                self._deliver(node, self._run_node(node, grads), ready)
        if not self.retain_graph:
            # released only now: a walk that fails part way (a formula without a batching rule) leaves the graph
            # whole, so that autograd.grad(is_grads_batched=True) can fall back to one backward per entry
            for node in self.ran:
                if node._saved is not None:
                    node._saved = _FREED
        return self.found

    def _add(self, node, output_nr: int, g) -> None:
        buffer = self.buffers.setdefault(node, [None] * node._n_outputs)
        buffer[output_nr] = g if buffer[output_nr] is None else buffer[output_nr] + g

    def _capture(self, node, grads: list) -> None:
        for nr, g in enumerate(grads):
            for i in self.captures.get((id(node), nr), ()):
                self.found[i] = g

    def _to_leaf(self, leaf: Tensor, g) -> None:
        for i in self.captures.get((id(leaf), 0), ()):
            self.found[i] = g if self.found[i] is None else self.found[i] + g

    def _run_node(self, node, grads: list) -> list:
        if node._hooked:
            decline("autograd.grad", f"the graph's node {node.name()} has hooks, which would see batched "
                                     "gradients; remove the hooks or compute the gradients one at a time")
        if all(g is None for g in grads) and node._builtin:
            return [None] * len(node._next)  # as the engine: a built-in node given no gradient gives none
        if node.materialize_grads:
            grads = [ember.zeros(meta[0], dtype=from_numpy_dtype(meta[1])) if g is None and meta is not None else g
                     for g, meta in zip(grads, node._out_meta)]
        try:
            results = node._formula(node, *grads)
        except RuntimeError as error:  # which formula failed on batched gradients: the traceback is in ember
            raise RuntimeError(f"{error} (in the backward formula {node.name()}, run on batched gradients)") \
                from error
        results = results if type(results) is tuple else (results,)
        if len(results) != len(node._next):
            results = _engine._trim(node, results, len(node._next))
        self.ran.append(node)
        return [_conformed(node, i, edge, g) for i, (edge, g) in enumerate(zip(node._next, results))]

    def _deliver(self, node, results: list, ready: list) -> None:
        for edge, g in zip(node._next, results):
            if not edge or g is None:
                continue
            target = edge[0]
            if not target._is_node:
                self._to_leaf(target, g)
            elif target in self.visit:
                if target not in self.buffers:
                    heappush(ready, (target._seq, target))
                self._add(target, edge[1], g)


def _conformed(node, i: int, edge, g):
    """A formula's gradient for input ``i``: summed to the input's shape if broadcast, in its dtype."""
    if g is None:
        return None
    if not edge:
        return _engine._unexpected_gradient(node, i, edge, g)
    if not isinstance(g, Tensor):
        _engine._unexpected_gradient(node, i, edge, g)
    shape, dtype = tuple(edge[2]), from_numpy_dtype(edge[3])
    got = tuple(logical_shape(g))
    if got != shape:
        _engine._check_expandable(node, i, got, shape)
        g = _summed_to(g, got, shape)
    if g.dtype != dtype:
        g = (g.real if g.is_complex() and not dtype.is_complex else g).to(dtype)
    return g


def _summed_to(g: Tensor, got: tuple, shape: tuple) -> Tensor:
    """``g`` (of shape ``got``, broadcast from ``shape``) summed back to ``shape``."""
    lead = len(got) - len(shape)
    dims = tuple(range(lead)) + tuple(lead + k for k, n in enumerate(shape) if n == 1 and got[lead + k] != 1)
    return g.sum(dims, keepdim=True).reshape(shape) if dims else g.reshape(shape)


RULES["autograd.grad"] = grad_rule
