"""``AdaptiveLogSoftmaxWithLoss``: a softmax over many classes, cheap for the frequent ones.

The classes are split by ``cutoffs`` into a shortlist (the most frequent, scored by the ``head``) and
clusters; the head also scores each cluster as a whole, and a cluster's own small network (``tail``,
narrower by ``div_value`` per cluster) scores the classes inside it. A class's log-probability is its
head score, or its cluster's head score plus its score within the cluster.

>>> import ember
>>> criterion = ember.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 6])
>>> result = criterion(ember.randn(4, 8), ember.tensor([0, 4, 9, 2]))
>>> result.output.shape, result.loss.shape
(ember.Size([4]), ember.Size([]))
>>> ember.allclose(criterion.log_prob(ember.randn(4, 8)).exp().sum(1), ember.ones(4))  # a distribution per row
True
"""
from __future__ import annotations

from collections import namedtuple

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.container import ModuleList, Sequential
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _check_cutoffs(cutoffs: list, n_classes: int) -> None:
    if not cutoffs:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    valid = (cutoffs == sorted(cutoffs) and min(cutoffs) > 0 and max(cutoffs) <= n_classes - 1
             and len(set(cutoffs)) == len(cutoffs) and all(int(c) == c for c in cutoffs))
    if not valid:
        raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
                         "where each value is between 1 and n_classes-1")


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of ``n_classes`` classes from ``in_features`` features, the rare classes in clusters.

    Calling it with inputs ``[N, in_features]`` and targets ``[N]`` gives ``(output, loss)``: each target's
    log-probability and the mean negative log-likelihood. ``log_prob`` gives every class's, ``predict`` the
    most likely class.
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0, head_bias: bool = False,
                 device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        _check_cutoffs(cutoffs, n_classes)
        factory = {"device": device, "dtype": dtype}
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            classes = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, classes, bias=False, **factory)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for to_hidden, to_classes in self.tail:
            to_hidden.reset_parameters()
            to_classes.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:  # (torch's keyword names)
        input, target = input_, target_
        batched = _check_batch(input, target)
        if not batched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        output = input.new_zeros(target.shape[0])
        head_columns = target.new_empty(target.shape[0])
        covered = 0
        bounds = [0] + self.cutoffs
        for cluster, (low, high) in enumerate(zip(bounds, bounds[1:])):
            inside = (target >= low) & (target < high)
            rows = inside.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if cluster == 0:  # the shortlist: the head scores these classes directly
                head_columns.index_copy_(0, rows, target[inside])
            else:
                head_columns.index_fill_(0, rows, self.shortlist_size + cluster - 1)
                scores = F.log_softmax(self.tail[cluster - 1](input.index_select(0, rows)), dim=1)
                within = scores.gather(1, (target[inside] - low).unsqueeze(1)).squeeze(1)
                output = output.index_copy(0, rows, within)
            covered += rows.numel()
        if covered != target.shape[0]:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output = output + head.gather(1, head_columns.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head = F.log_softmax(head_output, dim=1)
        pieces = [head[:, :self.shortlist_size]]
        for cluster, to_classes in enumerate(self.tail):
            within = F.log_softmax(to_classes(input), dim=1)
            pieces.append(within + head[:, self.shortlist_size + cluster].unsqueeze(1))
        return ember.cat(pieces, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Every class's log-probability: ``[N, n_classes]`` for ``[N, in_features]`` inputs."""
        batched = input.dim() > 1
        batch = input if batched else input.unsqueeze(0)
        result = self._full_log_prob(batch, self.head(batch))
        return result if batched else result.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each input (the full distribution is computed only where the head's best
        guess is a cluster)."""
        batched = input.dim() > 1
        batch = input if batched else input.unsqueeze(0)
        head_output = self.head(batch)
        best = ember.argmax(head_output, dim=1)
        in_cluster = best >= self.shortlist_size
        if in_cluster.any():
            full = self._full_log_prob(batch[in_cluster], head_output[in_cluster])
            best[in_cluster] = ember.argmax(full, dim=1)
        return best if batched else best.squeeze(0)


def _check_batch(input: Tensor, target: Tensor) -> bool:
    """Whether the call is batched; the shapes of ``input`` and ``target`` are checked as torch checks them."""
    if target.dim() == 1:
        if input.shape[0] != target.shape[0]:
            raise RuntimeError("Input and target should have the same size in the batch dimension.")
        if input.dim() != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                               f"{list(input.shape)}")
        return True
    if target.dim() == 0:
        if input.dim() != 1:
            raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                               f"{list(input.shape)}")
        return False
    raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
