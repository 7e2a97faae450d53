"""The backward pass: walk the graph from the outputs, run each node once all its gradients are in.

The walk is iterative (no recursion limit), counts each node's consumers
first, then runs nodes in dependency order. Gradients flowing into leaves are
accumulated into ``.grad`` (``backward``) or returned (``autograd.grad``).

>>> import ember
>>> x = ember.tensor([1., 2.], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4.])
"""
from __future__ import annotations

import numpy as np

from ember._dtype import from_numpy_dtype
from ember._tensor import Tensor, _RetainGrad
from ember import overrides
from ember.autograd import anomaly_mode
from ember.autograd.grad_mode import state as _grad

_anomaly = anomaly_mode.state
_protocol = overrides._state
_HELD = "held leaf gradients"  # the key in a walk's buffers under which gradients of leaves with hooks wait


def run_backward(roots: list, retain_graph: bool, create_graph: bool, inputs: tuple | None = None,
                 accumulate: bool = True) -> list | None:
    """Backpropagate ``roots`` (pairs of tensor and gradient).

    With ``accumulate`` the leaf gradients go into ``.grad`` (only of ``inputs``
    if given); without, the gradients of ``inputs`` are returned in order.
    """
    captures = _capture_points(inputs) if inputs is not None else None
    found = [None] * len(inputs) if inputs is not None else None
    nodes = []
    leaf_roots = []
    buffers: dict = {}
    for tensor, grad in roots:
        fn = tensor._grad_fn
        if fn is None:
            leaf_roots.append((tensor, grad))
        else:
            if fn not in buffers:
                nodes.append(fn)
            _add_to_buffer(buffers, fn, tensor._output_nr, grad)
    needed, visit = _needed_nodes(nodes, captures) if captures is not None else (None, None)
    deps = _count_dependencies(nodes, visit)
    prev = _grad.enabled
    _grad.enabled = create_graph
    try:
        for leaf, grad in leaf_roots:
            _deliver(leaf, 0, grad, buffers, captures, found, accumulate)
        ready = [n for n in nodes if n not in deps]
        _walk(ready, buffers, deps, needed, visit, captures, found, accumulate, retain_graph)
        held = buffers.pop(_HELD, None)
        if held:
            _release_held(held, captures, found, accumulate)
    finally:
        _grad.enabled = prev
    return found


def _capture_points(inputs: tuple) -> dict:
    """Map (node or leaf, output_nr) to the positions of ``inputs`` whose gradient flows there."""
    points: dict = {}
    for i, t in enumerate(inputs):
        key = (id(t._grad_fn), t._output_nr) if t._grad_fn is not None else (id(t), 0)
        points.setdefault(key, []).append(i)
    return points


def _needed_nodes(roots: list, captures: dict) -> tuple:
    """The nodes to run (a capture point lies beyond them) and those to visit (these plus the capture points)."""
    order, children = _postorder(roots)
    targets = {key[0] for key in captures}
    needed: set = set()
    for node in order:  # children come before parents in postorder
        if any(id(c) in targets or c in needed for c in children[node]):
            needed.add(node)
    visit = needed | {node for node in order if id(node) in targets}
    return needed, visit


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


def _count_dependencies(roots: list, visit: set | None) -> dict:
    """How many edges from visited nodes point at each node."""
    deps: dict = {}
    seen = set(roots)
    stack = list(seen)
    while stack:
        node = stack.pop()
        for edge in node._next:
            if not edge:
                continue
            target = edge[0]
            if not target._is_node or (visit is not None and target not in visit):
                continue
            deps[target] = deps.get(target, 0) + 1
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return deps


def _walk(ready, buffers, deps, needed, visit, captures, found, accumulate, retain_graph) -> None:
    """Run nodes as they become ready; deliver each gradient they return along its edge.

    This loop is the backward pass's hot path: the common case (no hooks, no
    anomaly mode, gradients of the right shape) stays inline.
    """
    pop, push = ready.pop, ready.append
    while ready:
        node = pop()
        grads = buffers.pop(node, None)
        if grads is None:
            grads = [None] * node._n_outputs
        if captures is not None:
            _capture_node_inputs(node, grads, captures, found)
            if node not in needed:
                continue
        if node._tensor_hooks is None and node._prehooks is None and node._hooks is None and not _anomaly.enabled:
            if node.materialize_grads and (grads[0] is None or len(grads) > 1):
                _materialize(node, grads)
            if node._builtin:  # as torch's C++ formulas, ember's own are invisible to the protocol
                protocol_on = _protocol.all_enabled
                _protocol.all_enabled = False
                try:
                    results = node._call_backward(grads)
                finally:
                    _protocol.all_enabled = protocol_on
            else:
                results = node._call_backward(grads)
            if type(results) is not tuple:
                results = (results,)
        else:
            results = _execute(node, grads)
        edges = node._next
        if len(results) != len(edges):
            results = _trim(node, results, len(edges))
        if not retain_graph and node._saved is not None:
            node._release()
        for i, edge in enumerate(edges):
            grad = results[i]
            if not edge:
                if grad is not None:
                    _unexpected_gradient(node, i, edge, grad)
                continue
            if grad is not None:
                if not isinstance(grad, Tensor):
                    _unexpected_gradient(node, i, edge, grad)
                data = grad._data
                if data.shape != edge[2] or (data.dtype is not edge[3] and data.dtype != edge[3]):
                    grad = _conform(node, i, grad, edge[2], edge[3])
            target = edge[0]
            if not target._is_node:
                if grad is not None:
                    if captures is None and target._hooks is None and target._post_hooks is None:
                        _accumulate(target, grad)
                    else:
                        _deliver(target, 0, grad, buffers, captures, found, accumulate)
                continue
            if visit is not None and target not in visit:
                continue
            if grad is not None:
                buffer = buffers.get(target)
                if buffer is None:
                    buffer = buffers[target] = [None] * target._n_outputs
                current = buffer[edge[1]]
                buffer[edge[1]] = grad if current is None else _plus(current, grad)
            left = deps[target] - 1
            deps[target] = left
            if not left:
                push(target)


def _plus(a: Tensor, b: Tensor) -> Tensor:
    """Sum two gradients with ember's add itself, unseen by the protocol (the engine's own arithmetic)."""
    from ember._ops.arithmetic import add

    return add.__wrapped__(a, b)


def _materialize(node, grads: list) -> None:
    """Zeros for the outputs that received no gradient (unless the Function set materialize_grads off)."""
    for i in range(len(grads)):
        if grads[i] is None and node._out_meta[i] is not None:
            shape, dtype = node._out_meta[i]
            grads[i] = Tensor._wrap(np.zeros(shape, dtype))


def _add_to_buffer(buffers: dict, node, output_nr: int, grad: Tensor) -> None:
    buffer = buffers.get(node)
    if buffer is None:
        buffer = buffers[node] = [None] * node._n_outputs
    current = buffer[output_nr]
    buffer[output_nr] = grad if current is None else _plus(current, grad)


def _deliver(target, output_nr: int, grad, buffers, captures, found, accumulate) -> None:
    """A root gradient, or one reaching a leaf."""
    if target._is_node:
        if grad is not None:
            _add_to_buffer(buffers, target, output_nr, grad)
        return
    if grad is None:
        return
    if target._hooks or target._post_hooks:  # hooks see the sum over all paths, once (as torch): hold it
        held = buffers.get(_HELD)
        if held is None:
            held = buffers[_HELD] = {}
        previous = held.get(id(target))
        held[id(target)] = (target, grad if previous is None else _plus(previous[1], grad))
        return
    _to_leaf(target, grad, captures, found, accumulate)


def _to_leaf(target: Tensor, grad: Tensor, captures, found, accumulate) -> None:
    """The total gradient of a leaf (hooks run): into ``found`` (autograd.grad) or ``.grad``."""
    if captures is not None:
        positions = captures.get((id(target), 0))
        if not positions:
            return
        if not accumulate:
            for i in positions:
                found[i] = grad if found[i] is None else _plus(found[i], grad)
            return
    _accumulate(target, grad)


def _release_held(held: dict, captures, found, accumulate) -> None:
    """After the walk: run the hooks of leaves on their total gradient, then deliver it."""
    for target, grad in held.values():
        _to_leaf(target, _run_leaf_hooks(target, grad), captures, found, accumulate)


def _capture_node_inputs(node, grads: list, captures: dict, found: list) -> None:
    for nr in range(node._n_outputs):
        positions = captures.get((id(node), nr))
        if positions:
            for i in positions:
                found[i] = grads[nr]  # as torch: what reaches the tensor, before its hooks


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
    return new


def _accumulate(leaf: Tensor, grad: Tensor) -> None:
    """Add ``grad`` into ``leaf.grad``; the stored gradient is owned by the leaf, never shared."""
    current = leaf._grad
    if _grad.enabled:  # create_graph: keep the gradient's own graph (cloned: it may be the caller's tensor)
        leaf._grad = grad.clone() if current is None else _plus(current, grad)
    elif current is None:
        leaf._grad = Tensor._wrap(_copy_in_layout_of(leaf._data, grad._data))
    elif current._requires_grad:
        leaf._grad = _plus(current, grad.detach())
    else:
        data = current._data
        if data.shape == grad._data.shape:
            np.add(data, grad._data, out=data, casting="unsafe")
            current._bump()
        else:
            leaf._grad = _plus(current, grad)
    if leaf._post_hooks:
        for hook in list(leaf._post_hooks.values()):
            if hook(leaf) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


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


def _execute(node, grads: list) -> list:
    """Run one node's backward the general way: hooks, anomaly checks, the user's formula."""
    if node._tensor_hooks is not None or node._prehooks is not None:
        grads = _run_pre_hooks(node, grads)
    if node.materialize_grads:
        _materialize(node, grads)
    protocol_on = _protocol.all_enabled
    if node._builtin:
        _protocol.all_enabled = False
    try:
        result = node._call_backward(grads)
    except Exception as error:
        if node._trace is not None:
            _attach_trace(error, node)
        raise
    finally:
        _protocol.all_enabled = protocol_on
    result = _validate(node, result)
    if node._hooks:
        for hook in list(node._hooks.values()):
            new = hook(tuple(result), tuple(grads))
            if new is not None:
                result = list(new)
    if _anomaly.enabled and _anomaly.check_nan:
        _check_nan(node, result)
    return tuple(result)


def _run_pre_hooks(node, grads: list) -> list:
    if node._tensor_hooks:
        grads = [_run_tensor_hooks(node, nr, g) for nr, g in enumerate(grads)]
    if node._prehooks:
        for hook in list(node._prehooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = list(new)
    return grads


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


def _unexpected_gradient(node, i: int, edge, grad):
    if edge is None:
        raise RuntimeError(
            f"function {node.name()} returned a gradient different than None at position {i + 1}, "
            "but the corresponding forward input was not a Variable"
        )
    if not isinstance(grad, Tensor):
        raise TypeError(
            f"function {node.name()} returned a {type(grad).__name__} as the gradient at position {i + 1}; "
            "expected a Tensor or None"
        )
    return None  # the input does not require grad: what was returned is ignored


def _conform(node, index: int, grad: Tensor, shape: tuple, dtype) -> Tensor:
    data = grad._data
    if data.shape != shape:
        if not _expandable(shape, data.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got {list(data.shape)} "
                f"but expected shape compatible with {list(shape)}"
            )
        grad = grad.sum_to_size(shape)
    if grad._data.dtype != dtype:
        grad = grad.to(from_numpy_dtype(dtype))
    return grad


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (so a gradient of ``target`` can be summed to ``shape``)."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def _check_nan(node, result: list) -> None:
    for i, g in enumerate(result):
        if g is not None and g._data.dtype.kind == "f" and np.isnan(g._data).any():
            message = f"Function '{node.name()}' returned nan values in its {i}th output."
            if node._trace:
                message += f"\nThe forward call that created it:\n{node._trace}"
            raise RuntimeError(message)


def _attach_trace(error: Exception, node) -> None:
    note = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{node._trace}"
    if hasattr(error, "add_note"):
        error.add_note(note)
