"""cdist: the p-norm distances between the rows of two (batches of) matrices.

Two ways to compute them, chosen as torch chooses (``compute_mode``):

* by matrix products (p = 2 only): ``sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0))``, one BLAS product and no pair
  difference at all. It is fast, and loses precision for points close together compared with their size
  (the squares cancel), which is why torch lets one opt out of it.
* by the exact difference of every pair, for every p: the differences are made and reduced a block of pairs
  at a time, so memory stays bounded whatever the sizes.

>>> import ember
>>> ember.cdist(ember.tensor([[0., 0.], [1., 1.]]), ember.tensor([[3., 4.]]), p=1)
tensor([[7.],
        [5.]])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _blas, _dtype
from ember._dtype import from_numpy_dtype
from ember._ops import views as _views
from ember._ops._support import check_broadcast, refuse_bool, require_tensor, wrap
from ember._ops.arithmetic import where
from ember._tensor import Tensor
from ember.autograd.function import Function

COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": True,
                 "donot_use_mm_for_euclid_dist": False}
# torch's default mode takes the products once either side has more rows than this
_ROWS_FOR_PRODUCTS = 25
# Elements of one block of pair differences: 512 KB in float32, so that making a block, changing it in place
# and reducing it all run in the L2 cache (measured: blocks four times larger run 1.5 times slower).
_BLOCK_ELEMENTS = 1 << 17


# ----------------------------------------------------------------- by matrix products (p = 2)


def _squared_norms(x: np.ndarray) -> np.ndarray:
    """Each row's squared norm, summed in double and rounded once: a single-precision sum's error would add to
    the cancellation of close points (with it, the product form is as accurate as torch's)."""
    return np.einsum("...i,...i->...", x, x, dtype=np.float64).astype(x.dtype, copy=False)


class EuclideanDist(Function):
    """The Euclidean distances of all pairs of rows by matrix products (batch dims broadcast)."""

    backward_name = "EuclideanDistBackward0"
    backward_on_arrays = True  # matmul, swapaxes, sum and comparisons: methods of both

    @staticmethod
    def forward(ctx, x1, x2):
        a, b = x1._data, x2._data
        dtype = a.dtype
        if dtype in _dtype.LOW:  # NumPy has no fast 16-bit product: computed in single, rounded once
            a, b = a.astype(np.float32), b.astype(np.float32)
        squares = _blas.matmul(a, b.swapaxes(-1, -2))
        squares *= -2
        squares += _squared_norms(a)[..., :, None]
        squares += _squared_norms(b)[..., None, :]
        np.maximum(squares, 0, out=squares)  # (cancellation can leave a small negative number)
        out = wrap(np.sqrt(squares, out=squares).astype(dtype, copy=False))
        ctx.save_for_backward(x1, x2, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x1, x2, dist = ctx.saved_tensors
        return euclidean_gradients(x1, x2, dist, grad, ctx.needs_input_grad)


def euclidean_gradients(x1, x2, dist, grad, needs: tuple) -> tuple:
    """The gradients of ``sum(grad * dist)`` for Euclidean distances ``dist`` (tensors or arrays alike):
    ``sum_j grad_ij / dist_ij (x1_i - x2_j)``, as products, with no pair difference."""
    # grad / dist, 0 at a distance of 0: the subgradient torch takes where two points coincide
    kept = dist != 0
    ratio = grad * kept / (dist + (dist == 0))
    grad1 = x1 * ratio.sum(-1)[..., None] - ratio @ x2 if needs[0] else None
    grad2 = x2 * ratio.sum(-2)[..., None] - ratio.swapaxes(-1, -2) @ x1 if needs[1] else None
    return grad1, grad2


# ----------------------------------------------------------------- exact Euclidean distances of float32 rows

# Where a squared distance is below this share of the two squared norms, the products in double may be off by
# more than a tenth of single precision's rounding: such pairs are summed from their differences instead.
_CLOSE = 1e-6


def _finite(*operands: np.ndarray) -> bool:
    return all(np.isfinite(x).all() for x in operands)


def _in_double(p: float, *operands: np.ndarray) -> bool:
    """Whether exact distances go by products in double: p = 2, float32, and finite (an infinite coordinate
    has an infinite distance, which the products would make nan)."""
    return p == 2 and operands[0].dtype == np.float32 and _finite(*operands)


def single_euclidean_in_double(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The Euclidean distances of the float32 rows of ``a [..., P, M]`` and ``b [..., R, M]``, as exact as by
    their differences (torch's 'donot_use_mm_for_euclid_dist'), by products in double: the cancellation of
    ``|a|^2 + |b|^2 - 2 a.b`` is about 2^-53 of the squared norms, under single rounding but for close pairs,
    which are found and taken by their differences."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    norms_a, norms_b = _squared_norms(a)[..., :, None], _squared_norms(b)[..., None, :]
    squares = _blas.matmul(a, b.swapaxes(-1, -2))
    squares *= -2
    squares += norms_a
    squares += norms_b
    close = squares < _CLOSE * (norms_a + norms_b)
    if close.any():
        _squares_of_differences(a, b, np.nonzero(close), squares)
    np.maximum(squares, 0, out=squares)
    return np.sqrt(squares, out=squares).astype(np.float32)


def _squares_of_differences(a: np.ndarray, b: np.ndarray, pairs: tuple, squares: np.ndarray) -> None:
    """Write the squared distance of each pair (indices as ``np.nonzero`` gives them) into ``squares``, from
    the differences, a block of pairs at a time."""
    batch = squares.shape[:-2]
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    step = max(_BLOCK_ELEMENTS // max(a.shape[-1], 1), 1)
    for start in range(0, pairs[0].size, step):
        part = tuple(index[start:start + step] for index in pairs)
        diff = a[part[:-1]] - b[part[:-2] + part[-1:]]
        squares[part] = np.einsum("km,km->k", diff, diff)


# ----------------------------------------------------------------- by pair differences, in blocks


class _Layout:
    """Both operands broadcast to one batch and laid out columns first (``[M, batch, rows]``), the one with
    more rows as ``inner``: a block of differences ``[M, batch, rows, inner]`` is then reduced over its first
    axis, which NumPy runs as whole-row vector operations, and its rows are long whatever the shapes."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        self.count = math.prod(self.batch)
        self.swapped = a.shape[-2] > b.shape[-2]
        outer, inner = (b, a) if self.swapped else (a, b)
        self.outer, self.inner = self._columns_first(outer), self._columns_first(inner)
        self.columns, _, self.rows = self.outer.shape
        self.inner_rows = self.inner.shape[2]

    def _columns_first(self, x: np.ndarray) -> np.ndarray:
        stacked = np.broadcast_to(x, self.batch + x.shape[-2:]).reshape((self.count,) + x.shape[-2:])
        return np.ascontiguousarray(np.moveaxis(stacked, -1, 0))

    def oriented(self, pairs: np.ndarray) -> np.ndarray:
        """``pairs`` as ``[count, rows, inner]`` (as the layout is), given as ``[..., P, R]`` (batch broadcast)."""
        pairs = pairs.reshape((self.count,) + pairs.shape[-2:])
        return pairs.swapaxes(-1, -2) if self.swapped else pairs

    def result(self, pairs: np.ndarray) -> np.ndarray:
        """``[count, rows, inner]`` back as ``[..., P, R]``, C-contiguous."""
        if self.swapped:
            pairs = np.ascontiguousarray(pairs.swapaxes(-1, -2))
        return pairs.reshape(self.batch + pairs.shape[-2:])

    def blocks(self):
        """(batch slice, row slice) covering every pair, each block of about ``_BLOCK_ELEMENTS`` differences."""
        per_row = max(self.columns * self.inner_rows, 1)
        rows = max(_BLOCK_ELEMENTS // per_row, 1)
        if rows >= self.rows:
            matrices = max(rows // max(self.rows, 1), 1)
            for start in range(0, self.count, matrices):
                yield slice(start, start + matrices), slice(None)
            return
        for matrix in range(self.count):
            for start in range(0, self.rows, rows):
                yield slice(matrix, matrix + 1), slice(start, start + rows)

    def differences(self, matrices: slice, rows: slice) -> np.ndarray:
        return self.outer[:, matrices, rows, None] - self.inner[:, matrices, None, :]

    def gradient(self, columns_first: np.ndarray) -> np.ndarray:
        """A gradient laid out as ``[M, count, rows]`` back as ``[..., rows, M]``, C-contiguous."""
        rows = columns_first.shape[-1]
        natural = np.ascontiguousarray(np.moveaxis(columns_first, 0, -1))
        return natural.reshape(self.batch + (rows, self.columns))


def _pairwise_sum(terms: np.ndarray, out: np.ndarray) -> None:
    """The sum over the first axis into ``out``, by halves in place: an error that grows with the log of the
    number of terms (``np.add.reduce`` over this axis adds them one by one), as fast."""
    count = terms.shape[0]
    if count < 2:
        out[...] = terms.sum(0)
        return
    while count > 2:
        half = count // 2  # the first half takes the last (an odd count leaves the middle term for later)
        np.add(terms[:half], terms[count - half:count], out=terms[:half])
        count -= half
    np.add(terms[0], terms[1], out=out)


def _reduce_block(diff: np.ndarray, p: float, out: np.ndarray, max_passes_nan: bool = False) -> None:
    """Sum (or max) over the columns of ``|diff|^p``, into ``out``; the root is taken once at the end.
    ``max_passes_nan``: the max of p = inf passes over a nan coordinate, as torch's cdist (not its pdist)."""
    if p == 0:
        np.add.reduce(diff != 0, 0, dtype=out.dtype, out=out)
        out[np.isnan(diff).any(0)] = np.nan  # as torch, whose count of a nan coordinate is nan
        return
    np.abs(diff, out=diff)
    if p == math.inf:
        (np.fmax if max_passes_nan else np.maximum).reduce(diff, 0, out=out, initial=0)
        return
    if p == 2:
        np.multiply(diff, diff, out=diff)
    elif p != 1:
        np.power(diff, p, out=diff)
    _pairwise_sum(diff, out)


def _root(total: np.ndarray, p: float) -> np.ndarray:
    if p == 2:
        return np.sqrt(total, out=total)
    if p in (0, 1, math.inf):
        return total
    # in double: 1 / p rounded to single would be off by up to half an ulp of its own, and the root with it
    return np.power(total, 1 / p, dtype=np.float64).astype(total.dtype, copy=False)


def pair_distances(a: np.ndarray, b: np.ndarray, p: float) -> np.ndarray:
    """The ``p``-norm distance of every pair of rows of ``a [..., P, M]`` and ``b [..., R, M]``: ``[..., P, R]``."""
    layout = _Layout(a, b)
    out = np.zeros((layout.count, layout.rows, layout.inner_rows), a.dtype)
    if layout.columns:
        for matrices, rows in layout.blocks():
            _reduce_block(layout.differences(matrices, rows), p, out[matrices, rows], max_passes_nan=True)
    return layout.result(_root(out, p))


_INTEGER_OF = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}


def _signed(grad: np.ndarray, diff: np.ndarray, finite: bool) -> np.ndarray:
    """``sign(diff) * grad``, in ``diff``'s memory when ``diff`` has no nan (``finite`` inputs): by the floats'
    bits, an integer ``and`` and ``xor`` taking half the time of ``np.sign`` and a product, then 0 where
    ``diff`` is 0."""
    integer = _INTEGER_OF.get(diff.dtype)
    if not finite or integer is None or grad.dtype != diff.dtype:
        return np.sign(diff) * grad
    zero = diff == 0
    bits = diff.view(integer)
    np.bitwise_and(bits, integer(np.iinfo(integer).min), out=bits)  # the sign bit alone
    np.bitwise_xor(bits, grad.view(integer), out=bits)
    if zero.any():
        diff[zero] = 0
    return diff


def _at_maximum_with_nonfinite(absolute: np.ndarray, dist: np.ndarray) -> None:
    """In place, 1 where ``|diff|`` reaches the distance, else 0, but nan where either is nan or both are
    infinite: ``1 - min(1, ceil(| |diff| - dist |))``, torch's indicator, which says so."""
    absolute -= dist
    np.abs(absolute, out=absolute)
    np.ceil(absolute, out=absolute)
    np.minimum(absolute, 1, out=absolute)
    np.subtract(1, absolute, out=absolute)


def _weigh_block(diff: np.ndarray, dist: np.ndarray, grad: np.ndarray, p: float, finite: bool) -> np.ndarray:
    """``grad * d dist / d diff`` for a block (p > 0), in ``diff``'s memory where it can: 0 where the distance
    is 0, as torch (for p = 1 and inf the sign of a zero difference already says so)."""
    if p == 1:
        return _signed(grad, diff, finite)
    if p == math.inf:
        at_maximum = np.abs(diff)
        if finite:
            np.equal(at_maximum, dist, out=at_maximum)  # 1 at every coordinate that reaches it (ties all do)
        else:
            _at_maximum_with_nonfinite(at_maximum, dist)
        weighted = _signed(grad, diff, finite)
        weighted *= at_maximum
        return weighted
    zero = dist == 0
    grad = grad * ~zero
    divisor = dist + zero
    if p == 2:
        diff *= grad / divisor
        return diff
    sign = np.sign(diff)
    np.abs(diff, out=diff)
    np.divide(diff, divisor, out=diff)
    if p < 1:  # |diff|^(p - 1) is infinite where a coordinate agrees (its sign is 0): that term is 0, as torch
        diff[sign == 0] = 1
    np.power(diff, p - 1, out=diff)
    diff *= sign
    diff *= grad
    return diff


def pair_distance_gradients(a: np.ndarray, b: np.ndarray, dist: np.ndarray, grad: np.ndarray, p: float,
                            needs: tuple) -> tuple:
    """The gradients for ``a`` and ``b`` (batch dims broadcast) of ``sum(grad * pair_distances(a, b, p))``."""
    layout = _Layout(a, b)
    first, second = (1, 0) if layout.swapped else (0, 1)
    wanted = (needs[first], needs[second])  # of the outer and the inner rows
    grads = np.zeros_like(layout.outer), np.zeros_like(layout.inner)
    if p != 0 and layout.columns:
        dist, grad, finite = layout.oriented(dist), layout.oriented(grad), _finite(a, b)
        for matrices, rows in layout.blocks():
            weighted = _weigh_block(layout.differences(matrices, rows), dist[matrices, rows],
                                    grad[matrices, rows], p, finite)
            # (np.add.reduce rather than .sum: a warning of inf - inf is then raised from here, where ember's
            # filter keeps it quiet, as torch is)
            if wanted[0]:
                grads[0][:, matrices, rows] = np.add.reduce(weighted, -1)
            if wanted[1]:
                grads[1][:, matrices] -= np.add.reduce(weighted, -2)
    return (layout.gradient(grads[first]) if needs[0] else None,
            layout.gradient(grads[second]) if needs[1] else None)


class Cdist(Function):
    """The p-norm distances between the rows of ``x1`` and those of ``x2`` by their differences."""

    backward_name = "CdistBackward0"
    backward_on_arrays = True  # the first-order gradient has its own kernel on arrays, in blocks (below)

    @staticmethod
    def forward(ctx, x1, x2, p):
        a, b = x1._data, x2._data
        ctx.in_double = _in_double(p, a, b)
        out = wrap(single_euclidean_in_double(a, b) if ctx.in_double else pair_distances(a, b, p))
        ctx.save_for_backward(x1, x2, out)
        ctx.p = p
        return out

    @staticmethod
    def backward(ctx, grad):
        x1, x2, dist = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if type(grad) is np.ndarray and ctx.in_double:
            return _single_euclidean_gradients_in_double(x1, x2, dist, grad, needs) + (None,)
        if type(grad) is np.ndarray:
            return pair_distance_gradients(x1, x2, dist, grad, ctx.p, needs) + (None,)
        # under create_graph: the same gradient in ember ops, so that it can be differentiated again
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        weighted = grad.unsqueeze(-1) * _distance_gradient(diff, dist.unsqueeze(-1), ctx.p)
        return (weighted.sum(-2) if needs[0] else None), (-weighted.sum(-3) if needs[1] else None), None


def _single_euclidean_gradients_in_double(x1: np.ndarray, x2: np.ndarray, dist: np.ndarray, grad: np.ndarray,
                                          needs: tuple) -> tuple:
    """The float32 gradients of the exact Euclidean distances, by products in double: no pair difference, and
    more accurate than summing the single-precision terms. (The products' cancellation, of the order of
    2^-53 |x| / dist relative, stays below single precision's rounding for any two points a float32 apart;
    in single it would not, which is why the forward takes the differences.)"""
    in_double = euclidean_gradients(x1.astype(np.float64), x2.astype(np.float64), dist.astype(np.float64),
                                    grad.astype(np.float64), needs)
    return tuple(None if g is None else g.astype(np.float32) for g in in_double)


def _distance_gradient(diff: Tensor, dist: Tensor, p: float) -> Tensor:
    """d dist / d diff for each pair: 0 where the distance is 0 (a subgradient, as torch)."""
    if p == 0:
        return diff.new_zeros(diff.shape)
    if p == 1:  # nan at a nan coordinate, as torch's gradient (its sign() says 0 there)
        return where(diff != diff, diff, diff.sign())
    if p == math.inf:  # (torch's indicator of the coordinates at the maximum: nan for inf - inf, as there)
        return diff.sign() * (1 - (diff.abs() - dist).abs().ceil().clamp(max=1))
    zero = dist == 0
    safe = where(zero, 1.0, dist)
    if p == 2:
        return where(zero, 0.0, diff / safe)
    if p < 1:  # |diff|^(p - 1) is infinite where a coordinate agrees: that coordinate's term is 0, as torch
        agree = diff == 0
        return where(zero | agree, 0.0, diff.sign() * (where(agree, 1.0, diff.abs()) / safe) ** (p - 1))
    return where(zero, 0.0, diff.sign() * (diff.abs() / safe) ** (p - 1))


# ----------------------------------------------------------------- pdist: the pairs i < j of one matrix


def _triangle_blocks(rows: int, columns: int):
    """(start, stop): blocks of rows of the upper triangle of pairs, each of about ``_BLOCK_ELEMENTS``
    differences (row i pairs with the rows after it, so the blocks grow as the rows near the end)."""
    start = 0
    while start < rows - 1:
        width = rows - start - 1
        stop = min(start + max(_BLOCK_ELEMENTS // max(columns * width, 1), 1), rows - 1)
        yield start, stop
        start = stop


def _upper(rows: int, width: int) -> np.ndarray:
    """Which pairs of a block (row ``start + r``, row ``start + 1 + c``) have the second row after the first."""
    return np.arange(width)[None, :] >= np.arange(rows)[:, None]


def condensed_distances(x: np.ndarray, p: float) -> np.ndarray:
    """The ``p``-norm distances of the rows ``i < j`` of ``x [N, M]``, in row-major order (``N (N - 1) / 2``)."""
    rows, columns = x.shape
    out = np.zeros(rows * (rows - 1) // 2, x.dtype)
    if not columns:
        return out
    columns_first, done = np.ascontiguousarray(x.T), 0
    for start, stop in _triangle_blocks(rows, columns):
        diff = columns_first[:, start:stop, None] - columns_first[:, None, start + 1:]
        block = np.empty(diff.shape[1:], x.dtype)
        _reduce_block(diff, p, block)
        values = block[_upper(*block.shape)]
        out[done:done + values.size] = values
        done += values.size
    return _root(out, p)


def condensed_distance_gradient(x: np.ndarray, dist: np.ndarray, grad: np.ndarray, p: float) -> np.ndarray:
    """The gradient for ``x`` of ``sum(grad * condensed_distances(x, p))``."""
    rows, columns = x.shape
    columns_first = np.ascontiguousarray(x.T)
    gradient, done, finite = np.zeros_like(columns_first), 0, _finite(x)
    for start, stop in _triangle_blocks(rows, columns) if p != 0 and columns else ():
        diff = columns_first[:, start:stop, None] - columns_first[:, None, start + 1:]
        upper = _upper(*diff.shape[1:])
        size = int(np.count_nonzero(upper))
        # the block's distances and gradients as a rectangle, 0 below the diagonal (a 0 weighs nothing)
        dist_block, grad_block = np.zeros(upper.shape, x.dtype), np.zeros(upper.shape, x.dtype)
        dist_block[upper], grad_block[upper] = dist[done:done + size], grad[done:done + size]
        weighted = _weigh_block(diff, dist_block, grad_block, p, finite)
        gradient[:, start:stop] += np.add.reduce(weighted, -1)
        gradient[:, start + 1:] -= np.add.reduce(weighted, -2)
        done += size
    return np.ascontiguousarray(gradient.T)


def _upper_triangle(rows: int) -> np.ndarray:
    """The mask of the pairs ``i < j`` of a square matrix (as a mask, it selects them in row-major order
    faster than ``np.triu_indices`` can even list them)."""
    return np.triu(np.ones((rows, rows), bool), 1)


def _single_condensed_euclidean_gradient_in_double(x: np.ndarray, dist: np.ndarray, grad: np.ndarray
                                                   ) -> np.ndarray:
    """As ``_single_euclidean_gradients_in_double``, for the pairs ``i < j`` of one matrix: the pairs set in
    the upper triangle of square matrices, x taking both sides' gradients."""
    upper = _upper_triangle(x.shape[0])
    square_dist, square_grad = np.zeros((2, x.shape[0], x.shape[0]))
    square_dist[upper], square_grad[upper] = dist, grad
    x = x.astype(np.float64)
    first, second = euclidean_gradients(x, x, square_dist, square_grad, (True, True))
    return (first + second).astype(np.float32)


class Pdist(Function):
    """The p-norm distances of the pairs of rows ``i < j`` of a matrix, by their differences."""

    backward_name = "PdistBackward0"
    backward_on_arrays = True  # the first-order gradient has its own kernel on arrays, in blocks

    @staticmethod
    def forward(ctx, x, p):
        data = x._data
        ctx.in_double = _in_double(p, data)
        if ctx.in_double:
            out = wrap(single_euclidean_in_double(data, data)[_upper_triangle(data.shape[0])])
        else:
            out = wrap(condensed_distances(data, p))
        ctx.save_for_backward(x, out)
        ctx.p = p
        return out

    @staticmethod
    def backward(ctx, grad):
        x, dist = ctx.saved_tensors
        if type(grad) is np.ndarray and ctx.in_double:
            return _single_condensed_euclidean_gradient_in_double(x, dist, grad), None
        if type(grad) is np.ndarray:
            return condensed_distance_gradient(x, dist, grad, ctx.p), None
        # under create_graph: in ember ops, so that it can be differentiated again
        first, second = (wrap(index) for index in np.triu_indices(x.shape[0], 1))
        weighted = grad.unsqueeze(-1) * _distance_gradient(x[first] - x[second], dist.unsqueeze(-1), ctx.p)
        return x.new_zeros(x.shape).index_add(0, first, weighted).index_add(0, second, -weighted), None


def pdist(x: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distances between every pair of rows ``i < j`` of a matrix, in row-major order.

    >>> ember.pdist(ember.tensor([[0., 0.], [3., 4.], [0., 1.]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    x = require_tensor(x, "pdist")
    if x._data.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x._data.ndim}D")
    if _dtype.kind(x._data.dtype) != "f":
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {from_numpy_dtype(x._data.dtype)}; "
                           "convert it first, e.g. x.double()")
    if not p >= 0:  # (nan too)
        raise RuntimeError(f"pdist only supports non-negative p values, got {p}")
    if x._data.dtype in _dtype.LOW and x._data.shape[0] > 1:  # as torch: no 16-bit kernel
        raise NotImplementedError(f"\"pdist\" not implemented for '{_dtype.scalar_type_name(x._data.dtype)}'; "
                                  "convert it first, e.g. x.float()")
    return Pdist.apply(x, p)


# ----------------------------------------------------------------- cdist


def _check_operands(a: Tensor, b: Tensor, p: float) -> None:
    for name, t in (("X1", a), ("X2", b)):
        if t._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t._data.ndim}D")
        if _dtype.kind(t._data.dtype) != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{from_numpy_dtype(t._data.dtype)}; convert it first, e.g. x.double()")
    if a._data.shape[-1] != b._data.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns. X1: {a._data.shape[-1]} "
                           f"X2: {b._data.shape[-1]}")
    if not p >= 0:  # (nan too)
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"cdist: expected both inputs to have the same dtype, but got "
                           f"{from_numpy_dtype(a._data.dtype)} and {from_numpy_dtype(b._data.dtype)}; convert one "
                           "first, e.g. x2.to(x1.dtype)")
    refuse_bool("cdist", a._data)
    check_broadcast("cdist", a._data.shape[:-2], b._data.shape[:-2])


def _refuse_16_bits_by_differences(a: Tensor, b: Tensor) -> None:
    """As torch: 16-bit floats go only by products (its difference kernel has none), unless there is no pair."""
    if a._data.dtype in _dtype.LOW and a._data.size and b._data.size:
        raise NotImplementedError(f"\"cdist\" not implemented for '{_dtype.scalar_type_name(a._data.dtype)}'; "
                                  "convert it first, e.g. x.float(), or take compute_mode='use_mm_for_euclid_dist'")


def _by_products(a: np.ndarray, b: np.ndarray, p: float, always: bool | None) -> bool:
    """Whether torch takes the matrix-product form: p = 2, the mode allows it, and some pair to compute."""
    if p != 2 or always is False or not a.shape[-1] or not a.shape[-2] or not b.shape[-2]:
        return False
    if not all(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])):
        return False
    return always or a.shape[-2] > _ROWS_FOR_PRODUCTS or b.shape[-2] > _ROWS_FOR_PRODUCTS


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
          ) -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` ``[..., P, M]`` and each of ``x2`` ``[..., R, M]``.

    For p = 2, by matrix products when either side has more than 25 rows, unless ``compute_mode`` says
    ``'donot_use_mm_for_euclid_dist'`` (exact for close points) or ``'use_mm_for_euclid_dist'`` (always).

    >>> ember.cdist(ember.tensor([[0., 0.], [1., 1.]]), ember.tensor([[3., 4.]]))
    tensor([[5.0000],
            [3.6056]])
    """
    if not isinstance(compute_mode, str) or compute_mode not in COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    a, b = require_tensor(x1, "cdist", 1, "x1"), require_tensor(x2, "cdist", 2, "x2")
    _check_operands(a, b, p)
    if not _by_products(a._data, b._data, p, COMPUTE_MODES[compute_mode]):
        _refuse_16_bits_by_differences(a, b)
        return Cdist.apply(a, b, p)
    if a._data.ndim == 2 == b._data.ndim:
        distances = EuclideanDist.apply(a, b)
        return _views.View.apply(distances, distances._data.shape)  # torch's graph: ViewBackward0 first
    # as torch: each operand expanded to the batch and flattened to [batch, rows, M] (a copy where it expands,
    # which the product then keeps: a later in-place change of the input does not concern it)
    batch = np.broadcast_shapes(a._data.shape[:-2], b._data.shape[:-2])
    flat = [x.expand(batch + x._data.shape[-2:]).contiguous().view((math.prod(batch),) + x._data.shape[-2:])
            for x in (a, b)]
    distances = EuclideanDist.apply(*flat)
    return _views.View.apply(distances, batch + distances._data.shape[-2:])
