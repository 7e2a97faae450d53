"""Gradient transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``, ``hessian``.

The reverse-mode ones run on ember's autograd. Inside ``vmap`` every differentiated
input is given the batch dims of all active levels first (an unbatched one is
expanded), so that the gradient of the batch's outputs with respect to it is one
gradient per sample, which is what each sample's function asks for.

Forward-mode products (``jvp``, ``jacfwd``, ``linearize``) run on
``ember.autograd.forward_ad``: the primals become dual tensors and one pass gives
``J @ tangents``. Forward mode has one dual level, so a forward transform inside
another (``jacfwd(jacfwd(f))``) takes its products from ``_jvp_products``: the
derivative of a vector-Jacobian product with respect to its cotangent, exact
because every backward formula is written in ember ops. ``hessian`` takes that
way too, where it measured faster.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

import ember
from ember._tensor import Tensor
from ember.autograd import forward_ad
from ember.autograd.function import _sequence, _transforms_running
from ember.autograd._forward_state import state as _forward_state
from ember.autograd.grad_mode import state as _grad_state
from ember.func import _batched, _tree
from ember.func._batched import BatchedTensor, EmberCode, UserCode, batched, logical_shape, physical

_depth = _transforms_running  # how many gradient transforms are running: inside one, gradients keep their graph


def _ember_code(fn: Callable) -> Callable:
    """``fn``, a transform's own code: its calls skip vmap's randomness mode (the user's function gets it back)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with EmberCode():
            return fn(*args, **kwargs)

    return run


def _active_levels() -> tuple:
    return tuple(lv.number for lv in _batched.active)


class _Inputs:
    """The differentiated inputs of one transform call: physical leaves, and what the function sees."""

    def __init__(self, values: list, levels: tuple):
        self.levels = levels
        self.leaves, self.seen = [], []
        _only_tensors(values, "Thing passed to transform API must be Tensor, got {}", ValueError)
        for v in values:
            if not (v.is_floating_point() or v.is_complex()):
                raise RuntimeError(f"only Tensors of floating point and complex dtype can require gradients, "
                                   f"got {v.dtype}")
            if type(v) is Tensor and not v._requires_grad and levels and (
                    _forward_state.key is None or forward_ad.tangent_of(v) is None):
                self.leaves.append(_expanded_leaf(v))  # a constant: its copies for the samples need no graph
                self.seen.append(batched(self.leaves[-1], levels))
                continue
            p = physical(v, levels, expand=True)
            if p.requires_grad:
                leaf = p.view_as(p)
            elif _forward_state.key is not None and forward_ad.tangent_of(p) is not None:
                leaf = p.view_as(p).requires_grad_()  # a dual input (jacfwd(jacrev(f))) keeps its tangent
            else:
                leaf = p.detach().requires_grad_()
            self.leaves.append(leaf)
            self.seen.append(batched(leaf, levels))
        for leaf in self.leaves:
            leaf._transform_leaf = True  # not a tensor from outside any transform (see _reaches_outside)
        self.keep_graph = _grad_state.enabled and (_depth[0] > 0 or any(p.requires_grad for p in values))


def _only_tensors(leaves: list, complaint: str, error: type = RuntimeError) -> None:
    """Raise ``error(complaint.format(type))`` at the first leaf that is not a Tensor (torch's wording per API)."""
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise error(complaint.format(type(leaf)))


_NOT_TENSOR_AUX = "Expected tensors, got unsupported type {}"
_NOT_TENSOR_VJP_OUT = "vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type {}"
_NOT_TENSOR_JVP_OUT = "jvp(f, primals, tangents): expected f(*primals) to return only tensors, got unsupported type {}"


_CALLED_AS = {"vjp": "vjp(f, *primals)", "jacrev": "vjp(f, *primals)", "jvp": "jvp(f, primals, tangents)"}


def _checked_split(out, has_aux: bool, who: str, complaint: str) -> tuple:
    """``(value, aux, flat value, its spec)``, after checking that value and aux hold only tensors."""
    value, aux = _split_aux(out, has_aux, who)
    flat_out, out_spec = _tree.flatten(value)
    if not flat_out:  # (there is nothing to differentiate)
        raise RuntimeError(f"{_CALLED_AS[who]}: Expected f to be a function that has non-empty output (got output = "
                           f"{flat_out})")
    _only_tensors(flat_out, complaint)
    if has_aux:
        _only_tensors(_tree.flatten(aux)[0], _NOT_TENSOR_AUX)
    return value, aux, flat_out, out_spec


def _expanded_leaf(v: Tensor) -> Tensor:
    """``v`` seen by every sample of the active levels: one copy per sample in name only (a broadcast view)."""
    sizes = tuple(lv.size for lv in _batched.active)
    return Tensor._wrap(np.broadcast_to(v._data, sizes + v._data.shape)).requires_grad_()


def _call(f: Callable, args: tuple, kwargs: dict):
    _depth[0] += 1
    try:
        with ember.enable_grad(), UserCode():
            return f(*args, **kwargs)
    finally:
        _depth[0] -= 1


def _argnums_tuple(argnums, n_args: int, who: str) -> tuple:
    """``argnums`` as a tuple of non-negative positions, checked as torch checks it (an int or a tuple of distinct
    ints, each naming one of the ``n_args`` positional inputs)."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"{who}: argnums must be int or Tuple[int, ...], got: {type(argnums)}; "
                           "e.g. argnums=(0, 1)")
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not nums:
        raise RuntimeError(f"{who}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{who}: argnum must be int, got: {type(a)}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
    positions = tuple(a % n_args for a in nums)
    if len(set(positions)) != len(positions):
        raise RuntimeError(f"{who}: argnums elements must be unique, got {positions}")
    return positions


def _differentiable_call(f, args, kwargs, argnums, who):
    """Run ``f`` with the inputs at ``argnums`` made differentiable; return the inputs and the output."""
    nums = _argnums_tuple(argnums, len(args), who)
    levels = _active_levels()
    trees = [_tree.flatten(args[i]) for i in nums]
    inputs = _Inputs([leaf for leaves, _ in trees for leaf in leaves], levels)
    seen, at = list(args), 0
    for i, (leaves, spec) in zip(nums, trees):
        seen[i] = _tree.unflatten(inputs.seen[at:at + len(leaves)], spec)
        at += len(leaves)
    first = next(_sequence)  # the nodes the call records get smaller numbers than this
    out = _call(f, tuple(seen), kwargs)
    if _grad_state.enabled and not inputs.keep_graph:
        outputs = [physical(o, levels) for o in _tree.flatten(out)[0] if isinstance(o, Tensor)]
        inputs.keep_graph = _reaches_outside(outputs, first)
    return inputs, trees, out


def _reaches_outside(outputs: list, first: int) -> bool:
    """Whether the graph of ``outputs`` reaches a tensor that requires grad from outside the call (one the
    function closes over), other than the transforms' own leaves: then, as in torch, the results stay
    differentiable with respect to it. ``first``: the sequence number taken when the call began."""
    pending = [o.grad_fn for o in outputs if o.grad_fn is not None]
    if any(o.requires_grad and o.grad_fn is None and not _is_transform_leaf(o) for o in outputs):
        return True
    visited = set()
    while pending:
        node = pending.pop()
        if node._seq > first:  # recorded before the call
            return True
        if id(node) in visited:
            continue
        visited.add(id(node))
        for edge in node._next:
            if edge:
                if edge[0]._is_node:
                    pending.append(edge[0])
                elif not _is_transform_leaf(edge[0]):
                    return True
    return False


def _is_transform_leaf(t: Tensor) -> bool:
    return getattr(t, "_transform_leaf", False)


def _gradients(inputs: _Inputs, outputs: list, cotangents: list, keep_graph: bool, retain: bool = False) -> list:
    """Physical vector-Jacobian products (zeros where an input is unused), as seen by the calling samples."""
    levels = inputs.levels
    outs = [physical(o, levels, expand=True) for o in outputs]
    cots = [physical(c, levels, expand=True) for c in cotangents]
    pairs = [(o, c) for o, c in zip(outs, cots) if o.requires_grad]
    if not pairs:
        grads = [None] * len(inputs.leaves)
    else:
        grads = ember.autograd.grad([o for o, _ in pairs], inputs.leaves, [c for _, c in pairs],
                                    retain_graph=retain or keep_graph, create_graph=keep_graph, allow_unused=True)
    return [batched(g if g is not None else ember.zeros_like(leaf), levels)
            for g, leaf in zip(grads, inputs.leaves)]


def _regroup(flat: list, trees: list, argnums) -> Any:
    groups, at = [], 0
    for leaves, spec in trees:
        groups.append(_tree.unflatten(flat[at:at + len(leaves)], spec))
        at += len(leaves)
    return groups[0] if isinstance(argnums, int) else tuple(groups)


def _detached(value, keep_graph: bool):
    if keep_graph:
        return value
    return _tree.unflatten([_detach(v) for v in _tree.flatten(value)[0]], _tree.flatten(value)[1])


def _detach(v):
    if type(v) is BatchedTensor:
        return batched(v._value.detach(), v._levels)
    return v.detach() if isinstance(v, Tensor) else v


def _split_aux(out, has_aux: bool, who: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{who}(f, ...)(*args): output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    return out


def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """Like :func:`grad`, but also returns the function's value: ``(gradients, value)``.

    >>> import ember
    >>> from ember.func import grad_and_value
    >>> grad_and_value(lambda x: (x ** 2).sum())(ember.tensor([1., 2.]))
    (tensor([2., 4.]), tensor(5.))
    """

    @_ember_code
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        inputs, trees, out = _differentiable_call(func, args, kwargs, argnums, "grad_and_value")
        value, aux = _split_aux(out, has_aux, "grad_and_value")
        if has_aux:
            _only_tensors(_tree.flatten(aux)[0], _NOT_TENSOR_AUX)
        if not isinstance(value, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(value)}")
        shape = logical_shape(value)
        if len(shape) > 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {len(shape)} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        if value.dtype.is_complex:
            raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {value.dtype}; "
                               "return the real part, or abs(), of the result")
        one = batched(ember.ones_like(physical(value, inputs.levels, expand=True)), inputs.levels)
        grads = _gradients(inputs, [value], [one], inputs.keep_graph)
        result = _regroup(grads, trees, argnums)
        value = _detached(value, inputs.keep_graph)
        if has_aux:
            return result, (value, _detached(aux, inputs.keep_graph))
        return result, value

    return wrapped


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """The gradient of ``func`` (which returns a scalar) with respect to its inputs at ``argnums``.

    >>> import ember
    >>> from ember.func import grad
    >>> grad(lambda x: x.sin().sum())(ember.tensor([0., 1.]))
    tensor([1.0000, 0.5403])
    >>> grad(grad(lambda x: x ** 3))(ember.tensor(2.))
    tensor(12.)
    """
    inner = grad_and_value(func, argnums, has_aux)

    @_ember_code
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapped


@_ember_code
def vjp(func: Callable, *primals, has_aux: bool = False):
    """``func(*primals)`` and a function taking cotangents to vector-Jacobian products, one per primal.

    >>> import ember
    >>> from ember.func import vjp
    >>> out, vjp_fn = vjp(ember.sin, ember.tensor([0., 1.]))
    >>> vjp_fn(ember.ones(2))
    (tensor([1.0000, 0.5403]),)
    """
    inputs, trees, out = _differentiable_call(func, primals, {}, tuple(range(len(primals))), "vjp")
    value, aux, flat_out, out_spec = _checked_split(out, has_aux, "vjp", _NOT_TENSOR_VJP_OUT)
    levels = inputs.levels

    @_ember_code
    def vjp_fn(cotangents, *extra, retain_graph: bool = True, create_graph: bool | None = None):
        if extra:
            cotangents = (cotangents,) + extra
        flat_ct, ct_spec = _tree.flatten(cotangents)
        if len(flat_ct) != len(flat_out):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function: {len(flat_ct)} cotangents for {len(flat_out)} outputs")
        for o, c in zip(flat_out, flat_ct):
            if tuple(logical_shape(o)) != tuple(logical_shape(c)):
                raise RuntimeError(f"Mismatch in shape: cotangent has shape {list(logical_shape(c))} and output "
                                   f"has shape {list(logical_shape(o))}")
        if _active_levels() != levels:  # called in another vmap (jacrev's): the outputs are recomputed under it
            return vjp(func, *primals, has_aux=has_aux)[1](cotangents)
        keep = inputs.keep_graph or bool(create_graph) or any(
            isinstance(c, Tensor) and c.requires_grad for c in flat_ct)
        grads = _gradients(inputs, flat_out, flat_ct, keep, retain=retain_graph)
        return _regroup(grads, trees, tuple(range(len(primals))))

    shown = _detached(value, inputs.keep_graph)
    if has_aux:
        return shown, vjp_fn, _detached(aux, inputs.keep_graph)
    return shown, vjp_fn


def _products(func, primals: tuple, tangents: tuple, has_aux: bool):
    """Jacobian-vector products by forward mode; by the derivative of a vjp when a dual level is open already
    (forward mode has one level: an inner ``jvp`` of ``jacfwd(jacfwd(f))`` takes the other way)."""
    if _forward_state.key is None:
        return _forward_products(func, primals, tangents, has_aux)
    return _jvp_products(func, primals, tangents, has_aux)


@_ember_code
def _forward_products(func, primals: tuple, tangents: tuple, has_aux: bool):
    """``func(*primals)`` and ``J @ tangents`` in one pass of forward mode: each primal is a dual tensor.

    Under vmap the duals are physical (every level's batch dim at full size, so primal and tangent agree), and
    the function sees them batched; its ops run on the physical values and carry their tangents along.
    """
    levels = _active_levels()
    flat_p, p_spec = _tree.flatten(primals)
    flat_t = _tree.flatten(tangents)[0]
    if len(flat_t) != len(flat_p):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure: {len(flat_p)} primals and {len(flat_t)} tangents")
    keep = _grad_state.enabled and (_depth[0] > 0 or any(
        isinstance(v, Tensor) and v.requires_grad for v in flat_p + flat_t))
    with forward_ad.dual_level():
        duals = [batched(forward_ad.make_dual(physical(p, levels, expand=True), physical(t, levels, expand=True)),
                         levels) for p, t in zip(flat_p, flat_t)]
        first = next(_sequence)
        out = _call(func, tuple(_tree.unflatten(duals, p_spec)), {})
        value, aux, flat_out, out_spec = _checked_split(out, has_aux, "jvp", _NOT_TENSOR_JVP_OUT)
        pairs = [forward_ad.unpack_dual(physical(o, levels, expand=True)) for o in flat_out]
        keep = keep or _grad_state.enabled and _reaches_outside([p for p, _ in pairs], first)
    values = [batched(p, levels) for p, _ in pairs]
    products = [batched(t if t is not None else ember.zeros_like(p), levels) for p, t in pairs]
    value = _detached(_tree.unflatten(values, out_spec), keep)
    # an inner transform's products keep their graph (jacfwd(jacrev(f))): it is the caller's only if it asks
    tangent_out = _detached(_tree.unflatten(products, out_spec), keep)
    return (value, tangent_out, _detached(aux, keep)) if has_aux else (value, tangent_out)


@_ember_code
def _jvp_products(func, primals: tuple, tangents: tuple, has_aux: bool):
    """``func(*primals)`` and its Jacobian times ``tangents``, as the derivative of a vector-Jacobian product.

    ``u -> J^T u`` is linear in the cotangent ``u``; differentiating ``<J^T u, t>`` with respect to ``u``
    gives ``J t``. Forward-mode AD gives the same product in one pass; this is where it would plug in.
    """
    inputs, trees, out = _differentiable_call(func, primals, {}, tuple(range(len(primals))), "jvp")
    value, aux, flat_out, out_spec = _checked_split(out, has_aux, "jvp", _NOT_TENSOR_JVP_OUT)
    levels = inputs.levels
    flat_t = _tree.flatten(tangents)[0]
    if len(flat_t) != len(inputs.leaves):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure: {len(inputs.leaves)} primals and {len(flat_t)} tangents")
    outs = [physical(o, levels, expand=True) for o in flat_out]
    us = [ember.zeros_like(o).requires_grad_() for o in outs]
    keep = inputs.keep_graph or any(isinstance(t, Tensor) and t.requires_grad for t in flat_t)
    pairs = [(o, u) for o, u in zip(outs, us) if o.requires_grad]
    products = [None] * len(outs)
    if pairs:
        g = ember.autograd.grad([o for o, _ in pairs], inputs.leaves, [u for _, u in pairs], create_graph=True,
                                allow_unused=True)
        used = [(gi, physical(t, levels, expand=True)) for gi, t in zip(g, flat_t) if gi is not None]
        if used:
            products = list(ember.autograd.grad([gi for gi, _ in used], us, [t for _, t in used], create_graph=keep,
                                                allow_unused=True))
    products = [batched(p if p is not None else ember.zeros_like(o), levels) for p, o in zip(products, outs)]
    value = _detached(value, keep)
    tangent_out = _tree.unflatten(products, out_spec)
    return (value, tangent_out, _detached(aux, keep)) if has_aux else (value, tangent_out)


def jvp(func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product, without forming the Jacobian.

    >>> import ember
    >>> from ember.func import jvp
    >>> jvp(lambda x: x ** 2, (ember.tensor([1., 2.]),), (ember.tensor([1., 0.]),))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples. E.g. it should "
                           "be valid to call f(*primals).")
    for name, tree in (("primals", primals), ("tangents", tangents)):
        _only_tensors(_tree.flatten(tree)[0], f"jvp(f, primals, tangents): Expected {name} to only contain Tensors, "
                                              "got {}")
    for p, t in zip(_tree.flatten(primals)[0], _tree.flatten(tangents)[0]):
        if tuple(logical_shape(p)) != tuple(logical_shape(t)):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same shape, "
                               f"got {list(logical_shape(p))} and {list(logical_shape(t))}")
    return _products(func, primals, tangents, has_aux)


def linearize(func: Callable, *primals) -> tuple:
    """``func(*primals)`` and a function computing ``J @ tangents`` at ``primals``.

    >>> import ember
    >>> from ember.func import linearize
    >>> out, jvp_fn = linearize(ember.sin, ember.tensor([0.]))
    >>> jvp_fn(ember.tensor([2.]))
    tensor([2.])
    """
    flat_primals, primal_spec = _tree.flatten(primals)
    for p in flat_primals:
        if isinstance(p, Tensor) and not (p.is_floating_point() or p.is_complex()):
            raise ValueError(f"Expected primal to be floating point or complex, but got: {p.dtype}")
    keep = _grad_state.enabled  # the output stays differentiable for the caller (backward, an outer transform)
    value = _call(func, primals, {})

    def jvp_fn(*tangents):
        _check_tangents_match(tangents, primals, flat_primals, primal_spec)
        return _products(func, primals, tangents, False)[1]

    return _detached(value, keep), jvp_fn


def _check_tangents_match(tangents: tuple, primals: tuple, flat_primals: list, primal_spec) -> None:
    """linearize's tangents must have the primals' structure, and each the shape and dtype of its primal."""
    flat_tangents, tangent_spec = _tree.flatten(tangents)
    if tangent_spec != primal_spec:
        raise RuntimeError(f"Expected the tangents {_tree.structure(tangents)} to have the same argspec as the "
                           f"primals {_tree.structure(primals)}: give one tangent per primal, in the same structure")
    for i, (t, p) in enumerate(zip(flat_tangents, flat_primals)):
        for what, mine, theirs in (("shape", logical_shape(t), logical_shape(p)), ("dtype", t.dtype, p.dtype)):
            if mine != theirs:
                raise RuntimeError(f"tangent:{i} with {what} {mine} in flattened pytree doesn't match the {what} "
                                   f"{theirs} of the corresponding primal.")


# ---- Jacobians and Hessians

def _basis(count: int, like: Tensor) -> Tensor:
    return ember.eye(count, dtype=like.dtype)


def jacrev(func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of ``func`` by reverse mode: one vector-Jacobian product per output element, batched by vmap.

    >>> import ember
    >>> from ember.func import jacrev
    >>> jacrev(lambda x: x ** 2)(ember.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    from ember.func._vmap import mapped

    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @_ember_code
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacrev")

        def of_selected(*selected):
            full = list(args)
            for i, s in zip(nums, selected):
                full[i] = s
            return func(*full, **kwargs)

        primals = tuple(args[i] for i in nums)
        _only_tensors(_tree.flatten(primals)[0], "Thing passed to transform API must be Tensor, got {}", ValueError)
        _real_only("jacrev", _tree.flatten(primals)[0], "inputs")
        value, aux, flat_out, out_spec = _checked_split(_first_run(of_selected, primals, has_aux), has_aux, "jacrev",
                                                        _NOT_TENSOR_VJP_OUT)
        _real_only("jacrev", flat_out, "outputs")

        @_ember_code
        def vjp_fn(cotangents):  # one row of the Jacobian per sample: the outputs are recomputed under the vmap
            inputs, trees, out = _differentiable_call(of_selected, primals, {}, everything, "jacrev")
            grads = _gradients(inputs, _tree.flatten(_split_aux(out, has_aux, "jacrev")[0])[0],
                               _tree.flatten(cotangents)[0], inputs.keep_graph)
            return _regroup(grads, trees, everything)

        everything = tuple(range(len(primals)))

        sizes = [logical_shape(o).numel() for o in flat_out]
        total = sum(sizes)
        basis = _basis(total, flat_out[0])
        rows = basis.split(sizes, dim=1) if len(sizes) > 1 else (basis,)
        cotangents = _tree.unflatten([_shaped(r, (total,) + tuple(logical_shape(o))) for r, o in zip(rows, flat_out)],
                                     out_spec)
        try:
            per_primal = mapped(vjp_fn, (cotangents,), {}, chunk_size=chunk_size)  # each (total, *primal shape)
        except RuntimeError as error:
            if not getattr(error, "missing_vmap_rule", False):
                raise
            # a custom Function without a batching rule: torch runs it once and maps only its backward
            per_primal = _vjps_row_by_row(of_selected, primals, cotangents, total, has_aux)
        jac = []
        for grads_of_primal, (leaves, spec) in zip(per_primal, [_tree.flatten(p) for p in primals]):
            flat_g = _tree.flatten(grads_of_primal)[0]
            jac.append([[_shaped(g if n == total else g.narrow(0, start, n),
                                 tuple(logical_shape(o)) + tuple(logical_shape(leaf)))
                         for g, leaf in zip(flat_g, leaves)] for start, n, o in _offsets(sizes, flat_out)])
        result = _jacobian_tree(jac, [_tree.flatten(p) for p in primals], out_spec, argnums)
        return (result, aux) if has_aux else result

    return wrapped


def _first_run(func: Callable, primals: tuple, has_aux: bool):
    """jacrev's first call of ``func``, for the outputs' shapes (the products run it again, batched): without a
    graph or tangents, unless it returns an aux, which must stay differentiable for the caller, as torch's does
    (``grad`` of a function of the aux, or ``backward`` from it)."""
    if has_aux:
        with UserCode():
            return func(*primals)
    with ember.no_grad(), UserCode(), _NoTangents():
        return func(*primals)


def _vjps_row_by_row(func: Callable, primals: tuple, cotangents, total: int, has_aux: bool) -> tuple:
    """jacrev's rows, one vector-Jacobian product each over a single recorded call of ``func``: for a function
    that calls a custom Function without a batching rule, which torch's jacrev takes (it maps only backward)."""
    everything = tuple(range(len(primals)))
    inputs, trees, out = _differentiable_call(func, primals, {}, everything, "jacrev")
    outs = _tree.flatten(_split_aux(out, has_aux, "jacrev")[0])[0]
    seeds = _tree.flatten(cotangents)[0]
    rows = [_gradients(inputs, outs, [seed[row] for seed in seeds], inputs.keep_graph, retain=True)
            for row in range(total)]
    columns = [ember.stack([row[i] for row in rows]) for i in range(len(inputs.leaves))]
    return _regroup(columns, trees, everything)


def _real_only(who: str, leaves: list, what: str) -> None:
    """As torch's: a Jacobian of complex inputs or outputs (which has no single complex matrix unless the function
    is holomorphic) is refused; ``grad``, ``vjp`` and ``jvp`` take them."""
    for index, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor) and leaf.dtype.is_complex:
            raise RuntimeError(f"{who}: Expected all {what} to be real but received complex tensor at flattened "
                               f"input idx: {index}; take the Jacobian of the real and imaginary parts (view_as_real)")


class _NoTangents:
    """Forward mode off for a while (the dual tensors' tangents stay): for a run that only learns shapes."""

    def __enter__(self):
        self.key, _forward_state.key = _forward_state.key, None

    def __exit__(self, *exc):
        _forward_state.key = self.key
        return False


def _shaped(t: Tensor, shape: tuple) -> Tensor:
    return t if tuple(t.shape) == shape else t.reshape(shape)


def _offsets(sizes: list, outs: list):
    start = 0
    for n, o in zip(sizes, outs):
        yield start, n, o
        start += n


def _jacobian_tree(jac: list, primal_trees: list, out_spec, argnums):
    """jac[j][i][k]: output leaf i by leaf k of primal j, arranged as torch.func returns it."""
    per_output = []
    for i in range(len(jac[0])):
        parts = [_tree.unflatten(jac[j][i], primal_trees[j][1]) for j in range(len(jac))]
        per_output.append(parts[0] if isinstance(argnums, int) else tuple(parts))
    return _tree.unflatten(per_output, out_spec)


def jacfwd(func: Callable, argnums: int | tuple = 0, has_aux: bool = False, *, randomness: str = "error",
           _by_reverse_mode: bool = False) -> Callable:
    """The Jacobian of ``func`` by forward products: one Jacobian-vector product per input element, batched by vmap.

    >>> import ember
    >>> from ember.func import jacfwd
    >>> jacfwd(lambda x: x.sin())(ember.tensor([0., 0.]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    from ember.func._vmap import vmap

    @_ember_code
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        primals = tuple(args[i] for i in nums)
        flat_p, p_spec = _tree.flatten(primals)
        _real_only("jacfwd", flat_p, "inputs")
        sizes = [logical_shape(p).numel() for p in flat_p]
        total = sum(sizes)
        columns = _basis(total, flat_p[0]).split(sizes, dim=1)
        tangents = _tree.unflatten([c.reshape((total,) + tuple(logical_shape(p))) for c, p in zip(columns, flat_p)],
                                   p_spec)

        def of_selected(*selected):
            full = list(args)
            for i, s in zip(nums, selected):
                full[i] = s
            return func(*full, **kwargs)

        def push(t):
            out = (_jvp_products if _by_reverse_mode else _products)(of_selected, primals, t, has_aux)
            return (out[1], out[2]) if has_aux else out[1]

        pushed = vmap(push, randomness=randomness)(tangents)
        products, aux = pushed if has_aux else (pushed, None)
        flat_o, o_spec = _tree.flatten(products)  # each (total, *out shape)
        jac = [[[o.narrow(0, start, n).movedim(0, -1).reshape(tuple(o.shape[1:]) + tuple(logical_shape(p)))
                 for o in flat_o]] for start, n, p in _offsets(sizes, flat_p)]
        jac_by_primal = []
        at = 0
        for prim in primals:
            leaves, spec = _tree.flatten(prim)
            jac_by_primal.append([[jac[at + k][0][i] for k in range(len(leaves))] for i in range(len(flat_o))])
            at += len(leaves)
        result = _jacobian_tree(jac_by_primal, [_tree.flatten(p) for p in primals], o_spec, argnums)
        if has_aux:
            return result, _tree.unflatten([_first(a) for a in _tree.flatten(aux)[0]], _tree.flatten(aux)[1])
        return result

    return wrapped


def _first(a):
    return a[0] if isinstance(a, Tensor) else a


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """The Hessian of a scalar function: ``jacfwd(jacrev(func))``.

    >>> import ember
    >>> from ember.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(ember.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    # Its forward products are taken in reverse mode: forward mode over jacrev's reverse pass gives the same
    # Hessian but measured 1.1-1.5x slower, every op of that pass carrying a tangent (bench/RESULTS.md).
    return jacfwd(jacrev(func, argnums), argnums, _by_reverse_mode=True)
