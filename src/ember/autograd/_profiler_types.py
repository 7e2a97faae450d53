"""The profiler's types that torch.autograd names: device types, profiler states, a profiler's configuration and
the raw event it records (ember's recorder's :class:`~ember.profiler._recorder.Event`).

ember runs on the CPU only; the other device types and states are named, as torch's, for code that compares or
prints them.

>>> ember.autograd.DeviceType.CPU, int(ember.autograd.ProfilerState.KINETO)
(<DeviceType.CPU: 0>, 6)
"""
from __future__ import annotations

import enum
from typing import Any

from ember.profiler._recorder import Event as ProfilerEvent

__all__ = ["DeviceType", "ProfilerConfig", "ProfilerEvent", "ProfilerState"]


class _Numbered(enum.Enum):
    """An enum whose members convert to their number (``int(DeviceType.CUDA) == 1``) but, as torch's, do not
    compare equal to it."""

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value


class DeviceType(_Numbered):
    """The kinds of device, numbered as torch numbers them."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


class ProfilerState(_Numbered):
    """What a profiler records: nothing (``Disabled``), CPU ops (``CPU``, ``KINETO``), or a device's too."""

    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9


class ProfilerConfig:
    """A profiler's settings: its state and what it records besides op times."""

    def __init__(self, state: ProfilerState, report_input_shapes: bool, profile_memory: bool, with_stack: bool,
                 with_flops: bool, with_modules: bool, experimental_config: Any, trace_id: str = "") -> None:
        if not isinstance(state, ProfilerState):
            raise TypeError(f"ProfilerConfig(): state must be an ember.autograd.ProfilerState, not "
                            f"{type(state).__name__}")
        flags = {"report_input_shapes": report_input_shapes, "profile_memory": profile_memory,
                 "with_stack": with_stack, "with_flops": with_flops, "with_modules": with_modules}
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise TypeError(f"ProfilerConfig(): {name} must be a bool, not {type(value).__name__}")
        self.state, self.experimental_config, self.trace_id = state, experimental_config, trace_id
        self.report_input_shapes, self.profile_memory, self.with_stack = report_input_shapes, profile_memory, \
            with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
