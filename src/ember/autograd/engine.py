"""The backward pass: walk the graph from the outputs, run each node once all its gradients are in.

The walk is iterative (no recursion limit). Every node carries a sequence
number from its forward, newer nodes first; the walk runs the newest node that
has a gradient waiting, so a node runs only after every node that uses its
output (all of them are newer). Gradients flowing into leaves are accumulated
into ``.grad`` (``backward``) or returned (``autograd.grad``).

Without ``create_graph`` no gradient needs a graph of its own, so the pass
carries plain NumPy arrays between nodes: a ``backward_on_arrays`` formula
runs on them directly, any other formula gets them wrapped as tensors. With
``create_graph`` the pass carries tensors and every formula records its graph.

>>> import ember
>>> x = ember.tensor([1., 2.], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4.])
"""
from __future__ import annotations

import sys
import warnings
from heapq import heapify as _heapify, heappop as _heappop, heappush as _heappush

import numpy as np

from ember import _dtype

from ember._dtype import from_numpy_dtype
from ember._layout import strided as _strided
from ember._ops import _cascade
from ember._ops._quiet import IGNORE_ALL, numpy_objection, quietly, written_despite
from ember._ops.reduction import MeanAll, SumAll, _summed_axes, expandable, seed_one
from ember._tensor import SAME_DTYPE, Tensor, _RetainGrad, version_counter
from ember import autograd as _autograd, overrides  # (autograd: its backward is called, once it is initialised)
from ember.autograd import anomaly_mode
from ember.autograd._engine_settings import _settings
from ember.autograd.function import _FREED, arrays_for as _arrays_for
from ember.autograd.grad_mode import state as _grad

_anomaly = anomaly_mode.state
_protocol = overrides._state
_ndarray = np.ndarray
_new = object.__new__
_getrefcount = sys.getrefcount
# References to a gradient in _walk's delivery loop when no one else holds it: the results tuple, zip's pair
# (which zip keeps for reuse), the loop variable and the call's argument; or, for one the walk made itself
# (summed down to its input's shape), the loop variable and the argument alone (checked in tests/autograd)
_ONLY_WE_HOLD_IT = (4, 2)
_SUMMING_LOSSES = (SumAll, MeanAll)  # the reductions whose formula takes loss.backward()'s one as seed_one
_add = np.add  # a module's global: read faster than NumPy's attribute, in the loop that accumulates gradients
_wrap = Tensor._wrap


def run_backward(roots: list, retain_graph: bool, create_graph: bool, inputs: tuple | None = None,
                 accumulate: bool = True) -> list | None:
    """Backpropagate ``roots`` (pairs of tensor and gradient).

    With ``accumulate`` the leaf gradients go into ``.grad`` (only of ``inputs``
    if given); without, the gradients of ``inputs`` are returned in order.
    """
    if create_graph and _grad.inference:  # as torch: inference mode records no graph, create_graph or not
        create_graph = False
    backward_pass = _new_pass(retain_graph, create_graph)
    if inputs is not None:
        backward_pass.accumulate = accumulate
        backward_pass.captures = _capture_points(inputs)
        backward_pass.found = [None] * len(inputs)
    prev = _grad.enabled
    _grad.enabled = create_graph
    _active.append(backward_pass)
    try:
        backward_pass.run(roots)
        if backward_pass.callbacks is not None:
            backward_pass.run_callbacks()
    finally:
        _grad.enabled = prev
        _active.pop()
    found = backward_pass.found
    if found is not None and backward_pass.arrays:
        found = [v if v is None or type(v) is not _ndarray else _wrap(_writable_if_alone(v)) for v in found]
    return found


def _writable_if_alone(value: np.ndarray) -> np.ndarray:
    """A gradient for the caller (sparse ones come as tensors). One element in read-only memory (a view of a
    shared one, say) is copied: as in torch, a tensor whose elements do not overlap may be changed in place."""
    return value if value.flags.writeable or value.size > 1 else value.copy()


def tensor_backward(self: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None,
                    create_graph: bool = False, inputs=None) -> None:
    """``Tensor.backward``: accumulate the gradient of ``self`` into the ``.grad`` of the leaves it depends on.

    The everyday calls start the walk here: ``y.backward(gradient)`` with a gradient of y's shape and dtype,
    and ``loss.backward()`` of a one-element loss. They are spelled out in one function, as each call in
    between would cost a short backward 1-2%. Anything else goes to ``autograd.backward``, which
    normalises the gradient or explains what is wrong with it.

    >>> x = ember.tensor([1., 2.], requires_grad=True)
    >>> (x * 3).sum().backward(); x.grad
    tensor([3., 3.])
    """
    if inputs is not None or self._grad_fn is None:
        return _autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)
    data = self._data
    if type(gradient) is Tensor:
        value = gradient._data
        if value.dtype is not data.dtype or value.shape != data.shape:
            return _autograd.backward(self, gradient, retain_graph, create_graph)
    elif gradient is None and data.size == 1:  # the gradient of a one-element loss: a one, made directly
        if data.dtype.kind == "c":
            return _autograd.backward(self, gradient, retain_graph, create_graph)  # (which refuses it)
        node = self._grad_fn
        if not data.ndim and not create_graph and node._forward_cls in _SUMMING_LOSSES and not node._hooked:
            # the usual loss, a total: its formula, which only reads its gradient, takes the shared one
            value = seed_one(data.dtype)
        else:  # a fresh one, which a user's formula or hook may write into, as into torch's
            value = np.array(1, data.dtype)
            if data.ndim:
                value = value.reshape(data.shape)
    else:
        return _autograd.backward(self, gradient, retain_graph, create_graph)
    node = self._grad_fn if self._base is None else _node_of(self)
    if create_graph:
        if retain_graph is None:  # None means as create_graph: resolved here, off the path without it
            retain_graph = True
        warn_create_graph_cycle()
        if _grad.inference:  # as torch: inference mode records no graph, create_graph or not
            create_graph = False
        else:
            value = _wrap(value) if gradient is None else gradient
    backward_pass = _new(_Pass)  # _new_pass, inlined: the call is 2% of a short backward
    backward_pass.retain_graph = retain_graph
    backward_pass.arrays = not create_graph
    backward_pass.buffers = {}
    backward_pass.captures = backward_pass.held = backward_pass.callbacks = None
    backward_pass.root = node
    if node._n_outputs == 1:
        grads = [value]
    else:
        grads = [None] * node._n_outputs
        grads[self._output_nr] = value
    prev = _grad.enabled
    _grad.enabled = create_graph
    _active.append(backward_pass)
    try:
        backward_pass._walk(node, grads, [])
        if backward_pass.held is not None:
            backward_pass._release_held()
        if backward_pass.callbacks is not None:
            backward_pass.run_callbacks()
    finally:
        _grad.enabled = prev
        _active.pop()


_active: list = []  # the backward passes running now, the innermost last (a hook may run another backward)


def current_pass() -> "_Pass | None":
    """The innermost backward pass running now, or None outside backward."""
    return _active[-1] if _active else None


def will_reach(backward_pass: "_Pass", target) -> bool:
    """Whether ``backward_pass`` delivers a gradient to ``target`` (a node, or a leaf tensor): whether it lies
    on a path from the pass's roots (through the nodes the pass runs, when it computes some gradients only).
    As torch's ``_will_engine_execute_node``, the answer covers the whole pass, before and after now."""
    reached = backward_pass.reached
    if reached is None:
        roots = backward_pass.roots if backward_pass.roots is not None else [backward_pass.root]
        reached = backward_pass.reached = _reachable(roots, backward_pass.visit)
    return id(target) in reached


def _reachable(roots: list, visit: set | None) -> set:
    """The ids of the nodes and leaves on paths from ``roots`` (only through ``visit``, when given)."""
    seen, stack = set(), [r for r in roots if visit is None or not r._is_node or r in visit]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if item._is_node:
            stack.extend(e[0] for e in item._next if e and (visit is None or not e[0]._is_node or e[0] in visit))
    return seen


def _edges_into_hooked_leaves(roots: list) -> dict:
    """Per leaf with hooks, the id of the leaf -> how many edges lead to it from ``roots`` (a root leaf counts
    one): how many gradients torch's engine waits for before its AccumulateGrad runs."""
    counts: dict = {}
    seen, stack = set(), list(roots)
    while stack:
        item = stack.pop()
        if not item._is_node:
            if item._hooks is not None or item._post_hooks:
                counts[id(item)] = counts.get(id(item), 0) + 1
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        stack.extend(e[0] for e in item._next if e)
    return counts


def queue_callback(callback) -> None:
    """Run ``callback()`` once the backward pass running now has delivered every gradient.

    Only during backward (from a hook, say), as torch's ``Variable._execution_engine.queue_callback``.
    """
    if not _active:
        raise RuntimeError("Final callbacks can only be installed during backward pass: call queue_callback from a "
                           "hook or a Function's backward")
    backward_pass = _active[-1]
    if backward_pass.callbacks is None:
        backward_pass.callbacks = []
    backward_pass.callbacks.append(callback)


_warned_cycle = False


def warn_create_graph_cycle() -> None:
    """Once per process, as torch: backward(create_graph=True) makes .grad and the parameter refer to each other."""
    global _warned_cycle
    if not _warned_cycle:
        _warned_cycle = True
        warnings.warn(
            "backward() with create_graph=True stores in each leaf's .grad a gradient whose graph refers back to "
            "the leaf: a reference cycle, which keeps both alive until the cycle collector runs. To avoid it, use "
            "ember.autograd.grad to compute gradients with a graph, or set the leaves' .grad to None when done.",
            UserWarning,
            stacklevel=4,
        )


def _new_pass(retain_graph: bool, create_graph: bool) -> "_Pass":
    """A pass that accumulates every leaf's gradient into ``.grad`` (run_backward may narrow it to some inputs).

    Made without ``__init__``: Python calls a class's ``__init__`` from C, which would cost a short backward 2%.
    """
    backward_pass = _new(_Pass)
    backward_pass.retain_graph = retain_graph
    backward_pass.arrays = not create_graph
    backward_pass.buffers = {}  # node -> one value (or None) per output of the node
    backward_pass.captures = backward_pass.held = backward_pass.callbacks = None
    return backward_pass


class _Pass:
    """One backward pass (see _new_pass): its options, and the gradients waiting at nodes (arrays or tensors)."""

    # Set on each pass (None at first), not defaulted here: every pass reads them, and CPython 3.11 specialises
    # neither the reads nor the writes of an instance attribute whose name the class also defines.
    captures: dict | None  # (node or leaf, output_nr) -> positions in ``found``
    held: dict | None  # id(leaf) -> (leaf, value): gradients of leaves whose hooks must see the total
    callbacks: list | None  # what queue_callback asked to run at the end

    # Unless autograd.grad or backward(inputs=...) asks for particular gradients, these stay unset:
    found = None  # the gradients asked for, in order
    needed = visit = None  # the nodes that lead to a captured gradient, and those plus the capture points
    accumulate = True  # into .grad; autograd.grad returns the gradients instead
    roots = None  # the nodes and leaves the pass starts from (run's), or
    root = None  # the one node tensor.backward starts from
    reached = None  # the nodes and leaves it will reach from them: found when will_reach first asks
    waiting = None  # id(hooked leaf) -> edges into it not yet followed: counted when one is first reached

    def run_callbacks(self) -> None:
        """The queued callbacks, in order; one may queue another, which runs too."""
        callbacks = self.callbacks
        index = 0
        while index < len(callbacks):
            callbacks[index]()
            index += 1

    def run(self, roots: list) -> None:
        """Start from any roots (leaves too): each root's gradient goes into its node's buffer first."""
        nodes = []
        leaf_roots = []
        self.roots = nodes_and_leaves = []
        for tensor, grad in roots:
            value = grad._data if self.arrays else grad
            fn = _node_of(tensor)
            if fn is None:
                leaf_roots.append((tensor, value))
                nodes_and_leaves.append(tensor)
                continue
            if fn not in self.buffers:
                nodes.append(fn)
                nodes_and_leaves.append(fn)
            self._add_to_buffer(fn, tensor._output_nr, value)
        if self.captures is not None:
            self.needed, self.visit = _needed_nodes(nodes, self.captures, self.accumulate)
        for leaf, value in leaf_roots:
            self._deliver(leaf, 0, value)
        ready = [(n._seq, n) for n in nodes]
        _heapify(ready)
        if ready:
            node = _heappop(ready)[1]
            self._walk(node, self.buffers.pop(node), ready)
        if self.held is not None:
            self._release_held()

    def _release_held(self) -> None:
        """After the walk: the hooked leaves still held (see _count_in) get their total gradient."""
        held, self.held = self.held, {}
        for target, value in held.values():
            self._release(target, value)

    def _release(self, target: Tensor, value) -> None:
        """Run a leaf's hooks on its total gradient, then deliver it."""
        hooked = _run_leaf_hooks(target, self._tensor(value))
        accumulator = target._accumulator
        if accumulator is not None and accumulator._prehooks and (self.captures is None or self.accumulate):
            (hooked,) = _run_pre_hooks(accumulator, [hooked])  # as torch: it runs only where it accumulates
        if hooked is not None:
            self._to_leaf(target, self._value(hooked))

    def _walk(self, node, grads: list, ready: list) -> None:
        """Run ``node`` on ``grads``, then the newest waiting node; deliver each gradient it returns along its edge.

        ``ready`` is a heap of (sequence number, node), each node with its
        gradients in ``self.buffers``. This loop is the backward pass's hot path:
        the common case (no hooks, no anomaly mode, gradients of the right shape) stays inline.
        """
        buffers, captures, arrays, retain_graph = self.buffers, self.captures, self.arrays, self.retain_graph
        anomaly = _anomaly.enabled
        while True:
            follow = None  # the next node, when it is the only one waiting (a chain): it skips the heap
            if captures is not None and self._ends_at(node, grads):
                edges = results = ()  # the gradients asked for are captured here; nothing beyond is needed
            else:
                if not (node._hooked or anomaly):
                    if (grads[0] is None or len(grads) > 1) and node.materialize_grads and \
                            self._materialize(node, grads):
                        results = (None,) * len(node._next)  # a built-in node given no gradient gives none
                    elif not arrays:
                        results = _call(node, grads)
                    elif (formula := node._array_formula) is None:  # (one lookup: it answers _on_arrays too)
                        results = _call_on_tensors(node, grads)
                    # one gradient is passed as it is: unpacking the list (*grads) would copy it to a tuple,
                    # which costs a node of a chain 7%
                    elif node._saved is None:  # nothing saved, so nothing for saved_tensors to hand out as arrays
                        try:
                            results = formula(node, grads[0]) if len(grads) == 1 else formula(node, *grads)
                        except (FloatingPointError, RuntimeWarning) as objection:
                            results = _quietly_again(objection, formula, node, *grads)
                    else:  # its saved_tensors come as arrays
                        outer = _arrays_for[0]
                        _arrays_for[0] = node
                        try:
                            results = formula(node, grads[0]) if len(grads) == 1 else formula(node, *grads)
                        except (FloatingPointError, RuntimeWarning) as objection:
                            results = _quietly_again(objection, formula, node, *grads)
                        finally:
                            _arrays_for[0] = outer
                    if type(results) is not tuple:
                        results = (results,)
                else:
                    results = self._execute(node, grads)
                edges = node._next
                grads = None  # dropped before delivery: a view the node returns may then own its memory alone
                if len(results) != len(edges):
                    results = _trim(node, results, len(edges))
                if not retain_graph and node._saved is not None:
                    node._saved = _FREED  # the saved tensors go; a second backward through here raises
            for edge, grad in zip(edges, results):
                if not edge:
                    if grad is not None:
                        _unexpected_gradient(node, _position(edges, results, edge, grad), edge, grad, arrays)
                    continue
                if grad is not None:
                    if arrays:
                        if type(grad) is not _ndarray:  # a formula on tensors returns tensors
                            grad = grad._data if type(grad) is Tensor else _array_result(
                                node, _position(edges, results, edge, grad), edge, grad)
                            if type(grad) is not _ndarray:  # a sparse gradient: carried as the tensor it is
                                _check_sparse_gradient(edge, grad)
                                if not edge[0]._is_node:
                                    self._deliver(edge[0], 0, grad)
                                    continue
                                grad = _for_node(edge[0], grad)
                                if type(grad) is Tensor:  # made dense for a dense op's formula
                                    grad = grad._data
                            elif grad.shape != edge[2] or (grad.dtype is not edge[3] and grad.dtype != edge[3]):
                                grad = _conform_array(node, edges, results, edge, grad)
                        elif grad.shape != edge[2] or (grad.dtype is not edge[3] and grad.dtype != edge[3]):
                            grad = _conform_array(node, edges, results, edge, grad)
                    else:
                        if not isinstance(grad, Tensor):
                            _unexpected_gradient(node, _position(edges, results, edge, grad), edge, grad)
                        data = grad._data
                        if data.shape != edge[2] or (data.dtype is not edge[3] and data.dtype != edge[3]):
                            grad = _conform(node, _position(edges, results, edge, grad), grad, edge[2], edge[3])
                        if type(grad) is not Tensor and grad.layout is not _strided and edge[0]._is_node:
                            grad = _for_node(edge[0], grad)
                target = edge[0]
                if not target._is_node:
                    if grad is not None:
                        if captures is None and target._hooks is None and target._post_hooks is None:
                            # the usual leaf: no hooks, nothing captured. Once its .grad has a version counter, a
                            # gradient of its shape and dtype is added in place here: a short backward spends much
                            # of its time on this, and a call to _accumulate (which does the rest) is 2% of it
                            current = target._grad
                            if arrays and current is None:
                                if _getrefcount(grad) in _ONLY_WE_HOLD_IT and _unshared(grad.base) and \
                                        _layout_kept(grad, target._data) and target._grad_dtype is SAME_DTYPE:
                                    # a gradient the formula made for this leaf alone (only this loop holds it,
                                    # or a view, as t()'s gradient, of memory nothing else sees):
                                    # .grad takes it as it is, as torch's AccumulateGrad does, rather than a copy,
                                    # which on large tensors costs as much as the formula
                                    target._grad = _wrap(grad)
                                    continue
                            elif arrays and current._vc is not None:
                                data = current._data
                                if data.shape == grad.shape and data.dtype is grad.dtype:
                                    try:
                                        _add(data, grad, data)
                                    except ValueError:  # read-only memory: an expanded tensor assigned to .grad
                                        _unwritable_grad(target)
                                    except (FloatingPointError, RuntimeWarning) as objection:
                                        written_despite(objection)
                                    current._vc[0] += 1  # an in-place change of .grad, as torch counts it
                                    continue
                            self._accumulate(target, grad)
                        else:
                            self._deliver(target, 0, grad)
                    elif target._hooks is not None or target._post_hooks:
                        self._count_in(target)  # an edge that brought nothing: the leaf waits for one less
                    continue
                if captures is not None and target not in self.visit:
                    continue
                buffer = buffers.get(target)
                if buffer is None:  # its first gradient (even None): it runs once every newer node has
                    if follow is None and not ready:
                        follow = target
                    else:  # more than one waits: the heap orders them
                        _heappush(ready, (target._seq, target))
                        if follow is not None:
                            _heappush(ready, (follow._seq, follow))
                            follow = None
                    if target._n_outputs == 1:
                        buffers[target] = [grad]
                        continue
                    buffer = buffers[target] = [None] * target._n_outputs
                if grad is not None:
                    current = buffer[edge[1]]
                    buffer[edge[1]] = grad if current is None else self._plus(current, grad)
            if follow is not None:
                node = follow
            elif ready:
                node = _heappop(ready)[1]
            else:
                return
            grads = buffers.pop(node)

    # ---- values: arrays without create_graph, tensors with it

    def _tensor(self, value) -> Tensor:
        return _wrap(value) if self.arrays and type(value) is _ndarray else value  # (a sparse one is a tensor)

    def _value(self, tensor: Tensor):
        return tensor._data if self.arrays and tensor.layout is _strided else tensor

    def _plus(self, a, b):
        """The sum of two gradients (as an array: NumPy's sum of two 0-d arrays is a scalar)."""
        if not self.arrays:
            return _tensor_sum(a, b)
        if type(a) is _ndarray and type(b) is _ndarray:
            try:
                return np.asarray(np.add(a, b))
            except (FloatingPointError, RuntimeWarning) as objection:  # inf - inf under a user's strict settings
                return np.asarray(_quietly_again(objection, np.add, a, b))
        total = _sparse_sum(a, b)
        return total if total.layout is not _strided else total._data  # this pass carries dense gradients as arrays

    def _materialize(self, node, grads: list, tensors: bool = False) -> bool:
        """Zeros for the outputs that received no gradient (unless the Function set materialize_grads off).

        A built-in node that received no gradient at all is not run: True. As torch's formulas, it then gives
        its inputs none either (a user's Function gets zeros, as the seeds describe).
        """
        if node._builtin and _no_gradient(grads):
            return True
        for i in range(len(grads)):
            if grads[i] is None and node._out_meta[i] is not None:
                zeros = np.zeros(*node._out_meta[i])
                grads[i] = _wrap(zeros) if tensors or not self.arrays else zeros
        return False

    # ---- delivering gradients

    def _add_to_buffer(self, node, output_nr: int, value) -> None:
        buffer = self.buffers.get(node)
        if buffer is None:
            buffer = self.buffers[node] = [None] * node._n_outputs
        current = buffer[output_nr]
        buffer[output_nr] = value if current is None else self._plus(current, value)

    def _deliver(self, target, output_nr: int, value) -> None:
        """A root gradient, or one reaching a leaf that has hooks or whose gradient is captured."""
        if target._is_node:
            if value is not None:
                self._add_to_buffer(target, output_nr, value)
            return
        if value is None:
            return
        if self.captures is not None and (id(target), 0) not in self.captures:
            return  # as torch: a leaf that was not asked for gets nothing, and its hooks do not run
        if target._hooks is not None or target._post_hooks:  # hooks see the sum over all paths, once: hold it
            if self.held is None:
                self.held = {}
            previous = self.held.get(id(target))
            self.held[id(target)] = (target, value if previous is None else self._plus(previous[1], value))
            self._count_in(target)
            return
        self._to_leaf(target, value)

    def _count_in(self, leaf: Tensor) -> None:
        """One of the edges into a hooked ``leaf`` has been followed (with a gradient or without). After its last,
        the leaf's hooks run on the total and it accumulates at once, as torch's AccumulateGrad runs as soon as
        every node that leads to it has: a hook sees the total no later, and in the same order among the
        nodes' hooks, as in torch. (Gradients captured for autograd.grad wait for the end of the pass.)"""
        if self.captures is not None:
            return
        waiting = self.waiting
        if waiting is None:
            roots = self.roots if self.roots is not None else [self.root]
            waiting = self.waiting = _edges_into_hooked_leaves(roots)
        left = waiting[id(leaf)] = waiting.get(id(leaf), 1) - 1
        if left <= 0 and self.held is not None and id(leaf) in self.held:
            self._release(*self.held.pop(id(leaf)))

    def _to_leaf(self, target: Tensor, value) -> None:
        """The total gradient of a leaf (hooks run): into ``found`` (autograd.grad) or ``.grad``."""
        if self.captures is not None:
            positions = self.captures.get((id(target), 0))
            if not positions:
                return
            if not self.accumulate:
                found = self.found
                for i in positions:
                    found[i] = value if found[i] is None else self._plus(found[i], value)
                return
        self._accumulate(target, value)
        if target._post_hooks:
            for hook in list(target._post_hooks.values()):
                returned = hook(target)
                if returned is not None and returned is not target:  # as torch: handing back the tensor is fine
                    _post_hook_returned(hook, returned)
        accumulator = target._accumulator
        if accumulator is not None and accumulator._hooks:
            for hook in list(accumulator._hooks.values()):
                hook((), (self._tensor(value),))  # as torch: what it returns is ignored, a leaf has no inputs

    def _accumulate(self, leaf: Tensor, value) -> None:
        """Add a gradient into ``leaf.grad``; the stored gradient is owned by the leaf, never shared.

        Its post-accumulate hooks are run by the caller (a leaf that has some reaches here through _to_leaf).
        """
        current = leaf._grad
        if leaf._grad_dtype is not SAME_DTYPE and leaf._grad_dtype is not None:
            value = _in_grad_dtype(value, leaf._grad_dtype)
        if not self.arrays:  # create_graph: keep the gradient's own graph (copied: it may be the caller's tensor)
            leaf._grad = _tensor_in_layout_of(leaf._data, value) if current is None else self._plus(current, value)
        elif type(value) is not _ndarray:  # a sparse gradient: .grad is sparse too (or dense, if it already was)
            leaf._grad = value if current is None else _sparse_sum(current, value)
        elif current is None:
            leaf._grad = _wrap(_copy_in_layout_of(leaf._data, value))
        elif current.layout is not _strided:  # a dense gradient onto a sparse .grad: the sum is dense
            leaf._grad = _sparse_sum(current, value)
        else:
            data = current._data
            if data.shape == value.shape:  # as torch: without create_graph, in place (even if .grad requires grad)
                try:
                    _add(data, value, out=data, casting="unsafe")
                except ValueError:  # read-only memory: an expanded tensor assigned to .grad
                    _unwritable_grad(leaf)
                except (FloatingPointError, RuntimeWarning) as objection:
                    written_despite(objection)
                version_counter(current)[0] += 1  # an in-place change of .grad, as torch counts it
            else:
                leaf._grad = _tensor_sum(current, _wrap(value))

    def _ends_at(self, node, grads: list) -> bool:
        """Capture the gradients that reach ``node`` if asked for; True if nothing beyond it is needed.

        As torch: a node that will run captures what reaches it before its tensors' hooks (they run with
        it); one that will not runs those hooks here, and what they return is captured.
        """
        if node in self.needed:
            self._capture_node_inputs(node, grads)
            return False
        if node._tensor_hooks:
            grads = [None if g is None else self._value(_run_tensor_hooks(node, nr, self._tensor(g)))
                     for nr, g in enumerate(grads)]
        self._capture_node_inputs(node, grads)
        return True

    def _capture_node_inputs(self, node, grads: list) -> None:
        for nr in range(node._n_outputs):
            positions = self.captures.get((id(node), nr))
            if positions:
                for i in positions:
                    self.found[i] = grads[nr]  # as torch: what reaches the tensor, before its hooks

    # ---- the general way to run a node

    def _execute(self, node, grads: list) -> tuple:
        """Run one node's backward with hooks or anomaly checks, on tensors (the formula is the same)."""
        if not _anomaly.enabled:
            return self._execute_node(node, grads)
        try:
            return self._execute_node(node, grads)
        except Exception as error:
            _report_anomaly(error, node)
            raise

    def _execute_node(self, node, grads: list) -> tuple:
        grads = [None if g is None else self._tensor(g) for g in grads]
        if node._tensor_hooks is not None or node._prehooks is not None:
            grads = _run_pre_hooks(node, grads)
        if node.materialize_grads and self._materialize(node, grads, tensors=True):
            result = [None] * len(node._next)
        else:
            result = _validate(node, _call(node, grads))
        if node._hooks:
            result = _run_node_hooks(node, result, grads)
        if _anomaly.enabled and _anomaly.check_nan:
            _check_nan(node, result)
        return tuple([None if g is None else self._value(g) for g in result])


def _no_gradient(grads: list) -> bool:
    for g in grads:  # a loop: arrays are not compared (list.count would), and no generator is made
        if g is not None:
            return False
    return True


def _unwritable_grad(leaf: Tensor) -> None:
    raise RuntimeError(
        "unsupported operation: more than one element of the written-to tensor refers to a single memory location "
        f"(the .grad of a tensor of shape {list(leaf._data.shape)} is an expanded tensor, so backward cannot "
        "accumulate into it). Please clone() the tensor before performing the operation: t.grad = g.clone()"
    )


def _node_of(tensor: Tensor):
    """A tensor's grad_fn; a view whose base changed in place since gets its fresh one first (as ``.grad_fn``)."""
    if tensor._base is not None and tensor._vc[0] != tensor._view_version:
        tensor._sync_view()
    return tensor._grad_fn


def _tensor_sum(a: Tensor, b: Tensor) -> Tensor:
    """Two gradients summed with ember's add, unseen by the protocol (the engine's own arithmetic)."""
    from ember._ops.arithmetic import add  # imported late: the ops import autograd

    if a.layout is not _strided or b.layout is not _strided:
        return _sparse_sum(a, b)
    return add.__wrapped__(a, b)


def _in_grad_dtype(value, wanted):
    """A gradient (an array, or a tensor under create_graph) in the dtype its leaf's grad_dtype asks for."""
    if type(value) is _ndarray:
        return value if value.dtype == wanted.np else _dtype.cast(value, wanted.np)
    return value if value.dtype == wanted else value.to(wanted)


def _sparse_sum(a, b) -> Tensor:
    """Two gradients of which one at least is sparse (arrays are wrapped): sparse if both are, else dense."""
    from ember._ops.sparse_math import gradient_sum  # imported late: the ops import autograd

    return gradient_sum(_wrap(a) if type(a) is _ndarray else a, _wrap(b) if type(b) is _ndarray else b)


def _for_node(node, grad):
    """A sparse gradient as ``node`` takes it: as it is by the sparse ops (whose outputs are sparse), dense by
    the others, whose formulas are written for dense tensors (ember's dense ops take no sparse operand)."""
    if getattr(node._forward_cls, "sparse_outputs", False):
        return grad
    from ember._ops.sparse import to_dense  # imported late: the ops import autograd

    return to_dense(grad)


def _check_sparse_gradient(edge: tuple, grad) -> None:
    if tuple(grad._data.shape) != tuple(edge[2]):
        raise RuntimeError(f"Function {getattr(edge[0], 'name', lambda: 'a leaf')()} returned a sparse gradient of "
                           f"shape {list(grad._data.shape)} for an input of shape {list(edge[2])}")


def _position(edges: tuple, results: tuple, edge, grad) -> int:
    """Which input a gradient is for (the hot loop does not count; error messages need the number).

    A real edge is a tuple of its own, found by identity; None and False are shared, so there the gradient tells.
    """
    for i, (e, g) in enumerate(zip(edges, results)):
        if e is edge and (edge or g is grad):
            return i
    raise AssertionError("a gradient that is not among the results")


def _quietly_again(objection: Exception, step, *args):
    """``step(*args)``, a formula on arrays or a step of the pass's own that NumPy objected to under the user's
    strict settings, run again with NumPy's objections off (as ``Function.apply`` does for a forward: see
    ``_ops/_quiet``). Formulas take what they are given as it is, so running one again gives what the first run
    would have."""
    if not numpy_objection(objection):
        raise objection
    return quietly(IGNORE_ALL, step, *args)


def _call(node, grads: list):
    """Run a node's formula on tensors; as torch's C++ formulas, ember's own are invisible to the protocol."""
    if not node._builtin:
        return node._formula(node, *grads)
    protocol_on = _protocol.all_enabled
    _protocol.all_enabled = False
    try:
        return node._formula(node, *grads)
    finally:
        _protocol.all_enabled = protocol_on


def _call_on_tensors(node, grads: list) -> tuple:
    """A formula written for tensors, in a pass that carries arrays: what goes in is wrapped.

    What comes out stays tensors (the walk takes their arrays), but anything else is an error here.
    """
    if len(grads) == 1:  # the usual single output: no comprehension
        g = grads[0]
        tensors = (None if g is None else _wrap(g),)
    else:
        tensors = [None if g is None else _wrap(g) for g in grads]
    protocol_on = _protocol.all_enabled  # _call's switch, spelled out: ember's own formulas are unseen by it
    _protocol.all_enabled = protocol_on and not node._builtin
    try:  # one gradient passed as it is: f(*tensors) takes Python 3.11's slower call path
        results = node._formula(node, tensors[0]) if len(tensors) == 1 else node._formula(node, *tensors)
    finally:
        _protocol.all_enabled = protocol_on
    if type(results) is not tuple:
        results = (results,)
    for r in results:
        if r is not None and not isinstance(r, Tensor):
            _not_a_tensor(node, results, r)
    return results


def _not_a_tensor(node, results: tuple, value) -> None:
    """A formula for tensors returned something else: an error, unless it lies past the inputs (_trim says so)."""
    edges = node._next
    i = next(i for i, r in enumerate(results) if r is value)
    if i < len(edges):
        _unexpected_gradient(node, i, edges[i], value)


def _array_result(node, i: int, edge, grad) -> np.ndarray:
    """What a ``backward_on_arrays`` formula returned, as an array: NumPy scalars (0-d results) and tensors too."""
    if isinstance(grad, (np.ndarray, np.generic)):
        return np.asarray(grad)
    if isinstance(grad, Tensor):
        return grad._data if grad.layout is _strided else grad  # a sparse gradient stays a tensor
    return _unexpected_gradient(node, i, edge, grad, True)


def _capture_points(inputs: tuple) -> dict:
    """Map (node or leaf, output_nr) to the positions of ``inputs`` whose gradient flows there."""
    points: dict = {}
    for i, t in enumerate(inputs):
        if type(t) is not Tensor and not isinstance(t, Tensor):  # a GradientEdge: (node, output_nr)
            node, output_nr = t
            leaf = getattr(node, "variable", None)  # an AccumulateGrad node stands for its leaf
            key = (id(leaf), 0) if leaf is not None else (id(node), output_nr)
        else:
            fn = _node_of(t)
            key = (id(fn), t._output_nr) if fn is not None else (id(t), 0)
        points.setdefault(key, []).append(i)
    return points


def _needed_nodes(roots: list, captures: dict, accumulate: bool) -> tuple:
    """The nodes to run (a capture point lies beyond them) and those to visit (these plus the capture points).

    As torch, ``backward(inputs=[h])`` also runs the node of a non-leaf ``h`` (its hooks, retain_grad's
    among them, fill ``h.grad``; its saved tensors are freed), though nothing beyond it is delivered.
    """
    order, children = _postorder(roots)
    targets = {key[0] for key in captures}
    needed: set = set()
    for node in order:  # children come before parents in postorder
        if any(id(c) in targets or c in needed for c in children[node]):
            needed.add(node)
    points = {node for node in order if id(node) in targets}
    if accumulate:
        needed |= points
    return needed, needed | points


def _postorder(roots: list) -> tuple:
    children: dict = {}
    order: list = []
    stack = [(n, False) for n in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in children:
            continue
        kids = [e[0] for e in node._next if e]
        children[node] = kids
        stack.append((node, True))
        stack.extend((k, False) for k in kids if k._is_node and k not in children)
    return order, children


def _run_leaf_hooks(leaf: Tensor, grad: Tensor) -> Tensor:
    hooks = leaf._hooks
    if hooks:
        for hook in list(hooks.values()):
            new = hook(grad)
            if new is not None:
                grad = _hook_result(hook, grad, new)
    return grad


def _hook_result(hook, grad: Tensor, new) -> Tensor:
    """What a tensor hook returned, checked: a gradient must keep its shape."""
    if not isinstance(new, Tensor):
        raise TypeError(
            f"hook '{getattr(hook, '__name__', hook)}' returned a {type(new).__name__}; "
            "a tensor hook must return a Tensor or None"
        )
    if new._data.shape != grad._data.shape:
        raise RuntimeError(
            f"hook '{getattr(hook, '__name__', hook)}' has changed the size of value: the gradient is "
            f"{list(grad._data.shape)} but the hook returned {list(new._data.shape)}"
        )
    if new._data.dtype != grad._data.dtype:
        raise RuntimeError(
            f"hook '{getattr(hook, '__name__', hook)}' has changed the type of value (was {grad.dtype} got "
            f"{new.dtype}); return a gradient of the same dtype, e.g. new.to(grad.dtype)"
        )
    return new


def _layout_kept(grad: np.ndarray, leaf: np.ndarray) -> bool:
    """Whether a gradient nothing else holds can be a leaf's .grad as it is: both row-major, or any dense layout
    while ``enforce_grad_layout_policy(False)`` relaxes the rule that .grad is laid out as its leaf."""
    if grad.flags.c_contiguous and leaf.flags.c_contiguous:
        return True
    return not _settings.layout_enforced and _dense(grad)


def _unshared(base) -> bool:
    """Whether a gradient with this ``base`` owns its memory: it has none, or only the gradient holds it
    (the references counted are the gradient's ``.base``, this call's argument and getrefcount's own)."""
    return base is None or (type(base) is _ndarray and base.base is None and _getrefcount(base) == 3)


def _copy_in_layout_of(like: np.ndarray, data: np.ndarray) -> np.ndarray:
    """A copy of ``data`` laid out in memory as ``like`` is, if that is dense; else C-contiguous.

    As torch: a leaf's .grad has the leaf's strides (a transposed parameter gets a transposed
    gradient), unless the leaf has gaps or overlaps (an expanded tensor), when it is contiguous.
    """
    if like.flags.c_contiguous or not _dense(like):
        return np.array(data, order="C", copy=True)
    out = np.empty_like(like, dtype=data.dtype)
    out[...] = data
    return out


def _tensor_in_layout_of(like: np.ndarray, value: Tensor) -> Tensor:
    """create_graph's first gradient of a leaf: ``value`` copied into the layout _copy_in_layout_of gives, as
    torch lays out .grad in either mode; the copy is recorded (copy_) where ``value`` has a graph of its own."""
    if value.layout is not _strided:
        return value.clone()
    if not value._requires_grad:
        return _wrap(_copy_in_layout_of(like, value._data))
    dense_layout = not like.flags.c_contiguous and _dense(like)
    target = np.empty_like(like, dtype=value._data.dtype) if dense_layout else np.empty(like.shape, value._data.dtype)
    return _wrap(target).copy_(value)


def _dense(array: np.ndarray) -> bool:
    """Whether the elements fill their span of memory exactly: no gaps, no overlaps."""
    span = array.itemsize + sum((n - 1) * abs(s) for n, s in zip(array.shape, array.strides))
    return array.size > 0 and span == array.size * array.itemsize


def _run_tensor_hooks(node, output_nr: int, grad):
    """The hooks of a non-leaf tensor; retain_grad's come last, so .grad holds the final gradient (as torch)."""
    hooks = node._tensor_hooks.get(output_nr)
    if hooks and grad is not None:
        retains = []
        for hook in list(hooks.values()):
            if type(hook) is _RetainGrad:
                retains.append(hook)
                continue
            new = hook(grad)
            if new is not None:
                grad = _hook_result(hook, grad, new)
        for hook in retains:
            hook(grad)
    return grad


def _run_pre_hooks(node, grads: list) -> list:
    if node._tensor_hooks:
        grads = [_run_tensor_hooks(node, nr, g) for nr, g in enumerate(grads)]
    if node._prehooks:
        for hook in list(node._prehooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = _node_hook_result(hook, new, grads)
    return grads


def _post_hook_returned(hook, returned) -> None:
    """A post accumulate grad hook returned something: as torch, a TypeError unless it is a tensor."""
    message = (f"post accumulate grad hook '{getattr(hook, '__name__', hook)}' returned "
               f"'{type(returned).__name__}'; Tensor post accumulate grad hooks should return None")
    if not isinstance(returned, Tensor):
        raise TypeError(f"expected Variable, but {message}")
    raise RuntimeError(message)


def _run_node_hooks(node, result, grads: list) -> list:
    """Run a grad_fn's hooks. As torch's, they see (and may replace) the gradients of the inputs that its
    ``next_functions`` lists, not of the numbers and options its forward also took."""
    listed = node._listed_positions()
    inputs = [result[i] if i < len(result) else None for i in listed]
    for hook in list(node._hooks.values()):
        new = hook(tuple(inputs), tuple(grads))
        if new is not None:
            inputs = _node_hook_result(hook, new, inputs)
    result = list(result) + [None] * (max(listed, default=-1) + 1 - len(result))
    for i, g in zip(listed, inputs):
        result[i] = g
    return result


def _node_hook_result(hook, new, old: list) -> list:
    """What a grad_fn hook or prehook returned, checked as torch does: a tuple like ``old`` (tensors or Nones)."""
    name = getattr(hook, "__name__", hook)
    if type(new) is not tuple:
        raise TypeError(
            f"expected tuple, but hook '{name}' returned '{type(new).__name__}'; "
            "a grad_fn hook must return a tuple (one entry per gradient) or None"
        )
    if len(new) != len(old):
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(new)}, but expected {len(old)})"
        )
    for g, before in zip(new, old):
        if g is None:
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"expected Variable, but hook '{name}' returned '{type(g).__name__}' in its tuple")
        if before is not None:
            _hook_result(hook, before, g)
    return list(new)


def _validate(node, result) -> list:
    """Check the gradients a backward returned against its forward inputs; fix what torch fixes.

    The common case (a tensor of the input's shape and dtype) costs two comparisons.
    """
    if type(result) is not tuple:
        result = (result,)
    edges = node._next
    if len(result) != len(edges):
        result = _trim(node, result, len(edges))
    checked = []
    for i, (edge, grad) in enumerate(zip(edges, result)):
        if grad is not None:
            if edge and isinstance(grad, Tensor):
                data = grad._data
                if data.shape != edge[2] or data.dtype != edge[3]:
                    grad = _conform(node, i, grad, edge[2], edge[3])
            else:
                grad = _unexpected_gradient(node, i, edge, grad)
        checked.append(grad)
    return checked


def _trim(node, result: tuple, n: int) -> tuple:
    """Extra trailing Nones are allowed (for optional arguments); anything else is an error."""
    if len(result) < n or any(g is not None for g in result[n:]):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected {n}, got {len(result)})"
        )
    return result[:n]


def _unexpected_gradient(node, i: int, edge, grad, arrays: bool = False):
    """A gradient where none can go, or one that is not a tensor (nor, for a formula on arrays, an array)."""
    if edge is None:
        raise RuntimeError(
            f"function {node.name()} returned a gradient different than None at position {i + 1}, "
            "but the corresponding forward input was not a Variable"
        )
    allowed = (Tensor, np.ndarray, np.generic) if arrays else Tensor
    if not isinstance(grad, allowed):
        raise RuntimeError(  # as torch: "expected Variable or None"
            f"function {node.name()} returned a {type(grad).__name__} as the gradient at position {i + 1}; "
            "expected a Tensor or None"
        )
    return None  # the input does not require grad: what was returned is ignored


def _conform(node, index: int, grad: Tensor, shape: tuple, dtype) -> Tensor:
    """A formula's gradient brought to its input's shape (summed down from a broadcast one) and dtype."""
    if grad._data.shape != shape:
        _check_expandable(node, index, grad._data.shape, shape)
        grad = grad.sum_to_size(shape)
    if grad._data.dtype != dtype:
        if grad._data.dtype.kind == "c" and dtype.kind != "c":
            _check_real_gradient(node, index)
            grad = grad.real  # a real input's gradient is the real part of a complex one
        grad = grad.to(from_numpy_dtype(dtype))
    return grad


def _check_real_gradient(node, index: int) -> None:
    """ember's formulas give a real input the real part of a complex gradient; a user's backward must do that
    itself, as in torch, which refuses a complex gradient for a real input."""
    forward_cls = getattr(node, "_forward_cls", None)  # (None for nodes that are no Function's)
    if forward_cls is not None and forward_cls._user:
        raise RuntimeError(
            f"Function {node.name()} returned a complex gradient at index {index} for a real input: the gradient "
            "of a real input must be real (return grad.real if its real part is meant)"
        )


def _conform_array(node, edges: tuple, results: tuple, edge: tuple, grad: np.ndarray) -> np.ndarray:
    """_conform for the gradients of a pass without create_graph: NumPy does it, no op is needed.

    The position of the gradient among ``results`` is found only for an error message.
    """
    try:
        return _conformed_array(node, edges, results, edge, grad)
    except (FloatingPointError, RuntimeWarning) as objection:  # (a sum of inf and -inf, under strict settings)
        return _quietly_again(objection, _conformed_array, node, edges, results, edge, grad)


def _conformed_array(node, edges: tuple, results: tuple, edge: tuple, grad: np.ndarray) -> np.ndarray:
    shape = edge[2]
    if grad.shape != shape:
        if grad.shape[1:] == shape:  # broadcast along one new leading dim (a bias's gradient): one reduction
            grad = column_sums(grad)
        else:
            axes = _SUMMED_AXES.get((grad.shape, shape))
            if axes is None:
                axes = _summed_axes_checked(node, edges, results, edge, grad)
            # (as sum_to: the axes are found once; long ones summed by blocks, as accurate as torch's)
            grad = _cascade.add_reduce(grad, axes, None, True).reshape(shape)
    if grad.dtype == edge[3]:
        return grad
    if grad.dtype.kind == "c" and edge[3].kind != "c":
        _check_real_gradient(node, _position(edges, results, edge, grad))
        grad = grad.real
    return grad.astype(edge[3])


def column_sums(grad: np.ndarray) -> np.ndarray:
    """``grad`` summed over its leading dim. A float matrix's sum down the columns is a product with ones
    (BLAS's matrix-vector product: a linear layer's bias gradient at a third of NumPy's time, or less) up to a
    batch of ``_ROWS_BY_BLAS``: the product, like NumPy's sum along that dim, adds the rows in turn, so longer
    columns are summed by blocks (as torch's, whose rounding error grows more slowly)."""
    if grad.ndim == 2 and grad.dtype in _BLAS_FLOATS and grad.flags.c_contiguous and grad.shape[0] <= _ROWS_BY_BLAS:
        return _ones(grad.shape[0], grad.dtype).dot(grad)
    return _cascade.add_reduce(grad, (0,))


def _ones(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only vector of ``n`` ones, one per length and dtype (the products reuse them)."""
    ones = _ONES.get((n, dtype))
    if ones is None:
        if len(_ONES) >= 64:  # a program uses few batch sizes: a bounded table, emptied when full
            _ONES.clear()
        ones = _ONES[(n, dtype)] = np.ones(n, dtype)
        ones.flags.writeable = False
    return ones


_ONES: dict = {}


_ROWS_BY_BLAS = 1024


_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_SUMMED_AXES: dict = {}  # (a gradient's shape, its input's shape) -> the axes summed (kept) from one to the other


def _summed_axes_checked(node, edges: tuple, results: tuple, edge: tuple, grad: np.ndarray) -> tuple:
    """The axes along which a broadcast gradient is summed to its input's shape, once the shapes are checked;
    remembered, as a program broadcasts between few pairs of shapes (a bounded table, emptied when full)."""
    shape = edge[2]
    _check_expandable(node, _position(edges, results, edge, grad), grad.shape, shape)
    if len(_SUMMED_AXES) >= 1024:
        _SUMMED_AXES.clear()
    axes = _SUMMED_AXES[(grad.shape, shape)] = _summed_axes(grad.shape, shape)
    return axes


def _check_expandable(node, index: int, got: tuple, shape: tuple) -> None:
    if not expandable(shape, got):
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {index} - got {list(got)} "
            f"but expected shape compatible with {list(shape)}"
        )


def _check_nan(node, result: list) -> None:
    for i, g in enumerate(result):
        if g is not None and _dtype.kind(g._data.dtype) == "f" and np.isnan(g._data).any():
            message = f"Function '{node.name()}' returned nan values in its {i}th output."
            if node._trace:
                message += f"\nThe forward call that created it:\n{node._trace}"
            raise RuntimeError(message)


def _report_anomaly(error: Exception, node) -> None:
    """As torch in anomaly mode: warn which node failed and where its forward ran; ember also notes it on the error."""
    if node._trace is not None:
        note = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{node._trace}"
        if hasattr(error, "add_note"):  # Python 3.11+
            error.add_note(note)
    else:
        note = (f"Error detected in {node.name()}. No forward pass information available. Enable detect anomaly "
                "during forward pass for more information.")
    warnings.warn(note, UserWarning, stacklevel=2)
