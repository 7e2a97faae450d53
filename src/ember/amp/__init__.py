"""``ember.amp``: mixed precision as torch runs it on the CPU: :class:`autocast` and :class:`GradScaler`.

Inside ``autocast("cpu", dtype=ember.float16)`` the matmul-like ops (``matmul``, ``mm``, ``bmm``,
``addmm``, ``linear``, the convolutions ...) run in float16, and ops that need range (the losses, ``prod``,
``cdist`` ...) in float32, as torch's CPU autocast does; everything else runs in the dtype it is given.

>>> import ember
>>> a = ember.ones(2, 2)
>>> with ember.autocast("cpu", dtype=ember.float16):
...     (a @ a).dtype, (a + a).dtype
(ember.float16, ember.float32)
"""
from ember.amp.autocast_mode import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled
from ember.amp.custom_function import custom_bwd, custom_fwd
from ember.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled"]
