"""Batching rules: how each op runs on the physical values of batched tensors, all samples in one call.

A rule takes ``(func, args, kwargs, levels)``: the public function that was
called, its arguments as the user passed them (batched tensors among them) and
the vmap levels present, and returns the batched result. Most ops need only one
of a few kinds of rule: elementwise ops broadcast once every operand has its
batch dims in front and its sample dims aligned; ops with a ``dim`` argument see
it shifted past the batch dims; ops on whole samples (matmul, conv, losses ...)
fold the batch into a dim they already have. ``RULES`` maps each op's name to
its rule; an op that has none is an error naming it.
"""
from __future__ import annotations

import math

import ember
from ember._size import Size
from ember._tensor import Tensor
from ember.func._products import stacked_product
from ember.func._batched import BatchedTensor, batched, levels_in, logical_shape, physical, size_of
from ember.overrides import resolve_name, with_ember_names

_PREFIXES = ("ember.Tensor.", "ember.nn.functional.", "ember.special.", "ember.")
_MISSING = object()


_KNOWN_NAMES: dict = {}  # function -> op_name, learned on first sight (every op of a vmapped function passes here)


def op_name(func) -> str:
    """The name a rule is found by: ``add`` for both ``ember.add`` and ``Tensor.add``, ``linalg.det`` ..."""
    name = _KNOWN_NAMES.get(func)
    if name is None:
        name = _KNOWN_NAMES[func] = _short_name(func)
    return name


def _short_name(func) -> str:
    name = resolve_name(func) or getattr(func, "__name__", repr(func))
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def run_rule(func, args: tuple, kwargs: dict):
    """Run ``func`` on batched arguments through its batching rule."""
    name = op_name(func)
    rule = RULES.get(name)
    if rule is None and name.endswith("_") and not name.endswith("__") and name[:-1] in RULES:
        rule = inplace
    if rule is None:
        raise RuntimeError(
            f"vmap: batching rule not implemented for ember.{name}: it cannot run on a batch of samples at once. "
            "Call it outside the vmapped function, or write the computation with ops that have batching rules "
            "(a custom autograd.Function can declare its own with a vmap staticmethod)"
        )
    kwargs = with_ember_names(func, kwargs)  # the rules read dims by ember's names
    first = args[0] if args else None
    if type(first) is BatchedTensor and len(args) < 3 and not kwargs and (
            len(args) == 1 or type(args[1]) is not BatchedTensor and type(args[1]) not in (list, tuple)):
        return rule(func, args, kwargs, first._levels)  # x.op() and x.op(number): the levels are x's
    levels = tuple(sorted(levels_in(kwargs.values(), levels_in(args, set()))))
    return rule(func, args, kwargs, levels)


def decline(name: str, reason: str):
    """The error of an op vmap cannot batch, and why (its result's shape would differ between samples ...)."""
    raise RuntimeError(f"vmap: batching rule not implemented for ember.{name}: {reason}. Call it outside the vmapped "
                       "function, or write the computation with ops that have batching rules")


def declined(reason: str):
    """A rule that refuses, for ops whose batched form has no meaning: ``reason`` says why."""
    return lambda func, args, kwargs, levels: decline(op_name(func), reason)


def rewrap(value, levels: tuple):
    """The tensors in an op's physical result (also inside tuples and lists) as batched tensors."""
    if isinstance(value, Tensor):
        return batched(value, levels)
    if isinstance(value, (tuple, list)) and not isinstance(value, Size):
        items = [rewrap(v, levels) for v in value]
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _map(value, fn):
    if isinstance(value, Tensor):
        return fn(value)
    if type(value) in (list, tuple):
        return type(value)(_map(v, fn) for v in value)
    return value


def _tensors(values, found: list) -> list:
    for v in values:
        if isinstance(v, Tensor):
            found.append(v)
        elif type(v) in (list, tuple):
            _tensors(v, found)
    return found


def _ndim(x) -> int:
    return len(logical_shape(x))


# ---- elementwise ops

def pointwise(func, args, kwargs, levels):
    """Every tensor operand gets the batch dims in front and its sample dims padded to the widest: they broadcast."""
    if len(args) == 1 and not kwargs and type(args[0]) is BatchedTensor and args[0]._levels == levels:
        return rewrap(func(args[0]._value), levels)  # one batched operand: its physical value as it is
    ndim = max(_ndim(t) for t in _tensors(kwargs.values(), _tensors(args, [])))
    aligned = lambda t: physical(t, levels, ndim)  # noqa: E731
    out = func(*_map(args, aligned), **{k: _map(v, aligned) for k, v in kwargs.items()})
    return rewrap(out, levels)


def unbatched_result(func, args, kwargs, levels):
    """Ops whose result does not depend on the samples' values (``new_zeros``, ``dtype``): run on the batch as is."""
    return func(*_map(args, lambda t: physical(t, levels)), **kwargs)


def new_per_sample(func, args, kwargs, levels):
    """``new_zeros``, ``new_ones``, ``new_full``, ``new_empty``: as torch, one tensor of the size asked for per
    sample, batched (so that writing a sample's values into it works, as a backward formula under jacrev does)."""
    p = physical(args[0], levels)
    out = func(p, *args[1:], **kwargs)
    return batched(out.expand(tuple(p.shape[:len(levels)]) + tuple(out.shape)).clone(), levels)


# ---- ops with dim arguments

class Dims:
    """Where an op takes its dim arguments: ``(position, keyword, default)`` each; ``extra`` for dims of the result
    (``unsqueeze`` and ``stack`` take one more than their input has)."""

    def __init__(self, *specs, extra: int = 0, reduce: bool = False, plain: tuple = ()):
        self.specs, self.extra, self.reduce, self.plain = specs, extra, reduce, plain


def _get(args, kwargs, position, keyword, default=_MISSING):
    if position is not None and len(args) > position:
        return args[position]
    return kwargs.get(keyword, default)


def _put(args, kwargs, position, keyword, value):
    if position is not None and len(args) > position:
        args[position] = value
    else:
        kwargs[keyword] = value


def _shifted(d, ndim: int, nb: int, op: str):
    if isinstance(d, (tuple, list)):
        return type(d)(_shifted(x, ndim, nb, op) for x in d)
    if isinstance(d, str):
        raise RuntimeError(f"vmap: {op} with named dims is not supported")
    rank = max(ndim, 1)
    if not -rank <= d < rank:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})")
    return d % rank + nb


def along(spec: Dims):
    """A rule for an op on one sample tensor (others aligned with it) whose dim arguments shift past the batch."""

    def rule(func, args, kwargs, levels):
        args, kwargs = list(args), dict(kwargs)
        nb, name = len(levels), op_name(func)
        ndim = _ndim(args[0]) + spec.extra
        if spec.reduce:
            d = _get(args, kwargs, *spec.specs[0][:2])
            if d is _MISSING or d is None or isinstance(d, (bool, tuple, list)) and not d or type(d) is bool:
                return _reduce_all(func, args, kwargs, levels, spec)
            if isinstance(d, Tensor):  # max(x, other): the elementwise form
                return pointwise(func, args, kwargs, levels)
        zero_d = ndim == 0
        for position, keyword, *default in spec.specs:
            d = _get(args, kwargs, position, keyword, default[0] if default else _MISSING)
            if d is not _MISSING and d is not None:
                _put(args, kwargs, position, keyword, _shifted(d, ndim, nb, name))
        for position in spec.plain:  # a 1-d index (index_select's): the same for every sample
            if position < len(args) and type(args[position]) is BatchedTensor:
                raise RuntimeError(f"vmap: {name} with a batched index has no batching rule; use gather")
        expand = bool(_tensors([a for i, a in enumerate(args) if i and i not in spec.plain], []))
        first = physical(args[0], levels, expand=expand)  # index tensors (gather ...) need the batch at full size
        if zero_d:
            first = first.unsqueeze(-1)
        for i in range(1, len(args)):
            if i not in spec.plain:
                args[i] = _map(args[i], lambda t: physical(t, levels, None if zero_d else ndim - spec.extra, expand))
        args[0] = first
        out = func(*args, **kwargs)
        if zero_d:
            out = _map(out, lambda t: t.squeeze(-1) if t.dim() == nb + 1 else t)
        return rewrap(out, levels)

    return rule


def _reduce_all(func, args, kwargs, levels, spec):
    """A reduction over every sample dim: each sample flattened, then reduced along its one dim."""
    x = physical(args[0], levels)
    nb = len(levels)
    position, keyword = spec.specs[0][:2]
    shape = logical_shape(args[0])
    keepdim = _get(args, kwargs, position + 1 if position is not None else None, "keepdim", False)
    args[0] = x.reshape(tuple(x.shape[:nb]) + (-1,))
    _put(args, kwargs, position, keyword, -1)
    out = func(*args, **kwargs)
    if hasattr(out, "_fields") and op_name(func) in ("max", "min", "median", "nanmedian"):
        out = out[0]  # without a dim these give the values only
    if keepdim is True:
        out = _map(out, lambda t: t.reshape(tuple(t.shape[:nb]) + (1,) * len(shape)))
    return rewrap(out, levels)


def joining(extra: int):
    """cat and stack: every tensor with its batch dims at full size, the dim shifted."""

    def rule(func, args, kwargs, levels):
        args, kwargs = list(args), dict(kwargs)
        tensors = list(args[0])
        ndim = max(_ndim(t) for t in tensors) + extra
        d = _get(args, kwargs, 1, "dim", 0)
        _put(args, kwargs, 1, "dim", _shifted(d, ndim, len(levels), op_name(func)))
        args[0] = [physical(t, levels, expand=True) for t in tensors]
        return rewrap(func(*args, **kwargs), levels)

    return rule


# ---- views and shapes

def _sizes(args, start: int) -> tuple:
    rest = args[start:]
    if len(rest) == 1 and isinstance(rest[0], (tuple, list, Size)):
        return tuple(rest[0])
    return tuple(rest)


def reshaping(func, args, kwargs, levels):
    """view and reshape: the batch sizes in front of the requested sample shape."""
    x = physical(args[0], levels)
    shape = tuple(kwargs.get("shape", ())) or _sizes(args, 1)
    return batched(func(x, tuple(x.shape[:len(levels)]) + shape), levels)


def reshaping_as(func, args, kwargs, levels):
    return batched(physical(args[0], levels).reshape(
        tuple(size_of(lv) for lv in levels) + tuple(logical_shape(args[1]))), levels) \
        if set(getattr(args[0], "_levels", ())) == set(levels) else \
        reshaping(ember.Tensor.reshape, (args[0], tuple(logical_shape(args[1]))), {}, levels)


def expanding(func, args, kwargs, levels):
    """expand: sample dims padded to the requested rank, the batch dims kept (-1)."""
    sizes = tuple(kwargs.get("size", ())) or _sizes(args, 1)
    x = _pad_matrix(physical(args[0], levels), len(levels), len(sizes))  # (an unbatched input gets batch dims of 1)
    return batched(x.expand((-1,) * len(levels) + sizes), levels)


def expanding_as(func, args, kwargs, levels):
    return expanding(func, (args[0], tuple(logical_shape(args[1]))), {}, levels)


def permuting(func, args, kwargs, levels):
    dims = tuple(kwargs.get("dims", ())) or _sizes(args, 1)
    nb, ndim = len(levels), _ndim(args[0])
    x = physical(args[0], levels)
    order = tuple(range(nb)) + tuple(_shifted(d, ndim, nb, "permute") for d in dims)
    return batched(x.permute(order), levels)


def transposing_last(func, args, kwargs, levels):
    """t, T, mT: the sample's last two dims swapped (t and T leave a 0-d or 1-d sample as it is)."""
    x = physical(args[0], levels)
    if _ndim(args[0]) < 2:
        return batched(x, levels)
    if op_name(func) == "T.__get__":
        nb = len(levels)
        return batched(x.permute(tuple(range(nb)) + tuple(range(x.dim() - 1, nb - 1, -1))), levels)
    return batched(x.transpose(-2, -1), levels)


def flattening(func, args, kwargs, levels):
    ndim, nb = _ndim(args[0]), len(levels)
    x = physical(args[0], levels)
    if ndim == 0:
        return batched(x.reshape(tuple(x.shape) + (1,)), levels)
    start = _shifted(_get(args, kwargs, 1, "start_dim", 0), ndim, nb, "flatten")
    end = _shifted(_get(args, kwargs, 2, "end_dim", -1), ndim, nb, "flatten")
    return batched(x.flatten(start, end), levels)


def squeezing(func, args, kwargs, levels):
    d = _get(args, kwargs, 1, "dim", None)
    if d is None:  # every sample dim of size 1, never a batch dim
        shape = logical_shape(args[0])
        d = tuple(i for i, n in enumerate(shape) if n == 1)
    return along(Dims((1, "dim")))(func, (args[0], d), {}, levels)


def repeating(func, args, kwargs, levels):
    sizes = _sizes(args, 1)
    x = physical(args[0], levels, len(sizes))
    return batched(func(x, (1,) * len(levels) + sizes), levels)


def metadata_shape(func, args, kwargs, levels):
    name, shape = op_name(func), logical_shape(args[0])
    if name in ("shape.__get__",):
        return shape
    if name == "size":
        d = _get(args, kwargs, 1, "dim", None)
        return shape if d is None else shape[d]
    if name in ("dim", "ndim.__get__", "ndimension"):
        return len(shape)
    if name == "__len__":
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]
    return math.prod(shape)  # numel, nelement


def metadata_strides(func, args, kwargs, levels):
    """stride and is_contiguous of a sample: its physical strides without the batch dims, as torch reports them."""
    from ember._dim_order import is_contiguous_as
    from ember._tensor import torch_strides

    x = args[0]
    strides, shape = torch_strides(x._value._data)[len(x._levels):], tuple(logical_shape(x))
    if op_name(func) == "stride":
        d = _get(args, kwargs, 1, "dim", None)
        return strides if d is None else strides[d]
    layout = _get(args, kwargs, 1, "memory_format", ember.contiguous_format)
    if layout is not ember.contiguous_format:
        raise RuntimeError(f"NYI: querying is_contiguous inside of vmap for memory_format other than "
                           f"ember.contiguous_format (got {layout}); ask outside vmap, on the whole batch")
    return math.prod(shape) == 0 or is_contiguous_as(shape, strides, layout)


def metadata_of_physical(func, args, kwargs, levels):
    """Facts a sample shares with the whole batch (is_conj, is_neg, is_inference, storage_offset, type() as a
    name), read from the physical tensor; nbytes counts the sample's elements only. type(dtype) converts."""
    x, name = args[0], op_name(func)
    if name == "nbytes.__get__":
        return math.prod(logical_shape(x)) * x._value.itemsize
    if name == "type" and (len(args) > 1 or kwargs):
        return pointwise(func, args, kwargs, levels)
    return func(x._value)


def data_dependent(func, args, kwargs, levels):
    name = op_name(func)
    if name in ("item", "tolist", "numpy", "__float__", "__int__", "__index__", "__complex__"):
        raise RuntimeError(
            f"vmap: It looks like you're calling .{name.strip('_')}() on a Tensor. We don't support vmap over calling "
            f".{name.strip('_')}() on a Tensor, please try to rewrite what you're doing with other operations"
        )
    if name in _DYNAMIC_SHAPE:
        raise RuntimeError(f"vmap: We do not support batching operators that can output dynamic shape. Attempted to "
                           f"vmap over ember.{name}: each sample's result would have a shape of its own. Compute it "
                           "outside vmap, or use a fixed-shape form (ember.where, a mask multiplied in)")
    if name == "masked_select" and type(_get(args, kwargs, 1, "mask")) is not BatchedTensor:
        x, mask = args[0], _get(args, kwargs, 1, "mask")
        shape = ember.broadcast_shapes(tuple(logical_shape(x)), tuple(mask.shape))
        p = physical(x.expand(shape), levels)  # one mask for every sample: each selects as many elements
        return batched(p[(slice(None),) * len(levels) + (mask.expand(shape),)], levels)
    if name == "masked_select":
        raise RuntimeError("vmap: Attempted to vmap over `mask` in ember.masked_select(self, mask) We cannot support "
                           "this because for each batch this would return a differently shaped Tensor. Use "
                           "ember.where(mask, self, 0) instead")
    raise RuntimeError(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow "
        f"(ember.{name}). We don't support that: the samples may disagree. Use ember.where, or compute outside vmap"
    )


_DYNAMIC_SHAPE = {"nonzero", "unique", "unique_consecutive", "argwhere"}


def requires_grad_(func, args, kwargs, levels):
    physical(args[0], levels).requires_grad_(*args[1:], **kwargs)
    return args[0]


# ---- products

def matmul(func, args, kwargs, levels):
    """matmul and its family, by the sample ranks; an unbatched matrix on the right multiplies the whole batch."""
    a, b = args[0], args[1]
    if op_name(func) == "__rmatmul__":
        a, b = b, a
    na, nb_ = _ndim(a), _ndim(b)
    if na == 0 or nb_ == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb_}D")
    if type(b) is not BatchedTensor and nb_ == 2:
        return batched(ember.matmul(_dense(physical(a, levels)), b), levels)  # one product for the whole batch
    pa, pb = physical(a, levels), physical(b, levels)
    if type(a) is not BatchedTensor and na == 2 and nb_ == 1:  # one matrix by a vector per sample: one product
        return batched(ember.matmul(_dense(pb), a.mT), levels)
    if na == 1:
        pa = pa.unsqueeze(-2)
    if nb_ == 1:
        pb = pb.unsqueeze(-1)
    rank = max(na, nb_, 2)
    pa, pb = _pad_matrix(pa, len(levels), rank), _pad_matrix(pb, len(levels), rank)
    out = stacked_product(pa, pb)  # (the weight per sample is often one weight, expanded)
    if nb_ == 1:
        out = out.squeeze(-1)
    if na == 1:
        out = out.squeeze(-2 if nb_ != 1 else -1)
    return batched(out, levels)


def _dense(p: Tensor) -> Tensor:
    """``p``, copied if it is expanded (a zero stride): BLAS takes no such operand, and NumPy's fallback is slow."""
    return p.contiguous() if 0 in p._data.strides and p._data.size > 1 else p


def _pad_matrix(p: Tensor, nb: int, rank: int) -> Tensor:
    shape = tuple(p.shape)
    missing = rank - (len(shape) - nb)
    return p.reshape(shape[:nb] + (1,) * missing + shape[nb:]) if missing > 0 else p


def checked_matmul(ranks: tuple):
    def rule(func, args, kwargs, levels):
        got = (_ndim(args[0]), _ndim(args[1]))
        if got != ranks:
            raise RuntimeError(f"{op_name(func)}: expected {ranks[0]}-D and {ranks[1]}-D tensors, got {got[0]}-D and "
                               f"{got[1]}-D")
        return matmul(func, args[:2], {}, levels)
    return rule


def addmm(func, args, kwargs, levels):
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    product = ember.matmul(args[1], args[2])
    return beta * args[0] + alpha * product if (beta, alpha) != (1, 1) else args[0] + product


def linear(func, args, kwargs, levels):
    x, w = args[0], args[1]
    b = _get(args, kwargs, 2, "bias", None)
    out = ember.matmul(x, w.mT) if _ndim(w) == 2 else ember.matmul(x, w)
    return out if b is None else out + b


def outer(func, args, kwargs, levels):
    return args[0].unsqueeze(-1) * args[1]


def einsum(func, args, kwargs, levels):
    """Each operand's batch dims get letters of their own, in front of its term (before its '...')."""
    equation, operands = args[0], args[1:]
    if not isinstance(equation, str):  # the sublist form: einsum(a, [0, 1], b, [1, 2], [2, 0])
        equation, operands = _sublist_equation(args)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if not arrow:  # the implicit output: '...' first, then the letters used once, in alphabetical order
        letters = [c for c in lhs if c.isalpha()]
        rhs = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation][:len(levels)]
    prefix = "".join(free)
    physicals = [physical(t, levels, expand=True) for t in operands]
    return batched(ember.einsum(",".join(prefix + term for term in terms) + "->" + prefix + rhs, *physicals), levels)


def _sublist_equation(args: tuple) -> tuple:
    letters = "abcdefghijklmnopqrstuvwxyz"
    spell = lambda dims: "".join("..." if d is Ellipsis else letters[d] for d in dims)  # noqa: E731
    pairs = list(args)
    output = pairs.pop() if len(pairs) % 2 else None
    operands, terms = pairs[0::2], [spell(d) for d in pairs[1::2]]
    equation = ",".join(terms) + ("->" + spell(output) if output is not None else "")
    return equation, tuple(operands)


# ---- indexing

def _key_tuple(key) -> tuple:
    return key if type(key) is tuple else (key,)


def getitem(func, args, kwargs, levels):
    x, key = args[0], _key_tuple(args[1])
    if not levels_in(key, set()):
        return batched(_index_physical(physical(x, levels), key, len(levels)), levels)
    return batched(_batched_index(physical(x, levels, expand=True), key, levels), levels)


def _advanced(k) -> bool:
    return isinstance(k, Tensor) or isinstance(k, (list, tuple))


def _index_physical(p: Tensor, key: tuple, nb: int) -> Tensor:
    """``p[batch..., *key]``; when the key's index tensors are apart, the result has them first: move the batch back."""
    positions = [i for i, k in enumerate(key) if _advanced(k)]
    out = p[(slice(None),) * nb + key]
    if len(positions) > 1 and positions[-1] - positions[0] + 1 != len(positions):
        index_rank = len(ember.broadcast_shapes(*[tuple(ember.as_tensor(key[i]).shape) for i in positions]))
        out = out.movedim(tuple(range(index_rank, index_rank + nb)), tuple(range(nb)))
    return out


def _batched_index(p: Tensor, key: tuple, levels: tuple) -> Tensor:
    """Indexing with batched index tensors: each sample's index picks from that sample, through arange indices."""
    nb = len(levels)
    positions = [i for i, k in enumerate(key) if _advanced(k)]
    if any(isinstance(k, Tensor) and k.dtype == ember.bool for k in key):
        raise RuntimeError("vmap: We do not support batching operators that can support dynamic shape. Attempting "
                           "to batch over indexing with a boolean mask. Use ember.where(mask, x, 0) instead")
    if Ellipsis in key or None in key:
        raise RuntimeError("vmap: indexing with a batched boolean mask, '...' or None is not supported "
                           "(the result's shape would differ between samples); use ember.where or index_select")
    if positions != list(range(positions[0], positions[-1] + 1)):
        raise RuntimeError("vmap: batched index tensors must be next to each other in the index")
    index_rank = len(ember.broadcast_shapes(*[tuple(logical_shape(ember.as_tensor(key[i]))) for i in positions]))
    aranges = tuple(ember.arange(size_of(lv)).reshape((1,) * i + (-1,) + (1,) * (nb - 1 - i + index_rank))
                    for i, lv in enumerate(levels))
    physical_key = tuple(physical(ember.as_tensor(k), levels, index_rank) if _advanced(k) else k for k in key)
    out = p[aranges + physical_key]
    lead = positions[0]  # sample dims sliced before the index tensors: torch puts them before the index's dims
    if lead:
        out = out.movedim(tuple(range(nb + index_rank, nb + index_rank + lead)), tuple(range(nb, nb + lead)))
    return out


def _refuse_inplace_on_unbatched(op: str) -> None:
    raise RuntimeError(
        f"vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that "
        "has more elements than `self`. This happened due to `other` being vmapped over but `self` not being "
        "vmapped over in a vmap. Please try to use out-of-place operators instead of inplace operators"
    )


def setitem(func, args, kwargs, levels):
    x, key, value = args[0], _key_tuple(args[1]), args[2]
    if type(x) is not BatchedTensor or set(x._levels) != set(levels):
        _refuse_inplace_on_unbatched("__setitem__")
    p = physical(x, levels)
    if levels_in(key, set()):
        raise RuntimeError("vmap: assigning through batched index tensors is not supported; use scatter or where")
    target = _index_physical(p, key, len(levels))
    p[(slice(None),) * len(levels) + key] = physical(value, levels, target.dim() - len(levels)) \
        if isinstance(value, Tensor) else value
    return None


def inplace(func, args, kwargs, levels):
    """``x.op_(...)``: the op out of place, copied into ``x``'s batch; ``x`` must be batched wherever the result is."""
    name = op_name(func)
    self = args[0]
    if type(self) is not BatchedTensor or not set(levels) <= set(self._levels):
        _refuse_inplace_on_unbatched(name)
    out_of_place = getattr(ember.Tensor, name[:-1])
    result = out_of_place(*args, **kwargs)
    physical(self, self._levels).copy_(physical(result, self._levels))
    return self


def copy_(func, args, kwargs, levels):
    self = args[0]
    if type(self) is not BatchedTensor or not set(levels) <= set(self._levels):
        _refuse_inplace_on_unbatched("copy_")
    physical(self, self._levels).copy_(physical(args[1], self._levels, _ndim(self)), *args[2:], **kwargs)
    return self


def direct_inplace(func, args, kwargs, levels):
    """In-place ops that take no sample tensor besides ``self`` (zero_, fill_ with a number)."""
    self = args[0]
    if type(self) is not BatchedTensor:
        _refuse_inplace_on_unbatched(op_name(func))
    func(physical(self, self._levels), *args[1:], **kwargs)
    return self


# ---- nn: convolution, pooling, normalisation, losses

def folding(full_ndim: int):
    """Ops on a batch of ``(N, C, *spatial)`` inputs (pooling ...): the vmap batch folds into N."""

    def rule(func, args, kwargs, levels):
        x = physical(args[0], levels)
        nb, ndim = len(levels), _ndim(args[0])
        if any(isinstance(t, BatchedTensor) for t in _tensors(list(args[1:]) + list(kwargs.values()), [])):
            raise RuntimeError(f"vmap: {op_name(func)} has a batching rule for its input only; its other tensors "
                               "must be the same for every sample")
        batch = tuple(x.shape[:nb])
        folded = x.reshape((-1,) + tuple(x.shape[nb + (ndim == full_ndim):]))
        out = func(folded, *args[1:], **kwargs)
        keep = 1 if ndim == full_ndim else 0
        unfold = lambda t: t.reshape(batch + (tuple(x.shape[nb:nb + 1]) if keep else ()) + tuple(t.shape[1:]))  # noqa
        return rewrap(_map(out, unfold), levels)

    return rule


_CONV_OPTIONS = ("stride", "padding", "dilation", "groups")


def conv(spatial: int, options: tuple = _CONV_OPTIONS):
    """conv and conv_transpose (``options``: the order of their positional options after the bias)."""
    fold = folding(spatial + 2)

    def rule(func, args, kwargs, levels):
        weight = _get(args, kwargs, 1, "weight")
        bias = _get(args, kwargs, 2, "bias", None)
        if type(weight) is not BatchedTensor and type(bias) is not BatchedTensor:
            return fold(func, args, kwargs, levels)
        return _conv_per_sample_weights(func, args, kwargs, levels, spatial, options)

    return rule


def _conv_per_sample_weights(func, args, kwargs, levels, spatial, names: tuple):
    """A batch of weights: the batch becomes groups of one grouped convolution (each sample sees its own weight;
    a transposed convolution's weight also has its input channels first). ``names``: the options' order."""
    nb = len(levels)
    x, weight = args[0], _get(args, kwargs, 1, "weight")
    bias = _get(args, kwargs, 2, "bias", None)
    options = dict(zip(names, args[3:]))
    options.update({k: v for k, v in kwargs.items() if k not in ("weight", "bias")})
    groups = options.pop("groups", 1)
    unbatched_sample = _ndim(x) == spatial + 1
    px = physical(x, levels, expand=True)
    if unbatched_sample:
        px = px.unsqueeze(nb)
    batch = tuple(px.shape[:nb])
    g = math.prod(batch)
    px = px.reshape((g,) + tuple(px.shape[nb:]))  # (G, N, C, *sp)
    n, c = px.shape[1], px.shape[2]
    px = px.transpose(0, 1).reshape((n, g * c) + tuple(px.shape[3:]))
    pw = physical(weight, levels, expand=True)
    pw = pw.reshape((g * pw.shape[nb],) + tuple(pw.shape[nb + 1:]))
    pb = None
    if bias is not None:
        pb = physical(bias, levels, expand=True).reshape(-1)
    out = func(px, pw, pb, groups=groups * g, **options)  # (N, G*O, *sp')
    out = out.reshape((n, g, -1) + tuple(out.shape[2:])).transpose(0, 1)
    out = out.reshape(batch + tuple(out.shape[1:]))
    if unbatched_sample:
        out = out.squeeze(nb)
    return batched(out, levels)


def layer_norm(func, args, kwargs, levels):
    x, shape = args[0], args[1]
    weight = _get(args, kwargs, 2, "weight", None)
    bias = _get(args, kwargs, 3, "bias", None)
    eps = _get(args, kwargs, 4, "eps", 1e-5)
    out = batched(func(physical(x, levels), shape, None, None, eps), levels)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def batch_norm(func, args, kwargs, levels):
    """Outside training, an affine map per channel (dim 1). In training, each sample's own batch normalised by
    its statistics, when there are no running statistics to update (track_running_stats=False, or after
    ``replace_all_batch_norm_modules_``); updating shared ones in place per sample is refused."""
    names = ("running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")
    given = dict(zip(names, args[1:]), **kwargs)
    x = args[0]
    n = _ndim(x)
    if given.get("training", False):
        if given.get("running_mean") is not None or given.get("running_var") is not None:
            raise RuntimeError(
                "vmap: batch_norm in training mode computes statistics over the batch and updates its running "
                "statistics in place, which has no meaning per sample. Put the module in eval mode, or build it "
                "with track_running_stats=False (or call ember.func.replace_all_batch_norm_modules_ on it) and "
                "give each sample its own batch dim"
            )
        out = _normalised_per_sample(func, x, given.get("eps", 1e-5), levels)
    else:
        out = (x - _per_channel(given["running_mean"], n)) / (_per_channel(given["running_var"], n) +
                                                              given.get("eps", 1e-5)).sqrt()
    if given.get("weight") is not None:
        out = out * _per_channel(given["weight"], n)
    return out if given.get("bias") is None else out + _per_channel(given["bias"], n)


def _normalised_per_sample(func, x, eps: float, levels) -> Tensor:
    """Batch norm in training without running statistics, each sample's batch (N, C, *) by its own statistics:
    the vmap batch folds into the channels, which batch norm normalises independently of each other."""
    shape = tuple(logical_shape(x))
    if len(shape) < 2:
        raise ValueError(f"batch_norm: expected an input of at least 2 dims [N, C, *], got {list(shape)}")
    if math.prod(shape) // max(shape[1], 1) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {ember.Size(shape)}")
    nb = len(levels)
    p = physical(x, levels, expand=True)
    batch, (n, c), positions = tuple(p.shape[:nb]), tuple(p.shape[nb:nb + 2]), tuple(p.shape[nb + 2:])
    g = math.prod(batch)
    folded = p.reshape((g, n, c) + positions).transpose(0, 1).reshape((n, g * c) + positions)
    out = func(folded, None, None, None, None, True, 0.0, eps)
    out = out.reshape((n, g, c) + positions).transpose(0, 1).reshape(batch + (n, c) + positions)
    return batched(out, levels)


def _per_channel(t: Tensor, sample_ndim: int) -> Tensor:
    """A per-channel parameter shaped to multiply samples whose channel dim is 1."""
    return t.reshape((-1,) + (1,) * (sample_ndim - 2)) if sample_ndim >= 2 else t


def group_norm(func, args, kwargs, levels):
    """The vmap batch folds into N; the affine part, which may be per sample, is applied after."""
    given = dict(zip(("num_groups", "weight", "bias", "eps"), args[1:]), **kwargs)
    x, nb = args[0], len(levels)
    p = physical(x, levels)
    out = func(p.reshape((-1,) + tuple(p.shape[nb + 1:])), given["num_groups"], None, None, given.get("eps", 1e-5))
    out = batched(out.reshape(tuple(p.shape)), levels)
    if given.get("weight") is not None:
        out = out * _per_channel(given["weight"], _ndim(x))
    return out if given.get("bias") is None else out + _per_channel(given["bias"], _ndim(x))


def prelu(func, args, kwargs, levels):
    x, weight = args[0], _get(args, kwargs, 1, "weight")
    return ember.where(x > 0, x, x * _per_channel(weight, _ndim(x)))


_REDUCTIONS = {"mean": lambda t, nb: t.reshape(tuple(t.shape[:nb]) + (-1,)).mean(-1),
               "sum": lambda t, nb: t.reshape(tuple(t.shape[:nb]) + (-1,)).sum(-1)}


def elementwise_loss(func, args, kwargs, levels):
    """Losses that are a mean or sum of per-element terms: the terms batched, reduced per sample."""
    kwargs = dict(kwargs)
    reduction = kwargs.pop("reduction", "mean")
    kwargs["reduction"] = "none"
    terms = pointwise(func, args, kwargs, levels)
    if reduction == "none":
        return terms
    p, nb = physical(terms, levels), len(levels)
    if reduction == "batchmean":
        shape = logical_shape(terms)
        return batched(_REDUCTIONS["sum"](p, nb) / (shape[0] if shape else 1), levels)
    return batched(_REDUCTIONS[reduction](p, nb), levels)


def class_loss(func, args, kwargs, levels):
    """cross_entropy and nll_loss: the batch folds into N; the mean is taken per sample, with the weights torch uses."""
    kwargs = dict(kwargs)
    x, target = args[0], args[1]
    weight = _get(args, kwargs, 2, "weight", None)
    reduction = kwargs.pop("reduction", "mean")
    ignore_index = kwargs.get("ignore_index", -100)
    nb = len(levels)
    px, pt = physical(x, levels, expand=True), physical(target, levels, expand=True)
    if _ndim(x) == 1:  # one sample of class scores: a batch of one
        px, pt = px.unsqueeze(nb), pt.unsqueeze(nb)
    batch = tuple(px.shape[:nb])
    g = math.prod(batch)
    px = px.reshape((-1,) + tuple(px.shape[nb + 1:]))
    pt = pt.reshape((-1,) + tuple(pt.shape[nb + 1:]))
    kwargs["reduction"] = "none"
    terms = func(px, pt, *args[2:], **kwargs).reshape(batch + (-1,))
    if reduction == "none":
        return batched(terms.reshape(batch + tuple(logical_shape(target))), levels)
    total = terms.sum(-1)
    if reduction == "sum":
        return batched(total, levels)
    if pt.dtype.is_floating_point:  # class probabilities: a plain mean over the elements
        return batched(total / terms.shape[-1], levels)
    kept = (pt != ignore_index).to(px.dtype)
    if weight is not None:
        kept = kept * ember.as_tensor(weight)[pt.clamp(0, px.shape[1] - 1)]
    return batched(total / kept.reshape((g, -1)).sum(-1).reshape(batch), levels)


def embedding(func, args, kwargs, levels):
    weight = _get(args, kwargs, 1, "weight")
    if type(weight) is not BatchedTensor:
        return batched(func(physical(args[0], levels), weight, *args[2:], **kwargs), levels)
    return getitem(ember.Tensor.__getitem__, (weight, args[0]), {}, levels)


# ---- random ops (see _vmap.py for randomness='same' and 'error')

def random_like(func, args, kwargs, levels):
    return batched(func(physical(args[0], levels), *args[1:], **kwargs), levels)


# ---- the table

def _all(names: str, rule) -> dict:
    return {name: rule for name in names.split()}


_POINTWISE = """
abs absolute acos arccos acosh arccosh add addcdiv addcmul angle asin arcsin asinh arcsinh atan arctan atan2 arctan2
atanh arctanh bitwise_and bitwise_not bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift ceil clamp clip
clamp_max clamp_min copysign cos cosh deg2rad digamma div divide true_divide erf erfc erfinv exp exp2 expm1 fix
float_power floor floor_divide fmax fmin fmod frac gcd lcm ge gt le lt eq ne greater greater_equal less less_equal
not_equal heaviside hypot i0 igamma igammac isfinite isinf isnan isneginf isposinf isreal lerp lgamma log log10 log1p
log2 logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logit maximum minimum mul multiply nan_to_num
neg negative nextafter polygamma positive pow rad2deg reciprocal remainder round rsqrt sgn sigmoid sign signbit sin sinc
sinh sqrt square sub subtract rsub tan tanh trunc where xlogy ldexp mvlgamma masked_fill relu
__and__ __or__ __xor__ __rand__ __ror__ __rxor__ __invert__ __lshift__ __rshift__ __rlshift__ __rrshift__ __mod__
__rmod__ __pow__ __rpow__ __rsub__ __rtruediv__ __rdiv__ __floordiv__ __rfloordiv__ __truediv__ __div__ __eq__
float double half int long bool byte char short to type_as clone contiguous detach alias resolve_conj resolve_neg
conj conj_physical zeros_like ones_like empty_like full_like fill tril triu
celu elu gelu hardshrink hardsigmoid hardswish hardtanh leaky_relu logsigmoid mish relu6 selu silu softplus softshrink
softsign tanhshrink threshold pairwise_distance one_hot
bessel_j0 bessel_j1 bessel_y0 bessel_y1 entr erfcx expit gammainc gammaincc gammaln i0e i1 i1e log_ndtr ndtr ndtri
multigammaln xlog1py zeta modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1
scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 chebyshev_polynomial_t
chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he
laguerre_polynomial_l legendre_polynomial_p shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w broadcast_tensors
"""

_REDUCTIONS_WITH_DIM = """
sum mean prod amax amin max min argmax argmin std var logsumexp all any count_nonzero nansum nanmean median nanmedian
std_mean var_mean aminmax
"""

# ops on the last two dims of one tensor that already take any leading dims as a batch
_ON_LAST_TWO_DIMS = """
det logdet slogdet inverse matrix_exp matrix_power cholesky pinverse linalg.det linalg.inv linalg.inv_ex
linalg.cholesky linalg.cholesky_ex linalg.matrix_exp linalg.slogdet linalg.eigh linalg.eigvalsh linalg.svd
linalg.svdvals linalg.qr linalg.matrix_power
"""


def padded(func, args, kwargs, levels):
    """pad: its constant mode as a pointwise op; the others take a sample of ``dims + 1`` dims or a batch of
    them (``dims + 2``), so the vmap batch dims and the sample's own leading dims become one batch dim."""
    x, pad = args[0], (args[1] if len(args) > 1 else kwargs["pad"])
    mode = args[2] if len(args) > 2 else kwargs.get("mode", "constant")
    if mode == "constant" or type(x) is not BatchedTensor or any(type(a) is BatchedTensor for a in args[1:]):
        return pointwise(func, args, kwargs, levels)
    value = physical(x, levels)
    logical, kept = logical_shape(x), len(pad) // 2 + 1
    if len(logical) not in (kept, kept + 1) or not 2 <= kept <= 4:  # the sample's own error, unbatched
        func(value[(0,) * len(levels)] if value.numel() else ember.empty(logical, dtype=value.dtype), *args[1:],
             **kwargs)
    leading = value.shape[:len(levels)] + logical[:len(logical) - kept]
    out = func(value.reshape((-1,) + tuple(logical[len(logical) - kept:])), *args[1:], **kwargs)
    return batched(out.reshape(tuple(leading) + tuple(out.shape[1:])), levels)


def trace(func, args, kwargs, levels):
    if _ndim(args[0]) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {_ndim(args[0])}")
    return batched(physical(args[0], levels).diagonal(dim1=-2, dim2=-1).sum(-1), levels)


RULES: dict = {}
RULES.update(_all(_POINTWISE, pointwise))
RULES["pad"] = padded
RULES.update(_all(_REDUCTIONS_WITH_DIM, along(Dims((1, "dim"), reduce=True))))
RULES.update(_all("norm linalg.vector_norm", along(Dims((2, "dim"), reduce=True))))
RULES.update(_all("softmax log_softmax softmin cumsum cumprod logcumsumexp cummax cummin sort argsort msort",
                  along(Dims((1, "dim", -1)))))
RULES.update(_all("kthvalue topk", along(Dims((2, "dim", -1)))))
RULES.update(_all("mode glu", along(Dims((1, "dim", -1)))))
RULES.update(_all("unbind split_dim", along(Dims((1, "dim", 0)))))
RULES.update(_all("split chunk tensor_split", along(Dims((2, "dim", 0)))))
RULES.update(_all("narrow narrow_copy select gather scatter scatter_add scatter_reduce unflatten", along(Dims((1, "dim")))))
RULES.update(_all("index_select index_add index_copy index_fill", along(Dims((1, "dim"), plain=(2,)))))
RULES["take_along_dim"] = along(Dims((2, "dim")))
RULES.update(_all("transpose swapaxes swapdims", along(Dims((1, "dim0"), (2, "dim1")))))
RULES.update(_all("movedim moveaxis", along(Dims((1, "source"), (2, "destination")))))
RULES.update(_all("diagonal", along(Dims((2, "dim1", 0), (3, "dim2", 1)))))
RULES.update(_all("diag_embed", along(Dims((2, "dim1", -2), (3, "dim2", -1), extra=1))))
RULES.update(_all("flip", along(Dims((1, "dims")))))
RULES.update(_all("roll", along(Dims((2, "dims")))))
RULES.update(_all("diff", along(Dims((2, "dim", -1)))))
RULES.update(_all("normalize cosine_similarity", along(Dims((2, "dim", 1)))))
RULES.update(_all("cross linalg.cross", along(Dims((2, "dim", -1)))))
RULES.update(_all("unsqueeze", along(Dims((1, "dim"), extra=1))))
RULES["squeeze"] = squeezing
RULES["cat"] = RULES["concat"] = RULES["concatenate"] = joining(0)
RULES["stack"] = joining(1)
RULES.update(_all("view reshape", reshaping))
RULES.update(_all("view_as reshape_as", reshaping_as))
RULES["expand"] = RULES["broadcast_to"] = expanding
RULES["expand_as"] = expanding_as
RULES["permute"] = permuting
RULES.update(_all("t T.__get__ mT.__get__ adjoint", transposing_last))
RULES["flatten"] = RULES["ravel"] = flattening
RULES.update(_all("repeat tile", repeating))
RULES.update(_all("shape.__get__ size dim ndim.__get__ ndimension numel nelement __len__", metadata_shape))
RULES.update(_all("stride is_contiguous", metadata_strides))
RULES.update(_all("is_conj is_neg is_inference storage_offset nbytes.__get__ type", metadata_of_physical))
RULES.update(_all("dtype.__get__ device.__get__ is_floating_point is_complex element_size itemsize.__get__ "
                  "requires_grad.__get__ is_leaf.__get__ grad_fn.__get__ is_signed new_tensor get_device",
                  unbatched_result))
RULES.update(_all("new_zeros new_ones new_full new_empty", new_per_sample))
RULES.update(_all("item tolist numpy __float__ __int__ __index__ __complex__ __bool__ is_nonzero equal allclose "
                  "nonzero masked_select unique unique_consecutive argwhere data_ptr", data_dependent))
RULES["requires_grad_"] = requires_grad_
RULES.update(_all("matmul __rmatmul__", matmul))
RULES["mm"] = checked_matmul((2, 2))
RULES["bmm"] = checked_matmul((3, 3))
RULES["mv"] = checked_matmul((2, 1))
RULES["dot"] = RULES["inner"] = checked_matmul((1, 1))
RULES["addmm"] = addmm
RULES["linear"] = linear
RULES["outer"] = RULES["ger"] = outer
RULES["einsum"] = einsum
RULES["__getitem__"] = getitem
RULES["__setitem__"] = setitem
RULES["copy_"] = copy_
RULES.update(_all("zero_ fill_", direct_inplace))
RULES["conv1d"], RULES["conv2d"], RULES["conv3d"] = conv(1), conv(2), conv(3)
RULES.update(_all("max_pool1d avg_pool1d adaptive_avg_pool1d", folding(3)))
RULES.update(_all("max_pool2d avg_pool2d adaptive_avg_pool2d adaptive_max_pool2d lp_pool2d", folding(4)))
RULES.update(_all("max_pool3d avg_pool3d adaptive_avg_pool3d", folding(5)))
RULES.update(_all(_ON_LAST_TWO_DIMS, pointwise))
RULES["trace"] = trace
RULES["layer_norm"] = layer_norm
RULES["batch_norm"] = batch_norm
RULES["group_norm"] = group_norm
RULES["prelu"] = prelu
RULES.update(_all("mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy binary_cross_entropy_with_logits "
                  "soft_margin_loss kl_div poisson_nll_loss hinge_embedding_loss margin_ranking_loss "
                  "gaussian_nll_loss", elementwise_loss))
RULES.update(_all("cross_entropy nll_loss", class_loss))
RULES["embedding"] = embedding
RULES.update(_all("rand_like randn_like randint_like bernoulli poisson", random_like))
RULES.update(_all("nonzero_static", declined(
    "its batched form needs each sample's own positions of its nonzeros, and no rule is written for it yet")))
RULES.update(_all("bincount histc histogram", declined(
    "its counts are per sample and its range may come from each sample's values; no rule is written for it yet")))

from ember.func import _rules_more  # noqa: E402,F401  (more rules: linalg's leading batches, composed ops)
from ember.func import _backward, _rules_builtin  # noqa: E402,F401  (autograd.grad on batched gradients)
