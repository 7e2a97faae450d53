"""``SyncBatchNorm``: batch normalization whose statistics cover the whole batch of every rank.

In training, with a process group of more than one rank, the mean and variance of each channel are
taken over the inputs of all ranks: two differentiable ``all_reduce`` calls (the sums, then the
squared deviations from the global mean), so the gradients, and gradients of gradients, are those of
one process normalizing the whole batch. Otherwise (evaluation, one rank, no process group) it is
``BatchNorm``. Unlike torch's, it runs on the CPU.

>>> import ember
>>> model = ember.nn.Sequential(ember.nn.Conv2d(1, 4, 3), ember.nn.BatchNorm2d(4))
>>> ember.nn.SyncBatchNorm.convert_sync_batchnorm(model)[1]
SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
"""
from __future__ import annotations

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.batchnorm import _BatchNorm
from ember.nn.modules.module import Module

__all__ = ["SyncBatchNorm"]


def _synchronised(process_group) -> bool:
    """Whether the statistics must be gathered: a process group of more than one rank is up."""
    from ember import distributed

    if not (distributed.is_available() and distributed.is_initialized()):
        return False
    return distributed.get_world_size(process_group) > 1


def _global_count(input: Tensor, process_group) -> int:
    from ember import distributed

    count = ember.tensor([input.numel() // input.shape[1]], dtype=ember.int64)
    distributed.all_reduce(count, group=process_group)
    if int(count) <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
    return int(count)


def sync_batch_norm(input: Tensor, running_mean, running_var, weight, bias, momentum: float, eps: float,
                    process_group) -> Tensor:
    """Batch normalization of ``input`` with each channel's statistics over every rank's batch."""
    from ember.distributed.nn import functional as distributed_functional

    count = _global_count(input, process_group)
    dims = [0, *range(2, input.dim())]
    shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
    mean = distributed_functional.all_reduce(input.sum(dims), group=process_group) / count
    centered = input - mean.reshape(shape)
    var = distributed_functional.all_reduce((centered * centered).sum(dims), group=process_group) / count
    output = centered * (var + eps).rsqrt().reshape(shape)
    if weight is not None:
        output = output * weight.reshape(shape)
    if bias is not None:
        output = output + bias.reshape(shape)
    if running_mean is not None:
        with ember.no_grad():
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
            running_var.mul_(1 - momentum).add_(var.detach() * (momentum * count / (count - 1)))
    return output


class SyncBatchNorm(_BatchNorm):
    """Batch normalization of ``[N, C, *]`` inputs over the batches of every rank of ``process_group``."""

    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        batch_statistics = self.training or (self.running_mean is None and self.running_var is None)
        if not (batch_statistics and self.training and _synchronised(self.process_group)):
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        keep_running = self.track_running_stats
        return sync_batch_norm(input, self.running_mean if keep_running else None,
                               self.running_var if keep_running else None, self.weight, self.bias, factor, self.eps,
                               self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with every batch norm in it replaced by a ``SyncBatchNorm`` sharing its parameters and
        running statistics (the module itself, if it is one, comes back converted)."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                converted.weight = module.weight
                converted.bias = module.bias
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                converted.register_buffer(name, getattr(module, name))
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
