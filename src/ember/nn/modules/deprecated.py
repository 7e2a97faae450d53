"""Deprecated layers torch still has, for old programs: ``NLLLoss2d`` and ``Container``, each warning as torch's.

>>> import ember, warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", FutureWarning)
...     loss = ember.nn.NLLLoss2d()
>>> loss(ember.zeros(2, 3, 4, 4), ember.zeros(2, 4, 4, dtype=ember.long)).item()
0.0
"""
from __future__ import annotations

import warnings

from ember._tensor import Tensor
from ember.nn.modules.loss import NLLLoss
from ember.nn.modules.module import Module

__all__ = ["Container", "NLLLoss2d"]


class NLLLoss2d(NLLLoss):
    """``NLLLoss`` under its old name for images: NLLLoss takes ``[N, C, H, W]`` inputs itself."""

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", FutureWarning,
                      stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    """A module holding the modules given as keywords: what ``Module`` itself does now."""

    def __init__(self, **kwargs: Module) -> None:
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        for name, module in kwargs.items():
            self.add_module(name, module)
