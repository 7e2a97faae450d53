"""``DataParallel``: torch's single-process, multi-device wrapper, on a machine with no accelerator.

torch splits each batch across its GPUs; with none (as always in ember) it runs the wrapped module
as it is, and so does ember. Programs that wrap their model keep working, and their state dicts keep
the ``module.`` prefix. For several processes, use ``DistributedDataParallel``.

>>> import ember
>>> model = ember.nn.DataParallel(ember.nn.Linear(2, 3))
>>> model(ember.ones(4, 2)).shape
ember.Size([4, 3])
>>> list(model.state_dict())
['module.weight', 'module.bias']
"""
from __future__ import annotations

from typing import Any, Sequence

from ember.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Runs ``module`` on each batch; ``device_ids`` is empty, as in torch without accelerators."""

    def __init__(self, module: Module, device_ids: Sequence | None = None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs: Any, device_ids: Sequence | None = None, output_device=None, dim: int = 0,
                  module_kwargs: dict | None = None) -> Any:
    """``module(*inputs, **module_kwargs)``: what torch's functional data parallelism does with no accelerator."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))
