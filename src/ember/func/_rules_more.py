"""More batching rules (see ``_rules.py``): ops on leading batches, and ops written as other batched ops.

Two kinds of rule live here. Many linalg ops already take any leading dims as a batch: their
operands get every level's batch dim at full size, each keeping its own sample rank. Other ops
are written in terms of ops that have rules (``hstack`` is ``atleast_1d`` then ``cat`` ...): the
rule calls those on the batched tensors, so each runs once for the whole batch.
"""
from __future__ import annotations

import math

import ember
from ember._tensor import Tensor
from ember.func._batched import BatchedTensor, UserCode, active, batched, logical_shape, physical, size_of
from ember.func._function import _Reentered
from ember.func._rules import (
    RULES, Dims, _all, _get, _ndim, _shifted, along, conv, decline, declined, op_name, pointwise, rewrap,
    transposing_last,
)


# ---- ops that take leading dims as a batch

# operands that hold one vector per matrix (pivots, tau): by position, and by keyword
_PER_MATRIX_VECTORS = {"linalg.lu_solve": (1,), "lu_solve": (2,), "lu_unpack": (1,), "linalg.ldl_solve": (1,),
                       "linalg.householder_product": (1,), "orgqr": (1,), "ormqr": (1,)}
_VECTOR_KEYWORDS = ("pivots", "LU_pivots", "tau")


def leading_batch(func, args, kwargs, levels, vectors: tuple | None = None):
    """Every tensor operand with the batch dims in front at full size. As in torch, the operands' own batch dims
    (all but the last two, or the last one for the vectors at positions ``vectors``: pivots, tau, right-hand
    sides) broadcast against each other: each operand's are padded to the widest (a sample's B against a
    sample's batch of A)."""
    vectors = _PER_MATRIX_VECTORS.get(op_name(func), ()) if vectors is None else vectors
    core = {("arg", i): 1 if i in vectors else min(_ndim(a), 2) for i, a in enumerate(args) if isinstance(a, Tensor)}
    core.update({("kw", k): 1 if k in _VECTOR_KEYWORDS else min(_ndim(v), 2)
                 for k, v in kwargs.items() if isinstance(v, Tensor)})
    operands = {("arg", i): a for i, a in enumerate(args)} | {("kw", k): v for k, v in kwargs.items()}
    widest = max((_ndim(operands[key]) - rank for key, rank in core.items()), default=0)

    def full(key):
        value = operands[key]
        return physical(value, levels, widest + core[key], expand=True) if key in core else value

    out = func(*[full(("arg", i)) for i in range(len(args))], **{k: full(("kw", k)) for k in kwargs})
    return rewrap(out, levels)


def _vectors_on_the_right(a, b) -> bool:
    """torch's rule for solve and lstsq: B holds vectors if it is 1-D, or has A's shape without its last dim."""
    return _ndim(b) == 1 or _ndim(b) == _ndim(a) - 1 and tuple(logical_shape(b)) == tuple(logical_shape(a))[:-1]


def with_tolerances(func, args, kwargs, levels):
    """linalg.pinv and linalg.matrix_rank: a tensor tolerance (atol, rtol, rcond, tol) holds one value per matrix,
    so it lines up with A's batch dims (all but its last two), not with the matrices' own dims."""
    a = args[0]
    tolerances = [v for v in list(args[1:]) + list(kwargs.values()) if isinstance(v, Tensor)]
    batch_ndim = max([_ndim(a) - 2] + [_ndim(t) for t in tolerances])

    def full(value, ndim):
        return physical(value, levels, ndim, expand=True) if isinstance(value, Tensor) else value

    out = func(full(a, batch_ndim + 2), *[full(v, batch_ndim) for v in args[1:]],
               **{k: full(v, batch_ndim) for k, v in kwargs.items()})
    return rewrap(out, levels)


def solve(func, args, kwargs, levels):
    """linalg.solve: a 1-D right-hand side is made a column first, so the batch never reads as its rows."""
    b = _get(args, kwargs, 1, "B")
    if _ndim(b) != 1 or _ndim(args[0]) != 2:
        return leading_batch(func, args, kwargs, levels, (1,) if _vectors_on_the_right(args[0], b) else ())
    rest = {k: v for k, v in kwargs.items() if k != "B"}
    out = leading_batch(func, (args[0], b.unsqueeze(-1)) + tuple(args[2:]), rest, levels)
    return (out.squeeze(-1) if isinstance(out, Tensor) else type(out)(out[0].squeeze(-1), *out[1:]))


def lstsq(func, args, kwargs, levels):
    """linalg.lstsq: B's batch dims broadcast against A's, B read as vectors by torch's rule."""
    b = _get(args, kwargs, 1, "B")
    return leading_batch(func, args, kwargs, levels, (1,) if _vectors_on_the_right(args[0], b) else ())


def vander(func, args, kwargs, levels):
    """ember.vander (decreasing powers unless ``increasing``) from linalg.vander (increasing ones)."""
    n = _get(args, kwargs, 1, "N", None)
    if n == 0 or logical_shape(args[0]).numel() == 0 and n is None:
        return args[0].unsqueeze(-1)[..., :0]
    out = ember.linalg.vander(args[0], N=n)
    return out if _get(args, kwargs, 2, "increasing", False) else out.flip(-1)


# ---- products written as matmul

def addmv(func, args, kwargs, levels):
    return _scaled_sum(args[0], ember.matmul(args[1], args[2]), kwargs)


def addr(func, args, kwargs, levels):
    return _scaled_sum(args[0], args[1].unsqueeze(-1) * args[2], kwargs)


def baddbmm(func, args, kwargs, levels):
    return _scaled_sum(args[0], ember.bmm(args[1], args[2]), kwargs)


def addbmm(func, args, kwargs, levels):
    return _scaled_sum(args[0], ember.bmm(args[1], args[2]).sum(0), kwargs)


def _scaled_sum(x, product, kwargs):
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    return (x if beta == 1 else beta * x) + (product if alpha == 1 else alpha * product)


def vdot(func, args, kwargs, levels):
    return (args[0].conj() * args[1]).sum()


def chain(func, args, kwargs, levels):
    """chain_matmul and linalg.multi_dot: a left-to-right chain of matmuls (multi_dot's 1-D ends as vectors)."""
    matrices = list(args[0]) if op_name(func) == "linalg.multi_dot" else list(args)
    out = matrices[0]
    for m in matrices[1:]:
        out = ember.matmul(out, m)
    return out


def tensordot(func, args, kwargs, levels):
    """tensordot of two samples as an einsum over named dims (the batch letters are added by einsum's rule)."""
    a, b = args[0], args[1]
    dims = _get(args, kwargs, 2, "dims", 2)
    na, nb = _ndim(a), _ndim(b)
    if isinstance(dims, int):
        dims = (list(range(na - dims, na)), list(range(dims)))
    da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ta = [next(letters) for _ in range(na)]
    tb = [next(letters) for _ in range(nb)]
    for i, j in zip(da, db):
        tb[j % nb] = ta[i % na]
    out = [c for i, c in enumerate(ta) if i not in {d % na for d in da}] + \
          [c for j, c in enumerate(tb) if j not in {d % nb for d in db}]
    return ember.einsum(f"{''.join(ta)},{''.join(tb)}->{''.join(out)}", a, b)


def kron(func, args, kwargs, levels):
    a, b = args[0], args[1]
    n = max(_ndim(a), _ndim(b))
    a, b = a.reshape((1,) * (n - _ndim(a)) + tuple(logical_shape(a))), b.reshape(
        (1,) * (n - _ndim(b)) + tuple(logical_shape(b)))
    sa, sb = logical_shape(a), logical_shape(b)
    spread_a = a.reshape(tuple(x for s in sa for x in (s, 1)))
    spread_b = b.reshape(tuple(x for s in sb for x in (1, s)))
    return (spread_a * spread_b).reshape(tuple(x * y for x, y in zip(sa, sb)))


# ---- views and shapes of one sample

def conj_transposing(func, args, kwargs, levels):
    return transposing_last(func, args, kwargs, levels).conj()


def diag(func, args, kwargs, levels):
    offset = _get(args, kwargs, 1, "diagonal", 0)
    x = args[0]
    if _ndim(x) == 1:
        return ember.diag_embed(x, offset=offset)
    return x.diagonal(offset=offset)


def diagflat(func, args, kwargs, levels):
    return ember.diag_embed(args[0].flatten(), offset=_get(args, kwargs, 1, "offset", 0))


def flipping(dim: int):
    return lambda func, args, kwargs, levels: args[0].flip(dim)


def flip(func, args, kwargs, levels):
    """flip(dims) and the method's flip(*dims)."""
    dims = kwargs.get("dims", args[1] if len(args) == 2 else tuple(args[1:]))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return along(Dims((1, "dims")))(func, (args[0], dims), {}, levels)


def roll(func, args, kwargs, levels):
    dims = _get(args, kwargs, 2, "dims", None)
    if dims is not None and dims != ():
        return along(Dims((2, "dims")))(func, args, kwargs, levels)
    p, nb = physical(args[0], levels), len(levels)
    flat = p.reshape(tuple(p.shape[:nb]) + (-1,)).roll(_get(args, kwargs, 1, "shifts"), -1)
    return batched(flat.reshape(tuple(p.shape)), levels)


def rot90(func, args, kwargs, levels):
    x, k = args[0], _get(args, kwargs, 1, "k", 1) % 4
    d0, d1 = _get(args, kwargs, 2, "dims", (0, 1))
    if k == 1:
        return x.flip(d1).transpose(d0, d1)
    if k == 2:
        return x.flip((d0, d1))
    return x.flip(d0).transpose(d0, d1) if k == 3 else x.clone()


def _at_least(x, rank: int):
    shape = tuple(logical_shape(x))
    if len(shape) >= rank:
        return x
    if rank == 3 and len(shape) == 2:
        return x.unsqueeze(-1)
    padded = {0: (1,) * rank, 1: (1,) + shape + (1,) * (rank - 2)}[len(shape)]
    return x.reshape(padded)


def at_least(rank: int):
    def rule(func, args, kwargs, levels):
        tensors = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        out = [_at_least(t, rank) for t in tensors]
        return out[0] if len(args) == 1 and isinstance(args[0], Tensor) else tuple(out)

    return rule


def stacking(func, args, kwargs, levels):
    """hstack, vstack (row_stack), dstack and column_stack: each sample's tensors shaped up, then one cat."""
    name, tensors = op_name(func), list(args[0])
    if name in ("vstack", "row_stack"):
        return ember.cat([_at_least(t, 2) for t in tensors], 0)
    if name == "dstack":
        return ember.cat([_at_least(t, 3) for t in tensors], 2)
    if name == "column_stack":
        return ember.cat([t.reshape((-1, 1)) if _ndim(t) < 2 else t for t in tensors], 1)
    tensors = [_at_least(t, 1) for t in tensors]
    return ember.cat(tensors, 0 if _ndim(tensors[0]) == 1 else 1)


def splitting(func, args, kwargs, levels):
    """hsplit, vsplit and dsplit: tensor_split along their dim, an int of sections dividing it exactly."""
    name, x, sections = op_name(func), args[0], args[1]
    dim = {"vsplit": 0, "dsplit": 2}.get(name, 1 if _ndim(x) > 1 else 0)
    if isinstance(sections, int) and logical_shape(x)[dim] % sections:
        raise RuntimeError(f"{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{logical_shape(x)[dim]} is not divisible by the split_size {sections}!")
    return ember.tensor_split(x, sections, dim)


def meshgrid(func, args, kwargs, levels):
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    order = list(range(len(tensors)))
    if kwargs.get("indexing", "ij") == "xy" and len(tensors) > 1:
        order[0], order[1] = 1, 0
    sizes = [logical_shape(tensors[i]).numel() for i in order]
    out = []
    for i, t in enumerate(tensors):
        place = order.index(i)
        out.append(t.reshape(tuple(-1 if d == place else 1 for d in range(len(sizes)))).expand(tuple(sizes)))
    return tuple(out)


def cartesian_prod(func, args, kwargs, levels):
    if len(args) == 1:
        return args[0]
    return ember.stack([g.flatten() for g in meshgrid(func, args, {}, levels)], 1)


def repeat_interleave(func, args, kwargs, levels):
    x, repeats = args[0], _get(args, kwargs, 1, "repeats", None)
    if repeats is None:  # repeat_interleave(counts): its length is the counts' sum
        decline("repeat_interleave", "counts alone give each sample a result of its own length")
    dim = _get(args, kwargs, 2, "dim", None)
    if dim is None:
        x, dim = x.flatten(), 0
    if isinstance(repeats, Tensor):
        if type(repeats) is BatchedTensor:
            decline("repeat_interleave", "batched repeats give each sample a result of its own length")
        index = ember.arange(logical_shape(x)[dim]).repeat_interleave(repeats)
        return x.index_select(dim, index)
    return along(Dims((2, "dim")))(func, (x, repeats, dim), {}, levels)


def msort(func, args, kwargs, levels):
    return args[0].sort(0).values


# ---- indexing by flat positions

def _flat_index(x, index):
    n = logical_shape(x).numel()
    return ember.where(index < 0, index + n, index)


def take(func, args, kwargs, levels):
    x, index = args[0], args[1]
    return x.reshape(-1).gather(0, _flat_index(x, index).reshape(-1)).reshape(tuple(logical_shape(index)))


def put(func, args, kwargs, levels):
    x, index, source = args[0], args[1], args[2]
    accumulate = _get(args, kwargs, 3, "accumulate", False)
    flat, where = x.reshape(-1), _flat_index(x, index).reshape(-1)
    values = source.reshape(-1)
    out = flat.scatter_add(0, where, values) if accumulate else flat.scatter(0, where, values)
    return out.reshape(tuple(logical_shape(x)))


def index_put(func, args, kwargs, levels):
    """Each sample's indices pick from that sample (batch aranges in front); a boolean mask is refused."""
    x, indices, values = args[0], tuple(_get(args, kwargs, 1, "indices")), _get(args, kwargs, 2, "values")
    accumulate = _get(args, kwargs, 3, "accumulate", False)
    if any(i is None or isinstance(i, Tensor) and i.dtype == ember.bool for i in indices):
        decline("index_put", "with a boolean mask (or None) among the indices, the samples would put different "
                "numbers of values")
    nb = len(levels)
    index_rank = len(ember.broadcast_shapes(*[tuple(logical_shape(ember.as_tensor(i))) for i in indices]))
    aranges = tuple(ember.arange(size_of(lv)).reshape((1,) * k + (-1,) + (1,) * (nb - 1 - k + index_rank))
                    for k, lv in enumerate(levels))
    positions = tuple(physical(ember.as_tensor(i), levels, index_rank) for i in indices)
    rest = _ndim(x) - len(indices)
    out = physical(x, levels, expand=True).index_put(aranges + positions, physical(values, levels, index_rank + rest),
                                                     accumulate)
    return batched(out, levels)


def masked_scatter(func, args, kwargs, levels):
    """The k-th True of each sample's mask takes its source's k-th element: a cumulative count, then a gather."""
    x, mask, source = args[0], _get(args, kwargs, 1, "mask"), _get(args, kwargs, 2, "source")
    shape = ember.broadcast_shapes(tuple(logical_shape(x)), tuple(logical_shape(mask)))
    chosen = mask.expand(shape).reshape(-1)
    order = (chosen.long().cumsum(0) - 1).clamp(min=0)
    picked = source.reshape(-1).gather(0, order)
    return ember.where(chosen, picked, x.expand(shape).reshape(-1)).reshape(shape)


def scattering_into(*specs):
    """select_scatter, slice_scatter, diagonal_scatter: input and src at full batch, each keeping its rank."""

    def rule(func, args, kwargs, levels):
        args, kwargs = list(args), dict(kwargs)
        ndim, nb = _ndim(args[0]), len(levels)
        for position, keyword, default in specs:
            d = _get(args, kwargs, position, keyword, default)
            if position < len(args):
                args[position] = _shifted(d, ndim, nb, op_name(func))
            else:
                kwargs[keyword] = _shifted(d, ndim, nb, op_name(func))
        args[0], args[1] = physical(args[0], levels, expand=True), physical(args[1], levels, expand=True)
        return batched(func(*args, **kwargs), levels)

    return rule


# ---- sorting and searching

def quantile(func, args, kwargs, levels):
    """quantile and nanquantile: the dim shifted (or each sample flattened); a tensor q's dim moved behind the batch."""
    x, q = args[0], _get(args, kwargs, 1, "q")
    if type(q) is BatchedTensor:
        decline(op_name(func), "a batched q is not supported")
    dim = _get(args, kwargs, 2, "dim", None)
    keepdim = _get(args, kwargs, 3, "keepdim", False)
    interpolation = kwargs.get("interpolation", "linear")
    nb, ndim = len(levels), _ndim(x)
    p = physical(x, levels)
    if dim is None:
        p, d = p.reshape(tuple(p.shape[:nb]) + (-1,)), -1
    else:
        d = _shifted(dim, ndim, nb, op_name(func))
    out = func(p, q, d, keepdim and dim is not None, interpolation=interpolation)
    if isinstance(q, Tensor) and q.dim() == 1:
        out = out.movedim(0, nb)
    if keepdim and dim is None:  # every sample dim kept, of size 1
        out = out.reshape(tuple(out.shape) + (1,) * ndim)
    return batched(out, levels)


def searchsorted(func, args, kwargs, levels):
    """The sorted sequences batched in front; a 1-D sequence searched for every value of the sample."""
    seq, values = args[0], args[1]
    if not isinstance(values, Tensor):
        return leading_batch(func, args, kwargs, levels)
    nb = len(levels)
    kwargs = dict(kwargs)
    sorter = kwargs.pop("sorter", None)
    ps, pv = physical(seq, levels, expand=True), physical(values, levels, expand=True)
    shape = tuple(pv.shape)
    if _ndim(seq) == 1:
        pv = pv.reshape(shape[:nb] + (-1,))
    if sorter is not None:
        kwargs["sorter"] = physical(sorter, levels, expand=True)
    return batched(func(ps, pv, *args[2:], **kwargs).reshape(shape), levels)


def bucketize(func, args, kwargs, levels):
    """Unbatched boundaries: elementwise; batched ones: searchsorted, which takes a sequence per sample."""
    boundaries = _get(args, kwargs, 1, "boundaries")
    if type(boundaries) is not BatchedTensor:
        return pointwise(func, args, kwargs, levels)
    right, out_int32 = _get(args, kwargs, 3, "right", False), _get(args, kwargs, 2, "out_int32", False)
    return ember.searchsorted(boundaries, args[0], out_int32=out_int32, right=right)


def isin(func, args, kwargs, levels):
    """Each element against every test element of its sample: an equality table, reduced over the test elements."""
    x, test = args[0], _get(args, kwargs, 1, "test_elements")
    if type(test) is not BatchedTensor:
        return pointwise(func, args, kwargs, levels)
    shape = tuple(logical_shape(x)) if isinstance(x, Tensor) else ()
    found = (ember.as_tensor(x).reshape(shape + (1,)) == test.reshape(-1)).any(-1)
    return found.logical_not() if kwargs.get("invert", False) else found


def tensorinv(func, args, kwargs, levels):
    x, ind = args[0], _get(args, kwargs, 1, "ind", 2)
    shape = tuple(logical_shape(x))
    rows = math.prod(shape[:ind])
    return ember.linalg.inv(x.reshape(rows, -1)).reshape(shape[ind:] + shape[:ind])


def tensorsolve(func, args, kwargs, levels):
    a, b = args[0], args[1]
    dims = _get(args, kwargs, 2, "dims", None)
    if dims is not None:
        a = a.movedim(tuple(dims), tuple(range(_ndim(a) - len(dims), _ndim(a))))
    rest = tuple(logical_shape(a))[_ndim(b):]
    return ember.linalg.solve(a.reshape(logical_shape(b).numel(), -1), b.reshape(-1)).reshape(rest)


# ---- nn

def instance_norm(func, args, kwargs, levels):
    """Statistics per sample and channel: the vmap batch folds into N (running statistics would mix them)."""
    names = ("running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum", "eps")
    given = dict(zip(names, args[1:]), **kwargs)
    if any(type(v) is BatchedTensor for k, v in given.items() if k != "eps"):
        decline("instance_norm", "batched weight, bias or running statistics are not supported")
    if given.get("running_mean") is not None and given.get("use_input_stats", True):
        decline("instance_norm", "updating running statistics would mix the samples")
    x, nb = args[0], len(levels)
    p = physical(x, levels)
    out = func(p.reshape((-1,) + tuple(p.shape[nb + 1:])), *args[1:], **kwargs)  # each (n, c) pair is apart
    return batched(out.reshape(tuple(p.shape)), levels)


def bilinear(func, args, kwargs, levels):
    x1, x2, weight = args[0], args[1], args[2]
    bias = _get(args, kwargs, 3, "bias", None)
    out = ember.einsum("...i,oij,...j->...o", x1, weight, x2)
    return out if bias is None else out + bias


def rms_norm(func, args, kwargs, levels):
    x, shape = args[0], args[1]
    weight = _get(args, kwargs, 2, "weight", None)
    eps = _get(args, kwargs, 3, "eps", None)
    out = batched(func(physical(x, levels), shape, None, eps), levels)
    return out if weight is None else out * weight


def binary_cross_entropy(func, args, kwargs, levels):
    """Input and target must have one shape: both are broadcast first (one may be shared by all samples)."""
    from ember.func._rules import elementwise_loss

    x, target = ember.broadcast_tensors(args[0], args[1])
    return elementwise_loss(func, (x, target) + tuple(args[2:]), kwargs, levels)


def unfold(func, args, kwargs, levels):
    """Tensor.unfold(dimension, size, step) along a sample dim; F.unfold (im2col) with the batch folded into N."""
    if func is ember.Tensor.unfold:
        return along(Dims((1, "dimension")))(func, args, kwargs, levels)
    from ember.func._rules import folding

    return folding(4)(func, args, kwargs, levels)


def pdist(func, args, kwargs, levels):
    """pdist of each sample: the pairs i < j of cdist's distances by differences (as exact as pdist's), since
    pdist's own kernel takes one matrix."""
    x = args[0] if args else kwargs["input"]
    p = args[1] if len(args) > 1 else kwargs.get("p", 2.0)
    if x.dim() != 2 or not x.is_floating_point():
        return func.__wrapped__(*args, **kwargs)  # (refused, with pdist's words, before the data is read)
    first, second = ember.triu_indices(x.size(0), x.size(0), 1)
    return ember.cdist(x, x, p, compute_mode="donot_use_mm_for_euclid_dist")[first, second]


def composite(func, args, kwargs, levels):
    """An op written in other ember ops: its implementation runs on the batched tensors, each inner op by its
    rule (as torch decomposes its composite ops under vmap)."""
    return func.__wrapped__(*args, **kwargs)


_LEADING_BATCH = """
qr svd linalg.solve_triangular cholesky_solve cholesky_inverse linalg.cond
linalg.lu_factor linalg.lu_factor_ex linalg.lu lu_unpack linalg.lu_solve triangular_solve lu_solve
linalg.householder_product orgqr ormqr linalg.vander cdist lu linalg.eig linalg.eigvals
"""

RULES.update(_all(_LEADING_BATCH, leading_batch))
RULES.update(_all("linalg.solve linalg.solve_ex", solve))
RULES["linalg.lstsq"] = lstsq
RULES.update(_all("linalg.pinv linalg.matrix_rank", with_tolerances))
RULES["vander"] = vander
RULES.update({"addmv": addmv, "addr": addr, "baddbmm": baddbmm, "addbmm": addbmm, "vdot": vdot, "kron": kron,
              "tensordot": tensordot, "chain_matmul": chain, "linalg.multi_dot": chain})
RULES.update(_all("mH.__get__ H.__get__ adjoint", conj_transposing))
RULES.update({"diag": diag, "diagflat": diagflat, "fliplr": flipping(1), "flipud": flipping(0), "flip": flip,
              "roll": roll, "rot90": rot90, "msort": msort, "meshgrid": meshgrid, "cartesian_prod": cartesian_prod,
              "repeat_interleave": repeat_interleave, "take": take, "put": put})
RULES["atleast_1d"], RULES["atleast_2d"], RULES["atleast_3d"] = at_least(1), at_least(2), at_least(3)
RULES.update(_all("hstack vstack row_stack dstack column_stack", stacking))
RULES.update(_all("hsplit vsplit dsplit", splitting))
RULES["linalg.diagonal"] = along(Dims((None, "dim1", -2), (None, "dim2", -1)))
RULES["linalg.vecdot"] = along(Dims((None, "dim", -1)))
RULES["unfold"] = unfold
RULES["index_reduce"] = along(Dims((1, "dim"), plain=(2,)))
RULES["index_put"] = index_put
RULES["masked_scatter"] = masked_scatter
RULES["select_scatter"] = scattering_into((2, "dim", 0))
RULES["slice_scatter"] = scattering_into((2, "dim", 0))
RULES["diagonal_scatter"] = scattering_into((3, "dim1", 0), (4, "dim2", 1))
RULES.update(_all("quantile nanquantile", quantile))
RULES.update({"searchsorted": searchsorted, "bucketize": bucketize, "isin": isin})
RULES.update(_all("isclose frexp real imag", pointwise))
_TRANSPOSED = ("stride", "padding", "output_padding", "groups", "dilation")
RULES["conv_transpose1d"], RULES["conv_transpose2d"], RULES["conv_transpose3d"] = (
    conv(1, _TRANSPOSED), conv(2, _TRANSPOSED), conv(3, _TRANSPOSED))
RULES.update({"instance_norm": instance_norm, "bilinear": bilinear, "rms_norm": rms_norm})
RULES.update(_all("binary_cross_entropy binary_cross_entropy_with_logits", binary_cross_entropy))
RULES["pdist"] = pdist
RULES.update(_all("trapezoid trapz cumulative_trapezoid dist renorm combinations block_diag frobenius_norm "
                  "nuclear_norm cov corrcoef", composite))
RULES["as_strided"] = declined("strides address the storage, which holds every sample of the batch: the same "
                               "strides would read across samples; use view, unfold or indexing")
RULES.update({"linalg.tensorinv": tensorinv, "linalg.tensorsolve": tensorsolve})
RULES["linalg.matrix_norm"] = along(Dims((2, "dim", (-2, -1))))
RULES["linalg.norm"] = composite  # a vector_norm or a matrix_norm, by its ord and dim
RULES["linalg.matmul"] = RULES["matmul"]


# ---- nn ops with two batched tensors, or a size that names the batch

def folded_together(full_ndim: int | None, count: int):
    """Ops whose first ``count`` tensors are batched alike (max_unpool's values and indices, grid_sample's input
    and grid): each gets every batch dim at full size, folded into N, and the result is unfolded again.
    ``full_ndim`` is the sample's ndim when it has an N (None: it always has one)."""

    def rule(func, args, kwargs, levels):
        nb = len(levels)
        keep = full_ndim is None or _ndim(args[0]) == full_ndim  # the sample's own N, which the batch folds into
        tensors = [physical(a, levels, expand=True) for a in args[:count]]
        batch = tuple(tensors[0].shape[:nb])
        folded = [t.reshape((-1,) + tuple(t.shape[nb + keep:])) for t in tensors]
        out = func(*folded, *args[count:], **kwargs)
        lead = batch + (tuple(tensors[0].shape[nb:nb + 1]) if keep else ())
        return rewrap(_map(out, lambda t: t.reshape(lead + tuple(t.shape[1:]))), levels)

    return rule


def affine_grid(func, args, kwargs, levels):
    """affine_grid: the batch folds into theta's N, and into the N of ``size``."""
    theta = physical(args[0], levels, expand=True)
    batch = tuple(theta.shape[:len(levels)])
    size = list(_get(args, kwargs, 1, "size"))
    folded = theta.reshape((-1,) + tuple(theta.shape[len(levels) + 1:]))
    rest = {k: v for k, v in kwargs.items() if k != "size"}
    out = func(folded, [folded.shape[0]] + size[1:], *args[2:], **rest)
    return rewrap(out.reshape(batch + tuple(out.shape[:0]) + (size[0],) + tuple(out.shape[1:])), levels)


from ember.func._rules import _map, folding  # noqa: E402

RULES.update(_all("adaptive_max_pool1d adaptive_max_pool1d_with_indices lp_pool1d max_pool1d_with_indices",
                  folding(3)))
RULES.update(_all("adaptive_max_pool2d_with_indices max_pool2d_with_indices", folding(4)))
RULES.update(_all("adaptive_max_pool3d adaptive_max_pool3d_with_indices lp_pool3d max_pool3d_with_indices",
                  folding(5)))
RULES["max_unpool1d"], RULES["max_unpool2d"], RULES["max_unpool3d"] = (
    folded_together(3, 2), folded_together(4, 2), folded_together(5, 2))
RULES["grid_sample"] = folded_together(None, 2)
RULES["affine_grid"] = affine_grid
RULES.update(_all("channel_shuffle native_channel_shuffle gradient", composite))
RULES.update(_all("split_with_sizes unsafe_split unsafe_chunk unsafe_split_with_sizes", composite))
RULES.update(_all("alias_copy detach_copy diagonal_copy expand_copy permute_copy select_copy slice_copy split_copy "
                  "split_with_sizes_copy squeeze_copy t_copy transpose_copy unbind_copy unfold_copy unsqueeze_copy "
                  "view_copy as_strided_copy", composite))
RULES["as_strided_scatter"] = RULES["as_strided"]
RULES.update(_all("linalg.ldl_factor linalg.ldl_factor_ex linalg.ldl_solve", leading_batch))
RULES["airy_ai"] = pointwise


# ---- torch's top-level nn kernels and F.linear_cross_entropy / F.grouped_mm: composites of ops with rules
RULES.update(_all("native_layer_norm native_group_norm native_batch_norm native_norm norm_except_dim "
                  "batch_norm_stats batch_norm_elemt batch_norm_backward_reduce batch_norm_backward_elemt "
                  "convolution constant_pad_nd grid_sampler grid_sampler_2d grid_sampler_3d affine_grid_generator "
                  "gru_cell rnn_tanh_cell rnn_relu_cell linear_cross_entropy grouped_mm", composite))

# ---- complex parts and views: elementwise, or on the last dim, which a batch dim in front never is
RULES.update(_all("real.__get__ imag.__get__ complex polar view_as_real view_as_complex view_as_real_copy "
                  "view_as_complex_copy", pointwise))
RULES["hash_tensor"] = RULES["sum"]  # a reduction over dims, as sum: the batch dim is left out of them

# ---- fake quantization: elementwise, and along the channel axis
RULES["fake_quantize_per_tensor_affine"] = pointwise


def fake_quantize_per_channel(func, args, kwargs, levels):
    """The input's batch dims go in front, its channel axis moves past them; the parameters stay unbatched."""
    x, scale, zero_point, axis, *rest = args
    if type(scale) is BatchedTensor or type(zero_point) is BatchedTensor:
        decline(op_name(func), "the scales and zero points must be the same for every sample")
    physical_x = physical(x, levels)
    shifted = axis + physical_x.ndim - _ndim(x)
    return rewrap(func(physical_x, scale, zero_point, shifted, *rest, **kwargs), levels)


RULES["fake_quantize_per_channel_affine"] = fake_quantize_per_channel


# ---- gradient hooks: the hook sees (and may replace) each sample's gradient, as the function sees each sample
def register_hook(func, args, kwargs, levels):
    tensor, hook = args[0], args[1] if len(args) > 1 else kwargs["hook"]
    own = tensor._levels
    running = [lv for lv in active if lv.number in own]  # active again if backward runs after vmap returned

    def on_the_batch(grad):
        with _Reentered(running), UserCode():
            replaced = hook(batched(grad, own))
            return None if replaced is None else physical(replaced, own, expand=True)

    return tensor._value.register_hook(on_the_batch)


RULES["register_hook"] = register_hook
