"""``F.linear_cross_entropy``: a linear layer and the cross-entropy of its logits, as one call.

With ``options=None`` it is ``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``. With a
``LinearCrossEntropyOptions`` the batch runs in chunks of rows, so only one chunk's ``[rows, classes]`` logits
exist at a time: what a vocabulary-sized output layer needs. A ``"mean"`` or ``"sum"`` finds its gradients in the
forward, chunk by chunk; ``"none"``, whose rows get gradients only known later, recomputes each chunk's logits in
the backward. That backward is written once for arrays and for ember ops, so gradients of any order follow.

>>> import ember
>>> from ember.nn import functional as F
>>> x, w = ember.tensor([[1., 0.], [0., 1.]]), ember.tensor([[1., 0.], [0., 1.], [1., 1.]])
>>> F.linear_cross_entropy(x, w, ember.tensor([0, 2]))
tensor(0.8620)
>>> F.linear_cross_entropy(x, w, ember.tensor([0, 2]), options=ember.nn.LinearCrossEntropyOptions(batch_chunk_size=1))
tensor(0.8620)
"""
from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

import ember
from ember import _blas
from ember._ops._support import user_stacklevel, wrap
from ember._tensor import Tensor
from ember.autograd import Function
from ember.nn._functional.losses import _class_weights, _target_mask
from ember.overrides import overridable

__all__ = ["LinearCrossEntropyOptions", "linear_cross_entropy"]

nn_function = overridable("ember.nn.functional")

_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """How ``linear_cross_entropy`` chunks its batch (fields, defaults and checks as torch's).

    ``batch_chunk_size`` rows per chunk, or ``chunking_method`` ``"aspect_ratio[:N]"``: chunks whose logits
    take about the input's memory (divided by ``N``); ``"auto"`` is ``"aspect_ratio:2"`` unless
    ``batch_chunk_size`` is given. ``acc_dtype`` is the dtype the chunks compute in: the input's, or float32
    for a float16 or bfloat16 input (``None``: float32 for those under ``acc_policy="auto"``, else the
    input's). ``allow_retain_graph=False`` lets a ``"mean"`` or ``"sum"`` backward scale the gradients the
    forward found in place and drop them; a second backward then recomputes them (torch's raises). The
    policies' memory trade-offs are torch's kernels' own: ember checks and keeps ``acc_policy``.
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}; expected one of {', '.join(_POLICIES)}")
        if self.chunking_method not in (None, "auto"):
            _aspect_divisor(self.chunking_method)
        if self.batch_chunk_size is not None and (not isinstance(self.batch_chunk_size, int)
                                                  or self.batch_chunk_size <= 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype not in (None, ember.float16, ember.bfloat16, ember.float32, ember.float64):
            raise ValueError(f"acc_dtype must be one of {{None, ember.float16, ember.bfloat16, ember.float32, "
                             f"ember.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")

    def chunk_rows(self, rows: int, in_features: int, classes: int) -> int:
        """The rows per chunk for a ``[rows, in_features]`` input and ``classes`` logits per row."""
        method = self.chunking_method
        if method == "auto":
            method = None if self.batch_chunk_size is not None else "aspect_ratio:2"
        if method is None:
            return max(1, min(self.batch_chunk_size or rows, rows))
        # the chunk's logits about as large as the input, over the divisor
        chunks = math.ceil(classes / max(in_features, 1))
        size = 1 << max(math.ceil(rows / chunks) - 1, 0).bit_length()
        size = max(1, min(size // _aspect_divisor(method), rows))
        if self.batch_chunk_size is not None and self.batch_chunk_size != size:
            raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give "
                             f"different chunk sizes ({self.batch_chunk_size} vs {size}); pass only one.")
        return size


def _aspect_divisor(method: str) -> int:
    name, _, factor = method.partition(":")
    factor = factor or "1"
    if name != "aspect_ratio" or not factor.isdigit() or int(factor) < 1:
        raise ValueError(f"invalid chunking_method: {method!r}; expected 'auto', 'aspect_ratio' or "
                         "'aspect_ratio:N' with N >= 1, or None")
    return int(factor)


def _chunk_logits(x, weight, bias):
    """One chunk's logits, on arrays or tensors."""
    logits = _blas.product(x, weight.T)
    return logits if bias is None else logits + bias


def _slope(exp_shifted: np.ndarray, sums: np.ndarray, labels: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """``coefficients * (softmax - one_hot(labels))`` from the chunk's shifted exponentials and their row sums,
    in place of the exponentials."""
    exp_shifted /= sums[:, None]
    exp_shifted[np.arange(exp_shifted.shape[0]), labels] -= 1
    exp_shifted *= coefficients[:, None]
    return exp_shifted


def _chunk_gradients(x, weight, bias, coefficients, labels: np.ndarray, slope=None) -> tuple:
    """The gradients of ``sum(coefficients * row losses)`` over one chunk of rows, for its rows of ``input``,
    for ``weight`` and for ``bias``: with ``d = coefficients * (softmax(logits) - one_hot(labels))`` (``slope``,
    if the caller has it), they are ``d W``, ``d^T x`` and the column sums of ``d``. On arrays, or in ember
    ops (a graph of the gradient)."""
    if slope is None:
        logits = _chunk_logits(x, weight, bias)
        if isinstance(logits, np.ndarray):
            logits -= logits.max(-1, keepdims=True)
            exp_shifted = np.exp(logits, out=logits)
            slope = _slope(exp_shifted, exp_shifted.sum(-1), labels, coefficients)
        else:
            picked = ember.nn.functional.one_hot(wrap(labels), weight.shape[0]).to(logits.dtype)
            slope = (logits.softmax(-1) - picked) * coefficients.unsqueeze(1)
    return _blas.product(slope, weight), _blas.product(slope.T, x), None if bias is None else slope.sum(0)


def _all_gradients(x, weight, bias, coefficients, labels: np.ndarray, chunk: int, slopes=None) -> tuple:
    """``_chunk_gradients`` of every chunk: the input's joined, the weight's and bias's summed."""
    join = np.concatenate if isinstance(x, np.ndarray) else ember.cat
    pieces, grad_weight, grad_bias = [], 0, 0
    for start in range(0, x.shape[0], chunk):
        rows = slice(start, start + chunk)
        grad_x, part_weight, part_bias = _chunk_gradients(x[rows], weight, bias, coefficients[rows], labels[rows],
                                                          None if slopes is None else slopes(rows))
        pieces.append(grad_x)
        grad_weight = grad_weight + part_weight
        grad_bias = None if bias is None else grad_bias + part_bias
    if not pieces:
        return x * 0, weight * 0, None if bias is None else bias * 0
    return join(pieces, 0), grad_weight, grad_bias


def _scaled(gradients: tuple, factor: np.ndarray, in_place: bool) -> tuple:
    """Each of ``gradients`` (arrays or None) times ``factor``; ``in_place`` spares an allocation per array."""
    if not in_place:
        return tuple(None if g is None else factor * g for g in gradients)
    for g in gradients:
        if g is not None:
            g *= factor
    return gradients


class ChunkedLinearCrossEntropy(Function):
    """Per row, ``scale * (logsumexp(logits) - logits[label])`` with ``logits = x W^T + b``, one chunk of
    rows at a time (``scale`` is the row's class weight, 0 for an ignored row); with ``total``, their sum.

    The backward recomputes each chunk's logits. For a sum, whose gradient is one number for every row, the
    forward finds the gradients for a unit gradient while it has the logits (as torch's chunked op does),
    and a first-order backward only scales them; a graph of the gradient (``create_graph``) takes the
    recomputing path, written once for arrays and ember ops.
    """

    backward_name = "ChunkedLinearCrossEntropyBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, weight, bias, scale, labels, chunk, total, keep_unit):
        x, w, b, coefficients = input._data, weight._data, None if bias is None else bias._data, scale._data
        losses = np.empty(x.shape[0], np.result_type(x, w))

        def exponentials(rows):  # the chunk's losses, written in place; its exponentials serve the gradients
            shifted = _chunk_logits(x[rows], w, b)
            shifted -= shifted.max(-1, keepdims=True)
            picked = shifted[np.arange(shifted.shape[0]), labels[rows]]
            exp_shifted = np.exp(shifted, out=shifted)
            sums = exp_shifted.sum(-1)
            losses[rows] = (np.log(sums) - picked) * coefficients[rows]
            return exp_shifted, sums

        ctx.save_for_backward(input, weight, bias, scale)
        ctx.labels, ctx.chunk, ctx.unit, ctx.total, ctx.keep_unit = labels, chunk, None, total, keep_unit
        if total and any(ctx.needs_input_grad[:3]):
            ctx.unit = _all_gradients(x, w, b, coefficients, labels, chunk, lambda rows: _slope(
                *exponentials(rows), labels[rows], coefficients[rows]))
        else:
            for start in range(0, x.shape[0], chunk):
                exponentials(slice(start, start + chunk))
        return wrap(np.asarray(losses.sum(), losses.dtype)) if total else wrap(losses)

    @staticmethod
    def backward(ctx, grad):
        input, weight, bias, scale = ctx.saved_tensors
        if isinstance(grad, np.ndarray) and ctx.total:
            # a first-order backward of the sum scales its unit gradients, the forward's or recomputed the same
            # way (so every backward gives the same numbers)
            unit = ctx.unit if ctx.unit is not None else _all_gradients(input, weight, bias, scale, ctx.labels,
                                                                        ctx.chunk)
            ctx.unit = unit if ctx.keep_unit else None
            return _scaled(unit, grad, in_place=not ctx.keep_unit) + (None,) * 5
        grads = _all_gradients(input, weight, bias, grad * scale, ctx.labels, ctx.chunk)
        return grads + (None,) * 5


def _check_shapes(input: Tensor, linear_weight: Tensor, linear_bias: Tensor | None) -> None:
    if input.dim() not in (1, 2):
        raise RuntimeError(f"linear_cross_entropy: expected input with dimensionality 1 or 2, got {input.dim()} "
                           f"(shape {list(input.shape)})")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"linear_cross_entropy: expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError(f"linear_cross_entropy: expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    expected = tuple(linear_weight.shape[:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != expected:
        raise RuntimeError(f"linear_cross_entropy: expected linear_bias shape {expected}, got "
                           f"{tuple(linear_bias.shape)}")
    if linear_weight.dim() > 2 and input.dim() == 1:
        raise RuntimeError(f"linear_cross_entropy: K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, {input.shape[-1]}), got "
                           f"unbatched input with shape {tuple(input.shape)}")


@nn_function
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``, chunked when ``options`` is given.

    ``input`` is ``[in]`` or ``[N, in]``; ``linear_weight`` is ``[C, in]`` or ``[C, d1, ..., in]`` (a
    K-dimensional loss); ``ignore_index=None`` means -100, and is refused for a target of probabilities.

    >>> x = ember.tensor([[1., 2.]])
    >>> ember.nn.functional.linear_cross_entropy(x, ember.eye(2), ember.tensor([1]), reduction="none")
    tensor([0.3133])
    """
    _check_shapes(input, linear_weight, linear_bias)
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    logits_shape = (*input.shape[:-1], classes, *out_features)
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("linear_cross_entropy: ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        if not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0 \
                and target.dtype == ember.int64:
            return _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options)
        warnings.warn(f"linear_cross_entropy: options ignored; chunking needs reduction 'mean', 'sum' or 'none', "
                      f"label_smoothing == 0, an int64 target and a 2-D linear_weight, got reduction={reduction!r}, "
                      f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}", stacklevel=user_stacklevel())
    flat_weight = linear_weight.reshape(-1, input.shape[-1])
    flat_bias = None if linear_bias is None else linear_bias.reshape(-1)
    logits = ember.nn.functional.linear(input, flat_weight, flat_bias).reshape(logits_shape)
    return ember.nn.functional.cross_entropy(logits, target, weight, ignore_index=ignore_index, reduction=reduction,
                                             label_smoothing=label_smoothing)


def _accumulation_dtype(options: LinearCrossEntropyOptions, dtype: ember.dtype) -> ember.dtype:
    """The dtype the chunks compute in: ``options.acc_dtype``, else float32 for a half-precision input under
    the ``"auto"`` policy, else the input's. Only a float32 accumulation of half-precision inputs mixes dtypes."""
    halves = (ember.float16, ember.bfloat16)
    if options.acc_dtype is not None:
        accumulate = options.acc_dtype
    else:
        accumulate = ember.float32 if options.acc_policy == "auto" and dtype in halves else dtype
    if accumulate != dtype and not (accumulate == ember.float32 and dtype in halves):
        raise RuntimeError(f"linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, but got "
                           f"{accumulate} acc_dtype and {dtype} inputs; pass acc_dtype=None or the inputs' dtype")
    return accumulate


def _chunked(input: Tensor, linear_weight: Tensor, target: Tensor, linear_bias: Tensor | None,
             weight: Tensor | None, reduction: str, ignore_index: int, options: LinearCrossEntropyOptions) -> Tensor:
    """The chunked op's per-row losses, reduced in ember ops (so the reduction's gradient is the ops')."""
    batched = input.dim() == 2
    rows = input if batched else input.unsqueeze(0)
    expected = (rows.shape[0],) if batched else ()
    if tuple(target.shape) != expected:
        raise RuntimeError(f"linear_cross_entropy: Expected target size {list(expected)}, got "
                           f"{list(target.shape)}: the target holds one class index per input row")
    classes = linear_weight.shape[0]
    weights = _class_weights("linear_cross_entropy", weight, classes)
    labels, counted = _target_mask("linear_cross_entropy", target.reshape(-1), classes, ignore_index)
    dtype = ember.promote_types(input.dtype, linear_weight.dtype)
    accumulate = _accumulation_dtype(options, dtype)
    scale = counted * (weights[labels] if weights is not None else 1.0)
    chunk = options.chunk_rows(rows.shape[0], rows.shape[1], classes)
    losses = ChunkedLinearCrossEntropy.apply(
        rows.to(accumulate), linear_weight.to(accumulate), None if linear_bias is None else linear_bias.to(accumulate),
        wrap(np.asarray(scale, np.float64)).to(accumulate), labels, chunk,
        reduction != "none", options.allow_retain_graph)
    if reduction == "none":
        return (losses if batched else losses.squeeze(0)).to(dtype)
    reduced = losses if reduction == "sum" else losses / float(scale.sum())
    return reduced.to(dtype)
