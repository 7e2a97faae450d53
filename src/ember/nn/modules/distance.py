"""Distances between pairs of vectors as modules (the triplet losses' default distance is one).

>>> import ember
>>> ember.nn.PairwiseDistance(eps=0)(ember.tensor([[3., 0.]]), ember.tensor([[0., 4.]]))
tensor([5.])
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class PairwiseDistance(Module):
    """The ``p``-norm distance of each pair of rows (see ``nn.functional.pairwise_distance``)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine of each pair of vectors along ``dim`` (see ``nn.functional.cosine_similarity``)."""

    def __init__(self, dim: int = 1, eps: float = 1e-08) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
