"""``vmap``: run a function written for one sample on a whole batch, each op once for all samples."""
from __future__ import annotations

import functools
from typing import Any, Callable

import ember
from ember._tensor import Tensor
from ember.func import _batched, _tree
from ember.func._batched import BatchedTensor, Level, batched, logical_shape, physical
from ember.func._rules import _map, _tensors, op_name, run_rule
from ember.overrides import TorchFunctionMode, _modes

_RANDOMNESS = ("error", "different", "same")


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over a dim of its inputs: each op runs once, on the whole batch.

    ``in_dims`` and ``out_dims`` are an int, None (not mapped) or a tree of them matching the
    inputs and outputs. ``randomness`` says what random ops do: ``'error'``, ``'different'``
    values per sample, or the ``'same'`` values for all.

    >>> import ember
    >>> from ember.func import vmap
    >>> vmap(ember.dot)(ember.ones(3, 2), ember.arange(6.).reshape(3, 2))
    tensor([1., 5., 9.])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return mapped(func, args, kwargs, in_dims, out_dims, randomness, chunk_size)

    return wrapped


def mapped(func: Callable, args: tuple, kwargs: dict, in_dims: Any = 0, out_dims: Any = 0,
           randomness: str = "error", chunk_size: int | None = None):
    """``vmap(func, ...)(*args, **kwargs)`` (the transforms call it so, without making a wrapper each time)."""
    _check_out_dims(func, out_dims)
    flat, spec = _tree.flatten(args)
    dims = _checked_in_dims(func, in_dims, args, flat)
    size = _batch_size(func, flat, dims)
    if chunk_size is None or chunk_size >= size:
        return _run(func, flat, spec, dims, size, out_dims, randomness, kwargs)
    return _chunked(func, flat, spec, dims, size, out_dims, randomness, kwargs, chunk_size)


def _checked_in_dims(func, in_dims, args: tuple, flat: list) -> list:
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims!r}, ...)(<inputs>): expected `in_dims` to be int or a "
                         "(potentially nested) tuple matching the structure of inputs, got: "
                         f"{type(in_dims).__name__}.")
    dims = _tree.broadcast(in_dims, args, "in_dims") if isinstance(in_dims, tuple) else [in_dims] * len(flat)
    for value, d in zip(flat, dims):
        if d is None:
            continue
        if not isinstance(value, Tensor):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for an input but "
                             f"the input is of type {type(value).__name__}. We cannot vmap over non-Tensor arguments, "
                             "please use None as the respective in_dim")
        ndim = len(logical_shape(value))
        if not isinstance(d, int) or not -ndim <= d < ndim:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for some input, "
                             f"but that input is a Tensor of dimensionality {ndim} so expected in_dim to satisfy "
                             f"-{ndim} <= in_dim < {ndim}.")
    if all(d is None for d in dims):
        raise ValueError(f"vmap: Expected at least one Tensor to vmap over (vmap({_name(func)}, in_dims={in_dims!r}) "
                         "maps no input): give at least one Tensor input a non-None in_dim")
    return dims


def _check_out_dims(func, out_dims) -> None:
    """Refuse, before running ``func``, an ``out_dims`` that is not an int, None or a tree of them."""
    leaves = _tree.flatten(out_dims)[0] if isinstance(out_dims, (tuple, list, dict)) else [out_dims]
    if not all(d is None or isinstance(d, int) for d in leaves):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims!r}): `out_dims` must be an int, None or a "
                         "python collection of ints representing where in the outputs the vmapped dimension should "
                         "appear.")


def _flat_out_dims(out_dims, out, count: int) -> list:
    """One out_dim per leaf of ``out``: ``out_dims`` is a single int or None for all, or a tree matching ``out``."""
    if not isinstance(out_dims, (tuple, list, dict)):
        return [out_dims] * count
    if isinstance(out_dims, tuple) and len(out_dims) == 1 and isinstance(out, Tensor):
        return list(out_dims)  # as torch: a 1-tuple may stand for a single returned tensor
    return _tree.broadcast(out_dims, out, "out_dims")


def _batch_size(func, flat: list, dims: list) -> int:
    sizes = [logical_shape(v)[d] for v, d in zip(flat, dims) if d is not None]
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes {sizes} "
                         f"for the mapped dimension (in {_name(func)})")
    return sizes[0]


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _run(func, flat, spec, dims, size, out_dims, randomness, kwargs):
    level = Level((_batched.active[-1].number + 1) if _batched.active else 1, size, randomness)
    with _batched.EmberCode():
        inputs = [v if d is None else _to_batched(v, d, level.number) for v, d in zip(flat, dims)]
    _batched.active.append(level)
    outermost = len(_batched.active) == 1
    if outermost:
        _batched.mode.append(_RandomnessMode())
    try:
        with _batched.UserCode():
            out = func(*_tree.unflatten(inputs, spec), **kwargs)
    finally:
        if outermost:
            _batched.mode.pop()
        _batched.active.pop()
    with _batched.EmberCode():
        return _unbatch_all(func, out, out_dims, level)


def _to_batched(value: Tensor, d: int, level: int) -> Tensor:
    """``value`` batched at ``level`` along its logical dim ``d``: that dim moves behind the outer levels' dims."""
    if type(value) is BatchedTensor:
        nb = len(value._levels)
        p = value._value
        return batched(p.movedim(nb + d % (p.dim() - nb), nb), value._levels + (level,))
    return batched(value.movedim(d, 0) if d % max(value.dim(), 1) else value, (level,))


def _unbatch_all(func, out, out_dims, level: Level):
    flat, spec = _tree.flatten(out)
    dims = _flat_out_dims(out_dims, out, len(flat))
    results = []
    for value, d in zip(flat, dims):
        if not isinstance(value, Tensor):
            if d is None:
                results.append(value)
                continue
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(value).__name__}. Did you mean to set out_dims= to None for output?")
        results.append(_unbatch(value, level, d))
    return _tree.unflatten(results, spec)


def _unbatch(value: Tensor, level: Level, d) -> Tensor:
    """``value`` with ``level``'s batch dim moved to its logical dim ``d`` (made, expanded, if it has none)."""
    levels = value._levels if type(value) is BatchedTensor else ()
    if d is None:
        if level.number in levels:
            raise ValueError("vmap: returned a value batched over the mapped dim with out_dims=None; it can only be "
                             "None for outputs that do not depend on the mapped inputs")
        return value
    p = physical(value, levels)
    rest = tuple(lv for lv in levels if lv != level.number)
    ndim = p.dim() - len(levels) + 1
    if not -ndim <= d < ndim:
        raise IndexError(f"vmap: out_dim={d} is out of range for an output of {ndim - 1} dims")
    target = len(rest) + d % ndim
    if level.number in levels:
        source = levels.index(level.number)
        p = p.movedim(source, target) if source != target else p
    else:
        p = p.unsqueeze(target)
        p = p.expand(tuple(level.size if i == target else -1 for i in range(p.dim())))
    return batched(p, rest)


def _chunked(func, flat, spec, dims, size, out_dims, randomness, kwargs, chunk_size):
    pieces = []
    # 'same' randomness means the same draws for every sample, so every chunk starts from the same generator state
    start_state = ember.get_rng_state() if randomness == "same" else None
    for start in range(0, size, chunk_size):
        length = min(chunk_size, size - start)
        if start_state is not None:
            ember.set_rng_state(start_state)
        part = [v if d is None else v.narrow(d, start, length) for v, d in zip(flat, dims)]
        pieces.append(_run(func, part, spec, dims, length, out_dims, randomness, kwargs))
    flat_pieces = [_tree.flatten(p)[0] for p in pieces]
    out_flat, out_spec = _tree.flatten(pieces[0])
    out_d = _flat_out_dims(out_dims, pieces[0], len(out_flat))
    joined = [ember.cat([fp[i] for fp in flat_pieces], dim=d) if d is not None else out_flat[i]
              for i, d in enumerate(out_d)]
    return _tree.unflatten(joined, out_spec)


# ---- random ops under vmap

_FACTORIES = {"rand", "randn", "randint", "randperm"}
_LIKE = {"rand_like", "randn_like", "randint_like", "bernoulli", "poisson", "multinomial", "normal"}
_DROPOUT = {"dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "rrelu"}
_INPLACE = {"uniform_", "normal_", "bernoulli_", "random_", "exponential_", "cauchy_", "log_normal_", "geometric_"}
_RANDOM = _FACTORIES | _LIKE | _DROPOUT | _INPLACE
_DRAWN_FROM_VALUES = {"normal", "poisson", "multinomial"}  # their input's values shape the distribution


class _RandomnessMode(TorchFunctionMode):
    """Sees every call inside vmap, so random ops (factories too) follow the vmap's ``randomness``."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = op_name(func)
        if name in _RANDOM:
            return _random(func, name, args, kwargs)
        if BatchedTensor in types and not _modes and all(t is BatchedTensor or t is Tensor for t in types):
            return run_rule(func, args, kwargs)  # what dispatching again would reach: one dispatch per op, not two
        return func(*args, **kwargs)


def _random(func, name, args, kwargs):
    if name in _DROPOUT and not _training(name, args, kwargs):
        return args[0]  # an identity outside training: nothing random happens
    kinds = {lv.randomness for lv in _batched.active}
    if "error" in kinds:
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           "of vmap")
    if len(kinds) > 1:
        raise RuntimeError("vmap: nested vmaps with both 'same' and 'different' randomness cannot run random ops; "
                           "use one randomness for all of them")
    if kinds == {"same"}:
        return _same(func, name, args, kwargs)
    return _different(func, name, args, kwargs)


def _training(name, args, kwargs) -> bool:
    position = 3 if name == "rrelu" else 2
    return bool(args[position] if len(args) > position else kwargs.get("training", name != "rrelu"))


def _sample_template(x: Tensor) -> Tensor:
    return ember.zeros(tuple(logical_shape(x)), dtype=x.dtype)


def _same(func, name, args, kwargs):
    """One draw for the sample's shape, shared by every sample."""
    batched_operands = [t for t in _tensors(kwargs.values(), _tensors(args, [])) if type(t) is BatchedTensor]
    if name in _FACTORIES or not batched_operands:
        return func(*args, **kwargs)
    x = args[0] if args else None
    if name in _DRAWN_FROM_VALUES or x is not batched_operands[0] or len(batched_operands) > 1:
        raise RuntimeError(f"vmap: Vmap does not currently support same randomness with a batched tensor input "
                           f"({name}: its draws depend on each sample's values, so they cannot be one draw for all). "
                           "Use randomness='different', or draw outside vmap")
    if name in _INPLACE:
        return x.copy_(func(_sample_template(x), *args[1:], **kwargs))
    if name == "bernoulli" and len(args) == 1 and kwargs.get("p") is None:  # x holds the probabilities
        return (ember.rand(tuple(logical_shape(x)), dtype=x.dtype) < x).to(x.dtype)
    if name in _DROPOUT:
        return x * func(ember.ones(tuple(logical_shape(x)), dtype=x.dtype), *args[1:], **kwargs)
    return func(_sample_template(x), *args[1:], **kwargs)


def _different(func, name, args, kwargs):
    """A draw per sample: the physical value gets every level's batch dim, then one call fills it."""
    levels = tuple(lv.number for lv in _batched.active)
    sizes = tuple(lv.size for lv in _batched.active)
    if name in _FACTORIES or _is_normal_factory(name, args, kwargs):
        return batched(_batched_factory(func, name, args, kwargs, sizes), levels)
    if name in _INPLACE:
        x = args[0]
        if type(x) is not BatchedTensor or x._levels != levels:
            raise RuntimeError(f"vmap: {name}(self) is not possible: self is not batched at every level while "
                               "randomness='different' draws a value per sample. Please try to use out-of-place "
                               "random ops instead")
        func(physical(x, levels), *args[1:], **kwargs)
        return x
    # every tensor operand (normal's mean and std both) at the full batch, its sample dims padded to the widest
    ndim = max(len(logical_shape(t)) for t in _tensors(kwargs.values(), _tensors(args, [])))
    full = lambda t: physical(t, levels, ndim, expand=True)  # noqa: E731
    return batched(func(*_map(args, full), **{k: _map(v, full) for k, v in kwargs.items()}), levels)


def _is_normal_factory(name, args, kwargs) -> bool:
    """``normal(mean, std, size)`` with numbers for mean and std: a factory of the given size."""
    return name == "normal" and not _tensors(kwargs.values(), _tensors(args, []))


def _batched_factory(func, name, args, kwargs, sizes):
    """A factory's draws for every sample: its size with the batch sizes in front."""
    if name == "randperm":
        n = args[0]
        return ember.rand(sizes + (n,)).argsort(-1).to(kwargs.get("dtype", ember.int64))
    if "size" in kwargs:
        return func(*args, **dict(kwargs, size=sizes + tuple(kwargs["size"])))
    if name in ("randint", "normal"):  # the size is the last positional argument, after the range or moments
        return func(*args[:-1], sizes + tuple(args[-1]), **kwargs)
    shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list, ember.Size)) else args
    return func(sizes + tuple(shape), **kwargs)
