"""Losses that are one op, as in torch: one node in the graph, and a first-order backward on NumPy arrays.

>>> import ember
>>> x = ember.tensor([1., 2.], requires_grad=True)
>>> loss = ember.nn.functional.mse_loss(x, ember.tensor([1., 4.]))
>>> loss
tensor(2., grad_fn=<MseLossBackward0>)
>>> loss.backward(); x.grad
tensor([ 0., -2.])
"""
from __future__ import annotations

import numpy as np

from ember._dtype import BF16, HALF, from_numpy_dtype, kind
from ember._ops._quiet import IGNORE_ALL, IGNORE_DIVIDE_INVALID, IGNORE_INVALID, quietly
from ember._ops._select import select
from ember._ops._support import promoted_arrays, wrap
from ember._ops.arithmetic import where
from ember._ops.tied_gradients import tied_to_inputs
from ember.autograd.saved_attributes import reduction_number
from ember.autograd.function import Function, _DelayedError


class MseLoss(Function):
    """The squared error of ``input`` against ``target`` (broadcasting), averaged, summed or kept per element."""

    backward_name = "MseLossBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, target, reduction):
        x, y = promoted_arrays(input, target, "mse_loss")
        if kind(np.result_type(x, y)) != "f":
            raise NotImplementedError(
                f'"mse_loss" not implemented for {from_numpy_dtype(np.result_type(x, y))}: the loss of integer '
                "tensors; convert them first, e.g. input.float()"
            )
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        difference = np.subtract(x, y)
        squared = np.multiply(difference, difference, out=difference if difference.ndim else None)  # (fresh)
        if reduction == "none":
            return wrap(squared)
        total = np.sum(squared)
        if reduction == "sum":
            return wrap(np.asarray(total))
        if not squared.size:
            return wrap(np.asarray(quietly(IGNORE_INVALID, np.multiply, total, np.nan)))  # nan, quietly, as in torch
        return wrap(np.asarray(total / squared.size))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        needs = ctx.needs_input_grad
        # as torch: target's gradient is the same formula with the two swapped (so an equal pair gives +0, not -0);
        # each has the shape the operands broadcast to, and the engine sums it back to the operand's
        return (mse_loss_backward(grad, input, target, ctx.reduction) if needs[0] else None,
                mse_loss_backward(grad, target, input, ctx.reduction) if needs[1] else None,
                None)


def mse_loss_backward(grad, input, target, reduction: str):
    """``norm * (input - target) * grad``, on arrays, or (recorded, as torch's node) on tensors.

    ``norm`` is 2, divided by the number of elements for ``'mean'``.
    """
    if isinstance(grad, np.ndarray):
        return _mse_gradient(grad, input, target, reduction)
    return MseLossBackward.apply(grad, input, target, reduction)


def _norm(reduction: str, count: int) -> float:
    return 2.0 / count if reduction == "mean" and count else 2.0


def _mse_gradient(grad: np.ndarray, input: np.ndarray, target: np.ndarray, reduction: str) -> np.ndarray:
    difference = np.subtract(input, target)
    if not difference.ndim or np.result_type(difference, grad) != difference.dtype or \
            np.broadcast_shapes(difference.shape, grad.shape) != difference.shape:
        return _norm(reduction, difference.size) * difference * grad  # torch's order of operations
    difference *= _norm(reduction, difference.size)  # the same order, in the one fresh array
    difference *= grad
    return difference


class MseLossBackward(Function):
    """mse_loss's gradient as an op of its own, so that it can be differentiated again (torch's mse_loss_backward)."""

    backward_name = "MseLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, target, reduction):
        ctx.save_for_backward(grad, input, target)
        ctx.reduction = reduction
        return wrap(_mse_gradient(grad._data, input._data, target._data, reduction))

    @staticmethod
    def backward(ctx, grad_grad):
        grad, input, target = ctx.saved_tensors
        needs = ctx.needs_input_grad
        difference = input - target
        norm = _norm(ctx.reduction, difference.numel())
        if needs[0]:
            # grad is one number unless reduction is 'none': then the sum over the elements it scaled
            grad_of_grad = norm * difference * grad_grad
            grad_of_grad = grad_of_grad if ctx.reduction == "none" else grad_of_grad.sum()
        # the gradient is linear in input and target, with slopes norm * grad and -norm * grad
        scaled = norm * grad_grad * grad if needs[1] or needs[2] else None
        return (grad_of_grad if needs[0] else None,
                scaled if needs[1] else None,
                -scaled if needs[2] else None,
                None)


class CrossEntropy(Function):
    """Log-softmax and the negative log-likelihood of class indices in one op.

    ``input`` has its classes last (``[..., C]``); ``coefficients`` (``[..., C]``, a constant) weighs each class's
    log-probability: the weight of the target class, spread by label smoothing and zero where the target is
    ignored. ``divisor`` is what ``'mean'`` divides by (the summed weights of the targets).
    """

    backward_name = "NllLossBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, coefficients, divisor, reduction):
        q, x = coefficients._data, input._data
        shifted = x - x.max(-1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(-1, keepdims=True)
        # -sum(q * (shifted - log(total))): the log of the total is weighed by the row's summed coefficients
        totals = q.sum(-1, keepdims=True)
        # a class that weighs nothing adds nothing, even where its logit is -inf (0 * -inf would be nan)
        weighted = np.multiply(q, shifted, out=np.zeros_like(shifted), where=q != 0)
        logs = np.multiply(np.log(total), totals, out=np.zeros_like(total), where=totals != 0)  # (an ignored row: 0)
        losses = logs[..., 0] - weighted.sum(-1)
        if ctx.needs_input_grad[0]:
            # constants of the gradient; the softmax is saved for a first-order backward, which needs no graph
            ctx.coefficients, ctx.totals = q, totals
            exp /= total
            ctx.save_for_backward(input, exp)
        ctx.divisor, ctx.reduction = divisor, reduction
        if reduction == "none":
            return wrap(losses)
        total = losses.sum()
        if reduction == "sum":
            return wrap(total)
        # 0 / 0 is nan, as in torch; the divisor in the loss's dtype, as NumPy takes a number (and bfloat16 does not)
        return wrap(quietly(IGNORE_INVALID, np.divide, total, np.asarray(divisor, total.dtype)))

    @staticmethod
    def backward(ctx, grad):
        q, totals = ctx.coefficients, ctx.totals
        input, probabilities = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):
            probabilities, q, totals = input.softmax(-1), wrap(q), wrap(totals)
        if ctx.reduction == "none":
            grad = grad[..., None]
        elif ctx.reduction == "mean":
            # with nothing counted every coefficient is 0, and so is the gradient (as torch's), not nan
            grad = grad / ctx.divisor if ctx.divisor else grad
        # d(-sum q log softmax(x))/dx = softmax(x) * sum(q) - q: softmax - one_hot for a plain target
        return (probabilities * totals - q) * grad, None, None, None


class NllLoss(Function):
    """The negative log-likelihood of class indices, ``-input[n, target[n]]`` times the target's class weight, in one
    op (torch's ``grad_fn``) whose gradient is a scatter.

    ``input`` is ``[C]``, ``[N, C]`` or ``[N, C, d1, ...]``; ``targets`` (each a class, an ignored one any class),
    ``scale`` (each target's class weight) and ``counted`` (False where ignored) are constants shaped as the target.
    ``'mean'`` divides by the summed scale of the counted targets.
    """

    backward_name = "NllLossBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, targets, scale, counted, reduction):
        x = input._data
        axis = 1 if x.ndim >= 2 else 0
        picked = np.take_along_axis(x, np.expand_dims(targets, axis), axis).squeeze(axis)
        weights = np.where(counted, scale, 0).astype(x.dtype)
        # an ignored target adds 0, even where its input is -inf (0 * -inf would be nan)
        losses = np.negative(picked * weights, out=np.zeros_like(picked), where=counted)
        ctx.shape, ctx.dtype, ctx.axis = x.shape, x.dtype, axis
        ctx.save_for_backward(targets)  # as torch saves its target: a second backward without retain_graph raises
        if reduction != "mean":
            ctx.coefficients = np.where(counted, -weights, 0).astype(x.dtype)  # (an ignored target's is +0, as torch's)
        if reduction == "none":
            return wrap(losses)
        # weighed and summed in double precision, rounded once: no worse than torch's single precision steps
        # (0 less the sum, as torch's kernel subtracts from 0: a loss of nothing but zeros is +0, not -0)
        total = 0.0 - np.sum(np.multiply(picked, weights, dtype=np.float64, out=np.zeros(picked.shape), where=counted))
        if reduction == "sum":
            return wrap(np.asarray(total, x.dtype))
        divisor = np.sum(weights[counted], dtype=np.float64)
        # torch divides each counted target's weight by the total, 0 / 0 (nan) when it is 0; the ignored take 0
        ctx.coefficients = np.where(counted, quietly(IGNORE_DIVIDE_INVALID, np.divide, -weights, divisor),
                                    0).astype(x.dtype)
        return wrap(np.asarray(quietly(IGNORE_INVALID, np.divide, total, divisor), x.dtype))

    @staticmethod
    def backward(ctx, grad):
        (targets,) = ctx.saved_tensors
        axis, index = ctx.axis, np.expand_dims(targets, ctx.axis)
        if type(grad) is np.ndarray:
            gradient = np.zeros(ctx.shape, ctx.dtype)
            np.put_along_axis(gradient, index, np.expand_dims(ctx.coefficients * grad, axis), axis)
            return gradient, None, None, None, None
        values = (wrap(ctx.coefficients) * grad).unsqueeze(axis)
        gradient = wrap(np.zeros(ctx.shape, ctx.dtype)).scatter(axis, wrap(index), values)
        return tied_to_inputs(gradient, ctx, 0), None, None, None, None


class NllLoss2d(NllLoss):
    """``NllLoss`` of K-dimensional inputs (``[N, C, d1, ...]``), under torch's node name for them."""

    backward_name = "NllLoss2DBackward0"


_FEW_CLASSES = 64  # up to which the logits are transposed for the reductions over their classes


class CrossEntropyOfLabels(Function):
    """cross_entropy of ``[N, C]`` logits against class indices that all count, unweighted and unsmoothed.

    The usual classifier's loss: it reads each row's target logit where ``CrossEntropy`` weighs every class,
    so its forward is four reductions lighter. ``labels`` (int64, each in ``[0, C)``) is a constant.
    """

    backward_name = "NllLossBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, labels, reduction):
        x = input._data
        batch, classes = x.shape
        # The classes as rows ([C, N], a copy): NumPy reduces a short last dim one row at a time, at about
        # twice the cost of reducing along the first, vectorised over the batch
        columns = x.T.copy() if classes <= _FEW_CLASSES else x.T
        shifted = columns - np.maximum.reduce(columns, 0)
        exp = np.exp(shifted)
        total = np.add.reduce(exp, 0)
        rows = np.arange(batch)
        # each row's target logit, shifted: by flat positions in the copy (a 2-d index costs three times more)
        picked = shifted.take(labels * batch + rows) if shifted.flags.c_contiguous else shifted.T[rows, labels]
        losses = np.log(total) - picked
        if ctx.needs_input_grad[0]:
            exp /= total
            ctx.save_for_backward(input, exp.T)  # and the softmax, for a first-order backward
            ctx.rows, ctx.labels = rows, labels
        ctx.reduction = reduction
        if reduction == "none":
            return wrap(losses)
        total = np.add.reduce(losses)  # (ndarray.sum, less its Python wrapper)
        return wrap(total if reduction == "sum" else np.asarray(total / total.dtype.type(x.shape[0])))

    @staticmethod
    def backward(ctx, grad):
        on_arrays = type(grad) is np.ndarray
        if ctx.reduction == "none":
            grad = grad[:, None]
        elif ctx.reduction == "mean":
            grad = grad / ctx.rows.size
        input, probabilities = ctx.saved_tensors
        if on_arrays:  # softmax - one_hot, scaled
            # a row-major copy (a retained graph's next backward reads the softmax again)
            difference = np.array(probabilities, order="C")
            flat = difference.reshape(-1)
            flat[ctx.rows * probabilities.shape[1] + ctx.labels] -= 1
            difference *= grad
            return difference, None, None
        one_hot = np.zeros(input.shape, input._data.dtype)
        one_hot[ctx.rows, ctx.labels] = 1
        return (input.softmax(-1) - wrap(one_hot)) * grad, None, None


def _log_add(*terms: np.ndarray) -> np.ndarray:
    """``log(sum(exp(terms)))`` elementwise, where all of them may be -inf."""
    top = np.maximum.reduce(terms)
    shift = np.where(np.isfinite(top), top, 0.0)
    total = sum(np.exp(term - shift) for term in terms)
    return quietly(IGNORE_DIVIDE_INVALID, np.log, total) + shift


def _extended_labels(targets: np.ndarray, target_lengths: np.ndarray, blank: int) -> np.ndarray:
    """Blank, target 1, blank, target 2, ..., blank: ``[N, 2 S + 1]`` (blank past each target's end)."""
    batch, width = targets.shape
    inside = np.arange(width) < target_lengths[:, None]
    labels = np.full((batch, 2 * width + 1), blank, dtype=np.int64)
    labels[:, 1::2] = np.where(inside, targets, blank)
    return labels


def _skips(labels: np.ndarray, blank: int) -> np.ndarray:
    """Where a path may skip the blank before position s: at a target (odd s) differing from the one before.

    (By position, as torch: a target that is itself the blank label is skipped to as any other.)
    """
    allowed = np.zeros(labels.shape, dtype=bool)
    allowed[:, 3::2] = labels[:, 3::2] != labels[:, 1:-2:2]
    return allowed


def _ctc_alphas(emissions: np.ndarray, skips: np.ndarray, input_lengths: np.ndarray) -> np.ndarray:
    """Log forward variables ``[T, N, L]``, frozen after each sequence's last step."""
    steps, batch, width = emissions.shape
    alphas = np.full((steps, batch, width), -np.inf)
    if steps == 0:
        return alphas
    alphas[0, :, :2] = emissions[0, :, :2]
    for t in range(1, steps):
        previous = alphas[t - 1]
        one_back = np.concatenate([np.full((batch, 1), -np.inf), previous[:, :-1]], axis=1)
        two_back = np.concatenate([np.full((batch, 2), -np.inf), previous[:, :-2]], axis=1)
        step = _log_add(previous, one_back, np.where(skips, two_back, -np.inf)) + emissions[t]
        alphas[t] = np.where((t < input_lengths)[:, None], step, previous)
    return alphas


def _ctc_betas(emissions: np.ndarray, skips: np.ndarray, input_lengths: np.ndarray,
               lengths: np.ndarray) -> np.ndarray:
    """Log backward variables ``[T, N, L]``; -inf at and past each sequence's end."""
    steps, batch, width = emissions.shape
    betas = np.full((steps, batch, width), -np.inf)
    positions = np.arange(width)
    last_two = (positions == lengths[:, None] - 1) | (positions == lengths[:, None] - 2)
    following = np.full((batch, width), -np.inf)
    for t in range(steps - 1, -1, -1):
        one_on = np.concatenate([following[:, 1:], np.full((batch, 1), -np.inf)], axis=1)
        two_on = np.concatenate([following[:, 2:], np.full((batch, 2), -np.inf)], axis=1)
        skip_on = np.concatenate([skips[:, 2:], np.zeros((batch, 2), dtype=bool)], axis=1)
        step = _log_add(following, one_on, np.where(skip_on, two_on, -np.inf)) + emissions[t]
        start = np.where(last_two, emissions[t], -np.inf)
        is_last = (t == input_lengths - 1)[:, None]
        betas[t] = np.where(is_last, start, np.where((t < input_lengths - 1)[:, None], step, -np.inf))
        following = betas[t]
    return betas


class CtcLoss(Function):
    """The negative log-likelihood of each target sequence, summed over its alignments (``[N]``).

    As torch's, the gradient treats ``log_probs`` as a log-softmax output: ``exp(log_probs) - posterior``.
    """

    backward_name = "CtcLossBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        lp = log_probs._data.astype(np.float64)
        labels = _extended_labels(targets, target_lengths, blank)
        skips = _skips(labels, blank)
        emissions = np.take_along_axis(lp, np.broadcast_to(labels, (lp.shape[0], *labels.shape)), axis=2)
        lengths = 2 * target_lengths + 1
        alphas = _ctc_alphas(emissions, skips, input_lengths)
        batch = np.arange(lp.shape[1])
        last = alphas[np.maximum(input_lengths - 1, 0), batch]
        ends = np.stack([last[batch, lengths - 1], np.where(lengths > 1, last[batch, lengths - 2], -np.inf)])
        # a sequence of no steps has only the empty alignment: probability 1 of an empty target, 0 of any other
        losses = np.where(input_lengths == 0, np.where(target_lengths == 0, 0.0, np.inf), -_log_add(ends[0], ends[1]))
        if ctx.needs_input_grad[0]:
            betas = _ctc_betas(emissions, skips, input_lengths, lengths)
            gradient = _ctc_gradient(lp, labels, alphas + betas - emissions, losses, input_lengths)
            if zero_infinity:
                gradient[:, np.isinf(losses)] = 0.0
            ctx.gradient = gradient.astype(log_probs._data.dtype)
            ctx.save_for_backward(log_probs)
        if zero_infinity:
            losses = np.where(np.isinf(losses), 0.0, losses)
        return wrap(losses.astype(log_probs._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        if isinstance(grad, np.ndarray):
            return ctx.gradient * grad.reshape(1, -1, 1), None, None, None, None, None
        # under create_graph: the gradient's own derivative in log_probs is not computed, so differentiating
        # it again raises, as in torch, instead of treating it as a constant
        (log_probs,) = ctx.saved_tensors
        gradient = _CtcSecondOrder.apply(wrap(ctx.gradient), log_probs)
        return gradient * grad.reshape(1, -1, 1), None, None, None, None, None


class _CtcSecondOrder(_DelayedError):
    backward_name = "CtcLossBackwardBackward0"

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("the derivative of ctc_loss's gradient is not implemented: ctc_loss is differentiable "
                           "once (as in torch); take second derivatives of the other terms only")


def _ctc_gradient(lp: np.ndarray, labels: np.ndarray, paths: np.ndarray, losses: np.ndarray,
                  input_lengths: np.ndarray) -> np.ndarray:
    """``exp(lp) - sum over positions s of class c of exp(alpha + beta - lp + loss)``, zero past each end."""
    steps, batch, _ = lp.shape
    posterior = np.zeros_like(lp)
    shares = quietly(IGNORE_ALL, np.exp, paths + losses[None, :, None])
    t_index, n_index, _ = np.indices(paths.shape)
    np.add.at(posterior, (t_index, n_index, np.broadcast_to(labels, paths.shape)), shares)
    gradient = np.exp(lp) - posterior
    # an impossible alignment (an infinite loss) has no gradient: nan at every class, as torch's
    gradient[:, np.isinf(losses)] = np.nan
    return np.where((np.arange(steps)[:, None] < input_lengths)[:, :, None], gradient, 0.0)


# floors x (1 - x) in the gradient so it stays finite at 0 and 1: torch's 1e-12, a float32 constant there too
_BCE_EPSILON = float(np.float32(1e-12))


def _clamped_log(x):
    return np.maximum(quietly(IGNORE_DIVIDE_INVALID, np.log, x), -100.0)


class BinaryCrossEntropy(Function):
    """``-w (t log x + (1 - t) log(1 - x))`` with each log floored at -100; ``weight`` is None or ``x``'s shape."""

    backward_name = "BinaryCrossEntropyBackward0"
    torch_saved_tensors = {"self": 0, "target": 1, "weight": 2}
    torch_saved_values = {"reduction": lambda node: reduction_number(node.reduction)}

    @staticmethod
    def forward(ctx, input, target, weight, reduction):
        x, t = input._data, target._data
        losses = -(t * _clamped_log(x) + (1 - t) * _clamped_log(1 - x))
        if weight is not None:
            losses = losses * weight._data
        ctx.save_for_backward(input, target, weight)
        ctx.reduction = reduction
        # (a bfloat16 input's losses come out of ml_dtypes' arithmetic in single: reduced so, then rounded once)
        return wrap(np.asarray(_reduced(losses, reduction)).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, target, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if ctx.reduction == "mean":
            grad = grad / max(input.numel(), 1)
        if weight is not None:
            grad = grad * weight
        grad_input = grad_target = None
        if needs[0]:
            grad_input = grad * (input - target) / (input * (1 - input)).clamp_min(_BCE_EPSILON)
        if needs[1]:
            grad_target = grad * ((1 - input).log().clamp_min(-100.0) - input.log().clamp_min(-100.0))
        return grad_input, grad_target, None, None


def _reduced(losses: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return losses
    if reduction == "sum":
        return np.asarray(np.sum(losses))
    return np.asarray(np.mean(losses)) if losses.size else np.full((), np.nan, losses.dtype)


class CrossEntropy2d(CrossEntropy):
    """``CrossEntropy`` of K-dimensional inputs (``[N, C, d1, ...]``), under torch's node name for them."""

    backward_name = "NllLoss2DBackward0"


class _PiecewiseLoss(Function):
    """smooth_l1_loss and huber_loss: a square of the error below ``size`` (beta, delta), its absolute value above,
    reduced; one node, as torch's, whose first-order backward runs on the arrays.

    The gradient is ``norm * clamp(slope) * grad`` as torch's vectorised kernel computes it (``norm`` is 1 / count
    for 'mean'); a nan error gives nan, as torch's formula. Each subclass names the 2-byte dtypes whose steps run in
    single precision, rounded once, where torch's kernels do so (``forward_in_single``, ``backward_in_single``);
    the others are rounded at each step, as torch's are.
    """

    backward_on_arrays = True
    op, forward_in_single, backward_in_single = "", (), ()

    @staticmethod
    def forward(ctx, input, target, reduction, size):
        kind = ctx._forward_cls
        x, y = promoted_arrays(input, target, kind.op)
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.size = reduction, size
        dtype = np.result_type(x, y)
        error = _difference(x, y, _SINGLE if dtype in kind.forward_in_single else dtype)
        np.abs(error, out=error)
        work = error.dtype
        losses = quietly(IGNORE_ALL, kind.losses, error, work.type(size)).astype(dtype, copy=False)
        if reduction == "none":
            return wrap(losses)
        return wrap(losses).mean() if reduction == "mean" else wrap(losses).sum()

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        needs = ctx.needs_input_grad
        on_arrays = type(grad) is np.ndarray
        gradient = _piecewise_gradient if on_arrays else _piecewise_gradient_of_tensors
        arguments = (gradient, ctx._forward_cls, grad, ctx.reduction, ctx.size)
        # as torch: target's gradient is the same formula with the two swapped (an equal pair gives +0 for both)
        return (quietly(IGNORE_ALL, *arguments, input, target) if needs[0] else None,
                quietly(IGNORE_ALL, *arguments, target, input) if needs[1] else None, None, None)


_SINGLE = np.dtype(np.float32)


def _difference(x, y, dtype: np.dtype) -> np.ndarray:
    """``x - y`` in a fresh array of ``dtype`` (also for 0-d operands, where a ufunc would return a NumPy scalar)."""
    return np.subtract(x, y, dtype=dtype, out=np.empty(np.broadcast_shapes(np.shape(x), np.shape(y)), dtype))


def _halved(error: np.ndarray) -> np.ndarray:
    return np.multiply(error, error.dtype.type(0.5), out=np.empty_like(error))


def _mean_scale(reduction: str, count: int) -> float:
    """What torch scales the gradient by: 1 / count for 'mean' (taken in double, then in the dtype), else 1."""
    return 1.0 / count if reduction == "mean" and count else 1.0


def _piecewise_gradient(kind, grad: np.ndarray, reduction: str, size: float, input: np.ndarray,
                        target: np.ndarray) -> np.ndarray:
    dtype = np.result_type(input, target)
    work = _SINGLE if dtype in kind.backward_in_single else dtype
    slope = kind.clamped_slope(_difference(input, target, work), work.type(size))
    norm = _mean_scale(reduction, slope.size)
    if norm != 1.0:
        slope *= work.type(norm)
    return np.multiply(slope, grad.astype(work, copy=False)).astype(dtype, copy=False)


def _piecewise_gradient_of_tensors(kind, grad, reduction: str, size: float, input, target):
    """The same values in ember ops (so the loss has a second derivative): the slope is flat beyond ``size``."""
    error = input - target
    outer = error.sign() if kind.outer_scale is None else error.sign() * size
    slope = where(error.abs() < size, kind.middle_slope(error, size), outer)
    return slope * _mean_scale(reduction, error.numel()) * grad


class SmoothL1Loss(_PiecewiseLoss):
    """``0.5 e**2 / beta`` below ``beta``, ``e - 0.5 beta`` above; the slope ``e / beta`` clamped to [-1, 1]."""

    backward_name = "SmoothL1LossBackward0"
    torch_saved_tensors = {"self": 0, "target": 1}
    torch_saved_values = {"beta": "size", "reduction": lambda node: reduction_number(node.reduction)}
    op, forward_in_single, backward_in_single = "smooth_l1_loss", (BF16,), (HALF, BF16)
    outer_scale = None

    @staticmethod
    def losses(error: np.ndarray, beta) -> np.ndarray:
        small = error < beta
        squares = _halved(error)  # torch's order: 0.5 * e * e / beta
        squares *= error
        squares /= beta
        return select(small, squares, np.subtract(error, beta * 0.5, out=error))

    @staticmethod
    def clamped_slope(error: np.ndarray, beta) -> np.ndarray:
        slope = np.divide(error, beta, out=error)
        return np.clip(slope, -1, 1, out=slope)

    @staticmethod
    def middle_slope(error, beta):
        return error / beta


class HuberLoss(_PiecewiseLoss):
    """``0.5 e**2`` below ``delta``, ``delta * (e - 0.5 delta)`` above; the slope ``e`` clamped to [-delta, delta]."""

    backward_name = "HuberLossBackward0"
    torch_saved_tensors = {"self": 0, "target": 1}
    torch_saved_values = {"delta": "size", "reduction": lambda node: reduction_number(node.reduction)}
    op, forward_in_single, backward_in_single = "huber_loss", (HALF,), ()
    outer_scale = True

    @staticmethod
    def losses(error: np.ndarray, delta) -> np.ndarray:
        small = error < delta
        squares = _halved(error)  # torch's order: 0.5 * e * e
        squares *= error
        linear = np.subtract(error, delta * 0.5, out=error)
        linear *= delta
        return select(small, squares, linear)

    @staticmethod
    def clamped_slope(error: np.ndarray, delta) -> np.ndarray:
        return np.clip(error, -delta, delta, out=error)

    @staticmethod
    def middle_slope(error, delta):
        return error
