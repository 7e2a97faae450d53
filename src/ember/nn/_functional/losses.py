"""The loss functions of ``ember.nn.functional``, composed from ember ops (cross-entropy of class indices, the
smooth L1 and Huber losses are one op each, in ``_ops/loss.py``).

Each takes torch's ``reduction`` ('none', 'mean' or 'sum', or the legacy ``size_average``/``reduce`` flags).

>>> import ember
>>> from ember.nn import functional as F
>>> F.l1_loss(ember.tensor([1., 3.]), ember.tensor([1., 1.]))
tensor(1.)
>>> F.cross_entropy(ember.tensor([[0., 0.]]), ember.tensor([1]))
tensor(0.6931)
"""
from __future__ import annotations

import math
import warnings
from typing import Callable

import numpy as np

import ember
from ember import _dtype
from ember._ops._support import refuse_integers, require_tensor, user_stacklevel, wrap
from ember._ops.out import into_out
from ember._ops.loss import (
    BinaryCrossEntropy, CrossEntropy, CrossEntropy2d, CrossEntropyOfLabels, CtcLoss, HuberLoss, NllLoss, NllLoss2d,
    SmoothL1Loss,
)
from ember._tensor import Tensor
from ember._ops.tied_gradients import named_and_tied
from ember.autograd._node_names import named_node
from ember.autograd.function import Function
# functional.py defines these before it imports this module, at its end
from ember.nn.functional import _check_loss_weight, _dtype_name, _legacy_reduction, _reduce
from ember.overrides import overridable

nn_function = overridable("ember.nn.functional")

_REDUCTIONS = ("none", "mean", "sum")


# ---------------------------------------------------------------------------------------------- helpers


def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The reduction to use: the legacy flags win when given (with torch's deprecation warning)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction; use one of {', '.join(_REDUCTIONS)}")
    return reduction


def _warn_if_sizes_differ(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=user_stacklevel(),
        )


def _require_float(name: str, input: Tensor, error: type = NotImplementedError) -> None:
    """Losses of logs and exponentials are not defined on integer tensors: torch's error, with the fix."""
    if not input.is_floating_point():
        raise error(f"{name}: not implemented for integer inputs ({_dtype_name(input.dtype)}); convert them "
                    "first, e.g. input.float()")


def _refuse_gradient(name: str, argument: str, operand: Tensor | None) -> None:
    """torch has no gradient formula for some operands (class weights, ...): it refuses them requiring grad, where a
    composite would silently leave them without a gradient."""
    if operand is not None and operand.requires_grad and ember.is_grad_enabled():
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to argument '{argument}'. "
                           "This input cannot have requires_grad True.")


def _require_long(name: str, target: Tensor) -> None:
    if target.dtype != ember.int64:
        raise RuntimeError(f"{name}: expected scalar type Long but found {_dtype_name(target.dtype)}: the target "
                           "holds class indices; convert it with target.long()")


def _require_vector_or_matrix(name: str, input: Tensor) -> None:
    """The input of a multi-class margin loss: scores ``[C]`` or ``[N, C]`` with at least one class."""
    if not (input.dim() <= 1 and input.numel() or input.dim() == 2 and input.shape[1]):
        raise RuntimeError(f"{name}: Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}; the scores need a non-empty dim of classes, [C] or [N, C]")


def _softplus(x: Tensor) -> Tensor:
    """``log(1 + exp(x))`` without overflow: the shift is a constant, so the gradient is exactly sigmoid(x).

    ``+inf`` gives inf (gradient 1), as torch's: the formula would take inf - inf there, so it is given 0 instead,
    and no nan reaches it or its gradient.
    """
    infinite = x.detach() == math.inf
    if infinite.any():
        return ember.where(infinite, x, _softplus(ember.where(infinite, ember.zeros((), dtype=x.dtype), x)))
    shift = x.detach().clamp_min(0)
    return shift + ((-shift).exp() + (x - shift).exp()).log()


def _weighted_mean(values: Tensor, weight: Tensor | None, reduction: str) -> Tensor:
    """With a weight, ``'mean'`` is ``sum(weight * values) / sum(weight)`` (as torch's l1 and mse losses)."""
    if weight is None:
        return _reduce(values, reduction)
    weighted = values * weight
    return weighted.sum() / weight.sum() if reduction == "mean" else _reduce(weighted, reduction)


# ---------------------------------------------------------------------------------------------- regression


@nn_function
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """The absolute error ``|input - target|``, reduced.

    >>> ember.nn.functional.l1_loss(ember.tensor([1., 2.]), ember.tensor([0., 0.]), reduction="none")
    tensor([1., 2.])
    """
    _warn_if_sizes_differ(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        _check_loss_weight("l1_loss", input, weight)
    return _weighted_mean((input - target).abs(), weight, reduction)


@nn_function
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Squared error ``0.5 d**2 / beta`` below ``beta``, absolute error ``|d| - 0.5 beta`` above.

    >>> ember.nn.functional.smooth_l1_loss(ember.tensor([0.5, 3.]), ember.tensor([0., 0.]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _warn_if_sizes_differ(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _require_float("smooth_l1_loss", input)
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta (got {beta}); use beta >= 0")
    if beta == 0:  # as torch: the l1 loss itself, composed (its nodes are torch's)
        return _reduce((input - target).abs(), reduction)
    return SmoothL1Loss.apply(input, target, reduction, beta)


@nn_function
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """Squared error ``0.5 d**2`` below ``delta``, ``delta * (|d| - 0.5 delta)`` above.

    >>> ember.nn.functional.huber_loss(ember.tensor([0.5, 3.]), ember.tensor([0., 0.]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _warn_if_sizes_differ(input, target)
    reduction = _reduction(None, None, reduction)
    _require_float("huber_loss", input)
    target = target.to(input.dtype)  # the result keeps the input's dtype, as torch's
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta (got {delta}); use delta > 0")
    if weight is None:
        return HuberLoss.apply(input, target, reduction, delta)
    _check_loss_weight("huber_loss", input, weight)
    # torch's 'mean' divides the weighted losses by the count, not by the weights
    return _reduce(HuberLoss.apply(input, target, "none", delta) * weight, reduction)


@nn_function
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-08, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of ``target`` under a Poisson of rate ``exp(input)`` (or ``input``).

    >>> ember.nn.functional.poisson_nll_loss(ember.tensor([0.]), ember.tensor([1.]))
    tensor(1.)
    """
    require_tensor(input, "poisson_nll_loss", 1, "input")
    reduction = _reduction(size_average, reduce, reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        # Stirling's approximation of log(target!), counted only where it is good (target > 1)
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


@nn_function
def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-06,
                      reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of ``target`` under a Gaussian of mean ``input`` and variance ``var``.

    >>> ember.nn.functional.gaussian_nll_loss(ember.tensor([1.]), ember.tensor([1.]), ember.tensor([1.]))
    tensor(0.)
    """
    if not isinstance(var, Tensor):
        var = ember.full_like(input, float(var))
    if not (var.is_floating_point() or var.is_complex()):  # (torch floors var at eps in place, in var's dtype)
        raise RuntimeError(f"gaussian_nll_loss: result type Float can't be cast to the desired output type "
                           f"{var.dtype}: var cannot be floored at eps; pass a floating var, e.g. var.float()")
    var = _variance_like(input, var)
    reduction = _reduction(None, None, reduction)
    if bool((var < 0).any()):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries; variances must be >= 0")
    # the floor at eps changes the value only: the gradient still flows to var as if unclamped, as in torch
    var = var + (eps - var.detach()).clamp_min(0)  # (an inf variance adds 0, not inf - inf)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _variance_like(input: Tensor, var: Tensor) -> Tensor:
    """``var`` shaped as ``input``, or with its last dim dropped, or 1 along one dim (shared along it)."""
    if var.shape == input.shape:
        return var
    if input.shape[:-1] == var.shape:
        return var.unsqueeze(-1)
    if var.dim() == input.dim() and [v for i, v in zip(input.shape, var.shape) if i != v] == [1]:
        return var
    raise ValueError(f"gaussian_nll_loss: var is of incorrect size {list(var.shape)} for input "
                     f"{list(input.shape)}; give var the input's shape, or with its last dim dropped or one dim 1")


# ---------------------------------------------------------------------------------------------- classification


def _unbatched_target(input: Tensor, target: Tensor) -> Tensor:
    """The class of an unbatched ``[C]`` input may come as a 1-element ``[1]`` target: then as a 0-d one."""
    if input.dim() != 1 or target.dim() != 1:
        return target
    if target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
    return target.reshape(())


def _check_class_target(name: str, input: Tensor, target: Tensor) -> None:
    if target.dtype not in (ember.int64, ember.uint8):
        raise RuntimeError(f"{name}: expected target dtype to be Long or Byte, but got "
                           f"{_dtype_name(target.dtype)}; convert it with target.long()")
    _check_batch(input, target)
    expected = (input.shape[0], *input.shape[2:]) if input.dim() >= 2 else ()
    if tuple(target.shape) != expected:
        raise RuntimeError(f"{name}: Expected target size {list(expected)}, got {list(target.shape)}: the "
                           f"target holds one class index per input row (and spatial position)")


def _check_batch(input: Tensor, target: Tensor) -> None:
    if input.dim() >= 2 and target.dim() >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")


def _class_weights(name: str, weight: Tensor | None, classes: int) -> np.ndarray | None:
    if weight is None:
        return None
    if weight.dim() != 1 or weight.numel() != classes:
        raise RuntimeError(f"{name}: weight tensor should be defined either for all {classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    return weight._data.reshape(classes)


def _check_weight_dtype(input: Tensor, weight: Tensor | None, kernel: str = "") -> None:
    """torch's class-index kernels take class weights in the input's dtype only, and do not differentiate them."""
    kernel = kernel or ("nll_loss2d_forward" if input.dim() > 2 else "nll_loss_forward")
    _refuse_gradient(kernel, "weight", weight)
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(input._data.dtype)} but found "
                           f"{_dtype.scalar_type_name(weight._data.dtype)}: the class weights must have the input's "
                           f"dtype; convert them, e.g. weight.to({input.dtype})")


def _target_mask(name: str, target: Tensor, classes: int, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """The targets as indices safe to gather (ignored ones read class 0) and the mask of the ones that count."""
    labels = target._data.astype(np.int64, copy=False)
    counted = labels != ignore_index
    if labels.size and 0 <= labels.min() and labels.max() < classes and ignore_index not in range(classes):
        return labels, counted  # the usual case: every target a class, none ignored (one pass less each)
    outside = counted & ((labels < 0) | (labels >= classes))
    if outside.any():
        raise IndexError(f"{name}: Target {labels[outside][0]} is out of bounds: class indices must lie in "
                         f"[0, {classes}) or equal ignore_index ({ignore_index})")
    return np.where(counted, labels, 0), counted


def _classes_last(input: Tensor) -> Tensor:
    return input.movedim(1, -1) if input.dim() > 2 else input


@nn_function
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``-input[n, target[n]]`` (times the class's weight): ``input`` holds log-probabilities, ``[N, C, ...]``.

    >>> ember.nn.functional.nll_loss(ember.tensor([[-1., -2.]]), ember.tensor([1]))
    tensor(2.)
    """
    require_tensor(input, "nll_loss_nd", 1, "input")
    reduction = _reduction(size_average, reduce, reduction)
    if input.dim() == 0:
        raise ValueError("nll_loss: Expected 1 or more dimensions (got 0): the input holds log-probabilities of "
                         "classes")
    refuse_integers("nll_loss_out_frame", input, complex_too=True)
    target = _unbatched_target(input, target)
    _check_class_target("nll_loss", input, target)
    _check_weight_dtype(input, weight)
    classes = input.shape[1] if input.dim() >= 2 else input.shape[0]
    weights = _class_weights("nll_loss", weight, classes)
    safe, counted = _target_mask("nll_loss", target, classes, ignore_index)
    scale = weights[safe] if weights is not None else np.ones(safe.shape)
    if _viewed_as_images(input, reduction):
        rows = (input.shape[0], 1, math.prod(input.shape[2:]))
        images = input.reshape(rows[0], classes, *rows[1:])
        losses = NllLoss2d.apply(images, safe.reshape(rows), scale.reshape(rows), counted.reshape(rows), reduction)
        return losses.view(safe.shape)
    op = NllLoss2d if input.dim() > 2 else NllLoss
    return op.apply(input, safe, scale, counted, reduction)


def _viewed_as_images(input: Tensor, reduction: str) -> bool:
    """torch computes the unreduced class-index losses of ``[N, C, d1]`` and ``[N, C, d1, d2, d3, ...]`` inputs
    as of ``[N, C, 1, L]`` images, and views the result back: its node is then a ``ViewBackward0``."""
    return reduction == "none" and input.dim() > 2 and input.dim() != 4


@nn_function
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """The cross-entropy of ``softmax(input, 1)`` against class indices or class probabilities.

    ``input`` is ``[C]``, ``[N, C]`` or ``[N, C, d1, ...]``; a floating ``target`` of the same shape holds
    probabilities, an integer one (``[N, d1, ...]``) class indices.

    >>> ember.nn.functional.cross_entropy(ember.tensor([[0., 0.]]), ember.tensor([[0.5, 0.5]]))
    tensor(0.6931)
    """
    if type(input) is Tensor and type(target) is Tensor and weight is None and not label_smoothing and \
            size_average is None and reduce is None and reduction in _REDUCTIONS:
        # a classifier's usual call, [N, C] float logits and one class per row, straight to its op: the checks
        # below would all pass it
        labels = _plain_labels(input, target, ignore_index)
        if labels is not None:
            return CrossEntropyOfLabels.apply(input, labels, reduction)
    require_tensor(input, "cross_entropy_loss", 1, "input")
    reduction = _reduction(size_average, reduce, reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    label_smoothing = max(label_smoothing, 0.0)  # torch smooths only by a positive amount: a negative one is none
    refuse_integers("log_softmax_lastdim_kernel_impl", input, complex_too=True)  # (torch's first step is a log_softmax)
    if target.is_floating_point():
        return _cross_entropy_of_probabilities(input, target, weight, reduction, label_smoothing, ignore_index)
    target = _unbatched_target(input, target)
    labels = _plain_labels(input, target, ignore_index) if weight is None and not label_smoothing else None
    if labels is not None:
        return CrossEntropyOfLabels.apply(input, labels, reduction)
    if target.shape == input.shape:  # torch reads a target of the input's shape as probabilities
        raise RuntimeError(f"cross_entropy: Expected floating point type for target with class probabilities, got "
                           f"{_dtype_name(target.dtype)}; for class indices the target has no class dim")
    _check_class_target("cross_entropy", input, target)
    _check_weight_dtype(input, weight)
    classes = input.shape[1] if input.dim() >= 2 else input.shape[0]
    weights = _class_weights("cross_entropy", weight, classes)
    safe, counted = _target_mask("cross_entropy", target, classes, ignore_index)
    coefficients, divisor = _coefficients(safe, counted, weights, classes, label_smoothing, input._data.dtype)
    if reduction == "mean" and divisor == 0:
        # torch divides the counted rows' gradients by the zero total: nan there, 0 on the ignored rows
        coefficients[counted] = np.nan
    if _viewed_as_images(input, reduction):
        rows = (input.shape[0], 1, math.prod(input.shape[2:]))
        images = _classes_last(input.reshape(rows[0], classes, *rows[1:]))
        losses = CrossEntropy2d.apply(images, wrap(coefficients.reshape(*rows, classes)), divisor, reduction)
        losses = losses.view(safe.shape)
    else:
        op = CrossEntropy2d if input.dim() > 2 else CrossEntropy
        losses = op.apply(_classes_last(input), wrap(coefficients), divisor, reduction)
    # torch adds the smoothing term to the scaled loss of the targets: its result is an AddBackward0
    return named_node(losses, "AddBackward0", input) if label_smoothing else losses


def _plain_labels(input: Tensor, target: Tensor, ignore_index: int) -> np.ndarray | None:
    """The class indices of the usual call, ``[N, C]`` float32/float64 logits and one int64 class per row, each in
    range and none equal to ``ignore_index``; else None, and the general path checks and says what is wrong."""
    x, labels = input._data, target._data
    if x.ndim != 2 or labels.dtype is not _INT64 or labels.shape != x.shape[:1] or not labels.size or \
            (x.dtype is not _SINGLE and x.dtype is not _DOUBLE):
        return None
    classes = x.shape[1]
    # as unsigned, a negative label is huge: one reduction checks both bounds
    if np.maximum.reduce(labels.view(np.uint64)) >= classes or \
            0 <= ignore_index < classes and (labels == ignore_index).any():
        return None
    return labels


_INT64, _SINGLE, _DOUBLE = np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64)


def _coefficients(safe: np.ndarray, counted: np.ndarray, weights: np.ndarray | None, classes: int,
                  smoothing: float, dtype) -> tuple[np.ndarray, float]:
    """Each class's weight in each row's loss (``[..., C]``), and the summed weights of the counted targets.

    The target class takes ``1 - smoothing``, and ``smoothing / C`` is spread over all classes; each is scaled
    by its class weight, and ignored rows take nothing.
    """
    rows = safe.size
    coefficients = np.full((rows, classes), smoothing / classes, dtype=dtype)
    coefficients[np.arange(rows), safe.reshape(-1)] += 1.0 - smoothing
    if weights is not None:
        coefficients *= weights
    every = weights is None and rows == counted.size and bool(counted.all())
    if not every:
        coefficients *= counted.reshape(rows, 1)
    picked = float(rows) if every else float((counted if weights is None else weights[safe] * counted).sum())
    return coefficients.reshape(*safe.shape, classes), picked


def _cross_entropy_of_probabilities(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                                    label_smoothing: float, ignore_index: int) -> Tensor:
    if ignore_index != -100:  # (torch's default, which ignores nothing here)
        raise RuntimeError(f"cross_entropy: ignore_index is not supported for floating point target (got "
                           f"ignore_index={ignore_index}); give the ignored rows zero probabilities instead")
    _check_batch(input, target)
    if target.shape != input.shape:
        raise RuntimeError(f"cross_entropy: a target of class probabilities must have the input's shape "
                           f"{list(input.shape)}, but it is {list(target.shape)}; for class indices use a "
                           "long target")
    class_dim = 1 if input.dim() >= 2 else 0
    classes = input.shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    products = input.log_softmax(class_dim) * target
    if weight is not None:
        _class_weights("cross_entropy", weight, classes)
        products = products * weight.reshape([classes] + [1] * (input.dim() - class_dim - 1))
    losses = -products.sum(class_dim)
    if reduction == "mean":
        return losses.sum() / (input.numel() / classes) if input.numel() else losses.sum() * math.nan
    return _reduce(losses, reduction)


@nn_function
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``-(t log x + (1 - t) log(1 - x))`` of probabilities ``x``; each log is clamped at -100, as torch's.

    >>> ember.nn.functional.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([1.]))
    tensor(0.6931)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    _require_float("binary_cross_entropy", input)
    if target.dtype != input.dtype:
        raise RuntimeError(f"binary_cross_entropy: Found dtype {_dtype_name(target.dtype)} but expected "
                           f"{_dtype_name(input.dtype)}: give the target the input's dtype, e.g. target.to(input.dtype)")
    for name, data in (("input", input._data), ("target", target._data)):
        if not (data.size == 0 or 0 <= data.min() and data.max() <= 1):  # (a nan fails both tests, as in torch)
            raise RuntimeError(f"binary_cross_entropy: all elements of {name} should be between 0 and 1"
                               + ("; for logits use binary_cross_entropy_with_logits" if name == "input" else ""))
    if weight is not None:
        _refuse_gradient("binary_cross_entropy", "weight", weight)
        weight = weight.to(input.dtype).expand_as(input)
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


@nn_function
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)``, computed stably from the logits; ``pos_weight`` weighs t = 1.

    >>> ember.nn.functional.binary_cross_entropy_with_logits(ember.tensor([0.]), ember.tensor([1.]))
    tensor(0.6931)
    """
    reduction = _reduction(size_average, reduce, reduction)
    _require_float("binary_cross_entropy_with_logits", input)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    for name, operand in (("weight", weight), ("pos_weight", pos_weight)):
        _refuse_gradient("binary_cross_entropy_with_logits", name, operand)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


class BinaryCrossEntropyWithLogits(Function):
    """The loss above as one op (torch's node): ``(1 - t) x + c softplus(-x)``, ``c = 1 + (pos_weight - 1) t``,
    times ``weight``; ``weight`` and ``pos_weight`` (constants, as in torch) broadcast against the input. Its
    forward and backward are written in ember ops, so it has every higher derivative."""

    backward_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        ctx.save_for_backward(input, target, weight, pos_weight)
        ctx.reduction = reduction
        loss = _unweighted_logit_losses(input, target, pos_weight)
        if weight is not None:
            loss = loss * weight
        ctx.count = loss.numel()
        # the weights scale the loss in the dtype of input and target, as torch's (in place)
        return _reduce(loss.to(ember.result_type(input, target)), reduction)

    @staticmethod
    def backward(ctx, grad):
        input, target, weight, pos_weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if ctx.reduction == "mean":
            grad = grad / max(ctx.count, 1)
        weighted = grad if weight is None else grad * weight
        grads = [None, None]
        if needs[0]:
            # d/dx: c sigmoid(x) - pos_weight t (sigmoid(x) - t without pos_weight)
            slope = ember.sigmoid(input) - target if pos_weight is None else \
                (1 + (pos_weight - 1) * target) * ember.sigmoid(input) - pos_weight * target
            grads[0] = weighted * slope
        if needs[1]:
            grads[1] = weighted * (-input if pos_weight is None else (pos_weight - 1) * _softplus(-input) - input)
        return (*(None if g is None else g.sum_to_size(operand.shape).to(operand.dtype)
                  for g, operand in zip(grads, (input, target))), None, None, None)


def _unweighted_logit_losses(input: Tensor, target: Tensor, pos_weight: Tensor | None) -> Tensor:
    softplus = _softplus(-input)  # -log sigmoid(input)
    if pos_weight is not None:
        softplus = softplus * ((pos_weight - 1) * target + 1)
    return (1 - target) * input + softplus


@nn_function
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """``target * (log target - input)``: ``input`` holds log-probabilities (``target`` too if ``log_target``).

    ``'batchmean'`` divides the sum by the batch size (the KL divergence per sample).

    >>> ember.nn.functional.kl_div(ember.tensor([0.25, 0.75]).log(), ember.tensor([0.5, 0.5]), reduction="sum")
    tensor(0.1438)
    """
    require_tensor(input, "kl_div", 1, "input")
    batchmean = reduction == "batchmean" and size_average is None and reduce is None
    reduction = "batchmean" if batchmean else _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=user_stacklevel())
    _require_float("kl_div", input, RuntimeError)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = ember.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------------------------- margins


@nn_function
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` (1 or -1) says which should rank higher.

    >>> ember.nn.functional.margin_ranking_loss(ember.tensor([1.]), ember.tensor([2.]), ember.tensor([1.]))
    tensor(1.)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    # (a float margin, as torch takes it: the losses of integer inputs are floating)
    return _reduce((-target * (input1 - input2) + float(margin)).clamp_min(0), reduction)


@nn_function
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1.

    >>> ember.nn.functional.hinge_embedding_loss(ember.tensor([0.3, 0.3]), ember.tensor([1., -1.]), reduction="none")
    tensor([0.3000, 0.7000])
    """
    reduction = _reduction(size_average, reduce, reduction)
    _require_float("hinge_embedding_loss", input, RuntimeError)
    zero = ember.zeros((), dtype=input.dtype)
    below_margin = ember.where(target != 1, (margin - input).clamp_min(0), zero)
    return _reduce(below_margin + ember.where(target != -1, input, zero), reduction)


@nn_function
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, the logistic loss of labels 1 and -1.

    >>> ember.nn.functional.soft_margin_loss(ember.tensor([0.]), ember.tensor([1.]))
    tensor(0.6931)
    """
    require_tensor(input, "soft_margin_loss", 1, "input")
    reduction = _reduction(size_average, reduce, reduction)
    _refuse_gradient("soft_margin_loss", "target", target)
    _require_float("soft_margin_loss", input, RuntimeError)
    target = target.to(input.dtype)  # the result keeps the input's dtype, as torch's
    # (the input first: as torch, a size mismatch names the input's size as tensor a's)
    return named_node(_reduce(_softplus(input * -target), reduction), "SoftMarginLossBackward0", input, target,
                      listed=(input,))


@nn_function
def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)`` against 0/1 labels, averaged over the classes (last dim).

    >>> ember.nn.functional.multilabel_soft_margin_loss(ember.tensor([[0., 0.]]), ember.tensor([[1., 0.]]))
    tensor(0.6931)
    """
    reduction = _reduction(size_average, reduce, reduction)
    _require_float("multilabel_soft_margin_loss", input)
    loss = target * _softplus(-input) + (1 - target) * _softplus(input)
    if weight is not None:
        loss = loss * weight
    # the mean over the classes as torch computes it, a sum over their count (so its node is a DivBackward0)
    return _reduce(loss.sum(-1) / loss.shape[-1] if loss.dim() else loss, reduction)


@nn_function
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """``sum over j != y of max(0, margin - x[y] + x[j]) ** p / C``, the multi-class hinge loss.

    >>> ember.nn.functional.multi_margin_loss(ember.tensor([[0., 1.]]), ember.tensor([1]))
    tensor(0.)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p == 1 and p == 2 supported, got p={p}")
    if weight is not None and weight.dim() != 1:
        raise ValueError(f"multi_margin_loss: weight must be one-dimensional, but it has shape {list(weight.shape)}")
    _require_vector_or_matrix("multi_margin_loss", input)  # as torch, the shapes are checked before the dtypes
    rows = input if input.dim() == 2 else input.reshape(1, -1)
    classes = rows.shape[-1]
    if input.dim() > 2 or target.dim() > 1 or target.numel() != rows.shape[0]:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{rows.shape[0]}], but got "
                           f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None:
        if weight.numel() != classes:
            raise RuntimeError(f"multi_margin_loss: inconsistent weight size, expected {classes} but got "
                               f"{list(weight.shape)}: one weight per class")
    refuse_integers("multi_margin_loss_cpu_kernel", input, complex_too=True)
    _require_long("multi_margin_loss", target)
    if weight is not None:
        _check_weight_dtype(input, weight, "multi_margin_loss")
    labels = target._data.reshape(-1)
    if ((labels < 0) | (labels >= classes)).any():
        raise RuntimeError(f"multi_margin_loss: target out of range: class indices must lie in [0, {classes})")
    picked = rows.gather(1, wrap(labels[:, None]))
    hinge = (margin - picked + rows).clamp_min(0) ** p
    if weight is not None:
        hinge = hinge * weight[wrap(labels)].unsqueeze(1)
    others = wrap(~np.eye(classes, dtype=bool)[labels])
    loss = (hinge * others).sum(1) / classes
    loss = _reduce(loss if loss.shape == target.shape else loss.reshape(target.shape), reduction)
    return named_node(loss, "MultiMarginLossBackward0", input, listed=(input,))


@nn_function
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The hinge ``max(0, 1 - (x[j] - x[k]))`` of every target class j against every other class k, over C.

    ``target`` lists each row's classes, ended by the first -1.

    >>> ember.nn.functional.multilabel_margin_loss(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    reduction = _reduction(size_average, reduce, reduction)
    _require_vector_or_matrix("multilabel_margin_loss", input)  # as torch, the shapes are checked before the dtypes
    if target.shape != input.shape:
        raise RuntimeError(f"multilabel_margin_loss: inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}; the target must have the input's shape")
    refuse_integers("multilabel_margin_loss_forward_out_frame", input, complex_too=True)
    _require_long("multilabel_margin_loss", target)
    rows = input.reshape(-1, input.shape[-1] if input.dim() else 1)
    listings = _listed_classes(target.detach().numpy().reshape(rows.shape), rows.shape[-1])
    # a class listed twice counts twice, as in torch
    pairs = listings[:, :, None] * (listings == 0)[:, None, :]
    hinge = (1 - rows.unsqueeze(2) + rows.unsqueeze(1)).clamp_min(0)
    loss = (hinge * wrap(pairs)).sum((1, 2)) / rows.shape[-1]
    loss = _reduce(loss if input.dim() == 2 else loss.reshape(()), reduction)
    return named_and_tied(loss, "MultilabelMarginLossBackward0", input)


def _listed_classes(labels: np.ndarray, classes: int) -> np.ndarray:
    """Per row, how many times the target lists each class before its first -1."""
    labels = labels.astype(np.int64)
    listed = np.cumprod(labels != -1, axis=1).astype(bool)
    if (listed & ((labels < 0) | (labels >= classes))).any():
        raise RuntimeError(f"multilabel_margin_loss: target index out of range: must lie in [-1, {classes})")
    counts = np.zeros(labels.shape, dtype=np.int64)
    rows = np.broadcast_to(np.arange(labels.shape[0])[:, None], labels.shape)
    np.add.at(counts, (rows[listed], labels[listed]), 1)
    return counts


# ---------------------------------------------------------------------------------------------- distances


@nn_function
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim.

    >>> ember.nn.functional.pairwise_distance(ember.tensor([[3., 0.]]), ember.tensor([[0., 4.]]), eps=0)
    tensor([5.])
    """
    require_tensor(x1, "pairwise_distance", 1, "x1")
    dim = -1 if max(x1.dim(), x2.dim()) else 0
    # torch's node is that of the older torch.norm it calls
    return named_node(ember.linalg.vector_norm(x1 - x2 + eps, p, dim, keepdim), "NormBackward1", x1, x2)


@nn_function
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``, each norm floored at ``eps``.

    >>> ember.nn.functional.cosine_similarity(ember.tensor([[1., 0.]]), ember.tensor([[1., 1.]]))
    tensor([0.7071])
    """
    x1, x2 = ember.broadcast_tensors(x1, x2)
    common = ember.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError(f"cosine_similarity: expected common dtype to be floating point, yet common dtype is "
                           f"{_dtype.scalar_type_name(common.np)}; convert the inputs first, e.g. x1.float()")
    x1, x2 = x1.to(common), x2.to(common)  # (an integer input with a float one: both in the float dtype)
    return (_unit(x1, dim, eps) * _unit(x2, dim, eps)).sum(dim)


def _unit(x: Tensor, dim: int, eps: float) -> Tensor:
    norm = ember.linalg.vector_norm(x, 2, dim, True)
    # the floor changes the value only, as torch clamps the norm without recording it
    return x / (norm + (eps - norm.detach()).clamp_min(0))  # (an inf norm adds 0: x / inf is 0, as in torch)


@nn_function
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``).

    >>> ember.nn.functional.normalize(ember.tensor([[3., 4.]]))
    tensor([[0.6000, 0.8000]])
    """
    result = input / ember.linalg.vector_norm(input, p, dim, True).clamp_min(eps).expand_as(input)
    if out is None:
        return result
    return into_out("normalize", result, out, input)  # (torch's checks: a dtype the result casts to, resized)


@nn_function
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1.

    >>> ember.nn.functional.cosine_embedding_loss(ember.tensor([[1., 0.]]), ember.tensor([[0., 1.]]),
    ...                                           ember.tensor([1.]))
    tensor(1.)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if target.dim() > 1:
        raise RuntimeError(f"cosine_embedding_loss: 0D or 1D target tensor expected, multi-target not supported "
                           f"(got a target of shape {list(target.shape)})")
    rows = input1.dim() if input1.dim() == input2.dim() else None
    if rows != target.dim() + 1:  # the inputs broadcast, but have one dim more than the target
        raise RuntimeError(f"cosine_embedding_loss: {target.dim()}D target tensor expects {target.dim() + 1}D input "
                           f"tensors, but found inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = input1.dim() - 1
    tiny = 1e-12  # keeps a zero vector's cosine finite (torch's EPSILON)
    products = (input1 * input2).sum(dim)
    squares = ((input1 * input1).sum(dim) + tiny) * ((input2 * input2).sum(dim) + tiny)
    cos = products / squares.sqrt()
    zero = ember.zeros((), dtype=cos.dtype)
    loss = ember.where(target == 1, 1 - cos, zero) + ember.where(target == -1, (cos - margin).clamp_min(0), zero)
    return _reduce(loss, reduction)


@nn_function
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-06, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the ``p``-norm distance.

    >>> ember.nn.functional.triplet_margin_loss(ember.tensor([[0.]]), ember.tensor([[1.]]), ember.tensor([[3.]]))
    tensor(0.)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")

    def distance(x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, p, eps)

    return _triplet("triplet_margin_loss", anchor, positive, negative, distance, margin, swap, reduction)


@nn_function
def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """The triplet loss with any ``distance_function`` (``pairwise_distance`` when None).

    >>> ember.nn.functional.triplet_margin_with_distance_loss(ember.tensor([[0.]]), ember.tensor([[2.]]),
    ...                                                       ember.tensor([[2.]]))
    tensor(1.)
    """
    reduction = _reduction(None, None, reduction)
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: margin must be greater than 0, got {margin}")
    distance = pairwise_distance if distance_function is None else distance_function
    return _triplet("triplet_margin_with_distance_loss", anchor, positive, negative, distance, margin, swap,
                    reduction)


def _triplet(name: str, anchor: Tensor, positive: Tensor, negative: Tensor, distance: Callable, margin: float,
             swap: bool, reduction: str) -> Tensor:
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(f"{name}: The anchor, positive, and negative tensors are expected to have the same "
                           f"number of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
                           f"{dims[2]}D inputs")
    to_positive = distance(anchor, positive)
    to_negative = distance(anchor, negative)
    if swap:
        to_negative = ember.minimum(to_negative, distance(positive, negative))
    return _reduce((margin + to_positive - to_negative).clamp_min(0), reduction)


# ---------------------------------------------------------------------------------------------- sequences


@nn_function
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor, target_lengths: Tensor, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss of ``log_probs`` (``[T, N, C]`` or ``[T, C]``).

    ``targets`` is ``[N, S]`` (padded) or the targets concatenated (``[sum(target_lengths)]``). ``'mean'``
    divides each sequence's loss by its target length, then averages over the batch.

    >>> log_probs = ember.tensor([[[0.5, 0.5]]]).log()
    >>> ember.nn.functional.ctc_loss(log_probs, ember.tensor([[1]]), ember.tensor([1]), ember.tensor([1]))
    tensor(0.6931)
    """
    reduction = _reduction(None, None, reduction)
    refuse_integers("ctc_loss_cpu", log_probs, "log_probs")
    if log_probs.numel() == 0:
        raise RuntimeError(f"ctc_loss: log_probs tensor must not be empty (got shape {list(log_probs.shape)})")
    batched = log_probs.dim() == 3
    if not batched:
        log_probs, targets = log_probs.unsqueeze(1), targets.reshape(1, -1)
    input_lengths = _lengths("input_lengths", input_lengths, log_probs.shape[1])
    target_lengths = _lengths("target_lengths", target_lengths, log_probs.shape[1])
    if not 0 <= blank < log_probs.shape[2]:
        raise RuntimeError("blank must be in label range")
    _check_ctc_lengths(log_probs.shape[0], targets, input_lengths, target_lengths)
    padded = _padded_targets(targets.detach().numpy().astype(np.int64), target_lengths)
    losses = CtcLoss.apply(log_probs, padded, input_lengths, target_lengths, blank, zero_infinity)
    if not batched:
        losses = losses.squeeze(0)
    if reduction == "mean":
        divisor = wrap(np.maximum(target_lengths, 1).astype(log_probs._data.dtype))
        return (losses / divisor.reshape(losses.shape)).mean()
    return _reduce(losses, reduction)


def _check_ctc_lengths(steps: int, targets: Tensor, input_lengths: np.ndarray, target_lengths: np.ndarray) -> None:
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if lengths.size and lengths.min() < 0:
            raise RuntimeError(f"ctc_loss: Expected {name} to have value at least 0, but got value {lengths.min()}")
    if input_lengths.size and input_lengths.max() > steps:
        raise RuntimeError(f"ctc_loss: Expected input_lengths to have value at most {steps}, but got value "
                           f"{input_lengths.max()}: a sequence cannot be longer than log_probs' first dim")
    if targets.dim() == 2 and targets.shape[0] != input_lengths.shape[0]:
        raise RuntimeError(f"ctc_loss: Expected tensor to have size {input_lengths.shape[0]} at dimension 0, but got "
                           f"size {targets.shape[0]} for argument #2 'targets': one padded row per sequence")
    longest = int(target_lengths.max(initial=0))
    available = targets.shape[1] if targets.dim() == 2 else targets.numel()
    needed = longest if targets.dim() == 2 else int(target_lengths.sum())
    if needed > available:
        raise RuntimeError(f"ctc_loss: Expected tensor to have size at least {needed} at dimension "
                           f"{targets.dim() - 1}, but got size {available} for argument #2 'targets': "
                           "target_lengths ask for more labels than targets holds")


def _lengths(name: str, lengths: Tensor | list | tuple, batch: int) -> np.ndarray:
    if isinstance(lengths, Tensor) and (lengths.is_floating_point() or lengths.is_complex()):
        raise RuntimeError(f"ctc_loss: {name} must be integral, but it is {_dtype_name(lengths.dtype)}")
    values = np.asarray(lengths.detach().numpy() if isinstance(lengths, Tensor) else lengths, dtype=np.int64).reshape(-1)
    if values.shape[0] != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return values


def _padded_targets(targets: np.ndarray, target_lengths: np.ndarray) -> np.ndarray:
    """The targets as ``[N, S]``: concatenated 1-d targets are split at their lengths."""
    if targets.ndim == 2:
        return targets
    width = int(target_lengths.max(initial=0))
    starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
    positions = starts[:, None] + np.arange(width)
    inside = np.arange(width) < target_lengths[:, None]
    return np.where(inside, targets[np.minimum(positions, max(targets.shape[0] - 1, 0))] if targets.size else 0, 0)
