"""``ember.autograd.graph``: see the graph autograd recorded, and decide how saved tensors are kept.

:func:`to_dot` writes the graph behind a result as Graphviz DOT text: one box per node (its name and
the shapes of the tensors it saved for backward), the leaves it ends at, and an edge wherever a
gradient flows. :func:`render` draws it to PNG or SVG with the ``graphviz`` package and program.

>>> import ember
>>> w = ember.ones(3, 2, requires_grad=True)
>>> y = (ember.ones(4, 3) @ w).tanh().sum()
>>> print(ember.autograd.graph.to_dot(y, params={"w": w}))  # doctest: +NORMALIZE_WHITESPACE
digraph autograd {
  node [shape=box, style=filled, fontname="Helvetica", fontsize=11];
  n0 [label="output\\n()", fillcolor="#b5e7a0"];
  n1 [label="SumBackward0", fillcolor="#d9d9d9"];
  n2 [label="TanhBackward0\\nsaved: (4, 2) float32", fillcolor="#d9d9d9"];
  n3 [label="MmBackward0\\nsaved: (4, 3) float32", fillcolor="#d9d9d9"];
  n4 [label="w\\n(3, 2)", fillcolor="#a7c7e7"];
  n1 -> n0;
  n2 -> n1;
  n3 -> n2;
  n4 -> n3;
}

:class:`saved_tensors_hooks` changes how a node keeps what it saves: ``pack`` runs when a tensor is
saved, ``unpack`` when backward reads it back (to compress, offload or check it).
"""
from __future__ import annotations

import shutil
import weakref
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ember._tensor import Tensor
from ember.autograd._saved_hooks import SavedPack as _SavedPack
from ember.autograd._saved_hooks import saved_hooks_stack
from ember.autograd._stream_settings import (
    region_activation_memory_budget, set_override_stale_capture_stream, set_warn_on_accumulate_grad_stream_mismatch,
)
from ember.autograd.function import Function
from ember.autograd import engine as _engine
from ember.autograd.node import AccumulateGrad, Node, accumulator_of
from ember._tensor import version_counter
from ember.utils.hooks import RemovableHandle

__all__ = [
    "GradientEdge", "Node", "allow_mutation_on_saved_tensors", "disable_saved_tensors_hooks", "get_gradient_edge", "increment_version",
    "region_activation_memory_budget", "register_multi_grad_hook", "render", "save_on_cpu", "saved_tensors_hooks",
    "set_override_stale_capture_stream", "set_warn_on_accumulate_grad_stream_mismatch", "to_dot",
]

_disabled: list = []  # messages of the active disable_saved_tensors_hooks


class _Reattached(Function):
    """What ``unpack`` returned, put where the saved tensor was in the graph: its gradient goes to the saved
    tensor's place (so double backward reaches the inputs even if ``pack`` detached them, as in torch)."""

    @staticmethod
    def forward(ctx, source: Tensor, value: Tensor) -> Tensor:
        return Tensor._wrap(value._data)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def reattach(source: Tensor, value: Tensor) -> Tensor:
    return _Reattached.apply(source, value)


def stand_in(value: Tensor) -> Tensor:
    """A tensor of no memory at ``value``'s place in the graph (its grad_fn and output number, shape and dtype)."""
    t = Tensor._wrap(np.broadcast_to(np.zeros((), value._data.dtype), value._data.shape))
    t._grad_fn, t._output_nr, t._requires_grad = value.grad_fn, value._output_nr, True
    return t


class saved_tensors_hooks:
    """Within the block, every tensor a node saves is passed to ``pack_hook``, and what it returns is kept;
    backward gets the tensor back from ``unpack_hook(packed)``.

    >>> import ember
    >>> shapes = []
    >>> x = ember.ones(3, requires_grad=True)
    >>> with ember.autograd.graph.saved_tensors_hooks(lambda t: shapes.append(tuple(t.shape)) or t, lambda t: t):
    ...     y = (x * x).sum()
    >>> y.backward(); shapes, x.grad
    ([(3,), (3,)], tensor([2., 2., 2.]))
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        if _disabled:
            raise RuntimeError(_disabled[-1])
        saved_hooks_stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        saved_hooks_stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in CPU memory until backward needs them. In ember they are there already, so the
    tensors are kept as they are (as torch does for tensors on the CPU).

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.autograd.graph.save_on_cpu():
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad
    tensor([2., 2.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(_as_it_is, _as_it_is)


def _as_it_is(tensor: Any) -> Any:
    return tensor


_mutation_allowed: list = []  # the open allow_mutation_on_saved_tensors block (they do not nest)


class allow_mutation_on_saved_tensors(saved_tensors_hooks):
    """Within the block, a tensor saved for backward may be changed in place afterwards: backward reads
    the values it had when it was saved, where it would otherwise refuse the changed tensor.

    Backward must run inside the block too. ember copies each saved tensor's values as it is saved (torch
    copies on the first change instead), so the block's saved memory doubles; backward uses the tensor
    itself while it is unchanged.

    >>> import ember
    >>> x = ember.zeros(3, requires_grad=True)
    >>> with ember.autograd.graph.allow_mutation_on_saved_tensors():
    ...     y = x * 1
    ...     z = y.sin()  # saves y
    ...     _ = y.add_(1)
    ...     z.sum().backward()
    >>> x.grad  # cos(0), not cos(1)
    tensor([1., 1., 1.])
    """

    def __init__(self) -> None:
        super().__init__(self._pack, self._unpack)
        self._open = False

    def __enter__(self) -> "allow_mutation_on_saved_tensors":
        if _mutation_allowed:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        super().__enter__()
        _mutation_allowed.append(self)
        self._open = True
        return self

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        _mutation_allowed.pop()
        self._open = False

    @staticmethod
    def _pack(tensor: Tensor) -> tuple:
        return tensor, version_counter(tensor)[0], tensor.detach().clone()

    def _unpack(self, packed: tuple) -> Tensor:
        if not self._open:
            raise AssertionError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in which the graph "
                "was originally recorded: run backward inside the with block"
            )
        tensor, version, values = packed
        return tensor if version_counter(tensor)[0] == version else values


class disable_saved_tensors_hooks:
    """Within the block, entering :class:`saved_tensors_hooks` is an error with ``error_message``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> "disable_saved_tensors_hooks":
        if saved_hooks_stack:
            raise RuntimeError(self.error_message)
        _disabled.append(self.error_message)
        return self

    def __exit__(self, *exc) -> None:
        _disabled.pop()


# ---------------------------------------------------------------- drawing the graph

_COLOURS = {"output": "#b5e7a0", "node": "#d9d9d9", "leaf": "#a7c7e7"}


def to_dot(*roots: Tensor, params: dict | None = None, show_saved: bool = True) -> str:
    """The autograd graph behind ``roots`` as Graphviz DOT text.

    Each node shows its name and, with ``show_saved``, the shape and dtype of each tensor it saved for
    backward (none once a backward without ``retain_graph`` has freed them). Leaves show the name
    ``params`` gives them (a dict of name to tensor, as ``dict(model.named_parameters())``) and their shape.
    Edges point the way the forward ran, from input to result.
    """
    names = {id(t): name for name, t in (params or {}).items()}
    lines = ["digraph autograd {", '  node [shape=box, style=filled, fontname="Helvetica", fontsize=11];']
    edges: list = []
    ids: dict = {}

    def box(key, label: str, kind: str) -> str:
        if key not in ids:
            ids[key] = f"n{len(ids)}"
            lines.append(f'  {ids[key]} [label="{_escape(label)}", fillcolor="{_COLOURS[kind]}"];')
        return ids[key]

    for root in roots:
        if not isinstance(root, Tensor):
            raise TypeError(f"to_dot(): expected tensors, got {type(root).__name__}")
        target = box(("root", id(root)), f"output\n{_shape(root)}", "output")
        if root.grad_fn is not None:
            _walk(root.grad_fn, target, box, edges, names, show_saved)
        elif root.requires_grad:
            edges.append((box(("leaf", id(root)), _leaf_label(root, names), "leaf"), target))
    seen = set()
    for edge in edges:
        if edge not in seen:
            seen.add(edge)
            lines.append(f"  {edge[0]} -> {edge[1]};")
    return "\n".join(lines + ["}"])


def _walk(start: Node, consumer: str, box: Callable, edges: list, names: dict, show_saved: bool) -> None:
    """Every node reachable from ``start``, each boxed once, with an edge to each node that uses it."""
    pending = [(start, consumer)]
    visited = set()
    while pending:
        node, user = pending.pop(0)
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            edges.append((box(("leaf", id(leaf)), _leaf_label(leaf, names), "leaf"), user))
            continue
        here = box(("node", id(node)), _node_label(node, show_saved), "node")
        edges.append((here, user))
        if id(node) in visited:
            continue
        visited.add(id(node))
        pending.extend((following, here) for following, _ in node.next_functions if following is not None)


def _node_label(node: Node, show_saved: bool) -> str:
    label = node.name()
    if show_saved:
        shapes = [s for s in (_saved_shape(r) for r in _saved_records(node)) if s]
        if shapes:
            label += "\nsaved: " + ", ".join(shapes)
    return label


def _saved_records(node: Node) -> tuple:
    saved = getattr(node, "_saved", None)
    return saved if type(saved) is tuple and (not saved or saved[0] != "freed") else ()


def _saved_shape(record) -> str | None:
    """``(4, 3) float32`` for a saved tensor's record (see autograd/function.py), None for anything else."""
    if isinstance(record, _SavedPack):
        value = record.packed
    elif type(record) is tuple and len(record) == 4 and record[1] is not None:
        value = record[0]
    else:
        return None
    data = value._data if isinstance(value, Tensor) else value
    if not hasattr(data, "shape") or not hasattr(data, "dtype"):
        return None
    return f"{tuple(data.shape)} {data.dtype}"


def _leaf_label(leaf: Tensor | None, names: dict) -> str:
    if leaf is None:
        return "(freed leaf)"
    return f"{names[id(leaf)]}\n{_shape(leaf)}" if id(leaf) in names else f"leaf\n{_shape(leaf)}"


def _shape(t: Tensor) -> str:
    return str(tuple(t.shape))


def _escape(label: str) -> str:
    return label.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(*roots: Tensor, filename: str, format: str = "svg", params: dict | None = None,
           show_saved: bool = True) -> str:
    """Draw :func:`to_dot`'s graph to ``filename.<format>`` (``png``, ``svg``, ``pdf``); returns the file's path.

    Needs the ``graphviz`` Python package (the ``graph`` extra) and Graphviz's ``dot`` program.
    """
    try:
        import graphviz
    except ImportError as error:
        raise RuntimeError(
            "render(): drawing needs the graphviz package (pip install 'ember[graph]') and Graphviz's dot program; "
            "to_dot() gives the same graph as text, which any Graphviz viewer opens"
        ) from error
    if shutil.which("dot") is None:
        raise RuntimeError("render(): Graphviz's dot program is not on PATH; install Graphviz (e.g. apt-get install "
                           "graphviz), or use to_dot() and a Graphviz viewer")
    source = graphviz.Source(to_dot(*roots, params=params, show_saved=show_saved))
    return source.render(filename, format=format, cleanup=True)


# ----------------------------------------------------------------- edges and hooks over several tensors


class GradientEdge(NamedTuple):
    """Where a gradient enters the graph: a node and which of its inputs (``output_nr``).

    ``ember.autograd.grad`` takes one in place of a tensor among ``inputs``, and then returns the gradient that
    flows along that edge, even after the tensor is gone or was changed in place.
    """

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which ``tensor``'s gradient flows: its ``grad_fn`` (a leaf's AccumulateGrad node).

    >>> x = ember.ones(2, requires_grad=True)
    >>> y = x * 3
    >>> edge = ember.autograd.graph.get_gradient_edge(y)
    >>> ember.autograd.grad(y.sum(), edge)
    (tensor([1., 1.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients; call requires_grad_() on it first, or take the edge of a tensor that does")
    node = tensor.grad_fn
    if node is None:
        return GradientEdge(accumulator_of(tensor), 0)
    return GradientEdge(node, tensor._output_nr)


def increment_version(tensor) -> None:
    """Count an in-place change that autograd did not see (one made through ``.data`` or NumPy), so that
    backward through a node that saved ``tensor`` refuses it instead of using the changed values.

    >>> x = ember.ones(2, requires_grad=True)
    >>> y = x.detach()
    >>> before = y._version
    >>> ember.autograd.graph.increment_version(y)
    >>> y._version - before
    1
    """
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    try:
        tensors = iter(tensor)
    except TypeError:
        raise RuntimeError(f"increment_version expect a Iterable[Tensor] as input (got {type(tensor).__name__})") \
            from None
    for t in tensors:
        if not isinstance(t, Tensor):
            raise RuntimeError("increment_version expects each element of the iterable to be a tensor "
                               f"(got {type(t).__name__})")
        if not t._inference:  # as torch: a tensor made under inference_mode has no version to count
            version_counter(t)[0] += 1


class _MultiGradHook:
    """The state of one ``register_multi_grad_hook``: the gradients seen in each running backward pass."""

    def __init__(self, tensors: tuple, fn: Callable, mode: str):
        self.count, self.fn, self.mode = len(tensors), fn, mode
        # where each tensor's gradient arrives: its node, or the leaf itself (weakly: its hooks refer to this)
        self.targets = [t.grad_fn if t.grad_fn is not None else weakref.ref(t) for t in tensors]
        self.pending: dict = {}  # id(pass) -> the gradients gathered so far (all mode) or True (any mode)

    def tensor_hook(self, index: int) -> Callable:
        def on_gradient(grad):
            backward_pass = _engine.current_pass()
            key = id(backward_pass)
            if self.mode == "any":
                if key not in self.pending:
                    self.pending[key] = True
                    _engine.queue_callback(lambda: self.pending.pop(key, None))
                    self.fn(grad)
                return None
            gathered = self.pending.get(key)
            if gathered is None:
                gathered = self.pending[key] = ([None] * self.count, set(), self._expected(backward_pass))
                _engine.queue_callback(lambda: self._flush(key))
            grads, arrived, expected = gathered
            grads[index] = grad
            arrived.add(index)
            if len(arrived) >= expected:  # every gradient this pass computes is in: fn runs now, as torch runs it
                self._flush(key)
            return None

        return on_gradient

    def _expected(self, backward_pass) -> int:
        """How many of the tensors get a gradient in this pass (torch counts those whose node it will run)."""
        targets = [t() if isinstance(t, weakref.ref) else t for t in self.targets]
        return sum(t is not None and _engine.will_reach(backward_pass, t) for t in targets)

    def _flush(self, key: int) -> None:
        """Run ``fn`` on what the pass gathered, unless it already ran (some tensors never got a gradient)."""
        gathered = self.pending.pop(key, None)
        if gathered is not None:
            self.fn(gathered[0])


class _MultiHandle(RemovableHandle):
    """Removes every tensor hook of one multi-tensor hook."""

    def __init__(self, handles: list):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable, *, mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once per backward pass that reaches any of ``tensors``.

    ``mode="all"``: ``fn(grads)``, a list with each tensor's gradient, or None for a tensor the pass did not
    reach: as soon as the gradient of every tensor the pass reaches is computed (as torch, which tells from the
    graph which those are). ``mode="any"``: ``fn(grad)`` with the first gradient computed.
    ``fn`` only observes: what it returns is ignored.

    >>> a, b = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    >>> seen = []
    >>> handle = ember.autograd.graph.register_multi_grad_hook((a, b), lambda grads: seen.append(grads))
    >>> (a * 2).sum().backward()
    >>> seen
    [[tensor([2., 2.]), None]]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"register_multi_grad_hook: expects mode to be one of ('all', 'any') but got {mode!r}")
    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(f"register_multi_grad_hook: tensor {i} does not require grad; every tensor must "
                               "require grad (a hook would never run on it)")
    state = _MultiGradHook(tensors, fn, mode)
    return _MultiHandle([t.register_hook(state.tensor_hook(i)) for i, t in enumerate(tensors)])
