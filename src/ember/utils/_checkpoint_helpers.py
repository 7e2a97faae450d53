"""The small helpers ``ember.utils.checkpoint`` shares with torch's: input detaching and checks, device random
states (the CPU's is the default generator's, which checkpoint keeps itself, so there are none per device),
the default device type, and the names of selective checkpointing's policies.

>>> x = ember.ones(2, requires_grad=True)
>>> (y,) = detach_variable((x,))
>>> y.requires_grad, y.grad_fn is None
(True, True)
"""
from __future__ import annotations

import contextlib
import enum
import warnings
from typing import Any, Iterable

from ember._tensor import Tensor


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: keep it for backward or recompute it, as a
    requirement (MUST) or a preference (PREFER), or move it to the CPU."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class DefaultDeviceType:
    """The device type whose random state checkpoint keeps: the current accelerator's, else ``"cpu"``."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        """Make ``device`` the default device type for checkpointing."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The default device type: ``"cpu"`` until one is set (ember has no accelerator)."""
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def noop_context_fn() -> tuple:
    """The ``context_fn`` of a checkpoint that adds no context to its forward or its recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Each tensor of ``inputs`` detached but requiring grad as it did; other values as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}; "
            "pass tuple(inputs)"
        )
    return tuple(_detached(value) if isinstance(value, Tensor) else value for value in inputs)


def _detached(tensor: Tensor) -> Tensor:
    detached = tensor.detach()
    detached.requires_grad = tensor.requires_grad
    return detached


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor of ``inputs`` requires grad: the checkpointed block would get no gradients."""
    if not any(value.requires_grad for value in inputs if isinstance(value, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def get_device_states(*args: Any) -> tuple[list, list]:
    """The ids and random states of the accelerators ``args``' tensors are on: none, all of ember's are on the
    CPU (whose state checkpoint keeps with ``preserve_rng_state``)."""
    return [], []


def set_device_states(devices: list, states: list, *, device_type: str | None = None) -> None:
    """Give each accelerator of ``devices`` its state: there are none on a CPU-only machine."""
    if list(devices):
        raise RuntimeError(
            f"set_device_states: ember has no accelerator devices to set random states on (got {list(devices)}); "
            "the CPU's state is set with ember.set_rng_state"
        )
