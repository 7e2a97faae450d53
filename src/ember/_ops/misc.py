"""Everyday functions composed of other ember ops: differences and integrals, statistics of
samples, combinatorics, distances, and the argument (angle) of each element.

Most are composites, each differentiable to any order without a backward of its own; ``fill`` and the angle of
real numbers, piecewise constant, are one op each (``FillBackward0``/``1``, ``AngleBackward0``, as torch's).

>>> import ember
>>> ember.diff(ember.tensor([1., 4., 9.]))
tensor([3., 5.])
>>> ember.trapezoid(ember.tensor([1., 2., 3.]))
tensor(4.)
"""
from __future__ import annotations

import itertools
import math
import warnings
from typing import Sequence

import numpy as np

from ember import _dtype, linalg, return_types
from ember._creation import _linspace_values, ones_like, zeros
from ember._ops._support import check_broadcast, ember_function, refuse_integers, require_tensor, result_dtype, wrap
from ember._ops.arithmetic import where
from ember._ops.complex import complex as complex_parts, complex_angle
from ember._ops.joining import cat, stack
from ember._ops.shaping import meshgrid
from ember._ops import distances
from ember._ops.inplace import apply_inplace
from ember._ops.out import into_elementwise_out_of_its_dtype, into_out, into_out_of_its_dtype
from ember._ops.unary import trunc, zeros_like_gradient
from ember.amp import autocast_mode as _autocast
from ember.autograd._node_names import named_node
from ember.autograd.function import Function
from ember._tensor import Tensor, _warn_once
from ember.storage import TypedStorage, UntypedStorage
from ember._ops._quiet import IGNORE_ALL, quietly

_INT64 = _dtype.int64


def _floating(x: Tensor) -> Tensor:
    """``x`` itself if it is floating point, else ``x`` in the default float dtype."""
    return x if x.is_floating_point() else x.to(_dtype.get_default_dtype())


# ----------------------------------------------------------------- identities and simple forms


@ember_function
def detach(input: Tensor) -> Tensor:
    """``input.detach()``: the same data, cut from the graph.

    >>> ember.detach(ember.ones(2, requires_grad=True)).requires_grad
    False
    """
    return require_tensor(input, "detach").detach()


class Filled(Function):
    """A new tensor of ``x``'s shape and dtype holding ``value`` (a 0-d array of that dtype) everywhere."""

    backward_name = "FillBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x, value):
        return wrap(np.full(x._data.shape, value, x._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        return zeros_like_gradient(grad), None  # as torch: zeros for input, even where grad is nan


class FilledFromTensor(Function):
    """``fill`` with a 0-d tensor, which gets the sum of the gradient."""

    backward_name = "FillBackward1"

    @staticmethod
    def forward(ctx, x, value):
        ctx.value_dtype = value.dtype
        with np.errstate(invalid="ignore"):  # (a nan or inf cast to an integer dtype: as torch, no warning)
            element = value._data.astype(x._data.dtype)
        return wrap(np.full(x._data.shape, element, x._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        return (zeros_like_gradient(grad) if needs[0] else None,
                grad.sum().to(ctx.value_dtype) if needs[1] else None)


@ember_function
def fill(input: Tensor, value) -> Tensor:
    """A tensor like ``input`` with every element ``value`` (a number or a 0-d tensor, which gets the gradient).

    >>> ember.fill(ember.zeros(2), 3.)
    tensor([3., 3.])
    """
    require_tensor(input, "fill")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                f"fill: the value must be a number or a 0-d tensor, got a tensor of shape {list(value.shape)}; "
                "pass value.item() or a single element"
            )
        return FilledFromTensor.apply(input, value)
    return Filled.apply(input, np.asarray(value, dtype=input._data.dtype))


@ember_function
def positive(input: Tensor) -> Tensor:
    """``+input``: ``input`` itself (refused for bool tensors, as torch).

    >>> ember.positive(ember.tensor([-1., 2.]))
    tensor([-1.,  2.])
    """
    require_tensor(input, "positive")
    if input.dtype is _dtype.bool_:
        raise RuntimeError("positive: the `+` operator is not supported on a bool tensor; use input.clone()")
    return input


@ember_function
def fix(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Round toward zero: the same as ``trunc``.

    >>> ember.fix(ember.tensor([-1.5, 1.5]))
    tensor([-1.,  1.])
    """
    require_tensor(input, "fix")
    result = trunc(input)
    if out is None:
        return result
    return into_elementwise_out_of_its_dtype("fix", result, out)


def fix_(self: Tensor) -> Tensor:
    return self.trunc_()


# ----------------------------------------------------------------- lazy-bit helpers (ember sets no bits)


@ember_function
def resolve_conj(input: Tensor) -> Tensor:
    """``input`` with its conjugate bit resolved: ``input`` itself (ember never sets one).

    >>> ember.resolve_conj(ember.tensor([1.]))
    tensor([1.])
    """
    return require_tensor(input, "resolve_conj")


@ember_function
def resolve_neg(input: Tensor) -> Tensor:
    """``input`` with its negative bit resolved: ``input`` itself (ember never sets one).

    >>> ember.resolve_neg(ember.tensor([1.]))
    tensor([1.])
    """
    return require_tensor(input, "resolve_neg")


@ember_function
def is_conj(input: Tensor) -> bool:
    """False: ember has no lazily conjugated tensors.

    >>> ember.is_conj(ember.ones(1))
    False
    """
    require_tensor(input, "is_conj")
    return False


@ember_function
def is_neg(input: Tensor) -> bool:
    """False: ember has no lazily negated tensors.

    >>> ember.is_neg(ember.ones(1))
    False
    """
    require_tensor(input, "is_neg")
    return False


@ember_function
def angle(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The argument of each element: of a complex one, its angle in (-pi, pi]; of a real one, 0 for non-negative,
    pi for negative, NaN stays NaN (its gradient then is 0).

    >>> ember.angle(ember.tensor([2., -2.]))
    tensor([0.0000, 3.1416])
    """
    if require_tensor(input, "angle")._data.dtype.kind == "c":
        result = complex_angle(input)
        return result if out is None else into_out("angle", result, out)
    result = RealAngle.apply(input)
    if out is None:
        return result
    return into_out("angle", result, out)


class RealAngle(Function):
    """The angle of real numbers: pi for the negative ones, 0 for the others, NaN for NaN; a zero gradient."""

    backward_name = "AngleBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x):
        data = x._data
        dtype = data.dtype if _dtype.kind(data.dtype) == "f" else _dtype.get_default_dtype().np
        values = np.less(data, 0).astype(dtype)
        values *= dtype.type(np.pi)  # one product, not np.where, which branches on every element
        if _dtype.kind(data.dtype) == "f":
            nan = np.isnan(data)
            if nan.any():  # (np.where, not an assignment: of a 0-d input, values is a NumPy scalar)
                values = np.where(nan, dtype.type(np.nan), values)
        return wrap(values)

    @staticmethod
    def backward(ctx, grad):
        return zeros_like_gradient(grad)  # as torch: 0, even where the input or grad is nan


# ----------------------------------------------------------------- type and size predicates


@ember_function
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have the same shape.

    >>> ember.is_same_size(ember.ones(2, 3), ember.zeros(2, 3))
    True
    """
    require_tensor(input, "is_same_size")
    require_tensor(other, "is_same_size", 2, "other")
    return input.shape == other.shape


@ember_function
def is_signed(input: Tensor) -> bool:
    """Whether the dtype holds negative numbers (all but bool and the unsigned ones).

    >>> ember.is_signed(ember.tensor([1], dtype=ember.uint8))
    False
    """
    require_tensor(input, "is_signed")
    return input.dtype.is_signed


def is_storage(obj: object, /) -> bool:
    """Whether ``obj`` is a storage: an ``UntypedStorage`` or a ``TypedStorage`` (the legacy ``FloatStorage``
    and its kin are typed storages).

    >>> ember.is_storage(ember.ones(1).untyped_storage()), ember.is_storage(ember.ones(1))
    (True, False)
    """
    return isinstance(obj, (UntypedStorage, TypedStorage))


def typename(obj: object, /) -> str:
    """The type of ``obj`` as a string: a tensor's ``type()``, else its module and qualified name.

    >>> ember.typename(ember.ones(1))
    'ember.FloatTensor'
    >>> ember.typename(3)
    'int'
    """
    if isinstance(obj, Tensor):
        return obj.type()
    kind = obj if isinstance(obj, type) else type(obj)
    module = kind.__module__
    return kind.__qualname__ if module in ("builtins", None) else f"{module}.{kind.__qualname__}"


# ----------------------------------------------------------------- differences and integrals


def _check_dim(op: str, x: Tensor, dim: int) -> int:
    rank = max(x.dim(), 1)
    if not -rank <= dim < rank:
        raise IndexError(
            f"{op}: dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})"
        )
    return dim % rank


@ember_function
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None, *, out: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim``, after joining ``prepend`` and ``append`` on that dim.

    Bool tensors give ``!=`` of neighbours, as torch. With ``out``, the result is written there.

    >>> ember.diff(ember.tensor([1, 3, 6]), prepend=ember.tensor([0]))
    tensor([1, 2, 3])
    """
    require_tensor(input, "diff")
    if input.dim() == 0:
        raise RuntimeError("diff: expected a tensor of at least one dimension, got a 0-d tensor; use input.reshape(1)")
    if n < 0:
        raise RuntimeError(f"diff: order must be non-negative but got {n}")
    dim = _check_dim("diff", input, dim)
    parts = [p for p in (prepend, input, append) if p is not None]
    for p in parts:
        if require_tensor(p, "diff").dim() != input.dim():
            raise RuntimeError(
                f"diff: prepend and append must have as many dimensions as input ({input.dim()}), "
                f"got {p.dim()}; reshape them, e.g. p.reshape({[1] * input.dim()}) for one value"
            )
    x = cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.size(dim)
        if length == 0:
            break
        later, earlier = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = later != earlier if x.dtype is _dtype.bool_ else later - earlier
    return x if out is None else into_out("diff", x, out, input, prepend, append)


def _spacing_along(op: str, x: Tensor, y: Tensor, dim: int) -> Tensor:
    """The gaps between the sample points ``x``, shaped to broadcast against ``y``'s neighbour pairs."""
    if x.dim() == 1:
        if x.size(0) != y.size(dim):
            raise RuntimeError(
                f"{op}: x has {x.size(0)} sample points but y has {y.size(dim)} along dim {dim}; give one per value"
            )
        shape = [1] * y.dim()
        shape[dim] = max(x.size(0) - 1, 0)
        return diff(x).reshape(shape)
    return diff(x, dim=dim)


def _pair_sums(y: Tensor, dim: int) -> Tensor:
    length = y.size(dim)
    return y.narrow(dim, 1, length - 1) + y.narrow(dim, 0, length - 1)


def _trapezoid_args(op: str, y: Tensor, x, dx, dim: int) -> int:
    require_tensor(y, op, name="y")
    if y.dim() == 0:
        raise IndexError(f"{op}: y must have at least one dimension, got a 0-d tensor; use y.reshape(1)")
    if x is not None and dx is not None:
        raise TypeError(f"{op}: give the sample points x or the spacing dx, not both")
    if x is not None:
        require_tensor(x, op, 2, "x")
    dim = _check_dim(op, y, dim)
    if y.dtype is _dtype.bool_ or x is not None and x.dtype is _dtype.bool_:  # as torch, though sums take bools
        raise RuntimeError(f"{op}: received a bool input for {'`x` or `y`' if x is not None else '`y`'}, but bool "
                           "is not supported; convert it first, e.g. y.float()")
    if isinstance(dx, (bool, complex, np.bool_, np.complexfloating)):
        raise RuntimeError(f"{op}: Currently, we only support dx as a real number (got {dx!r}).")
    return dim


@ember_function
def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: at the sample points ``x``, or spaced ``dx`` apart (1 by default).

    >>> ember.trapezoid(ember.tensor([1., 2., 3.]), ember.tensor([0., 1., 3.]))
    tensor(6.5000)
    """
    dim = _trapezoid_args("trapezoid", y, x, dx, dim)
    if y.size(dim) == 0:  # as torch: zeros of the input's own dtype (an integer one too)
        return y.sum(dim, dtype=y.dtype)
    if x is not None:
        return (_pair_sums(y, dim) * _spacing_along("trapezoid", x, y, dim)).sum(dim) / 2
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) / 2) * (1 if dx is None else dx)


@ember_function
def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule: the older name of ``trapezoid``.

    >>> ember.trapz(ember.tensor([1., 2., 3.]), dx=2.)
    tensor(8.)
    """
    _trapezoid_args("trapz", y, x, dx, dim)
    return trapezoid.__wrapped__(y, x, dx=dx, dim=dim)


@ember_function
def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """The running trapezoidal rule along ``dim``: one value fewer than ``y`` has there.

    >>> ember.cumulative_trapezoid(ember.tensor([1., 2., 3.]))
    tensor([1.5000, 4.0000])
    """
    dim = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    if y.size(dim) == 0:
        return _floating(y)
    if x is not None:
        return (_pair_sums(y, dim) * _spacing_along("cumulative_trapezoid", x, y, dim) / 2).cumsum(dim)
    return (_pair_sums(y, dim) * ((1 if dx is None else dx) / 2)).cumsum(dim)


# ----------------------------------------------------------------- statistics of samples


def _observations(input: Tensor) -> Tensor:
    """``input`` as a float matrix with one variable per row."""
    require_tensor(input, "cov")
    if input.dim() > 2:
        raise RuntimeError(f"cov: expected input to have two or fewer dimensions (variables x observations), but got "
                           f"an input with {input.dim()} dimensions")
    if input.dtype is _dtype.bool_:
        raise RuntimeError("cov: bool input is not supported; convert it first, e.g. input.float()")
    x = input if input.is_complex() else _floating(input)
    return x.reshape(1, -1) if input.dim() < 2 else x


def _check_weights(name: str, w: Tensor, observations: int, integral: bool) -> None:
    require_tensor(w, "cov", name=name)
    if w.dim() > 1:
        raise RuntimeError(f"cov: expected {name} to have one or fewer dimensions, but got {name} with {w.dim()} "
                           "dimensions")
    if integral == w.is_floating_point():  # as torch, the dtype is checked before the length
        kind = "integral" if integral else "floating point"
        raise RuntimeError(f"cov: expected {name} to have {kind} dtype, but got {name} with dtype {w.dtype}")
    if w.numel() != observations:
        raise RuntimeError(f"cov: expected {name} to have the same numel as there are observations in the input "
                           f"({observations}), but got {w.numel()}")
    if bool((w < 0).any()):
        raise RuntimeError(f"cov: {name} cannot be negative, but got a minimum of {w.min().item()}")


def _weights(x: Tensor, fweights, aweights) -> Tensor | None:
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, x.size(1), integral=True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, x.size(1), integral=False)
        w = aweights if w is None else w * aweights
    return w


@ember_function
def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in ``input``'s rows (observations in columns), squeezed.

    ``correction`` is subtracted from the number of observations (1: Bessel's correction);
    ``fweights`` are integer repeat counts and ``aweights`` importance weights of the observations.

    >>> ember.cov(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    x = _observations(input)
    w = _weights(x, fweights, aweights)
    if w is None:
        centered = x - x.mean(1, keepdim=True)
        norm = x.size(1) - correction
        # (conjugated for complex variables: the covariance is Hermitian; under autocast, in its dtype)
        products = _autocast.lowered(centered) @ _autocast.lowered(centered).mH
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        centered = x - (x * w).sum(1, keepdim=True) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
        products = _autocast.lowered(centered * w) @ _autocast.lowered(centered).mH
    if float(norm) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0; the covariance is infinite or NaN", RuntimeWarning,
                      stacklevel=3)
        norm = 0 * norm
    return (products / norm).squeeze()  # as torch, a single variable's covariance is 0-d


@ember_function
def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the variables in ``input``'s rows, clipped to [-1, 1].

    >>> ember.corrcoef(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    c = cov.__wrapped__(require_tensor(input, "corrcoef"))
    if c.dim() == 0:
        return c / c
    spread = c.diagonal().real.sqrt()  # (a variance is real, even of complex variables)
    c = c / spread.unsqueeze(1) / spread.unsqueeze(0)
    if c.is_complex():  # as torch: each part clipped
        return complex_parts(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


# ----------------------------------------------------------------- combinatorics and block matrices


def _vector(op: str, t: Tensor) -> Tensor:
    if require_tensor(t, op).dim() != 1:
        raise RuntimeError(f"{op}: expected one-dimensional tensors, got one of shape {list(t.shape)}")
    return t


@ember_function
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each vector, one per row (a single vector comes back as it is).

    >>> ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    if not tensors:
        raise RuntimeError("cartesian_prod: expected at least one tensor, got none")
    vectors = [_vector("cartesian_prod", t) for t in tensors]
    if len(vectors) == 1:
        return vectors[0]
    return stack([grid.reshape(-1) for grid in meshgrid(*vectors, indexing="ij")], 1)


@ember_function
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The ``r``-element combinations of a vector's elements, one per row, in lexicographic order of positions.

    >>> ember.combinations(ember.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    _vector("combinations", input)
    if r < 0:
        raise RuntimeError(f"combinations: expected a non-negative r, got {r}")
    if r == 0:
        return input.new_empty(0)
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    picks = np.array(list(choose(range(input.size(0)), r)), dtype=np.int64).reshape(-1, r)
    return stack([input.index_select(0, wrap(np.ascontiguousarray(column))) for column in picks.T], 1)


def _as_block(t: Tensor, position: int) -> Tensor:
    require_tensor(t, "block_diag", position)
    if t.dim() > 2:
        raise RuntimeError(
            f"block_diag: input tensors must have 2 or fewer dimensions, but input {position - 1} "
            f"has {t.dim()} dimensions"
        )
    return t.reshape(1, -1) if t.dim() < 2 else t


@ember_function
def block_diag(*tensors: Tensor) -> Tensor:
    """The block-diagonal matrix with these blocks (0-d and 1-d tensors are one-row blocks).

    >>> ember.block_diag(ember.tensor([[1, 2]]), ember.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    blocks = [_as_block(t, i + 1) for i, t in enumerate(tensors)]
    if not blocks:
        return zeros(1, 0)
    # promoted as torch's result_type: a 0-d block (a number) only lifts the dtype to a higher category
    dtype = _dtype.result_type_of([t.dtype for t in tensors if t.dim()], [t.dtype for t in tensors if not t.dim()], [])
    width = sum(b.size(1) for b in blocks)
    rows, left = [], 0
    for b in blocks:
        right = width - left - b.size(1)
        rows.append(cat([zeros(b.size(0), left, dtype=dtype), b.to(dtype), zeros(b.size(0), right, dtype=dtype)], 1))
        left += b.size(1)
    return named_node(cat(rows, 0), "BlockDiagBackward0", *tensors, listed=tensors)


# ----------------------------------------------------------------- distances and norms


def _float_only(op: str, t: Tensor, complex_ok: bool = False) -> None:
    if not (t.is_floating_point() or complex_ok and t.is_complex()):
        raise RuntimeError(f"{op}: expected a floating point tensor, got dtype {t.dtype}; convert it with .double()")


@ember_function
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast).

    >>> ember.dist(ember.tensor([1., 1.]), ember.tensor([4., 5.]))
    tensor(5.)
    """
    require_tensor(input, "dist")
    require_tensor(other, "dist", 2, "other")
    check_broadcast("dist", input.shape, other.shape)
    difference = input - other  # promoted first, as torch: an integer tensor less a float one is a float
    _float_only("dist", difference, complex_ok=True)  # (the norm of complex differences is real)
    return named_node(linalg.vector_norm(difference, p), "DistBackward0", input, other, listed=(input, other))


@ember_function
def renorm(input: Tensor, p: float, dim: int, maxnorm: float, *, out: Tensor | None = None) -> Tensor:
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to that norm.

    >>> ember.renorm(ember.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    require_tensor(input, "renorm")
    _float_only("renorm", input, complex_ok=True)
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    if p <= 0:
        raise RuntimeError(f"renorm: p must be positive, got {p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: maxnorm must be non-negative, got {maxnorm}")
    dim = _check_dim("renorm", input, dim)
    norms = linalg.vector_norm(input, p, [d for d in range(input.dim()) if d != dim], keepdim=True)
    scale = where(norms > maxnorm, maxnorm / (norms + 1e-7), ones_like(norms))  # 1e-7 as torch, against 0/0
    result = named_node(input * scale, "RenormBackward0", input, listed=(input,))
    if out is None:
        return result
    return into_out_of_its_dtype("renorm", result, out)


def renorm_(self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    return apply_inplace(self, renorm.__wrapped__, p, dim, maxnorm, op="renorm_")


@ember_function
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distances between every pair of rows ``i < j`` of a matrix, in row-major order
    (computed in blocks of pairs: ``_ops/distances.py``).

    >>> ember.pdist(ember.tensor([[0., 0.], [3., 4.], [0., 1.]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    return distances.pdist(input, p)


@ember_function
def nuclear_norm(input: Tensor, dim: Sequence[int] | bool | None = None, keepdim: bool = False, *,
                 out: Tensor | None = None) -> Tensor:
    """The sum of singular values; deprecated in torch for ``ember.linalg.matrix_norm(input, 'nuc')``.

    >>> ember.nuclear_norm(ember.eye(3))
    tensor(3.)
    """
    require_tensor(input, "nuclear_norm")
    _warn_once("nuclear_norm is deprecated; use ember.linalg.matrix_norm(input, 'nuc', dim, keepdim)", stacklevel=4)
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim, out=out)


@ember_function
def frobenius_norm(input: Tensor, dim: Sequence[int], keepdim: bool = False, *,
                   out: Tensor | None = None) -> Tensor:
    """The square root of the sum of squares over ``dim``; deprecated in torch for ``ember.linalg.norm``.

    >>> ember.frobenius_norm(ember.tensor([[3., 4.]]), (0, 1))
    tensor(5.)
    """
    require_tensor(input, "frobenius_norm")
    _warn_once("frobenius_norm is deprecated; use ember.linalg.vector_norm(input, 2, dim, keepdim)", stacklevel=4)
    norm = linalg.vector_norm(input, 2, tuple(dim) if not isinstance(dim, int) else dim, keepdim, out=out)
    return norm if out is not None else named_node(norm, "NormBackward1", input)  # (torch's node: torch.norm's)


@ember_function
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a vector: columns of its powers, highest first unless ``increasing``.

    >>> ember.vander(ember.tensor([1, 2, 3]), 3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    require_tensor(x, "vander", name="x")
    if x.dim() != 1:
        raise RuntimeError(f"vander: x must be a one-dimensional tensor, got shape {list(x.shape)}")
    columns = x.size(0) if N is None else N
    if columns < 0:
        raise RuntimeError(f"vander: N must be non-negative, got {columns}")
    if not (x.is_floating_point() or x.is_complex()):  # integers and bools: int64 powers, as torch
        x = x.to(_INT64)
    if columns == 0:
        return x.new_empty(x.size(0), 0)
    powers = [ones_like(x).unsqueeze(1)]
    if columns > 1:
        powers.append(x.unsqueeze(1).expand(-1, columns - 1).cumprod(1))
    result = cat(powers, 1)
    return result if increasing else result.flip(1)


# ----------------------------------------------------------------- histograms


def _histogram_input(op: str, input: Tensor, weight) -> None:
    require_tensor(input, op)
    refuse_integers("histogramdd", input, complex_too=True)  # (torch's kernel is floating only)
    _float_only(op, input)
    if weight is not None:
        if require_tensor(weight, op, name="weight").shape != input.shape[:weight.dim()] or weight.dtype != input.dtype:
            raise RuntimeError(f"{op}: expected weight of dtype {input.dtype} and shape matching the input's "
                               f"samples, got {weight.dtype} of shape {list(weight.shape)}")


def _edges(op: str, bins, low_high, dtype: np.dtype):
    """What NumPy takes as ``bins``: a count (with ``range``) or the edges themselves."""
    if isinstance(bins, Tensor):
        if bins.dim() != 1 or bins.numel() < 1:
            raise RuntimeError(f"{op}: expected bins to be a 1-D tensor of edges, got shape {list(bins.shape)}")
        if bins._data.dtype != dtype:
            raise RuntimeError(f"{op}: the bin edges must have the input's dtype {_dtype.from_numpy_dtype(dtype)}, "
                               f"got {bins.dtype}; convert them with bins.to(input.dtype)")
        return bins._data, None
    if bins <= 0:
        raise RuntimeError(f"{op}: expected bins to be positive, got {bins}")
    if low_high is not None and low_high[0] > low_high[1]:
        raise RuntimeError(f"{op}: expected range's min <= max, got {tuple(low_high)}")
    return bins, low_high


def _spaced_as_torch(edges: np.ndarray, bins, dtype: np.dtype) -> np.ndarray:
    """Equal bins' edges as torch spaces them (its linspace in the input's dtype, between NumPy's first and last
    edges), where NumPy's own, computed in double, may differ in the last place; given edges as they are."""
    if isinstance(bins, np.ndarray):
        return edges.astype(dtype)
    return _linspace_values(edges[0], edges[-1], len(edges), dtype)


def _equal_bins(op: str, values: np.ndarray, bins: int, low_high, dtype: np.dtype) -> np.ndarray:
    """The edges of ``bins`` equal bins over ``low_high`` (else the values' own range, widened by a half on
    each side if it is one point, as NumPy and torch widen it), spaced as torch spaces them."""
    if low_high is None:
        low_high = (values.min(), values.max()) if values.size else (0.0, 1.0)
    low, high = (float(v) for v in low_high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"{op}: the range [{low}, {high}] is not finite; pass a finite range=(min, max)")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return _linspace_values(low, high, bins + 1, dtype)


def _counted(count, data: np.ndarray, bins, low_high, weights, density: bool) -> tuple:
    return count(data, bins, low_high, weights=weights, density=density)


def _numpy_histogram(op: str, count, data: np.ndarray, bins, low_high, weights, density: bool) -> tuple:
    try:
        return quietly(IGNORE_ALL, _counted, count, data, bins, low_high, weights, density)
    except ValueError as e:  # a range that is not finite, or edges that decrease
        raise RuntimeError(f"{op}: {e}; pass a finite range=(min, max) or increasing bin edges") from None


@ember_function
def histogram(input: Tensor, bins, *, range: Sequence[float] | None = None, weight: Tensor | None = None,
              density: bool = False, out=None):
    """Counts (or summed ``weight``s) of ``input``'s values in ``bins`` equal bins or between given edges.

    The last bin includes its right edge. Returns ``(hist, bin_edges)``.

    >>> ember.histogram(ember.tensor([1., 2., 1.]), bins=4, range=(0., 3.))
    ember.return_types.histogram(
    hist=tensor([0., 2., 1., 0.]),
    bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    _histogram_input("histogram", input, weight)
    dtype = input._data.dtype
    bins, low_high = _edges("histogram", bins, range, dtype)
    data = input._data.reshape(-1)
    weights = None if weight is None else weight._data.reshape(-1)
    counts, edges = _numpy_histogram("histogram", np.histogram, data, bins, low_high, weights, density)
    result = return_types.histogram(wrap(counts.astype(dtype)), wrap(_spaced_as_torch(edges, bins, dtype)))
    if out is None:
        return result
    return return_types.histogram_out(tuple([into_out("histogram", r, o) for r, o in zip(result, out)]))


@ember_function
def histogramdd(input: Tensor, bins, *, range: Sequence[float] | None = None, weight: Tensor | None = None,
                density: bool = False):
    """The histogram of ``input``'s rows as points in ``D = input.shape[-1]`` dimensions.

    ``bins`` is one count, a count per dimension or a list of edge tensors; ``range`` is
    ``[min0, max0, min1, max1, ...]``. Returns ``(hist, bin_edges)`` with one edge tensor per dimension.

    >>> ember.histogramdd(ember.tensor([[0., 0.], [1., 1.]]), bins=2).hist
    tensor([[1., 0.],
            [0., 1.]])
    """
    _histogram_input("histogramdd", input, weight)
    if input.dim() < 1:
        raise RuntimeError("histogramdd: expected input of at least one dimension (..., D)")
    dims = input.size(-1)
    dtype = input._data.dtype
    if isinstance(bins, int) or isinstance(bins, Tensor):
        bins = [bins] * dims
    if len(bins) != dims:
        raise RuntimeError(f"histogramdd: expected {dims} bin specifications (one per dimension), got {len(bins)}")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"histogramdd: expected range of {2 * dims} numbers (min and max per dimension), "
                           f"got {len(range)}")
    pairs = [None if range is None else (range[2 * d], range[2 * d + 1]) for d in np.arange(dims)]
    specs = [_edges("histogramdd", b, pair, dtype) for b, pair in zip(bins, pairs)]
    points = input._data.reshape(-1, dims)
    weights = None if weight is None else weight._data.reshape(-1)
    edges = [b if isinstance(b, np.ndarray) else _equal_bins("histogramdd", points[:, d], b, low_high, dtype)
             for d, (b, low_high) in enumerate(specs)]
    counts, edges = _numpy_histogram("histogramdd", np.histogramdd, points, edges, None, weights, density)
    return return_types.histogramdd(wrap(counts.astype(dtype)), tuple(wrap(e.astype(dtype)) for e in edges))
