"""``GradScaler``: loss scaling for half-precision gradients, with torch's API and its CPU behaviour.

``GradScaler("cpu")`` scales the loss, unscales the gradients before the step, skips steps whose
gradients hold an inf or NaN, and adapts the scale, as torch's does. For ``"cuda"`` (the default device,
as in torch) it warns and is disabled: then ``scale`` returns the loss unchanged and ``step`` simply steps.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


class GradScaler:
    """Scale the loss by ``scale`` so small half gradients do not underflow; undo it before the optimizer steps.

    >>> import ember
    >>> scaler = ember.amp.GradScaler("cpu", init_scale=1024.0)
    >>> w = ember.nn.Parameter(ember.ones(1))
    >>> opt = ember.optim.SGD([w], lr=0.5)
    >>> scaler.scale((w * 2).sum()).backward()
    >>> w.grad  # scaled
    tensor([2048.])
    >>> scaler.step(opt); scaler.update()
    >>> w  # stepped with the true gradient, 2
    Parameter containing:
    tensor([0.], requires_grad=True)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device != "cpu":
            warnings.warn(f"ember.{device}.amp.GradScaler is enabled, but {device.upper()} is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval, self._growth_tracker = int(growth_interval), 0
        self._per_optimizer: dict = {}  # id(optimizer) -> {"stage", "found_inf"}

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or nested lists and tuples of them) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale_tensor(outputs)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _scale_tensor(self, like: Tensor) -> Tensor:
        from ember._creation import tensor

        return tensor(self._scale, dtype=like.dtype if like.is_floating_point() else None)

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale (in place), noting whether any is inf or NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = np.float32(1.0 / np.float64(np.float32(self._scale)))  # as torch: the reciprocal, in single
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if grad.dtype.itemsize == 2:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    data = grad._values()._data if grad.is_sparse else grad._data  # (a sparse one: its values)
                    found_inf = found_inf or not bool(np.isfinite(data).all())
                    grad.mul_(float(inverse))
        state["found_inf"], state["stage"] = found_inf, _UNSCALED

    def step(self, optimizer, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless done already) and step, unless a gradient is inf or NaN; returns what the step returns."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Set the scale for the next iteration: back off after an inf or NaN, grow after ``growth_interval``
        clean steps (or take ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        else:
            if not self._per_optimizer:
                raise RuntimeError("No inf checks were recorded prior to update.")
            if any(state["found_inf"] for state in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = float(np.float32(self._scale * self._growth_factor))
                    self._scale = grown if math.isfinite(grown) else self._scale
                    self._growth_tracker = 0
        self._scale = float(np.float32(self._scale))  # torch keeps the scale as a float32 tensor
        self._per_optimizer = {}

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
