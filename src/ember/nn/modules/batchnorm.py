"""Batch and instance normalization layers, with running statistics kept as buffers.

>>> import ember
>>> bn = ember.nn.BatchNorm1d(3)
>>> bn
BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
>>> [name for name, _ in bn.named_buffers()]
['running_mean', 'running_var', 'num_batches_tracked']
"""
from __future__ import annotations

import warnings

import ember
from ember._creation import empty, ones, zeros
from ember._ops._support import user_stacklevel
from ember._tensor import Tensor
from ember.nn import functional as F, init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _NormBase(Module):
    """Per-channel affine parameters (``weight``, ``bias``) and running statistics, each optional."""

    _version = 2  # state dicts with num_batches_tracked, saved under torch's version number

    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(empty(num_features, device=device, dtype=dtype)) if affine else None
        self.bias = Parameter(empty(num_features, device=device, dtype=dtype)) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", ember.tensor(0, dtype=ember.long))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        # A state dict of no version (a plain dict, or one saved before the counter existed) may lack
        # num_batches_tracked: the layer keeps its own count (0 if it has none) and does not report it missing.
        # The entry is added to the caller's dict, as torch adds it.
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            count = self.num_batches_tracked
            state_dict[key] = count if count is not None else ember.tensor(0, dtype=ember.long)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        dims = self._input_dims
        if input.dim() not in dims:
            expected = " or ".join(f"{d}D" for d in dims)
            raise ValueError(f"expected {expected} input (got {input.dim()}D input) for "
                             f"{type(self).__name__}({self.num_features}): input shape {list(input.shape)}")

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum=None: a cumulative average of all the batches seen
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep_running else None,
                            self.running_var if keep_running else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``[N, C]`` or ``[N, C, L]`` inputs over all but the channel dim."""

    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``[N, C, H, W]`` inputs."""

    _input_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of ``[N, C, D, H, W]`` inputs."""

    _input_dims = (5,)


class _InstanceNorm(_NormBase):
    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        batched = input.dim() == self._input_dims[1]
        if input.shape[-self._input_dims[0]] != self.num_features:
            self._mismatched_features(input, 1 if batched else 0)
        batch = input if batched else input.unsqueeze(0)
        output = F.instance_norm(batch, self.running_mean, self.running_var, self.weight, self.bias,
                                 self.training or not self.track_running_stats,
                                 0.0 if self.momentum is None else self.momentum, self.eps)
        return output if batched else output.squeeze(0)


    def _mismatched_features(self, input: Tensor, feature_dim: int) -> None:
        """Channels other than ``num_features``: an error with affine weights to apply, else only a warning (the
        count is then unused), as torch's."""
        if self.affine:
            raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                             f"({self.num_features}), but got: {input.shape[feature_dim]}.")
        warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this warning "
                      "by not passing in num_features, which is not used because affine=False",
                      stacklevel=user_stacklevel())


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of ``[N, C, L]`` (or unbatched ``[C, L]``) inputs."""

    _input_dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of ``[N, C, H, W]`` (or unbatched ``[C, H, W]``) inputs."""

    _input_dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of ``[N, C, D, H, W]`` (or unbatched ``[C, D, H, W]``) inputs."""

    _input_dims = (4, 5)
