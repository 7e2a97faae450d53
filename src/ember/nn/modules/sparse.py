"""Embedding tables: ``Embedding`` looks rows up, ``EmbeddingBag`` reduces bags of them.

>>> import ember
>>> table = ember.nn.Embedding(10, 3, padding_idx=0)
>>> table
Embedding(10, 3, padding_idx=0)
>>> table(ember.tensor([[1, 2]])).shape
ember.Size([1, 2, 3])
"""
from __future__ import annotations

from ember._creation import empty
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn import functional as F, init
from ember.nn._functional.sparse import _padding_row
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag"]


def _table(num_embeddings: int, embedding_dim: int, _weight: Tensor | None, _freeze: bool, device, dtype):
    """A fresh ``[num, dim]`` weight, or ``_weight`` (which must have that shape) as the parameter."""
    if _weight is None:
        return Parameter(empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                         requires_grad=not _freeze), True
    if list(_weight.shape) != [num_embeddings, embedding_dim]:
        raise AssertionError(f"Shape of weight does not match num_embeddings and embedding_dim: "
                             f"{list(_weight.shape)} against [{num_embeddings}, {embedding_dim}]")
    return Parameter(_weight, requires_grad=not _freeze), False


def _check_pretrained(embeddings: Tensor) -> None:
    if embeddings.dim() != 2:
        raise AssertionError(f"Embeddings parameter is expected to be 2-dimensional, got {list(embeddings.shape)}")


class _Table(Module):
    """The shared part: a weight of normal(0, 1) values with the padding row zeroed."""

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def _options_repr(self) -> str:
        text = ""
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return text


class Embedding(_Table):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up by index."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _padding_row(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.weight, fresh = _table(num_embeddings, embedding_dim, _weight, _freeze, device, dtype)
        if fresh:
            self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        text += self._options_repr()
        return text + (", sparse=True" if self.sparse else "")

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An ``Embedding`` whose weight is ``embeddings`` (``[num, dim]``), trainable unless ``freeze``."""
        _check_pretrained(embeddings)
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)


class EmbeddingBag(_Table):
    """Sums, means or maxima of bags of embeddings, without materialising the embeddings of each index."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = _padding_row(padding_idx, num_embeddings)
        self.weight, fresh = _table(num_embeddings, embedding_dim, _weight, False, device, dtype)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        if fresh:
            self.reset_parameters()

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}" + self._options_repr() + f", mode={self.mode!r}"
        return text + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An ``EmbeddingBag`` whose weight is ``embeddings`` (``[num, dim]``), trainable unless ``freeze``."""
        _check_pretrained(embeddings)
        rows, dim = embeddings.shape
        bag = cls(rows, dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
