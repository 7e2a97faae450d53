"""Batch, layer and group normalization as one op each, as in torch (``NativeBatchNormBackward0``,
``NativeLayerNormBackward0``, ``NativeGroupNormBackward0``): the forward runs on NumPy arrays in one pass,
the backward is the closed form in ember ops, with the statistics recomputed from the input so that it has
a gradient too.

>>> import ember
>>> x = ember.tensor([[1., 3.], [2., 6.]], requires_grad=True)
>>> ember.nn.functional.layer_norm(x, [2])
tensor([[-1.0000,  1.0000],
        [-1.0000,  1.0000]], grad_fn=<NativeLayerNormBackward0>)
"""
from __future__ import annotations

import math

import numpy as np

import ember
from ember._ops._support import wrap
from ember._ops.tied_gradients import tied_to_inputs
from ember.autograd.function import Function


class _Normalize(Function):
    """``(x - mean) / sqrt(var + eps) * weight + bias``, the statistics over ``dims`` (the variance biased).

    ``shape`` lines ``weight`` and ``bias`` up with the input; ``stats``, if a list, receives the
    batch's mean and biased variance (as arrays), so running statistics need no second pass.
    The forward keeps the normalised (by rows: the centred) input and ``1 / std`` for a first-order backward
    on arrays; under
    ``create_graph`` they are recomputed from the input in ember ops, and the same formula records a graph.
    """

    backward_on_arrays = True
    graph_inputs = (0, 1, 2)  # as torch's node: input, weight and bias, (None, 0) for an absent one

    @staticmethod
    def forward(ctx, input, weight, bias, dims, shape, eps, stats):
        x = input._data
        by_rows = _by_rows(x, dims)
        normalised, rstd, mean, var = (_row_statistics if by_rows else _statistics)(x, dims, eps)
        if stats is not None:
            stats.extend((mean, var))
        weight_data = None if weight is None else weight._data.reshape(shape)
        bias_data = None if bias is None else bias._data.reshape(shape)
        recording = _records_backward(ctx)
        output = _row_output(normalised, rstd, weight_data, bias_data, dims) if by_rows else \
            _affine(normalised, weight_data, bias_data)
        ctx.save_for_backward(input, weight)
        affine = weight if weight is not None else bias
        ctx.constants = (dims, shape, None if affine is None else affine._data.shape)
        ctx.eps, ctx.arrays = eps, (normalised, rstd) if recording else None
        return wrap(output.astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        needs, dims = ctx.needs_input_grad, ctx.constants[0]
        # the forward's arrays serve one first-order backward (a second one, with retain_graph, recomputes)
        arrays, ctx.arrays = ctx.arrays, None
        if isinstance(grad, np.ndarray) and arrays is not None:
            return (*normalize_backward(grad, *arrays[:2], weight, *ctx.constants, needs[:3]), None, None, None, None)
        arrays = (_row_statistics if _by_rows(input, dims) else _statistics)(input, dims, ctx.eps)
        gradients = normalize_backward(grad, *arrays[:2], weight, *ctx.constants, needs[:3])
        if not isinstance(grad, np.ndarray):
            gradients = _tied(gradients, ctx)
        return (*gradients, None, None, None, None)


def _tied(gradients: tuple, ctx) -> tuple:
    """Recorded gradients of input, weight and bias, each tied to the input and the weight, as torch's (one node
    reads both: each of its gradients requires grad where either does; the derivative of the tie is undefined,
    as that of torch's node beyond its formula)."""
    return tuple(tied_to_inputs(g, ctx, 0, 1, undefined=True) for g in gradients)


def _records_backward(ctx) -> bool:
    """Whether a backward may follow the forward (an input requires grad, or it is unknown): else the forward's
    arrays are not kept (group norm writes its output over its centred input: no fresh array)."""
    needs = getattr(ctx, "needs_input_grad", None)
    return needs is None or any(needs[:3])


def _statistics(x, dims: tuple, eps: float) -> tuple:
    """The normalised ``x``, ``1 / std``, the mean and the biased variance; on arrays or in ember ops (where
    they carry the input's graph)."""
    mean = _mean(x, dims)
    centred = x - mean
    var = _mean(centred * centred, dims)
    if not isinstance(x, np.ndarray):
        return centred * ember.rsqrt(var + eps), ember.rsqrt(var + eps), mean, var
    rstd = _reciprocal_deviation(var, eps, centred, lambda wide: _mean(wide * wide, dims))
    return centred * rstd, rstd, mean, var


def _reciprocal_deviation(var: np.ndarray, eps: float, centred: np.ndarray, variance_of) -> np.ndarray:
    """``1 / sqrt(var + eps)``. A float32 variance that overflowed (deviations from 1.9e19, whose squares leave
    single's range) is taken again in double: the deviation itself is in range, and so is its reciprocal
    (without this, every output would be 0)."""
    if var.dtype == np.float32 and np.isinf(var).any():
        var = variance_of(centred.astype(np.float64))
        return (1 / np.sqrt(var + eps)).astype(np.float32)
    return 1 / np.sqrt(var + eps)


def _by_rows(x, dims: tuple) -> bool:
    """Whether the statistics are over an array's last dims (layer norm's case) in single or double precision:
    then they are those of the rows of a matrix, and sums along rows are BLAS products with ones."""
    return (isinstance(x, np.ndarray) and x.dtype in (np.float32, np.float64) and x.size > 0  # (no rows to shape)
            and dims == tuple(range(x.ndim - len(dims), x.ndim)))


def _affine(normalised: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None) -> np.ndarray:
    output = normalised
    if weight is not None:
        output = output * weight
    if bias is not None:
        output = output + bias if output is normalised else np.add(output, bias, out=output)
    return output


def _row_sums(rows: np.ndarray) -> np.ndarray:
    # a matrix-vector product with ones: about six times faster than NumPy's sum along short rows
    return rows @ np.ones(rows.shape[1], rows.dtype)


def _scales(rstd: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``rstd[:, None] * weight`` as one product (BLAS): the factor of each element of the rows."""
    return np.dot(rstd[:, None], weight.reshape(1, -1))


def _times_scales(rows: np.ndarray, rstd: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``rows * rstd[:, None] * weight``, written over the factors' array (one fresh array, not two)."""
    scales = _scales(rstd, weight)
    return np.multiply(rows, scales, out=scales) if scales.dtype == np.result_type(rows, scales) else rows * scales


def _row_statistics(x: np.ndarray, dims: tuple, eps: float) -> tuple:
    """``_statistics`` over the last dims of an array, as rows, but the first array is the *centred* input
    (``x - mean``, not yet times ``1 / std``): the output and the backward take the factors from it directly,
    which saves a pass over the rows each."""
    width = math.prod(x.shape[x.ndim - len(dims):])
    rows = x.reshape(-1, width)
    mean = _row_sums(rows) / width
    centred = rows - mean[:, None]
    var = _sums_of_squares(centred) / width
    if rows.dtype == np.float32:
        large_mean = mean * mean > var  # (False for a row with an inf or nan: its statistics stay as they are)
        if large_mean.any():
            mean, var = _recentre(centred, mean, var, large_mean)
    rstd = _reciprocal_deviation(var, eps, centred, lambda wide: _sums_of_squares(wide) / width)
    kept = x.shape[:x.ndim - len(dims)] + (1,) * len(dims)
    return centred.reshape(x.shape), rstd.reshape(kept), mean.reshape(kept), var.reshape(kept)


_BLOCK = 128
_WHOLE_ROWS_UP_TO = 1024


def _sums_of_squares(rows: np.ndarray) -> np.ndarray:
    """Each row's sum of squares, with no array of the squares (einsum). Along a whole row einsum adds one
    product at a time, its error growing with the row (in single precision ten times NumPy's pairwise sum's
    over 16384); over blocks of 128, then the blocks' sums, it errs about as the pairwise sum, no slower."""
    whole = rows.shape[1] - rows.shape[1] % _BLOCK
    if rows.shape[1] <= _WHOLE_ROWS_UP_TO:  # (a layer norm's rows: the blocks cost more than they gain there)
        return np.einsum("ij,ij->i", rows, rows)
    blocks = rows[:, :whole].reshape(rows.shape[0], -1, _BLOCK)  # (a view: the last dim is split)
    sums = np.einsum("ijk,ijk->ij", blocks, blocks).sum(1)
    if whole < rows.shape[1]:
        tail = rows[:, whole:]
        sums += np.einsum("ij,ij->i", tail, tail)
    return sums


def _recentre(centred: np.ndarray, mean: np.ndarray, var: np.ndarray, rows: np.ndarray) -> tuple:
    """The mean and variance of rows whose mean is large beside their spread, refined: a BLAS sum of single
    precision rows errs by a few times more than NumPy's pairwise one, an error which is a small share of the
    mean but not of the spread. The centred rows' own mean (small, so exact to a few units) is that error; it is
    taken out of the flagged ``rows`` in place, and its square out of their variance (the others, a row holding
    an inf among them, keep theirs)."""
    residual = np.where(rows, _row_sums(centred) / centred.shape[1], 0).astype(centred.dtype)
    centred -= residual[:, None]
    return mean + residual, var - residual * residual


def _row_output(centred: np.ndarray, rstd: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None,
                dims: tuple) -> np.ndarray:
    """``centred * rstd * weight + bias`` by rows, ``rstd`` times ``weight`` taken as one outer product."""
    rows, r = centred.reshape(-1, math.prod(centred.shape[centred.ndim - len(dims):])), rstd.reshape(-1)
    output = rows * r[:, None] if weight is None else _times_scales(rows, r, weight)
    if bias is not None:
        np.add(output, bias.reshape(-1), out=output)
    return output.reshape(centred.shape)


def _row_backward(grad: np.ndarray, centred: np.ndarray, rstd: np.ndarray, weight, dims: tuple,
                  needs: tuple) -> tuple:
    """``normalize_backward`` by rows, from the centred input ``c`` (see ``_row_statistics``) and ``r = 1 / std``:
    with ``a`` and ``t`` the row means of ``grad * weight`` and ``grad * weight * c``, the input's gradient is
    ``grad * (r weight) - c * r**3 t - r a``; row sums and the outer product ``r weight`` are BLAS products."""
    width = math.prod(grad.shape[grad.ndim - len(dims):])
    rows, cent, r = grad.reshape(-1, width), centred.reshape(-1, width), rstd.reshape(-1)
    grad_input = grad_weight = grad_bias = None
    products = rows * cent
    if needs[1]:
        grad_weight = r @ products
    if needs[2]:
        grad_bias = np.ones(rows.shape[0], rows.dtype) @ rows
    if needs[0]:
        w = None if weight is None else weight.reshape(-1)
        spread = (_row_sums(rows) if w is None else rows @ w) / width
        slope = (_row_sums(products) if w is None else products @ w) / width
        grad_input = rows * r[:, None] if w is None else _times_scales(rows, r, w)
        grad_input += np.multiply(cent, (-(r * r * r) * slope)[:, None], out=products)
        grad_input -= (r * spread)[:, None]
        grad_input = grad_input.reshape(grad.shape)
    return grad_input, grad_weight, grad_bias


def _mean(x, dims: tuple):
    if not isinstance(x, np.ndarray):
        return x.mean(dims, keepdim=True)
    if x.size == 0:  # the mean of nothing is nan, as numpy's, but without its warning (torch gives none)
        return np.full(np.sum(x, axis=dims, keepdims=True).shape, np.nan, x.dtype)
    return x.mean(axis=dims, keepdims=True)


def _sum_to(x, shape: tuple, parameter_shape: tuple):
    """``x`` summed over the dims where ``shape`` (its rank) is 1, as a parameter of ``parameter_shape``."""
    if not isinstance(x, np.ndarray):
        return x.sum_to_size(shape).reshape(parameter_shape)
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1)
    return x.sum(axis=axes).reshape(parameter_shape)


def normalize_backward(grad, normalised, rstd, weight, dims: tuple, shape: tuple, parameter_shape: tuple | None,
                       needs: tuple) -> tuple:
    """The gradients of input, weight and bias (None where not needed), on arrays or in ember ops; by rows
    ``normalised`` is the centred input that ``_row_statistics`` returns."""
    if _by_rows(grad, dims) and normalised.shape == grad.shape:
        grad_input, grad_weight, grad_bias = _row_backward(grad, normalised, rstd, weight, dims, needs)
        reshape = (lambda g: g) if parameter_shape is None else (lambda g: None if g is None else
                                                                  g.reshape(parameter_shape))
        return grad_input, reshape(grad_weight), reshape(grad_bias)
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        scaled = grad * weight.reshape(shape) if weight is not None else grad
        grad_input = rstd * (scaled - _mean(scaled, dims) - normalised * _mean(scaled * normalised, dims))
    if needs[1]:
        grad_weight = _sum_to(grad * normalised, shape, parameter_shape)
    if needs[2]:
        grad_bias = _sum_to(grad, shape, parameter_shape)
    return grad_input, grad_weight, grad_bias


class BatchNorm(_Normalize):
    """Training-mode batch normalization: statistics over all dims but the channel dim (1)."""

    backward_name = "NativeBatchNormBackward0"


class LayerNorm(_Normalize):
    """Layer normalization: statistics over the trailing dims."""

    backward_name = "NativeLayerNormBackward0"


class GroupNorm(Function):
    """Group normalization of an ``[N, C, *]`` input: each sample's ``groups`` groups of channels, with their
    positions, normalised as one, then ``weight`` and ``bias`` per channel (either may be None).

    The groups are the rows of an ``[N * groups, C / groups * positions]`` matrix, so their statistics are
    ``_row_statistics``; the per-channel affine map and the backward's sums work on ``[N, C, positions]``,
    where each channel's factor is its group's ``1 / std`` times its weight. ``stats``, if a list, receives the
    mean and biased variance of each group (``[N, groups]`` arrays). Under ``create_graph`` the backward is
    ``normalize_backward`` in ember ops on the ``[N, groups, C / groups, positions]`` view.
    """

    backward_name = "NativeGroupNormBackward0"
    backward_on_arrays = True
    graph_inputs = (0, 1, 2)  # (see _Normalize)

    @staticmethod
    def forward(ctx, input, weight, bias, groups, eps, stats):
        x = input._data
        centred, rstd, mean, var = _group_statistics(_by_channels(x), groups, eps)
        if stats is not None:
            stats.extend((mean, var))
        recording = _records_backward(ctx)
        output = _group_output(centred, rstd, None if weight is None else weight._data,
                               None if bias is None else bias._data, recording)
        ctx.save_for_backward(input, weight)
        ctx.groups, ctx.eps, ctx.arrays = groups, eps, (centred, rstd) if recording else None
        return wrap(output.reshape(x.shape))

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad[:3]
        # the forward's arrays serve one first-order backward (a second one, with retain_graph, recomputes)
        arrays, ctx.arrays = ctx.arrays, None
        if not isinstance(grad, np.ndarray):
            grad_input, grad_weight, grad_bias = _group_backward_in_ops(grad, input, weight, ctx.groups, ctx.eps, needs)
            # (torch's bias gradient of a group norm is the sum of grad alone: it requires grad only where grad does)
            return (*_tied((grad_input, grad_weight), ctx), grad_bias, None, None, None)
        if arrays is None:
            arrays = _group_statistics(_by_channels(input), ctx.groups, ctx.eps)[:2]
        grad_input, grad_weight, grad_bias = _group_backward(_by_channels(grad), *arrays, weight, needs)
        grad_input = None if grad_input is None else grad_input.reshape(input.shape)
        return grad_input, grad_weight, grad_bias, None, None, None


def _by_channels(x: np.ndarray) -> np.ndarray:
    """``x`` as ``[N, C, positions]``."""
    return x.reshape(x.shape[0], x.shape[1], -1) if x.size else x.reshape(x.shape[:2] + (math.prod(x.shape[2:]),))


def _group_statistics(channels: np.ndarray, groups: int, eps: float) -> tuple:
    """The centred input (``[N, C, positions]``), and each group's ``1 / std``, mean and biased variance
    (``[N, groups]`` each)."""
    batch, width = channels.shape[0], channels.shape[1] * channels.shape[2]
    rows = channels.reshape(batch * groups, width // groups)
    centred, rstd, mean, var = _row_statistics(rows, (1,), eps)
    return (centred.reshape(channels.shape), *(a.reshape(batch, groups) for a in (rstd, mean, var)))


def _per_channel(per_group: np.ndarray, channels: int) -> np.ndarray:
    """An ``[N, groups]`` array's values repeated for each channel of the group: ``[N, C]``."""
    return np.repeat(per_group, channels // per_group.shape[1], axis=1)


def _group_output(centred: np.ndarray, rstd: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None,
                  keep_centred: bool = True) -> np.ndarray:
    """``centred * rstd * weight + bias``, the factors of each (sample, channel) taken first (a small array);
    without ``keep_centred``, written over ``centred``. Without a weight the factors are per group, along whole
    rows of ``[N * groups, C / groups * positions]`` (NumPy broadcasts along long rows about twice as fast)."""
    out = None if keep_centred else centred
    if weight is None:
        rows = centred.reshape(rstd.size, -1)
        output = np.multiply(rows, rstd.reshape(-1, 1), out=None if out is None else rows).reshape(centred.shape)
    else:
        output = np.multiply(centred, (_per_channel(rstd, centred.shape[1]) * weight)[:, :, None], out=out)
    if bias is not None:
        output += bias[:, None]
    return output


def _group_backward(grad: np.ndarray, centred: np.ndarray, rstd: np.ndarray, weight: np.ndarray | None,
                    needs: tuple) -> tuple:
    """``_row_backward`` for groups with per-channel weights, on ``[N, C, positions]`` arrays: the sums of
    ``grad`` and ``grad * c`` over each channel's positions give the weight's and bias's gradients and, weighted
    and summed over the group's channels, the row means ``a`` and ``t`` of the input's gradient
    ``grad * (r weight) - (c * r**3 t + r a)``, whose second term is per group (broadcast along whole rows)."""
    batch, channels, positions = grad.shape
    groups = rstd.shape[1]
    by_channel, by_group = (batch * channels, positions), (batch * groups, channels // groups * positions)
    # einsum sums the products without an array of them; the sums of grad are a BLAS product with ones
    product_sums = np.einsum("ij,ij->i", grad.reshape(by_channel), centred.reshape(by_channel))
    product_sums = product_sums.reshape(batch, channels)
    grad_sums = _row_sums(grad.reshape(by_channel)).reshape(batch, channels)
    rstd_channels = _per_channel(rstd, channels)
    grad_weight = (rstd_channels * product_sums).sum(0) if needs[1] else None
    grad_bias = grad_sums.sum(0) if needs[2] else None
    if not needs[0]:
        return None, grad_weight, grad_bias
    if weight is not None:
        grad_sums, product_sums = grad_sums * weight, product_sums * weight
    spread = grad_sums.reshape(batch, groups, -1).sum(2) / by_group[1]
    slope = product_sums.reshape(batch, groups, -1).sum(2) / by_group[1]
    if weight is None:
        grad_input = grad.reshape(by_group) * rstd.reshape(-1, 1)
    else:
        # in C order: numpy keeps a strided grad's layout (a channels-last one), and the reshape below must be a view
        grad_input = np.multiply(grad, (rstd_channels * weight)[:, :, None], order="C")
    correction = np.multiply(centred.reshape(by_group), (-(rstd * rstd * rstd) * slope).reshape(-1, 1))
    correction += (-rstd * spread).reshape(-1, 1)
    grad_rows = grad_input.reshape(by_group)  # (a view: grad_input is a fresh array in C order)
    np.add(grad_rows, correction, out=grad_rows)
    return grad_input.reshape(grad.shape), grad_weight, grad_bias


def _group_backward_in_ops(grad, input, weight, groups: int, eps: float, needs: tuple) -> tuple:
    """``GroupNorm``'s gradients in ember ops (they record a graph), by ``normalize_backward`` over the last two
    dims of the ``[N, groups, C / groups, positions]`` view, the weight lined up as ``[groups, C / groups, 1]``."""
    batch, channels = input.shape[:2]
    view = (batch, groups, channels // groups, math.prod(input.shape[2:]))
    normalised, rstd, _, _ = _statistics(input.reshape(view), (2, 3), eps)
    grad_input, grad_weight, grad_bias = normalize_backward(
        grad.reshape(view), normalised, rstd, weight, (2, 3), view[1:3] + (1,), (channels,), needs)
    return None if grad_input is None else grad_input.reshape(input.shape), grad_weight, grad_bias
