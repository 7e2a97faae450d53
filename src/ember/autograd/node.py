"""What every graph node shares: its name, its edges and its hooks.

>>> import ember
>>> x = ember.ones(2, requires_grad=True)
>>> y = (x * 2).sum()
>>> y.grad_fn.name()
'SumBackward0'
>>> y.grad_fn.next_functions
((<MulBackward0 object at ...>, 0),)
"""
from __future__ import annotations

import weakref
from typing import Callable

from ember.utils.hooks import RemovableHandle


class Node:
    """A recorded operation; ``backward`` walks these from outputs to leaves."""

    # Set on each recorded node (see Function's _connect), not defaulted here: CPython 3.11 specialises no
    # write of an instance attribute whose name the class defines, and every recorded op writes these three.
    _next: tuple  # per forward input: None (not a tensor), False (no grad needed) or an edge tuple
    _seq: int  # the backward pass runs newer nodes first (smaller numbers)
    _out_meta: tuple  # per output: (shape, dtype), or None for an output that is no tensor

    _is_node = True
    _n_outputs = 1
    _tensor_hooks = None  # {output_nr: {id: hook}} from Tensor.register_hook on this node's outputs
    _hooks = None
    _prehooks = None
    _hooked = False  # whether any of the three kinds of hook above was ever registered: the engine's fast check
    _trace = None  # the forward's stack, kept in anomaly mode
    _metadata = None
    _builtin = False  # set for the nodes of ember's own Functions (see Function.__init_subclass__)
    _checks_outputs = False  # set for the nodes of a user's Functions: _connect checks what their forward returns
    _on_arrays = False  # backward may run on NumPy arrays (see Function.backward_on_arrays)
    _array_formula = None  # the formula itself when it may (the engine's one lookup for both)
    _graph_inputs = None  # what next_functions lists (see Function.graph_inputs)
    _saved = None  # saved tensors (see FunctionCtx); released after backward unless the graph is retained
    _torch_saved = None  # torch's names of what a built-in op saved: {name: where ember keeps it} (saved_attributes)
    _listed = None  # a composite op's node renamed as torch's: the edges of its own arguments (see _node_names)

    def name(self) -> str:
        return type(self).__name__

    def __dir__(self) -> list:
        """As torch's: the ``_saved_<name>`` attributes are those of what this op saved (a composite op's node,
        renamed as torch's, does not list those its class inherits), not ember's own ``_saved`` helpers."""
        names = type(self)._torch_saved or {}
        return [attribute for attribute in super().__dir__() if _listed_in_dir(attribute, names)]

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    @property
    def next_functions(self) -> tuple:
        """One ``(node, output_nr)`` per tensor input (or per position the Function's ``graph_inputs`` names).

        The node of a composite op renamed as torch's lists the op's own arguments, as torch's node does, not
        those of the last op it is made of (``_recorded_next_functions`` gives those).
        """
        if self._listed is not None:
            return tuple(_next_function(edge) for edge in self._listed)
        return self._recorded_next_functions()

    def _recorded_next_functions(self) -> tuple:
        """next_functions as the edges that backward follows from this node (what its hooks' grad_inputs match)."""
        edges = self._next
        return tuple(_next_function(edges[i] if i < len(edges) else None) for i in self._listed_positions())

    def _listed_positions(self) -> tuple:
        """The positions of the forward's arguments that next_functions lists: the Function's ``graph_inputs``,
        or its tensors."""
        if self._graph_inputs is not None:
            return self._graph_inputs
        return tuple([i for i, edge in enumerate(self._next) if edge is not None])

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node's backward; it may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = {}
        self._hooked = True
        return RemovableHandle.add(self._hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node's backward; it may return new grad_outputs."""
        if self._prehooks is None:
            self._prehooks = {}
        self._hooked = True
        return RemovableHandle.add(self._prehooks, fn)

    def _add_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        self._hooked = True
        return RemovableHandle.add(self._tensor_hooks.setdefault(output_nr, {}), fn)


class AccumulateGrad(Node):
    """Where a gradient reaches a leaf tensor and is added into its ``.grad``; one node per leaf.

    Its prehooks see the leaf's total gradient before it is added (after the leaf's own hooks) and may
    replace it; its hooks run after it is added. It refers to its leaf weakly: the leaf keeps its node (so
    ``next_functions`` shows the same one each time), and a strong reference back would make a cycle.
    """

    _next: tuple = ()
    _seq = 0
    _out_meta: tuple = ()

    def __init__(self, variable):
        self._variable = weakref.ref(variable)

    @property
    def variable(self):
        return self._variable()

    def register_hook(self, fn: Callable) -> RemovableHandle:
        handle = super().register_hook(fn)
        self._take_careful_path()
        return handle

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        handle = super().register_prehook(fn)
        self._take_careful_path()
        return handle

    def _take_careful_path(self) -> None:
        """A leaf with hooks of any kind has a ``_hooks`` dict: the engine then holds its gradient for the hooks."""
        leaf = self.variable
        if leaf is not None and leaf._hooks is None:
            leaf._hooks = {}


def accumulator_of(leaf) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made on first need."""
    node = leaf._accumulator
    if node is None:
        node = leaf._accumulator = AccumulateGrad(leaf)
    return node


def _listed_in_dir(attribute: str, saved_names: dict) -> bool:
    for prefix in ("_saved_", "_raw_saved_"):
        if attribute.startswith(prefix):
            return attribute[len(prefix):] in saved_names
    return True


def _next_function(edge) -> tuple:
    if not edge:
        return (None, 0)
    target, output_nr = edge[0], edge[1]
    if target._is_node:
        return (target, output_nr)
    return (accumulator_of(target), 0)
