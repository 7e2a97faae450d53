"""Loss functions as modules: each holds its options (and class weights as buffers) and calls ``functional``.

>>> import ember
>>> ember.nn.MSELoss()(ember.tensor([1., 3.]), ember.tensor([1., 1.]))
tensor(2.)
>>> ember.nn.CrossEntropyLoss(label_smoothing=0.1)
CrossEntropyLoss()
"""
from __future__ import annotations

from typing import Callable

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.distance import PairwiseDistance
from ember.nn.modules.module import Module

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "GaussianNLLLoss",
    "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss",
    "TripletMarginLoss", "TripletMarginWithDistanceLoss",
]


class _Loss(Module):
    """Holds ``reduction`` ('mean', 'sum' or 'none'), also when given in the legacy size_average/reduce form."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with per-class weights, kept as a buffer (so they move and save with the module)."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error between input and target (see ``nn.functional.mse_loss``)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error (see ``nn.functional.l1_loss``)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below ``beta``, absolute error above (see ``nn.functional.smooth_l1_loss``)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below ``delta``, scaled absolute error above (see ``nn.functional.huber_loss``)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"HuberLoss: delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices, given log-probabilities (see ``nn.functional.nll_loss``)."""

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits against class indices or probabilities (see ``nn.functional.cross_entropy``)."""

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities (see ``nn.functional.binary_cross_entropy``)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits (see ``nn.functional.binary_cross_entropy_with_logits``)."""

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities (see ``nn.functional.kl_div``)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood (see ``nn.functional.poisson_nll_loss``)."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-08,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood (see ``nn.functional.gaussian_nll_loss``)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-06, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class _MarginLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class CosineEmbeddingLoss(_MarginLoss):
    """Cosine distance of similar pairs, hinge of dissimilar ones (see ``nn.functional.cosine_embedding_loss``)."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_MarginLoss):
    """Hinge loss of a ranking (see ``nn.functional.margin_ranking_loss``)."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """Hinge loss of distances labelled 1 or -1 (see ``nn.functional.hinge_embedding_loss``)."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """Triplet loss with a p-norm distance (see ``nn.functional.triplet_margin_loss``)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-06, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with any distance (see ``nn.functional.triplet_margin_with_distance_loss``)."""

    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, got {margin}")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss (see ``nn.functional.multilabel_margin_loss``)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label logistic loss (see ``nn.functional.multilabel_soft_margin_loss``)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (see ``nn.functional.multi_margin_loss``)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None, size_average=None,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got p={p}")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss (see ``nn.functional.soft_margin_loss``)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (see ``nn.functional.ctc_loss``)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Tensor, target_lengths: Tensor) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
